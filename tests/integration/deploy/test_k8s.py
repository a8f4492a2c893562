"""The Kubernetes manifests (deploy/k8s), checked without a cluster.

Two variants: the base (``deploy/k8s`` = ``deploy/k8s/base``: each worker pod with its own
sandbox engine as a native sidecar) and the overlay ``deploy/k8s/overlays/node-socket`` (the
nodes' Docker socket instead). What is checked, exactly:

* every file parses, and ``kubectl kustomize`` renders the base and every overlay (from a
  copy of deploy/k8s with the ``redis.env`` an operator writes);
* the rendered output has no placeholder, no ``:latest`` and no untagged image; every
  version comes from the base's ``images:`` block, the profiles' sandbox images included;
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
  KEDA reads every priority list of every queue the workers serve and sums them, targets the
  worker Deployment, authenticates with a key that exists; the PodMonitor selects the worker
  pods, a port they expose, and the job name the alerts select;
* the worker Deployment against the code: its environment builds a valid ``Settings``, the
  grace period covers the longest run (Celery's hard time limit), the probes are
  ``evalfleet health`` (liveness) and ``evalfleet health --ready`` (readiness).
"""

from __future__ import annotations

import base64
import functools
import json
import re
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from custom_kinds import SCHEMAS
from services import missing_service

from evalfleet.tasks.queueing import PRIORITY_STEPS, queue_for
from evalfleet.tasks.redis_keys import depth_key
from evalfleet.workers.app import HARD_LIMIT_MARGIN_S
from evalfleet.workers.settings import Settings

K8S = Path(__file__).parents[3] / "deploy" / "k8s"
BASE = K8S / "base"
#: Each variant's kustomization directory.
VARIANTS = {"base": K8S, "node-socket": K8S / "overlays" / "node-socket"}
KUBERNETES_VERSION = "1.30.0"
CUSTOM_KINDS = {"ScaledObject", "TriggerAuthentication", "PodMonitor", "PrometheusRule"}
#: Files of the base that are not resources (kustomize's own configuration).
NOT_RESOURCES = {"kustomization.yaml", "kustomizeconfig.yaml"}
#: What the tests write as the operator's redis.env (hex, as docs/operations.md says).
PASSWORD = "0123456789abcdef" * 4
#: What the tests write as the operator's archive.env.
ARCHIVE_URL = "s3://evalfleet-results/archive?endpoint=https://s3.example.com"


def documents() -> list[dict[str, Any]]:
    """The base's manifests, as written."""
    found = []
    for path in sorted(BASE.glob("*.yaml")):
        if path.name not in NOT_RESOURCES:
            found += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return found


@functools.cache
def rendered(variant: str) -> tuple[dict[str, Any], ...]:
    """``kubectl kustomize`` of a variant: the manifests as a cluster would receive them, once
    the operator has written the Redis password (``base/redis.env``)."""
    done = kustomize(variant, f"REDIS_PASSWORD={PASSWORD}\n")
    assert done.returncode == 0, done.stderr
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)


def kustomize(variant: str, redis_env: str | None) -> subprocess.CompletedProcess[str]:
    """``kubectl kustomize`` of a copy of deploy/k8s, with ``redis_env`` as base/redis.env
    (none: the file missing)."""
    if shutil.which("kubectl") is None:
        missing_service("kubectl", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "k8s"
        shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("redis.env", "archive.env"))
        if redis_env is not None:
            (copy / "base" / "redis.env").write_text(redis_env)
        (copy / "base" / "archive.env").write_text(f"EVALFLEET_ARCHIVE__URL={ARCHIVE_URL}\n")
        return subprocess.run(["kubectl", "kustomize", str(copy / VARIANTS[variant].relative_to(
            K8S))], capture_output=True, text=True, check=False, timeout=60)


def one(kind: str, name: str | None = None, variant: str | None = None) -> dict[str, Any]:
    """The one document of ``kind`` (and ``name``): from the files, or a rendered variant."""
    docs = documents() if variant is None else rendered(variant)
    (found,) = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    return found


