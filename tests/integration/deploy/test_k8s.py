"""The Kubernetes manifests (deploy/k8s), checked without a cluster.

Two variants: the base (``deploy/k8s`` = ``deploy/k8s/base``: each worker pod with its own
sandbox engine as a native sidecar) and the overlay ``deploy/k8s/overlays/node-socket`` (the
nodes' Docker socket instead). What is checked, exactly:

* every file parses, and ``kubectl kustomize`` renders the base and every overlay (from a
  copy of deploy/k8s with the ``redis.env`` an operator writes);
* (test_k8s_secrets.py) the rendered output has no placeholder, no ``:latest`` and no
  untagged image; every version comes from the base's ``images:`` block, the profiles'
  sandbox images included;
  the Redis password exists only in the Secret kustomize generates from ``redis.env``;
* every built-in resource (Namespace, ConfigMap, Secret, Service, StatefulSet, NetworkPolicy,
  Deployment, PodDisruptionBudget) of every variant, as rendered, validates in **strict** mode
  (unknown fields rejected) against the Kubernetes 1.30 JSON schemas shipped by the
  ``kubernetes-validate`` package;
* the base mounts no ``hostPath`` at all; its engine is a privileged native sidecar that the
  worker waits for and reaches through a shared socket; the overlay has no engine and mounts
  only the nodes' socket; KEDA's objects are the same in every variant;
* the custom resources (KEDA ScaledObject and TriggerAuthentication, Prometheus Operator
  PodMonitor and PrometheusRule), for which no schema is available offline, against a
  structural schema of the fields evalfleet uses, and by their links:
  (test_k8s_scaling.py) KEDA reads every priority list of every queue the workers serve
  and sums them, targets the worker Deployment, authenticates with a key that exists; the
  PodMonitor selects the worker pods, a port they expose, and the job name the alerts select;
* the worker Deployment against the code: its environment builds a valid ``Settings``, the
  grace period covers the longest run (Celery's hard time limit), the probes are
  ``evalfleet health`` (liveness) and ``evalfleet health --ready`` (readiness)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from custom_kinds import SCHEMAS
from k8s_support import (
    BASE,
    CUSTOM_KINDS,
    KUBERNETES_VERSION,
    NOT_RESOURCES,
    PASSWORD,
    VARIANTS,
    archive_secret,
    by_name,
    config_env,
    documents,
    engine_container,
    env_of,
    host_paths,
    one,
    pod_spec,
    redis_secret,
    rendered,
    worker_container,
)
from services import missing_service

from evalfleet.workers.app import HARD_LIMIT_MARGIN_S
from evalfleet.workers.settings import Settings


def test_kustomize_renders_every_manifest() -> None:
    listed = yaml.safe_load((BASE / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in BASE.glob("*.yaml")
                                    if p.name not in NOT_RESOURCES)
    # The base's documents and the Secrets generated from redis.env and archive.env.
    kinds = sorted([d["kind"] for d in documents()] + ["Secret", "Secret"])
    for variant in VARIANTS:
        assert sorted(d["kind"] for d in rendered(variant)) == kinds, variant
    # deploy/k8s is the base itself.
    assert by_name(rendered("base")).keys() == by_name(rendered("node-socket")).keys()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_builtin_resources_match_the_kubernetes_schema(variant: str) -> None:
    """Every built-in resource of the variant, as kustomize renders it, in strict mode."""
    try:
        import kubernetes_validate
    except ImportError as error:
        missing_service("kubernetes-validate (scripts/build-worker-image.sh installs it)", error)
    checked = []
    for doc in rendered(variant):
        if doc["kind"] not in CUSTOM_KINDS:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
            checked.append(f"{doc['kind']}/{doc['metadata']['name']}")
    assert sorted(checked) == sorted([f"{d['kind']}/{d['metadata']['name']}" for d in documents()
                                      if d["kind"] not in CUSTOM_KINDS]
                                     + [f"Secret/{redis_secret(variant)['metadata']['name']}",
                                        f"Secret/{archive_secret(variant)['metadata']['name']}"])


def test_the_base_mounts_no_host_path_at_all() -> None:
    assert host_paths(list(rendered("base"))) == []


def test_the_engine_is_a_privileged_native_sidecar_the_worker_waits_for() -> None:
    """An init container that keeps running (restartPolicy Always: started first, restarted,
    stopped last), whose startup probe the worker waits for; privileged, data on an emptyDir."""
    engine = engine_container()
    volumes = {v["name"]: v for v in pod_spec("base")["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in engine["volumeMounts"]}

    assert engine["restartPolicy"] == "Always"
    assert engine["startupProbe"]["exec"]["command"] == ["evalfleet-engine", "ready"]
    assert engine["securityContext"]["privileged"] is True
    assert "emptyDir" in volumes[mounts["/var/lib/docker"]]
    # The engine pulls every profile's image at start: it reads the workers' settings (not
    # the archive's credentials).
    assert engine["envFrom"] == [e for e in worker_container("base")["envFrom"]
                                 if "configMapRef" in e]


def test_the_worker_reaches_its_engine_through_the_shared_socket_only() -> None:
    """The worker's EVALFLEET_DOCKER_URL is the engine's socket, in a volume both mount (the
    worker read-only), owned by the worker's group; nothing of the node is mounted."""
    engine, worker = engine_container(), worker_container("base")
    socket = Path(env_of(engine)["ENGINE_SOCKET"])
    engine_mounts = {m["mountPath"]: m["name"] for m in engine["volumeMounts"]}
    worker_mounts = {m["mountPath"]: m for m in worker["volumeMounts"]}
    volume = engine_mounts[str(socket.parent)]

    assert env_of(worker)["EVALFLEET_DOCKER_URL"] == f"unix://{socket}"
    assert worker_mounts[str(socket.parent)] == {"name": volume, "mountPath": str(socket.parent),
                                                 "readOnly": True}
    assert "emptyDir" in {v["name"]: v for v in pod_spec("base")["volumes"]}[volume]
    assert env_of(engine)["ENGINE_SOCKET_GID"] == str(
        worker["securityContext"]["runAsGroup"])
    assert worker["securityContext"]["runAsNonRoot"] is True
    assert worker["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_the_node_socket_overlay_mounts_the_nodes_socket_and_has_no_engine() -> None:
    """The overlay: no sidecar, the node's socket as the only hostPath, Docker nodes only; the
    worker container otherwise exactly the base's."""
    spec, base = pod_spec("node-socket"), worker_container("base")
    worker = worker_container("node-socket")
    mounts = {m["mountPath"]: m["name"] for m in worker["volumeMounts"]}

    assert [c["name"] for c in spec.get("initContainers", [])] == ["packs"]
    assert host_paths(list(rendered("node-socket"))) == [
        {"path": "/var/run/docker.sock", "type": "Socket"}]
    assert {v["name"]: v.get("hostPath") for v in spec["volumes"]}[
        mounts["/var/run/docker.sock"]] == {"path": "/var/run/docker.sock", "type": "Socket"}
    assert env_of(worker)["EVALFLEET_DOCKER_URL"] == "unix:///var/run/docker.sock"
    assert spec["nodeSelector"] == {"evalfleet.io/sandbox-engine": "docker"}
    assert spec["securityContext"]["supplementalGroups"]
    unchanged = ("image", "args", "envFrom", "ports", "livenessProbe", "readinessProbe",
                 "resources", "securityContext")
    assert {k: worker[k] for k in unchanged} == {k: base[k] for k in unchanged}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_worker_environment_is_valid_settings(variant: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    env = dict(config_env())
    env.update(env_of(worker_container(variant)))
    # Kubernetes expands $(REDIS_PASSWORD), set from the Secret before the URL.
    env["EVALFLEET_REDIS_URL"] = env["EVALFLEET_REDIS_URL"].replace(
        "$(REDIS_PASSWORD)", PASSWORD)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()

    assert settings.queues == json.loads(env["EVALFLEET_QUEUES"])
    assert settings.docker_url == env["EVALFLEET_DOCKER_URL"]
    assert worker_container(variant)["ports"] == [{"name": "metrics",
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


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_custom_resources_match_their_structure(variant: str) -> None:
    """Each custom resource, as rendered, against the structural schema of its CRD's fields
    evalfleet uses (custom_kinds.py); every custom kind shipped has one."""
    import jsonschema

    customs = [d for d in rendered(variant) if d["kind"] in CUSTOM_KINDS]
    assert {d["kind"] for d in customs} == set(SCHEMAS) == CUSTOM_KINDS
    for doc in customs:
        jsonschema.validate(doc, SCHEMAS[doc["kind"]])
