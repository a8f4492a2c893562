"""The judge's room on the host side: what leaves the workspace as a deliverable, what a
report proves, and the environment a test gets."""

from __future__ import annotations

import io
import tarfile
from types import SimpleNamespace

import pytest

from evalfleet.sandbox import room
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.transfer import deliverables, held
from evalfleet.sandbox.evaluation import judge
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.testing.fake import FakeSandbox


def tar(*members: tuple[str, bytes | str, bytes]) -> bytes:
    """A tar of (name, content or link target, type) members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = str(content)
                archive.addfile(info)
            elif kind == tarfile.DIRTYPE:
                archive.addfile(info)
            else:
                data = content if isinstance(content, bytes) else content.encode()
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_only_regular_files_under_a_deliverable_leave_the_workspace() -> None:
    data = tar(("./src", b"", tarfile.DIRTYPE), ("./src/a.py", "A", tarfile.REGTYPE),
               ("./src/link", "/etc/passwd", tarfile.SYMTYPE), ("./sol.py", "S", tarfile.REGTYPE),
               ("./other.py", "O", tarfile.REGTYPE), ("../up.py", "U", tarfile.REGTYPE),
               ("./src/fifo", b"", tarfile.FIFOTYPE))
    found = deliverables(data, ["src", "sol.py"], 1 << 20)
    assert [(f.path, f.data, f.mode) for f in found] == [
        ("src/a.py", b"A", room.DELIVERABLE_MODE), ("sol.py", b"S", room.DELIVERABLE_MODE)]


def test_a_deliverable_the_room_cannot_hold_is_left_behind() -> None:
    """A file nested past PATH_MAX in the room (a tar can carry it; the judge's tar could
    not make it, and the room's write would fail as if the fleet had) is dropped."""
    deep = "sol/" + "/".join(["d" * 200] * 24) + "/f"
    edge = "sol/" + "x" * (4095 - len(room.DELIVERABLES) - 1 - len("sol/"))
    data = tar((deep, "D", tarfile.REGTYPE), (edge, "E", tarfile.REGTYPE),
               (edge + "y", "Y", tarfile.REGTYPE), ("sol/ok", "O", tarfile.REGTYPE))
    found = deliverables(data, ["sol"], 1 << 20)
    assert [f.path for f in found] == [edge, "sol/ok"]


def test_deliverables_stop_at_the_cap_and_at_a_cut_stream() -> None:
    data = tar(("a", "x" * 600, tarfile.REGTYPE), ("b", "y" * 600, tarfile.REGTYPE))
    assert [f.path for f in deliverables(data, ["a", "b"], 5000)] == ["a"]
    assert [f.path for f in deliverables(data[:1200], ["a", "b"], 1 << 20)] == ["a"]
    assert deliverables(b"", ["a"], 100) == ()


def test_deliverables_are_charged_what_the_room_holds_them_in() -> None:
    """Whole pages of the room's tmpfs, at least one per file: found by a red-team pass,
    30,000 one-byte files counted 30 KB against the cap and took 117 MiB in the room,
    whose write then failed as if the fleet had (the run void: no result)."""
    assert [held(n) for n in (0, 1, 4096, 4097)] == [4096, 4096, 4096, 8192]
    many = tar(*((f"sol/f{i}", "x", tarfile.REGTYPE) for i in range(300)))
    assert len(deliverables(many, ["sol"], 100 * 4096)) == 100


def test_the_judges_environment() -> None:
    clean = room.judge_env(clean=True, report=room.report_path(2))
    assert clean["HOME"] == room.HOME and clean["TMPDIR"] == room.TMP
    assert clean["REPORT"] == "/judge/reports/2.xml" and clean["PYTHONSAFEPATH"] == "1"
    assert clean["DELIVERABLES"] == room.DELIVERABLES and clean["PROBES"] == room.PROBES
    assert "PYTHONPATH" not in clean  # the deliverables are data unless declared imported
    imports = room.judge_env(clean=True, imports=True)
    assert imports["PYTHONPATH"] == room.DELIVERABLES and imports["PYTHONSAFEPATH"] == "1"
    workspace = room.judge_env(clean=False, imports=True)
    assert "DELIVERABLES" not in workspace and "REPORT" not in workspace
    assert "PYTHONPATH" not in workspace  # AgentClash's environment, untouched
    assert workspace["PYTHONNOUSERSITE"] == "1"


def test_a_probe_becomes_files_the_tests_read() -> None:
    probe = room.Probe("p1", command=Command("true"))
    files = room.probe_files(probe, ExecResult(exit_code=None, stdout=b"o", timed_out=True))
    assert {f.path: f.data for f in files} == {
        "probes/p1/stdout": b"o", "probes/p1/stderr": b"", "probes/p1/exit_code": b"",
        "probes/p1/timed_out": b"1"}


@pytest.mark.parametrize(("given", "trusted"), [
    ("/usr/local/bin:/usr/bin:/bin", "/usr/local/bin:/usr/bin:/bin"),
    ("/workspace/bin:/usr/bin", "/usr/bin"),
    ("/usr/bin:/workspace:/tmp/x:/dev/shm/y:/bin", "/usr/bin:/bin"),
    ("bin:.::/usr/bin", "/usr/bin"),  # relative entries and the empty one: the cwd
    ("/usr/bin:/workspace/../tmp/x:/workspace-not/bin", "/usr/bin:/workspace-not/bin"),
    ("/workspace/bin", ""),
])
def test_a_trusted_path_keeps_no_directory_the_candidate_writes(given: str,
                                                                trusted: str) -> None:
    """Issue 39: a probe or a clean-room test must not find a program the submission put
    on its ``PATH``: relative entries and those at or under a writable directory go."""
    assert room.trusted_path(given, ("/workspace", "/tmp", "/dev/shm")) == trusted


def test_a_probe_runs_without_the_candidates_start_up_hooks() -> None:
    """Issue 39: with ``HOME`` the workspace and Python's user site on, a
    ``usercustomize`` the submission placed ran first and printed the expected answer.
    The probe's environment turns the user site off and puts ``HOME`` in the room; the
    pack's own variables are kept, the fleet's win."""
    sandbox = FakeSandbox(Profile(name="p", image="i", env={"PATH": "/workspace/bin:/bin"}))
    probe = room.Probe("p", Command("python3 -c 1", env={"HOME": "/workspace", "X": "1"}))
    env = judge.probe_command(sandbox, probe).env
    assert (env["HOME"], env["PYTHONNOUSERSITE"], env["X"]) == (room.HOME, "1", "1")


@pytest.mark.parametrize(("profile_path", "image_path", "trusted"), [
    (None, "/usr/local/bin:/usr/bin", "/usr/local/bin:/usr/bin"),
    ("/workspace/bin:/opt/bin", "/usr/bin", "/opt/bin"),
    (None, None, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    (None, "/workspace/bin", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
])
def test_the_docker_driver_trusts_the_path_it_would_give_less_what_the_candidate_writes(
        profile_path: str | None, image_path: str | None, trusted: str) -> None:
    """The ``PATH`` commands get (the profile's, else the image's, else the engine's
    default), filtered; when nothing is left, the engine's default."""
    profile = Profile(name="p", image="i", env={"PATH": profile_path} if profile_path else {})
    stand_in = SimpleNamespace(profile=profile, conduit=SimpleNamespace(
        base_env={"PATH": image_path} if image_path else {}))
    given = DockerSandbox.command_path.fget(stand_in)  # type: ignore[attr-defined]
    sandbox = SimpleNamespace(profile=profile, command_path=given)
    assert judge.trusted_env(sandbox) == {"PATH": trusted}  # type: ignore[arg-type]
