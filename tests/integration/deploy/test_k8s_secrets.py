"""What the rendered manifests (deploy/k8s) hold and what they must not, checked without a
cluster: no placeholder and no ``:latest``; every image's version from the one ``images:``
block; the Redis password and the archive URL only in the Secrets kustomize generates from
the operator's files, which are never committed; the alerts and the dashboard shipped with
the manifests."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tomllib

import pytest
import yaml
from k8s_support import (
    ARCHIVE_URL,
    PASSWORD,
    PLACEHOLDER,
    ROOT,
    VARIANTS,
    archive_secret,
    config_env,
    documents,
    images,
    images_block,
    init_container,
    kustomize,
    one,
    pod_spec,
    redis_secret,
    rendered,
    worker_container,
)


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


def test_the_workers_read_the_archive_url_from_its_generated_secret() -> None:
    """The archive's URL (it may carry the bucket's keys) is in a Secret made from the
    operator's archive.env, never in the repository; the worker reads it whole."""
    import base64

    secret = archive_secret()
    refs = [e["secretRef"]["name"] for e in worker_container("base")["envFrom"]
            if "secretRef" in e]

    assert base64.b64decode(secret["data"]["EVALFLEET_ARCHIVE__URL"]).decode() == ARCHIVE_URL
    assert refs == [secret["metadata"]["name"]]


def test_redis_is_durable_never_evicts_and_needs_a_password() -> None:
    (redis, _) = one("StatefulSet", "redis")["spec"]["template"]["spec"]["containers"]
    args = redis["args"]
    pairs = dict(zip(args[1::2], args[2::2], strict=True))
    assert pairs["--appendonly"] == "yes"
    assert pairs["--appendfsync"] == "everysec"
    assert pairs["--maxmemory-policy"] == "noeviction"
    assert pairs["--requirepass"] == "$(REDIS_PASSWORD)"


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
