"""Fewer round trips, same results: seeding rides with the first command, and stop + test
files + the first test are one exec; a candidate who fights the driver gets the step by
step path instead, with the same outcome."""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_support import OpenSandbox

from sandbox.capture import CaptureCheck
from sandbox.command import Command, SeedFile
from sandbox.execution import CodeExecution
from sandbox.plan import Plan

pytestmark = pytest.mark.integration

TEST = CodeExecution(validator_key="t", target="file:s", target_path="solution.sh",
                     test_command="cat hidden.txt; echo; echo 1 passed")


def counted(sandbox: Any) -> list[object]:
    """Every request the sandbox makes from now on (candidate's, judge's and driver's: all
    of them go through its conduit)."""
    calls: list[object] = []
    original = sandbox.conduit.run

    def counting(request: Any, on_limit: Any) -> Any:
        calls.append(request.argv)
        return original(request, on_limit)

    sandbox.conduit.run = counting
    return calls


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_a_trivial_plan_takes_three_round_trips(open_sandbox: OpenSandbox, image: str) -> None:
    """Seed + command, stop + test file + test, stop + capture: three requests in all
    (three supervisor round trips, or three execs for an image without one)."""
    sandbox = open_sandbox(image)
    calls = counted(sandbox)
    plan = Plan(files=(SeedFile("solution.sh", "cat solution.sh | wc -l; cat; echo done\n"),),
                commands=(Command("sh solution.sh"),),
                test_files=(SeedFile("hidden.txt", "secret"),), tests=(TEST,),
                checks=(CaptureCheck("s", "solution.sh"),))

    result = sandbox.run_plan(plan)

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

    result = sandbox.run_plan(plan)

    assert result.tests[0].result.stdout == b"secret\n1 passed\n"
    assert result.captures[0].content == b"echo hi"


def test_a_command_with_stdin_is_seeded_separately(open_sandbox: OpenSandbox) -> None:
    """A command with its own stdin cannot share the seeding exec: two execs, same result."""
    sandbox = open_sandbox("busybox")
    calls = counted(sandbox)

    result = sandbox.write_and_exec([SeedFile("a.txt", "A")],
                                    Command("cat a.txt; cat", stdin=b"B"))

    assert len(calls) == 2
    assert result.stdout == b"AB"
