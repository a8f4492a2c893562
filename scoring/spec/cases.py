"""Cases: what ``case.*`` and ``artifact.*`` references read, and how a pack's cases are found.

A :class:`Case` is AgentClash's scoring input for one case (``EvidenceInput``): a payload,
inputs and expectations (inline ``value`` or a pointer), and artifacts. Given directly to
:func:`scoring.evaluate`, it is decoded leniently; ``inputs``, ``expectations`` and
``artifacts`` may be lists of ``{key, ...}`` entries or mappings keyed by ``key``.

From a pack, :func:`cases_of` builds the cases of **every** input set the way the platform
does (``challengepack`` ``StoredPayload``, then ``repository/scoring_evidence.go``):

* the case key is ``case_key``, else the legacy ``item_key``; a set's legacy ``items``
  become cases; a missing payload is ``{}``;
* a case with inputs, expectations, artifacts or assets is stored as a JSON document, so
  its payload and values come back as JSON numbers (float64); a payload-only case keeps
  its payload's JSON text as written;
* artifacts are the case's ``assets`` plus every ``version.assets`` entry the case names
  (``artifacts[].key``, an input's or expectation's ``artifact_key``, ``source:
  artifact:<key>``).

A case is addressed as ``<input_set>/<case_key>`` always, or by its bare key when no other
input set uses it (:func:`find_case`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..compat.textform import go_json, go_marshal
from ..compat.yamlv3 import MarshalError, to_json
from ..errors import FieldError, ScoringError


class CaseError(ScoringError):
    """A case key that names no case, or (``ambiguous``) cases in several input sets."""

    def __init__(self, message: str, *, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CaseEntry(Lenient):
    """One input or expectation: an inline ``value`` or a pointer to where it lives."""

    key: str = ""
    kind: str = ""
    value: Any = None
    source: str = ""
    artifact_key: str = ""
    path: str = ""

    @property
    def has_value(self) -> bool:
        """True when ``value`` was given inline (even as JSON null)."""
        return "value" in self.model_fields_set


class Artifact(Lenient):
    key: str = ""
    kind: str = ""
    path: str = ""
    media_type: str = ""


def _keyed_list(value: Any) -> Any:
    if isinstance(value, dict):
        return [{"key": k, **(v if isinstance(v, dict) else {"value": v})}
                for k, v in value.items()]
    return value


class Case(Lenient):
    """One case of an input set; scoring is always per case (the caller picks it)."""

    input_set: str = ""
    """The key of the input set the case comes from (empty for a case given directly)."""
    challenge_key: str = ""
    case_key: str = ""
    payload: Any = None
    inputs: list[CaseEntry] = Field(default_factory=list)
    expectations: list[CaseEntry] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)

    _lists = field_validator("inputs", "expectations", "artifacts", mode="before")(_keyed_list)

    def payload_value(self) -> Any:
        """The payload as a decoded JSON value (a pack case keeps its payload as JSON text)."""
        if isinstance(self.payload, str):
            try:
                return json.loads(self.payload)
            except ValueError:
                return self.payload
        return self.payload

    @property
    def qualified_key(self) -> str:
        """``<input_set>/<case_key>``: unique within a pack."""
        return f"{self.input_set}/{self.case_key}"

    def input(self, key: str) -> CaseEntry | None:
        """The input entry named ``key`` (the last one given wins, as in a Go map)."""
        return next((e for e in reversed(self.inputs) if e.key == key), None)

    def expectation(self, key: str) -> CaseEntry | None:
        """The expectation entry named ``key`` (the last one given wins)."""
        return next((e for e in reversed(self.expectations) if e.key == key), None)

    def artifact(self, key: str) -> Artifact | None:
        """The artifact named ``key`` (the last one given wins, as in a Go map)."""
        return next((a for a in reversed(self.artifacts) if a.key == key), None)


# -- finding a case -----------------------------------------------------------------------


def find_case(cases: list[Case], key: str) -> Case:
    """The case ``key`` names: ``<input_set>/<case_key>``, or a bare key used by one set.

    Raises:
        CaseError: no case has that key, or a bare key is used by several input sets.
    """
    exact = [c for c in cases if c.qualified_key == key]
    if exact:
        return exact[0]
    bare = [c for c in cases if c.case_key == key]
    sets = sorted({c.input_set for c in bare})
    if len(sets) > 1:
        named = " and ".join(f'"{s}"' for s in sets)
        raise CaseError(f'case key "{key}" is ambiguous: input sets {named} both have it; '
                        f'use "<input_set>/{key}"', ambiguous=True)
    if not bare:
        raise CaseError(f'no case "{key}" in the pack')
    return bare[0]


# -- cases of a pack ----------------------------------------------------------------------


def cases_of(manifest: Any) -> list[Case]:
    """Every case of every input set of a (decoded) manifest, in order."""
    if not isinstance(manifest, Mapping):
        return []
    assets = _assets(_get(manifest, "version", "assets"))
    out: list[Case] = []
    for input_set in _list(manifest.get("input_sets")):
        key = str(input_set.get("key") or "").strip()
        out += [_case(raw, key, assets) for raw in _set_cases(input_set)]
    return out


def input_set_findings(manifest: Any) -> list[FieldError]:
    """AgentClash's addressing rules: set keys required and unique, case keys too (per
    challenge within a set), so every case has one ``<input_set>/<case_key>``."""
    found: list[FieldError] = []
    seen: set[str] = set()
    for i, input_set in enumerate(_list(_get_root(manifest, "input_sets"))):
        path = f"input_sets[{i}]"
        key = str(input_set.get("key") or "").strip()
        if not key:
            found.append(FieldError(f"{path}.key", "is required"))
        elif key in seen:
            found.append(FieldError(f"{path}.key", "must be unique"))
        seen.add(key)
        found += _case_findings(input_set, path)
    return found


def _case_findings(input_set: Mapping[str, Any], path: str) -> list[FieldError]:
    found: list[FieldError] = []
    keys: set[tuple[str, str]] = set()
    field = "cases" if input_set.get("cases") or not input_set.get("items") else "items"
    for j, raw in enumerate(_set_cases(input_set)):
        where = f"{path}.{field}[{j}]"
        composite = (_text(raw, "challenge_key"), _key_of(raw))
        if not composite[1]:
            found.append(FieldError(f"{where}.case_key", "is required"))
        elif composite in keys:
            found.append(FieldError(f"{where}.case_key",
                                    "must be unique per challenge in the input set"))
        keys.add(composite)
        found += _storable(raw, where)
    return found


def _storable(raw: Mapping[str, Any], where: str) -> list[FieldError]:
    """The platform stores a case as JSON: NaN, ±Inf or non-string keys cannot be."""
    values = [(f"{where}.payload", raw.get("payload"))]
    for name in ("inputs", "expectations"):
        values += [(f"{where}.{name}[{k}].value", e.get("value"))
                   for k, e in enumerate(_list(raw.get(name)))]
    found: list[FieldError] = []
    for path, value in values:
        try:
            to_json(value, path)
        except MarshalError as err:
            found.append(FieldError(err.path, str(err)))
    return found


def _set_cases(input_set: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A set's cases; its legacy ``items`` when it has no cases."""
    cases = _list(input_set.get("cases"))
    return cases or _list(input_set.get("items"))


