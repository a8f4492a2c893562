"""Determinism by default: the same submission sees the same environment in every run —
time zone, locale, hash seed, hostname, umask — so it leaves byte-identical files and gets
the same scorecard (its timings aside), under every runtime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sandbox_support import OpenSandbox

from evalfleet.sandbox.capture import CaptureCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.plan import Plan

ROOT = Path(__file__).parents[3]
#: Writes what could differ from one run to the next into out.txt.
PROBE = """\
import hashlib, os, socket, time
open("made.txt", "w").close()
lines = [time.strftime("%Z", time.localtime(0)), socket.gethostname(),
         oct(os.stat("made.txt").st_mode & 0o777), os.environ.get("LANG", ""),
         os.environ.get("LC_ALL", ""), os.environ.get("TZ", ""), str(hash("evalfleet")),
         str(sorted({"b", "a", "c", "d", "e"}))]
open("out.txt", "w").write("\\n".join(lines) + "\\n")
"""


def probe_once(open_sandbox: OpenSandbox) -> bytes:
    sandbox = open_sandbox("python")
    result = plans.run_plan(sandbox, Plan(files=(SeedFile("probe.py", PROBE),),
                                   commands=(Command(["python3", "probe.py"]),),
                                   checks=(CaptureCheck("out", "out.txt"),)))
    assert result.commands[0].exit_code == 0, result.commands[0].stderr
    return result.captures[0].content or b""


def test_two_runs_leave_byte_identical_files(open_sandbox: OpenSandbox) -> None:
    first, second = probe_once(open_sandbox), probe_once(open_sandbox)
    assert first == second
    lines = first.decode().splitlines()
    assert lines[:6] == ["UTC", "sandbox", "0o644", "C.UTF-8", "C.UTF-8", "UTC"]
    assert lines[6] == str(_hash_with_seed_zero("evalfleet"))


def test_a_packs_own_environment_wins(open_sandbox: OpenSandbox) -> None:
    """The defaults are only defaults: a step's own ``TZ`` (a pack's env_vars) is kept."""
    sandbox = open_sandbox("busybox")
    said = sandbox.exec(Command("echo $TZ; date +%Z", env={"TZ": "EST5"}))
    assert said.stdout == b"EST5\nEST\n"


def _hash_with_seed_zero(text: str) -> int:
    done = subprocess.run([sys.executable, "-c", f"print(hash({text!r}))"],
                          env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


def _scored(runtime: str) -> dict[str, Any]:
    pack = ROOT / "examples" / "packs" / "fizzbuzz-coding"
    done = subprocess.run(
        [sys.executable, "-m", "evalfleet.workers", "run", str(pack / "pack.yaml"), "-s",
         str(pack / "submissions" / "pass"), "--format", "json"], cwd=ROOT,
        env={**os.environ, "EVALFLEET_PROFILES__DEFAULT__RUNTIME": runtime,
             "EVALFLEET_WORKER_ID": f"determinism-test-{os.getpid()}"},
        capture_output=True, text=True, check=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """What must not change between two runs of one submission: every validator's verdict,
    score and reason, every dimension but the timed one, and every captured file."""
    card = result["scorecard"]
    return {
        "validators": [(v["key"], v["verdict"], v["normalized_score"], v["reason"])
                       for v in card["validator_details"]],
        "dimensions": {k: d for k, d in card["dimensions"].items() if k != "speed"},
        "captures": [(e["payload"].get("key"), e["payload"].get("content"))
                     for e in result["events"]
                     if e["type"] == "grader.verification.file_captured"],
    }


def test_the_same_submission_gets_the_same_scorecard(runtime: str) -> None:
    """Two runs of the example pack's passing submission: the same verdicts, dimensions
    (the speed dimension, which measures time, aside) and captured files."""
    first, second = _comparable(_scored(runtime)), _comparable(_scored(runtime))
    assert first["captures"] and first["validators"]
    assert first == second
