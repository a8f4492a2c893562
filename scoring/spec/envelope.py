"""The pack envelope, decoded as yaml.v3 decodes it into AgentClash's typed Go structs.

AgentClash reads a pack (``runtime/challengepack/bundle.go``, ``ParseYAML``) into typed
structs, which gives YAML values a meaning of their own per field type:

* a ``string`` field takes the scalar's text as written (``case_key: 012`` is ``"012"``,
  ``name: yes`` is ``"yes"``); a mapping or sequence there is an error;
* a ``bool`` field takes ``true``/``false`` and still the YAML 1.1 spellings ``yes``,
  ``on``, ``y``, ``no``, ``off``, ``n`` (any of their three cases);
* an integer field takes integers, and floats truncated toward zero (``number: 1.9`` is 1),
  within the Go type's range; a ``float64`` field takes any number;
* ``map[string]any`` fields (``payload``, an input's ``value``) decode as
  :func:`scoring.compat.yamlv3.to_any` does; unknown keys are ignored; null leaves a field unset
  and drops a null item of a typed list.

Every type error is collected with its line (yaml.v3 reports them all at once). The
``evaluation_spec`` is not decoded here: AgentClash reads it as ``map[string]any``, then
JSON (see :mod:`scoring.spec.loading`). evalfleet's own sandbox keys (``profile``, ``files``,
``limits``, …) are kept next to AgentClash's, decoded as ``any``.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..compat import yamlresolve, yamlv3
from ..compat.yamlv3 import Alias, Decoder

Kind = Literal["string", "bool", "int", "float", "any", "list", "map", "struct", "uuid"]


@dataclass(frozen=True)
class GoType:
    """A Go type as yaml.v3 sees it: its kind, its name in messages and its parts."""

    name: str
    kind: Kind
    bits: int = 64
    elem: GoType | None = None
    fields: Mapping[str, GoType] = field(default_factory=dict)
    keep_unknown: bool = False
    """evalfleet's extension: unknown keys are kept (decoded as ``any``), not dropped."""


STRING = GoType("string", "string")
BOOL = GoType("bool", "bool")
INT32 = GoType("int32", "int", 32)
INT64 = GoType("int64", "int", 64)
FLOAT64 = GoType("float64", "float")
ANY = GoType("interface {}", "any")
UUID = GoType("uuid.UUID", "uuid")


def list_of(elem: GoType) -> GoType:
    return GoType(f"[]{elem.name}", "list", elem=elem)


def map_of(elem: GoType) -> GoType:
    return GoType(f"map[string]{elem.name}", "map", elem=elem)


def struct(go_name: str, keep_unknown: bool = False, **fields: GoType) -> GoType:
    return GoType(f"challengepack.{go_name}", "struct", fields=fields,
                  keep_unknown=keep_unknown)


_ASSET = struct("AssetReference", key=STRING, kind=STRING, path=STRING, media_type=STRING,
                artifact_id=UUID)
_ARTIFACT_REF = struct("ArtifactRef", key=STRING)
_EXPECTATION = struct("CaseExpectation", key=STRING, kind=STRING, value=ANY,
                      artifact_key=STRING, source=STRING)
_INPUT = struct("CaseInput", key=STRING, kind=STRING, value=ANY, artifact_key=STRING,
                path=STRING)
_SIMULATOR = struct(
    "UserSimulatorSpec", schema_version=INT32, kind=STRING, max_turns=INT32,
    phases=list_of(struct(
        "UserSimulatorPhase", id=STRING, actor=STRING, trigger=STRING, persona=STRING,
        max_turns=INT32, until=list_of(STRING), timeout_ms=INT64, on_timeout=STRING,
        model=STRING, turns=list_of(struct("UserSimulatorTurn", message=STRING,
                                           expects=list_of(_EXPECTATION))))),
    calibration=struct("UserSimulatorCalibration", enabled=BOOL, sample_rate=FLOAT64),
    post_run=struct("UserSimulatorPostRun", arena=map_of(ANY)),
)
_CASE = struct("CaseDefinition", challenge_key=STRING, case_key=STRING, item_key=STRING,
               payload=map_of(ANY), inputs=list_of(_INPUT), expectations=list_of(_EXPECTATION),
               user_simulator=_SIMULATOR, artifacts=list_of(_ARTIFACT_REF),
               assets=list_of(_ASSET), case_timeout_seconds=INT32)
_ITEM = struct("LegacyItemDefinition", challenge_key=STRING, item_key=STRING,
               payload=map_of(ANY), assets=list_of(_ASSET))
_SANDBOX = struct("SandboxConfig", keep_unknown=True, network_access=BOOL,
                  network_allowlist=list_of(STRING), env_vars=map_of(STRING),
                  additional_packages=list_of(STRING), sandbox_template_id=STRING)
