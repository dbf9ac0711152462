"""``Properties70`` entries: FBX's typed, named object properties.

Each entry is a ``P`` node: name, type name, label, flags, then the value(s).
The flag ``A`` marks a property as animatable, ``A+`` as animatable and
possibly animated (transform channels).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from exporters.fbx.nodes import FbxNode, i32, i64

__all__ = [
    "p_bool",
    "p_double",
    "p_enum",
    "p_int",
    "p_kstring",
    "p_ktime",
    "p_lcl",
    "p_number",
    "p_vector",
    "properties70",
]


def properties70(*entries: FbxNode) -> FbxNode:
    """A ``Properties70`` node holding ``entries``."""
    return FbxNode("Properties70", [], list(entries))


def p_int(name: str, value: int) -> FbxNode:
    return FbxNode.make("P", name, "int", "Integer", "", i32(value))


def p_bool(name: str, value: bool) -> FbxNode:
    return FbxNode.make("P", name, "bool", "", "", i32(1 if value else 0))


def p_enum(name: str, value: int) -> FbxNode:
    return FbxNode.make("P", name, "enum", "", "", i32(value))


def p_double(name: str, value: float) -> FbxNode:
    return FbxNode.make("P", name, "double", "Number", "", float(value))


def p_number(name: str, value: float) -> FbxNode:
    """An animatable number, as the channels of an animation curve node."""
    return FbxNode.make("P", name, "Number", "", "A", float(value))


def p_kstring(name: str, value: str, label: str = "") -> FbxNode:
    return FbxNode.make("P", name, "KString", label, "", value)


def p_ktime(name: str, ticks: int) -> FbxNode:
    return FbxNode.make("P", name, "KTime", "Time", "", i64(ticks))


def p_vector(name: str, type_name: str, label: str, values: Sequence[float]) -> FbxNode:
    return FbxNode.make("P", name, type_name, label, "", *(float(v) for v in values))


def p_lcl(name: str, values: np.ndarray | Sequence[float]) -> FbxNode:
    """``Lcl Translation`` / ``Lcl Rotation`` / ``Lcl Scaling`` with three doubles."""
    return FbxNode.make("P", name, name, "", "A+", *(float(v) for v in values))
