"""Loading specs and packs: JSON or YAML, from a path, text or mapping (§2.1, §3).

A bare ``evaluation_spec`` (optionally wrapped as ``{evaluation_spec: ...}``) or a whole
AgentClash challenge pack (``pack``, ``version.evaluation_spec``, ``challenges``,
``input_sets[].cases[]``). The spec is decoded strictly; the pack envelope leniently.
Every problem comes back as one :class:`SpecError` listing all findings, each with its
field path and, for YAML text, its line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .cases import Case
from .errors import FieldError, SpecError
from .spec import EvaluationSpec
from .validation import validate_spec

Source = str | os.PathLike[str] | Mapping[str, Any]
LineMap = dict[str, int]
_TYPE_MESSAGES = {
    "int_type": "must be an integer", "int_from_float": "must be an integer",
    "float_type": "must be a number", "string_type": "must be a string",
    "bool_type": "must be a boolean", "list_type": "must be a list",
    "model_type": "must be an object", "dict_type": "must be an object",
    "model_attributes_type": "must be an object",
}


@dataclass(frozen=True)
class Pack:
    """A challenge pack: its spec, its cases, and the raw manifest (for the sandbox block)."""

    spec: EvaluationSpec
    cases: list[Case] = field(default_factory=list)
    manifest: Mapping[str, Any] = field(default_factory=dict)

    def case(self, case_key: str | None) -> Case | None:
        """The case named ``case_key``, the only case when None, else None."""
        if case_key is None:
            return self.cases[0] if len(self.cases) == 1 else None
        return next((c for c in self.cases if c.case_key == case_key), None)


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
    data, lines = _read(source)
    if not isinstance(data, Mapping) or not data:
        raise SpecError.single("manifest", "is required")
    root, body = _spec_body(data)
    if body is data:
        lines = {f"{root}.{path}": line for path, line in lines.items()}
    spec = _decode(body, root, lines)
    findings = validate_spec(spec, root)
    if findings:
        raise SpecError(_with_lines(findings, lines))
    return Pack(spec=spec, cases=_cases(data), manifest=data)


def _spec_body(data: Mapping[str, Any]) -> tuple[str, Any]:
    if "version" in data or "pack" in data:
        version = data.get("version")
        body = version.get("evaluation_spec") if isinstance(version, Mapping) else None
        if not body:
            raise SpecError.single("version.evaluation_spec", "is required")
        return "version.evaluation_spec", body
    if "evaluation_spec" in data:
        if not data["evaluation_spec"]:
            raise SpecError.single("evaluation_spec", "is required")
        return "evaluation_spec", data["evaluation_spec"]
    return "evaluation_spec", data


def _decode(body: Any, root: str, lines: LineMap) -> EvaluationSpec:
    try:
        return EvaluationSpec.model_validate(body)
    except ValidationError as err:
        findings = [_field_error(e, root) for e in err.errors()]
        raise SpecError(_with_lines(findings, lines)) from None


def _field_error(error: Any, root: str) -> FieldError:
    path = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    if error["type"] == "extra_forbidden":
        return FieldError(path, f'unknown field "{error["loc"][-1]}"')
    return FieldError(path, _TYPE_MESSAGES.get(error["type"], error["msg"]))


def _with_lines(findings: list[FieldError], lines: LineMap) -> list[FieldError]:
    return [f._replace(line=_line_of(f.field, lines)) for f in findings]


def _line_of(path: str, lines: LineMap) -> int | None:
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return None


def _cases(data: Mapping[str, Any]) -> list[Case]:
    sets = data.get("input_sets")
    if not isinstance(sets, list) or not sets or not isinstance(sets[0], Mapping):
        return []
    raw = sets[0].get("cases")
    return [Case.model_validate(c) for c in raw if isinstance(c, Mapping)] if raw else []


# -- reading -------------------------------------------------------------------------------


def _read(source: Source) -> tuple[Any, LineMap]:
    if isinstance(source, Mapping):
        return source, {}
    if isinstance(source, os.PathLike) or _looks_like_path(source):
        path = Path(source)
        text = _read_file(path)
        return parse_text(text, yaml_hint=path.suffix.lower() in (".yaml", ".yml"))
    return parse_text(source)


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


def parse_text(text: str, *, yaml_hint: bool = False) -> tuple[Any, LineMap]:
    """Parse JSON (strictly: no trailing data) or YAML text.

    Raises:
        SpecError: when the text is not one well-formed document.
    """
    if not yaml_hint and text.lstrip().startswith("{"):
        return _parse_json(text), {}
    return _parse_yaml(text)


def _parse_json(text: str) -> Any:
    decoder = json.JSONDecoder()
    try:
        value, end = decoder.raw_decode(text, len(text) - len(text.lstrip()))
    except json.JSONDecodeError as err:
        raise SpecError.single("manifest", f"invalid JSON: {err.msg}", err.lineno) from None
    except RecursionError:
        raise SpecError.single("manifest", "invalid JSON: nested too deeply") from None
    except ValueError as err:  # e.g. an integer past Python's 4300-digit limit
        raise SpecError.single("manifest", f"invalid JSON: {err}") from None
    if text[end:].strip():
        raise SpecError.single("manifest", "unexpected trailing data after JSON value")
    return value


class _Loader(yaml.SafeLoader):
    """Safe YAML whose timestamps stay strings (JSON has no timestamp type)."""


def _timestamp_as_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)


def _parse_yaml(text: str) -> tuple[Any, LineMap]:
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except RecursionError:  # 10k-deep flow collections
        raise SpecError.single("manifest", "invalid YAML: nested too deeply") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise SpecError.single("manifest", f"invalid YAML: {err}", line) from None
    if len(nodes) > 1:
        line = nodes[1].start_mark.line + 1 if nodes[1] is not None else None
        raise SpecError.single("manifest", "unexpected trailing data after YAML document", line)
    if not nodes or nodes[0] is None:
        return None, {}
    lines: LineMap = {}
    _index_lines(nodes[0], "", lines)
    try:
        return _Loader(text).get_single_data(), lines
    except ValueError as err:  # e.g. an integer past Python's 4300-digit limit
        raise SpecError.single("manifest", f"invalid YAML: {err}") from None


def _index_lines(node: yaml.Node, path: str, lines: LineMap) -> None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = f"{path}.{key.value}" if path else str(key.value)
            lines[child] = key.start_mark.line + 1
            _index_lines(value, child, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[f"{path}[{i}]"] = item.start_mark.line + 1
            _index_lines(item, f"{path}[{i}]", lines)
