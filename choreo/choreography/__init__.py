"""Choreography: dances assembled from real mocap phrases, planned onto the music's beats.

The library (:mod:`.library`) holds retargeted mocap cut into phrases of whole
pulse beats; the planner (:mod:`.planner`) picks a phrase for every stretch of
bars; the guide (:mod:`.guide`) warps each phrase onto the song's beats and
joins them by inertialization; the blend synthesizer (:mod:`.blend`) is the
song runner that turns the guide into the dance.
"""

__all__ = ["ENERGY_LEVELS", "SYNTHS"]

ENERGY_LEVELS = ("low", "medium", "high", "auto")
"""How big the moves are; ``auto`` follows the music's energy bar by bar."""

SYNTHS = ("blend", "model")
"""Synthesizers: ``blend`` dances a plan of library phrases, ``model`` is the LSTM (it ignores the plan)."""
