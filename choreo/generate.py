"""Generate a whole song's motion with an engine, chunk by chunk.

The conditioning of a song (features, style one-hot and seed latent) is built
once for all its frames, so the dance depends only on the song, the style and
the seed, never on how the frames are cut into chunks or batched.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import EngineError, ParameterError
from engines.base import MAX_CHUNK_FRAMES, MIN_CHUNK_FRAMES, Engine, ModelSpec

__all__ = ["generate_poses", "song_inputs"]


def song_inputs(features: np.ndarray, *, style: str, seed: int, spec: ModelSpec) -> dict[str, np.ndarray]:
    """The model inputs for every frame of a song, ``{name: [N, width]}`` float32.

    Parameters
    ----------
    features : np.ndarray [shape=(N, spec.feature_dim)], music features at the model's fps
    style : a concrete style name from ``spec.styles``
    seed : int; the latent is i.i.d. standard normal noise from ``numpy.random.default_rng(seed)``
    spec : the model's description
    """
    if features.ndim != 2 or features.shape[1] != spec.feature_dim:
        raise ParameterError(f"features must be [frames, {spec.feature_dim}], got {features.shape}")
    if style not in spec.styles:
        raise ParameterError(f"the model knows styles {spec.styles}, not {style!r}")
    n = features.shape[0]
    one_hot = np.zeros((n, len(spec.styles)), dtype=np.float32)
    one_hot[:, spec.styles.index(style)] = 1.0
    latent = np.random.default_rng(seed).standard_normal((n, spec.latent_dim)).astype(np.float32)
    return {"music": features.astype(np.float32), "style": one_hot, "latent": latent}


def generate_poses(
    engine: Engine, inputs: dict[str, np.ndarray], *, chunk_frames: int = MAX_CHUNK_FRAMES
) -> np.ndarray:
    """Run one song through ``engine`` in chunks; returns poses ``[N, 75]``.

    The last chunk, if shorter than the engine's minimum, is padded by
    repeating its final frame, and the padded poses are dropped.
    """
    if not MIN_CHUNK_FRAMES <= chunk_frames <= MAX_CHUNK_FRAMES:
        raise ParameterError(
            f"chunk_frames must be {MIN_CHUNK_FRAMES}..{MAX_CHUNK_FRAMES}, got {chunk_frames}"
        )
    n = inputs["music"].shape[0]
    state = engine.initial_state(1)
    poses = []
    for start in range(0, n, chunk_frames):
        chunk = {name: arr[start : start + chunk_frames] for name, arr in inputs.items()}
        frames = next(iter(chunk.values())).shape[0]
        if frames < MIN_CHUNK_FRAMES:
            chunk = {
                name: np.pad(arr, ((0, MIN_CHUNK_FRAMES - frames), (0, 0)), mode="edge")
                for name, arr in chunk.items()
            }
        out, state = engine.run({name: arr[None] for name, arr in chunk.items()}, state)
        poses.append(out[0, :frames])
    result = np.concatenate(poses, axis=0) if poses else np.zeros((0, 75), dtype=np.float32)
    if not np.all(np.isfinite(result)):
        raise EngineError("the engine produced non-finite poses")
    return result
