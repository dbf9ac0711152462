"""The blend synthesizer: the guide, as a song runner.

The guide (:mod:`choreo.choreography.guide`) already is the dance: real mocap
phrases warped onto the beats and joined by inertialization. The existing
post-processing (leg IK, joint limits, grounding, foot pinning) finishes it
like any generated motion. Wrapping it as a :class:`engines.runner.SongRunner`
lets the pipeline, the service and the batcher treat it like the guided
network (``--synth model``), which performs the same plan from the same
per-frame inputs (music, guide, junction, and the seed's latent) by adding a
learned correction to the guide; the blend returns the guide unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from choreo.audio.music_features import FEATURE_DIM
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary
from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from choreo.motion.motion import FRAME_SIZE
from engines.runner import song_frames

__all__ = ["BLEND_INPUTS", "BlendRunner", "blend_spec"]

BLEND_INPUTS: tuple[tuple[str, int], ...] = (("music", FEATURE_DIM), ("guide", FRAME_SIZE), ("junction", 2))
"""Per-frame inputs of a synthesizer that performs a plan."""


def blend_spec(library: PhraseLibrary) -> ModelSpec:
    """The blend synthesizer's description: its version names the library's version and hash."""
    return ModelSpec(
        version=f"blend-{library.version}+{library.sha256[:12]}",
        native_fps=LIBRARY_FPS,
        feature_dim=FEATURE_DIM,
        styles=library.styles,
        latent_dim=0,
        state_shapes={},
        trained=True,
        credits=library.credits,
        inputs=BLEND_INPUTS,
    )


class BlendRunner:
    """A song runner whose dance is the guide itself.

    Examples
    --------
    >>> poses = BlendRunner(library).run_song({"music": m, "guide": g, "junction": j})  # doctest: +SKIP
    """

    def __init__(self, library: PhraseLibrary) -> None:
        self.library = library
        self.spec = blend_spec(library)

    def run_song(self, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The guide's poses ``[N, 75]`` float32.

        Raises
        ------
        EngineError
            When an input is missing or has the wrong shape, or the guide is not finite.
        """
        song_frames(inputs, self.spec.input_widths)
        guide = np.asarray(inputs["guide"], dtype=np.float32)
        if not np.isfinite(guide).all():
            raise EngineError("the guide holds non-finite poses")
        return guide.copy()
