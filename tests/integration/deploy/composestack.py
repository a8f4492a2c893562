"""The compose stack under test: docker-compose.yml with locally built images, on its own project.

Every service whose image can be built here runs (Redis, the Redis exporter, containerised
workers, Prometheus from Debian's package); Grafana cannot be built without a registry, so
its provisioning is checked statically (test_grafana.py). Nothing is published beyond loopback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.messages import RunRequest
from evalfleet.workers.devtools.local_fleet import free_port, wait_until

ROOT = Path(__file__).parents[3]
HERE = Path(__file__).parent
PACKS = ROOT / "examples" / "packs"
#: Each example pack: (case key, Clawdiators result of its passing, of its failing submission).
EXPECTED = {"fizzbuzz-coding": (None, "win", "loss"), "invoice-json": ("acme", "win", "loss"),
            "support-reply-hybrid": (None, "win", "loss")}
#: The images the stack runs. The worker's and the engine's follow WORKER_IMAGE and
#: ENGINE_IMAGE as scripts/build-worker-image.sh does, so that checkouts sharing one Docker
#: engine can each test the images they built.
LOCAL_IMAGES = {
    "WORKER_IMAGE": os.environ.get("WORKER_IMAGE", "evalfleet/worker:latest"),
    "REDIS_IMAGE": "evalfleet/redis:local",
    "REDIS_EXPORTER_IMAGE": "evalfleet/redis-exporter:local",
    "PROMETHEUS_IMAGE": "evalfleet/prometheus:local",
    "ARCHIVE_IMAGE": "evalfleet/seaweedfs:local",
    "ENGINE_IMAGE": os.environ.get("ENGINE_IMAGE", "evalfleet/engine:latest"),
}
ENGINE_IMAGE = LOCAL_IMAGES["ENGINE_IMAGE"]
SERVICES = ["redis", "redis-exporter", "archive", "worker", "prometheus"]
#: Metric names we vouch for in PromQL: ours and the Redis exporter's.
METRIC_NAME = re.compile(r"\b((?:evalfleet|redis)_[a-z0-9_]+)\b")


def pack(name: str, **sandbox: Any) -> dict[str, Any]:
    """An example pack's mapping, its ``version.sandbox`` updated with ``sandbox``."""
    mapping: dict[str, Any] = yaml.safe_load((PACKS / name / "pack.yaml").read_text())
    mapping["version"].setdefault("sandbox", {}).update(sandbox)
    return mapping


def run_id(label: str) -> str:
    return f"deploy-{label}-{uuid.uuid4().hex[:8]}"


def example_requests() -> dict[str, tuple[RunRequest, str]]:
    """Each example pack's passing and failing submission, with the result expected."""
    found = {}
    for name, (case, win, lose) in EXPECTED.items():
        for kind, result in (("pass", win), ("fail", lose)):
            request = RunRequest(run_id=run_id(f"{name}-{kind}"), pack=pack(name),
                                 case_key=case,
                                 submission=load_submission(PACKS / name / "submissions" / kind))
            found[request.run_id] = (request, result)
    return found


