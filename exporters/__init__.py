"""Every file a render writes: the dance (BVH, binary FBX, binary glTF), the previews (the gif, the
mp4 video) and the png contact sheet, behind one registry (:mod:`exporters.registry`); rigs and provenance.

Exporters know nothing of the service: a :class:`~choreo.motion.Motion` and an
:class:`~exporters.registry.ExportRequest` (the rig, the provenance, the song's beats...) in, a file out.
"""
