"""``write_fbx``: a Choreo motion as a binary FBX 7.4 file.

What the file holds: the skeleton as LimbNode Models (rest transforms, the
joint hierarchy), one animation stack and layer with a rotation curve node per
joint and a translation curve node for the root, keyed on every frame, and
optionally the skinned mannequin (see :mod:`exporters.fbx.skin`). Global
settings: Y up, Z front, X right (right-handed), ``UnitScaleFactor`` 100 for
metres or 1 for centimetres, the time mode of the frame rate. The dance's
provenance goes into the scene info.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.contracts.provenance import Provenance
from choreo.errors import ExportError, ParameterError
from choreo.files import write_atomically
from choreo.motion.motion import Motion
from exporters.fbx.animation import add_animation
from exporters.fbx.binary import encode_fbx
from exporters.fbx.scene import FbxScene, SceneSettings
from exporters.fbx.skeleton import add_skeleton
from exporters.fbx.skin import add_skinned_figure
from exporters.rigs import Rig, get_rig, units_scale

__all__ = ["fbx_document", "write_fbx"]


def fbx_document(
    motion: Motion,
    *,
    rig: str | Rig = "smpl",
    units: str | None = None,
    provenance: Provenance | None = None,
    take_name: str = "Dance",
    skinned: bool = True,
    file_name: str = "",
) -> list:
    """The FBX node tree of ``motion`` (top-level nodes); see :func:`write_fbx`."""
    rig = rig if isinstance(rig, Rig) else get_rig(rig, motion.skeleton)
    units = rig.resolve_units(units)
    if provenance is not None and not isinstance(provenance, Provenance):
        raise ParameterError(f"provenance must be a Provenance, got {type(provenance).__name__}")
    if not take_name or "\x00" in take_name:
        raise ParameterError(f"take_name must be a non-empty string without NUL, got {take_name!r}")
    if motion.n_frames < 1:
        raise ExportError("cannot write an FBX of a motion with no frames")
    if not (np.all(np.isfinite(motion.rotations)) and np.all(np.isfinite(motion.root_translation))):
        raise ExportError("motion holds NaN or infinite values; refusing to write the FBX")
    scale = units_scale(units)
    scene = FbxScene()
    model_ids = add_skeleton(scene, rig, scale)
    start, stop = add_animation(scene, rig, motion, model_ids, scale, take_name)
    if skinned:
        add_skinned_figure(scene, rig, model_ids, scale)
    settings = SceneSettings(
        fps=float(motion.fps),
        unit_scale_cm=100.0 / scale,
        start_ticks=start,
        stop_ticks=stop,
        take_name=take_name,
        provenance=provenance,
        file_name=file_name,
    )
    return scene.document(settings)


def write_fbx(
    motion: Motion,
    path: str | Path,
    *,
    rig: str | Rig = "smpl",
    units: str | None = None,
    provenance: Provenance | None = None,
    take_name: str = "Dance",
    skinned: bool = True,
    compress_level: int = 1,
) -> Path:
    """Write ``motion`` as a binary FBX 7.4 file.

    Parameters
    ----------
    motion : the dance; frame ``k`` is keyed at ``k / fps`` seconds
    path : the ``.fbx`` file to write (replaced atomically)
    rig : ``"smpl"``, ``"mixamo"`` or a :class:`~exporters.rigs.Rig`
    units : ``"m"`` or ``"cm"``; ``None`` takes the rig's default (m for smpl, cm for mixamo)
    provenance : where the dance came from, written into the scene info
    take_name : the animation's name (the clip name Unity, Unreal and Blender show)
    skinned : also write the mannequin mesh bound to the skeleton, so the file
        shows a figure when opened
    compress_level : zlib level of the large arrays (1 fastest .. 9 smallest); animation
        curves are float32 noise to zlib, so levels above 1 cost time and save under 1%

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ParameterError
        For an unknown rig or units, or a malformed take name or provenance.
    ExportError
        When the motion is empty or not finite, or the file cannot be written.
    """
    path = Path(path)
    nodes = fbx_document(
        motion,
        rig=rig,
        units=units,
        provenance=provenance,
        take_name=take_name,
        skinned=skinned,
        file_name=path.name,
    )
    data = encode_fbx(nodes, compress_level=compress_level)
    write_atomically(path, data, what="FBX file", error=ExportError)
    return path
