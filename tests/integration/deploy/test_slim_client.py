"""``pip install evalfleet`` is the client: the wheel without extras, in a virtualenv that
has nothing else, installs redis and pydantic only; the client submits to a real Redis,
reads a status and a typed scorecard, and loads none of the worker's dependencies."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from wheels import build_wheel, clean_venv

from evalfleet.workers.devtools.local_fleet import RedisServer

#: What the worker brings and the client must never load.
WORKER_ONLY = ("docker", "celery", "kombu", "re2", "sacrebleu", "jsonschema", "rapidfuzz",
               "yaml", "click", "prometheus_client", "pydantic_settings", "httpx")
#: The distributions a client-only install may hold (redis, pydantic and theirs; the
#: virtualenv's own pip).
CLIENT_DISTRIBUTIONS = {"evalfleet", "redis", "pydantic", "pydantic-core", "annotated-types",
                        "typing-extensions", "typing-inspection", "async-timeout", "pip",
                        "setuptools"}

PLATFORM = '''
import asyncio, json, sys
from evalfleet.tasks.platform import AsyncEvalfleetClient, EvalfleetClient, SubmitError
from evalfleet.tasks.messages import RunRequest, RunResult

redis_url, run_id, card = sys.argv[1:]
pack = {"pack": {"slug": "slim"}, "version": {"evaluation_spec": {
    "name": "slim", "version_number": 1, "judge_mode": "deterministic",
    "validators": [], "scorecard": {"dimensions": ["correctness"]}}}}
client = EvalfleetClient(redis_url)
client.submit(RunRequest(run_id=run_id, pack=pack, match=run_id))
status = client.status(run_id)

async def with_asyncio():
    async with AsyncEvalfleetClient(redis_url) as aclient:
        await aclient.submit_batch([{"run_id": run_id + "-a", "pack": pack}])
        return (await aclient.status(run_id + "-a")).status, len(await aclient.runs(run_id))

result = RunResult.model_validate({"run_id": run_id, "outcome": "scored",
                                   "scorecard": json.loads(card)})
print(json.dumps({
    "status": status.status, "async": asyncio.run(with_asyncio()),
    "scorecard": [type(result.scorecard).__name__, result.scorecard.result],
    "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
'''
SCORECARD = {"status": "complete", "strategy": "weighted", "overall_score": 0.9,
             "passed": True, "overall_reason": "", "validity": "valid", "score": 900,
             "result": "win"}


@pytest.fixture(scope="module")
def slim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a virtualenv holding ``evalfleet`` (no extras) and its dependencies."""
    base = tmp_path_factory.mktemp("slim")
    return clean_venv(base / "venv", str(build_wheel(base / "dist")))


def test_the_client_alone_installs_redis_and_pydantic_only(slim: Path) -> None:
    listed = subprocess.run([str(slim), "-m", "pip", "list", "--format=json",
                             "--disable-pip-version-check"], capture_output=True, text=True,
                            timeout=60, check=True)

    names = {d["name"].lower().replace("_", "-") for d in json.loads(listed.stdout)}
    assert names <= CLIENT_DISTRIBUTIONS, names - CLIENT_DISTRIBUTIONS
    assert {"evalfleet", "redis", "pydantic"} <= names


def test_the_client_submits_and_reads_without_the_worker(slim: Path, tmp_path: Path,
                                                         redis_server: RedisServer) -> None:
    """Sync and asyncio clients submit through the intake stream and read the ``queued``
    status; a result's scorecard is typed; nothing of the worker was imported."""
    (tmp_path / "submit_runs.py").write_text(PLATFORM)
    run_id = f"slim-{tmp_path.name[-12:]}".replace("_", "-")
    done = subprocess.run([str(slim), "submit_runs.py", redis_server.url, run_id,
                           json.dumps(SCORECARD)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)

    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["status"] == "queued"
    assert found["async"] == ["queued", 1]
    assert found["scorecard"] == ["Scorecard", "win"]
    assert not set(WORKER_ONLY) & set(found["loaded"]), found["loaded"]


def test_the_command_line_says_to_install_the_worker(slim: Path) -> None:
    """The ``evalfleet`` script of a client-only install: one line, naming the fix."""
    done = subprocess.run([str(slim.parent / "evalfleet"), "--help"], capture_output=True,
                          text=True, timeout=60, check=False)

    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "pip install 'evalfleet[worker]'" in done.stderr
