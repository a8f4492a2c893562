"""The demo's closing line: which runtimes isolated the runs, and which runs needed none."""

from __future__ import annotations

from evalfleet.tasks.messages import RunResult
from evalfleet.workers.devtools.demo import runtime_summary


def result(runtime: str | None) -> RunResult:
    resources = {} if runtime is None else {"profile": "default", "runtime": runtime}
    return RunResult(run_id="r", outcome="scored", resources=resources)


def test_runs_under_gvisor_only_say_so() -> None:
    assert runtime_summary([result("runsc"), result("runsc")]) == \
        "sandbox runtime: runsc (gVisor)"


def test_a_run_without_a_sandbox_is_counted_not_listed_as_a_runtime() -> None:
    """A pack that scores only the submitted events has no runtime: not an empty name."""
    assert runtime_summary([result(""), result("runsc"), result("runsc")]) == \
        "sandbox runtime: runsc (gVisor); 1 run needed no sandbox"
    assert runtime_summary([result(""), result(""), result("runc")]) == \
        "sandbox runtime: runc; 2 runs needed no sandbox"


def test_runs_with_nothing_to_show() -> None:
    assert runtime_summary([None, result(None)]) == "sandbox runtime: -"
    assert runtime_summary([result("runc"), result("runsc")]) == "sandbox runtime: runc, runsc"
