"""The compose stack for real: containerised workers run the example packs, a real Prometheus
scrapes them, and every dashboard query and alert expression is evaluated against it.

One stack per module (about a minute): `docker-compose up` with locally built images and two
workers, a batch of runs (each example pack's passing and failing submission, a run that hits
the sandbox's limits, one whose profile image is missing, one on a pooled profile), then the
checks (results, health checks, Prometheus targets, dashboard queries, alert rules, a worker
stopped mid-run), then `docker-compose down -v` and an assertion that no container, volume,
network or sandbox of the project is left on the engine.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from composestack import (
    LOCAL_IMAGES,
    PACKS,
    ROOT,
    Stack,
    as_prometheus_sees_it,
    example_requests,
    metric_names,
    pack,
    run_id,
)
from services import missing_service

from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.messages import RunRequest, RunResult
from evalfleet.workers.devtools.local_fleet import wait_until

DASHBOARD = ROOT / "deploy" / "grafana" / "evalfleet.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
WORKERS = 2


def limit_request() -> RunRequest:
    """A run whose commands flood stdout, outlive their timeout and exceed memory."""
    commands = [
        {"run": "head -c 4000000 /dev/zero | tr '\\0' x"},
        {"run": "sleep 30", "timeout_ms": 1000},
        {"run": ["python3", "-c", "b = bytearray(2 * 1024 ** 3); print(len(b))"]},
    ]
    return RunRequest(run_id=run_id("limits"), pack=pack("fizzbuzz-coding"),
                      submission={"files": {"fizzbuzz.py": "pass\n"}, "commands": commands})


def broken_profile_request() -> RunRequest:
    """A run on a profile whose image does not exist: an infra_error, never the candidate's."""
    passing = load_submission(PACKS / "fizzbuzz-coding" / "submissions" / "pass")
    return RunRequest(run_id=run_id("broken"), pack=pack("fizzbuzz-coding", profile="broken"),
                      submission=passing)


def pooled_request() -> RunRequest:
    """A run on the profile with a warm pool (compose.test.yml)."""
    passing = load_submission(PACKS / "fizzbuzz-coding" / "submissions" / "pass")
    return RunRequest(run_id=run_id("pooled"), pack=pack("fizzbuzz-coding", profile="warm"),
                      submission=passing)


@dataclass
class Batch:
    results: dict[str, RunResult]
    expected: dict[str, str]
    """Run id → the Clawdiators result of each example run."""
    streamed: set[str]
    """Run ids read back through a consumer group, as a platform follows results (the
    group's lag metrics exist from then on: the consumer alerts read them)."""


