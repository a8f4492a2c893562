"""The main process's services of a worker node: the heartbeat and the packs it serves,
metrics, the intake's forwarder, the archiver beside the node, the sandbox reapers and the
webhook dispatcher (:func:`main_services`), each a :class:`Loop` or a process of its own."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from evalfleet.sandbox.docker.labels import LABEL_FLEET

from . import leftovers
from .clients import docker_client, heartbeat_path, redis_client
from .settings import Settings
from .side_process import WATCH_INTERVAL_S, SideProcess

log = logging.getLogger(__name__)

#: Seconds past its deadline after which any fleet's sandbox is garbage (see ``Reaper``).
ABANDONED_AFTER_S = 3600.0


def start_reaper(settings: Settings, redis: Any) -> Any:
    """Remove sandboxes of dead workers and past their deadline: now, then periodically."""
    from evalfleet.sandbox.docker.reaper import Reaper

    from .health import worker_alive

    stop = threading.Event()
    reaper = Reaper(docker_client(settings), is_alive=lambda worker: worker_alive(redis, worker),
                    extra_filters={LABEL_FLEET: settings.fleet_label},
                    abandoned_after_s=ABANDONED_AFTER_S)
    reaper.run(settings.reaper_interval_s, stop)
    return stop


class Loop:
    """A daemon thread running ``step`` every ``interval_s`` until stopped."""

    def __init__(self, name: str, step: Callable[[], Any], interval_s: float) -> None:
        self.step, self.interval_s = step, interval_s
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.step()
            except Exception:  # a blip must not kill the loop; the next step retries
                self.stopped.wait(1.0)
            self.stopped.wait(self.interval_s)

    def start(self) -> Loop:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()


def main_services(settings: Settings, app: Any, isolations: list[Any] | None = None,
                  reuses: list[Any] | None = None, signer: Any = None) -> list[Any]:
    """Start the main process's services; returns what to stop at exit (``signer``: the
    key the intake's forwarder publishes cancels with)."""
    from prometheus_client import start_http_server

    from evalfleet.tasks.platform.intake import IntakeForwarder

    from .delivery_metrics import WebhookCollector
    from .fleet_key import configured
    from .health import Heartbeat
    from .metrics import (
        ContainerCollector,
        IsolationCollector,
        QueueCollector,
        ResultsCollector,
        ReuseCollector,
        serving_registry,
    )
    from .served_packs import PacksBeacon
    from .tenant_metrics import TenantCollector

    redis = redis_client(settings)
    beat = Heartbeat(redis, settings.worker_id, heartbeat_path(settings),
                     settings.heartbeat_interval_s, settings.heartbeat_ttl_s,
                     notes=[*(f"isolation: {i.describe()}" for i in isolations or []),
                            *(f"reuse: {r.describe()}" for r in reuses or [])])
    beat.start()
    packs = PacksBeacon(redis, settings.worker_id, settings.packs_dir, settings.heartbeat_ttl_s)
    served = Loop("evalfleet-packs", packs.publish, settings.heartbeat_interval_s).start()
    registry = None
    if settings.metrics_port:
        registry = serving_registry(QueueCollector(redis, settings.queues), ResultsCollector(redis),
                                    TenantCollector(redis),
                                    ContainerCollector(docker_client(settings), settings.worker_id),
                                    IsolationCollector(isolations or []),
                                    ReuseCollector(reuses or []), WebhookCollector(redis))
        start_http_server(settings.metrics_port, addr=settings.metrics_addr, registry=registry)
    seal = (signer or configured(settings)).seal
    forwarder = IntakeForwarder(redis, app, consumer=settings.worker_id,
                                ttl_s=settings.result_ttl_s, seal=seal,
                                parking=parking(settings, redis, seal))
    try:
        forwarder.ensure_group()
    except Exception as err:  # a full Redis refuses it: the forwarder's first read retries
        log.warning("intake group not created yet: %s", err)
    intake = Loop("evalfleet-intake", forwarder.forward_once, 0.0).start()
    archiving = start_archiver(settings, redis_client(settings), registry)
    reaper = start_reaper(settings, redis)
    engine = docker_client(settings)
    lost = Loop("evalfleet-leftover-reaper", lambda: leftovers.reap(engine, redis, settings),
                settings.reaper_interval_s).start()
    return [beat, served, intake, *archiving, _Stopper(reaper), lost,
            *start_webhooks(settings, redis), *start_admission(settings)]


