"""Every product module is ``evalfleet.<package>``; the bare top-level names never load.

The repository keeps ``scoring/``, ``sandbox/``, ``tasks/`` and ``workers/`` at its root, so
a process started there could still import them as top-level packages, and two copies of a
module would mean two validator registries. The test session installs :class:`BareNames`
first thing: an import of a bare name fails at once, naming the import to write instead.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

#: The design's top-level directories, importable only as ``evalfleet.<name>``.
PACKAGES = frozenset({"scoring", "sandbox", "tasks", "workers"})


class BareNames(MetaPathFinder):
    """Refuses a top-level import of one of :data:`PACKAGES`."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        root = fullname.partition(".")[0]
        if path is None and root in PACKAGES:
            raise ImportError(f"import evalfleet.{fullname}, not the top-level {fullname!r}: "
                              "evalfleet installs one namespace (docs/architecture.md)")
        return None


def loaded_bare_names() -> list[str]:
    """The bare top-level modules that were loaded anyway (an empty list when none)."""
    return sorted(name for name in sys.modules if name.partition(".")[0] in PACKAGES)


def install() -> None:
    """Put :class:`BareNames` first on the import path (once per process)."""
    if not any(isinstance(finder, BareNames) for finder in sys.meta_path):
        sys.meta_path.insert(0, BareNames())
