"""The fleet end to end: client → Redis → worker processes → Docker sandboxes → scorecards."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.queueing import TASK_NAME, queue_for
from evalfleet.tasks.redis_keys import INTAKE_STREAM, RESULTS_CHANNEL, RESULTS_STREAM, result_key

PACKS = Path(__file__).parents[3] / "examples" / "packs"
EXPECTED = {  # pack → (case, result of the passing submission, result of the failing one)
    "agent-efficiency": (None, "win", "loss"),
    "fizzbuzz-coding": (None, "win", "loss"),
    "invoice-json": ("acme", "win", "loss"),
    "support-reply-hybrid": (None, "win", "loss"),
}


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def request_for(pack: str, submission: str, case: str | None = None, **extra: Any) -> RunRequest:
    """A request for an example pack's example submission."""
    mapping = yaml.safe_load((PACKS / pack / "pack.yaml").read_text())
    return RunRequest(run_id=new_id(pack), pack=mapping, case_key=case,
                      submission=load_submission(PACKS / pack / "submissions" / submission),
                      **extra)


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus exposition (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        match = re.match(rf"^{re.escape(name)}(?:{{(.*)}})? (\S+)$", line)
        if match and ",".join(sorted((match.group(1) or "").split(","))) == wanted:
            return float(match.group(2))
    return 0.0


def fleet_metric(fleet: list[Any], name: str, **labels: str) -> float:
    return sum(metric(node.metrics(), name, **labels) for node in fleet)


@pytest.mark.parametrize("pack", sorted(EXPECTED))
def test_example_pack_runs_end_to_end(pack: str, fleet: Any, client: Any) -> None:
    """A passing and a failing submission of each example pack are scored in sandboxes."""
    case, win, lose = EXPECTED[pack]
    requests = [request_for(pack, "pass", case), request_for(pack, "fail", case)]
    with client.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
        pubsub.subscribe(RESULTS_CHANNEL)
        client.submit_many(requests)
        results = [client.wait(r.run_id, timeout=120) for r in requests]
        announced = _announced(pubsub, {r.run_id for r in requests})

    assert [r.outcome for r in results] == ["scored", "scored"]
    assert [r.scorecard.result for r in results] == [win, lose]
    assert all(r.scorecard.validity != "invalid" for r in results)
    assert announced == {r.run_id for r in requests}
    streamed = _streamed(client, {r.run_id for r in requests})
    assert streamed == {r.run_id: ("scored", str(r.scorecard.score), r.scorecard.result)
                        for r in results}


def _announced(pubsub: Any, wanted: set[str]) -> set[str]:
    seen: set[str] = set()
    deadline = time.monotonic() + 10
    while seen != wanted and time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.5)
        if message and message["data"].decode() in wanted:
            seen.add(message["data"].decode())
    return seen


def _streamed(client: Any, wanted: set[str]) -> dict[str, tuple[str, ...]]:
    """Run id → the summary its stream entry carries (outcome, score, scorecard result)."""
    found: dict[str, tuple[str, ...]] = {}
    for _, fields in client.redis.xrange(RESULTS_STREAM):
        run_id = fields[b"run_id"].decode()
        if run_id in wanted:
            assert run_id not in found, f"{run_id} published twice"
            found[run_id] = tuple(fields[k].decode() for k in (b"outcome", b"score",
                                                                b"scorecard_result"))
    return found


def test_result_carries_the_run_record(fleet: Any, client: Any) -> None:
    """A result has timings per phase, resources, the attempt, the worker and its evidence."""
    request = request_for("fizzbuzz-coding", "pass", metadata={"ticket": 7})
    client.submit(request)
    result = client.wait(request.run_id, timeout=120)

    assert result.metadata == {"ticket": 7}
    assert result.attempt == 1
    assert result.worker in {node.worker_id for node in fleet}
    assert {"queue_wait", "sandbox_acquire", "commands", "code_execution", "scoring",
            "total"} <= set(result.timings_ms)
    assert result.resources["limits"]["memory_bytes"] > 0
    # The fleet's default profile runs on gVisor (the engine has it): no usage figure,
    # since the sandbox's cgroup counts gVisor's kernel too; the reason says so.
    assert result.resources["runtime"] == "runsc"
    assert result.resources["image_id"].startswith("sha256:")
    assert result.resources["usage"] is None
    assert "gVisor" in result.resources["usage_unavailable"]
    types = {e["type"] for e in result.events}
    assert {"grader.verification.code_executed", "grader.verification.file_captured",
            "grader.verification.directory_listed", "system.run.completed"} <= types


