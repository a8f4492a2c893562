"""The project's wheel, and clean virtualenvs to install it in (offline where the worker
image's wheels are: scripts/build-worker-image.sh keeps them)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: Third-party wheels of the worker image (scripts/build-worker-image.sh): the install
#: needs no index where they are.
WHEEL_CACHE = Path("/var/cache/evalfleet/worker-wheels")
PACKAGES = ("evalfleet", "scoring", "sandbox", "tasks", "workers")


def build_wheel(out: Path) -> Path:
    """The project's wheel, built from a copy so nothing lands in the tree."""
    src = out / "src"
    for name in PACKAGES:
        shutil.copytree(ROOT / name, src / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--disable-pip-version-check", "-w", str(out), str(src)],
                   check=True, capture_output=True, timeout=300)
    return next(out.glob("evalfleet-*.whl"))


def clean_venv(where: Path, requirement: str) -> Path:
    """A new virtualenv with ``requirement`` (the wheel, perhaps with extras) and its
    dependencies installed, at the versions of constraints.txt; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    source = (["--no-index", "--find-links", str(WHEEL_CACHE)] if WHEEL_CACHE.is_dir()
              else [])
    subprocess.run([str(where / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                    "-c", str(ROOT / "constraints.txt"), *source, requirement],
                   check=True, capture_output=True, timeout=600)
    return where / "bin" / "python"
