"""evalfleet installed as a platform installs it: the wheel with the worker's dependencies
(``evalfleet[worker]``), in a clean virtualenv, inside
a project that has its own ``tasks.py`` and ``scoring`` package (the most common layout of
a Celery project). Both the platform's modules and evalfleet's import, and a run goes
through a real fleet — a worker started from that virtualenv in that directory.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from wheels import ROOT, build_wheel, clean_venv

from evalfleet.workers.devtools.local_fleet import RedisServer, WorkerNode, free_port, worker_env

PLATFORM_TASKS = '''
def add(x, y):
    """The platform's own Celery-style task module."""
    return x + y
'''
PLATFORM_SUBMIT = '''
import json, sys
from pathlib import Path

import scoring, tasks  # the platform's own, found first on its path
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.checking.submissions import load_submission
import yaml

redis_url, pack_dir, run_id = sys.argv[1:]
pack = yaml.safe_load((Path(pack_dir) / "pack.yaml").read_text())
submission = load_submission(Path(pack_dir) / "submissions" / "pass")
client = EvalfleetClient(redis_url)
client.submit(RunRequest(run_id=run_id, pack=pack, submission=submission))
result = client.wait(run_id, timeout=180)
print(json.dumps({"tasks": tasks.add(2, 3), "scoring": scoring.OWNER,
                  "outcome": result.outcome, "score": result.scorecard.score}))
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, the python of a clean virtualenv it is installed in)."""
    base = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(base / "dist")
    return wheel, clean_venv(base / "venv", f"{wheel}[worker]")


@pytest.fixture
def platform(tmp_path: Path) -> Path:
    """A platform's project directory: its own ``tasks.py`` and ``scoring`` package."""
    (tmp_path / "tasks.py").write_text(PLATFORM_TASKS)
    (tmp_path / "scoring").mkdir()
    (tmp_path / "scoring" / "__init__.py").write_text('OWNER = "platform"\n')
    (tmp_path / "submit.py").write_text(PLATFORM_SUBMIT)
    return tmp_path


@pytest.fixture
def worker(installed: tuple[Path, Path], platform: Path, redis_server: RedisServer,
           docker_client: Any) -> Iterator[WorkerNode]:
    """A worker started from the clean virtualenv, in the platform's directory."""
    port = free_port()
    env = worker_env(redis_server.url, f"wheel-{port}", platform, metrics_port=str(port),
                     metrics_addr="127.0.0.1")
    node = WorkerNode(f"wheel-{port}", env, platform / "worker.log", port,
                      python=str(installed[1]), cwd=platform)
    node.start(ready_timeout=60)
    yield node
    node.stop()


def test_the_wheel_installs_one_top_level_package(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        roots = {name.split("/")[0] for name in archive.namelist()}
        top_level = next(n for n in archive.namelist() if n.endswith("top_level.txt"))
        assert archive.read(top_level).decode().split() == ["evalfleet"]
    assert {r for r in roots if not r.endswith(".dist-info")} == {"evalfleet"}


def test_a_platform_with_its_own_tasks_and_scoring_runs_through_a_fleet(
        installed: tuple[Path, Path], platform: Path, worker: WorkerNode,
        redis_server: RedisServer) -> None:
    """The platform's ``tasks`` and ``scoring`` and evalfleet's import side by side, in
    the platform's process and in the worker's; the run is scored as everywhere else."""
    python = installed[1]
    done = subprocess.run(
        [str(python), "submit.py", redis_server.url,
         str(ROOT / "examples" / "packs" / "fizzbuzz-coding"), f"wheel-{free_port()}"],
        cwd=platform, capture_output=True, text=True, timeout=240, check=False)

    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "tasks": 5, "scoring": "platform", "outcome": "scored", "score": 1000}
    assert worker.alive, worker.log.read_text()[-3000:]
    shown = subprocess.run([str(python), "-m", "evalfleet.workers", "--help"], cwd=platform,
                           capture_output=True, text=True, timeout=60, check=False)
    assert shown.returncode == 0 and "evalfleet" in shown.stdout, shown.stderr
