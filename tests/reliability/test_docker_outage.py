"""The Docker engine becomes unavailable during runs — without touching the real dockerd.

The worker reaches the engine through a unix-socket forwarder owned by the test; cutting
it closes every open connection and refuses new ones, as an engine restart would.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet_support import PrivateFleet, run_request, wait_for

ENGINE = "/var/run/docker.sock"


class SocketProxy:
    """Forwards a unix socket to the Docker engine's until cut; restorable."""

    def __init__(self, path: Path, target: str = ENGINE) -> None:
        self.path, self.target = path, target
        self.lock = threading.Lock()
        self.open: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.stopped = threading.Event()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.path.unlink(missing_ok=True)
        listener.bind(str(self.path))
        listener.listen(64)
        listener.settimeout(0.2)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Close the listener (new connections are refused) and every open connection."""
        listener, self.listener = self.listener, None
        if listener is not None:
            listener.close()
        self.path.unlink(missing_ok=True)
        with self.lock:
            for sock in self.open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.open.clear()

    def close(self) -> None:
        self.stopped.set()
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while listener is self.listener and not self.stopped.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.target)
            with self.lock:
                self.open += [client, engine]
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


@pytest.fixture
def engine_proxy(tmp_path: Path, docker_client: object) -> Iterator[SocketProxy]:
    proxy = SocketProxy(tmp_path / "docker.sock")
    yield proxy
    proxy.close()


def test_engine_outage_is_retried_never_scored_against_the_candidate(
        private_fleet: PrivateFleet, engine_proxy: SocketProxy) -> None:
    """The engine disappears mid-run and for a few seconds: the affected runs end up scored
    on a later delivery (infra errors are retried), never as a candidate failure."""
    node = private_fleet.start("proxied", docker_url=f"unix://{engine_proxy.path}",
                               delivery_cap="6", retry_backoff_s="0.5")
    client = private_fleet.client()
    in_flight = run_request("outage", "sleep 3; echo hi")
    client.submit(in_flight)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": in_flight.run_id}), 30,
             "the run did not start")
    engine_proxy.cut()
    waiting = run_request("outage-queued")
    client.submit(waiting)
    time.sleep(4)
    engine_proxy.restore()

    results = [client.wait(r.run_id, timeout=120) for r in (in_flight, waiting)]

    assert [r.outcome for r in results] == ["scored", "scored"]
    assert [r.scorecard.score for r in results if r.scorecard] == [1000, 1000]
    assert all(r.attempt > 1 for r in results)  # each hit the outage and was retried
    assert node.alive
    for run_id in (in_flight.run_id, waiting.run_id):  # removals failed in the outage: redone
        wait_for(lambda r=run_id: not private_fleet.containers(**{"evalfleet.run_id": r}),
                 30, f"a sandbox of {run_id} was not removed")


def test_engine_gone_for_good_ends_as_infra_error(private_fleet: PrivateFleet,
                                                 engine_proxy: SocketProxy) -> None:
    """An engine that stays away: retried up to the cap, then ``infra_error`` — no
    scorecard, so nothing counts against the candidate."""
    private_fleet.start("proxied", docker_url=f"unix://{engine_proxy.path}",
                        delivery_cap="3")
    client = private_fleet.client()
    engine_proxy.cut()
    request = run_request("engine-gone")
    client.submit(request)

    result = client.wait(request.run_id, timeout=60)

    assert (result.outcome, result.scorecard, result.attempt) == ("infra_error", None, 3)
    assert "SandboxUnavailable" in result.reason
