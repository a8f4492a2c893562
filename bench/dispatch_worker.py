"""The worker side of the dispatch case:
``python -m bench.dispatch_worker KIND REDIS_URL [PROCESSES]``.

``KIND`` is ``bare`` (a plain Celery app with a no-op task and a Redis result backend: the
baseline) or ``evalfleet`` (the evalfleet app and its ``evalfleet.run`` task, with the
pipeline replaced by a no-op that returns a result at once; delivery counting, the
duplicate check and publication stay real, and the intake's forwarder runs, as in every
worker: the client submits through it). Both run one solo-pool worker process, or a
prefork pool of ``PROCESSES`` (a third argument).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from celery import Celery

BARE_TASK = "bench.noop"


def bare_app(redis_url: str) -> Celery:
    """A Celery app with nothing but a no-op task (results in Redis)."""
    app = Celery("bench-bare", broker=redis_url, backend=redis_url, set_as_current=False)

    @app.task(name=BARE_TASK)  # type: ignore[untyped-decorator]
    def noop() -> None:
        return None

    return app


def evalfleet_app(redis_url: str, worker_id: str) -> Celery:
    """The evalfleet app with a runtime whose pipeline does nothing."""
    from evalfleet.tasks import run_task, task_context
    from evalfleet.tasks.decoding import decode_loosely, fallback_run_id
    from evalfleet.tasks.messages import RunResult
    from evalfleet.tasks.publish import Publisher
    from evalfleet.workers.app import make_app
    from evalfleet.workers.clients import redis_client
    from evalfleet.workers.settings import Settings

    settings = Settings(redis_url=redis_url, worker_id=worker_id, metrics_port=0)

    def no_op_pipeline(body: Any, factory: Any, config: Any, *args: Any,
                       **kwargs: Any) -> RunResult:
        run_id = fallback_run_id(decode_loosely(body))
        return RunResult(run_id=run_id, outcome="rejected", reason="no-op")

    setattr(run_task, "run_pipeline", no_op_pipeline)  # noqa: B010 (a module attribute)
    client = redis_client(settings)
    task_context.install(task_context.Runtime(config=settings.pipeline_config(), factory=None,  # type: ignore[arg-type]
                                    redis=client, publisher=Publisher(client, 3600)))
    return make_app(settings)


def forward(app: Celery, redis_url: str) -> None:
    """Run the intake's forwarder in this (the main) process, as a worker does."""
    import redis

    from evalfleet.tasks.platform.intake import IntakeForwarder
    from evalfleet.workers.services import Loop

    forwarder = IntakeForwarder(redis.Redis.from_url(redis_url), app, consumer="bench-dispatch")
    forwarder.ensure_group()
    Loop("evalfleet-intake", forwarder.forward_once, 0.0).start()


def main(kind: str, redis_url: str, processes: int = 0) -> None:
    """Run the worker: one solo process, or ``processes`` prefork pool processes."""
    app = bare_app(redis_url) if kind == "bare" else evalfleet_app(redis_url, "bench-dispatch")
    if kind == "evalfleet":
        forward(app, redis_url)
    queues = ["-Q", "evalfleet.default"] if kind == "evalfleet" else []
    pool = ["-P", "prefork", "-c", str(processes)] if processes else ["-P", "solo"]
    app.worker_main(["worker", *pool, "--loglevel=INFO", "--without-mingle",
                     "--without-gossip", "--without-heartbeat", *queues])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
