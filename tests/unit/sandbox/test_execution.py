"""The code_execution record (§7.3): workdir rule, event fields, counts, timeouts."""

from __future__ import annotations

import pytest

from sandbox.execution import EVENT_FIELDS, CodeExecution, record, working_directory
from sandbox.profile import Profile
from sandbox.results import ExecResult
from sandbox.testing.fake import FakeSandbox

SPEC = CodeExecution(validator_key="tests", target="file:sol", target_path="/workspace/sol.py",
                     test_command="pytest -q {{ flags }}", timeout_ms=1000, pass_threshold=0.5)


@pytest.mark.parametrize(("path", "workdir"), [
    ("/workspace/sol.py", "/workspace"), ("/workspace/a/b/sol.py", "/workspace"),
    ("sol.py", "/workspace"), ("src/sol.py", "/workspace"), ("/sol.py", "/workspace"),
    ("", "/workspace"), ("/opt/app/sol.py", "/opt/app"), ("/tmp/x", "/tmp"),
    ("/workspace2/x", "/workspace2"), ("../etc/x", "/workspace"),
])
def test_working_directory_rule(path: str, workdir: str) -> None:
    """dirname of the file; ``.``, ``/``, empty or under /workspace ⇒ /workspace."""
    assert working_directory(path, "/workspace") == workdir


def test_event_payload_has_exactly_the_event_fields() -> None:
    """The payload carries the §7.3 fields, no more."""
    result = ExecResult(exit_code=1, stdout=b"1 passed, 1 failed", stderr=b"")
    payload = record(SPEC, "pytest -q", result).to_event_payload()
    assert tuple(payload) == EVENT_FIELDS
    assert payload["passed_tests"] == 1 and payload["total_tests"] == 2
    assert payload["execution_error"] == "" and payload["exit_code"] == 1


def test_timeout_has_no_counts_and_no_exit_code() -> None:
    """A timed-out run records ``timed_out`` and no counts."""
    result = ExecResult(exit_code=137, stdout=b"3 passed", timed_out=True)
    done = record(SPEC, "pytest -q", result)
    assert done.timed_out and done.exit_code is None and done.total_tests is None


def test_start_failure_is_an_execution_error() -> None:
    """A command that could not start gives ``execution_error``."""
    done = record(SPEC, "x", ExecResult(exit_code=None, error="chdir failed"))
    assert done.execution_error == "chdir failed" and done.passed_tests is None


def test_fake_runs_the_rendered_command_with_sh_lc() -> None:
    """The sandbox renders, runs ``sh -lc`` with the timeout in the workdir."""
    sandbox = FakeSandbox(Profile(name="p", image="fake"))
    done = sandbox.code_execution(SPEC, {"flags": "-x"})
    command = sandbox.executed[-1]
    assert command.argv == ("sh", "-lc", "pytest -q -x") and command.timeout_s == 1.0
    assert command.workdir == "/workspace" and done.test_command == "pytest -q -x"
    assert done.exit_code == 127


def test_fake_scripted_result_feeds_counts() -> None:
    """A scripted result for the inner command drives the record."""
    scripted = ExecResult(exit_code=0, stdout=b"4 passed")
    sandbox = FakeSandbox(Profile(name="p", image="fake"), script={"pytest -q -x": scripted})
    assert sandbox.code_execution(SPEC, {"flags": "-x"}).passed_tests == 4


def test_a_tests_output_is_kept_as_head_and_tail() -> None:
    """Counts come from all of it; the record keeps a bounded head and tail."""
    from sandbox.execution import KEPT_OUTPUT_BYTES, kept

    assert kept("short") == "short"
    long = "a" * KEPT_OUTPUT_BYTES + "b" * 100_000 + "3 passed in 1s"
    shown = kept(long)
    assert shown.startswith("a" * KEPT_OUTPUT_BYTES) and shown.endswith("3 passed in 1s")
    assert f"[evalfleet] {len(long) - 2 * KEPT_OUTPUT_BYTES} characters left out" in shown
    assert len(shown) < 2 * KEPT_OUTPUT_BYTES + 100
