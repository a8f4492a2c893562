"""Deploy files checked without running them: the compose file (every profile), the Grafana
dashboard and provisioning (Grafana is not packaged here, so it never runs in tests), and
Prometheus's own checker on the alerts and scrape config."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from composestack import ROOT, Stack, as_prometheus_sees_it
from services import missing_service

from evalfleet.workers.devtools.local_engine import PRIVILEGES

DEPLOY = ROOT / "deploy"
DASHBOARD = DEPLOY / "grafana" / "evalfleet.json"
PROVISIONING = DEPLOY / "grafana" / "provisioning"
ROWS = ["Service level", "Queue health", "Workers", "Sandbox", "Verdicts", "Redis", "Archive",
        "Admission (tenants' fair shares)", "Tenant $tenant"]


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        missing_service(name, FileNotFoundError("not on PATH (scripts/setup.sh)"))
    return found


def compose_config(*profiles: str, stack: Stack | None = None) -> dict[str, Any]:
    """``docker-compose config`` of the stack: the file as compose itself reads it."""
    stack = stack or Stack()
    args = [a for p in profiles for a in ("--profile", p)]
    done = subprocess.run([tool("docker-compose"), "-f", str(ROOT / "docker-compose.yml"),
                           *args, "config"], cwd=ROOT, env=stack.env, capture_output=True,
                          text=True, check=True, timeout=60)
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """Source → target of a service's volumes (as ``docker-compose config`` prints them)."""
    return dict(v.split(":")[:2] for v in service.get("volumes", []))


def test_compose_file_is_valid_with_every_profile() -> None:
    services = compose_config("flower", "sidecar", "ha")["services"]
    ha = ("redis-replica", "sentinel-1", "sentinel-2", "sentinel-3")
    assert set(services) == {"redis", "redis-exporter", "archive", "worker", "prometheus",
                             "grafana", "flower", "sidecar-engine", "sidecar-worker", *ha}
    assert {n: s["profiles"] for n, s in services.items() if s.get("profiles")} == {
        "flower": ["flower"], "sidecar-engine": ["sidecar"], "sidecar-worker": ["sidecar"],
        **{name: ["ha"] for name in ha}}


def test_compose_sidecar_worker_reaches_its_engine_only_through_the_shared_socket() -> None:
    """The pod's worker: no host socket, no extra group, the engine's socket volume only; it
    starts once the engine is healthy and is scraped as a worker; otherwise the same worker."""
    services = compose_config("sidecar")["services"]
    pod_worker, worker = services["sidecar-worker"], services["worker"]

    assert pod_worker["volumes"] == ["engine-socket:/engine:ro",
                                     f"{ROOT / 'examples' / 'packs'}:/srv/evalfleet/packs:ro",
                                     "evalfleet-keys:/var/lib/evalfleet/keys:rw"]
    assert pod_worker["environment"]["EVALFLEET_DOCKER_URL"] == "unix:///engine/docker.sock"
    assert "group_add" not in pod_worker
    assert pod_worker["depends_on"]["sidecar-engine"] == {"condition": "service_healthy"}
    assert pod_worker["networks"]["default"]["aliases"] == ["worker"]
    same = ("image", "read_only", "cap_drop", "security_opt", "stop_signal", "stop_grace_period")
    assert {k: pod_worker[k] for k in same} == {k: worker[k] for k in same}
    assert {k: v for k, v in pod_worker["environment"].items() if k != "EVALFLEET_DOCKER_URL"} \
        == {k: v for k, v in worker["environment"].items() if k != "EVALFLEET_DOCKER_URL"}


def test_compose_sidecar_engine_is_privileged_with_its_data_on_a_volume() -> None:
    """The engine gets what the engine tests run it with
    (workers.devtools.local_engine.PRIVILEGES), its data root on an anonymous volume (removed
    with the container, like an emptyDir), the socket volume, the preload directory
    read-only, and a restart policy."""
    engine = compose_config("sidecar")["services"]["sidecar-engine"]

    assert {k: engine.get(k) for k in PRIVILEGES} == PRIVILEGES
    anonymous, *named = engine["volumes"]
    assert anonymous == "/var/lib/docker"
    assert mounts({"volumes": named}) == {
        "engine-socket": "/engine", str(ROOT / "build" / "engine-images"): "/preload"}
    assert named[-1].endswith(":/preload:ro")
    assert engine["restart"] == "unless-stopped"


