"""Engine settings, read from ``CHOREO_ENGINE_*`` environment variables.

Which model file and backend run, with how many CPU threads, how many songs a
GPU worker batches, and how TensorRT engines are built and cached. The one
place that says which model a process loads: ``choreo render``, the CPU
workers (which read the model's native fps from its metadata) and the GPU
workers all read it here.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "BACKEND_CHOICES",
    "PRECISIONS",
    "RTX_DEFAULT_TARGETS",
    "RTX_TARGETS",
    "EngineSettings",
    "ShapeProfile",
    "get_engine_settings",
]

BACKEND_CHOICES = ("auto", "tensorrt", "torch-cuda", "onnxruntime")
PRECISIONS = ("fp32", "fp16", "int8")

RTX_TARGETS = {"7.5": "SM75", "8.0": "SM80", "8.6": "SM86", "8.9": "SM89", "12.0": "SM120", "12.1": "SM121"}
"""Compute capabilities TensorRT-RTX 1.7 can build for, and their ``trt.ComputeCapability`` names."""
RTX_DEFAULT_TARGETS = ("8.0", "8.6", "8.9", "12.0", "12.1")
"""What TensorRT-RTX builds for when not told: A100-class, RTX 30/40/50 series and RTX PRO GPUs."""


class ShapeProfile(BaseModel):
    """A TensorRT optimisation profile in batch x frames.

    Parameters
    ----------
    min, opt, max : ``(batch, frames)`` pairs; every engine call must lie between
        ``min`` and ``max`` in both numbers, and ``opt`` is the shape kernels are tuned for.
    """

    min: tuple[int, int]
    opt: tuple[int, int]
    max: tuple[int, int]

    @model_validator(mode="after")
    def _ordered(self) -> ShapeProfile:
        for axis, label in ((0, "batch"), (1, "frames")):
            lo, mid, hi = self.min[axis], self.opt[axis], self.max[axis]
            if not 1 <= lo <= mid <= hi:
                raise ValueError(
                    f"profile {label} must satisfy 1 <= min <= opt <= max, got {lo}, {mid}, {hi}"
                )
        return self

    def contains(self, batch: int, frames: int) -> bool:
        """Whether a chunk of ``batch`` x ``frames`` can run under this profile."""
        return self.min[0] <= batch <= self.max[0] and self.min[1] <= frames <= self.max[1]


def _default_profiles() -> dict[str, ShapeProfile]:
    return {
        # The real-time profile of a published TensorRT LSTM dance deployment.
        "realtime": ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128)),
        # Offline rendering: many songs in flight per call.
        "offline": ShapeProfile(min=(1, 16), opt=(64, 128), max=(256, 128)),
    }


class EngineSettings(BaseSettings):
    """How the process's engine is chosen, built and fed."""

    model_config = SettingsConfigDict(env_prefix="CHOREO_ENGINE_", extra="ignore", populate_by_name=True)

    backend: Literal["auto", "tensorrt", "torch-cuda", "onnxruntime"] = Field(
        default="auto",
        description="Backend to load; 'auto' takes TensorRT, then torch-cuda, then ONNX Runtime.",
    )
    model_path: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("CHOREO_ENGINE_MODEL_PATH", "CHOREO_MODEL_PATH"),
        description=(
            "ONNX model every backend loads (CHOREO_ENGINE_MODEL_PATH, or CHOREO_MODEL_PATH); "
            "unset: the caller's default (the shipped model, choreo.models.configured_model_path)."
        ),
    )
    threads: int = Field(default=2, ge=1, description="CPU threads for ONNX Runtime (CHOREO_ENGINE_THREADS).")
    precision: Literal["fp32", "fp16", "int8"] = Field(
        default="fp16", description="TensorRT precision (written into the ONNX graph before the build)."
    )
    profile: str = Field(
        default="offline", description="Name of the TensorRT shape profile the worker loads."
    )
    profiles: dict[str, ShapeProfile] = Field(
        default_factory=_default_profiles, description="TensorRT shape profiles by name (JSON in the env)."
    )
    cache_dir: Path = Field(
        default=Path.home() / ".cache" / "choreo" / "engines",
        description="Where built TensorRT engines, the timing cache and converted ONNX models are kept.",
    )
    calibration_dir: Path | None = Field(
        default=None,
        description="INT8 calibration songs: a folder with MANIFEST.tsv (file, duration_s, tempo_bpm_est).",
    )
    tensorrt_flavour: Literal["auto", "tensorrt", "tensorrt-rtx"] = Field(
        default="auto",
        description="Which TensorRT: 'auto' takes TensorRT 11 where installed, else TensorRT-RTX.",
    )
    rtx_targets: tuple[str, ...] = Field(
        default=RTX_DEFAULT_TARGETS,
        description="TensorRT-RTX: compute capabilities its engines are built for (JSON list in the env).",
    )
    workspace_mib: int = Field(default=2048, ge=64, description="TensorRT builder workspace limit.")
    slots: int = Field(default=2, ge=1, le=16, description="Concurrent TensorRT contexts (one stream each).")
    device: int = Field(default=0, ge=0, description="CUDA device ordinal.")
    torch_dtype: Literal["fp16", "fp32"] = Field(
        default="fp32", description="torch-cuda: fp32, or fp16 matrix products (measured no faster)."
    )
    cuda_graphs: bool = Field(default=True, description="torch-cuda: replay CUDA graphs per shape bucket.")
    torch_compile: bool = Field(
        default=True,
        description="torch-cuda: compile the network's per-frame step (torch.compile; 1.56x at 64 songs on "
        "an H200, some seconds at start).",
    )
    max_batch: int = Field(default=64, ge=1, le=1024, description="Songs per engine call in the batcher.")
    chunk_frames: int = Field(
        default=128,
        ge=16,
        le=128,
        validation_alias=AliasChoices("CHOREO_ENGINE_CHUNK_FRAMES", "CHOREO_CHUNK_FRAMES"),
        description="Frames per engine call, for every song runner (CHOREO_ENGINE_CHUNK_FRAMES, or "
        "CHOREO_CHUNK_FRAMES).",
    )

    @model_validator(mode="after")
    def _known_profile(self) -> EngineSettings:
        if self.profile not in self.profiles:
            raise ValueError(f"unknown engine profile {self.profile!r}; known: {sorted(self.profiles)}")
        unknown = [t for t in self.rtx_targets if t not in RTX_TARGETS]
        if unknown or not self.rtx_targets:
            raise ValueError(f"rtx_targets must be among {sorted(RTX_TARGETS)}, got {list(self.rtx_targets)}")
        return self


@lru_cache
def get_engine_settings() -> EngineSettings:
    """The process's engine settings, read once from the environment."""
    return EngineSettings()