@pytest.fixture(scope="module")
def stack(docker_client: Any) -> Iterator[Stack]:
    """The compose stack, up with WORKERS workers; torn down and checked for leftovers."""
    if shutil.which("docker-compose") is None:
        missing_service("docker-compose", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    for image in LOCAL_IMAGES.values():
        try:
            docker_client.images.get(image)
        except Exception as error:  # not built: scripts/build-worker-image.sh
            missing_service(f"image {image}", error)
    current = subprocess.run(["bash", str(ROOT / "scripts" / "build-worker-image.sh"), "--check"],
                             capture_output=True, text=True, check=False)
    assert current.returncode == 0, current.stderr
    stack = Stack()
    hosts: set[str] = set()
    try:
        stack.up(WORKERS)
        hosts = stack.worker_hosts(docker_client)
        yield stack
    finally:
        try:
            stack.down()
        except subprocess.CalledProcessError as error:
            pytest.fail(f"docker-compose down failed: {error.stderr}")
    assert stack.leftovers(docker_client, hosts) == []


@pytest.fixture(scope="module")
def batch(stack: Stack) -> Batch:
    """The batch of runs through the stack, submitted once per module."""
    from evalfleet.tasks.platform import EvalfleetClient

    examples = example_requests()
    requests = [r for r, _ in examples.values()]
    requests += [limit_request(), broken_profile_request(), pooled_request()]
    client = EvalfleetClient(stack.redis_url)
    try:
        wait_until(lambda: _pings(client), 60, "Redis of the stack did not answer")
        client.submit_many(requests)
        results = {r.run_id: client.wait(r.run_id, timeout=180) for r in requests}
        streamed = {r.run_id for r in client.results(group="compose-test", block_ms=500,
                                                     stop_when_idle=True)}
    finally:
        client.close()
    return Batch(results, {rid: result for rid, (_, result) in examples.items()}, streamed)


def _pings(client: Any) -> bool:
    try:
        return bool(client.redis.ping())
    except Exception:  # not up yet
        return False


def test_containerised_workers_score_the_example_packs(batch: Batch) -> None:
    """Sandboxes started by workers in containers (sibling containers) score every pack
    under gVisor, the default profile's runtime on an engine that has it (no usage figure
    there, with the reason); on the runc profile they report what they used (read inside
    the sandbox: the host's cgroups are not in the worker's view)."""
    for rid, want in batch.expected.items():
        result = batch.results[rid]
        assert (result.outcome, result.scorecard and result.scorecard.result) == (
            "scored", want), result.reason
        assert result.resources["runtime"] == "runsc", rid
        assert result.resources["usage"] is None, rid
        assert "gVisor" in result.resources["usage_unavailable"], rid
    pooled = next(r for rid, r in batch.results.items() if rid.split("-")[1] == "pooled")
    assert pooled.resources["runtime"] == "runc"
    usage = pooled.resources["usage"]
    assert usage["memory_peak_bytes"] > 0 and usage["cpu_seconds"] > 0
    assert set(batch.results) <= batch.streamed  # every result reached a consumer group too


def test_the_workers_sign_with_the_one_key_on_their_shared_volume(stack: Stack,
                                                                   batch: Batch) -> None:
    """Both containerised workers recorded the one key the first made on the
    `evalfleet-keys` volume (a key of each worker's own would be two), and it signed every
    result."""
    from evalfleet.tasks.platform import EvalfleetClient
    from evalfleet.tasks.redis_keys import SIGNING_KEYS

    client = EvalfleetClient(stack.redis_url)
    try:
        recorded = {key.decode() for key in client.redis.hkeys(SIGNING_KEYS)}
    finally:
        client.close()
    signatures = {r.signature.key_id if r.signature else None for r in batch.results.values()}

    assert len(recorded) == 1 and signatures == recorded


def test_limits_a_missing_image_and_the_warm_pool_take_their_paths(batch: Batch) -> None:
    by_label = {rid.split("-")[1]: r for rid, r in batch.results.items()
                if rid.split("-")[1] in {"limits", "broken", "pooled"}}
    limits, broken, pooled = by_label["limits"], by_label["broken"], by_label["pooled"]

    assert limits.outcome == "scored"
    assert {"oom_killed", "timed_out", "output_truncated"} <= {
        k for k, v in limits.resources.items() if v is True}
    assert broken.outcome == "infra_error"
    assert broken.scorecard is None
    assert (pooled.outcome, pooled.scorecard and pooled.scorecard.result) == ("scored", "win")


def test_prometheus_scrapes_every_worker_and_redis(stack: Stack, batch: Batch) -> None:
    stack.wait_for_scrapes(WORKERS)
    stack.wait_for_job("redis")  # its first scrape may come after the workers'
    redis = stack.prometheus("query", query='up{job="redis"}')["result"]
    assert [s["value"][1] for s in redis] == ["1"]
    assert stack.prometheus("query", query="redis_up")["result"][0]["value"][1] == "1"


def test_worker_containers_pass_their_health_check(stack: Stack, docker_client: Any) -> None:
    """The image's HEALTHCHECK (`evalfleet health`) turns healthy in the real container."""
    label = {"label": [f"com.docker.compose.project={stack.project}",
                       "com.docker.compose.service=worker"]}

    def healthy() -> bool:
        states = [c["State"] for c in (docker_client.api.inspect_container(c["Id"])
                                       for c in docker_client.api.containers(filters=label))]
        return len(states) == WORKERS and all(s["Health"]["Status"] == "healthy"
                                              for s in states)

    wait_until(healthy, 90, "worker containers did not become healthy")


def dashboard_queries() -> list[tuple[str, str]]:
    """Each panel's queries, with the dashboard's variables at "All" (Grafana's default)."""
    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], as_prometheus_sees_it(target["expr"], dashboard))
            for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_every_dashboard_query_returns_data(stack: Stack, batch: Batch) -> None:
    """After the batch, each panel's PromQL evaluates, names only exported metrics, has data.

    rate() needs two scrapes of a series, so the check is retried for up to a minute.
    """
    stack.wait_for_scrapes(WORKERS)
    problems: list[str] = []

    def none_left() -> bool:
        problems[:] = dashboard_problems(stack)
        return not problems

    with contextlib.suppress(TimeoutError):
        wait_until(none_left, 60, "dashboard queries without data")
    assert problems == []