_SECURITY = struct(
    "SecurityPolicy", default_severity=STRING,
    planted_secrets=list_of(struct("PlantedSecret", name=STRING, value=STRING,
                                   location=STRING, file_path=STRING, severity=STRING)),
    forbidden_outputs=list_of(struct("ForbiddenPattern", description=STRING, pattern=STRING,
                                     substring=STRING, severity=STRING)),
    forbidden_egress=list_of(struct("EgressPolicy", description=STRING, host=STRING,
                                    allow=list_of(STRING), severity=STRING)),
    adversarial_prompts=list_of(struct("AdversarialPrompt", name=STRING, text=STRING,
                                       strategy=STRING, expected_refusal_pattern=STRING)),
)
BUNDLE = struct(
    "rawBundle",
    modality=STRING,
    interface_spec=struct("InterfaceSpec", transports=list_of(STRING), channel_profile=STRING,
                          supports_barge_in=BOOL),
    scenario=struct("ScenarioSpec", persona=STRING, language=STRING, max_turns=INT32,
                    max_duration_ms=INT64),
    pack=struct("PackMetadata", slug=STRING, name=STRING, family=STRING, description=STRING),
    version=struct("rawVersionMetadata", number=INT32, execution_mode=STRING,
                   tool_policy=map_of(ANY), filesystem=map_of(ANY), sandbox=_SANDBOX,
                   deployment_defaults=struct("DeploymentDefaults", aliases=map_of(STRING),
                                              lineups=map_of(list_of(STRING))),
                   evaluation_spec=map_of(ANY), assets=list_of(_ASSET)),
    tools=map_of(ANY),
    challenges=list_of(struct("ChallengeDefinition", key=STRING, title=STRING,
                              category=STRING, difficulty=STRING, instructions=STRING,
                              definition=map_of(ANY), assets=list_of(_ASSET),
                              artifact_refs=list_of(_ARTIFACT_REF))),
    input_sets=list_of(struct("InputSetDefinition", key=STRING, name=STRING,
                              description=STRING, cases=list_of(_CASE),
                              items=list_of(_ITEM))),
    security=_SECURITY,
)
"""``ParseYAML``'s ``rawBundle`` (``evaluation_spec`` as ``map[string]any``)."""

_UNSET = object()
_MAX_INT64 = float((1 << 63) - 1)


def decode(node: Node | Alias, go_type: GoType, decoder: Decoder, path: str = "") -> Any:
    """Decode ``node`` into ``go_type``; problems go to ``decoder.errors``.

    Returns the decoded value, or :data:`UNSET` when the field stays at its zero value
    (null, or a type error).

    Raises:
        yamlresolve.YAMLError: what yaml.v3 treats as fatal (a bad UUID, an anchor cycle).
    """
    if go_type.kind == "any":
        return yamlv3.to_any(node, decoder, path)
    target = decoder.visit(node)
    if isinstance(node, Alias):
        decoder.alias_depth += 1
        decoder.active.add(id(target))
        try:
            return decode(target, go_type, decoder, path)
        finally:
            decoder.active.discard(id(target))
            decoder.alias_depth -= 1
    if yamlv3.is_null(target):
        return UNSET
    if isinstance(target, ScalarNode):
        return _scalar(target, go_type, decoder, path)
    if isinstance(target, SequenceNode):
        return _sequence(target, go_type, decoder, path)
    assert isinstance(target, MappingNode)
    return _mapping(target, go_type, decoder, path)


UNSET: Any = _UNSET


def terror(node: Node, tag: str, go_type: GoType, decoder: Decoder, path: str) -> Any:
    """Record yaml.v3's ``cannot unmarshal !!tag `value` into type`` for ``node``."""
    shown = ""
    if tag not in (yamlresolve.SEQ, yamlresolve.MAP):
        raw = str(node.value).encode("utf-8", "surrogateescape")
        text = raw[:7].decode("utf-8", "replace") + "..." if len(raw) > 10 else str(node.value)
        shown = f" `{text}`"
    explicit = yamlv3.short_tag(node.tag)
    if explicit:  # an explicit tag, a quoted scalar's !!str, a collection's !!seq/!!map
        tag = explicit
    decoder.errors.append((yamlv3.line_of(node), path,
                           f"cannot unmarshal {tag}{shown} into {go_type.name}"))
    return UNSET


