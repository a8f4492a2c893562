"""Loading specs and packs: JSON or YAML, from a path, text or mapping (docs/scoring.md §2.1, §3).

A bare ``evaluation_spec`` (optionally wrapped as ``{evaluation_spec: ...}``) or a whole
AgentClash challenge pack (``pack``, ``version.evaluation_spec``, ``challenges``,
``input_sets[].cases[]``). Each form is read the way AgentClash reads it:

* YAML (``bundle.go``, ``ParseYAML``): yaml.v3 (:mod:`scoring.compat.yamlv3`); the envelope is
  decoded into typed structs (:mod:`scoring.spec.envelope`); the spec is decoded as
  ``map[string]any``, written as JSON (NaN, ±Inf and non-string keys cannot be) and
  decoded strictly from that JSON;
* a pack given as JSON text, or as a mapping (its JSON), is read as YAML: AgentClash
  uploads a pack's bytes, JSON or YAML, through ``ParseYAML``
  (``backend/internal/api/challenge_packs.go``), so its envelope is decoded into the typed
  structs and a wrong shape is rejected with its path;
* a bare spec as JSON text or a mapping (``loader.go``): the envelope leniently, the spec
  strictly.

Strict decoding follows Go's ``encoding/json`` (:mod:`scoring.compat.godecode`): unknown fields
are errors, keys match case-insensitively, null is a no-op. Every problem comes back as one
:class:`SpecError` listing all findings, each with its field path and, for YAML, its line.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..compat import godecode, yamlresolve, yamlv3
from ..compat.gojson import UnmarshalError, unmarshal
from ..errors import FieldError, SpecError
from . import envelope
from .cases import Case, CaseError, cases_of, find_case, input_set_findings
from .models import EvaluationSpec
from .rules import validate_spec

Source = str | os.PathLike[str] | Mapping[str, Any]
LineMap = dict[str, int | None]
PACK_ROOT = "version.evaluation_spec"
BARE_ROOT = "evaluation_spec"
_TYPE_MESSAGES = {
    "int_type": "must be an integer", "int_from_float": "must be an integer",
    "float_type": "must be a number", "string_type": "must be a string",
    "bool_type": "must be a boolean", "list_type": "must be a list",
    "model_type": "must be an object", "dict_type": "must be an object",
    "model_attributes_type": "must be an object",
}


@dataclass(frozen=True)
class Pack:
    """A challenge pack: its spec, the cases of every input set, and the decoded manifest."""

    spec: EvaluationSpec
    cases: list[Case] = field(default_factory=list)
    manifest: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    """``sha256:<hex>`` of the pack as decoded (:func:`content_hash`): the same pack gives
    the same hash from YAML or JSON text, a file or a mapping, whatever its formatting."""

    def case(self, case_key: str | None) -> Case | None:
        """The case named ``case_key`` (``key`` or ``input_set/key``), the only case when
        None; None when there is no such case (or several and no key).

        Raises:
            CaseError: a bare key that several input sets use.
        """
        if case_key is None:
            return self.cases[0] if len(self.cases) == 1 else None
        try:
            return find_case(self.cases, case_key)
        except CaseError as err:
            if err.ambiguous:
                raise
            return None


class _Parsed(NamedTuple):
    manifest: Any
    """The manifest as evalfleet reads it (the typed envelope, for YAML packs)."""
    spec: Any
    """The spec as the JSON value AgentClash decodes strictly."""
    root: str
    lines: LineMap


def load_spec(source: Source) -> EvaluationSpec:
    """Load and validate an evaluation spec (or the spec of a pack).

    Raises:
        SpecError: listing every problem found, each with a field path.
    """
    return load_pack(source).spec


def load_pack(source: Source) -> Pack:
    """Load a pack or a bare spec (a bare spec is a pack with no cases).

    Raises:
        SpecError: listing every problem found, each with a field path.
    """
    parsed = _read(source)
    spec = _decode(parsed.spec, parsed.root, parsed.lines)
    findings = validate_spec(spec, parsed.root)
    if parsed.root == PACK_ROOT:
        findings = input_set_findings(parsed.manifest) + findings
    if findings:
        raise SpecError(_with_lines(findings, parsed.lines))
    return Pack(spec=spec, cases=cases_of(parsed.manifest), manifest=parsed.manifest,
                content_hash=content_hash(parsed.manifest or {BARE_ROOT: parsed.spec}))


def content_hash(document: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of a decoded pack's canonical JSON (sorted keys, no spaces, UTF-8;
    YAML timestamps as RFC 3339 text, integral floats as integers, as JSON carries them).

    Raises:
        SpecError: a value JSON cannot carry (NaN or ±Inf in a mapping's envelope).
    """
    try:
        as_json = yamlv3.to_json(dict(document))
    except yamlv3.MarshalError as err:
        raise SpecError.single(err.path or "manifest", str(err)) from None
    canonical = json.dumps(as_json, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


# -- the three forms -------------------------------------------------------------------------


def _form(keys: set[str]) -> str:
    if "version" in keys or "pack" in keys:
        return PACK_ROOT
    return "wrapped" if BARE_ROOT in keys else BARE_ROOT


def _from_json(data: Any) -> _Parsed:
    """A mapping or JSON text: lenient envelope, the spec as given (Go's JSON types)."""
    if not isinstance(data, Mapping) or not data:
        raise SpecError.single("manifest", "is required")
    data = copy.deepcopy(dict(data))
    form = _form(set(data))
    if form == PACK_ROOT:
        version = data.get("version")
        body = version.get("evaluation_spec") if isinstance(version, Mapping) else None
    else:
        body = data.get(BARE_ROOT) if form == "wrapped" else data
    root = PACK_ROOT if form == PACK_ROOT else BARE_ROOT
    if not body:
        raise SpecError.single(root, "is required")
    problems = godecode.non_finite(body, root)
    if problems:
        raise SpecError(problems)
    return _Parsed(data if form == PACK_ROOT else {}, body, root, {})


def _from_yaml(node: Node | None) -> _Parsed:
    """YAML text: yaml.v3 decoding, the spec through ``map[string]any`` and JSON."""
    target = node.target if isinstance(node, yamlv3.Alias) else node
    if not isinstance(target, MappingNode) or not target.value:
        raise SpecError.single("manifest", "is required")
    keys = {str(k.value) for k, _ in target.value if isinstance(k, ScalarNode)}
    form = _form(keys)
    lines: LineMap = {}
    _index_lines(target, "", lines)
    decoder = yamlv3.Decoder()
    if form == PACK_ROOT:
        manifest = envelope.decode(target, envelope.BUNDLE, decoder)
        version = manifest.get("version", {}) if isinstance(manifest, dict) else {}
        body, root = version.get("evaluation_spec"), PACK_ROOT
    else:
        manifest, document = {}, yamlv3.to_any(target, decoder)
        body = document.get(BARE_ROOT) if form == "wrapped" else document
        root = BARE_ROOT
        lines = lines if form == "wrapped" else {f"{root}.{k}": v for k, v in lines.items()}
    _raise_decoding(decoder, lines)
    if not body:
        raise SpecError.single(root, "is required")
    try:
        return _Parsed(manifest, yamlv3.to_json(body, root), root, lines)
    except yamlv3.MarshalError as err:
        raise SpecError(_with_lines([FieldError(err.path, str(err))], lines)) from None


def _raise_decoding(decoder: yamlv3.Decoder, lines: LineMap) -> None:
    """yaml.v3's collected type errors (duplicate keys, wrong types), with their lines."""
    if decoder.errors:
        raise SpecError([FieldError(path or "manifest", message, line)
                         for line, path, message in decoder.errors])


def _decode(body: Any, root: str, lines: LineMap) -> EvaluationSpec:
    try:
        return EvaluationSpec.model_validate(godecode.conform(EvaluationSpec, body))
    except ValidationError as err:
        findings = [_field_error(e, root) for e in err.errors()]
        raise SpecError(_with_lines(findings, lines)) from None


def _field_error(error: Any, root: str) -> FieldError:
    path = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    if error["type"] == "extra_forbidden":
        return FieldError(path, f'unknown field "{error["loc"][-1]}"')
    if error["type"] in ("greater_than_equal", "less_than_equal"):
        bits = 32 if godecode.INT32_RANGE[1] in error.get("ctx", {}).values() or \
            godecode.INT32_RANGE[0] in error.get("ctx", {}).values() else 64
        return FieldError(path, f"must be an integer that fits in int{bits}")
    return FieldError(path, _TYPE_MESSAGES.get(error["type"], error["msg"]))


def _with_lines(findings: list[FieldError], lines: LineMap) -> list[FieldError]:
    return [f._replace(line=f.line or _line_of(f.field, lines)) for f in findings]


def _line_of(path: str, lines: LineMap) -> int | None:
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return None


def _index_lines(node: Any, path: str, lines: LineMap, depth: int = 0) -> None:
    if isinstance(node, yamlv3.Alias) or depth > 200:
        return
    if isinstance(node, MappingNode):
        for key, value in node.value:
            child = f"{path}.{_key_text(key)}" if path else _key_text(key)
            lines.setdefault(child, yamlv3.line_of(key))
            _index_lines(value, child, lines, depth + 1)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            lines.setdefault(f"{path}[{i}]", yamlv3.line_of(item))
            _index_lines(item, f"{path}[{i}]", lines, depth + 1)


def _key_text(node: Any) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else ""


# -- reading -------------------------------------------------------------------------------


def _read(source: Source) -> _Parsed:
    if isinstance(source, Mapping):
        return _from_mapping(source)
    if isinstance(source, os.PathLike) or _looks_like_path(source):
        path = Path(source)
        text = _read_file(path)
        return _parse(text, yaml_hint=path.suffix.lower() in (".yaml", ".yml"))
    return _parse(source)


def _from_mapping(source: Mapping[str, Any]) -> _Parsed:
    """A mapping is read as its JSON text would be: a pack's envelope into the typed
    structs. One JSON cannot carry (NaN, a non-string key, another type) is read as given,
    leniently, and its problems reported there."""
    if not source or _form({str(k) for k in source}) != PACK_ROOT:
        return _from_json(source)
    try:
        plain = json.loads(json.dumps(source, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return _from_json(source)
    return _from_yaml(yamlv3.node_of(plain))


_SPEC_SUFFIXES = (".json", ".yaml", ".yml")


def _looks_like_path(text: str) -> bool:
    """One line naming a spec file (read errors are reported), or naming an existing file."""
    if "\n" in text or text.lstrip().startswith(("{", "[")):
        return False
    if text.strip().lower().endswith(_SPEC_SUFFIXES) and ": " not in text:
        return True
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # too long or NUL: text, not a path
        return False


def _read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError.single("manifest", f"cannot be read: {err.strerror}: {path}") from None
    except UnicodeDecodeError as err:
        raise SpecError.single("manifest", f"cannot be read: not UTF-8 ({err.reason}): "
                                           f"{path}") from None


def _parse(text: str, *, yaml_hint: bool = False) -> _Parsed:
    if not yaml_hint and text.lstrip().startswith("{"):
        data = parse_json(text)
        if not isinstance(data, Mapping) or _form(set(data)) != PACK_ROOT:
            return _from_json(data)
        return _from_yaml(yamlv3.node_of(data))
    try:
        return _from_yaml(yamlv3.compose(text))
    except yamlresolve.YAMLError as err:
        raise SpecError.single("manifest", str(err), err.line) from None


def parse_json(text: str) -> Any:
    """Parse JSON text as Go's ``encoding/json`` does: one value, no NaN, nothing after.

    Integers stay integers (a field's Go type decides later whether one fits).

    Raises:
        SpecError: when the text is not exactly one well-formed JSON value.
    """
    body = text.strip()
    try:
        return unmarshal(body, float64=False)
    except UnmarshalError as err:
        message = str(err)
        if message.startswith("invalid character") and "after top-level value" in message:
            message = "unexpected trailing data after JSON value"
        else:
            message = f"invalid JSON: {message}"
        line = _json_line(body, err)
        if line is not None:
            line += text[:len(text) - len(text.lstrip())].count("\n")
        raise SpecError.single("manifest", message, line) from None
    except ValueError as err:  # e.g. an integer past Python's 4300-digit limit
        raise SpecError.single("manifest", f"invalid JSON: {err}") from None


def _json_line(text: str, err: Exception) -> int | None:
    position = getattr(err, "position", None)
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


__all__ = ["CaseError", "Pack", "content_hash", "load_pack", "load_spec", "parse_json"]
