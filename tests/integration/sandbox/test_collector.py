"""The supervisor's ``--collect`` mode (protocol 4) writes the stream of the ``COLLECT``
script byte for byte, for every kind of path a capture meets — with no shell, ``wc`` or
``head`` per file, no process at all when pid 1 serves it itself acting as the candidate
(a request with a null stdin, no capture reaching ``/proc``), and no exec unless a capture
reaches ``/proc`` — on both images and every runtime."""

from __future__ import annotations

import dataclasses

import pytest
from sandbox_support import OpenSandbox

from evalfleet.sandbox.capture import CaptureBudget, CaptureCheck, ListingCheck
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker import collect, scripts
from evalfleet.sandbox.docker.conduit import internal_request, nothing
from evalfleet.sandbox.evaluation import checks
from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.results import FileRead

pytestmark = pytest.mark.integration

#: What the candidate leaves: every kind of thing a file capture can find at its path.
LEAVE = ("printf hello > a.txt && : > empty && head -c 3000 /dev/zero | tr '\\0' x > big && "
         "ln -s a.txt link && ln -s nowhere dangling && mkfifo fifo && mkdir dir && "
         "printf secret > closed && chmod 000 closed && mkdir shut && printf in > shut/f && "
         "chmod 000 shut && echo ok")
CHECKS = (CaptureCheck("a", "a.txt"), CaptureCheck("empty", "empty"),
          CaptureCheck("big", "big", max_size_bytes=100), CaptureCheck("link", "link"),
          CaptureCheck("dangling", "dangling"), CaptureCheck("fifo", "fifo"),
          CaptureCheck("dir", "dir"), CaptureCheck("closed", "closed"),
          CaptureCheck("shut", "shut/f"), CaptureCheck("missing", "missing"),
          CaptureCheck("mem", "/proc/self/mem"), CaptureCheck("a-again", "a.txt"),
          CaptureCheck("over-budget", "big"))
#: A listing cap of ten entries.
TEN = Limits(listing_entries=10)


@pytest.mark.parametrize("image", ["busybox", "python"])
@pytest.mark.parametrize("in_place", [False, True], ids=["forked", "in-place"])
def test_the_collector_writes_the_scripts_stream(open_sandbox: OpenSandbox, image: str,
                                                 in_place: bool) -> None:
    """The script's answer and the collector's to the same request are the same bytes (a
    budget that runs out half way included), whether the supervisor's forked process
    collects or pid 1 itself does (a null stdin, no capture reaching /proc)."""
    sandbox = open_sandbox(image)
    assert sandbox.collector is not None
    assert sandbox.exec(Command(LEAVE)).stdout == b"ok\n"
    asked = tuple(c for c in CHECKS if not (in_place and c.key == "mem"))
    reads = checks.reads_of(sandbox, asked, CaptureBudget(3050))
    sent = collect.request(reads.reads, reads.total_bytes, TEN)
    script = ("sh", "-c", scripts.COLLECT, "sh", *sent.argv)
    native = collect.command(sent, sandbox.collector)
    assert native[:2] == (sandbox.collector, "--collect")
    request = internal_request(sandbox.profile, native, cap=sent.cap, stop_first=True)

    answers = [sandbox._internal(script, cap=sent.cap, stop_first=True),
               sandbox.conduit.run(dataclasses.replace(request, null_stdin=in_place), nothing)]

    assert answers[1] is not None
    assert (answers[1].exit_code, answers[1].stdout) == (answers[0].exit_code,
                                                         answers[0].stdout)
    assert answers[0].exit_code == 0 and b" 0 file 5\nhello@" in answers[0].stdout
    read = collect.parse(answers[1].stdout, reads.reads, sent, reads.total_bytes, TEN)
    budget = CaptureBudget(3050)
    parsed = [budget.record(c, c.path, r, budget.limit_for(c.max_size_bytes))
              for c, r in zip(asked, read, strict=True)
              if isinstance(c, CaptureCheck) and isinstance(r, FileRead)]
    link, other = "not captured: the path is a link", "not captured: not a regular file"
    expected = [
        ("a", True, 5, 5, None), ("empty", True, 0, b"", None), ("big", True, 3000, 100, None),
        ("link", False, 0, None, link), ("dangling", False, 0, None, link),
        ("fifo", False, 0, None, other), ("dir", False, 0, None, other),
        ("closed", False, 0, None, "not captured: permission denied"),
        ("shut", False, 0, None, None), ("missing", False, 0, None, None),
        ("mem", True, 0, b"", None), ("a-again", True, 5, 5, None),
        ("over-budget", True, 3000, 40, None)]  # 3,050 - 3,010 charged before it
    assert [(c.key, c.exists, c.size, c.content and len(c.content), c.error)
            for c in parsed] == [e for e in expected if e[0] in {c.key for c in asked}]


def test_pid_1_collects_in_place_taking_no_process(open_sandbox: OpenSandbox) -> None:
    """The driver's captures are served by pid 1 itself: the sandbox's pid counter moves by
    one across them (the next command's process), not two (a collector's too)."""
    sandbox = open_sandbox("busybox")
    sandbox.exec(Command("printf hello > a.txt"))
    before = int(sandbox.exec(Command("echo $$")).stdout)

    found = checks.collect(sandbox, (CaptureCheck("a", "a.txt"),), CaptureBudget())

    assert found[0].content == b"hello"
    assert int(sandbox.exec(Command("echo $$")).stdout) == before + 1


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_pid_1_keeps_no_supplementary_group(open_sandbox: OpenSandbox, image: str) -> None:
    """Acting as a uid (a reset's walk, a collect in place), pid 1 checks permissions as
    that uid:gid alone, like the uid's own processes: root's groups are gone."""
    sandbox = open_sandbox(image)
    assert sandbox.exec(Command("grep Groups /proc/1/status")).stdout.split() == [b"Groups:"]


def test_a_listing_goes_to_the_script(open_sandbox: OpenSandbox) -> None:
    """The collector captures files only; checks with a listing take the script, with the
    same results."""
    sandbox = open_sandbox("busybox")
    asked = (CaptureCheck("a", "a.txt"), ListingCheck("ws", "."))
    reads = checks.reads_of(sandbox, asked, CaptureBudget(1000))
    sent = collect.request(reads.reads, reads.total_bytes, TEN)
    assert collect.command(sent, sandbox.collector)[:2] == ("sh", "-c")
    sandbox.exec(Command("printf hello > a.txt"))

    results = checks.collect(sandbox, asked, CaptureBudget(1000))

    assert results[0].content == b"hello"
    assert [entry.path for entry in results[1].entries] == ["/workspace/a.txt"]


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_a_capture_reaching_proc_reads_a_collector_of_its_own(open_sandbox: OpenSandbox,
                                                              image: str) -> None:
    """The supervisor's forked process collects by itself, unless a capture reaches /proc
    (here through a link the candidate left): then ``/proc/self`` is a collector exec'd for
    the request, never a copy of the supervisor (its arguments, its memory map)."""
    sandbox = open_sandbox(image)
    assert sandbox.exec(Command("ln -s /proc/self out && echo ok")).stdout == b"ok\n"
    asked = (CaptureCheck("cmdline", "out/cmdline"), CaptureCheck("maps", "out/maps"))

    found = checks.collect(sandbox, asked, CaptureBudget())

    assert found[0].content is not None and found[1].content is not None
    assert found[0].content.split(b"\0")[:2] == [str(sandbox.collector).encode(), b"--collect"]
    assert found[1].content.count(b"\n") > 3
