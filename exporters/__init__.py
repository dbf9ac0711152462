"""Dance files: BVH, binary FBX and binary glTF writers, rigs and provenance.

Exporters know nothing of the service: a :class:`~choreo.motion.Motion` and a
:class:`~choreo.contracts.provenance.Provenance` in, a file out.
"""
