"""The dance model's hyper-parameters and the layout of its weights.

Everything here is plain Python and numpy so that the ONNX graph builder and
the tests can use it without torch. The torch network
(:mod:`engines.network.dance_net`) and the ONNX graph (:mod:`choreo.model.graph`)
both read their weights from a flat ``dict[str, np.ndarray]`` laid out by
:func:`param_shapes`, which is how the two are kept computing the same thing.

Pose features (one frame, :data:`POSE_DIM` numbers, before normalisation):

* 24 local joint rotations in 6D (144 numbers, joint 0 is the root's world
  orientation), then
* the root height above the floor in metres (1), then
* the root's horizontal velocity in metres per frame, world X and Z (2).

The root's horizontal position is integrated from that velocity inside the
graph and kept on the floor space by :func:`soft_clamp_np`.

A *guided* model (``ModelConfig(guided=True)``) is the residual synthesizer
that performs a choreography plan: per frame it reads the music, the plan's
guide pose, the time since the previous and to the next junction and the
seed's latent (no style), and predicts a correction to the guide. Its pose
features are the guide's layout with the last two numbers holding the
correction of the root's floor position (metres) instead of a velocity: the
root follows the guide's, with no floor clamp.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from choreo.errors import ParameterError

__all__ = [
    "FEATURE_DIM",
    "GUIDE_DIM",
    "GUIDE_FEATURES",
    "JUNCTION_DIM",
    "N_JOINTS",
    "POSE_DIM",
    "ROOT_DIM",
    "STYLES",
    "ModelConfig",
    "param_shapes",
    "soft_clamp_np",
]

STYLES: tuple[str, ...] = ("salsa", "modern", "breakdance", "whirl")
FEATURE_DIM = 35
N_JOINTS = 24
ROT_DIM = 6 * N_JOINTS
POSE_DIM = ROT_DIM + 1 + 2
ROOT_DIM = 2
GUIDE_DIM = 75
JUNCTION_DIM = 2
GUIDE_FEATURES = ROT_DIM + 1
"""Guide numbers the conditioning encoder sees: the 6D rotations and the root height."""


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and fixed constants of the generator.

    Parameters
    ----------
    hidden : LSTM width of both layers
    cond_hidden : width of the per-frame conditioning encoder (music, style, latent)
    latent_dim : Z, width of the ``latent`` input
    latent_time_s : time constant of the slow latent: the per-frame i.i.d. noise is
        smoothed by a unit-variance AR(1) filter with this time constant, so a seed
        shapes the dance over seconds rather than flickering frame to frame
    native_fps : frames per second the model is trained and run at
    floor_soft_m : half-width of the floor square inside which root motion is untouched
    floor_hard_m : half-width the root can never leave (the 2 m x 2 m floor is 1.0)
    guided : the residual synthesizer over a guide (inputs music, guide, junction,
        latent; no style, no floor clamp) instead of the style-conditioned generator
    junction_time_s : time constant of the junction inputs: the network sees
        ``exp(-seconds / junction_time_s)`` of the time since and to a junction
    """

    hidden: int = 256
    cond_hidden: int = 256
    latent_dim: int = 16
    latent_time_s: float = 1.0
    native_fps: int = 30
    floor_soft_m: float = 0.6
    floor_hard_m: float = 0.95
    styles: tuple[str, ...] = field(default=STYLES)
    guided: bool = False
    junction_time_s: float = 0.5

    def __post_init__(self) -> None:
        if self.guided and self.styles:
            raise ParameterError("a guided model takes no style: give styles=()")
        if self.junction_time_s <= 0:
            raise ParameterError(f"junction_time_s must be positive, got {self.junction_time_s}")
        if self.hidden < 8 or self.cond_hidden < 8 or self.latent_dim < 1:
            raise ParameterError(f"model sizes too small: {self}")
        if not 0.0 < self.floor_soft_m < self.floor_hard_m <= 1.0:
            raise ParameterError("floor limits must satisfy 0 < floor_soft_m < floor_hard_m <= 1")

    @property
    def latent_decay(self) -> float:
        """AR(1) coefficient ``a`` of the slow latent per frame."""
        return float(np.exp(-1.0 / (self.latent_time_s * self.native_fps)))

    @property
    def cond_dim(self) -> int:
        """Width of one frame's conditioning: music, one-hot style (or guide and junction), slow latent."""
        if self.guided:
            return FEATURE_DIM + GUIDE_FEATURES + JUNCTION_DIM + self.latent_dim
        return FEATURE_DIM + len(self.styles) + self.latent_dim

    @property
    def inputs(self) -> tuple[tuple[str, int], ...]:
        """``(name, width)`` of each per-frame graph input, in graph order."""
        if self.guided:
            return (
                ("music", FEATURE_DIM),
                ("guide", GUIDE_DIM),
                ("junction", JUNCTION_DIM),
                ("latent", self.latent_dim),
            )
        return (("music", FEATURE_DIM), ("style", len(self.styles)), ("latent", self.latent_dim))

    @property
    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        """Per-sequence shape of each recurrent state tensor, in graph order."""
        h = self.hidden
        shapes: dict[str, tuple[int, ...]] = {
            "h1": (h,),
            "c1": (h,),
            "h2": (h,),
            "c2": (h,),
            "pose": (POSE_DIM,),
        }
        if not self.guided:
            shapes["root"] = (ROOT_DIM,)
        shapes["latent"] = (self.latent_dim,)
        return shapes

    def to_json(self) -> str:
        """The config as JSON (saved beside the weights)."""
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_dict(cls, values: dict) -> ModelConfig:
        """Inverse of :meth:`to_json` after ``json.loads``; unknown keys are an error."""
        known = set(cls.__dataclass_fields__)
        unknown = set(values) - known
        if unknown:
            raise ParameterError(f"unknown model config keys: {sorted(unknown)}")
        values = dict(values)
        if "styles" in values:
            values["styles"] = tuple(values["styles"])
        return cls(**values)


def param_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Name and shape of every weight and constant the graph needs.

    Matrices multiply row vectors from the right (``y = x @ W + b``). LSTM gates
    are ordered input, forget, output, cell.
    """
    h, e = config.hidden, config.cond_hidden
    feedback = h + POSE_DIM if config.guided else h + POSE_DIM + ROOT_DIM
    return {
        "music_mean": (FEATURE_DIM,),
        "music_std": (FEATURE_DIM,),
        "pose_mean": (POSE_DIM,),
        "pose_std": (POSE_DIM,),
        "enc1_w": (config.cond_dim, e),
        "enc1_b": (e,),
        "enc2_w": (e, e),
        "enc2_b": (e,),
        "l1_wx": (e, 4 * h),
        "l1_b": (4 * h,),
        "l1_wr": (feedback, 4 * h),
        "l2_w": (2 * h, 4 * h),
        "l2_b": (4 * h,),
        "out_w": (h, POSE_DIM),
        "out_b": (POSE_DIM,),
    }


def soft_clamp_np(x: np.ndarray, soft: float, hard: float) -> np.ndarray:
    """Keep each coordinate inside ``(-hard, hard)``: identity within ``soft``,
    a tanh knee between. Reference for the graph and the torch network.
    """
    mag = np.abs(x)
    knee = hard - soft
    return np.sign(x) * (np.minimum(mag, soft) + knee * np.tanh(np.maximum(mag - soft, 0.0) / knee))
