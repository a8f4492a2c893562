"""The four packages of ``evalfleet`` import one way: pyproject.toml's contracts hold and bite.

``[tool.importlinter]`` in pyproject.toml states the layering (``workers → tasks →
scoring | sandbox``; scoring imports no Celery, Redis or Docker; sandbox no Celery or
Redis, and only its Docker driver the Docker SDK; the worker process's modules never the
test doubles of ``sandbox.testing`` or the ``devtools`` packages). import-linter reads
every import, function-level ones included, without importing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    ("scoring/compat/gopath.py", "import evalfleet.scoring.run.engine"),
    ("scoring/run/engine.py", "import evalfleet.scoring.clawdiators.layer"),
    ("tasks/judging/runner.py", "import evalfleet.tasks.devtools.judge_stub"),
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
