"""The judge's room: where a pack's hidden tests run, apart from what the candidate wrote.

Every sandbox mounts :data:`ROOM`, a tmpfs owned by the judge's uid with mode 0700: the
candidate (another uid) can neither read nor write it, before or after it is stopped. The
hidden tests run as the judge with ``HOME`` and ``TMPDIR`` in the room and an environment
built by the fleet (the image's, the profile's, :func:`judge_env`), never inherited.

Two modes, chosen by the pack:

* **clean room** (the pack names its deliverables): after the candidate is stopped, the
  deliverables are copied out of the workspace (regular files only, read-only) into
  :data:`DELIVERABLES`; the pack's probes run the candidate's code *as the candidate*, in
  an environment the submission cannot shape (:func:`probe_env`: no Python user site, a
  ``HOME`` the candidate cannot enter, a ``PATH`` of directories it cannot write), and
  their outputs land in :data:`PROBES`; the test files are written to :data:`TESTS`, the
  tests' working directory, which holds nothing else. Nothing the candidate left can be
  on the tests' ``PATH`` or ``sys.path``, or be read as a configuration file.
* **workspace** (every plain AgentClash pack): the tests run where AgentClash runs them,
  next to the candidate's files, as the judge's uid. A test that imports the candidate's
  code runs the candidate's code in the test's process: its verdict can be forged.

A test with a report (:attr:`~sandbox.execution.CodeExecution.report`) writes it to
``$REPORT`` in :data:`REPORTS`, where only the judge can write; its counts come from there.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult

#: The room's mount point, and its parts.
ROOM = "/judge"
TESTS = f"{ROOM}/tests"
DELIVERABLES = f"{ROOM}/deliverables"
PROBES = f"{ROOM}/probes"
REPORTS = f"{ROOM}/reports"
HOME = f"{ROOM}/home"
TMP = f"{ROOM}/tmp"
PARTS = (TESTS, DELIVERABLES, PROBES, REPORTS, HOME, TMP)
#: Mode of every copied deliverable (files; directories get 0555).
DELIVERABLE_MODE = 0o444


@dataclass(frozen=True)
class Probe:
    """One run of the candidate's code for the judge: ``command`` runs as the candidate
    in the workspace; its stdout, stderr and exit code become files under
    ``$PROBES/<name>/``."""

    name: str
    command: Command


def judge_env(*, clean: bool, report: str | None = None,
              imports: bool = False) -> dict[str, str]:
    """What the fleet adds to a test's environment (on top of the image's and profile's):
    in the clean room, Python's path holds neither the working directory nor a user site,
    and ``$DELIVERABLES`` only when the pack declares that its tests import them."""
    env = {"HOME": HOME, "TMPDIR": TMP, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONNOUSERSITE": "1"}
    if clean:
        env.update(DELIVERABLES=DELIVERABLES, PROBES=PROBES, PYTHONSAFEPATH="1")
    if clean and imports:
        env["PYTHONPATH"] = DELIVERABLES
    if report:
        env["REPORT"] = report
    return env


def probe_env() -> dict[str, str]:
    """What the fleet adds to a probe's environment (over the image's, the profile's and
    the pack's): the candidate's code runs, but nothing else the submission placed runs
    first. Python's user site is off (a ``usercustomize``, ``sitecustomize`` or ``.pth``
    under ``$HOME/.local`` printed the expected answer while the deliverable returned
    nothing: a win, issue 39), and ``HOME`` is in the room, which the candidate cannot
    enter (the image's is the workspace)."""
    return {"HOME": HOME, "PYTHONNOUSERSITE": "1"}


def writable(profile: Profile) -> tuple[str, ...]:
    """The directories the candidate's uid can write in a sandbox of ``profile``: the
    workspace, ``/tmp``, ``/dev/shm`` (the root is read-only)."""
    return (profile.workdir, "/tmp", "/dev/shm")


def trusted_path(path: str, writable: Sequence[str]) -> str:
    """``path`` (a ``PATH`` value) without the entries a candidate could put a program in:
    relative ones (the working directory) and those at or under a directory of
    ``writable``. Order kept; empty when nothing is left."""
    def trusted(entry: str) -> bool:
        clean = posixpath.normpath(entry) if entry else ""
        return clean.startswith("/") and not any(
            clean == top or clean.startswith(top.rstrip("/") + "/") for top in writable)
    return ":".join(entry for entry in path.split(":") if trusted(entry))


def report_path(index: int) -> str:
    """Where the ``index``-th test of a plan writes its report (``$REPORT``)."""
    return f"{REPORTS}/{index}.xml"


def probe_files(probe: Probe, result: ExecResult) -> list[SeedFile]:
    """A probe's outcome as files under the room (paths relative to :data:`ROOM`)."""
    where = f"probes/{probe.name}"
    status = "" if result.exit_code is None else str(result.exit_code)
    return [SeedFile(f"{where}/stdout", result.stdout), SeedFile(f"{where}/stderr", result.stderr),
            SeedFile(f"{where}/exit_code", status),
            SeedFile(f"{where}/timed_out", "1" if result.timed_out else "0")]


def in_room(files: Iterable[SeedFile], part: str) -> list[SeedFile]:
    """``files`` (relative paths) placed under ``part`` of the room, relative to it."""
    prefix = part.removeprefix(ROOM + "/")
    return [SeedFile(f"{prefix}/{f.path.lstrip('/')}", f.content, f.mode) for f in files]
