"""The FBX scene builder: objects, connections and the top-level sections.

An FBX 7.4 document is a fixed sequence of top-level sections:
``FBXHeaderExtension`` (versions, creator, scene info), ``FileId``,
``CreationTime``, ``Creator``, ``GlobalSettings`` (axes, units, time mode),
``Documents``, ``References``, ``Definitions`` (how many objects of each
type), ``Objects``, ``Connections`` (the object graph) and ``Takes``. The
modules that make skeletons, animation and skins add objects and connections
to an :class:`FbxScene`; :meth:`FbxScene.document` then assembles the sections.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from choreo.contracts.provenance import Provenance, generator_name
from exporters.fbx.binary import CREATION_TIME, FBX_VERSION, FILE_ID
from exporters.fbx.nodes import FbxNode, i32, i64, raw
from exporters.fbx.properties import (
    p_double,
    p_enum,
    p_int,
    p_kstring,
    p_ktime,
    p_vector,
    properties70,
)
from exporters.fbx.timing import time_mode

__all__ = ["FbxScene", "SceneSettings", "object_name"]

# Files are reproducible: the same dance gives the same bytes, so the creation
# stamp is a fixed date rather than the clock (that of the known-working
# CreationTime, see exporters.fbx.binary).
_CREATION_DATE = (1970, 1, 1, 10, 0, 0, 0)


def object_name(name: str, class_name: str) -> str:
    """An object's name as binary FBX stores it: ``name``, ``"\\x00\\x01"``, class."""
    return f"{name}\x00\x01{class_name}"


@dataclass(frozen=True)
class SceneSettings:
    """Scene-wide settings.

    Parameters
    ----------
    fps : frames per second of the animation (sets ``TimeMode``)
    unit_scale_cm : centimetres per file unit (``UnitScaleFactor``): 100 for metres, 1 for cm
    start_ticks, stop_ticks : time span of the animation, FBX ticks
    take_name : the animation take's name (the clip name importers show)
    provenance : where the dance came from, stored in the scene info
    file_name : the file's own name, recorded in the scene info
    """

    fps: float
    unit_scale_cm: float
    start_ticks: int
    stop_ticks: int
    take_name: str
    provenance: Provenance | None
    file_name: str


@dataclass
class FbxScene:
    """Objects and connections of one document, with ids handed out in order."""

    objects: list[FbxNode] = field(default_factory=list)
    connections: list[FbxNode] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    _next_id: int = 100_000

    def new_id(self) -> int:
        """A fresh object id (non-zero; 0 is the scene root)."""
        self._next_id += 1
        return self._next_id

    def add(self, definition_type: str, node: FbxNode) -> FbxNode:
        """Add an object node, counted under ``definition_type`` (such as ``"Model"``)."""
        self.objects.append(node)
        self.counts[definition_type] += 1
        return node

    def connect(self, child: int, parent: int, prop: str | None = None) -> None:
        """Connect object ``child`` to ``parent`` (``OO``), or to its property ``prop`` (``OP``)."""
        if prop is None:
            self.connections.append(FbxNode.make("C", "OO", i64(child), i64(parent)))
        else:
            self.connections.append(FbxNode.make("C", "OP", i64(child), i64(parent), prop))

    def document(self, settings: SceneSettings) -> list[FbxNode]:
        """The complete list of top-level nodes, in the order FBX 7.4 files have them."""
        return [
            _header_extension(settings),
            FbxNode.make("FileId", raw(FILE_ID)),
            FbxNode.make("CreationTime", CREATION_TIME),
            FbxNode.make("Creator", generator_name()),
            _global_settings(settings),
            _documents(settings),
            FbxNode("References"),
            self._definitions(),
            FbxNode("Objects", [], list(self.objects)),
            FbxNode("Connections", [], list(self.connections)),
            _takes(settings),
        ]

    def _definitions(self) -> FbxNode:
        node = FbxNode.make("Definitions")
        node.add("Version", i32(100))
        node.add("Count", i32(1 + sum(self.counts.values())))
        glob = node.add("ObjectType", "GlobalSettings")
        glob.add("Count", i32(1))
        for type_name, count in self.counts.items():
            node.add("ObjectType", type_name).add("Count", i32(count))
        return node


