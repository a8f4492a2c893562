"""The conformance checks every :class:`~sandbox.base.Sandbox` driver passes: its
primitives, and the evaluation side (:mod:`sandbox.evaluation`) composed from them.

``tests/contract`` runs each check against the in-memory fake and against the Docker
driver (a Debian image and a busybox one). A check is a plain function of a
:class:`Target`; it raises ``AssertionError`` when the driver breaks the contract. The
commands used are plain POSIX ``sh`` that the fake's tiny shell also understands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from evalfleet.sandbox.base import Sandbox, SandboxFactory
from evalfleet.sandbox.capture import CaptureBudget, CaptureCheck, ListingCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.errors import (
    SandboxConfigError,
    SandboxError,
    SandboxUnavailable,
    SeedRefused,
)
from evalfleet.sandbox.evaluation import checks, judge, plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import DirectoryListing, ExecResult, FileCapture
from evalfleet.sandbox.room import Probe
from evalfleet.sandbox.sealed import SealedRun, Sealing

#: A background loop that rewrites ``out.txt`` forever (started with ``sh tamper.sh &``).
#: Replaces out.txt whole (never truncated then written: a reader sees old or new content).
TAMPER = "while :; do echo tampered > .t && mv -f .t out.txt; sleep 0.05; done\n"


@dataclass(frozen=True)
class Target:
    """A driver under test: how to get sandboxes, and the profile to start from."""

    factory: SandboxFactory
    profile: Profile

    @contextmanager
    def sandbox(self, **limits: Any) -> Iterator[Sandbox]:
        """A fresh sandbox (``limits`` override the profile's), closed afterwards."""
        profile = dataclasses.replace(
            self.profile, limits=dataclasses.replace(self.profile.limits, **limits))
        sandbox = self.factory.acquire(profile, run_id="contract")
        try:
            yield sandbox
        finally:
            sandbox.close()


def expect_raises(kind: type[BaseException], action: Callable[[], object]) -> None:
    """Assert that ``action()`` raises ``kind``."""
    try:
        action()
    except kind:
        return
    raise AssertionError(f"expected {kind.__name__}")


def check_exec_output_and_exit_code(target: Target) -> None:
    """stdout, stderr and the exit code come back; a non-zero exit is a result."""
    with target.sandbox() as sandbox:
        result = sandbox.exec(Command("echo out; echo err >&2; exit 3"))
        assert (result.exit_code, result.stdout, result.stderr) == (3, b"out\n", b"err\n")
        assert not result.timed_out and not result.truncated and not result.ok
        assert sandbox.exec(Command(("echo", "a b"))).stdout == b"a b\n"


def check_stdin_reaches_the_command(target: Target) -> None:
    """``stdin`` bytes are the command's standard input."""
    with target.sandbox() as sandbox:
        assert sandbox.exec(Command("cat", stdin=b"payload\x00\xff")).stdout == b"payload\x00\xff"


def check_timeout_is_a_result(target: Target) -> None:
    """A command past its timeout is ended and reported ``timed_out``."""
    with target.sandbox() as sandbox:
        result = sandbox.exec(Command("sleep 30", timeout_s=1))
        assert result.timed_out and not result.ok
        assert sandbox.exec(Command("echo alive")).stdout == b"alive\n"


def check_output_is_capped(target: Target) -> None:
    """Output beyond the cap is cut (never more than the cap kept) and flagged."""
    with target.sandbox() as sandbox:
        result = sandbox.exec(Command("yes", output_cap_bytes=1000, timeout_s=20))
        assert len(result.stdout) == 1000 and result.stdout_truncated and result.truncated
        assert not result.timed_out


def check_missing_workdir_is_a_result(target: Target) -> None:
    """A command whose working directory does not exist reports ``error``."""
    with target.sandbox() as sandbox:
        result = sandbox.exec(Command("true", workdir="/workspace/missing"))
        assert result.error and result.exit_code is None and not result.ok


def check_files_are_written(target: Target) -> None:
    """Seed files land in the workspace, with parents, text or bytes."""
    with target.sandbox() as sandbox:
        sandbox.write_files([SeedFile("a/b/c.txt", "text\n"), SeedFile("/workspace/d", b"\x01")])
        assert sandbox.exec(Command("cat a/b/c.txt /workspace/d")).stdout == b"text\n\x01"


def check_bad_seed_files_are_config_errors(target: Target) -> None:
    """``..``, paths outside the workspace and oversize seeds raise ``SandboxConfigError``."""
    with target.sandbox(seed_bytes=100) as sandbox:
        for path in ("../x", "/etc/x", "a/../../x", ""):
            seed = [SeedFile(path, "")]
            expect_raises(SandboxConfigError, lambda: sandbox.write_files(seed))  # noqa: B023 - run at once
        expect_raises(SandboxConfigError, lambda: sandbox.write_files([SeedFile("f", b"x" * 101)]))
    with target.sandbox(seed_files=3) as sandbox:  # a/b/c and a/d: a, a/b, a/b/c, a/d
        deep = [SeedFile("a/b/c", "1"), SeedFile("a/d", "2")]
        expect_raises(SandboxConfigError, lambda: sandbox.write_files(deep))
        sandbox.write_files([SeedFile("a/b/c", "1")])


def check_files_the_workspace_cannot_hold_are_refused(target: Target) -> None:
    """A name over 255 bytes, and a path that would be both a file and a directory, fail
    in the sandbox: ``SeedRefused`` (the pipeline's pre-check keeps a submission's away).
    ``a/b`` then ``a``: the other order, GNU tar replaces the file ``a`` with the
    directory ``a/b`` needs, and the file is lost without a failure."""
    with target.sandbox() as sandbox:
        for files in ([SeedFile("n" * 256, "x")], [SeedFile("a/b", "x"), SeedFile("a", "y")]):
            expect_raises(SeedRefused, lambda: sandbox.write_files(files))  # noqa: B023 - run at once


def check_capture_reports_size_and_existence(target: Target) -> None:
    """A capture carries ``exists``, the full ``size`` and the content."""
    with target.sandbox() as sandbox:
        sandbox.write_files([SeedFile("out.txt", "hello")])
        budget = CaptureBudget()
        found = checks.capture(sandbox, CaptureCheck("k", "out.txt"), budget)
        assert (found.exists, found.size, found.content, found.truncated) == (
            True, 5, b"hello", False)
        missing = checks.capture(sandbox, CaptureCheck("m", "/workspace/nope"), budget)
        assert not missing.exists and missing.size == 0 and missing.content is None
        assert missing.error is None  # nothing there is no error, read alone or combined
        assert budget.charged == 5


def check_capture_caps(target: Target) -> None:
    """Per-file cap cuts bytes; the run budget counts full sizes; spent budget ⇒ ``""``."""
    with target.sandbox() as sandbox:
        sandbox.write_files([SeedFile("big", b"a" * 3000), SeedFile("next", b"b" * 10)])
        budget = CaptureBudget(total_bytes=3500)
        big = checks.capture(sandbox, CaptureCheck("big", "big", max_size_bytes=1000), budget)
        assert (big.size, big.content, big.truncated) == (3000, b"a" * 1000, True)
        nxt = checks.capture(sandbox, CaptureCheck("next", "next"), budget)
        assert (nxt.content, nxt.truncated) == (b"b" * 10, False)
        spent = checks.capture(sandbox, CaptureCheck("again", "big"), budget)
        assert (spent.exists, spent.size, spent.content, spent.truncated) == (
            True, 3000, b"a" * 490, True)
        empty = checks.capture(sandbox, CaptureCheck("none", "next"), budget)
        assert (empty.content, empty.truncated, empty.size) == (b"", True, 10)


def check_capture_never_follows_links(target: Target) -> None:
    """A capture path that is a symlink is not read; ``..`` paths are refused."""
    with target.sandbox() as sandbox:
        sandbox.exec(Command("ln -s /etc/passwd link"))
        budget = CaptureBudget()
        link = checks.capture(sandbox, CaptureCheck("link", "link"), budget)
        assert not link.exists and link.content is None and link.error
        dotdot = checks.capture(sandbox, CaptureCheck("up", "/workspace/../etc/passwd"), budget)
        assert not dotdot.exists and dotdot.error and budget.charged == 0


def check_listing_entries_and_cap(target: Target) -> None:
    """Listings give ``{path, size, is_dir}`` below the path, capped in entries."""
    with target.sandbox(listing_entries=3) as sandbox:
        sandbox.write_files([SeedFile("d/one", "1"), SeedFile("d/sub/two", "22")])
        listing = checks.list_directory(sandbox, ListingCheck("l", "d"))
        assert listing.truncated is False and listing.max_entries == 3
        assert [(e.path, e.size, e.is_dir) for e in listing.entries] == [
            ("/workspace/d/one", 1, False), ("/workspace/d/sub", 0, True),
            ("/workspace/d/sub/two", 2, False)]
        sandbox.write_files([SeedFile("d/three", "333")])
        capped = checks.list_directory(sandbox, ListingCheck("l", "/workspace/d"))
        assert capped.truncated and len(capped.entries) == 3
        missing = checks.list_directory(sandbox, ListingCheck("m", "nowhere"))
        assert missing.entries == () and missing.error


def check_listing_depth(target: Target) -> None:
    """A listing goes ``tree_depth`` levels down, and says that it left deeper entries
    out: whatever the tree's depth, its work is bounded, and it is never read as whole."""
    with target.sandbox(tree_depth=2) as sandbox:
        sandbox.write_files([SeedFile("d/a/one", "1"), SeedFile("d/a/b/two", "22")])
        listing = checks.list_directory(sandbox, ListingCheck("l", "d"))
        assert [e.path for e in listing.entries] == [
            "/workspace/d/a", "/workspace/d/a/b", "/workspace/d/a/one"]
        assert listing.truncated and listing.error == (
            "entries deeper than 2 levels are not listed")


def check_code_execution_runs_the_test(target: Target) -> None:
    """A test runs ``sh -lc`` in the workspace under its timeout; its run is handed back
    as it happened (counting is not the sandbox's business)."""
    with target.sandbox() as sandbox:
        sandbox.write_files([SeedFile("src/main.py", "x")])
        spec = CodeExecution(validator_key="v", target="file:main", target_path="src/main.py",
                             test_command="cat src/main.py; echo ' 2 passed'", timeout_ms=5000)
        run = judge.code_execution(sandbox, spec)
        assert run.spec == spec and run.report is None
        assert run.result.stdout == b"x 2 passed\n", run.result.stdout  # in the workspace
        assert run.result.exit_code == 0 and not run.result.timed_out and run.result.error is None
        slow = judge.code_execution(sandbox, dataclasses.replace(spec, test_command="sleep 30",
                                                          timeout_ms=500))
        assert slow.result.timed_out


def _eventually(sandbox: Sandbox, command: str, stdout: bytes, tries: int = 200) -> bool:
    """Whether ``command`` prints ``stdout`` within ``tries`` runs, 50 ms apart."""
    return any(sandbox.exec(Command(f"sleep 0.05; {command}")).stdout == stdout
               for _ in range(tries))


def check_stop_candidate_ends_background_processes(target: Target) -> None:
    """A background process of the submission cannot touch test output or captures."""
    with target.sandbox() as sandbox:
        sandbox.write_files([SeedFile("tamper.sh", TAMPER)])
        sandbox.exec(Command("sh tamper.sh >/dev/null 2>&1 &"))
        assert _eventually(sandbox, "cat out.txt", b"tampered\n")  # it outlived its exec
        spec = CodeExecution(validator_key="v", target="file:out", target_path="out.txt",
                             test_command="sleep 0.3; cat out.txt")
        result = plans.run_plan(sandbox, Plan(test_files=(SeedFile("out.txt", "clean\n"),),
                                       tests=(spec,), checks=(CaptureCheck("o", "out.txt"),)))
        assert result.tests[0].result.stdout == b"clean\n"
        assert result.captures[0].content == b"clean\n"


def check_plan_records_every_step(target: Target) -> None:
    """A plan returns one record per step, in order, and its limits."""
    with target.sandbox() as sandbox:
        plan = Plan(files=(SeedFile("in.txt", "seed"),),
                    commands=(Command("cat in.txt > out.txt"), Command("exit 4"),
                              Command("echo never")),
                    checks=(CaptureCheck("out", "out.txt"), ListingCheck("ls", ".")),
                    stop_on_command_failure=True)
        result = plans.run_plan(sandbox, plan)
        assert [c.exit_code for c in result.commands] == [0, 4] and result.commands_skipped == 1
        assert result.captures[0].content == b"seed" and result.limits == sandbox.profile.limits
        assert {e.path for e in result.listings[0].entries} >= {"/workspace/in.txt"}
        assert result.sandbox_id == sandbox.id and not result.deadline_exceeded


def check_plan_checks_match_step_by_step(target: Target) -> None:
    """The plan's checks (one round trip where the driver can) equal check-by-check."""
    asked = (CaptureCheck("a", "a.txt", max_size_bytes=300), CaptureCheck("link", "link"),
             CaptureCheck("gone", "gone"), CaptureCheck("up", "../x"), ListingCheck("d", "d"),
             CaptureCheck("b", "/workspace/d/b.bin"), CaptureCheck("a2", "a.txt"),
             ListingCheck("none", "nowhere"), CaptureCheck("dir", "d"))
    seeds = (SeedFile("a.txt", "é" * 400), SeedFile("d/b.bin", bytes(range(256)) * 4))
    with target.sandbox() as sandbox:
        sandbox.write_files(seeds)
        sandbox.exec(Command("ln -s /etc/passwd link"))
        planned = plans.run_plan(sandbox, Plan(checks=asked, capture_total_bytes=1500)).checks
        budget = CaptureBudget(total_bytes=1500)
        stepped = tuple(checks.one(sandbox, c, budget) for c in asked)
        assert [_comparable(r) for r in planned] == [_comparable(r) for r in stepped], (
            planned, stepped)
        assert [getattr(r, "truncated", None) for r in planned[:2]] == [True, False]
        spent = planned[6]
        assert isinstance(spent, FileCapture) and spent.content == b"" and spent.truncated


def _comparable(result: FileCapture | DirectoryListing) -> tuple[object, ...]:
    """A result with ``error`` reduced to set/unset (drivers word errors differently)."""
    return (*(getattr(result, f.name) for f in dataclasses.fields(result) if f.name != "error"),
            bool(result.error))


#: A JUnit report of one passed and one skipped test (skipped is no pass).
REPORT_XML = ('<testsuite tests="2"><testcase name="a"/>'
              '<testcase name="b"><skipped/></testcase></testsuite>')


def check_clean_room_holds_only_the_packs_files(target: Target) -> None:
    """With deliverables, the tests run as the judge in the room: the copy of the
    deliverables (only them), the probes' outputs (run as the candidate), the test files;
    their working directory is the room's tests."""
    test = CodeExecution(validator_key="v", target="file:s", target_path="sol.txt",
                         test_command="cat /judge/deliverables/sol.txt /judge/probes/p/stdout "
                                      "/judge/probes/p/exit_code; echo; cat t.txt; "
                                      "cat /judge/deliverables/junk.txt; echo 1 passed")
    plan = Plan(files=(SeedFile("sol.txt", "answer"), SeedFile("junk.txt", "junk")),
                commands=(Command("echo done"),), deliverables=("sol.txt",),
                probes=(Probe("p", Command("cat sol.txt; exit 3")),),
                test_files=(SeedFile("t.txt", "pack's test"),), tests=(test,))
    with target.sandbox() as sandbox:
        result = plans.run_plan(sandbox, plan)
    assert result.probes[0].stdout == b"answer" and result.probes[0].exit_code == 3
    run = result.tests[0].result
    assert run.stdout == b"answeranswer3\npack's test1 passed\n", run.stdout
    assert b"junk" not in run.stdout and run.stderr  # not delivered: cat says so


def check_clean_room_captures_what_it_tests(target: Target) -> None:
    """In the clean room the candidate's code runs again (its probes) after the
    deliverables are copied out: the captures are taken before, so that what they show
    is what the tests judged, not what a probe wrote over it."""
    test = CodeExecution(validator_key="v", target="file:s", target_path="sol.txt",
                         test_command="cat /judge/deliverables/sol.txt; echo; echo 1 passed")
    plan = Plan(files=(SeedFile("sol.txt", "hardcoded"),), commands=(Command("echo done"),),
                deliverables=("sol.txt",),
                probes=(Probe("p", Command("echo general > sol.txt")),),
                checks=(CaptureCheck("s", "sol.txt"),), tests=(test,))
    with target.sandbox() as sandbox:
        result = plans.run_plan(sandbox, plan)
    assert result.probes[0].exit_code == 0
    assert result.tests[0].result.stdout == b"hardcoded\n1 passed\n"
    capture = result.captures[0]
    assert capture.exists and capture.content == b"hardcoded", capture


def check_a_test_with_a_report_hands_it_back(target: Target) -> None:
    """A test with a report hands back the report it wrote (read as the judge), and a
    test that wrote none says so (its verdict is then scoring's: no evidence, no pass)."""
    writes = CodeExecution(validator_key="v", target="file:s", target_path="s",
                           test_command=f"echo '{REPORT_XML}' > /judge/reports/0.xml; "
                                        "echo 9 passed", report="junit")
    silent = dataclasses.replace(writes, test_command="echo 9 passed; exit 0")
    with target.sandbox() as sandbox:
        judged = plans.run_plan(sandbox, Plan(tests=(writes,))).tests[0]
    with target.sandbox() as sandbox:
        unproven = plans.run_plan(sandbox, Plan(tests=(silent,))).tests[0]
    assert judged.report is not None and judged.report.exists
    assert judged.report.content == f"{REPORT_XML}\n".encode()
    assert unproven.report is not None and not unproven.report.exists
    assert unproven.result.stdout == b"9 passed\n"


def check_a_sealed_run_writes_its_files_apart_and_runs_there(target: Target) -> None:
    """A driver that offers sealed runs (:mod:`sandbox.sealed`) writes the run's files into
    a fresh directory outside the workspace and runs the command there, leaving the
    candidate's regular files in place; files past ``seed_bytes`` raise
    ``SandboxConfigError``."""
    with target.sandbox(seed_bytes=100) as sandbox:
        if not isinstance(sandbox, Sealing):
            return
        sandbox.write_files([SeedFile("answer.txt", "42\n")])
        run = SealedRun(files=(SeedFile("data.txt", "sealed\n"),), timeout_s=30,
                        argv=lambda directory: ("cat", f"{directory}/data.txt",
                                                f"{sandbox.profile.workdir}/answer.txt"),
                        env=lambda directory: {}, memory_bytes=256 << 20)
        outcome = sandbox.run_sealed(run)
        assert isinstance(outcome, ExecResult) and outcome.ok, outcome
        assert outcome.stdout == b"sealed\n42\n"
        assert not sandbox.read_file(f"{sandbox.profile.workdir}/data.txt", 10).exists
        big = dataclasses.replace(run, files=(SeedFile("data.txt", b"x" * 101),))
        expect_raises(SandboxConfigError, lambda: sandbox.run_sealed(big))


def check_closed_sandbox_is_unavailable(target: Target) -> None:
    """``close`` is idempotent; using a closed sandbox raises ``SandboxUnavailable``."""
    with target.sandbox() as sandbox:
        sandbox.close()
        sandbox.close()
        expect_raises(SandboxUnavailable, lambda: sandbox.exec(Command("true")))
        assert issubclass(SandboxUnavailable, SandboxError)


#: Every check, in the order they run.
CHECKS: tuple[Callable[[Target], None], ...] = (
    check_exec_output_and_exit_code,
    check_stdin_reaches_the_command,
    check_timeout_is_a_result,
    check_output_is_capped,
    check_missing_workdir_is_a_result,
    check_files_are_written,
    check_bad_seed_files_are_config_errors,
    check_files_the_workspace_cannot_hold_are_refused,
    check_capture_reports_size_and_existence,
    check_capture_caps,
    check_capture_never_follows_links,
    check_listing_entries_and_cap,
    check_listing_depth,
    check_code_execution_runs_the_test,
    check_stop_candidate_ends_background_processes,
    check_plan_records_every_step,
    check_plan_checks_match_step_by_step,
    check_clean_room_holds_only_the_packs_files,
    check_clean_room_captures_what_it_tests,
    check_a_test_with_a_report_hands_it_back,
    check_a_sealed_run_writes_its_files_apart_and_runs_there,
    check_closed_sandbox_is_unavailable,
)