def dashboard_problems(stack: Stack) -> list[str]:
    exported = stack.exported_names()
    problems = []
    for title, expr in dashboard_queries():
        unknown = metric_names(expr) - exported
        if unknown:
            problems.append(f"{title}: {expr} reads metrics nobody exports: {sorted(unknown)}")
        elif not stack.prometheus("query", query=expr)["result"]:
            problems.append(f"{title}: {expr} returned no data")
    return problems


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def test_alerts_load_evaluate_and_read_exported_metrics(stack: Stack, batch: Batch) -> None:
    """Prometheus loaded every rule and evaluated it without error; each reads real metrics.
    A family with no series yet (the results group's, until a scrape after the batch's
    consumer made the group) is waited for: the scrape that finds it may come later."""
    stack.wait_for_scrapes(WORKERS)
    read = set().union(*(metric_names(rule["expr"]) for rule in alert_rules()))
    wait_until(lambda: read <= stack.exported_names(), 60,
               "Prometheus did not scrape every metric the alerts read")
    exported = stack.exported_names()
    wanted = {rule["alert"] for rule in alert_rules()}

    def evaluated() -> dict[str, Any]:
        groups = stack.prometheus("rules", type="alert")["groups"]
        found = {r["name"]: r for g in groups for r in g["rules"]}
        done = all(found.get(n, {}).get("lastEvaluation", "0001").startswith("20") for n in wanted)
        return found if done else {}

    wait_until(lambda: bool(evaluated()), 60, "Prometheus did not evaluate every alert rule")
    loaded = evaluated()
    assert set(loaded) == wanted
    assert {n: r["health"] for n, r in loaded.items() if r["health"] != "ok"} == {}
    for rule in alert_rules():
        assert metric_names(rule["expr"]) <= exported, rule["alert"]
        stack.prometheus("query", query=rule["expr"])  # evaluates without error


def test_stopping_a_busy_worker_lets_its_run_finish(stack: Stack, docker_client: Any) -> None:
    """`docker stop` (SIGTERM) of a worker mid-run: the run finishes and is published first.

    Runs last in this module: it leaves the stack with one worker fewer.
    """
    from evalfleet.tasks.platform import EvalfleetClient

    passing = load_submission(PACKS / "fizzbuzz-coding" / "submissions" / "pass")
    request = RunRequest(run_id=run_id("drain"), pack=pack("fizzbuzz-coding"),
                         submission={**passing.model_dump(), "commands": [{"run": "sleep 6"}]})
    client = EvalfleetClient(stack.redis_url)
    try:
        client.submit(request)
        owner = _sandbox_owner(docker_client, request.run_id)
        worker = docker_client.containers.get(owner.rsplit("-", 1)[0])
        started = time.monotonic()
        worker.stop(timeout=120)
        stopped_after = time.monotonic() - started
        result = client.wait(request.run_id, timeout=30)
    finally:
        client.close()

    worker.reload()
    assert (result.outcome, result.scorecard and result.scorecard.result) == ("scored", "win")
    assert result.worker == owner and result.attempt == 1
    assert worker.attrs["State"]["ExitCode"] == 0  # a warm shutdown, not a kill
    assert stopped_after < 60


def _sandbox_owner(docker_client: Any, rid: str) -> str:
    """The worker id on the sandbox container of run ``rid``, once it exists."""
    found: list[str] = []

    def started() -> bool:
        found[:] = [c["Labels"]["evalfleet.worker"] for c in docker_client.api.containers(
            filters={"label": f"evalfleet.run_id={rid}"})]
        return bool(found)

    wait_until(started, 60, f"no sandbox for {rid}")
    return found[0]
