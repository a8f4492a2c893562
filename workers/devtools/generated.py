"""Every generated file of the repository, and the one command that writes them all.

    .venv/bin/python -m evalfleet.workers.devtools.generated          # write them
    .venv/bin/python -m evalfleet.workers.devtools.generated --check  # exit 1 if one is stale

Run it from the repository root after changing a source: ``deploy/prometheus/alerts.yml``,
``deploy/grafana/evalfleet.json``, ``EVALFLEET_QUEUES`` or a profile's image key in
``deploy/k8s/base/config.yaml``, ``tasks/queueing.py`` or ``workers/settings.py``. The unit
tests (``tests/unit/workers/test_generated.py``) fail while a committed file differs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from . import manifests, settings_doc

#: Each generated file (relative to the repository root) and the function that writes it.
FILES: dict[Path, Callable[[Path], str]] = {**manifests.FILES,
                                            settings_doc.PATH: settings_doc.settings_doc}
COMMAND = ".venv/bin/python -m evalfleet.workers.devtools.generated"


def stale(root: Path) -> list[Path]:
    """The generated files whose committed text differs from what their sources give."""
    return [path for path, make in FILES.items()
            if not (root / path).is_file() or (root / path).read_text() != make(root)]


def write(root: Path) -> list[Path]:
    """Rewrite the stale files; the paths written."""
    written = stale(root)
    for path in written:
        (root / path).write_text(FILES[path](root))
    return written


def main(argv: list[str] | None = None) -> int:
    """The command: write (or with ``--check`` only list) the stale files; 1 if any with
    ``--check``."""
    args = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    if not (root / manifests.BASE).is_dir():
        print(f"run this from the repository root (no {manifests.BASE} here)", file=sys.stderr)
        return 2
    paths = stale(root) if "--check" in args else write(root)
    for path in paths:
        print(f"{'stale' if '--check' in args else 'wrote'}: {path}")
    return 1 if paths and "--check" in args else 0


if __name__ == "__main__":
    sys.exit(main())
