"""Helpers shared by the sandbox's real-Docker tests (fixtures are in conftest.py)."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

from services import TEST_LABEL, image, sweep_label
from services import TEST_LABELS as TEST_LABELS  # the tests here import it from this module

from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.labels import LABEL_RUN, LABEL_WORKER
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.sandbox.profile import Limits, Profile

IMAGES = {"python": image("python"), "busybox": image("busybox")}
WORKER = f"sandbox-tests-{os.getpid()}"

OpenSandbox = Callable[..., DockerSandbox]


def sweep(client: Any, label: str = TEST_LABEL) -> None:
    """Remove every container with ``label`` (what a failed test may leave)."""
    sweep_label(client, label)


def left_over(client: Any, run_id: str, worker: str | None = None) -> list[Any]:
    """Containers of ``run_id`` that this test run made, still on the host.

    A run id such as ``warm`` is shared by every test on the engine, including those of the
    other xdist workers running at the same time: name the ``worker`` (this process's is
    :data:`WORKER`) to count only the containers its factories made.
    """
    labels = [f"{LABEL_RUN}={run_id}", TEST_LABEL]
    return labelled(client, labels + ([f"{LABEL_WORKER}={worker}"] if worker else []))


def wait_for(condition: Callable[[], Any], timeout_s: float = 30.0) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout_s``."""
    give_up = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < give_up, "condition not met in time"
        time.sleep(0.05)


def profile(image: str = "python", runtime: str | None = None, **limits: Any) -> Profile:
    """A default-hardened profile on ``runtime`` with some limits overridden."""
    return Profile(name=f"test-{image}", image=IMAGES[image], runtime=runtime,
                   limits=dataclasses.replace(Limits(wall_timeout_s=120), **limits))


def requests_of(sandbox: DockerSandbox) -> list[Any]:
    """The argv of every request the sandbox sends from now on (the candidate's, the
    judge's and the driver's: all of them go through its conduit)."""
    sent: list[Any] = []
    send = sandbox.conduit.run

    def recording(request: Any, on_limit: Any, then: Any = ()) -> Any:
        sent.append(request.argv)
        return send(request, on_limit, then)

    sandbox.conduit.run = recording  # type: ignore[method-assign]
    return sent


def engine_actions(sandbox: DockerSandbox, since: float) -> list[str]:
    """What the engine did to the sandbox's container since ``since``, in order."""
    events = sandbox.client.events(since=int(since), until=int(time.time()) + 1, decode=True,
                                   filters={"container": sandbox.id})
    try:
        return [event["Action"] for event in events]
    finally:
        events.close()


def hi_pack(slug: str) -> dict[str, Any]:
    """A pack whose candidate must say "hi" and whose hidden test, on the captured
    ``out.txt``, passes: a run that gets that far wins."""
    return {
        "pack": {"slug": slug},
        "version": {
            "sandbox": {},
            "evaluation_spec": {
                "name": slug, "version_number": 1, "judge_mode": "deterministic",
                "post_execution_checks": [{"key": "out", "type": "file_capture",
                                           "path": "out.txt"}],
                "validators": [
                    {"key": "hi", "type": "contains", "target": "final_output",
                     "expected_from": "literal:hi"},
                    {"key": "tests", "type": "code_execution", "target": "file:out",
                     "config": {"test_command": "python3 -c 'print(\"1 passed\")'"}}],
                "scorecard": {"dimensions": ["correctness"]}}},
    }


def evaluated_pack(slug: str, script: str) -> dict[str, Any]:
    """A pack scored by a Python evaluator ``script`` alone (one ``script`` dimension,
    ``correctness``; ground truth ``{"answer": "42"}``)."""
    return {
        "pack": {"slug": slug},
        "version": {"sandbox": {}, "evaluation_spec": {
            "name": slug, "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "said", "type": "contains", "target": "final_output",
                            "expected_from": "literal:"}],
            "scorecard": {"dimensions": [{"key": "correctness", "source": "script"}]},
            "clawdiators": {"evaluator": {"runtime": "python", "script": script,
                                          "ground_truth": {"answer": "42"}}}}},
    }
