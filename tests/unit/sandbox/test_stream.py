"""Docker's multiplexed exec stream, demultiplexed and capped."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.docker.stream import Capped, ExecRequest, _Frames, run_exec


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
