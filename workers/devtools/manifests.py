"""The generated Kubernetes manifests of ``deploy/k8s/base``: written, never edited by hand.

Four files follow from sources elsewhere in the repository, so that nothing is kept in step
by hand:

* ``keda.yaml``: KEDA counts every priority list (:data:`tasks.queueing.PRIORITY_STEPS`) of
  every queue the workers serve (``EVALFLEET_QUEUES`` of ``config.yaml``, the one list), and
  sums them in one metric;
* ``alerts.yaml``: a ``PrometheusRule`` whose spec is ``deploy/prometheus/alerts.yml``;
* ``dashboard.yaml``: a ConfigMap, labelled for Grafana's dashboard sidecar, holding
  ``deploy/grafana/evalfleet.json`` byte for byte;
* ``kustomizeconfig.yaml``: teaches kustomize's ``images:`` the sandbox image of every
  profile in ``config.yaml`` (``EVALFLEET_PROFILES__<NAME>__IMAGE``) and KEDA's reference to
  the generated Secret.

:mod:`workers.devtools.generated` writes them (and checks them in the unit tests).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from evalfleet.tasks.queueing import PRIORITY_STEPS, queue_for
from evalfleet.tasks.redis_keys import depth_key

BASE = Path("deploy/k8s/base")
ALERTS = Path("deploy/prometheus/alerts.yml")
DASHBOARD = Path("deploy/grafana/evalfleet.json")
NAMESPACE = "evalfleet"
#: KEDA's target backlog per replica: EVALFLEET_CONCURRENCY (2) executing + 2 waiting.
BACKLOG_PER_REPLICA = 4
#: The key of a profile's sandbox image in config.yaml.
PROFILE_IMAGE = re.compile(r"EVALFLEET_PROFILES__([A-Z0-9_]+)__IMAGE")


def generated_by(source: str) -> str:
    """The header of a generated file: what it comes from and how to regenerate it."""
    return (f"# GENERATED from {source}: do not edit.\n# Edit the source, then run "
            "`.venv/bin/python -m evalfleet.workers.devtools.generated`\n# (a unit test "
            "compares).\n")


def dump(*documents: Any) -> str:
    """YAML documents as kustomize reads them: keys in the order given, long text literal."""
    return "---\n".join(yaml.dump(d, Dumper=_Dumper, sort_keys=False, width=100,
                                  allow_unicode=True)
                        for d in documents)


class _Dumper(yaml.SafeDumper):
    """A SafeDumper that writes multi-line strings as literal blocks (readable diffs)."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def worker_config(root: Path) -> dict[str, str]:
    """The data of the worker ConfigMap (``deploy/k8s/base/config.yaml``)."""
    (config,) = [d for d in yaml.safe_load_all((root / BASE / "config.yaml").read_text())
                 if d and d["kind"] == "ConfigMap"]
    data: dict[str, str] = config["data"]
    return data


def served_profiles(root: Path) -> list[str]:
    """The profiles the workers serve: ``EVALFLEET_QUEUES``, the one list KEDA follows."""
    profiles: list[str] = json.loads(worker_config(root)["EVALFLEET_QUEUES"])
    return profiles


def trigger(profile: str, step: int) -> dict[str, Any]:
    """KEDA's redis trigger on one priority list of one profile's queue (kombu's names:
    ``evalfleet.<profile>`` for step 0, ``evalfleet.<profile>:<step>`` after)."""
    queue = queue_for(profile)
    return {"type": "redis", "name": trigger_name(profile, step), "metadata": {
        "address": f"redis.{NAMESPACE}.svc:6379",
        "listName": queue if step == 0 else f"{queue}:{step}",
        "listLength": str(BACKLOG_PER_REPLICA), "databaseIndex": "0"},
        "authenticationRef": {"name": "evalfleet-redis"}}


def waiting_trigger(profile: str) -> dict[str, Any]:
    """KEDA's redis trigger on the runs of one profile waiting for admission (a list with
    one item per run: :data:`~tasks.redis_keys.DEPTH_KEY`), which are not in the queue
    yet (tenants' fair shares, issue 48)."""
    return {"type": "redis", "name": f"{_identifier(profile)}_waiting", "metadata": {
        "address": f"redis.{NAMESPACE}.svc:6379", "listName": depth_key(queue_for(profile)),
        "listLength": str(BACKLOG_PER_REPLICA), "databaseIndex": "0"},
        "authenticationRef": {"name": "evalfleet-redis"}}


def trigger_name(profile: str, step: int) -> str:
    """A trigger's name, an identifier KEDA's formula can use (``default_p0``)."""
    return f"{_identifier(profile)}_p{step}"


