"""Fewer round trips, same results: seeding rides with the first command, and stop + test
files + the first test are one exec; a candidate who fights the driver gets the step by
step path instead, with the same outcome."""

from __future__ import annotations

import dataclasses

import pytest
from sandbox_support import OpenSandbox, requests_of

from evalfleet.sandbox.capture import CaptureCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan

pytestmark = pytest.mark.integration

TEST = CodeExecution(validator_key="t", target="file:s", target_path="solution.sh",
                     test_command="cat hidden.txt; echo; echo 1 passed")


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_a_trivial_plan_takes_three_round_trips(open_sandbox: OpenSandbox, image: str) -> None:
    """Seed + command, stop + test file + test, stop + capture: three requests in all
    (three supervisor round trips, or three execs for an image without one)."""
    sandbox = open_sandbox(image)
    calls = requests_of(sandbox)
    plan = Plan(files=(SeedFile("solution.sh", "cat solution.sh | wc -l; cat; echo done\n"),),
                commands=(Command("sh solution.sh"),),
                test_files=(SeedFile("hidden.txt", "secret"),), tests=(TEST,),
                checks=(CaptureCheck("s", "solution.sh"),))

    result = plans.run_plan(sandbox, plan)

    assert len(calls) == 3
    assert result.commands[0].exit_code == 0
    assert result.commands[0].stdout.split() == [b"1", b"done"]  # seeded; empty stdin
    assert result.tests[0].result.stdout == b"secret\n1 passed\n"  # no driver line left in it
    assert result.captures[0].content is not None


def test_a_killer_loop_left_running_cannot_spoil_the_tests(open_sandbox: OpenSandbox) -> None:
    """A background ``kill -9 -1`` loop may kill the combined driver; the test then runs
    step by step and reports exactly what it would have."""
    sandbox = open_sandbox("busybox")
    killer = "(while :; do kill -9 -1; done) >/dev/null 2>&1 & echo started"
    plan = Plan(files=(SeedFile("solution.sh", "echo hi"),), commands=(Command(killer),),
                test_files=(SeedFile("hidden.txt", "secret"),), tests=(TEST,),
                checks=(CaptureCheck("s", "solution.sh"),))

    result = plans.run_plan(sandbox, plan)

    assert result.tests[0].result.stdout == b"secret\n1 passed\n"
    assert result.captures[0].content == b"echo hi"


def test_a_command_with_stdin_is_seeded_separately(open_sandbox: OpenSandbox) -> None:
    """A command with its own stdin cannot share the seeding exec: two execs, same result."""
    sandbox = open_sandbox("busybox")
    calls = requests_of(sandbox)

    result = sandbox.write_and_exec([SeedFile("a.txt", "A")],
                                    Command("cat a.txt; cat", stdin=b"B"))

    assert len(calls) == 2
    assert result.stdout == b"AB"


#: What a test sees of its start: its stdin, its HOME and TMPDIR, its directory.
LOOK = ("readlink /proc/self/fd/0; [ -d \"$HOME\" ] && [ -d \"$TMPDIR\" ] && echo room; pwd; "
        "echo '1 passed'")


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_a_first_test_with_nothing_to_write_starts_as_every_later_test(
        open_sandbox: OpenSandbox, image: str) -> None:
    """With no test file to write (protocol 4), the first test is the test's own process,
    no shell before it — and it starts as a later test does (the script's way): stdin
    ``/dev/null``, the room's parts there, in its directory."""
    sandbox = open_sandbox(image)
    assert sandbox.bare_first_test
    look = CodeExecution(validator_key="t", target="file:s", target_path="/tmp/s.sh",
                         test_command=LOOK)  # the test's directory: /tmp (see §7.3)
    calls = requests_of(sandbox)

    result = plans.run_plan(sandbox, Plan(files=(SeedFile("s.sh", ""),), tests=(look, look)))

    first, later = (test.result.stdout for test in result.tests)
    assert first == later == b"/dev/null\nroom\n/tmp\n1 passed\n"
    assert calls[1][:2] == ("sh", "-lc")  # the test itself (calls[0] seeds)
    assert calls[2][:2] == ("sh", "-c")  # a later test starts through JUDGE_TEST


def test_a_first_test_whose_directory_is_missing_fails_as_before(
        open_sandbox: OpenSandbox) -> None:
    """The test's directory (outside the workspace, §7.3) is not there: the test cannot
    start, which is the candidate's failed test, exactly as through the script."""
    look = CodeExecution(validator_key="t", target="file:s", target_path="/gone/s.sh",
                         test_command=LOOK)
    plan = Plan(files=(SeedFile("s.sh", ""),), tests=(look,))
    results = []
    for bare in (True, False):
        sandbox = open_sandbox("busybox")
        sandbox.bare_first_test = bare
        results.append(plans.run_plan(sandbox, plan).tests[0].result)
    bare_result, scripted = (dataclasses.replace(r, duration_s=0.0) for r in results)
    assert bare_result == scripted and "/gone" in (bare_result.error or "")