def _scalar(node: ScalarNode, go_type: GoType, decoder: Decoder, path: str) -> Any:
    tag, value = yamlv3.scalar_value(node)
    kind = go_type.kind
    if kind == "uuid":
        return _uuid(node)
    if kind == "string":
        return value if tag == yamlresolve.BINARY else node.value
    if kind == "bool":
        flag = yamlresolve.typed_bool(tag, value)
        return flag if flag is not None else terror(node, tag, go_type, decoder, path)
    numeric = tag in (yamlresolve.INT, yamlresolve.FLOAT) and not isinstance(value, bool)
    if kind == "int" and numeric:
        number = _go_int(value)
        if number is not None and -(1 << (go_type.bits - 1)) <= number < 1 << (go_type.bits - 1):
            return number
    if kind == "float" and tag in (yamlresolve.INT, yamlresolve.FLOAT):
        return float(value)
    return terror(node, tag, go_type, decoder, path)


def _go_int(value: int | float) -> int | None:
    """Go's conversion of a resolved number to int64 (floats truncate; amd64 overflow)."""
    if isinstance(value, int):
        return value if value <= (1 << 63) - 1 else None
    if not value <= _MAX_INT64:
        return None
    return int(value) if math.isfinite(value) and value >= -_MAX_INT64 else -(1 << 63)


def _uuid(node: ScalarNode) -> str:
    try:
        return str(uuid.UUID(node.value))
    except ValueError:
        raise yamlresolve.YAMLError(f"invalid UUID format: {node.value!r}",
                               yamlv3.line_of(node)) from None


def _sequence(node: SequenceNode, go_type: GoType, decoder: Decoder, path: str) -> Any:
    if go_type.kind != "list" or go_type.elem is None:
        return terror(node, yamlresolve.SEQ, go_type, decoder, path)
    items = (decode(item, go_type.elem, decoder, f"{path}[{i}]")
             for i, item in enumerate(node.value))
    return [item for item in items if item is not UNSET]


def _mapping(node: MappingNode, go_type: GoType, decoder: Decoder, path: str) -> Any:
    if decoder.duplicates(node, path):
        return UNSET
    if go_type.kind == "struct":
        return _fields(node, go_type, decoder, path, {})
    if go_type.kind == "map" and go_type.elem is not None:
        return _entries(node, go_type.elem, decoder, path, {})
    return terror(node, yamlresolve.MAP, go_type, decoder, path)


def _key(node: Node | Alias, decoder: Decoder, path: str) -> Any:
    """A mapping key decoded into a Go string: its text; null keys are skipped."""
    return decode(node, STRING, decoder, path)


def _fields(node: MappingNode, go_type: GoType, decoder: Decoder, path: str,
            out: dict[str, Any], seen: set[str] | None = None) -> dict[str, Any]:
    merge, own = _split_merge(node)
    names = seen if seen is not None else set()
    for key_node, value_node in own:
        name = _key(key_node, decoder, path)
        if name is UNSET or name in names:
            continue
        names.add(name)
        child = go_type.fields.get(name, ANY if go_type.keep_unknown else None)
        if child is None:
            continue
        value = decode(value_node, child, decoder, _child(path, name))
        if value is not UNSET:
            out[name] = value
    if merge is not None:
        for source in _merge_sources(merge):
            _fields(_as_mapping(source, decoder), go_type, decoder, path, out, names)
    return out


def _entries(node: MappingNode, elem: GoType, decoder: Decoder, path: str,
             out: dict[str, Any], seen: set[str] | None = None) -> dict[str, Any]:
    merge, own = _split_merge(node)
    names = seen if seen is not None else set()
    for key_node, value_node in own:
        name = _key(key_node, decoder, path)
        if name is UNSET or name in names:
            continue
        names.add(name)
        value = decode(value_node, elem, decoder, _child(path, name))
        if value is not UNSET:
            out[name] = value
        elif yamlv3.is_null(value_node):
            out[name] = None if elem.kind in ("list", "map", "struct", "any") else _zero(elem)
    if merge is not None:
        for source in _merge_sources(merge):
            _entries(_as_mapping(source, decoder), elem, decoder, path, out, names)
    return out


def _zero(go_type: GoType) -> Any:
    return {"string": "", "bool": False, "int": 0, "float": 0.0}.get(go_type.kind)


def _split_merge(node: MappingNode) -> tuple[Node | Alias | None, list[tuple[Any, Any]]]:
    merge = next((v for k, v in node.value if yamlv3.is_merge(k)), None)
    return merge, [(k, v) for k, v in node.value if not yamlv3.is_merge(k)]


def _merge_sources(node: Node | Alias) -> list[Node | Alias]:
    return list(node.value) if isinstance(node, SequenceNode) else [node]


def _as_mapping(source: Node | Alias, decoder: Decoder) -> MappingNode:
    target = source.target if isinstance(source, Alias) else source
    if not isinstance(target, MappingNode):
        raise yamlresolve.YAMLError("map merge requires map or sequence of maps as the value",
                               yamlv3.line_of(source))
    decoder.visit(source)
    return target


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
