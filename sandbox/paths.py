"""Path rules shared by every driver: no ``..``, no NUL, relative means "in the workspace".

These are checked on the host before any command runs; drivers additionally refuse to
follow links (see ``sandbox.docker.transfer``).
"""

from __future__ import annotations

import posixpath

from evalfleet.sandbox.errors import SandboxConfigError


class PathRejected(SandboxConfigError):
    """A path names something outside the rules (``..``, NUL, empty, outside the workspace)."""


def sandbox_path(path: str, workspace: str) -> str:
    """Resolve a capture or listing path: absolute as given, relative under ``workspace``.

    Raises:
        PathRejected: the path is empty, has a NUL byte or a ``..`` component.
    """
    if not path or "\0" in path:
        raise PathRejected(f"bad path {path!r}")
    if ".." in path.split("/"):
        raise PathRejected(f"path {path!r} has a '..' component")
    joined = path if path.startswith("/") else posixpath.join(workspace, path)
    return posixpath.normpath(joined).replace("//", "/")


def workspace_path(path: str, workspace: str) -> str:
    """Resolve a path that must lie inside the workspace (seed files, workdirs).

    Raises:
        PathRejected: as :func:`sandbox_path`, or the path leaves ``workspace``.
    """
    resolved = sandbox_path(path, workspace)
    if not is_under(resolved, workspace) or resolved == workspace:
        raise PathRejected(f"path {path!r} is not a file inside {workspace}")
    return resolved


def is_under(path: str, directory: str) -> bool:
    """Whether normalized absolute ``path`` is ``directory`` or inside it."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def relative_to(path: str, workspace: str) -> str:
    """``path`` (inside ``workspace``) relative to it, for tar member names."""
    return posixpath.relpath(path, workspace)


def seeded_as(path: str, workspace: str) -> str:
    """A seed file's path as the workspace holds it (``./a//b`` and ``<workspace>/a/b``
    are ``a/b``); ``path`` itself when it breaks the rules (seeding refuses those)."""
    try:
        return relative_to(workspace_path(path, workspace), workspace)
    except PathRejected:
        return path
