"""Issue 42: every command answers an ordinary fault in one line (and perhaps a ``hint:``
line), with the exit code ``evalfleet --help`` documents; and ``evalfleet packs`` lists
what a live worker serves.

Each fault is real: a port nothing listens on, a Redis started with ``requirepass``, files
that are missing, unreadable or wrong.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from evalfleet.tasks.evaluation.packs import pack_digest
from evalfleet.workers.devtools.local_fleet import free_port, wait_until
from evalfleet.workers.fleet_cli import pack_mapping

PACKS = Path(__file__).parents[3] / "examples" / "packs"
FIZZBUZZ = PACKS / "fizzbuzz-coding" / "pack.yaml"
PASSING = PACKS / "fizzbuzz-coding" / "submissions" / "pass"
PASSWORD = "cli-faults-secret"


def evalfleet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a person runs it, with no EVALFLEET_* setting but those given."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EVALFLEET_")}
    return subprocess.run([sys.executable, "-m", "evalfleet.workers", *args],
                          env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="module")
def locked_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A Redis that wants a password (as compose and Kubernetes run it); its port."""
    import redis

    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--requirepass", PASSWORD, "--dir", str(tmp_path_factory.mktemp("locked"))],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def answers() -> bool:
        try:
            return bool(redis.Redis(port=port, password=PASSWORD).ping())
        except redis.ConnectionError:
            return False

    wait_until(answers, 10, "redis-server with requirepass did not answer")
    yield port
    process.terminate()
    process.wait(10)


class Places(NamedTuple):
    """What a fault case may use: a tmp directory and the Redis servers' URLs."""

    tmp: Path
    live: str
    locked_port: int


def _submission(tmp: Path, text: str) -> Path:
    folder = tmp / "submission"
    folder.mkdir()
    (folder / "fizzbuzz.py").write_text((PASSING / "fizzbuzz.py").read_text())
    (folder / "submission.yaml").write_text(text)
    return folder


def _bad_pack(tmp: Path) -> Path:
    text = (PACKS / "agent-efficiency" / "pack.yaml").read_text()
    pack = tmp / "pack.yaml"
    pack.write_text(text.replace("          weight: 0.6", "          weigth: 0.6", 1))
    return pack


def _unreadable_submission(tmp: Path) -> Path:
    """A submission holding a file every read of which fails (EIO, even for root)."""
    folder = tmp / "unreadable"
    folder.mkdir()
    (folder / "blob").symlink_to("/proc/self/mem")
    return folder


def _not_utf8(tmp: Path) -> Path:
    pack = tmp / "latin1.yaml"
    pack.write_bytes("pack:\n  name: caf\xe9\n".encode("latin-1"))
    return pack


def _broken_yaml(tmp: Path) -> Path:
    pack = tmp / "broken.yaml"
    pack.write_text("pack:\n  slug: [fizz\n")
    return pack


class Fault(NamedTuple):
    """A command line, the exit code it must end with, and the pattern its one line
    (stderr) matches; ``hint``: the second line, when there is one."""

    args: Callable[[Places], list[str]]
    exit_code: int
    line: Callable[[Places], str]
    hint: str | None = None
    env: tuple[tuple[str, str], ...] = ()


DOWN = 1  # a port nothing listens on (tcpmux: never served on this machine)
UNREACHABLE = (r"Redis at redis://127\.0\.0\.1:1/0 is unreachable \(Connection refused\): "
               r"start it, or give the fleet's with --redis-url or EVALFLEET_REDIS_URL")
DOWN_URL = f"redis://127.0.0.1:{DOWN}/0"