def _case(raw: Mapping[str, Any], input_set: str, assets: dict[str, dict[str, str]]) -> Case:
    legacy = raw.get("user_simulator") is None and not any(
        raw.get(k) for k in ("inputs", "expectations", "artifacts", "assets",
                             "case_timeout_seconds"))
    payload = raw.get("payload")
    stored = go_marshal(payload if isinstance(payload, Mapping) else {})
    inputs = [_entry(e, ("path",), legacy) for e in _list(raw.get("inputs"))]
    expectations = [_entry(e, ("source",), legacy) for e in _list(raw.get("expectations"))]
    return Case(
        input_set=input_set, challenge_key=_text(raw, "challenge_key"), case_key=_key_of(raw),
        payload=stored if legacy else go_json(_as_float64(stored)),
        inputs=inputs, expectations=expectations,
        artifacts=list(_artifacts(raw, inputs, expectations, assets).values()))


def _entry(raw: Mapping[str, Any], pointer: tuple[str, ...], legacy: bool) -> dict[str, Any]:
    entry = {name: _text(raw, name) for name in ("key", "kind", "artifact_key", *pointer)}
    if raw.get("value") is not None:
        entry["value"] = _as_float64(go_marshal(raw["value"]))
    return entry


def _artifacts(raw: Mapping[str, Any], inputs: list[dict[str, Any]],
               expectations: list[dict[str, Any]],
               assets: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    found = dict(_assets(raw.get("assets")))
    named = [str(r.get("key") or "").strip() for r in _list(raw.get("artifacts"))]
    named += [e["artifact_key"] for e in [*inputs, *expectations]]
    named += [s.strip()[len("artifact:"):].strip() for s in
              (e.get("source", "") for e in expectations) if s.strip().startswith("artifact:")]
    found.update({k: assets[k] for k in named if k in assets})
    return found


def _assets(raw: Any) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for asset in _list(raw):
        entry = {name: _text(asset, name) for name in ("key", "kind", "path", "media_type")}
        if entry["key"]:
            out[entry["key"]] = entry
    return out


def _as_float64(text: str) -> Any:
    """A JSON text read back by Go into ``any``: every number a float64."""
    return json.loads(text, parse_int=float)


def _key_of(raw: Mapping[str, Any]) -> str:
    return _text(raw, "case_key") or _text(raw, "item_key")


def _text(raw: Mapping[str, Any], name: str) -> str:
    value = raw.get(name)
    return value.strip() if isinstance(value, str) else ""


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _get(mapping: Mapping[str, Any], *path: str) -> Any:
    value: Any = mapping
    for name in path:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


def _get_root(manifest: Any, name: str) -> Any:
    return manifest.get(name) if isinstance(manifest, Mapping) else None