def _identifier(profile: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", profile)


def scaled_object(profiles: list[str]) -> dict[str, Any]:
    """The ScaledObject: one trigger per priority list of every profile and one on its
    runs waiting for admission, summed."""
    triggers = [t for p in profiles
                for t in [*(trigger(p, step) for step in PRIORITY_STEPS), waiting_trigger(p)]]
    scaling = {"formula": " + ".join(t["name"] for t in triggers),
               "target": str(BACKLOG_PER_REPLICA), "activationTarget": "0",
               "metricType": "AverageValue"}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 600, "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 120}]},
                "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 30}]}}
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": "evalfleet-worker", "namespace": NAMESPACE},
            "spec": {"scaleTargetRef": {"name": "evalfleet-worker"}, "minReplicaCount": 1,
                     "maxReplicaCount": 20, "pollingInterval": 15, "cooldownPeriod": 300,
                     "advanced": {"scalingModifiers": scaling, "horizontalPodAutoscalerConfig": {
                         "behavior": behavior}},
                     "triggers": triggers}}


TRIGGER_AUTHENTICATION = {
    "apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
    "metadata": {"name": "evalfleet-redis", "namespace": NAMESPACE},
    "spec": {"secretTargetRef": [
        {"parameter": "password", "name": "evalfleet-redis", "key": "REDIS_PASSWORD"}]}}

KEDA_NOTES = """\
# KEDA scales the workers on their backlog: the sum of ALL ten priority lists
# (tasks/queueing.py: evalfleet.<profile>, evalfleet.<profile>:1 ... :9) of every queue in
# EVALFLEET_QUEUES (config.yaml), and of the runs waiting for admission to that queue
# (evalfleet:admission:depth:evalfleet.<profile>: with tenants, a backlog waits there and
# only a few runs per worker slot are in the queue). KEDA gives each trigger its own HPA
# metric and the HPA takes the MAX of them, which would undercount a backlog spread over
# priorities; scalingModifiers
# (KEDA >= 2.12) turns them into one summed metric instead. Backlog per replica: 4 = 2 runs
# executing (EVALFLEET_CONCURRENCY) + 2 waiting.
#
# Scale-in never kills a busy worker: the HPA picks the pod, but a removed pod gets SIGTERM =
# Celery warm shutdown and terminationGracePeriodSeconds (780 s, worker.yaml) >= the longest
# run, so it finishes and acks its runs before it exits; scale-down is also slowed (1 pod per
# 2 min after 10 min of low backlog). We chose this over a ScaledJob per run (no warm pool,
# a pod start per run) and over scaling on load (needs a custom scaler). Cost: capacity
# lingers while draining pods finish.
#
# Not scaled to zero: the workers also forward the intake stream (evalfleet:intake), and KEDA
# cannot see that backlog; with no worker, XADD-submitted runs would wait forever.
"""


def keda(root: Path) -> str:
    """``keda.yaml``: the ScaledObject and its TriggerAuthentication."""
    return (generated_by("deploy/k8s/base/config.yaml (EVALFLEET_QUEUES) and tasks/queueing.py")
            + KEDA_NOTES + dump(scaled_object(served_profiles(root)), TRIGGER_AUTHENTICATION))


def prometheus_rule(root: Path) -> str:
    """``alerts.yaml``: the alert rules as a Prometheus Operator ``PrometheusRule``."""
    rules = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
             "metadata": {"name": "evalfleet", "namespace": NAMESPACE,
                          "labels": {"app.kubernetes.io/name": "evalfleet"}},
             "spec": yaml.safe_load((root / ALERTS).read_text())}
    notes = ("# Prometheus loads it when its ruleSelector (and ruleNamespaceSelector) select "
             "it: see\n# docs/operations.md, \"Watching it\".\n")
    return generated_by(str(ALERTS)) + notes + dump(rules)


def dashboard(root: Path) -> str:
    """``dashboard.yaml``: the Grafana dashboard as a ConfigMap for Grafana's sidecar."""
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "evalfleet-dashboard", "namespace": NAMESPACE,
                           "labels": {"app.kubernetes.io/name": "evalfleet",
                                      "grafana_dashboard": "1"}},
              "data": {DASHBOARD.name: (root / DASHBOARD).read_text()}}
    notes = ("# Grafana's dashboard sidecar (kube-prometheus-stack, the Grafana chart) loads "
             "ConfigMaps\n# labelled grafana_dashboard=\"1\": see docs/operations.md, "
             "\"Watching it\".\n")
    return generated_by(str(DASHBOARD)) + notes + dump(config)


def kustomize_config(root: Path) -> str:
    """``kustomizeconfig.yaml``: the fields kustomize's built-in transformers do not know."""
    keys = sorted(k for k in worker_config(root) if PROFILE_IMAGE.fullmatch(k))
    config = {
        # `images:` rewrites each profile's sandbox image too (one place for every version).
        "images": [{"kind": "ConfigMap", "path": f"data/{key}"} for key in keys],
        # The generated Secret's name (with its hash) reaches KEDA's TriggerAuthentication.
        "nameReference": [{"kind": "Secret", "version": "v1", "fieldSpecs": [
            {"kind": "TriggerAuthentication", "path": "spec/secretTargetRef/name"}]}]}
    return generated_by("deploy/k8s/base/config.yaml (EVALFLEET_PROFILES__<NAME>__IMAGE)") + \
        dump(config)


#: Each generated file (relative to the repository root) and what writes it.
FILES = {BASE / "keda.yaml": keda, BASE / "alerts.yaml": prometheus_rule,
         BASE / "dashboard.yaml": dashboard, BASE / "kustomizeconfig.yaml": kustomize_config}
