"""The host side of the supervisor protocol, against a scripted peer on a socketpair.

The peer plays Docker's attach stream (8-byte multiplexing headers) around the
supervisor's frames, split at awkward places, so the parsing is tested apart from timing.
The real supervisor is tested in tests/integration/sandbox/test_supervisor.py.
"""

from __future__ import annotations

import contextlib
import gc
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import ClassVar

import pytest

from evalfleet.sandbox.docker.channel import Channel
from evalfleet.sandbox.docker.frames import ChannelClosed, encode_run
from evalfleet.sandbox.docker.stream import ExecRequest


def frame(kind: bytes, payload: bytes = b"") -> bytes:
    return struct.pack(">cI", kind, len(payload)) + payload


def docker(data: bytes, stream: int = 1) -> bytes:
    return struct.pack(">BxxxI", stream, len(data)) + data


def request(**changes: object) -> ExecRequest:
    fields: dict[str, object] = {"argv": ("sh", "-c", "true"), "user": "1000:1000",
                                 "workdir": "/workspace", "env": {"A": "1"}, "stdin": b"",
                                 "timeout_s": 5.0, "cap": 64}
    fields.update(changes)
    return ExecRequest(**fields)  # type: ignore[arg-type]


class Peer:
    """Reads the host's frames; answers each ``E`` or ``K`` with ``answer(frames_so_far)``.

    Runs on its own thread until the host hangs up, it hangs up itself (``hang_up``: right
    after its answer to the first ``E``) or the ``pair`` fixture ends it: the fixture joins
    every peer before it closes the sockets, so no peer ever reads a closed descriptor.
    """

    started: ClassVar[list[Peer]] = []

    def __init__(self, sock: socket.socket, answer: Callable[[list[bytes]], bytes],
                 *, hang_up: bool = False) -> None:
        self.sock, self.answer, self.hang_up = sock, answer, hang_up
        self.seen: list[bytes] = []
        self.thread = threading.Thread(target=self.loop, daemon=True)
        Peer.started.append(self)
        self.thread.start()

    def loop(self) -> None:
        buffer = b""
        try:
            while chunk := self.sock.recv(1 << 16):
                buffer += chunk
                while len(buffer) >= 5:
                    kind, size = struct.unpack(">cI", buffer[:5])
                    if len(buffer) < 5 + size:
                        break
                    self.seen.append(buffer[:5 + size])
                    buffer = buffer[5 + size:]
                    if self.reply(kind):
                        return
        except (BrokenPipeError, ConnectionResetError):
            return  # the host hung up while we answered: a peer just stops then

    def reply(self, kind: bytes) -> bool:
        """Answer one frame (dribbled out in 3-byte pieces); ``True`` once hung up."""
        answer = self.answer(self.seen) if kind in (b"E", b"K") else b""
        for i in range(0, len(answer), 3):
            self.sock.sendall(answer[i:i + 3])
        if self.hang_up and kind == b"E":
            self.sock.shutdown(socket.SHUT_RDWR)
            return True
        return False


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    host, peer = socket.socketpair()
    yield host, peer
    with contextlib.suppress(OSError):
        peer.shutdown(socket.SHUT_RDWR)  # wakes a peer blocked in recv
    for started in Peer.started:
        started.thread.join(timeout=5)
        assert not started.thread.is_alive(), "a test peer did not stop"
    Peer.started.clear()
    host.close()
    peer.close()


def test_encode_run_puts_flags_ids_workdir_env_then_argv() -> None:
    payload = encode_run(request(stop_first=True, argv=("echo", "a b"), user="65532:65531"))
    head = b"\x01" + (65532).to_bytes(4, "big") + (65531).to_bytes(4, "big")
    assert payload == head + b"/workspace\0A=1\0\0echo\0a b\0"


