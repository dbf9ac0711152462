"""Training arrays for the dance model: load, check, turn into pose features.

The data helper writes ``train.npz`` and ``val.npz`` (float16 ``motion [frames,
75]`` in :meth:`choreo.motion.Motion.to_array` layout at 30 fps, ``music
[frames, 35]``, and per sequence ``offsets``, ``lengths`` and ``style``) and
``meta.json``. Numpy only: the trainer moves the arrays to its device.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.rotations import aa_to_sixd
from engines.network.config import FEATURE_DIM, N_JOINTS, POSE_DIM

__all__ = ["DanceSet", "load_split", "normalisation_stats", "pose_features", "random_split"]

_STYLE_KEYS = ("style", "styles", "style_index")


@dataclass(frozen=True)
class DanceSet:
    """Sequences laid end to end.

    Parameters
    ----------
    features : np.ndarray [shape=(frames, POSE_DIM)], float32 raw pose features
    root_xz : np.ndarray [shape=(frames, 2)], float32, root x and z, metres, each
        sequence centred on its mean floor position
    music : np.ndarray [shape=(frames, 35)], float32 raw music features
    offsets, lengths, styles : np.ndarray [shape=(sequences,)], int64
    """

    features: np.ndarray
    root_xz: np.ndarray
    music: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    styles: np.ndarray

    @property
    def n_frames(self) -> int:
        return int(self.features.shape[0])


def pose_features(motion: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Motion frames ``[frames, 75]`` to pose features ``[frames, POSE_DIM]`` and centred root x, z.

    The velocity of a sequence's first frame is zero, so each sequence starts
    standing where it is.
    """
    motion = np.asarray(motion, dtype=np.float64)
    frames = motion.shape[0]
    sixd = aa_to_sixd(motion[:, : 3 * N_JOINTS].reshape(frames, N_JOINTS, 3)).reshape(frames, 6 * N_JOINTS)
    root = motion[:, 72:75]
    vel = np.zeros((frames, 2))
    root_xz = np.zeros((frames, 2))
    start = 0
    for length in lengths:
        seg = root[start : start + length][:, [0, 2]]
        root_xz[start : start + length] = seg - seg.mean(axis=0)
        vel[start + 1 : start + length] = np.diff(seg, axis=0)
        start += length
    feats = np.concatenate([sixd, root[:, 1:2], vel], axis=1)
    return feats.astype(np.float32), root_xz.astype(np.float32)


def load_split(path: Path) -> DanceSet:
    """Read one ``.npz`` split and check its layout, naming the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"training data not found: {path}")
    with np.load(path) as data:
        keys = set(data.files)
        for key in ("motion", "music", "offsets", "lengths"):
            if key not in keys:
                raise ParameterError(f"{path}: missing array {key!r} (has {sorted(keys)})")
        style_key = next((k for k in _STYLE_KEYS if k in keys), None)
        if style_key is None:
            raise ParameterError(f"{path}: missing the per-sequence style index (one of {_STYLE_KEYS})")
        motion, music = data["motion"], data["music"]
        offsets = data["offsets"].astype(np.int64)
        lengths = data["lengths"].astype(np.int64)
        styles = data[style_key].astype(np.int64)
    if motion.ndim != 2 or motion.shape[1] != 75:
        raise ParameterError(f"{path}: motion must be [frames, 75], got {motion.shape}")
    if music.shape != (motion.shape[0], FEATURE_DIM):
        raise ParameterError(f"{path}: music must be [{motion.shape[0]}, {FEATURE_DIM}], got {music.shape}")
    if not (len(offsets) == len(lengths) == len(styles)):
        raise ParameterError(f"{path}: offsets, lengths and style disagree in length")
    if (
        np.any(np.diff(offsets) != lengths[:-1])
        or offsets[0] != 0
        or offsets[-1] + lengths[-1] != len(motion)
    ):
        raise ParameterError(f"{path}: sequences must be laid end to end (offsets = cumulative lengths)")
    if not np.all(np.isfinite(motion.astype(np.float32))):
        raise ParameterError(f"{path}: motion holds NaN or infinite values")
    feats, root_xz = pose_features(motion, lengths)
    return DanceSet(feats, root_xz, music.astype(np.float32), offsets, lengths, styles)


def normalisation_stats(train: DanceSet) -> dict[str, np.ndarray]:
    """Mean and std of the training music and pose features (std floored)."""
    feats = train.features.astype(np.float64)
    pose_mean = feats.mean(axis=0)
    pose_std = feats.std(axis=0)
    # The root orientation's horizontal components and the horizontal velocity turn
    # with the random heading augmentation: zero mean, one spread per pair.
    for a, b in ((0, 2), (3, 5), (POSE_DIM - 2, POSE_DIM - 1)):
        pose_mean[[a, b]] = 0.0
        pose_std[[a, b]] = np.sqrt(0.5 * (feats[:, a] ** 2 + feats[:, b] ** 2).mean())
    return {
        "music_mean": train.music.mean(axis=0),
        "music_std": np.maximum(train.music.std(axis=0), 1e-3),
        "pose_mean": pose_mean.astype(np.float32),
        "pose_std": np.maximum(pose_std, 1e-3).astype(np.float32),
    }


def random_split(seed: int, n_sequences: int = 12, min_frames: int = 300, max_frames: int = 900) -> DanceSet:
    """A split of random arrays in the real layout: for developing and testing the trainer only."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_frames, max_frames, n_sequences)
    frames = int(lengths.sum())
    t = np.arange(frames)[:, None] / 30.0
    aa = 0.3 * np.sin(2 * np.pi * rng.uniform(0.5, 2.0, (1, 72)) * t + rng.uniform(0, 6, (1, 72)))
    root = np.concatenate([0.3 * np.sin(t), 0.9 + 0.05 * np.sin(4 * t), 0.3 * np.cos(t)], axis=1)
    motion = np.concatenate([aa, root], axis=1)
    music = rng.standard_normal((frames, FEATURE_DIM)).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    feats, root_xz = pose_features(motion, lengths)
    return DanceSet(feats, root_xz, music, offsets, lengths, rng.integers(0, 4, n_sequences))
