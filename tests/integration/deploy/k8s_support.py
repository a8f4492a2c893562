"""What the Kubernetes manifests' tests share (test_k8s.py, test_k8s_scaling.py,
test_k8s_secrets.py): the variants, ``kubectl kustomize`` of a copy of deploy/k8s (once per
variant and process), and finding documents and containers in what it renders."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml
from services import missing_service

from evalfleet.tasks.queueing import PRIORITY_STEPS, queue_for

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


def by_name(docs: Any) -> dict[tuple[str, str], Any]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def host_paths(node: Any) -> list[Any]:
    """Every ``hostPath`` anywhere under ``node``."""
    if isinstance(node, dict):
        return ([node["hostPath"]] if "hostPath" in node else []) + [
            found for value in node.values() for found in host_paths(value)]
    if isinstance(node, list):
        return [found for value in node for found in host_paths(value)]
    return []


def priority_lists(profile: str) -> set[str]:
    """The Redis lists of one queue (as kombu names them; see workers.metrics.QueueCollector)."""
    queue = queue_for(profile)
    return {queue} | {f"{queue}:{step}" for step in PRIORITY_STEPS[1:]}


def config_env() -> dict[str, str]:
    data: dict[str, str] = one("ConfigMap", "evalfleet-worker")["data"]
    return data


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
