"""Requests sent ahead (supervisor protocol 6, :meth:`Channel.run`'s ``then``): the
supervisor queues them behind the running command and starts each when the one before it
has ended; answers come in request order; a queued request behind one that could not start
is skipped and runs when asked; a stop aimed at a request that ended spares the one that
started since. The driver sends ahead only what a plan asks for next whatever the answer in
flight says (:mod:`sandbox.docker.ahead`), so a plan's results are the same without it."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest
from sandbox_support import OpenSandbox

from evalfleet.sandbox.capture import CaptureCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker.conduit import internal_request, nothing
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.stream import ExecRequest
from evalfleet.sandbox.errors import SandboxUnavailable
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan

pytestmark = pytest.mark.integration

TEST = CodeExecution(validator_key="t", target="file:s", target_path="solution.sh",
                     test_command="cat solution.sh; echo 1 passed", timeout_ms=20_000)


def queueable(sandbox: DockerSandbox, script: str, timeout_s: float = 30.0) -> ExecRequest:
    """A request that may be queued: as the candidate, stopping first, stdin /dev/null."""
    request = internal_request(sandbox.profile, ("sh", "-c", script), stop_first=True)
    return dataclasses.replace(request, null_stdin=True, timeout_s=timeout_s)


def test_queued_requests_run_once_in_order_each_after_the_one_before(
        open_sandbox: OpenSandbox) -> None:
    """The second starts only when the first has ended (it reads what the first wrote last),
    the third after the second; asked for, each is answered, never sent again."""
    sandbox = open_sandbox("busybox")
    first = queueable(sandbox, "sleep 0.3; echo one > /tmp/log; echo first")
    second = queueable(sandbox, "cat /tmp/log; echo two >> /tmp/log")
    third = queueable(sandbox, "cat /tmp/log")
    assert sandbox.channel is not None

    answers = [sandbox.conduit.run(first, nothing, (second, third))]
    assert sandbox.channel.ahead == 2
    answers += [sandbox.conduit.run(second, nothing), sandbox.conduit.run(third, nothing)]

    assert [a.stdout if a else None for a in answers] == [b"first\n", b"one\n",
                                                         b"one\ntwo\n"]
    assert sandbox.channel.ahead == 0 and sandbox.channel.in_step


def test_a_queued_request_behind_one_that_cannot_start_is_skipped_then_runs_once(
        open_sandbox: OpenSandbox) -> None:
    sandbox = open_sandbox("busybox")
    broken = dataclasses.replace(queueable(sandbox, ""), argv=("/no/such/program",))
    counted = queueable(sandbox, "echo ran >> /tmp/count; cat /tmp/count")

    failed = sandbox.conduit.run(broken, nothing, (counted,))
    later = sandbox.conduit.run(counted, nothing)

    assert failed is not None and failed.start_error
    assert later is not None and later.stdout == b"ran\n"  # skipped, then run once


def test_a_stop_aimed_at_a_request_that_ended_spares_the_one_started_since(
        open_sandbox: OpenSandbox) -> None:
    """A limit's stop can reach the supervisor after its request ended and the next one
    started (that one stopped every process itself): it must not kill the next one."""
    sandbox = open_sandbox("busybox")
    assert sandbox.channel is not None
    quick = queueable(sandbox, "true")
    sleeper = queueable(sandbox, "sleep 1; echo survived")
    last = queueable(sandbox, "echo last")

    sandbox.conduit.run(quick, nothing, (sleeper, last))
    time.sleep(0.2)  # the sleeper is running now
    assert sandbox.channel.stop() == ""  # aimed at `quick`, which ended

    survivor = sandbox.conduit.run(sleeper, nothing)
    assert survivor is not None and (survivor.exit_code, survivor.stdout) == (0, b"survived\n")
    assert sandbox.conduit.run(last, nothing) is not None


def test_a_timeout_stops_its_own_request_and_the_queued_one_still_runs(
        open_sandbox: OpenSandbox) -> None:
    sandbox = open_sandbox("busybox")
    slow = queueable(sandbox, "sleep 30", timeout_s=1.0)
    after = queueable(sandbox, "echo after")

    timed_out = sandbox.conduit.run(slow, sandbox._kill_candidate, (after,))
    answer = sandbox.conduit.run(after, nothing)

    assert timed_out is not None and timed_out.timed_out
    assert answer is not None and (answer.exit_code, answer.stdout) == (0, b"after\n")


def test_requests_sent_ahead_and_never_asked_for_leave_the_channel_out_of_step(
        open_sandbox: OpenSandbox) -> None:
    """Never reset over them (the sandbox is discarded), and never read one's answer as
    another request's."""
    sandbox = open_sandbox("busybox")
    assert sandbox.channel is not None
    sandbox.conduit.run(queueable(sandbox, "true"), nothing, (queueable(sandbox, "true"),))
    assert sandbox.channel.reset() == "1 requests sent ahead were never asked for"
    assert not sandbox.channel.in_step

    other = open_sandbox("busybox")
    other.conduit.run(queueable(other, "true"), nothing, (queueable(other, "echo a"),))
    with pytest.raises(SandboxUnavailable, match="sent ahead ran"):
        other.conduit.run(queueable(other, "echo b"), nothing)