def parking(settings: Settings, redis: Any, seal: Any) -> Any:
    """The forwarder's side of admission (:mod:`tasks.admission.parking`)."""
    from evalfleet.tasks.admission.parking import Parking

    wanted = settings.admission
    return Parking(redis, wanted.mode, wanted.fleet_share, seal, settings.result_ttl_s)


def start_admission(settings: Settings) -> list[Any]:
    """This worker's slots, told every heartbeat, and its admitter's process beside it once
    admission is wanted (:class:`AdmitterWatch`)."""
    from evalfleet.tasks.queueing import queue_for
    from evalfleet.tasks.redis_keys import slots_key

    redis = redis_client(settings)
    slots = " ".join([str(settings.concurrency), *(queue_for(q) for q in settings.queues)])
    told = Loop("evalfleet-slots", lambda: redis.set(slots_key(settings.worker_id), slots,
                                                     ex=int(settings.heartbeat_ttl_s)),
                settings.heartbeat_interval_s).start()
    watch = AdmitterWatch(settings, redis)
    return [told, Loop("evalfleet-admitter-watch", watch.check, WATCH_INTERVAL_S).start(), watch]


class AdmitterWatch:
    """Starts this node's admitter (``evalfleet admitter``, :mod:`workers.admitting`) once
    admission is wanted — ``EVALFLEET_ADMISSION__MODE=on``, or ``auto`` and the fleet has a
    tenant or runs waiting — and starts it again if it exits. A fleet without tenants runs
    no admitter."""

    def __init__(self, settings: Settings, redis: Any) -> None:
        self.settings, self.redis = settings, redis
        self.process = SideProcess(settings, "admitter")
        self.started = False

    def check(self) -> None:
        if self.started:
            self.process.check()
        elif self.wanted():
            self.process.start()
            self.started = True

    def wanted(self) -> bool:
        from evalfleet.tasks.redis_keys import ACTIVE_KEY, TENANTS_KEY

        mode = self.settings.admission.mode
        return mode == "on" or (mode == "auto" and bool(
            self.redis.hlen(TENANTS_KEY) or self.redis.scard(ACTIVE_KEY)))

    def stop(self) -> None:
        if self.started:
            self.process.stop()


def start_webhooks(settings: Settings, redis: Any) -> list[Loop]:
    """The webhook dispatcher (:mod:`tasks.webhooks`): one loop hears published results,
    ``senders`` loops send what is due. Here, in the main process on the worker's own
    network, never in a sandbox (sandboxes have none)."""
    from evalfleet.tasks.webhooks.dispatcher import Dispatcher
    from evalfleet.tasks.webhooks.payload import no_link

    from .archiving import result_link
    from .delivery_metrics import WebhookMetrics

    config = settings.webhooks.config()
    dispatcher = Dispatcher(redis, config, consumer=settings.worker_id,
                            observer=WebhookMetrics(), link=result_link(settings) or no_link)
    try:
        dispatcher.ensure_group()
    except Exception as err:  # a full Redis refuses it: the first read makes it again
        log.warning("webhooks group not created yet: %s", err)
    heard = Loop("evalfleet-webhooks", dispatcher.hear, 0.0).start()
    return [heard, *(Loop(f"evalfleet-webhooks-{n}", dispatcher.send_due, 0.25).start()
                     for n in range(config.senders))]


def start_archiver(settings: Settings, redis: Any, registry: Any = None) -> list[Any]:
    """The archiver's process beside this node (:mod:`workers.archiving`) and its watch;
    none when the archive is off. ``registry`` gets the backlog's gauges.

    Raises:
        SystemExit: the archive URL is invalid, or its store's client is missing.
    """
    from evalfleet.tasks.archive.archiver import ensure_group

    from .archiving import NICENESS, open_archive
    from .delivery_metrics import ArchiveCollector

    if open_archive(settings) is None:
        return []
    try:
        ensure_group(redis)  # before this node publishes anything
    except Exception as err:  # a full or absent Redis: the archiver's first step retries
        log.warning("archive group not created yet: %s", err)
    process = SideProcess(settings, "archiver", NICENESS).start()
    if registry is not None:
        registry.register(ArchiveCollector(redis))
    return [process, Loop("evalfleet-archiver-watch", process.check, WATCH_INTERVAL_S).start()]


class _Stopper:
    """Gives a threading.Event the ``stop()`` of the other services."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def stop(self) -> None:
        self.event.set()
