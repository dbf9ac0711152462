"""Binary FBX 7.4 export, written from the public descriptions of the format (no Autodesk SDK).

Modules, one job each: :mod:`~exporters.fbx.nodes` (the node tree),
:mod:`~exporters.fbx.binary` (encoding and decoding), :mod:`~exporters.fbx.properties`
(``Properties70`` entries), :mod:`~exporters.fbx.timing` (ticks and time modes),
:mod:`~exporters.fbx.scene` (the document's sections), :mod:`~exporters.fbx.skeleton`,
:mod:`~exporters.fbx.animation`, :mod:`~exporters.fbx.skin` (the objects), and
:mod:`~exporters.fbx.writer` (:func:`write_fbx`). ``python -m exporters.fbx.dump FILE``
prints any binary FBX file's tree.
"""

from exporters.fbx.writer import fbx_document, write_fbx

__all__ = ["fbx_document", "write_fbx"]
