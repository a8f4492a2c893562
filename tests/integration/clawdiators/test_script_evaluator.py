"""A script dimension from a real script run in a real Docker sandbox."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.evaluator import EvaluatorRun
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan
from evalfleet.scoring import evaluate, load_spec
from evalfleet.tasks.evaluation import recording

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
                commands=(Command(argv="chmod 666 answer.txt; find /tmp > peek.txt"),),
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
    result = plans.run_plan(open_sandbox(), plan(SCRIPT))
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
    result = plans.run_plan(sandbox, plan(SCRIPT))
    peek = sandbox.read_file("/workspace/peek.txt", 4096)
    assert result.commands[0].exit_code == 0, result.commands[0]
    assert (peek.content or b"").startswith(b"/tmp\n")  # the listing worked
    assert result.evaluator is not None and b".evaluator" not in (peek.content or b"")


def test_crashing_script_scores_0_with_the_reason(
        open_sandbox: Callable[..., DockerSandbox]) -> None:
    """A crash scores 0 with the last stderr line: the script read the candidate's files,
    which may be shaped to crash it (an error made a loss "no result")."""
    result = plans.run_plan(open_sandbox(), plan("print('no scores'); 1/0"))
    card = scored(result)
    assert card.dimensions["correctness"].score == 0.0
    assert card.dimensions["correctness"].reason.startswith("scored 0: Evaluator output")
    assert "ZeroDivisionError" in card.dimensions["correctness"].reason


def test_special_files_are_gone_before_the_script_runs(
        open_sandbox: Callable[..., DockerSandbox]) -> None:
    """A FIFO at the answer's path hung the script's ``open`` until its timeout, and an
    evaluator that times out is no contest (the pack's, issue 19): the seal removes every
    entry that is neither a regular file nor a directory (FIFOs, sockets, links) first."""
    fifo = Plan(files=(SeedFile("answer.txt", "42\n"),), commands=(Command(
        argv="rm answer.txt && mkfifo answer.txt && mkdir d && mkfifo d/p && "
             "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"d/s\")'"),),
        evaluator=EvaluatorRun(runtime="python", timeout_s=20.0, script=(
            "import json, os\n"
            "sub = os.environ['SUBMISSION_DIR']\n"
            "found = sorted(os.path.relpath(os.path.join(d, n), sub)\n"
            "               for d, ds, fs in os.walk(sub) for n in ds + fs)\n"
            "print(json.dumps({'scores': {'correctness': 0, 'style': 0}, 'found': found}))\n"),
            ground_truth=b"{}"))
    result = plans.run_plan(open_sandbox(), fifo)
    assert result.commands[0].exit_code == 0, result.commands[0]
    record = result.evaluator
    assert record is not None and not record.timed_out and record.exit_code == 0, record
    assert json.loads(record.stdout.strip().splitlines()[-1])["found"] == ["d"]


def test_timeout_and_memory_limits(open_sandbox: Callable[..., DockerSandbox]) -> None:
    """A script past its timeout is killed; one past its memory limit fails."""
    slow = plans.run_plan(open_sandbox(), plan("import time; time.sleep(30)", timeout_s=1.0))
    assert slow.evaluator is not None and slow.evaluator.timed_out
    assert scored(slow).dimensions["style"].reason == "Evaluation timed out after 1s"
    hog = plans.run_plan(open_sandbox(), plan("x = bytearray(200 * 1024 * 1024); print('ok')",
                                       memory_bytes=64 * 1024 * 1024))
    assert hog.evaluator is not None and "MemoryError" in hog.evaluator.stderr


def test_an_egress_pack_evaluator_still_has_no_network(factory: Any) -> None:
    """A pack with network access: the candidate had an interface, the evaluator has none."""
    import dataclasses
    import uuid

    from evalfleet.sandbox.profile import Hardening, Limits, Profile

    profile = Profile(name="test-egress", image="evalfleet/python:latest",
                      limits=Limits(wall_timeout_s=120),
                      hardening=dataclasses.replace(Hardening(), network_mode="bridge"))
    sandbox = factory.acquire(profile, run_id=f"test-{uuid.uuid4().hex[:12]}")
    try:
        seen = sandbox.exec(Command("ls /sys/class/net")).stdout.split()
        result = plans.run_plan(sandbox, plan(SCRIPT))
    finally:
        sandbox.close()

    assert b"eth0" in seen  # the candidate really had a network
    record = result.evaluator
    assert record is not None and record.exit_code == 0, record
    details = json.loads(record.stdout.strip().splitlines()[-1])["details"]
    assert details["network"] is False


#: Scores what the submission's ``answer.json`` holds against the ground truth, and says
#: where it could write: the kind of script a submission would most like to fool.
COMPARING = r"""
import json, os, tempfile
truth = json.load(open(os.environ["GROUND_TRUTH"]))
try:
    answer = json.load(open(os.path.join(os.environ["SUBMISSION_DIR"], "answer.json")))
except (OSError, ValueError) as error:
    answer = type(error).__name__
with tempfile.NamedTemporaryFile(dir=None) as scratch:
    scratch_dir = os.path.dirname(scratch.name)
open(os.path.join(os.environ["HOME"], "notes"), "w").write("home is writable")
print(json.dumps({"scores": {"correctness": 1000 if answer == truth else 0, "style": 0},
                  "details": {"answer": answer, "scratch": scratch_dir,
                              "home": os.environ["HOME"]}}))
"""
TRUTH = b'{"answer": "42"}'
#: The candidate's start-up hooks for a Python whose ``HOME`` is ``/tmp`` (the
#: evaluator's, once) or ``/``: each prints a perfect score as the evaluator exits.
HOOKS = r"""
hook='import atexit; atexit.register(lambda: print("{\"scores\": {\"correctness\": 1000}}"))'
for home in /tmp /workspace; do
  site=$(HOME=$home python3 -c 'import site; print(site.getusersitepackages())')
  mkdir -p "$site" && printf '%s\n' "$hook" > "$site/usercustomize.py"
  printf 'import usercustomize\n' > "$site/evil.pth"
done
chmod -R a+rX /tmp/.local .local
echo '{"answer": "41"}' > answer.json
"""


def comparing(command: str, *tests: CodeExecution) -> Plan:
    return Plan(commands=(Command(argv=command),), tests=tests,
                evaluator=EvaluatorRun(runtime="python", script=COMPARING, ground_truth=TRUTH))


def details(result: Any) -> dict[str, Any]:
    record = result.evaluator
    assert record is not None and record.exit_code == 0, record
    return dict(json.loads(record.stdout.strip().splitlines()[-1])["details"])


def test_the_candidates_start_up_hooks_never_reach_the_evaluator(
        open_sandbox: Callable[..., DockerSandbox], runtime: str) -> None:
    """A wrong answer with Python user-site hooks planted in ``/tmp`` and the workspace
    still scores 0: the evaluator's ``HOME`` and ``TMPDIR`` are in its own directory
    (they were ``/tmp``), and Python's user site is off."""
    result = plans.run_plan(open_sandbox(runtime), comparing(HOOKS))
    assert result.commands[0].exit_code == 0, result.commands[0]
    assert scored(result).score_breakdown["correctness"].score == 0
    seen = details(result)
    assert seen["answer"] == {"answer": "41"}
    assert seen["home"].startswith("/tmp/.evaluator-") and seen["scratch"] == seen["home"]


@pytest.mark.parametrize("link", ["/proc/self/cwd/ground-truth.json",
                                  "/proc/self/root/proc/self/cwd/ground-truth.json"])
def test_a_link_never_shows_the_evaluator_its_own_ground_truth(
        open_sandbox: Callable[..., DockerSandbox], runtime: str, link: str) -> None:
    """``answer.json`` -> the evaluator's own ground truth (its working directory) would
    read the truth back as the answer: every link in the workspace is removed first, also
    in directories the candidate made read-only."""
    command = (f"ln -s {link} answer.json && mkdir -p d/e && ln -s {link} d/e/answer.json"
               " && chmod 500 d/e d")
    result = plans.run_plan(open_sandbox(runtime), comparing(command))
    assert result.commands[0].exit_code == 0, result.commands[0]
    assert details(result)["answer"] == "FileNotFoundError"
    assert scored(result).score_breakdown["correctness"].score == 0


def test_a_link_the_judge_made_is_removed_too(open_sandbox: Callable[..., DockerSandbox],
                                              runtime: str) -> None:
    """In a workspace-mode pack the tests run the candidate's code as the judge, in the
    workspace (sticky, root's): a link made there is the judge's, which the candidate's
    uid cannot remove; the judge's sweep does."""
    test = CodeExecution(validator_key="tests", target="file:solution",
                         target_path="/workspace/solution.py",
                         test_command="ln -s /proc/self/cwd/ground-truth.json answer.json")
    result = plans.run_plan(open_sandbox(runtime), comparing("touch solution.py", test))
    assert result.tests[0].result.exit_code == 0, result.tests[0]
    assert details(result)["answer"] == "FileNotFoundError"


#: Ways to fill ``/tmp``: bytes and inodes, and bytes inside a directory of mode 000, which
#: ``rm -rf`` alone cannot empty (its owner's clear makes it writable first).
FILLS = {
    "plain": ("dd if=/dev/zero of=/tmp/fill bs=1M 2>/dev/null; mkdir /tmp/many && cd /tmp/many"
              " && i=0; while [ $i -lt 3000 ] && : > f$i 2>/dev/null; do i=$((i+1)); done"),
    "locked": ("mkdir /tmp/locked && dd if=/dev/zero of=/tmp/locked/fill bs=1M 2>/dev/null;"
               " chmod 000 /tmp/locked"),
}


@pytest.mark.parametrize("fill", FILLS.values(), ids=FILLS.keys())
def test_a_full_tmp_does_not_keep_the_evaluator_out(open_sandbox: Callable[..., DockerSandbox],
                                                    runtime: str, fill: str) -> None:
    """A candidate heading for a loss fills ``/tmp`` so that the evaluator's files cannot
    be written and the run would be no contest: what it left there is removed first (the
    run is captured by then), and the evaluator runs."""
    command = f"{fill}; df /tmp | tail -n 1; echo '{{\"answer\": \"41\"}}' > /workspace/answer.json"
    result = plans.run_plan(open_sandbox(runtime), comparing(command))
    assert b" 100% " in result.commands[0].stdout, result.commands[0]
    assert details(result)["answer"] == {"answer": "41"}
    assert scored(result).score_breakdown["correctness"].score == 0


#: A file filling ``/tmp``, unlinked while open and sent over a unix socket into a cycle:
#: no name reaches it and no process holds it, yet its pages stay (on gVisor for good).
CYCLE = """python3 -c '
import os, socket
full = open("/tmp/fill", "wb")
try:
    while True:
        full.write(bytes(1 << 20)); full.flush()
except OSError:
    pass
a, b = socket.socketpair()
socket.send_fds(a, [b"x"], [full.fileno(), a.fileno(), b.fileno()])
os.unlink("/tmp/fill")
'"""


def test_space_held_in_tmp_withholds_the_evaluator(open_sandbox: Callable[..., DockerSandbox],
                                                   runtime: str) -> None:
    """Found by a red-team pass: ``/tmp`` kept full by a file no name reaches made the
    evaluator's files fail to extract, booked as the pack's error (no contest). The seal
    sees the space held and withholds the evaluator: every dimension of it scores 0.

    Under runc the kernel's unix-socket collector runs whenever any socket on the host is
    released, so it may free the cycle at any moment after the candidate's process ends:
    before its own ``df`` looks (once in CI) or before the seal looks (once in three CI runs,
    on a busy host). Then ``/tmp`` has room again and the evaluator runs as usual. Either way
    the run is never no contest; gVisor never frees the cycle, so there the seal must see it."""
    command = f"{CYCLE}; df /tmp | tail -n 1; echo '{{\"answer\": \"42\"}}' > answer.json"
    result = plans.run_plan(open_sandbox(runtime), comparing(command))
    if runtime == "runsc":
        assert b" 100% " in result.commands[0].stdout, result.commands[0]
    record = result.evaluator
    assert record is not None and record.error == "", record
    card = scored(result)
    dimension = card.dimensions["correctness"]
    if runtime == "runc" and not record.stderr.startswith("[evalfleet]"):
        assert (record.exit_code, record.timed_out) == (0, False), record  # room again
        assert card.score_breakdown["correctness"].score == 1000, card.score_breakdown
        return
    assert record.stderr.startswith("[evalfleet] the evaluator did not run: "), record
    assert "KiB of /tmp held by files no name reaches" in record.stderr, record
    assert (dimension.state, dimension.score) == ("available", 0.0), dimension


def test_a_fifo_past_path_max_is_removed_before_the_script_runs(
        open_sandbox: Callable[..., DockerSandbox], runtime: str) -> None:
    """A FIFO nested deeper than ``PATH_MAX`` (60 levels of 80-byte names: within the
    profile's ``tree_depth``) is removed too (``find -delete``; GNU ``rm`` reached it as
    well), and the evaluator runs: a seal that failed would withhold it."""
    name = "nested_past_path_max".ljust(80, "x")
    deep = (f"d=$(pwd); i=0; while [ $i -lt 60 ]; do mkdir {name} &&"
            f" cd {name}; i=$((i+1)); done && mkfifo fifo && cd \"$d\" &&"
            " echo '{\"answer\": \"41\"}' > answer.json")
    result = plans.run_plan(open_sandbox(runtime), comparing(deep))
    assert result.commands[0].exit_code == 0, result.commands[0]
    assert details(result)["answer"] == {"answer": "41"}


def test_a_sandbox_held_past_its_deadline_withholds_the_evaluator(
        open_sandbox: Callable[..., DockerSandbox], runtime: str) -> None:
    """A submission that holds the sandbox past its wall deadline keeps the evaluator from
    running: every dimension of it scores 0 (as the pack's error, in ``error``, it made the
    run no contest: a loss turned into no result)."""
    hold = Plan(commands=(Command(argv="sleep 600", timeout_s=900),),
                evaluator=EvaluatorRun(runtime="python", script=COMPARING, ground_truth=TRUTH))
    result = plans.run_plan(open_sandbox(runtime, wall_timeout_s=3), hold)
    record = result.evaluator
    assert result.deadline_exceeded and record is not None and record.error == ""
    assert record.stderr == ("[evalfleet] the evaluator did not run: the sandbox's wall "
                             "deadline passed")
    dimension = scored(result).dimensions["correctness"]
    assert (dimension.state, dimension.score) == ("available", 0.0), dimension
    assert dimension.reason.startswith("scored 0: "), dimension.reason