@dataclass
class Stack:
    """One compose project: its command line, environment and loopback ports."""

    project: str = field(default_factory=lambda: f"evalfleet-test-{uuid.uuid4().hex[:8]}")
    password: str = field(default_factory=lambda: uuid.uuid4().hex)
    redis_port: int = field(default_factory=free_port)
    prometheus_port: int = field(default_factory=free_port)
    profiles: tuple[str, ...] = ()
    """Compose profiles to enable (``sidecar``: the engine-per-pod topology)."""

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EVALFLEET_")}
        env.update(LOCAL_IMAGES, REDIS_PASSWORD=self.password,
                   DOCKER_GID=str(_socket_gid()),
                   TEST_REDIS_PORT=str(self.redis_port),
                   PROMETHEUS_PORT=str(self.prometheus_port),
                   # Idle workers stop at once on SIGTERM; this only bounds a stuck one.
                   WORKER_STOP_GRACE="60s",
                   # The pool runs on the "warm" profile only (compose.test.yml).
                   WORKER_POOL_SIZE="0",
                   # Our own fleet: no other stack's reaper may touch our sandboxes.
                   EVALFLEET_FLEET=self.project)
        return env

    @property
    def redis_url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.redis_port}/0"

    def compose(self, *args: str, timeout: float = 180) -> str:
        """Run docker-compose on this project; its output.

        Raises:
            subprocess.CalledProcessError: the command failed (output in the exception).
        """
        command = ["docker-compose", "--no-ansi", "-p", self.project,
                   "-f", str(ROOT / "docker-compose.yml"), "-f", str(HERE / "compose.test.yml"),
                   *[a for p in self.profiles for a in ("--profile", p)], *args]
        done = subprocess.run(command, cwd=ROOT, env=self.env, capture_output=True, text=True,
                              timeout=timeout, check=False)
        if done.returncode:
            raise subprocess.CalledProcessError(done.returncode, command, done.stdout,
                                                done.stderr)
        return done.stdout + done.stderr

    def up(self, workers: int) -> None:
        self.compose("up", "-d", "--scale", f"worker={workers}", *SERVICES)

    def containers(self, docker: Any, service: str) -> list[dict[str, Any]]:
        """The containers of one service, stopped ones too (low-level list entries)."""
        label = {"label": [f"com.docker.compose.project={self.project}",
                           f"com.docker.compose.service={service}"]}
        found: list[dict[str, Any]] = docker.api.containers(all=True, filters=label)
        return found

    def down(self) -> None:
        # SeaweedFS takes about 25 s to stop on SIGTERM; the test's archive is removed
        # with the stack (-v), so it is not waited for.
        self.compose("stop", "-t", "2", "archive")
        self.compose("down", "-v", "--remove-orphans", "-t", "60")

    def worker_hosts(self, docker: Any, service: str = "worker") -> set[str]:
        """The worker containers' host names (their short ids), which start their worker ids."""
        return {c["Id"][:12] for c in self.containers(docker, service)}

    def leftovers(self, docker: Any, worker_hosts: set[str]) -> list[str]:
        """Containers, volumes and networks of this project, and sandboxes of its workers,
        still on the engine (low-level lists: no inspect racing other sessions' removals)."""
        label = {"label": f"com.docker.compose.project={self.project}"}
        sandboxes = docker.api.containers(all=True, filters={"label": "evalfleet.worker"})
        return ([f"container {c['Names']}" for c in docker.api.containers(all=True, filters=label)]
                + [f"volume {v.name}" for v in docker.volumes.list(filters=label)]
                + [f"network {n.name}" for n in docker.networks.list(filters=label)]
                + [f"sandbox {c['Names']}" for c in sandboxes
                   if c["Labels"]["evalfleet.worker"][:12] in worker_hosts])

    def prometheus(self, path: str, **params: str) -> Any:
        """GET Prometheus's HTTP API; the ``data`` of a successful answer.

        Raises:
            AssertionError: Prometheus answered with an error.
        """
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        url = f"http://127.0.0.1:{self.prometheus_port}/api/v1/{path}{query}"
        with urllib.request.urlopen(url, timeout=10) as page:
            body = json.load(page)
        assert body["status"] == "success", f"{path} {params}: {body}"
        return body["data"]

    def prometheus_answers(self) -> bool:
        try:
            self.prometheus("status/buildinfo")
        except OSError:
            return False
        return True

    def worker_targets(self) -> list[dict[str, Any]]:
        targets = self.prometheus("targets", state="active")["activeTargets"]
        return [t for t in targets if t["labels"]["job"] == "evalfleet-workers"]

    def wait_for_scrapes(self, workers: int, timeout: float = 90) -> None:
        """Wait until Prometheus scrapes ``workers`` healthy worker targets."""
        wait_until(self.prometheus_answers, timeout, "Prometheus did not answer")

        def all_up() -> bool:
            targets = self.worker_targets()
            return len(targets) == workers and all(t["health"] == "up" for t in targets)

        wait_until(all_up, timeout, f"Prometheus did not scrape {workers} healthy workers")

    def wait_for_job(self, job: str, timeout: float = 90) -> None:
        """Wait until Prometheus has scraped every target of ``job`` at least once."""
        def scraped() -> bool:
            targets = self.prometheus("targets", state="active")["activeTargets"]
            ours = [t for t in targets if t["labels"]["job"] == job]
            return bool(ours) and all(t["health"] != "unknown" for t in ours)

        wait_until(scraped, timeout, f"Prometheus did not scrape the {job} job")

    def exported_names(self) -> set[str]:
        return set(self.prometheus("label/__name__/values"))



def _socket_gid() -> int:
    """The group of the local engine's socket (0 without one: the static checks still run)."""
    try:
        return os.stat("/var/run/docker.sock").st_gid
    except FileNotFoundError:
        return 0


def metric_names(expr: str) -> set[str]:
    """The evalfleet_* and redis_* metric names a PromQL expression reads."""
    return set(METRIC_NAME.findall(expr))


def as_prometheus_sees_it(expr: str, dashboard: dict[str, Any]) -> str:
    """A panel's query with the dashboard's variables (``$namespace``, ``$profile``,
    ``$worker``) at their "All" value, as Grafana sends it by default: what Prometheus
    evaluates. The datasource variable is not in queries."""
    for variable in dashboard["templating"]["list"]:
        if "allValue" in variable:
            for spelling in (f"${{{variable['name']}}}", f"${variable['name']}"):
                expr = expr.replace(spelling, variable["allValue"])
    return expr
