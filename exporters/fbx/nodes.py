"""The FBX document tree: nodes with typed properties and children.

An FBX file, binary or ASCII, is a tree of *nodes*. Each node has a name, a
tuple of typed properties (scalars, strings, raw bytes or numeric arrays) and
a list of child nodes. The binary encoder in :mod:`exporters.fbx.binary` needs
the exact FBX type of every property, so Python values are wrapped here with
explicit types rather than guessed at encoding time.

FBX type codes used here: ``C`` bool, ``Y`` int16, ``I`` int32, ``L`` int64,
``F`` float32, ``D`` float64, ``S`` string, ``R`` raw bytes, and the arrays
``b i l f d`` (bool, int32, int64, float32, float64).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from choreo.errors import ExportError

__all__ = ["ARRAY_DTYPES", "FbxNode", "Prop", "i32", "i64", "raw"]

ARRAY_DTYPES: dict[str, np.dtype] = {
    "b": np.dtype("<u1"),
    "i": np.dtype("<i4"),
    "l": np.dtype("<i8"),
    "f": np.dtype("<f4"),
    "d": np.dtype("<f8"),
}
"""Little-endian numpy dtype of each FBX array type code."""

_ARRAY_CODE_BY_KIND = {("b", 1): "b", ("i", 4): "i", ("i", 8): "l", ("f", 4): "f", ("f", 8): "d"}


@dataclass(frozen=True)
class Prop:
    """One typed property value: ``code`` is the FBX type code, ``value`` the payload."""

    code: str
    value: Any


def i32(value: int) -> Prop:
    """An int32 (``I``) property."""
    return Prop("I", int(value))


def i64(value: int) -> Prop:
    """An int64 (``L``) property: object ids and times in FBX ticks."""
    return Prop("L", int(value))


def raw(value: bytes) -> Prop:
    """A raw-bytes (``R``) property."""
    return Prop("R", bytes(value))


def _as_prop(value: object) -> Prop:
    """Wrap a plain Python/numpy value in its natural FBX type.

    ``bool`` -> C, ``int`` -> I (int32; use :func:`i64` for ids and times),
    ``float`` -> D, ``str`` -> S, ``bytes`` -> R, arrays by dtype. numpy
    scalars keep their width (float32 -> F, int16 -> Y, int64 -> L).
    """
    if isinstance(value, Prop):
        return value
    if isinstance(value, bool | np.bool_):
        return Prop("C", bool(value))
    if isinstance(value, np.ndarray):
        if value.dtype == np.bool_:
            return Prop("b", value.astype(np.uint8))
        code = _ARRAY_CODE_BY_KIND.get((value.dtype.kind, value.dtype.itemsize))
        if code is None:
            raise ExportError(f"FBX has no array type for dtype {value.dtype}")
        return Prop(code, np.ascontiguousarray(value, dtype=ARRAY_DTYPES[code]).ravel())
    if isinstance(value, np.int16):
        return Prop("Y", int(value))
    if isinstance(value, np.int64):
        return Prop("L", int(value))
    if isinstance(value, int | np.integer):
        if not -(2**31) <= int(value) < 2**31:
            raise ExportError(f"integer {value} does not fit FBX int32; wrap it with i64()")
        return Prop("I", int(value))
    if isinstance(value, np.float32):
        return Prop("F", float(value))
    if isinstance(value, float | np.floating):
        return Prop("D", float(value))
    if isinstance(value, str):
        return Prop("S", value)
    if isinstance(value, bytes):
        return Prop("R", value)
    raise ExportError(f"cannot store {type(value).__name__} as an FBX property")


@dataclass
class FbxNode:
    """A node of the FBX tree.

    Parameters
    ----------
    name : node name, such as ``"Model"`` or ``"Properties70"``
    props : typed property values, in order
    children : nested nodes, in order
    block : write a (possibly empty) nested scope even without children, as FBX
        writers do for objects such as an ``AnimationLayer`` with no properties
        table; readers such as assimp expect the scope there
    """

    name: str
    props: list[Prop] = field(default_factory=list)
    children: list[FbxNode] = field(default_factory=list)
    block: bool = False

    @classmethod
    def make(
        cls, name: str, *values: object, children: list[FbxNode] | None = None, block: bool = False
    ) -> FbxNode:
        """A node whose properties are ``values`` wrapped by their natural FBX type."""
        return cls(name, [_as_prop(v) for v in values], list(children or []), block)

    def add(self, name: str, *values: object) -> FbxNode:
        """Append a child node built like :meth:`make` and return it (for chaining grandchildren)."""
        child = FbxNode.make(name, *values)
        self.children.append(child)
        return child

    def find(self, name: str) -> FbxNode | None:
        """The first direct child called ``name``, or ``None``."""
        return next((c for c in self.children if c.name == name), None)

    def find_all(self, name: str) -> list[FbxNode]:
        """Every direct child called ``name``."""
        return [c for c in self.children if c.name == name]

    def values(self) -> list[Any]:
        """The property payloads without their type codes."""
        return [p.value for p in self.props]
