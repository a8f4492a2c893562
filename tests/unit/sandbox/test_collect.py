"""The one-exec collect stream: framing, the reads' total, and refusal of anything out of
step."""

from __future__ import annotations

import pytest

from evalfleet.sandbox.batching import ListDir, ReadFile
from evalfleet.sandbox.docker import collect, scripts
from evalfleet.sandbox.docker.stream import RawExec
from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.results import FileRead, Listing

MiB = 1024 * 1024
READS = (ReadFile("/workspace/a.txt", 4), ListDir("/workspace/d"),
         ReadFile("/workspace/link", MiB), ReadFile("/workspace/b", MiB))
#: A listing cap of ten entries.
TEN = Limits(listing_entries=10)


def stream(nonce: str, *parts: bytes) -> bytes:
    return b"".join(part.replace(b"@N", b"@" + nonce.encode()) for part in parts)


def test_request_arguments() -> None:
    """The total, the listing cap, then each read's kind, path and limit."""
    sent = collect.request(READS, 100, TEN)
    assert sent.argv[1:] == ("100", "11", "F", "/workspace/a.txt", "4", "L", "/workspace/d",
                             "65:8193", "F", "/workspace/link", "1048576", "F", "/workspace/b",
                             "1048576")
    assert len(sent.nonce) == 32


def test_the_collector_takes_file_reads_and_the_script_anything_with_a_listing() -> None:
    """A protocol-4 supervisor collects when every read is a file's; a listing, or an image
    without one, takes the script."""
    files = collect.request([ReadFile("/w/a.txt", MiB)], 1000, Limits(listing_entries=5))
    listed = collect.request([ReadFile("/w/a.txt", MiB), ListDir("/w")], 1000,
                             Limits(listing_entries=5))
    assert collect.command(files, "/sv") == ("/sv", "--collect", *files.argv)
    assert collect.command(listed, "/sv")[:3] == ("sh", "-c", scripts.COLLECT)
    assert collect.command(files, None)[:3] == ("sh", "-c", scripts.COLLECT)


def test_parse_applies_the_total() -> None:
    """Contents, listings and statuses come back in order; a file's limit is the least of
    its own and what the full sizes before it left of the total."""
    sent = collect.request(READS, 100, TEN)
    data = stream(sent.nonce, b"@N 0 file 10\nabcd", b"@N 1 list\n3|regular file|./x\n",
                  b"@N 1 end\n", b"@N 2 link\n", b"@N 3 file 95\n", b"z" * 90)
    a, listing, link, b = collect.parse(data, READS, sent, 100, TEN)
    assert a == FileRead(True, size=10, content=b"abcd")
    assert isinstance(listing, Listing) and listing.entries[0].path == "/workspace/d/x"
    assert isinstance(link, FileRead) and not link.exists and "link" in (link.error or "")
    assert b == FileRead(True, size=95, content=b"z" * 90)


def test_a_listing_in_the_stream_says_what_it_dropped() -> None:
    """A line over 8 KiB in the stream is dropped and said (issue 38), as read by read."""
    reads = (ListDir("/w/d"),)
    sent = collect.request(reads, MiB, TEN)
    long = b"0|directory|./" + b"d" * 8192 + b"\n"
    data = stream(sent.nonce, b"@N 0 list\n1|regular file|./x\n", long, b"@N 0 end\n")
    (listing,) = collect.parse(data, reads, sent, MiB, TEN)
    assert isinstance(listing, Listing)
    assert ([e.path for e in listing.entries], listing.truncated, listing.dropped) == (
        ["/w/d/x"], True, 1)


@pytest.mark.parametrize("data", [
    b"@bad 0 file 10\nabcd",  # a forged nonce
    b"@N 1 file 10\nabcd",  # out of step
    b"@N 0 file 10\nab",  # cut short
    b"@N 0 weird\n",  # unknown status
    "@N 0 file ²\nab".encode(),  # a digit to str.isdigit, not to int()
    b"@N 0 file 99999999999999999999999\nab",  # no size a file can have
    b"",  # nothing
])
def test_anything_out_of_step_is_refused(data: bytes) -> None:
    """The caller falls back to read-by-read on any framing surprise."""
    reads = (ReadFile("/w/a", MiB),)
    sent = collect.request(reads, MiB, TEN)
    with pytest.raises(collect.StreamError):
        collect.parse(stream(sent.nonce, data), reads, sent, MiB, TEN)


def test_an_unusable_answer_is_none_and_names_the_sandbox(
        caplog: pytest.LogCaptureFixture) -> None:
    """A forged or broken stream is no answer (the caller reads one by one, charging the
    run's budget only then); the warning says which sandbox, for the operator who finds it
    in a worker's log."""
    reads = (ReadFile("/w/a", MiB),)
    sent = collect.request(reads, 100, TEN)
    forged = RawExec(exit_code=0, stdout=b"@bad 0 file 3\nabc", stderr=b"",
                     stdout_truncated=False, stderr_truncated=False, timed_out=False,
                     duration_s=0.0)

    with caplog.at_level("WARNING"):
        found = collect.answer(forged, reads, sent, 100, TEN, where="0123456789ab")

    assert found is None
    assert "collect stream of 0123456789ab unusable" in caplog.text
