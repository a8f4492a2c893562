"""One namespace: every product module imports as ``evalfleet.…`` and nothing else does."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import namespace_guard
import pytest

import evalfleet

ROOT = Path(__file__).resolve().parents[2]


def all_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(evalfleet.__path__, "evalfleet."))


def test_every_product_module_imports_under_evalfleet_and_no_bare_name_loads() -> None:
    names = all_modules()
    assert {"evalfleet.scoring", "evalfleet.sandbox", "evalfleet.tasks",
            "evalfleet.workers"} <= set(names)
    for name in names:
        if not name.endswith("__main__"):
            importlib.import_module(name)
    assert namespace_guard.loaded_bare_names() == []


@pytest.mark.parametrize("bare", sorted(namespace_guard.PACKAGES))
def test_a_bare_top_level_import_fails_naming_the_namespace(bare: str) -> None:
    with pytest.raises(ImportError, match=f"import evalfleet.{bare}"):
        importlib.import_module(bare)


def test_the_evalfleet_tree_is_the_repository_s_own_directories() -> None:
    for name in namespace_guard.PACKAGES:
        link = ROOT / "evalfleet" / name
        assert link.is_symlink() and link.resolve() == ROOT / name
    assert Path(evalfleet.__file__).resolve() == ROOT / "evalfleet" / "__init__.py"


def test_the_cli_runs_as_a_module_of_the_namespace() -> None:
    done = subprocess.run([sys.executable, "-m", "evalfleet.workers", "--help"], cwd="/",
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "evalfleet" in done.stdout


def test_no_product_module_is_named_like_a_test() -> None:
    """pytest collects ``test_*.py``: a product module so named would be taken for tests."""
    tests_like = [name for name in all_modules()
                  if name.rpartition(".")[2].startswith(("test_", "conftest"))]
    assert tests_like == []
