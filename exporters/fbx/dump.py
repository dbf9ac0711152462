"""Print an FBX file's node tree as indented text: ``python -m exporters.fbx.dump FILE``.

Arrays are summarised (length, first values) so that large files stay readable.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from exporters.fbx.binary import read_fbx
from exporters.fbx.nodes import FbxNode, Prop

__all__ = ["format_tree", "main"]


def _format_prop(prop: Prop, max_items: int) -> str:
    if isinstance(prop.value, np.ndarray):
        head = ", ".join(f"{v:g}" for v in prop.value[:max_items])
        more = ", ..." if prop.value.size > max_items else ""
        return f"{prop.code}[{prop.value.size}]({head}{more})"
    if prop.code == "S":
        return repr(prop.value.replace("\x00\x01", "::"))
    if prop.code == "R":
        return f"R[{len(prop.value)}]"
    return f"{prop.code}:{prop.value}"


def format_tree(nodes: list[FbxNode], *, depth: int = 0, max_depth: int = 99, max_items: int = 6) -> str:
    """Indented text of ``nodes`` and their children down to ``max_depth``."""
    lines = []
    for node in nodes:
        values = ", ".join(_format_prop(p, max_items) for p in node.props)
        lines.append(f"{'  ' * depth}{node.name}: {values}")
        if node.children and depth < max_depth:
            sub = format_tree(node.children, depth=depth + 1, max_depth=max_depth, max_items=max_items)
            lines.append(sub)
    return "\n".join(line for line in lines if line)


def main(argv: list[str] | None = None) -> int:
    """Entry point: dump each file named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--depth", type=int, default=99, help="deepest level to print")
    args = parser.parse_args(argv)
    for name in args.files:
        version, nodes = read_fbx(name)
        print(f"# {name}: FBX {version}")
        print(format_tree(nodes, max_depth=args.depth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
