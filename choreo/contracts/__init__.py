"""The contracts floor: the types and choices that cross a boundary between packages.

The command line, the pipeline, the workers, the API, the engines and the
exporters share these without importing each other. This package imports
nothing of Choreo's but the errors (:mod:`choreo.errors`) and the motion types
(:mod:`choreo.motion`), which sit below everything, so any layer may use it.

- :mod:`.choices`: synthesizers, energy levels, frame rates, formats, rigs, styles, song extensions
- :mod:`.options`: :class:`~.options.RenderOptions`, what to render
- :mod:`.model_spec`: :class:`~.model_spec.ModelSpec`, what a model file is
- :mod:`.timing`: :class:`~.timing.SongTiming`, a song's beats, tempo and length
- :mod:`.plan`: :class:`~.plan.Plan`, which phrase is danced over which bars
- :mod:`.provenance`: :class:`~.provenance.Provenance`, where a dance came from
- :mod:`.contacts`: :class:`~.contacts.ContactTrack`, which heels, toes and hands touch the floor when
- :mod:`.generated`: :class:`~.generated.GeneratedMotion`, the performed dance between stages
- :mod:`.summary`: :class:`~.summary.DanceSummary`, what a finished dance says about itself
"""
