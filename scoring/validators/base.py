"""The validator contract: one :class:`Kind` per validator type, one :class:`Outcome` per run.

A validator kind is data (its config model, how strict the config is, whether it takes an
``expected_from``) plus a pure ``check`` function from :class:`CheckInput` to
:class:`Outcome`. The engine resolves evidence, decodes the config and handles missing
evidence generically, so a check only decides. A candidate's bad output is an outcome
(``fail`` or an ``error`` outcome classed ``evaluator_error``), never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from ..compat import lenient
from ..compat.godecode import unwrap
from ..errors import FieldError
from ..record.evidence import Evidence
from ..record.references import Resolution
from ..spec.models import EvaluationSpec, ValidatorDecl

Strictness = Literal["strict", "lenient", "ignored"]
ExpectedRule = Literal["required", "ignored", "omitted"]
"""``required``: expected_from must be set; ``ignored``: allowed, never read;
``omitted``: must not be set (tool_call_assertion, postcondition)."""
State = Literal["available", "unavailable", "error"]
Verdict = Literal["pass", "fail", "error", ""]
OutcomeClass = Literal["pass", "fail", "unavailable", "pack_error", "infra_error",
                       "evaluator_error"]
#: A validator's error when the candidate's answer nests past Python's recursion limit
#: (AgentClash's Go would read it; a forfeit here, docs/scoring.md §C8).
NESTED_TOO_DEEPLY = "parse actual value: nested too deeply"


class StrictConfig(BaseModel):
    """Base for strict configs: unknown keys rejected, JSON types not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class LenientConfig(BaseModel):
    """Base for lenient configs: unknown keys silently ignored (AgentClash's plain decode)."""

    model_config = ConfigDict(extra="ignore", strict=True)


@dataclass(frozen=True)
class Outcome:
    """What a check decided.

    Use the constructors: :meth:`passed`, :meth:`failed`, :meth:`graded`, :meth:`error`,
    :meth:`unavailable`. ``evidence`` is validator-specific detail recorded in the result
    (never raw tool arguments or secrets).
    """

    state: State
    verdict: Verdict
    score: float | None
    reason: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    source: Mapping[str, Any] | None = None
    """The run event the check read, when the check itself knows it (a tool call, a
    code-execution record); otherwise the engine derives it from the target."""

    @classmethod
    def passed(cls, reason: str = "", **evidence: Any) -> Outcome:
        return cls("available", "pass", 1.0, reason, evidence)

    @classmethod
    def failed(cls, reason: str = "", **evidence: Any) -> Outcome:
        return cls("available", "fail", 0.0, reason, evidence)

    @classmethod
    def check(cls, ok: bool, pass_reason: str, fail_reason: str, **evidence: Any) -> Outcome:
        """Binary outcome: score 1 and ``pass_reason`` if ok, else 0 and ``fail_reason``."""
        if ok:
            return cls.passed(pass_reason, **evidence)
        return cls.failed(fail_reason, **evidence)

    @classmethod
    def graded(cls, score: float, threshold: float, reason: str = "", **evidence: Any) -> Outcome:
        """Continuous score kept even on fail; pass iff score >= threshold (inclusive)."""
        verdict: Verdict = "pass" if score >= threshold else "fail"
        return cls("available", verdict, score, reason, evidence)

    @classmethod
    def error(cls, reason: str, **evidence: Any) -> Outcome:
        """The check could not judge (``verdict: error``)."""
        return cls("error", "error", None, reason, evidence)

    @classmethod
    def broken(cls, reason: str, **evidence: Any) -> Outcome:
        """The validator could not even start (its evidence reference or config failed):
        state ``error`` with no verdict, as AgentClash leaves it."""
        return cls("error", "", None, reason, evidence)

    @classmethod
    def unavailable(cls, reason: str, **evidence: Any) -> Outcome:
        return cls("unavailable", "", None, reason, evidence)


@dataclass(frozen=True)
class CheckInput:
    """Everything a check may read. ``actual``/``expected`` are resolved text."""

    decl: ValidatorDecl
    config: Any
    """The decoded config model (None for ``ignored`` configs)."""
    actual: str | None
    expected: str | None
    target: Resolution
    """The full target resolution, for kinds that handle missing evidence themselves."""
    evidence: Evidence
    spec: EvaluationSpec


Check = Callable[[CheckInput], Outcome]
ConfigRule = Callable[[Any, str], list[FieldError]]
"""Extra load-time rules for a decoded config: ``(config, field_path) -> errors``."""


