"""Dispatch: the round trip of ``evalfleet.run`` with a no-op pipeline (submit → worker →
publish → ``client.wait``) against a bare Celery no-op task (``send_task`` →
``AsyncResult.get``) on the same Redis broker, each through one solo-pool worker process
(:mod:`bench.dispatch_worker`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.common import Report, Row, median, timed_ms
from bench.dispatch_worker import BARE_TASK, bare_app
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.workers.devtools.local_fleet import RedisServer, free_port, wait_until


def worker(kind: str, redis_url: str, log: Path,
           processes: int = 0) -> subprocess.Popen[bytes]:
    """A :mod:`bench.dispatch_worker` process, once it is ready (``processes`` 0: solo)."""
    with log.open("ab") as out:
        process = subprocess.Popen([sys.executable, "-m", "bench.dispatch_worker", kind,
                                    redis_url, str(processes)], stdout=out,
                                   stderr=subprocess.STDOUT,
                                   cwd=Path(__file__).resolve().parent.parent)
    wait_until(lambda: b" ready." in log.read_bytes() or process.poll() is not None, 60,
               f"{kind} dispatch worker")
    if process.poll() is not None:
        raise RuntimeError(f"{kind} dispatch worker exited:\n{log.read_text()[-2000:]}")
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def _evalfleet_round_trip(client: EvalfleetClient) -> None:
    run_id = f"dispatch-{uuid.uuid4().hex[:12]}"
    client.submit({"run_id": run_id, "pack_ref": "none", "submission": {}})
    client.wait(run_id, timeout=30)


def run(report: Report, count: int = 200) -> None:
    """Median round trip of each, interleaved (same broker, same moment)."""
    with tempfile.TemporaryDirectory(prefix="evalfleet-dispatch-") as tmp:
        workdir = Path(tmp)
        redis = RedisServer(free_port(), workdir).start()
        workers = []
        try:
            workers = [worker("bare", redis.url, workdir / "bare.log"),
                       worker("evalfleet", redis.url, workdir / "evalfleet.log")]
            bare = bare_app(redis.url)
            client = EvalfleetClient(redis.url)
            ours, base = [], []
            for index in range(count + 5):
                a = timed_ms(lambda: bare.send_task(BARE_TASK).get(timeout=30))
                b = timed_ms(lambda: _evalfleet_round_trip(client))
                if index >= 5:  # warm-up: connections, imports
                    base.append(a)
                    ours.append(b)
            client.close()
        finally:
            for process in workers:
                stop(process)
            redis.stop()
            time.sleep(0.1)
    row = Row("dispatch round trip (no-op pipeline vs bare Celery no-op)", median(ours),
              median(base), "ms", "≤ 1.5", False)
    row.met = row.ratio <= 1.5
    report.add(row)