def pod_spec(variant: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = one("Deployment", variant=variant)["spec"]["template"]["spec"]
    return spec


def worker_container(variant: str | None = None) -> dict[str, Any]:
    (container,) = pod_spec(variant)["containers"]
    return container


def init_container(name: str, variant: str = "base") -> dict[str, Any]:
    (container,) = [c for c in pod_spec(variant)["initContainers"] if c["name"] == name]
    return container


def engine_container() -> dict[str, Any]:
    return init_container("engine")


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


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


def by_name(docs: Any) -> dict[tuple[str, str], Any]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


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


def host_paths(node: Any) -> list[Any]:
    """Every ``hostPath`` anywhere under ``node``."""
    if isinstance(node, dict):
        return ([node["hostPath"]] if "hostPath" in node else []) + [
            found for value in node.values() for found in host_paths(value)]
    if isinstance(node, list):
        return [found for value in node for found in host_paths(value)]
    return []


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
def test_the_packs_directory_is_an_image_copied_into_an_empty_dir(variant: str) -> None:
    """EVALFLEET_PACKS_DIR is mounted read-only in the worker, from an emptyDir (not a
    ConfigMap's 1 MiB) that the ``packs`` init container fills from the packs image before
    the engine starts."""
    spec, worker = pod_spec(variant), worker_container(variant)
    packs_dir = config_env()["EVALFLEET_PACKS_DIR"]
    copier = init_container("packs", variant)
    volume = {v["name"]: v for v in spec["volumes"]}[copier["volumeMounts"][0]["name"]]

    assert spec["initContainers"][0]["name"] == "packs"  # filled before anything starts
    assert copier["volumeMounts"] == [{"name": volume["name"], "mountPath": packs_dir}]
    assert copier["command"][-1].rstrip("/") == packs_dir
    assert volume["emptyDir"]["sizeLimit"] == "1Gi"
    assert {"name": volume["name"], "mountPath": packs_dir, "readOnly": True} in \
        worker["volumeMounts"]


def test_keda_is_the_same_in_every_variant() -> None:
    for kind in ("ScaledObject", "TriggerAuthentication"):
        assert one(kind, variant="node-socket") == one(kind, variant="base")
    assert one("ScaledObject", variant="base") == one("ScaledObject")
    assert one("ScaledObject", variant="node-socket")["spec"]["scaleTargetRef"]["name"] == one(
        "Deployment", variant="node-socket")["metadata"]["name"]


def priority_lists(profile: str) -> set[str]:
    """The Redis lists of one queue (as kombu names them; see workers.metrics.QueueCollector)."""
    queue = queue_for(profile)
    return {queue} | {f"{queue}:{step}" for step in PRIORITY_STEPS[1:]}


def config_env() -> dict[str, str]:
    data: dict[str, str] = one("ConfigMap", "evalfleet-worker")["data"]
    return data


def test_keda_sums_every_priority_list_of_every_served_queue() -> None:
    """Each served queue's ten priority lists, and its runs waiting for admission."""
    scaled = one("ScaledObject")["spec"]
    triggers = scaled["triggers"]
    queues = json.loads(config_env()["EVALFLEET_QUEUES"])

    assert {t["type"] for t in triggers} == {"redis"}
    assert sorted(t["metadata"]["listName"] for t in triggers) == sorted(
        name for profile in queues
        for name in [*priority_lists(profile), depth_key(queue_for(profile))])
    formula = scaled["advanced"]["scalingModifiers"]["formula"]
    terms = sorted(term.strip() for term in formula.split("+"))
    assert terms == sorted(t["name"] for t in triggers)
    assert scaled["scaleTargetRef"]["name"] == one("Deployment")["metadata"]["name"]


def redis_secret(variant: str = "base") -> dict[str, Any]:
    """The Secret kustomize generates from redis.env (its name ends in a content hash)."""
    (secret,) = [d for d in rendered(variant) if d["kind"] == "Secret"
                 and d["metadata"]["name"].startswith("evalfleet-redis-")]
    return secret


def archive_secret(variant: str = "base") -> dict[str, Any]:
    """The Secret kustomize generates from archive.env."""
    (secret,) = [d for d in rendered(variant) if d["kind"] == "Secret"
                 and d["metadata"]["name"].startswith("evalfleet-archive-")]
    return secret


def test_the_workers_read_the_archive_url_from_its_generated_secret() -> None:
    """The archive's URL (it may carry the bucket's keys) is in a Secret made from the
    operator's archive.env, never in the repository; the worker reads it whole."""
    import base64

    secret = archive_secret()
    refs = [e["secretRef"]["name"] for e in worker_container("base")["envFrom"]
            if "secretRef" in e]

    assert base64.b64decode(secret["data"]["EVALFLEET_ARCHIVE__URL"]).decode() == ARCHIVE_URL
    assert refs == [secret["metadata"]["name"]]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_keda_authenticates_with_the_generated_redis_secret(variant: str) -> None:
    """KEDA's TriggerAuthentication names the generated Secret, hash and all (kustomize knows
    the reference from kustomizeconfig.yaml), and a key it has."""
    secret = redis_secret(variant)
    auth_names = {t["authenticationRef"]["name"]
                  for t in one("ScaledObject", variant=variant)["spec"]["triggers"]}
    (auth,) = auth_names
    refs = one("TriggerAuthentication", auth, variant)["spec"]["secretTargetRef"]
    assert [(r["parameter"], r["name"], r["key"] in secret["data"]) for r in refs] == [
        ("password", secret["metadata"]["name"], True)]
    assert secret["metadata"]["name"].startswith("evalfleet-redis-")


def test_keda_scale_in_is_slow_and_never_to_zero() -> None:
    scaled = one("ScaledObject")["spec"]
    behavior = scaled["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    # The intake stream is forwarded by workers and invisible to KEDA: keep one.
    assert scaled["minReplicaCount"] >= 1
    assert behavior["stabilizationWindowSeconds"] >= 300
    assert all(p["type"] == "Pods" and p["value"] == 1 for p in behavior["policies"])


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


def test_redis_is_durable_never_evicts_and_needs_a_password() -> None:
    (redis, _) = one("StatefulSet", "redis")["spec"]["template"]["spec"]["containers"]
    args = redis["args"]
    pairs = dict(zip(args[1::2], args[2::2], strict=True))
    assert pairs["--appendonly"] == "yes"
    assert pairs["--appendfsync"] == "everysec"
    assert pairs["--maxmemory-policy"] == "noeviction"
    assert pairs["--requirepass"] == "$(REDIS_PASSWORD)"


ROOT = K8S.parents[1]
#: Words an unfinished manifest leaves for the operator to replace.
PLACEHOLDER = re.compile(r"replace[-_ ]?me|change[-_ ]?me|placeholder|<password>|todo|fixme",
                         re.IGNORECASE)


def images_block() -> dict[str, str]:
    """The base kustomization's ``images:``: each image's name and the tag it sets."""
    block = yaml.safe_load((BASE / "kustomization.yaml").read_text())["images"]
    return {entry["name"]: entry["newTag"] for entry in block}


def images(docs: Any) -> list[str]:
    """Every image the documents name: each container's, and each profile's sandbox image
    in the worker ConfigMap (EVALFLEET_PROFILES__<NAME>__IMAGE)."""
    found = []
    for doc in docs:
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        found += [c["image"] for c in spec.get("containers", []) + spec.get("initContainers", [])]
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "evalfleet-worker":
            found += [v for k, v in doc["data"].items() if k.endswith("__IMAGE")]
    return found


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_rendered_manifests_hold_no_placeholder_and_no_latest(variant: str) -> None:
    """What `kubectl apply -k` sends: nothing for the operator to replace, no moving tag."""
    text = yaml.safe_dump_all(rendered(variant))
    assert PLACEHOLDER.findall(text) == []
    assert ":latest" not in text


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_image_has_its_version_from_the_one_images_block(variant: str) -> None:
    """The manifests name images without a tag; the base's ``images:`` sets every tag, the
    profiles' sandbox images in the worker ConfigMap included (kustomizeconfig.yaml)."""
    tags = images_block()
    written, shipped = images(documents()), images(rendered(variant))

    assert [image for image in written if ":" in image or "@" in image] == []
    assert set(written) == set(tags), "an images: entry names no image, or one is missing"
    assert all(tag and tag != "latest" for tag in tags.values())
    names = [image.rpartition(":")[0] for image in shipped]
    assert shipped == [f"{name}:{tags[name]}" for name in names]
    # The overlay drops the engine sidecar; nothing else.
    assert set(names) == set(tags) - ({"evalfleet/engine"} if variant == "node-socket" else set())


def test_evalfleet_images_carry_the_project_version() -> None:
    """evalfleet's own images (worker, engine, packs, the sandbox) ship at the project's
    version: a release bumps them with pyproject.toml."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    ours = {name: tag for name, tag in images_block().items() if name.startswith("evalfleet/")}
    assert ours == dict.fromkeys(ours, version)
    assert {"evalfleet/worker", "evalfleet/engine", "evalfleet/packs",
            "evalfleet/python"} <= set(ours)


def test_every_served_profile_names_its_sandbox_image() -> None:
    """A served profile without EVALFLEET_PROFILES__<NAME>__IMAGE would run the settings'
    default image, ``:latest``, which no ``images:`` entry rewrites."""
    data = config_env()
    for profile in json.loads(data["EVALFLEET_QUEUES"]):
        assert f"EVALFLEET_PROFILES__{profile.upper()}__IMAGE" in data, profile


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_redis_password_exists_only_in_the_generated_secret(variant: str) -> None:
    """The Secret holds exactly the operator's password (from redis.env); Redis, its exporter
    and the worker read it from there, the worker's URL is composed from it by Kubernetes,
    and the password appears nowhere in clear."""
    secret = redis_secret(variant)
    worker = worker_container(variant)
    env = {e["name"]: e for e in worker["env"]}
    names = [e["name"] for e in worker["env"]]

    assert {k: base64.b64decode(v).decode() for k, v in secret["data"].items()} == {
        "REDIS_PASSWORD": PASSWORD}
    assert PASSWORD not in yaml.safe_dump_all(rendered(variant))
    assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": secret["metadata"]["name"], "key": "REDIS_PASSWORD"}
    assert "$(REDIS_PASSWORD)@" in env["EVALFLEET_REDIS_URL"]["value"]
    assert names.index("REDIS_PASSWORD") < names.index("EVALFLEET_REDIS_URL")
    for container in one("StatefulSet", "redis", variant)["spec"]["template"]["spec"][
            "containers"]:
        (ref,) = [e["valueFrom"]["secretKeyRef"] for e in container["env"]
                  if e["name"] == "REDIS_PASSWORD"]
        assert ref == {"name": secret["metadata"]["name"], "key": "REDIS_PASSWORD"}


def test_without_the_operators_redis_env_kustomize_refuses_and_names_it() -> None:
    done = kustomize("base", None)
    assert done.returncode != 0
    assert "redis.env" in done.stderr


def test_the_operators_redis_env_is_never_committed() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(["git", "check-ignore", "-q", "deploy/k8s/base/redis.env"],
                             cwd=ROOT, check=False, timeout=30)
    assert ignored.returncode == 0


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_alerts_and_the_dashboard_ship_with_the_manifests(variant: str) -> None:
    """`kubectl apply -k` ships deploy/prometheus/alerts.yml as a PrometheusRule and
    deploy/grafana/evalfleet.json as a ConfigMap Grafana's sidecar loads, both unchanged."""
    rule = one("PrometheusRule", "evalfleet", variant)
    dashboard = one("ConfigMap", "evalfleet-dashboard", variant)
    alerts = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())

    assert rule["spec"] == alerts
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["data"] == {
        "evalfleet.json": (ROOT / "deploy" / "grafana" / "evalfleet.json").read_text()}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_custom_resources_match_their_structure(variant: str) -> None:
    """Each custom resource, as rendered, against the structural schema of its CRD's fields
    evalfleet uses (custom_kinds.py); every custom kind shipped has one."""
    import jsonschema

    customs = [d for d in rendered(variant) if d["kind"] in CUSTOM_KINDS]
    assert {d["kind"] for d in customs} == set(SCHEMAS) == CUSTOM_KINDS
    for doc in customs:
        jsonschema.validate(doc, SCHEMAS[doc["kind"]])


def test_kedas_hpa_behavior_matches_the_kubernetes_schema() -> None:
    """The ScaledObject hands its ``behavior`` to the HPA it makes: validated as an
    autoscaling/v2 HorizontalPodAutoscaler's, strictly, with the built-in schemas."""
    try:
        import kubernetes_validate
    except ImportError as error:
        missing_service("kubernetes-validate (scripts/build-worker-image.sh installs it)", error)
    scaled = one("ScaledObject", variant="base")["spec"]
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "keda-hpa-evalfleet-worker", "namespace": "evalfleet"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": scaled["scaleTargetRef"]["name"]},
                    "minReplicas": scaled["minReplicaCount"],
                    "maxReplicas": scaled["maxReplicaCount"],
                    "behavior": scaled["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]}}
    kubernetes_validate.validate(hpa, KUBERNETES_VERSION, strict=True)
