"""The judge's room on the host side: what leaves the workspace as a deliverable, what a
report proves, and the environment a test gets."""

from __future__ import annotations

import io
import tarfile

from sandbox import room
from sandbox.command import Command
from sandbox.docker.transfer import deliverables
from sandbox.execution import NO_EVIDENCE, report_evidence
from sandbox.results import ExecResult, FileRead


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


def test_deliverables_stop_at_the_cap_and_at_a_cut_stream() -> None:
    data = tar(("a", "x" * 600, tarfile.REGTYPE), ("b", "y" * 600, tarfile.REGTYPE))
    assert [f.path for f in deliverables(data, ["a", "b"], 1000)] == ["a"]
    assert [f.path for f in deliverables(data[:1200], ["a", "b"], 1 << 20)] == ["a"]
    assert deliverables(b"", ["a"], 100) == ()


def test_a_report_proves_its_counts_and_skips_are_no_passes() -> None:
    xml = ('<testsuite tests="3"><testcase name="a"/><testcase name="b"><failure/></testcase>'
           '<testcase name="c"><skipped/></testcase></testsuite>')
    counts, verdicts, why = report_evidence(FileRead(exists=True, size=len(xml),
                                                     content=xml.encode()))
    assert (counts.passed, counts.failed, counts.total, counts.skipped, why) == (1, 1, 3, 1, "")
    assert [v.verdict for v in verdicts] == ["passed", "failed", "skipped"]


def test_no_usable_report_is_one_failed_test() -> None:
    only_skips = b'<testsuite tests="1"><testcase name="a"><skipped/></testcase></testsuite>'
    cases = {
        "no report (missing)": FileRead(exists=False, error="missing"),
        "not JUnit XML": FileRead(exists=True, size=9, content=b"3 passed\n"),
        "no test that ran": FileRead(exists=True, size=len(only_skips), content=only_skips),
        "larger than its cap": FileRead(exists=True, size=10_000, content=b"<testsuite"),
    }
    for expected, report in cases.items():
        counts, _, why = report_evidence(report)
        assert counts == NO_EVIDENCE and expected in why, (expected, why)
    assert report_evidence(None)[0] == NO_EVIDENCE


def test_the_judges_environment() -> None:
    clean = room.judge_env(clean=True, report=room.report_path(2))
    assert clean["HOME"] == room.HOME and clean["TMPDIR"] == room.TMP
    assert clean["REPORT"] == "/judge/reports/2.xml" and clean["PYTHONSAFEPATH"] == "1"
    assert clean["DELIVERABLES"] == room.DELIVERABLES and clean["PROBES"] == room.PROBES
    workspace = room.judge_env(clean=False)
    assert "DELIVERABLES" not in workspace and "REPORT" not in workspace
    assert workspace["PYTHONNOUSERSITE"] == "1"


def test_a_probe_becomes_files_the_tests_read() -> None:
    probe = room.Probe("p1", command=Command("true"))
    files = room.probe_files(probe, ExecResult(exit_code=None, stdout=b"o", timed_out=True))
    assert {f.path: f.data for f in files} == {
        "probes/p1/stdout": b"o", "probes/p1/stderr": b"", "probes/p1/exit_code": b"",
        "probes/p1/timed_out": b"1"}