def _header_extension(settings: SceneSettings) -> FbxNode:
    ext = FbxNode.make("FBXHeaderExtension")
    ext.add("FBXHeaderVersion", i32(1003))
    ext.add("FBXVersion", i32(FBX_VERSION))
    ext.add("EncryptionType", i32(0))
    stamp = ext.add("CreationTimeStamp")
    stamp.add("Version", i32(1000))
    for key, value in zip(
        ("Year", "Month", "Day", "Hour", "Minute", "Second", "Millisecond"), _CREATION_DATE, strict=True
    ):
        stamp.add(key, i32(value))
    ext.add("Creator", generator_name())
    ext.children.append(_scene_info(settings))
    return ext


def _scene_info(settings: SceneSettings) -> FbxNode:
    """``SceneInfo``: document metadata, here also the dance's provenance.

    The standard ``MetaData`` fields carry a readable summary (``Comment`` holds
    the full provenance as JSON); ``Choreo|...`` properties hold each field.
    """
    prov = settings.provenance
    info = FbxNode.make("SceneInfo", object_name("GlobalInfo", "SceneInfo"), "UserData")
    info.add("Type", "UserData")
    info.add("Version", i32(100))
    meta = info.add("MetaData")
    meta.add("Version", i32(100))
    meta.add("Title", settings.take_name)
    meta.add("Subject", f"Choreo dance, style {prov.style}" if prov else "Choreo dance")
    meta.add("Author", generator_name())
    meta.add("Keywords", f"dance choreo {prov.style}" if prov else "dance choreo")
    meta.add("Revision", prov.model_version if prov else "")
    meta.add("Comment", prov.to_json() if prov else "")
    entries = [
        p_kstring("DocumentUrl", settings.file_name, "Url"),
        p_kstring("SrcDocumentUrl", settings.file_name, "Url"),
        FbxNode.make("P", "Original", "Compound", "", ""),
        p_kstring("Original|ApplicationVendor", "Choreo"),
        p_kstring("Original|ApplicationName", "Choreo"),
        p_kstring("Original|ApplicationVersion", generator_name().removeprefix("Choreo").strip()),
        p_kstring("Original|FileName", settings.file_name),
    ]
    if prov is not None:
        entries += [
            p_kstring("Choreo|Generator", prov.generator),
            p_kstring("Choreo|ModelVersion", prov.model_version),
            p_kstring("Choreo|Seed", str(prov.seed)),
            p_kstring("Choreo|Style", prov.style),
            p_kstring("Choreo|SongSHA256", prov.song_sha256),
            p_kstring("Choreo|DataCredits", "\n".join(prov.data_credits)),
        ]
    info.children.append(properties70(*entries))
    return info


def _global_settings(settings: SceneSettings) -> FbxNode:
    """Axes (Y up, Z front, X right-handed), units and time mode."""
    node = FbxNode.make("GlobalSettings")
    node.add("Version", i32(1000))
    node.children.append(
        properties70(
            p_int("UpAxis", 1),
            p_int("UpAxisSign", 1),
            p_int("FrontAxis", 2),
            p_int("FrontAxisSign", 1),
            p_int("CoordAxis", 0),
            p_int("CoordAxisSign", 1),
            p_int("OriginalUpAxis", 1),
            p_int("OriginalUpAxisSign", 1),
            p_double("UnitScaleFactor", settings.unit_scale_cm),
            p_double("OriginalUnitScaleFactor", settings.unit_scale_cm),
            p_vector("AmbientColor", "ColorRGB", "Color", (0.0, 0.0, 0.0)),
            p_kstring("DefaultCamera", "Producer Perspective"),
            p_enum("TimeMode", time_mode(settings.fps)),
            p_enum("TimeProtocol", 2),
            p_enum("SnapOnFrameMode", 0),
            p_ktime("TimeSpanStart", settings.start_ticks),
            p_ktime("TimeSpanStop", settings.stop_ticks),
            p_double("CustomFrameRate", settings.fps),
        )
    )
    return node


def _documents(settings: SceneSettings) -> FbxNode:
    node = FbxNode.make("Documents")
    node.add("Count", i32(1))
    doc = node.add("Document", i64(1), "Scene", "Scene")
    doc.children.append(
        properties70(
            FbxNode.make("P", "SourceObject", "object", "", ""),
            p_kstring("ActiveAnimStackName", settings.take_name),
        )
    )
    doc.add("RootNode", i64(0))
    return node


def _takes(settings: SceneSettings) -> FbxNode:
    node = FbxNode.make("Takes")
    node.add("Current", settings.take_name)
    take = node.add("Take", settings.take_name)
    take.add("FileName", f"{settings.take_name}.tak")
    take.add("LocalTime", i64(settings.start_ticks), i64(settings.stop_ticks))
    take.add("ReferenceTime", i64(settings.start_ticks), i64(settings.stop_ticks))
    return node