@dataclass(frozen=True)
class Kind:
    """One validator type: its config, its evidence needs and its check."""

    name: str
    check: Check
    config: type[BaseModel] | None = None
    strictness: Strictness = "ignored"
    expected: ExpectedRule = "required"
    needs_file_target: bool = False
    """Target must be ``file:<key>`` ("file validators")."""
    handles_missing_target: bool = False
    """The check is called even when the target is unavailable (file_exists, postcondition)."""
    resolves_target: bool = True
    """False when the target is not an evidence text (tool_call_assertion reads the trace)."""
    config_rules: ConfigRule | None = None
    config_required: bool = False
    """A missing/null config is a load-time error "<type> config is required"."""
    graded: bool = False
    go_struct: str = ""
    """The Go struct AgentClash decodes the config into (named in decoding errors)."""
    go_types: Mapping[str, str] = field(default_factory=dict)
    """Go field types the model's annotations do not show (``int64``, named strings)."""

    def decode_config(self, raw: Any) -> tuple[Any, str | None]:
        """Decode a raw config as Go does; returns (model or None, Go's error or None).

        The error is ``encoding/json``'s text (``json: unknown field "x"``); validation
        words it with :func:`config_parse_message`, a run with ``parse <type> config:``.
        """
        if self.config is None or self.strictness == "ignored":
            return None, None
        fields = go_fields(self.config, self.go_types)
        decoded = lenient.decode(raw, self.go_struct, fields, strict=self.strictness == "strict")
        if decoded.error is not None:
            return None, decoded.error
        given = {name: None if decoded.values[name] is lenient.NULL else decoded.values[name]
                 for name in decoded.present
                 if decoded.values[name] is not None or fields[name][0] == "rawmessage"}
        try:
            return self.config.model_validate(given), None
        except ValidationError as err:  # a rule of the model itself (none is Go-visible)
            return None, str(err.errors()[0]["msg"])


def config_parse_message(message: str) -> str:
    """``configParseErrorMessage``: a JSON decoding error gets ``invalid JSON: ``."""
    if message.startswith("json:") or "cannot unmarshal" in message or \
            "invalid character" in message:
        return f"invalid JSON: {message}"
    return message


def go_fields(model: type[BaseModel], overrides: Mapping[str, str]) -> lenient.Fields:
    """The Go field types of a config model, from its annotations (and ``overrides``)."""
    fields: dict[str, tuple[str, Any]] = {}
    for name, info in model.model_fields.items():
        json_name = info.alias or name
        fields[json_name] = (overrides.get(json_name) or _go_kind(info.annotation), None)
    return fields


def _go_kind(annotation: Any) -> str:
    target = unwrap(annotation)
    if target is Any:
        return "rawmessage"
    if get_origin(target) is list:
        return "strings"
    return {bool: "bool", str: "string", int: "int", float: "float64"}.get(target, "raw")


_PACK_ERROR_PREFIXES = (
    "parse expected boolean assertion value", "parse expected numeric value",
    "parse expected as json", "parse fuzzy_match config", "parse numeric_match config",
    "parse normalized_match config", "parse token_f1 config", "parse math_equivalence config",
    "parse bleu_score config", "parse bleu_score references", "parse rouge_score config",
    "parse rouge_score references", "parse chrf_score config", "parse chrf_score references",
    "parse tool_call_assertion config", "parse json schema", "resolve json schema",
    "parse json_path_match expectation", "evaluate jsonpath expression",
    "compare jsonpath value",
)
"""``isPackAuthorValidatorError``'s prefixes (``engine_validators.go``), lower case."""


def classify(outcome: Outcome, type_name: str) -> OutcomeClass:
    """AgentClash's ``classifyValidatorOutcome``: the outcome class of docs/scoring.md §6.

    Available: ``pass``/``fail`` by verdict (no verdict: ``fail`` with a score, else
    ``unavailable``). Error: code_execution is ``pack_error`` for its config and pass_at_k,
    else ``infra_error``; any other type is ``pack_error`` when the lower-cased reason
    shows an author's mistake, else ``evaluator_error``.
    """
    if outcome.state == "unavailable":
        return "unavailable"
    if outcome.state == "available":
        if outcome.verdict in ("pass", "fail"):
            return outcome.verdict
        if outcome.verdict == "error":
            return "evaluator_error"
        return "fail" if outcome.score is not None else "unavailable"
    reason = outcome.reason.lower()
    if type_name == "code_execution":
        config = reason.startswith("parse code_execution config") or "pass_at_k requires" in reason
        return "pack_error" if config else "infra_error"
    return "pack_error" if is_pack_author_error(reason) else "evaluator_error"


def is_pack_author_error(reason: str) -> bool:
    """``isPackAuthorValidatorError`` on a lower-cased reason."""
    return ("invalid regex pattern" in reason or "unsupported comparator" in reason
            or ("invalid " in reason and " config" in reason)
            or " config is required" in reason
            or (" config." in reason and " is required" in reason)
            or "unsupported match_mode" in reason or "unsupported validator type" in reason
            or reason.startswith(_PACK_ERROR_PREFIXES))