def test_compose_ha_profile_puts_redis_behind_three_sentinels() -> None:
    """The `ha` profile: a replica of `redis` and three sentinels monitoring it (quorum 2,
    its password); the workers pass REDIS_SENTINELS on, so they reach the primary only
    through the sentinels when it is set (a failover of this stack was checked by hand:
    docs/operations.md)."""
    services = compose_config("ha")["services"]
    sentinels = [services[f"sentinel-{n}"] for n in (1, 2, 3)]
    script = sentinels[0]["command"][0]

    assert "--replicaof" in services["redis-replica"]["command"]
    assert services["redis-replica"]["command"][-2:] == ["redis", "6379"]
    assert all(s["command"] == sentinels[0]["command"] for s in sentinels)
    assert "sentinel monitor evalfleet redis 6379 2" in script
    assert "sentinel auth-pass evalfleet $$REDIS_PASSWORD" in script  # the container's
    assert "--masterauth" in services["redis"]["command"]
    worker = services["worker"]["environment"]
    assert (worker["EVALFLEET_REDIS_SENTINELS"], worker["EVALFLEET_REDIS_MASTER"]) == (
        "", "evalfleet")


def test_compose_workers_scale_and_stop_gracefully() -> None:
    worker = compose_config()["services"]["worker"]
    # --scale needs no fixed name and no host port.
    assert "container_name" not in worker and "ports" not in worker
    assert worker["stop_signal"] == "SIGTERM"
    assert mounts(worker) == {"/var/run/docker.sock": "/var/run/docker.sock",
                              str(ROOT / "examples" / "packs"): "/srv/evalfleet/packs",
                              # the signing key the first worker makes, shared by all
                              "evalfleet-keys": "/var/lib/evalfleet/keys"}
    # Passed through: empty means the fleet id stored in the stack's own Redis, never a
    # name derived from the Redis host ("redis" in every project on the engine).
    assert "EVALFLEET_FLEET" in worker["environment"]


def test_compose_workers_mount_the_packs_directory_read_only() -> None:
    """Every worker serves the packs of PACKS_DIR (default: the example packs), mounted
    read-only at EVALFLEET_PACKS_DIR."""
    services = compose_config("sidecar")["services"]

    for name in ("worker", "sidecar-worker"):
        packs_dir = services[name]["environment"]["EVALFLEET_PACKS_DIR"]
        assert f"{ROOT / 'examples' / 'packs'}:{packs_dir}:ro" in services[name]["volumes"]


def test_compose_redis_is_durable_never_evicts_and_needs_a_password() -> None:
    stack = Stack()
    command = compose_config(stack=stack)["services"]["redis"]["command"]
    pairs = dict(zip(command[1::2], command[2::2], strict=True))
    assert (pairs["--appendonly"], pairs["--appendfsync"], pairs["--maxmemory-policy"]) == (
        "yes", "everysec", "noeviction")
    assert pairs["--requirepass"] == stack.password


def dashboard() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return found


def test_dashboard_has_the_rows_and_a_sound_layout() -> None:
    """The rows in order (one per tenant: the last repeats over $tenant), no two panels in
    one place."""
    panels = dashboard()["panels"]
    assert [p["title"] for p in panels if p["type"] == "row"] == ROWS
    assert [p.get("repeat") for p in panels if p["type"] == "row"][-1] == "tenant"
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["h"] > 0, panel["title"]
    cells = [(p["gridPos"]["y"], p["gridPos"]["x"]) for p in panels]
    assert len(cells) == len(set(cells)), "two panels share a position"


def queries() -> list[tuple[str, str]]:
    """Every panel's (title, PromQL) as written, with Grafana's variables."""
    return [(p["title"], t["expr"]) for p in dashboard()["panels"] if p["type"] != "row"
            for t in p["targets"]]


