"""Structural JSON schemas of the custom resources deploy/k8s ships, for the offline checks.

No schema of KEDA's or the Prometheus Operator's CRDs is available without a cluster, so
these describe the part of each CRD that evalfleet uses, as the CRDs define it (KEDA 2.12+,
``keda.sh/v1alpha1``; Prometheus Operator ``monitoring.coreos.com/v1``): the required
fields, their types (KEDA's trigger metadata and the rules' labels and annotations are maps
of *strings*; a number there is refused by the API server), durations, and no field the
CRD does not have where evalfleet writes the object whole (``additionalProperties``).
"""

from __future__ import annotations

from typing import Any

STRING: dict[str, Any] = {"type": "string", "minLength": 1}
INTEGER: dict[str, Any] = {"type": "integer", "minimum": 0}
STRINGS: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
#: Prometheus's duration (the Prometheus Operator's ``Duration`` pattern).
DURATION: dict[str, Any] = {"type": "string", "pattern": (
    r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?"
    r"(([0-9]+)ms)?)$")}


def closed(required: list[str], **properties: Any) -> dict[str, Any]:
    """An object with exactly these properties (those in ``required`` must be there)."""
    return {"type": "object", "required": required, "properties": properties,
            "additionalProperties": False}


def resource(api_version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A namespaced custom resource of ``kind`` with this ``spec``."""
    metadata = {"type": "object", "required": ["name", "namespace"],
                "properties": {"name": STRING, "namespace": STRING, "labels": STRINGS,
                               "annotations": STRINGS}}
    return closed(["apiVersion", "kind", "metadata", "spec"], apiVersion={"const": api_version},
                  kind={"const": kind}, metadata=metadata, spec=spec)


TRIGGER = closed(
    ["type", "metadata"], type=STRING,
    name={"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
    metadata=STRINGS, metricType={"enum": ["AverageValue", "Value", "Utilization"]},
    useCachedMetrics={"type": "boolean"},
    authenticationRef=closed(["name"], name=STRING,
                             kind={"enum": ["TriggerAuthentication",
                                            "ClusterTriggerAuthentication"]}))

SCALED_OBJECT = resource("keda.sh/v1alpha1", "ScaledObject", closed(
    ["scaleTargetRef", "triggers"],
    scaleTargetRef=closed(["name"], name=STRING, kind=STRING, apiVersion=STRING,
                          envSourceContainerName=STRING),
    minReplicaCount=INTEGER, maxReplicaCount=INTEGER, idleReplicaCount=INTEGER,
    pollingInterval=INTEGER, cooldownPeriod=INTEGER, initialCooldownPeriod=INTEGER,
    fallback={"type": "object"},
    advanced=closed(
        [], restoreToOriginalReplicaCount={"type": "boolean"},
        scalingModifiers=closed(["formula", "target"], formula=STRING, target=STRING,
                                activationTarget=STRING,
                                metricType={"enum": ["AverageValue", "Value"]}),
        horizontalPodAutoscalerConfig=closed([], name=STRING, behavior={"type": "object"})),
    triggers={"type": "array", "minItems": 1, "items": TRIGGER}))

TRIGGER_AUTHENTICATION = resource("keda.sh/v1alpha1", "TriggerAuthentication", closed(
    ["secretTargetRef"], secretTargetRef={"type": "array", "minItems": 1, "items": closed(
        ["parameter", "name", "key"], parameter=STRING, name=STRING, key=STRING)}))

POD_MONITOR = resource("monitoring.coreos.com/v1", "PodMonitor", closed(
    ["selector", "podMetricsEndpoints"], jobLabel=STRING,
    selector=closed([], matchLabels=STRINGS, matchExpressions={"type": "array"}),
    namespaceSelector={"type": "object"},
    podMetricsEndpoints={"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["port"],
        "properties": {"port": STRING, "path": STRING, "interval": DURATION,
                       "scrapeTimeout": DURATION}}}))

RULE = {"type": "object", "required": ["expr"], "additionalProperties": False,
        "oneOf": [{"required": ["alert"]}, {"required": ["record"]}],
        "properties": {"alert": STRING, "record": STRING,
                       "expr": {"type": ["string", "integer"]}, "for": DURATION,
                       "keep_firing_for": DURATION, "labels": STRINGS,
                       "annotations": STRINGS}}

PROMETHEUS_RULE = resource("monitoring.coreos.com/v1", "PrometheusRule", closed(
    ["groups"], groups={"type": "array", "minItems": 1, "items": closed(
        ["name", "rules"], name=STRING, interval=DURATION, limit=INTEGER,
        rules={"type": "array", "minItems": 1, "items": RULE})}))

#: The schema of each custom kind deploy/k8s ships.
SCHEMAS = {"ScaledObject": SCALED_OBJECT, "TriggerAuthentication": TRIGGER_AUTHENTICATION,
           "PodMonitor": POD_MONITOR, "PrometheusRule": PROMETHEUS_RULE}
