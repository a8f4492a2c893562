"""KEDA's objects in the rendered manifests (deploy/k8s), checked without a cluster: the same in
every variant; every priority list of every served queue and its runs waiting for
admission, summed; authenticated with the generated Secret; scaling in slowly, never to
zero; the HPA behaviour valid against the Kubernetes schema."""

from __future__ import annotations

import json

import pytest
from k8s_support import (
    KUBERNETES_VERSION,
    VARIANTS,
    config_env,
    one,
    priority_lists,
    redis_secret,
)
from services import missing_service

from evalfleet.tasks.queueing import queue_for
from evalfleet.tasks.redis_keys import depth_key


def test_keda_is_the_same_in_every_variant() -> None:
    for kind in ("ScaledObject", "TriggerAuthentication"):
        assert one(kind, variant="node-socket") == one(kind, variant="base")
    assert one("ScaledObject", variant="base") == one("ScaledObject")
    assert one("ScaledObject", variant="node-socket")["spec"]["scaleTargetRef"]["name"] == one(
        "Deployment", variant="node-socket")["metadata"]["name"]


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
