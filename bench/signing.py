"""Signing a result (issue 43): what it costs a worker to publish a signed result, and a
verifier to check one.

* **seal** (:meth:`tasks.signatures.Signer.seal`: RFC 8785 text, member digests, Ed25519)
  against the unsigned publication it replaced (``RunResult.to_json``), per result;
* **canonical JSON**: :func:`tasks.canonical.canonical` against the ``rfc8785`` reference
  implementation on the same document;
* **check** (:func:`tasks.signatures.check`) against ``json.loads`` of the same text.

Two results: a sandbox-free run's (about 5 KB, the queue layer's unit of work) and one whose
events carry 1 MiB of output (what a chatty run publishes).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import rfc8785

from bench.common import Report, Row
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.canonical import canonical
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.signatures import Signer, check
from evalfleet.workers.devtools import sandbox_free


def per_call_us(action: Callable[[], object], seconds: float) -> float:
    """Microseconds per call, over at least ``seconds`` (best of three rounds)."""
    rounds = []
    for _ in range(3):
        calls, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds / 3:
            action()
            calls += 1
        rounds.append((time.perf_counter() - started) / calls * 1e6)
    return min(rounds)


def results() -> dict[str, RunResult]:
    """A sandbox-free run's result, and the same with 1 MiB of output in its events."""
    config = PipelineConfig(profiles={"default": ProfileBounds(Profile(name="default",
                                                                       image="fake"))})
    small = run_pipeline(sandbox_free.request("sign"), FakeFactory(), config)
    output = [{"type": "system.output", "payload": {"stdout": "line of output\n" * 4096,
                                                    "seconds": 0.25 * i}}
              for i in range(18)]
    return {"sandbox-free result": small,
            "result with 1 MiB of output": small.model_copy(
                update={"events": [*small.events, *output]})}


def run(report: Report, seconds: float = 1.0) -> None:
    signer = Signer.generate()
    for name, result in results().items():
        measure(report, signer, name, result, seconds)


def measure(report: Report, signer: Signer, name: str, result: RunResult,
            seconds: float) -> None:
    """The three rows of one result."""
    trusted = {signer.key_id: signer.public_key}
    body = signer.seal(result)
    document: Any = json.loads(body)
    size = len(result.to_json().encode())
    report.add(Row(f"seal a {name} ({size / 1024:,.0f} KiB) vs to_json",
                   per_call_us(lambda: signer.seal(result), seconds),
                   per_call_us(result.to_json, seconds), "µs", "", False,
                   note=f"+{len(body.encode()) - size} B signed"))
    ours = per_call_us(lambda: canonical(document), seconds)
    reference = per_call_us(lambda: rfc8785.dumps(document), seconds)
    report.add(Row(f"canonical JSON of a {name} vs rfc8785", ours, reference, "µs",
                   "≤ 1.0", ours <= reference))
    report.add(Row(f"check a {name}'s signature vs json.loads",
                   per_call_us(lambda: check(body, trusted), seconds),
                   per_call_us(lambda: json.loads(body), seconds), "µs", "", False))
