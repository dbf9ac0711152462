"""Dependencies flow one way: the engines and the exporters import nothing from the layers above them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

# What sits above the engines and exporters: songs and audio, the pipeline, post-processing,
# metrics, the choreography, the service and the tools built on the engines.
ABOVE = (
    "api",
    "worker",
    "choreo.audio",
    "choreo.choreography",
    "choreo.cli",
    "choreo.enginetools",
    "choreo.generate",
    "choreo.metrics",
    "choreo.pipeline",
    "choreo.postprocess",
    "choreo.service",
)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize(
    ("package", "also_above"), [("engines", ("exporters",)), ("exporters", ("engines",))]
)
def test_lower_layers_import_nothing_above_them(package: str, also_above: tuple[str, ...]) -> None:
    forbidden = ABOVE + also_above
    wrong = {
        f"{path.relative_to(REPO_ROOT)}: {name}"
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        for name in _imports(path)
        if any(name == top or name.startswith(top + ".") for top in forbidden)
    }
    assert not wrong, "imports that run back up:\n" + "\n".join(sorted(wrong))


# Of choreo, the exporters use the floor only: the errors, the atomic file writes and the motion types.
EXPORTERS_USE_OF_CHOREO = ("choreo.errors", "choreo.files", "choreo.motion")


def test_exporters_use_only_the_errors_the_files_and_the_motion_types_of_choreo() -> None:
    wrong = {
        f"{path.relative_to(REPO_ROOT)}: {name}"
        for path in sorted((REPO_ROOT / "exporters").rglob("*.py"))
        for name in _imports(path)
        if (name == "choreo" or name.startswith("choreo."))
        and not any(name == floor or name.startswith(floor + ".") for floor in EXPORTERS_USE_OF_CHOREO)
    }
    assert not wrong, "exporters importing more of choreo than its floor:\n" + "\n".join(sorted(wrong))


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from choreo.audio import analyze_song\n    import worker.tasks\n")
    assert _imports(module) == {"choreo.audio", "worker.tasks"}