def test_only_a_request_that_stops_first_with_a_null_stdin_may_be_queued(
        open_sandbox: OpenSandbox) -> None:
    sandbox = open_sandbox("busybox")
    fed = dataclasses.replace(queueable(sandbox, "cat"), null_stdin=False, stdin=b"x")
    with pytest.raises(ValueError, match="null stdin"):
        sandbox.conduit.run(queueable(sandbox, "true"), nothing, (fed,))
    answer = sandbox.conduit.run(queueable(sandbox, "echo fine"), nothing)  # nothing was sent
    assert answer is not None and answer.stdout == b"fine\n"


def sent_ahead(sandbox: DockerSandbox) -> list[int]:
    """How many requests each request of the sandbox brings ahead, from now on."""
    counts: list[int] = []
    send = sandbox.conduit.run

    def recording(request: Any, on_limit: Any, then: Any = ()) -> Any:
        counts.append(len(then))
        return send(request, on_limit, then)

    sandbox.conduit.run = recording  # type: ignore[method-assign]
    return counts


def trivial(command: str = "sh solution.sh", timeout_s: float = 20.0,
            setup: tuple[Command, ...] = ()) -> Plan:
    return Plan(files=(SeedFile("solution.sh", "echo hi\n"),),
                commands=(Command(command, timeout_s=timeout_s),), setup_commands=setup,
                tests=(TEST,), checks=(CaptureCheck("s", "solution.sh"),))


def outcome(plan_result: Any) -> tuple[Any, ...]:
    """What a run reports of a plan (its durations and ids aside)."""
    command, test = plan_result.commands[-1], plan_result.tests[0].result
    return (command.exit_code, command.stdout, command.timed_out, command.oom_killed,
            command.error, test.exit_code, test.stdout, plan_result.captures[0].content)


@pytest.mark.parametrize("plan", [
    pytest.param(trivial(), id="trivial"),
    pytest.param(trivial("sleep 30", timeout_s=1.0), id="command-times-out"),
    # a flood that never ends by itself: ``yes | head -c 3000000`` sometimes wrote its 3 MB
    # and exited 0 before the cap's kill (1 MiB) landed, and sometimes was killed (137)
    pytest.param(trivial("yes"), id="output-flood"),
    # killed by the memory limit: the supervisor's answer says so (no request in between).
    # One read of 200 MB into dd's buffer: a shell growing a string from a pipe took longer
    # than the command's 20 s on a loaded gVisor host, and timed out instead.
    pytest.param(trivial("dd if=/dev/zero of=/dev/null bs=200M count=1"), id="out-of-memory"),
    # the seed records find a directory in the way: seeded step by step, the queued test
    # and captures skipped and asked again
    pytest.param(trivial(setup=(Command("mkdir solution.sh"),)), id="seeded-step-by-step"),
])
def test_a_plan_reports_the_same_with_and_without_requests_sent_ahead(
        open_sandbox: OpenSandbox, plan: Plan) -> None:
    limits = {"output_cap_bytes": 1 << 20, "memory_bytes": 64 << 20}
    queued, plain = open_sandbox("busybox", **limits), open_sandbox("busybox", **limits)
    plain.queues = False
    counts = sent_ahead(queued)

    with_queue, without = plans.run_plan(queued, plan), plans.run_plan(plain, plan)

    assert outcome(with_queue) == outcome(without)
    assert counts[len(plan.setup_commands)] == 2  # the test and the captures went ahead
    # every request sent ahead was asked for, unless the sandbox ended (under gVisor the
    # memory limit ends it whole)
    assert queued.channel is not None and (queued.channel.in_step or queued.ended)
