"""Choreography: dances assembled from real mocap phrases, planned onto the music's beats.

The library (:mod:`.library`) holds retargeted mocap cut into phrases of whole
pulse beats; the style choice (:mod:`.style_choice`) says which of its styles a
song is danced in; the planner (:mod:`.planner`) picks a phrase for every stretch
of bars; the guide (:mod:`.guide`) warps each phrase onto the song's beats and
joins them by inertialization; the blend synthesizer (:mod:`.blend`) is the song
runner that turns the guide into the dance, and the guided network
(``--synth model``) performs the same guide. The choices a caller picks from
(energy levels, synthesizers) are :mod:`choreo.contracts.choices`.
"""
