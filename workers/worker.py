"""``evalfleet worker``: one worker node — a Celery worker plus its main-process services.

The main process runs its services (:mod:`.services`: metrics, heartbeat, the intake's
forwarder, reapers, webhooks, the archiver); each pool process builds its own runtime
(Docker client, sandbox factory, Redis, publisher) lazily after the fork.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from evalfleet.sandbox.docker.labels import (
    LABEL_FLEET,
    LABEL_PROCESS,
)
from evalfleet.tasks.redis_keys import FLEET_KEY

from . import leftovers
from .clients import docker_client, redis_client
from .services import main_services
from .settings import Settings

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare_metrics_dir(settings: Settings) -> Path:
    """Point prometheus-client's multiprocess mode at a fresh directory (before importing it)."""
    path = Path(os.environ.get(MULTIPROC_ENV) or
                Path(tempfile.gettempdir()) / f"evalfleet-metrics-{settings.worker_id}")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def build_runtime(settings: Settings, signer: Any = None) -> Any:
    """A pool process's runtime (called lazily, after the fork); ``signer`` signs its
    results (default: the settings' key, :mod:`workers.fleet_key`)."""
    from evalfleet.sandbox.docker.factory import DockerFactory
    from evalfleet.tasks.evaluation.closing import Closer
    from evalfleet.tasks.patience import Patience
    from evalfleet.tasks.publish import Publisher
    from evalfleet.tasks.task_context import Runtime

    from .app import soft_time_limit_s
    from .fleet_key import configured
    from .metrics import FleetMetrics

    client, metrics = redis_client(settings), FleetMetrics()
    cold = DockerFactory(
        docker_client(settings), worker=settings.worker_id,
        extra_labels={LABEL_FLEET: settings.fleet_label, LABEL_PROCESS: str(os.getpid())})
    return Runtime(
        config=settings.pipeline_config(),
        factory=sandbox_factory(settings, cold, metrics),
        redis=client, publisher=Publisher(client, settings.result_ttl_s, settings.worker_id,
                                          signer or configured(settings)),
        delivery_cap=settings.delivery_cap, retry_backoff_s=settings.retry_backoff_s,
        observer=metrics, closer=Closer(),
        gate=preflight_gate(settings, client, cold),
        patience=Patience(on_refusal=metrics.refused), time_limit_s=soft_time_limit_s(settings))


def preflight_gate(settings: Settings, redis: Any, factory: Any) -> Any:
    """The operator's preflight requirement, or None when it is off. The image id it
    compares is the one ``factory`` reports in each result (``resources.image_id``), so a
    check through this fleet records exactly what the gate later looks for."""
    from evalfleet.tasks.checking.preflight import PreflightGate, PreflightStore

    wanted = settings.preflight
    if wanted.mode == "off":
        return None
    return PreflightGate(PreflightStore(redis), lambda image: str(factory.image(image).id),
                         wanted.mode, wanted.sections)


def sandbox_factory(settings: Settings, cold: Any, metrics: Any = None) -> Any:
    """A warm pool over ``cold`` for the profiles this worker serves, when any keeps warm
    sandboxes or reuses them; ``metrics`` (:class:`FleetMetrics`) hears of its resets and
    refills."""
    from evalfleet.sandbox.docker.pool import WarmPool

    served = [(name, p) for name, p in settings.profiles.items() if name in settings.queues]
    if not any(p.warm_sandboxes for _, p in served):
        return cold
    sizes = [(p.bounds(name).profile, p.warm_sandboxes) for name, p in served]
    return WarmPool(cold, sizes, on_reset=metrics and metrics.reset,
                    on_filled=metrics and metrics.pool).start()


def _build_runtime(**_: Any) -> None:
    from evalfleet.tasks import task_context

    task_context.current()


def _release_runtime(**_: Any) -> None:
    from evalfleet.tasks import task_context

    task_context.shutdown()


def resolve_fleet(settings: Settings, redis: Any) -> str:
    """Fix this worker's fleet name: ``EVALFLEET_FLEET``, else the id stored in the Redis
    the fleet shares (created once by the first worker, ``SET NX``), so that two fleets on
    one engine never share a name even when their Redis URLs read the same (``redis:6379``
    in every compose project). Falls back to a digest of the URL when Redis is unreachable.
    """
    if not settings.fleet:
        try:
            stored = redis.get(FLEET_KEY)  # read first: a full Redis refuses the SET
            if stored is None:
                redis.set(FLEET_KEY, f"fleet-{uuid.uuid4().hex[:12]}", nx=True)
                stored = redis.get(FLEET_KEY)
            settings.fleet = bytes(stored).decode()
        except Exception as err:  # Celery retries the broker; the label must exist now
            log.warning("fleet id not readable from Redis (%s); using %s", err,
                        settings.fleet_label)
    return settings.fleet_label


