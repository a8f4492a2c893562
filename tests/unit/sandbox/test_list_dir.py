"""How the Docker driver's check-by-check listing ends (``DockerSandbox.list_dir``), from
the exec's raw answer: a listing that failed or was cut keeps what it gave and says so
(issue 38: it came back empty, its error left out of the event, as if whole)."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.sandbox.docker import transfer
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.stream import RawExec
from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.results import Listing

LINES = b"1|regular file|./a\n2|regular file|./b\n"
CAP = 3 * (transfer.MAX_LINE + 2)  # two entries + 1, as list_dir asks


class Answering:
    """Stands in for the sandbox: every internal step answers ``raw``."""

    def __init__(self, raw: RawExec) -> None:
        self.raw = raw
        self.profile = type("Profile", (), {"limits": Limits()})

    def _internal(self, argv: Any, **_: Any) -> RawExec:
        return self.raw


def listed(exit_code: int | None, stdout: bytes = b"", stderr: bytes = b"", *,
           truncated: bool = False, timed_out: bool = False) -> Listing:
    raw = RawExec(exit_code=exit_code, stdout=stdout, stderr=stderr,
                  stdout_truncated=truncated, stderr_truncated=False, timed_out=timed_out,
                  duration_s=0.0)
    return DockerSandbox.list_dir(Answering(raw), "/w", 2)  # type: ignore[arg-type]


def test_a_whole_listing() -> None:
    listing = listed(0, LINES)
    assert ([e.path for e in listing.entries], listing.truncated, listing.error) == (
        ["/w/a", "/w/b"], False, None)


@pytest.mark.parametrize(("listing", "error"), [
    (listed(None, LINES + b"3|regular file|./c-cut-her", truncated=True),
     f"the listing's output passed its cap of {CAP} bytes"),
    (listed(None, LINES, timed_out=True), "the listing timed out"),
])
def test_a_cut_listing_keeps_what_it_gave_and_says_why(listing: Listing, error: str) -> None:
    assert [e.path for e in listing.entries] == ["/w/a", "/w/b"]
    assert (listing.truncated, listing.error) == (True, error)


def test_a_failed_listing_says_why() -> None:
    listing = listed(3, stderr=b"cannot open directory\n")
    assert (listing.entries, listing.truncated, listing.error) == (
        (), False, "cannot open directory")
