"""Render a binary FBX file's node tree as an ASCII FBX 7.x file, for the reader tests.

No tool at hand writes an animated ASCII FBX (Blender writes binary only, and
Assimp's ASCII exporter puts one frame a second), so the tests write the
same node tree both ways: our binary exporter's file, and this text rendering
of what :func:`exporters.fbx.binary.read_fbx` decodes from it. ASCII FBX is
the binary tree as text: ``Name: prop, prop, ... { children }``, arrays as
``*N { a: v,v,... }``, and object names ``Name\\x00\\x01Class`` written ``Class::Name``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from exporters.fbx.binary import read_fbx
from exporters.fbx.nodes import FbxNode, Prop

__all__ = ["write_ascii_twin"]


def _prop(prop: Prop) -> str:
    if prop.code == "S":
        name, sep, cls = str(prop.value).partition("\x00\x01")
        return '"' + (f"{cls}::{name}" if sep else name).replace('"', "&quot;") + '"'
    if prop.code == "C":
        return "T" if prop.value else "F"
    if prop.code in "FD":
        return repr(float(prop.value))
    if prop.code == "R":
        return '""'
    return str(int(prop.value))


def _node(node: FbxNode, depth: int, out: list[str]) -> None:
    pad = "\t" * depth
    arrays = [p for p in node.props if isinstance(p.value, np.ndarray)]
    if arrays:  # an array node holds one array
        values = arrays[0].value
        text = ",".join(repr(float(v)) if arrays[0].code in "fd" else str(int(v)) for v in values)
        out.append(f"{pad}{node.name}: *{values.size} {{\n{pad}\ta: {text}\n{pad}}}")
        return
    head = f"{pad}{node.name}: " + ", ".join(_prop(p) for p in node.props)
    if node.children or node.block or not node.props:
        out.append(head + " {")
        for child in node.children:
            _node(child, depth + 1, out)
        out.append(pad + "}")
    else:
        out.append(head)


def write_ascii_twin(binary: Path, out: Path) -> Path:
    """Write the ASCII twin of the binary FBX ``binary`` to ``out``; returns ``out``."""
    version, nodes = read_fbx(binary)
    lines = [f"; FBX {version // 1000}.{version % 1000 // 100}.0 project file", ""]
    for node in nodes:
        if node.name not in ("FileId", "CreationTime", "Creator"):
            _node(node, 0, lines)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out
