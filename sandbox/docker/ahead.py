"""Which of a plan's requests may go ahead of the one in flight (supervisor protocol 6).

A supervisor of protocol 6 queues a request behind the running one and starts it the moment
that one ends (:meth:`sandbox.docker.channel.Channel.run`'s ``then``), so the host's
turnaround between two steps is not the sandbox's idle time. The driver sends ahead only
what the plan asks for next *whatever* the answer in flight says:

- after the last command, the first test (tests run whatever the commands did), and behind
  it the captures when that test is the only one;
- after the only test, the captures.

Never in the judge's clean room (the deliverables are copied out first). A request goes
ahead only if it needs nothing on its stdin and starts by stopping every process (a bare
first test, the collector): the driver decides that when it builds it. When the request
in flight cannot start, the supervisor skips the ones behind it; the driver's other way
(seeding step by step, say) then asks for them again, and they are sent again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalfleet.sandbox.capture import CaptureBudget, Check
from evalfleet.sandbox.docker.collect import Request
from evalfleet.sandbox.docker.stream import ExecRequest
from evalfleet.sandbox.plan import Plan

#: What may follow a step: the first test, the captures.
TEST, COLLECT = "test", "collect"


@dataclass
class Lookahead:
    """The plan a sandbox is carrying out (``None``: nothing goes ahead), and its capture
    request once built, with the checks and the budget it was built for (its nonce is
    drawn once: the request sent ahead is the one asked for)."""

    plan: Plan | None = None
    collect: tuple[Sequence[Check], int, Request, ExecRequest] | None = None

    def behind(self, step: object, request_of: Callable[[str, Plan], ExecRequest | None]
               ) -> tuple[ExecRequest, ...]:
        """The requests that may go ahead of ``step``'s, in order: each follower's
        (:func:`follows`) as ``request_of`` builds it, up to the first that cannot be
        queued (``None``)."""
        if self.plan is None:
            return ()
        requests = []
        for follower in follows(self.plan, step):
            request = request_of(follower, self.plan)
            if request is None:
                break
            requests.append(request)
        return tuple(requests)

    def captures(self, checks: Sequence[Check], budget: CaptureBudget,
                 build: Callable[[], tuple[Request, ExecRequest]]) -> tuple[Request, ExecRequest]:
        """The capture request for ``checks`` within ``budget``: the one built before for
        them (sent ahead, say) when there is one, else ``build()``'s, kept."""
        built = self.collect
        if built is not None and built[0] is checks and built[1] == budget.remaining:
            return built[2], built[3]
        sent, request = build()
        self.collect = (checks, budget.remaining, sent, request)
        return sent, request


def follows(plan: Plan | None, step: object) -> tuple[str, ...]:
    """What may go ahead of ``step`` (one of ``plan``'s commands or tests), in order."""
    if plan is None or plan.deliverables or not plan.tests:
        return ()
    captures = (COLLECT,) if len(plan.tests) == 1 and plan.checks else ()
    if _is_last(step, plan.commands):
        return (TEST, *captures)
    return captures if step is plan.tests[0] else ()


def _is_last(step: object, steps: Sequence[object]) -> bool:
    """Whether ``step`` is the last of ``steps`` and comes only there."""
    return bool(steps) and steps[-1] is step and sum(each is step for each in steps) == 1
