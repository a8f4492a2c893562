"""The supervisor writes the first command's files itself (protocol 5): one request, no
shell, no ``tar`` — and the workspace it leaves is the one ``tar`` left, byte for byte,
mode for mode. Whatever it cannot do exactly that way (something already in the way, a
program that cannot start) goes the step by step way, with that way's result."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sandbox_support import OpenSandbox, requests_of

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker import seeding
from evalfleet.sandbox.errors import SeedRefused
from evalfleet.sandbox.results import ExecResult

pytestmark = pytest.mark.integration

FILES = (SeedFile("a.txt", "alpha\n"), SeedFile("bin/run.sh", "echo run\n", mode=0o755),
         SeedFile("deep/er/data.bin", bytes(range(256)) * 1200, mode=0o600),
         SeedFile("open.txt", "o", mode=0o666), SeedFile("all.sh", "a", mode=0o777),
         SeedFile("empty", b""), SeedFile("ünï code.txt", "u"),
         SeedFile("/workspace/bin/other", "b", mode=0o640))

#: The workspace as the command finds it: every entry's mode, size and owner, then every
#: file's checksum (GNU ``stat`` and ``ls`` call ``statx``, which gVisor's 2022 kernel
#: refuses; ``find -printf`` does not, and busybox's ``find`` has no ``-printf``).
SUMS = "; find . -type f -exec md5sum {} + | sort"
LOOK = {"python": "find . -printf '%p %M %s %U:%G\\n' | sort" + SUMS,
        "busybox": "find . | sort | while read -r p; do "
                   "echo \"$p $(stat -c '%A %s %u:%g' \"$p\")\"; done" + SUMS}


def seeded(sandbox: Any, image: str, *, native: bool) -> tuple[ExecResult, int]:
    """The first command's look at the workspace, seeded ``native``-ly or by the script,
    and how many requests that took."""
    sandbox.seeds = native
    calls = requests_of(sandbox)
    result = sandbox.write_and_exec(FILES, Command(LOOK[image]))
    return dataclasses.replace(result, duration_s=0.0), len(calls)


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_the_supervisor_seeds_what_tar_did_in_one_request(open_sandbox: OpenSandbox,
                                                          image: str) -> None:
    native_sandbox = open_sandbox(image)
    assert native_sandbox.seeds, "the image's supervisor speaks protocol 5"

    native, native_requests = seeded(native_sandbox, image, native=True)
    scripted, _ = seeded(open_sandbox(image), image, native=False)

    assert native == scripted and native.exit_code == 0
    assert native_requests == 1
    lines = native.stdout.decode().splitlines()
    assert "./bin/run.sh -rwxr-xr-x 9 1000:1000" in lines
    assert "./open.txt -rw-r--r-- 1 1000:1000" in lines  # umask 022, as tar
    assert "./all.sh -rwxr-xr-x 1 1000:1000" in lines
    assert "./deep/er/data.bin -rw------- 307200 1000:1000" in lines
    assert any(line.startswith("./deep/er drwxr-xr-x ") for line in lines)
    assert len(lines) == 12 + 8  # every entry, then every file's checksum


@pytest.mark.parametrize("image", ["busybox", "python"])
def test_a_first_program_that_cannot_start_fails_as_a_later_one_does(
        open_sandbox: OpenSandbox, image: str) -> None:
    """No shell stands between the seeding and the program any more, so a program that is
    not there is reported as for any later command — not as a shell's exit 127."""
    sandbox = open_sandbox(image)
    missing = Command(["no-such-program", "x"])

    first = sandbox.write_and_exec([SeedFile("a.txt", "a")], missing)
    later = sandbox.exec(missing)

    assert dataclasses.replace(first, duration_s=0.0) == dataclasses.replace(later,
                                                                             duration_s=0.0)
    assert first.exit_code is None and "no-such-program" in (first.error or "")


def test_what_is_in_the_way_goes_the_step_by_step_way(open_sandbox: OpenSandbox) -> None:
    """Seeding over earlier files (a file where a directory goes, a file that is there):
    the supervisor refuses, the step by step way clears the way as ``tar`` did."""
    sandbox = open_sandbox("busybox")
    sandbox.write_and_exec([SeedFile("bin", "a file"), SeedFile("a.txt", "old")],
                           Command("true"))
    calls = requests_of(sandbox)

    result = sandbox.write_and_exec([SeedFile("bin/run.sh", "new"), SeedFile("a.txt", "new")],
                                    Command("cat bin/run.sh a.txt"))

    assert (result.exit_code, result.stdout) == (0, b"newnew")
    assert len(calls) > 1


@pytest.mark.parametrize("record", [
    b"F" + (0o644).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"../escaped\0x",
    b"F" + (0o644).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"/tmp/escaped\0x",
    b"F" + (0o644).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"a/./b\0x",
    b"F" + (0o644).to_bytes(4, "big") + (9).to_bytes(4, "big") + b"short\0x",  # cut
    b"L" + (0o644).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"link\0x",  # no such type
    b"D" + (0o755).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"dir\0x",  # a dir with data
    b"F" + (0o644).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"no-nul",
])
def test_the_supervisor_refuses_a_record_the_host_never_sends(open_sandbox: OpenSandbox,
                                                              record: bytes) -> None:
    """Its own check, not only the host's: nothing is written, nothing runs, and the
    refusal is a start error (which the driver answers by seeding step by step)."""
    sandbox = open_sandbox("busybox")
    base = seeding.with_command(sandbox.conduit, [SeedFile("a", "a")], Command("touch ran"),
                                native=True)[1]

    raw = sandbox.conduit.run(dataclasses.replace(base, seed=record), lambda: None)
    after = sandbox.exec(Command("ls -A /workspace /tmp"))

    assert raw.start_error is not None and "seed: bad record" in raw.start_error
    assert b"escaped" not in after.stdout and b"ran" not in after.stdout


def test_a_seed_larger_than_a_request_streams_as_a_tar(open_sandbox: OpenSandbox) -> None:
    """Past :data:`seeding.NATIVE_SEED_MAX` the files go as a tar on stdin, in chunks (the
    supervisor would hold a record request whole, in the sandbox's memory)."""
    sandbox = open_sandbox("busybox")
    big = SeedFile("big.bin", b"x" * (seeding.NATIVE_SEED_MAX + 1))
    calls = requests_of(sandbox)

    result = sandbox.write_and_exec([big, SeedFile("a.txt", "a")], Command("wc -c < big.bin"))

    assert (result.exit_code, result.stdout.strip()) == (0, str(len(big.data)).encode())
    assert len(calls) == 1 and tuple(calls[0])[:2] == ("sh", "-c")  # SEED_THEN_EXEC


def test_a_seed_file_past_the_file_size_limit_ends_as_through_tar(
        open_sandbox: OpenSandbox) -> None:
    """A file bigger than ``fsize_bytes`` fails the supervisor's write (``EFBIG``, not a
    SIGXFSZ the host would take for the command's death) and ends exactly as through
    ``tar``: the seeding is refused, the command never runs."""
    files = [SeedFile("big.bin", b"x" * 8192)]
    ended = []
    for native in (True, False):
        sandbox = open_sandbox("busybox", fsize_bytes=4096)
        sandbox.seeds = native
        with pytest.raises(SeedRefused) as refused:
            sandbox.write_and_exec(files, Command("echo ran"))
        ended.append(str(refused.value).replace(sandbox.id[:12], "<id>"))
    assert ended[0] == ended[1]