def test_encode_run_puts_seed_records_between_the_head_and_the_workdir() -> None:
    """Flag bit 2 and the records' length after the ids (protocol 5); their stdin is none."""
    payload = encode_run(request(seed=b"F\0\0\x01\xa4\0\0\0\x01a\0x", null_stdin=True))
    assert payload[:1] == b"\x06"
    assert payload[9:] == (12).to_bytes(4, "big") + b"F\0\0\x01\xa4\0\0\0\x01a\0x" \
        + b"/workspace\0A=1\0\0sh\0-c\0true\0"


def test_encode_run_takes_a_bare_uid_as_its_own_gid() -> None:
    assert encode_run(request(user="1000"))[1:9] == (1000).to_bytes(4, "big") * 2


def test_a_command_round_trip(pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    answer = docker(frame(b"o", b"hi\n") + frame(b"e", b"warn")) + docker(b"noise", 2) \
        + docker(frame(b"x", b"3"))
    Peer(peer, lambda seen: answer if seen[-1][:1] == b"E" else b"")
    raw = Channel(host).run(request(stdin=b"input"), lambda: None)
    assert (raw.exit_code, raw.stdout, raw.stderr, raw.timed_out) == (3, b"hi\n", b"warn", False)


def test_the_stdin_goes_in_frames_before_its_end(pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    fake = Peer(peer, lambda seen: docker(frame(b"x", b"0")) if seen[-1][:1] == b"E" else b"")
    Channel(host).run(request(stdin=b"abc"), lambda: None)
    assert [f[:1] for f in fake.seen] == [b"R", b"I", b"E"]
    assert fake.seen[1] == frame(b"I", b"abc")


def test_a_start_failure_is_reported(pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    Peer(peer, lambda seen: docker(frame(b"f", b'exec: "x": No such file or directory')))
    raw = Channel(host).run(request(), lambda: None)
    assert raw.exit_code is None and raw.start_error == 'exec: "x": No such file or directory'


def test_output_past_the_cap_calls_on_limit_once(pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    Peer(peer, lambda seen: docker(frame(b"o", b"a" * 100) + frame(b"o", b"b" * 100)
                                   + frame(b"x", b"137")))
    calls: list[int] = []
    raw = Channel(host).run(request(cap=64), lambda: calls.append(1))
    assert (raw.stdout, raw.stdout_truncated, raw.timed_out, calls) == (b"a" * 64, True, False, [1])


def test_the_timeout_calls_on_limit_and_waits_for_the_exit(
        pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    channel = Channel(host)
    Peer(peer, lambda seen: docker(frame(b"k", b"0") + frame(b"x", b"137"))
         if seen[-1][:1] == b"K" else b"")
    answers: list[str] = []
    raw = channel.run(request(timeout_s=0.2), lambda: answers.append(channel.stop()))
    assert (raw.exit_code, raw.timed_out, answers) == (137, True, [""])


def test_stop_reports_processes_left(pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    Peer(peer, lambda seen: docker(frame(b"k", b"1 processes left after 2000 kill passes")))
    assert Channel(host).stop() == "processes left after 2000 kill passes"


def test_a_vanished_supervisor_is_channel_closed(
        pair: tuple[socket.socket, socket.socket]) -> None:
    host, peer = pair
    Peer(peer, lambda seen: docker(frame(b"o", b"partial")), hang_up=True)
    channel = Channel(host)
    with pytest.raises(ChannelClosed):
        channel.run(request(), lambda: None)
    with pytest.raises(ChannelClosed):
        channel.stop()


def test_a_channel_nobody_holds_hangs_up(pair: tuple[socket.socket, socket.socket]) -> None:
    """A channel dropped without ``close()`` (a bug on some error path) still hangs up, so
    its supervisor exits and the container stops by itself: the reader thread holds the
    socket, never the channel."""
    host, peer = pair
    channel = Channel(host)
    reader = channel._reader
    del channel
    gc.collect()
    peer.settimeout(5)
    assert peer.recv(1) == b""  # the supervisor's stdin ends
    reader.join(5)
    assert not reader.is_alive()
