"""Which requests may go ahead of the one in flight (supervisor protocol 6).

A supervisor of protocol 6 queues a request behind the running one and starts it the moment
that one ends (:meth:`sandbox.docker.channel.Channel.run`'s ``then``), so the host's
turnaround between two steps is not the sandbox's idle time. The evaluation side says what
follows a step whatever its answer (:meth:`sandbox.batching.Batching.ahead`: after the
plan's last command, its first test and the reads; after the only test, the reads); the
driver sends those ahead with the step's own request.

A request goes ahead only if it needs nothing on its stdin and starts by stopping every
process (a bare first test, the collector): the driver decides that when it builds it. When
the request in flight cannot start, the supervisor skips the ones behind it; the driver's
other way (seeding step by step, say) then asks for them again, and they are sent again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalfleet.sandbox.batching import Follower, Read
from evalfleet.sandbox.docker.collect import Request
from evalfleet.sandbox.docker.stream import ExecRequest


@dataclass
class Lookahead:
    """The steps announced to follow the next one (taken by the first request that may
    carry them), and the read request once built, with the reads and the total it was
    built for (its nonce is drawn once: the request sent ahead is the one asked for)."""

    followers: tuple[Follower, ...] = ()
    collect: tuple[tuple[Read, ...], int, Request, ExecRequest] | None = None

    def behind(self, request_of: Callable[[Follower], ExecRequest | None]
               ) -> tuple[ExecRequest, ...]:
        """The requests that may go ahead of the one being sent, in order: each announced
        follower's as ``request_of`` builds it, up to the first that cannot be queued
        (``None``). The announcement is spent."""
        followers, self.followers = self.followers, ()
        requests = []
        for follower in followers:
            request = request_of(follower)
            if request is None:
                break
            requests.append(request)
        return tuple(requests)

    def reads(self, reads: Sequence[Read], total_bytes: int,
              build: Callable[[], tuple[Request, ExecRequest]]) -> tuple[Request, ExecRequest]:
        """The read request for ``reads`` under ``total_bytes``: the one built before for
        them (sent ahead, say) when there is one, else ``build()``'s, kept."""
        built = self.collect
        if built is not None and built[0] == tuple(reads) and built[1] == total_bytes:
            return built[2], built[3]
        sent, request = build()
        self.collect = (tuple(reads), total_bytes, sent, request)
        return sent, request
