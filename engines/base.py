"""The contract every engine backend keeps, and the model description it reads.

An engine is loaded once per process and then runs chunks::

    state = engine.initial_state(batch)
    poses, state = engine.run(inputs, state)   # poses [B, T, 75]

``inputs`` maps the model's input names to per-frame arrays ``[B, T, ·]``
(``T`` from :data:`MIN_CHUNK_FRAMES` to :data:`MAX_CHUNK_FRAMES`). ``state`` is
opaque to the caller: a backend may keep it on its device. Carrying it from one
chunk to the next lets a song of any length be generated in chunks.

The ONNX model graph that every backend is built from has these tensors:

==================  ===================  ==========================================
name                shape                meaning
==================  ===================  ==========================================
``music``           [B, T, 35] float32   music features (AIST++/FACT layout), raw
``style``           [B, T, S] float32    one-hot style, S = ``len(spec.styles)``
``latent``          [B, T, Z] float32    i.i.d. standard normal noise from the seed
``guide``           [B, T, 75] float32   (guide models) the plan's guide pose, contract layout
``junction``        [B, T, 2] float32    (guide models) seconds since the previous and to the next junction
``state_in_*``      [B, ...] float32     recurrent state; zeros start a dance
``poses``           [B, T, 75] float32   72 axis-angle numbers then root xyz, metres
``state_out_*``     [B, ...] float32     the state after the chunk, same order
==================  ===================  ==========================================

A model takes either ``music``, ``style`` and ``latent`` (the style-conditioned
LSTM) or ``music``, ``guide``, ``junction`` and ``latent`` (the residual
synthesizer that performs a choreography plan): :attr:`ModelSpec.input_widths`
says which, in graph order. The model's metadata (ONNX ``metadata_props``) says
what the model is; see :class:`~choreo.contracts.model_spec.ModelSpec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError

if TYPE_CHECKING:
    from engines.settings import ShapeProfile
    from engines.state import StateRows

__all__ = [
    "MAX_CHUNK_FRAMES",
    "MIN_CHUNK_FRAMES",
    "Engine",
    "PendingPoses",
    "ReadyPoses",
    "check_chunk",
]

MIN_CHUNK_FRAMES = 16
MAX_CHUNK_FRAMES = 128
STATE_IN_PREFIX = "state_in_"
STATE_OUT_PREFIX = "state_out_"
POSES_OUTPUT = "poses"


class PendingPoses(Protocol):
    """The poses of a launched chunk, ready once the device has run it."""

    def wait(self) -> np.ndarray:
        """Block until the chunk has run; its poses ``[B, T, 75]`` (the caller's to keep)."""
        ...


@dataclass(frozen=True)
class ReadyPoses:
    """The poses of a chunk that ran before its launch returned (a backend that runs synchronously)."""

    poses: np.ndarray

    def wait(self) -> np.ndarray:
        """The poses, at once."""
        return self.poses


class Engine(Protocol):
    """A loaded model that runs chunks of frames for a batch of sequences.

    What the sequence batcher relies on, and every backend provides:

    * the state of ``initial_state(batch)`` and of ``run`` is a mapping of
      batch-first tensors (row ``i`` of each is sequence ``i``), whose rows
      ``state_rows`` takes, puts and zeroes on the state's own device;
    * ``profile`` is the range of ``(batch, frames)`` the engine runs (a
      TensorRT engine serves one shape profile), or None for any batch and any
      chunk of :data:`MIN_CHUNK_FRAMES` to :data:`MAX_CHUNK_FRAMES` frames;
    * ``prepares_shapes`` is True where each new batch shape costs a one-time
      preparation (a CUDA graph capture, just-in-time kernels), which a warm-up
      pays before the first song.
    """

    spec: ModelSpec

    @property
    def name(self) -> str:
        """The backend's name, as in reports (``onnxruntime``, ``torch-cuda``, ``tensorrt``)."""
        ...

    @property
    def state_rows(self) -> StateRows:
        """Row operations on this backend's state (:mod:`engines.state`)."""
        ...

    @property
    def profile(self) -> ShapeProfile | None:
        """The ``(batch, frames)`` range the engine runs; None for any batch."""
        ...

    @property
    def prepares_shapes(self) -> bool:
        """Whether each new batch shape costs a one-time preparation worth a warm-up."""
        ...

    def initial_state(self, batch: int) -> Any:
        """The state that starts ``batch`` new dances."""
        ...

    def input_buffers(self, batch: int, frames: int) -> Mapping[str, np.ndarray] | None:
        """Host arrays ``{name: [batch, frames, width]}`` a :meth:`run` of this shape sends without a copy of
        its own (a device backend's page-locked memory), or None: the caller keeps its own.

        A caller writes a chunk into them and passes them as ``inputs``; the next run
        of the same shape overwrites them.
        """
        ...

    def launch(self, inputs: Mapping[str, np.ndarray], state: Any) -> tuple[PendingPoses, Any]:
        """Start one chunk and return without waiting where the backend can: its poses to come and the
        state after it.

        A device backend queues the chunk on its stream, so the state it returns may be passed to the
        next launch at once, and the caller prepares the next chunk while this one runs; the inputs
        may be overwritten as soon as this returns. A backend that runs on the host returns
        :class:`ReadyPoses`.
        """
        ...

    def run(self, inputs: Mapping[str, np.ndarray], state: Any) -> tuple[np.ndarray, Any]:
        """Run one chunk; returns ``poses [B, T, 75]`` and the state after it."""
        ...


def check_chunk(inputs: Mapping[str, np.ndarray], spec: ModelSpec) -> tuple[int, int]:
    """Validate a chunk's inputs against the contract; returns ``(B, T)``."""
    widths = spec.input_widths
    missing = [name for name in widths if name not in inputs]
    if missing:
        raise EngineError(f"chunk is missing inputs {missing}")
    batch, frames = np.shape(inputs["music"])[:2]
    for name, width in widths.items():
        shape = np.shape(inputs[name])
        if shape != (batch, frames, width):
            raise EngineError(f"input {name!r} must be {(batch, frames, width)}, got {shape}")
    if not MIN_CHUNK_FRAMES <= frames <= MAX_CHUNK_FRAMES and frames != 0:
        raise EngineError(f"chunks hold {MIN_CHUNK_FRAMES} to {MAX_CHUNK_FRAMES} frames, got {frames}")
    return int(batch), int(frames)
