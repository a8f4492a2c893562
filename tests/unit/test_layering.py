"""The four packages of ``evalfleet`` import one way: pyproject.toml's contracts hold and bite.

``[tool.importlinter]`` in pyproject.toml states the layering (``workers → tasks →
scoring | sandbox``; inside tasks, ``delivery → checking → evaluation | platform → the
wire``, the evaluation without Celery, kombu or Redis; inside scoring, ``clawdiators →
run → judges : validators → record → compat``, and outside it only scoring's public face;
scoring imports no Celery, Redis or Docker; sandbox no Celery or Redis, and only its
Docker driver the Docker SDK; the worker process's modules never the test doubles of
``sandbox.testing`` or the ``devtools`` packages). import-linter reads
every import, function-level ones included, without importing anything.

No module imports itself back through others, either: :func:`import_graph` reads every
import statement of every module (at the top, under ``if TYPE_CHECKING:`` and inside
functions alike) and the last test asserts the graph has no cycle.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("evalfleet", "scoring", "sandbox", "tasks", "workers")
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
#: One import per contract, each breaking it: (module file, the line appended to it).
#: A new contract needs its entry here, or the second test fails (one contract kept).
BREAKS = (
    ("scoring/errors.py", "import evalfleet.tasks.messages"),
    ("scoring/errors.py", "import redis"),
    ("sandbox/errors.py", "import celery"),
    ("sandbox/base.py", "import docker"),
    ("sandbox/batching.py", "import evalfleet.sandbox.evaluation.plans"),
    ("scoring/compat/gopath.py", "import evalfleet.scoring.run.engine"),
    ("scoring/run/engine.py", "import evalfleet.scoring.clawdiators.layer"),
    ("scoring/record/events.py", "import evalfleet.scoring.validators.base"),
    ("tasks/messages.py", "import evalfleet.tasks.publish"),
    ("tasks/evaluation/provenance.py", "import kombu"),
    ("tasks/evaluation/refusals.py", "import evalfleet.tasks.checking.report"),
    ("workers/health.py", "import evalfleet.scoring.record.evidence"),
    ("tasks/evaluation/judging/runner.py", "import evalfleet.tasks.devtools.judge_stub"),
)


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on ``root``'s pyproject.toml and packages (``root`` first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", LINT], cwd=root, env=env, text=True,
                          capture_output=True, timeout=120, check=False)


def test_the_packages_keep_their_layering() -> None:
    """Every contract is kept by the code as it is."""
    done = _lint(ROOT)

    assert done.returncode == 0, done.stdout + done.stderr


def test_an_import_against_the_layering_breaks_a_contract(tmp_path: Path) -> None:
    """Given a copy of the packages with one offending import per contract, every contract
    is reported broken and the lint fails."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for module, line in BREAKS:
        with (tmp_path / module).open("a") as file:
            file.write(f"\n{line}\n")

    done = _lint(tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"Contracts: 0 kept, {len(BREAKS)} broken." in done.stdout


def _modules(root: Path) -> dict[str, Path]:
    """Every module of ``evalfleet`` (through its symlinks) by dotted name."""
    found: dict[str, Path] = {}
    for folder, dirs, files in os.walk(root / "evalfleet", followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for file in (Path(folder) / f for f in files if f.endswith(".py")):
            parts = file.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return found


def _imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The dotted names ``path`` (module ``name``) imports, wherever the statement is; a
    relative import is resolved, and ``from package import submodule`` names the
    submodule."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                yield f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module


def _owner(name: str, known: dict[str, Path]) -> str | None:
    """The module of ours that ``name`` is or lies in (None for another library)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the modules of ours it imports, counting every import statement."""
    known = _modules(root)
    graph = {name: {_owner(t, known) for t in _imported(name, path, known)}
             for name, path in known.items()}
    return {name: {t for t in targets if t and t != name} for name, targets in graph.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan,
    iterative): each is a set of modules that import one another, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start not in index:
            _visit(start, graph, index, low, stack, found)
    return found


def _visit(start: str, graph: dict[str, set[str]], index: dict[str, int],
           low: dict[str, int], stack: list[str], found: list[list[str]]) -> None:
    work = [(start, iter(sorted(graph[start])))]
    index[start] = low[start] = len(index)
    stack.append(start)
    while work:
        node, targets = work[-1]
        target = next((t for t in targets if t not in index or t in stack), None)
        if target is not None and target not in index:
            index[target] = low[target] = len(index)
            stack.append(target)
            work.append((target, iter(sorted(graph[target]))))
        elif target is not None:
            low[node] = min(low[node], index[target])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                _pop_component(node, stack, found)


def _pop_component(root: str, stack: list[str], found: list[list[str]]) -> None:
    component = stack[stack.index(root):]
    del stack[stack.index(root):]
    if len(component) > 1:
        found.append(sorted(component))


def test_the_cycle_finder_finds_a_cycle_through_type_checking_and_function_imports(
        tmp_path: Path) -> None:
    """Given three modules importing one another only under ``TYPE_CHECKING``, inside a
    function and through ``from package import submodule``, the finder reports them."""
    package = tmp_path / "evalfleet" / "toy"
    package.mkdir(parents=True)
    for file in ("../__init__.py", "__init__.py", "d.py"):
        (package / file).write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from .b import B\n")
    (package / "b.py").write_text("def f():\n    import evalfleet.toy.c\n")
    (package / "c.py").write_text("from evalfleet.toy import a, d\n")

    found = cycles(import_graph(tmp_path))

    assert found == [["evalfleet.toy.a", "evalfleet.toy.b", "evalfleet.toy.c"]]


def test_no_module_imports_itself_back() -> None:
    """No import cycle among evalfleet's modules, counting imports under ``TYPE_CHECKING``
    and inside functions: each listed group imports one another, directly or not."""
    found = cycles(import_graph(ROOT))

    assert found == []