FAULTS = {
    "submit-redis-down": Fault(
        lambda p: ["submit", str(FIZZBUZZ), "-s", str(PASSING), "--redis-url", DOWN_URL],
        3, lambda p: UNREACHABLE),
    "result-redis-down-from-the-environment": Fault(
        lambda p: ["result", "r1"], 3, lambda p: UNREACHABLE,
        env=(("EVALFLEET_REDIS_URL", DOWN_URL),)),
    "watch-redis-down": Fault(
        lambda p: ["watch", "--once", "--redis-url", DOWN_URL], 3, lambda p: UNREACHABLE),
    "packs-redis-down": Fault(
        lambda p: ["packs", "--redis-url", DOWN_URL], 3, lambda p: UNREACHABLE),
    "check-fleet-redis-down": Fault(
        lambda p: ["check", str(FIZZBUZZ), "--fleet", DOWN_URL], 3, lambda p: UNREACHABLE),
    "status-redis-wants-a-password": Fault(
        lambda p: ["status", "r1", "--redis-url", f"redis://127.0.0.1:{p.locked_port}/0"],
        3, lambda p: rf"Redis at redis://127\.0\.0\.1:{p.locked_port}/0 wants a password: "
                     r"give redis://:PASSWORD@HOST:PORT/DB with --redis-url or "
                     r"EVALFLEET_REDIS_URL"),
    "submit-redis-refuses-the-password": Fault(
        lambda p: ["submit", str(FIZZBUZZ), "-s", str(PASSING), "--redis-url",
                   f"redis://:wrong@127.0.0.1:{p.locked_port}/0"],
        3, lambda p: rf"Redis at redis://127\.0\.0\.1:{p.locked_port}/0 refused the "
                     r"password: give redis://:PASSWORD@HOST:PORT/DB with .*"),
    "missing-submission": Fault(
        lambda p: ["submit", str(FIZZBUZZ), "-s", str(p.tmp / "absent.yaml")],
        2, lambda p: rf".*'--submission'.*{re.escape(str(p.tmp / 'absent.yaml'))}' does "
                     r"not exist\. \(see --help\)"),
    "missing-pack": Fault(
        lambda p: ["validate", str(p.tmp / "absent.yaml")],
        2, lambda p: rf".*{re.escape(str(p.tmp / 'absent.yaml'))}' does not exist\..*"),
    "unreadable-submission-file": Fault(
        lambda p: ["submit", str(FIZZBUZZ), "-s", str(_unreadable_submission(p.tmp))],
        2, lambda p: rf"{re.escape(str(p.tmp / 'unreadable' / 'blob'))}: cannot be read: "
                     r"Input/output error"),
    "pack-not-utf8": Fault(
        lambda p: ["validate", str(_not_utf8(p.tmp))],
        2, lambda p: rf"{re.escape(str(p.tmp / 'latin1.yaml'))}: cannot be read: not "
                     r"UTF-8 \(invalid continuation byte\)"),
    "pack-broken-yaml": Fault(
        lambda p: ["validate", str(_broken_yaml(p.tmp))],
        2, lambda p: rf"{re.escape(str(p.tmp / 'broken.yaml'))}: invalid YAML: expected "
                     r"',' or '\]', but got '<stream end>' \(while parsing a flow sequence "
                     r"at line 2, column 9\) \(line 3\)"),
    "submission-unknown-field": Fault(
        lambda p: ["submit", str(FIZZBUZZ), "-s",
                   str(_submission(p.tmp, "comands:\n  - run: python3 fizzbuzz.py\n"))],
        2, lambda p: rf"{re.escape(str(p.tmp / 'submission' / 'submission.yaml'))}: "
                     r'comands unknown field "comands"',
        hint='hint: did you mean "commands"?'),
    "submission-wrong-type": Fault(
        lambda p: ["submit", str(FIZZBUZZ), "-s",
                   str(_submission(p.tmp, "commands:\n  - run: 5\n"))],
        2, lambda p: rf"{re.escape(str(p.tmp / 'submission' / 'submission.yaml'))}: "
                     r"commands\[0\]\.run Input should be a valid string"),
    "pack-unknown-field": Fault(
        lambda p: ["submit", str(_bad_pack(p.tmp)), "-s", str(PASSING)],
        2, lambda p: rf"{re.escape(str(p.tmp / 'pack.yaml'))}: version\.evaluation_spec\."
                     r'scorecard\.dimensions\[1\]\.weigth unknown field "weigth" \(line \d+\)',
        hint='hint: did you mean "weight"?'),
    "bad-setting": Fault(
        lambda p: ["status", "r1"], 2,
        lambda p: r"EVALFLEET_CONCURRENCY: Input should be a valid integer.*",
        env=(("EVALFLEET_CONCURRENCY", "many"),)),
    "status-unknown-run": Fault(
        lambda p: ["status", "no-such-run", "--redis-url", p.live],
        1, lambda p: r"no-such-run: unknown \(never submitted, or past its result's TTL\)"),
    "result-unknown-run": Fault(
        lambda p: ["result", "no-such-run", "--redis-url", p.live],
        1, lambda p: r"no-such-run: no result \(queued, running, unknown, or past its TTL "
                     r"and not archived: evalfleet status no-such-run\)"),
}


@pytest.mark.parametrize("fault", list(FAULTS.values()), ids=list(FAULTS))
def test_every_fault_is_one_line_and_a_documented_exit_code(
        fault: Fault, tmp_path: Path, redis_server: Any, locked_redis: int) -> None:
    """One line naming the file, field or address and what to do (a hint on a second
    line), the exit code of ``evalfleet --help``, never a traceback."""
    places = Places(tmp_path, redis_server.url, locked_redis)

    done = evalfleet(*fault.args(places), env=dict(fault.env))

    lines = done.stderr.splitlines()
    assert done.returncode == fault.exit_code, done.stderr
    assert re.fullmatch(fault.line(places), lines[0]), lines
    assert lines[1:] == ([fault.hint] if fault.hint else []), lines
    assert "Traceback" not in done.stderr


def test_a_live_worker_publishes_its_packs_and_evalfleet_packs_lists_them(
        start_worker: Any, redis_server: Any) -> None:
    """A worker with EVALFLEET_PACKS_DIR publishes each pack's name, version and digest
    (the digest ``evalfleet check`` names); ``evalfleet packs`` lists them with the worker."""
    node = start_worker("packs", packs_dir=str(PACKS))

    wait_until(lambda: node.worker_id in evalfleet("packs", "--redis-url",
                                                   redis_server.url).stdout,
               15, "the worker's packs were not listed")
    listed = evalfleet("packs", "--format", "json", env={"EVALFLEET_REDIS_URL": redis_server.url})

    assert listed.returncode == 0, listed.stderr
    served = {p["name"]: p for p in json.loads(listed.stdout) if node.worker_id in p["workers"]}
    assert sorted(served) == sorted(d.name for d in PACKS.iterdir() if d.is_dir())
    fizzbuzz = served["fizzbuzz-coding"]
    assert (fizzbuzz["version"], fizzbuzz["problem"]) == (1, "")
    assert fizzbuzz["digest"] == pack_digest(pack_mapping(FIZZBUZZ))
