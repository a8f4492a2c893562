"""A script dimension from a real script run in a real Docker sandbox."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sandbox.command import Command, SeedFile
from sandbox.docker.driver import DockerSandbox
from sandbox.evaluator import EvaluatorRun
from sandbox.plan import Plan
from scoring import evaluate, load_spec
from tasks import recording

SCRIPT = r"""
import json, os
sub = os.environ["SUBMISSION_DIR"]
truth = json.load(open(os.environ["GROUND_TRUTH"]))
answer = open(os.path.join(sub, "answer.txt")).read().strip()
try:
    open(os.path.join(sub, "answer.txt"), "a").write("tampered")
    writable = True
except OSError:
    writable = False
# No address outside the sandbox is ever a target: the proof of "no network" is that
# there is no interface but loopback and no route.
interfaces = sorted(os.listdir("/sys/class/net"))
routes = open("/proc/net/route").read().splitlines()[1:]
network = interfaces != ["lo"] or bool(routes)
print("evaluating")
print(json.dumps({"scores": {"correctness": 1000 if answer == truth["answer"] else 0,
                             "style": 600},
                  "details": {"writable": writable, "uid": os.getuid(), "network": network}}))
"""
SPEC = {
    "name": "claw-it", "version_number": 1, "judge_mode": "deterministic",
    "validators": [{"key": "v", "type": "contains", "target": "final_output",
                    "expected_from": "literal:42"}],
    "scorecard": {"dimensions": [{"key": "correctness", "source": "script"},
                                 {"key": "style", "source": "script"}]},
    "clawdiators": {"evaluator": {"runtime": "python", "script": "x"}},
}


def plan(script: str, **evaluator: Any) -> Plan:
    """Seed answer.txt, let the candidate try to open it up (chmod 666) and plant a peek."""
    return Plan(files=(SeedFile("answer.txt", "42\n"),),
                commands=(Command(argv="chmod 666 answer.txt; ls -a /tmp > peek.txt"),),
                evaluator=EvaluatorRun(runtime="python", script=script,
                                       ground_truth=b'{"answer": "42"}', **evaluator))


def scored(result: Any) -> Any:
    """Score the plan result's evaluator event."""
    recorder = recording.Recorder([], datetime.now(UTC))
    recording.grader_events(recorder, result)
    return evaluate(load_spec(SPEC), recorder.events)


def test_script_dimension_from_a_real_sandbox(open_sandbox: Callable[..., DockerSandbox]
                                              ) -> None:
    """The script reads the submission and ground truth; it cannot write or reach out."""
    result = open_sandbox().run_plan(plan(SCRIPT))
    record = result.evaluator
    assert record is not None and record.exit_code == 0, record
    details = json.loads(record.stdout.strip().splitlines()[-1])["details"]
    assert details == {"writable": False, "uid": 65533, "network": False}
    card = scored(result)
    assert (card.score_breakdown["correctness"].score, card.score_breakdown["style"].score) == (
        1000, 600)


def test_ground_truth_was_not_there_for_the_candidate(
        open_sandbox: Callable[..., DockerSandbox]) -> None:
    """The candidate's listing of /tmp shows no evaluator directory."""
    sandbox = open_sandbox()
    result = sandbox.run_plan(plan(SCRIPT))
    peek = sandbox.read_file("/workspace/peek.txt", 4096)
    assert result.evaluator is not None and b".evaluator" not in (peek.content or b"")


def test_crashing_script_is_an_error_with_the_reason(
        open_sandbox: Callable[..., DockerSandbox]) -> None:
    """A crash gives ``error`` and the last stderr line, never a silent 0."""
    result = open_sandbox().run_plan(plan("print('no scores'); 1/0"))
    card = scored(result)
    assert card.dimensions["correctness"].state == "error"
    assert "ZeroDivisionError" in card.dimensions["correctness"].reason


def test_timeout_and_memory_limits(open_sandbox: Callable[..., DockerSandbox]) -> None:
    """A script past its timeout is killed; one past its memory limit fails."""
    slow = open_sandbox().run_plan(plan("import time; time.sleep(30)", timeout_s=1.0))
    assert slow.evaluator is not None and slow.evaluator.timed_out
    assert scored(slow).dimensions["style"].reason == "Evaluation timed out after 1s"
    hog = open_sandbox().run_plan(plan("x = bytearray(200 * 1024 * 1024); print('ok')",
                                       memory_bytes=64 * 1024 * 1024))
    assert hog.evaluator is not None and "MemoryError" in hog.evaluator.stderr


def test_an_egress_pack_evaluator_still_has_no_network(factory: Any) -> None:
    """A pack with network access: the candidate had an interface, the evaluator has none."""
    import dataclasses
    import uuid

    from sandbox.profile import Hardening, Limits, Profile

    profile = Profile(name="test-egress", image="evalfleet/python:latest",
                      limits=Limits(wall_timeout_s=120),
                      hardening=dataclasses.replace(Hardening(), network_mode="bridge"))
    sandbox = factory.acquire(profile, run_id=f"test-{uuid.uuid4().hex[:12]}")
    try:
        seen = sandbox.exec(Command("ls /sys/class/net")).stdout.split()
        result = sandbox.run_plan(plan(SCRIPT))
    finally:
        sandbox.close()

    assert b"eth0" in seen  # the candidate really had a network
    record = result.evaluator
    assert record is not None and record.exit_code == 0, record
    details = json.loads(record.stdout.strip().splitlines()[-1])["details"]
    assert details["network"] is False