def test_invalid_requests_through_the_intake_stream_are_rejected(fleet: Any,
                                                                   client: Any) -> None:
    """A non-Python platform's XADD reaches the fleet; bad requests come back rejected."""
    good = request_for("support-reply-hybrid", "pass")
    bad_id = new_id("bad")
    client.redis.xadd(INTAKE_STREAM, {"request": good.model_dump_json()})
    client.redis.xadd(INTAKE_STREAM, {"request": json.dumps(
        {"run_id": bad_id, "pack": good.pack, "submission": {"files": {"x": 1}}})})

    scored = client.wait(good.run_id, timeout=60)
    rejected = client.wait(bad_id, timeout=60)

    assert scored.outcome == "scored"
    assert rejected.outcome == "rejected"
    assert rejected.errors and rejected.errors[0].field.startswith("request.submission.files.x")
    assert rejected.attempt == 1


def test_a_duplicate_delivery_publishes_once(fleet: Any, client: Any, sender: Any) -> None:
    """The same run delivered twice gets one published result; the second is a duplicate."""
    request = request_for("support-reply-hybrid", "pass")
    before = fleet_metric(fleet, "evalfleet_duplicate_publications_total")
    body = request.model_dump_json()
    sender.send_task(TASK_NAME, args=[body], queue=queue_for("default"))
    first = client.wait(request.run_id, timeout=60)
    sender.send_task(TASK_NAME, args=[body], queue=queue_for("default"))

    _wait_for(lambda: fleet_metric(fleet, "evalfleet_duplicate_publications_total") > before)
    assert first.scorecard is not None
    assert _streamed(client, {request.run_id}) == {
        request.run_id: ("scored", str(first.scorecard.score), first.scorecard.result)}
    assert client.redis.get(result_key(request.run_id)) is not None


def _wait_for(check: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)


def test_a_pipelined_batch_is_all_published(fleet: Any, client: Any) -> None:
    """submit_batch, three round trips of two: every run gets exactly one scorecard."""
    requests = [request_for("support-reply-hybrid", "pass" if i % 2 else "fail")
                for i in range(6)]
    assert client.submit_batch(requests, chunk=2) == [r.run_id for r in requests]

    results = [client.wait(r.run_id, timeout=300) for r in requests]

    assert [r.scorecard.result for r in results] == ["loss", "win"] * 3
    assert len(_streamed(client, {r.run_id for r in requests})) == 6


def test_usage_is_measured_on_runc(start_worker: Any, client: Any) -> None:
    """On a profile pinned to runc the workers (on the host: cgroups visible) report the
    sandbox's peak memory and CPU time."""
    start_worker("runc-usage", queues='["plain"]',
                 profiles=json.dumps({"plain": {"runtime": "runc"}}))
    request = request_for("fizzbuzz-coding", "pass")
    assert isinstance(request.pack, dict)
    request.pack["version"].setdefault("sandbox", {})["profile"] = "plain"
    client.submit(request)
    result = client.wait(request.run_id, timeout=120)
    assert (result.outcome, result.resources["runtime"]) == ("scored", "runc")
    usage = result.resources["usage"]
    assert usage["memory_peak_bytes"] > 1024 * 1024 and usage["cpu_seconds"] > 0
    assert result.resources["usage_unavailable"] == ""


def idle(fleet: Any, timeout_s: float = 30.0) -> None:
    """Wait until no node is executing a run: a result is published before its task ends
    and counts it, so a run the previous test waited for may still be counting."""
    give_up = time.monotonic() + timeout_s
    while fleet_metric(fleet, "evalfleet_worker_runs_active"):
        assert time.monotonic() < give_up, "the fleet never went idle"
        time.sleep(0.05)


def test_metrics_count_exactly_what_happened(fleet: Any, client: Any, sender: Any) -> None:
    """After N runs of known outcomes the scraped counters moved by exactly N."""
    def snapshot() -> dict[str, float]:
        idle(fleet)
        return {
            "scored": fleet_metric(fleet, "evalfleet_runs_total", outcome="scored",
                                   queue="evalfleet.default"),
            "rejected": fleet_metric(fleet, "evalfleet_runs_total", outcome="rejected",
                                     queue="evalfleet.default"),
            "win": fleet_metric(fleet, "evalfleet_results_total", result="win"),
            "loss": fleet_metric(fleet, "evalfleet_results_total", result="loss"),
            "gate_fail": fleet_metric(fleet, "evalfleet_validator_verdicts_total",
                                      validator_type="regex_match", outcome_class="fail"),
        }

    before = snapshot()
    runs = [request_for("support-reply-hybrid", "pass") for _ in range(3)]
    runs += [request_for("support-reply-hybrid", "fail") for _ in range(2)]
    client.submit_many(runs)
    bad_id = new_id("bad")
    sender.send_task(TASK_NAME, args=[json.dumps({"run_id": bad_id})],
                     queue=queue_for("default"))
    for run_id in [r.run_id for r in runs] + [bad_id]:
        client.wait(run_id, timeout=120)
    after = snapshot()

    assert {k: after[k] - before[k] for k in after} == {
        "scored": 5, "rejected": 1, "win": 3, "loss": 2, "gate_fail": 2}
