"""The plain-Redis example of docs/platform.md (docs/examples/plain-redis.sh) runs as
written against a live fleet: submit through the intake stream, cancel, read the status
record, the result and the match's runs with nothing but redis-cli."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "plain-redis.sh"


def test_the_redis_cli_example_runs_a_match(start_worker: Any, redis_server: Any) -> None:
    if shutil.which("redis-cli") is None:
        pytest.fail("redis-cli is not on PATH (scripts/setup.sh installs redis-server)")
    start_worker("plain", packs_dir=str(ROOT / "examples" / "packs"))

    done = subprocess.run(["bash", str(EXAMPLE)], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "REDIS_URL": redis_server.url}, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0:2] == ["run a: scored", "run b: cancelled"], done.stdout
    assert lines[2].startswith("score: ") and lines[2].split()[2] in {"win", "draw", "loss"}
    assert lines[3].startswith("runs: ") and lines[3].split()[1].endswith("-a")
    assert lines[3].split()[2].endswith("-b")
