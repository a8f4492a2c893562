"""Sandbox removal off the critical path: every sandbox is still closed, in order."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

import pytest

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.evaluation.closing import Closer
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

pytestmark = pytest.mark.unit


TESTS_PASS = ExecResult(exit_code=0, stdout=b"1 passed\n")
PACK = {"pack": {"slug": "closing"}, "version": {"evaluation_spec": {
    "name": "closing", "version_number": 1, "judge_mode": "deterministic",
    "post_execution_checks": [{"key": "a", "type": "file_capture", "path": "/workspace/a.txt"}],
    "validators": [{"key": "tests", "type": "code_execution", "target": "file:a",
                    "config": {"test_command": "run-tests 7"}}],
    "scorecard": {"dimensions": ["correctness"]}}}}


def config() -> PipelineConfig:
    return PipelineConfig(profiles={"default": ProfileBounds(Profile(name="default",
                                                                     image="fake"))})


def request() -> dict[str, object]:
    return {"run_id": "run-1", "pack": PACK,
            "submission": {"files": {"a.txt": "42"}, "commands": [{"run": "echo 42"}]}}


class SlowSandbox:
    """Records when it is closed; ``gate`` holds the removal until the test opens it."""

    def __init__(self, name: str, log: list[str], gate: threading.Event) -> None:
        self.id, self.log, self.gate = name, log, gate

    def close(self) -> None:
        self.gate.wait(5)
        self.log.append(self.id)


def test_close_later_returns_before_the_removal_and_keeps_the_order() -> None:
    """Handing a sandbox over does not wait for its removal; removals happen in order."""
    log: list[str] = []
    gate = threading.Event()
    closer = Closer()

    for name in ("a", "b", "c"):
        closer.close_later(SlowSandbox(name, log, gate))  # type: ignore[arg-type]
    assert log == []
    gate.set()
    until(lambda: len(log) == 3)  # before drain, which closes what is left all at once
    closer.drain()

    assert log == ["a", "b", "c"]


def until(condition: Callable[[], bool], within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, "not reached"
        time.sleep(0.005)


def test_drain_removes_the_pending_sandboxes_all_at_once() -> None:
    """At shutdown the queued removals run side by side with the one under way (a gVisor
    sandbox after a fork bomb can take tens of seconds to go): four removals that each
    wait for the other three all finish."""
    log: list[str] = []
    together = threading.Barrier(4, timeout=10)

    class Together(SlowSandbox):
        def close(self) -> None:
            with contextlib.suppress(threading.BrokenBarrierError):
                together.wait()
                self.log.append(self.id)

    closer = Closer(max_pending=4)
    for name in "abcd":
        closer.close_later(Together(name, log, threading.Event()))  # type: ignore[arg-type]
    closer.drain()

    assert sorted(log) == ["a", "b", "c", "d"]


def test_drain_removes_everything_pending_and_later_sandboxes_close_at_once() -> None:
    """Shutdown never skips a removal; after it, close_later closes on the caller."""
    log: list[str] = []
    gate = threading.Event()
    gate.set()
    closer = Closer(max_pending=1)
    closer.close_later(SlowSandbox("a", log, gate))  # type: ignore[arg-type]
    closer.close_later(SlowSandbox("b", log, gate))  # type: ignore[arg-type]

    closer.drain()
    closer.close_later(SlowSandbox("c", log, gate))  # type: ignore[arg-type]

    assert log == ["a", "b", "c"]
    assert closer.pending == 0


def test_a_failing_close_does_not_stop_the_closer() -> None:
    """A close that raises (against its contract) is logged; later sandboxes still close."""
    log: list[str] = []
    gate = threading.Event()
    gate.set()

    class Broken(SlowSandbox):
        def close(self) -> None:
            raise RuntimeError("engine gone")

    closer = Closer()
    closer.close_later(Broken("x", log, gate))  # type: ignore[arg-type]
    closer.close_later(SlowSandbox("y", log, gate))  # type: ignore[arg-type]
    closer.drain()

    assert log == ["y"]


def test_the_pipeline_hands_its_sandbox_to_close_after_the_plan() -> None:
    """run_pipeline gives the used sandbox to ``close`` (the worker's closer) exactly once."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    handed: list[object] = []

    result = run_pipeline(request(), factory, config(), close=handed.append)

    assert result.outcome == "scored"
    assert len(handed) == 1
    assert not getattr(handed[0], "closed")  # noqa: B009 (removal is the closer's job)


def test_the_pipeline_closes_at_once_by_default() -> None:
    """Without a closer (the CLI, tests), the sandbox is removed before scoring returns."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    seen: list[object] = []
    acquire = factory.acquire

    def spy(profile: Profile, *, run_id: str) -> object:
        sandbox = acquire(profile, run_id=run_id)
        seen.append(sandbox)
        return sandbox

    factory.acquire = spy  # type: ignore[method-assign,assignment]
    run_pipeline(request(), factory, config())

    assert [getattr(s, "closed") for s in seen] == [True]  # noqa: B009
