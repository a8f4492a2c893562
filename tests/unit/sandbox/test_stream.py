"""Docker's multiplexed exec stream, demultiplexed and capped."""

from __future__ import annotations

import gc
import socket
import struct
import threading
import types
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalfleet.sandbox.docker.lifeline import Lifeline
from evalfleet.sandbox.docker.stream import Capped, ContainerStopped, ExecRequest, _Frames, run_exec


def frame(stream: int, data: bytes) -> bytes:
    return struct.pack(">BxxxI", stream, len(data)) + data


@given(st.lists(st.tuples(st.sampled_from([1, 2]), st.binary(max_size=50)), max_size=20),
       st.integers(min_value=1, max_value=17))
def test_frames_split_anywhere(frames: list[tuple[int, bytes]], step: int) -> None:
    """However the bytes arrive, each stream gets its payloads in order."""
    wire = b"".join(frame(s, d) for s, d in frames)
    streams = {1: Capped(10_000), 2: Capped(10_000)}
    parser = _Frames(streams)
    for start in range(0, len(wire), step):
        parser.feed(wire[start:start + step])
    for number in (1, 2):
        assert bytes(streams[number].data) == b"".join(d for s, d in frames if s == number)


def test_cap_is_reported_once() -> None:
    """The first chunk past the cap reports it; later ones do not; never more than cap."""
    capped = Capped(5)
    assert capped.add(b"abc") is False
    assert capped.add(b"def") is True
    assert capped.add(b"ghi") is False
    assert (bytes(capped.data), capped.truncated) == (b"abcde", True)


def test_seed_records_never_go_through_docker_exec() -> None:
    """Only the supervisor writes seed records; through ``exec`` the request would run the
    command on an unseeded workspace, so it is refused before the engine is asked."""
    request = ExecRequest(argv=("true",), user="1000", workdir="/w", env={}, stdin=b"",
                          timeout_s=1.0, cap=10, seed=b"")
    with pytest.raises(ValueError, match="supervisor"):
        run_exec(None, "container", request, lambda: None)


class QuietExec:
    """An engine whose exec stream stays open and silent, its exec never done (what the
    engine does with an exec whose gVisor sandbox the host killed)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def exec_create(self, *args: Any, **kwargs: Any) -> dict[str, str]:
        return {"Id": "exec"}

    def exec_start(self, exec_id: str, socket: bool) -> Any:
        return types.SimpleNamespace(_sock=self.sock, close=lambda: None)

    def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        return {"Running": True}


def test_an_exec_whose_container_stopped_is_given_up() -> None:
    """Once ``ended`` is set the exec is given up (``ContainerStopped``), not waited for
    until its timeout, and no limit is triggered (nothing is left to stop)."""
    host, peer = socket.socketpair()
    ended, limits = threading.Event(), []
    request = ExecRequest(argv=("sleep", "600"), user="1000", workdir="/w", env={},
                          stdin=b"", timeout_s=60.0, cap=10)
    threading.Timer(0.2, ended.set).start()
    try:
        with pytest.raises(ContainerStopped):
            run_exec(QuietExec(host), "container", request, lambda: limits.append(1),
                     ended=ended)
    finally:
        host.close()
        peer.close()
    assert limits == []


@pytest.mark.parametrize("end", ["the engine ends the stream", "we hang up"])
def test_a_lifeline_knows_when_its_container_stopped(end: str) -> None:
    host, peer = socket.socketpair()
    line = Lifeline(host)
    try:
        assert not line.ended.wait(0.1)
        peer.sendall(b"anything the keep-alive might write is dropped")
        assert not line.ended.wait(0.1)
        if end == "we hang up":
            line.close()
        else:
            peer.close()
        assert line.ended.wait(5)
    finally:
        host.close()
        peer.close()


def test_a_lifeline_nobody_holds_hangs_up() -> None:
    """A lifeline dropped without ``close()`` (a bug on some error path) still hangs up,
    so its keep-alive exits and the container stops by itself: its reader thread holds
    the socket, never the lifeline."""
    host, peer = socket.socketpair()
    line = Lifeline(host)
    ended = line.ended
    del line
    gc.collect()
    try:
        peer.settimeout(5)
        assert peer.recv(1) == b""  # the keep-alive's stdin ends
        assert ended.wait(5)
    finally:
        host.close()
        peer.close()
