"""The one-exec collect stream: framing, budget, and refusal of anything out of step."""

from __future__ import annotations

import pytest

from evalfleet.sandbox.capture import CaptureBudget, CaptureCheck, ListingCheck
from evalfleet.sandbox.docker import collect, scripts
from evalfleet.sandbox.docker.stream import RawExec
from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.results import DirectoryListing, FileCapture

CHECKS = (CaptureCheck("a", "a.txt", max_size_bytes=4), ListingCheck("d", "d"),
          CaptureCheck("up", "../x"), CaptureCheck("l", "link"), CaptureCheck("b", "b"))
#: A listing cap of ten entries.
TEN = Limits(listing_entries=10)


def stream(nonce: str, *parts: bytes) -> bytes:
    return b"".join(part.replace(b"@N", b"@" + nonce.encode()) for part in parts)


def test_request_arguments() -> None:
    """Rejected paths never reach the sandbox; per-file caps and kinds are passed."""
    sent = collect.request(CHECKS, "/workspace", CaptureBudget(100), TEN)
    assert sent.argv[1:] == ("100", "11", "F", "/workspace/a.txt", "4", "L", "/workspace/d",
                             "65:8193", "F", "/workspace/link", "1048576", "F", "/workspace/b",
                             "1048576")
    assert 2 in sent.rejected and len(sent.nonce) == 32


def test_the_collector_takes_file_captures_and_the_script_anything_with_a_listing() -> None:
    """A protocol-4 supervisor collects when every check is a file capture (a refused path
    sends nothing); a listing, or an image without one, takes the script."""
    budget = CaptureBudget(1000)
    files = collect.request([CaptureCheck("a", "a.txt"), CaptureCheck("b", "../x")], "/w",
                            budget, Limits(listing_entries=5))
    listed = collect.request([CaptureCheck("a", "a.txt"), ListingCheck("l", ".")], "/w",
                             budget, Limits(listing_entries=5))
    assert collect.command(files, "/sv") == ("/sv", "--collect", *files.argv)
    assert collect.command(listed, "/sv")[:3] == ("sh", "-c", scripts.COLLECT)
    assert collect.command(files, None)[:3] == ("sh", "-c", scripts.COLLECT)


def test_parse_applies_the_budget() -> None:
    """Contents, listings and statuses come back in order; the budget counts full sizes."""
    budget = CaptureBudget(100)
    sent = collect.request(CHECKS, "/workspace", budget, TEN)
    data = stream(sent.nonce, b"@N 0 file 10\nabcd", b"@N 1 list\n3|regular file|./x\n",
                  b"@N 1 end\n", b"@N 3 link\n", b"@N 4 file 95\n", b"z" * 90)
    results = collect.parse(data, CHECKS, sent, budget, TEN)
    a, listing, up, link, b = results
    assert isinstance(a, FileCapture) and (a.content, a.size, a.truncated) == (b"abcd", 10, True)
    assert isinstance(listing, DirectoryListing) and listing.entries[0].path == "/workspace/d/x"
    assert isinstance(up, FileCapture) and not up.exists and up.error
    assert isinstance(link, FileCapture) and not link.exists and "link" in (link.error or "")
    assert isinstance(b, FileCapture) and (len(b.content or b""), b.truncated) == (90, True)
    assert budget.charged == 105


def test_a_listing_in_the_stream_says_what_it_dropped() -> None:
    """A line over 8 KiB in the stream is dropped and said (issue 38), as check by check."""
    checks = (ListingCheck("d", "d"),)
    sent = collect.request(checks, "/w", CaptureBudget(), TEN)
    long = b"0|directory|./" + b"d" * 8192 + b"\n"
    data = stream(sent.nonce, b"@N 0 list\n1|regular file|./x\n", long, b"@N 0 end\n")
    (listing,) = collect.parse(data, checks, sent, CaptureBudget(), TEN)
    assert isinstance(listing, DirectoryListing)
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
    """The caller falls back to check-by-check on any framing surprise."""
    checks = (CaptureCheck("a", "a"),)
    sent = collect.request(checks, "/w", CaptureBudget(), TEN)
    with pytest.raises(collect.StreamError):
        collect.parse(stream(sent.nonce, data), checks, sent, CaptureBudget(), TEN)


def test_an_unusable_answer_charges_nothing_and_names_the_sandbox(
        caplog: pytest.LogCaptureFixture) -> None:
    """A forged or broken stream costs the run no budget; the warning says which sandbox,
    for the operator who finds it in a worker's log."""
    checks = (CaptureCheck("a", "a"),)
    budget = CaptureBudget(100)
    sent = collect.request(checks, "/w", budget, TEN)
    forged = RawExec(exit_code=0, stdout=b"@bad 0 file 3\nabc", stderr=b"",
                     stdout_truncated=False, stderr_truncated=False, timed_out=False,
                     duration_s=0.0)

    with caplog.at_level("WARNING"):
        found = collect.answer(forged, checks, sent, budget, TEN, where="0123456789ab")

    assert found is None and budget.charged == 0
    assert "collect stream of 0123456789ab unusable" in caplog.text
