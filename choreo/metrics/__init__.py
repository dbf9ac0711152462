"""Measures of a dance: one module per measure, each a pure function with its fps stated.

:mod:`.beat_align` (Bailando's beat alignment score), :mod:`.foot_skate`
(share of skating frames), :mod:`.pfc` (EDGE's physical foot contact score),
:mod:`.jerk`, :mod:`.freeze` (freeze ratio), :mod:`.speed` (mean joint speed), :mod:`.diversity` (kinetic
features and pairwise distances), :mod:`.limits` (joint-limit violations) and
:mod:`.score` (all of them for one dance).

Issue 11's measures of whether a dance dances: :mod:`.spread` (pose spread and
reach, also in the pelvis heading frame), :mod:`.beat_contrast` (beat alignment
on own, mismatched and half-beat-shifted beats), :mod:`.junctions` (jerk at
phrase junctions over jerk inside phrases), :mod:`.stalls`, :mod:`.repetition`
(distinct source seconds per minute), :mod:`.style` (nearest-centroid style
separability over :mod:`.descriptor` windows) and :mod:`.structure_consistency`.

The package imports none of them: a render needs two measures, and importing all of them cost a
cold start a tenth of a second. Import each from its module.
"""