def test_every_panel_queries_the_dashboards_prometheus_datasource() -> None:
    data = dashboard()
    source, *variables = data["templating"]["list"]
    assert (source["name"], source["type"], source["query"]) == (
        "datasource", "datasource", "prometheus")
    assert [v["name"] for v in variables] == ["namespace", "profile", "worker", "tenant"]
    for variable in variables:
        # Queried from the same datasource; "All" (the default) is a regex matching every
        # value, and series without the label (compose has no namespace).
        assert variable["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert (variable["includeAll"], variable["allValue"]) == (True, ".*")
        assert variable["current"]["value"] == ["$__all"]
    for panel in (p for p in data["panels"] if p["type"] != "row"):
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            # Only the dashboard's own variables: test_compose.py evaluates each expr with
            # them at "All" (as_prometheus_sees_it).
            leftover = as_prometheus_sees_it(target["expr"], data)
            assert "$" not in leftover, target["expr"]


#: The selectors a panel's metric must carry: every series by namespace; a worker's own
#: series by worker (not the queue gauges, which are Redis's, read by every worker alike);
#: by profile where the metric has the label (queue = evalfleet.<profile>, or profile).
NAMESPACE = 'namespace=~"$namespace"'
WORKER = 'instance=~"$worker"'
BY_PROFILE = {"queue": 'queue=~"evalfleet[.]($profile)"', "profile": 'profile=~"$profile"'}
PROFILE_LABEL = {"evalfleet_runs_total": "queue", "evalfleet_run_duration_seconds_bucket": "queue",
                 "evalfleet_queue_depth": "queue", "evalfleet_sandbox_pool_idle": "profile",
                 "evalfleet_sandbox_pool_target": "profile",
                 "evalfleet_sandbox_pool_takes_total": "profile"}
SELECTOR = re.compile(r"\b(evalfleet_[a-z0-9_]+|redis_[a-z0-9_]+|up)(?:\{([^}]*)\})?")


def wanted_matchers(metric: str) -> set[str]:
    if metric.startswith("redis_"):
        return {NAMESPACE}
    wanted = {NAMESPACE} if metric.startswith("evalfleet_queue_") else {NAMESPACE, WORKER}
    if metric in PROFILE_LABEL:
        wanted.add(BY_PROFILE[PROFILE_LABEL[metric]])
    return wanted


def test_every_query_follows_the_namespace_profile_and_worker_variables() -> None:
    """Each selector in each panel carries the variables' matchers its metric can take."""
    missing = []
    for title, expr in queries():
        for metric, matchers in SELECTOR.findall(expr):
            have = {m.strip() for m in matchers.split(",")}
            if not wanted_matchers(metric) <= have:
                missing.append(f"{title}: {metric}{{{matchers}}}")
    assert missing == []


def test_the_variables_list_their_values_from_the_workers_series() -> None:
    """namespace and worker from the workers' scrape targets, profile from the queue gauge
    (whose queue label is evalfleet.<profile>: the regex keeps the profile)."""
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["namespace"]["query"]["query"] == \
        'label_values(up{job="evalfleet-workers"}, namespace)'
    assert variables["worker"]["query"]["query"] == \
        'label_values(up{job="evalfleet-workers", namespace=~"$namespace"}, instance)'
    profile = variables["profile"]
    assert profile["query"]["query"] == \
        'label_values(evalfleet_queue_depth{namespace=~"$namespace"}, queue)'
    assert re.fullmatch(profile["regex"].strip("/"), "evalfleet.default").group(1) == "default"


def test_promtool_parses_every_query_as_prometheus_receives_it(tmp_path: Path) -> None:
    """With the variables at "All", every panel query is valid PromQL (promtool checks each
    as a recording rule's expression)."""
    data = dashboard()
    rules = [{"record": f"dashboard:query_{i}", "expr": as_prometheus_sees_it(expr, data)}
             for i, (_, expr) in enumerate(queries())]
    (tmp_path / "queries.yml").write_text(yaml.safe_dump(
        {"groups": [{"name": "dashboard", "rules": rules}]}))
    done = subprocess.run([tool("promtool"), "check", "rules", str(tmp_path / "queries.yml")],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_grafana_provisioning_points_at_the_stack() -> None:
    (source,) = yaml.safe_load((PROVISIONING / "datasources" / "prometheus.yml").read_text())[
        "datasources"]
    assert (source["type"], source["url"]) == ("prometheus", "http://prometheus:9090")
    (provider,) = yaml.safe_load((PROVISIONING / "dashboards" / "evalfleet.yml").read_text())[
        "providers"]
    grafana = mounts(compose_config()["services"]["grafana"])
    assert grafana[str(PROVISIONING)] == "/etc/grafana/provisioning"
    assert Path(grafana[str(DASHBOARD)]).parent == Path(provider["options"]["path"])


def test_promtool_accepts_the_alerts_and_the_scrape_config(tmp_path: Path) -> None:
    promtool = tool("promtool")
    subprocess.run([promtool, "check", "rules", str(DEPLOY / "prometheus" / "alerts.yml")],
                   capture_output=True, text=True, check=True, timeout=60)
    # The alerts' own unit tests: synthetic series, which alerts fire and which do not.
    tested = subprocess.run([promtool, "test", "rules", "alerts.test.yml"],
                            cwd=DEPLOY / "prometheus", capture_output=True, text=True,
                            check=False, timeout=60)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    # The scrape config names the rules by their path inside the Prometheus container.
    config = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    shutil.copy(DEPLOY / "prometheus" / "alerts.yml", tmp_path / "alerts.yml")
    (tmp_path / "prometheus.yml").write_text(
        config.replace("/etc/prometheus/alerts.yml", str(tmp_path / "alerts.yml")))
    done = subprocess.run([promtool, "check", "config", str(tmp_path / "prometheus.yml")],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
