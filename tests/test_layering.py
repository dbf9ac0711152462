"""Dependencies flow one way, and what a module pulls in through others counts.

Every package's modules are read for their imports (at the top and inside
functions: a function's import runs when it is called), each module also loads
its parent packages, and the closure of that graph is checked against the
layers below. The floor (the errors, the atomic file writes, the package
root and the numerical routines) and a package's own modules are always allowed.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("choreo", "api", "worker", "engines", "exporters")
FLOOR = ("choreo", "choreo.errors", "choreo.files")
"""Modules every module may load (matched exactly: ``choreo`` is the package root, not all of it)."""
FLOOR_PACKAGES = ("choreo.numeric",)
"""Packages every module may load whole: numerical routines on numpy alone."""

MAY_LOAD: dict[str, tuple[str, ...]] = {
    "choreo.numeric": (),
    # The motion types sit below everything but the errors.
    "choreo.motion": (),
    # The contracts floor: the types and choices that cross a boundary.
    "choreo.contracts": ("choreo.motion", "choreo.models"),
    # What Choreo ships, read from the files alone.
    "choreo.models": (),
    # Engines and exporters know nothing above the contracts, nor each other.
    "engines": ("choreo.motion", "choreo.contracts"),
    "exporters": ("choreo.motion", "choreo.contracts"),
    "choreo.settings": ("choreo.contracts", "choreo.motion"),
    "choreo.audio": ("choreo.contracts", "choreo.motion", "choreo.settings"),
    "choreo.postprocess": ("choreo.motion", "choreo.contracts"),
    # The choreography plans and performs: it never loads the evaluation or the post-processing.
    "choreo.choreography": (
        "choreo.motion",
        "choreo.contracts",
        "choreo.models",
        "choreo.audio",
        "choreo.settings",
        "engines",
    ),
    # Workouts plan on the choreography and screen and measure with the post-processing's limits.
    "choreo.workout": (
        "choreo.motion",
        "choreo.contracts",
        "choreo.models",
        "choreo.audio",
        "choreo.settings",
        "choreo.choreography",
        "choreo.postprocess",
        "choreo.metrics",
        "engines",
    ),
    # What the API and the workers share: records, queues and storage, never a stage's code.
    "choreo.service": ("choreo.contracts", "choreo.motion", "choreo.models"),
    "api": ("choreo.contracts", "choreo.motion", "choreo.models", "choreo.service"),
}
"""What each constrained package may load, besides the floor and itself."""

TOP = ("api", "worker", "choreo.cli")
"""Entry points: nothing else loads them."""


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO_ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(path: Path) -> set[str]:
    """Every absolute import in a file, at the top or inside functions (``from m import n`` as ``m.n``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


@cache
def _graph() -> dict[str, frozenset[str]]:
    """Module -> the project modules it loads directly, its parent packages included."""
    modules = _modules()

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in modules.items():
        direct = {ours(name) for name in _imported(path)}
        parts = module.split(".")
        direct |= {".".join(parts[:i]) for i in range(1, len(parts))}
        graph[module] = frozenset(direct - {None, module})
    return graph


def _loads(module: str) -> set[str]:
    """Every project module ``module`` loads, directly or through others."""
    graph, seen, todo = _graph(), set(), [module]
    while todo:
        for name in graph.get(todo.pop(), ()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _chain(start: str, target: str) -> list[str]:
    """One import path from ``start`` to ``target``, for the failure message."""
    graph, parents, todo = _graph(), {start: ""}, [start]
    while todo:
        current = todo.pop(0)
        if current == target:
            path = [current]
            while parents[path[-1]]:
                path.append(parents[path[-1]])
            return path[::-1]
        for name in sorted(graph.get(current, ())):
            if name not in parents:
                parents[name] = current
                todo.append(name)
    return [start, "?", target]


@pytest.mark.parametrize("package", sorted(MAY_LOAD))
def test_a_package_loads_only_the_layers_below_it(package: str) -> None:
    allowed = (package, *MAY_LOAD[package])
    wrong = {
        f"{module} loads {name}: {' -> '.join(_chain(module, name))}"
        for module in _graph()
        if _within(module, (package,))
        for name in _loads(module)
        if name not in FLOOR and not _within(name, allowed + FLOOR_PACKAGES)
    }
    assert not wrong, "imports that run back up:\n" + "\n".join(sorted(wrong))


def test_no_module_loads_an_entry_point_but_its_own() -> None:
    wrong = {
        f"{module} loads {name}"
        for module in _graph()
        for name in _loads(module)
        for top in TOP
        if _within(name, (top,)) and not _within(module, (top,)) and not _within(module, ("choreo.cli",))
    }
    assert not wrong, "\n".join(sorted(wrong))


def test_the_api_process_loads_no_stage_code() -> None:
    """What ``import api.main`` really loads, in a fresh interpreter (the static graph's check, run)."""
    code = "import sys, api.main; print('\\n'.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    stages = ("choreo.choreography", "choreo.metrics", "choreo.postprocess", "choreo.mocap", "choreo.audio")
    stages += ("choreo.pipeline", "engines", "exporters", "worker")
    assert [m for m in loaded if _within(m, stages)] == []
    assert "api.main" in loaded


def test_the_check_sees_an_import_made_through_another_module(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from choreo.audio import analyze_song\n    import worker.tasks\n")
    assert _imported(module) == {"choreo.audio.analyze_song", "worker.tasks"}
    # engines.batcher loads engines.registry, which loads the backends: the closure holds them all.
    assert {"engines.registry", "engines.onnxruntime_engine"} <= _loads("engines.batcher")
    # and a path is found through the modules in between
    assert _chain("api.main", "choreo.contracts.options")[0] == "api.main"