def engine_runtimes(settings: Settings) -> dict[str, Any]:
    """The runtimes the Docker engine lists, waiting up to ``engine_wait_s`` for it.

    Raises:
        SystemExit: the engine never answered (the worker cannot know its isolation).
    """
    from evalfleet.sandbox.docker.runtimes import offered

    client = docker_client(settings)
    give_up = time.monotonic() + settings.engine_wait_s
    while True:
        try:
            return dict(offered(client.info()))
        except Exception as error:  # any failure to reach the engine
            if time.monotonic() >= give_up:
                raise SystemExit(f"evalfleet: the Docker engine did not answer within "
                                 f"{settings.engine_wait_s:.0f} s: {error}") from error
            time.sleep(1.0)


def resolve_isolation(settings: Settings, names: list[str]) -> list[Any]:
    """Decide (and pin in ``settings``) the runtime of each profile in ``names``.

    Raises:
        SystemExit: a profile asks for a runtime the engine cannot give it.
    """
    from .isolation import IsolationError, apply, resolve

    try:
        return apply(settings, resolve(settings.profiles, names, engine_runtimes(settings)))
    except IsolationError as error:
        raise SystemExit(f"evalfleet: {error}") from error


def wait_until_writable(redis: Any, pause_s: float = 5.0) -> None:
    """Return once Redis takes a transaction. A full Redis (maxmemory, noeviction) refuses
    every command inside MULTI, and Celery's start-up declares its queues in one: the
    worker would exit, and be restarted again and again, until memory came back."""
    import redis as redis_lib

    said = False
    while True:
        try:
            with redis.pipeline(transaction=True) as pipe:
                pipe.exists(FLEET_KEY).execute()
            return
        except redis_lib.OutOfMemoryError as err:
            if not said:
                log.warning("Redis is full (%s): waiting for memory before taking runs", err)
                said = True
            time.sleep(pause_s)


def resolve_reuse(settings: Settings, names: list[str]) -> list[Any]:
    """Probe each profile in ``names`` that reuses its sandboxes; turn reuse off (loudly)
    where its resets do not verify on this engine (:mod:`workers.reuse_check`)."""
    from evalfleet.sandbox.docker.factory import DockerFactory

    from .reuse_check import apply, check

    if not any(settings.profiles[name].reuse_runs > 1 for name in names):
        return []
    factory = DockerFactory(docker_client(settings), worker=settings.worker_id,
                            extra_labels={LABEL_FLEET: settings.fleet_label,
                                          LABEL_PROCESS: str(os.getpid())})
    return apply(settings, check(settings, names, factory))


def run_worker(settings: Settings, pool: str = "prefork") -> None:
    """Run a worker node until it is stopped (SIGTERM: warm shutdown)."""
    from .fleet_key import announce, configured
    from .isolation import served

    prepare_metrics_dir(settings)
    signer = configured(settings)  # before the pool forks: every process signs alike
    isolations = resolve_isolation(settings, served(settings))
    resolve_fleet(settings, redis_client(settings))
    signing = announce(signer, redis_client(settings), settings.worker_id)
    reuses = resolve_reuse(settings, served(settings))
    from celery.signals import (
        worker_process_init,
        worker_process_shutdown,
        worker_ready,
        worker_shutdown,
    )

    from evalfleet.tasks import task_context
    from evalfleet.tasks.queueing import queue_for

    from .app import make_app

    app = make_app(settings)
    task_context.install_builder(lambda: build_runtime(settings, signer))
    # Build the runtime (and fill a warm pool) where runs execute, as soon as it starts.
    started = worker_process_init if pool == "prefork" else worker_ready
    started.connect(_build_runtime, weak=False)
    worker_ready.connect(lambda **_: log.info("%s", signing), weak=False)
    for signal in (worker_process_shutdown, worker_shutdown):
        signal.connect(_release_runtime, weak=False)
    services = main_services(settings, app, isolations, reuses, signer)
    wait_until_writable(redis_client(settings))
    queues = ",".join(queue_for(q) for q in settings.queues)
    try:
        app.worker_main(["worker", "--loglevel=INFO", "-Q", queues, "-P", pool,
                         "-c", str(settings.concurrency), "-n", f"{settings.worker_id}@%h",
                         "--without-mingle", "--without-gossip"])
    finally:
        for service in services:
            service.stop()
        leftovers.remove_all(settings, lambda: docker_client(settings))
