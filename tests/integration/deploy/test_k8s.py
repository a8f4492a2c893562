"""The Kubernetes manifests (deploy/k8s), checked without a cluster.

What is checked, exactly:

* every file parses, and ``kubectl kustomize deploy/k8s`` renders all of them;
* every built-in resource (Namespace, ConfigMap, Secret, Service, StatefulSet, NetworkPolicy,
  Deployment, PodDisruptionBudget) validates in **strict** mode (unknown fields rejected)
  against the Kubernetes 1.30 JSON schemas shipped by the ``kubernetes-validate`` package;
* the custom resources (KEDA ScaledObject and TriggerAuthentication, Prometheus Operator
  PodMonitor), for which no schema is available offline, by structure and by their links:
  KEDA reads every priority list of every queue the workers serve and sums them, targets the
  worker Deployment, authenticates with a key that exists; the PodMonitor selects the worker
  pods, a port they expose, and the job name the alerts select;
* the worker Deployment against the code: its environment builds a valid ``Settings``, the
  grace period covers the longest run (Celery's hard time limit), the probes are
  ``evalfleet health`` (liveness) and ``evalfleet health --ready`` (readiness).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from services import missing_service

from tasks.queueing import PRIORITY_STEPS, queue_for
from workers.app import HARD_LIMIT_MARGIN_S
from workers.settings import Settings

K8S = Path(__file__).parents[3] / "deploy" / "k8s"
KUBERNETES_VERSION = "1.30.0"
CUSTOM_KINDS = {"ScaledObject", "TriggerAuthentication", "PodMonitor"}


def documents() -> list[dict[str, Any]]:
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            found += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return found


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    (found,) = [d for d in documents()
                if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    return found


def worker_container() -> dict[str, Any]:
    (container,) = one("Deployment")["spec"]["template"]["spec"]["containers"]
    return container


def test_kustomize_renders_every_manifest() -> None:
    if shutil.which("kubectl") is None:
        missing_service("kubectl", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    listed = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in K8S.glob("*.yaml")
                                    if p.name != "kustomization.yaml")
    rendered = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True,
                              text=True, check=True, timeout=60).stdout
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(rendered) if d)
    assert kinds == sorted(d["kind"] for d in documents())


@pytest.mark.parametrize("doc", [d for d in documents() if d["kind"] not in CUSTOM_KINDS],
                         ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_builtin_resources_match_the_kubernetes_schema(doc: dict[str, Any]) -> None:
    try:
        import kubernetes_validate
    except ImportError as error:
        missing_service("kubernetes-validate (scripts/build-worker-image.sh installs it)", error)
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def priority_lists(profile: str) -> set[str]:
    """The Redis lists of one queue (as kombu names them; see workers.metrics.QueueCollector)."""
    queue = queue_for(profile)
    return {queue} | {f"{queue}:{step}" for step in PRIORITY_STEPS[1:]}


def config_env() -> dict[str, str]:
    data: dict[str, str] = one("ConfigMap", "evalfleet-worker")["data"]
    return data


def test_keda_sums_every_priority_list_of_every_served_queue() -> None:
    scaled = one("ScaledObject")["spec"]
    triggers = scaled["triggers"]
    queues = json.loads(config_env()["EVALFLEET_QUEUES"])

    assert {t["type"] for t in triggers} == {"redis"}
    assert sorted(t["metadata"]["listName"] for t in triggers) == sorted(
        name for profile in queues for name in priority_lists(profile))
    formula = scaled["advanced"]["scalingModifiers"]["formula"]
    terms = sorted(term.strip() for term in formula.split("+"))
    assert terms == sorted(t["name"] for t in triggers)
    assert scaled["scaleTargetRef"]["name"] == one("Deployment")["metadata"]["name"]


def test_keda_authenticates_with_the_redis_secret() -> None:
    secret = one("Secret", "evalfleet-redis")["stringData"]
    auth_names = {t["authenticationRef"]["name"] for t in one("ScaledObject")["spec"]["triggers"]}
    (auth,) = auth_names
    refs = one("TriggerAuthentication", auth)["spec"]["secretTargetRef"]
    assert [(r["parameter"], r["name"], r["key"] in secret) for r in refs] == [
        ("password", "evalfleet-redis", True)]


def test_keda_scale_in_is_slow_and_never_to_zero() -> None:
    scaled = one("ScaledObject")["spec"]
    behavior = scaled["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    # The intake stream is forwarded by workers and invisible to KEDA: keep one.
    assert scaled["minReplicaCount"] >= 1
    assert behavior["stabilizationWindowSeconds"] >= 300
    assert all(p["type"] == "Pods" and p["value"] == 1 for p in behavior["policies"])


def test_worker_environment_is_valid_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dict(config_env())
    env["EVALFLEET_REDIS_URL"] = one("Secret", "evalfleet-redis")["stringData"][
        "EVALFLEET_REDIS_URL"]
    env.update({e["name"]: e["value"] for e in worker_container()["env"] if "value" in e})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()

    assert settings.queues == json.loads(env["EVALFLEET_QUEUES"])
    assert worker_container()["ports"] == [{"name": "metrics",
                                            "containerPort": settings.metrics_port}]
    # Every EVALFLEET_* key names a setting (unknown ones would be ignored silently).
    fields = set(Settings.model_fields)
    assert {k.removeprefix("EVALFLEET_").split("__")[0].lower() for k in env
            if k.startswith("EVALFLEET_")} <= fields


def test_grace_period_covers_the_longest_run(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in config_env().items():
        monkeypatch.setenv(name, value)
    longest = max(p.max_wall_s for p in Settings().profiles.values())
    pod = one("Deployment")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] >= longest + HARD_LIMIT_MARGIN_S
    strategy = one("Deployment")["spec"]["strategy"]["rollingUpdate"]
    assert strategy["maxUnavailable"] == 0


def test_probes_are_liveness_and_readiness() -> None:
    container = worker_container()
    assert container["livenessProbe"]["exec"]["command"] == ["evalfleet", "health"]
    assert container["readinessProbe"]["exec"]["command"] == ["evalfleet", "health", "--ready"]


def test_podmonitor_scrapes_the_workers_under_the_alerts_job_name() -> None:
    monitor = one("PodMonitor")["spec"]
    pod_labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    selector = monitor["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    assert {e["port"] for e in monitor["podMetricsEndpoints"]} == {"metrics"}
    assert pod_labels[monitor["jobLabel"]] == "evalfleet-workers"
    redis_pod = one("StatefulSet", "redis")["spec"]["template"]["metadata"]["labels"]
    assert pod_labels[monitor["jobLabel"]] != redis_pod[monitor["jobLabel"]] == "redis"


def test_redis_is_durable_never_evicts_and_needs_a_password() -> None:
    (redis, _) = one("StatefulSet", "redis")["spec"]["template"]["spec"]["containers"]
    args = redis["args"]
    pairs = dict(zip(args[1::2], args[2::2], strict=True))
    assert pairs["--appendonly"] == "yes"
    assert pairs["--appendfsync"] == "everysec"
    assert pairs["--maxmemory-policy"] == "noeviction"
    assert pairs["--requirepass"] == "$(REDIS_PASSWORD)"
