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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import FieldError
from ..evidence import Evidence
from ..references import Resolution
from ..spec import EvaluationSpec, ValidatorDecl

Strictness = Literal["strict", "lenient", "ignored"]
ExpectedRule = Literal["required", "ignored", "omitted"]
"""``required``: expected_from must be set; ``ignored``: allowed, never read;
``omitted``: must not be set (tool_call_assertion, postcondition)."""
State = Literal["available", "unavailable", "error"]
Verdict = Literal["pass", "fail", "error", ""]
OutcomeClass = Literal["pass", "fail", "unavailable", "pack_error", "infra_error",
                       "evaluator_error"]


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
    outcome_class: OutcomeClass | None = None
    """Overrides the class derived from state/verdict/reason (see :func:`classify`)."""

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
    def error(cls, reason: str, outcome_class: OutcomeClass | None = None,
              **evidence: Any) -> Outcome:
        return cls("error", "error", None, reason, evidence, outcome_class)

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

    def decode_config(self, raw: Any) -> tuple[Any, str | None]:
        """Decode a raw config; returns (model or None, error message or None)."""
        if self.config is None or self.strictness == "ignored":
            return None, None
        try:
            return self.config.model_validate({} if raw is None else raw), None
        except ValidationError as err:
            return None, config_error_message(err)


def config_error_message(err: ValidationError) -> str:
    """Go-decoder-like text for the first config decoding problem."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        return f'invalid JSON: json: unknown field "{where}"'
    if first["type"] in {"model_type", "model_attributes_type"}:
        return "invalid JSON: json: cannot unmarshal non-object into config"
    return f"invalid JSON: json: cannot unmarshal into field {where}: {first['msg']}"


_PACK_ERROR_MARKERS = (
    "invalid regex", "unsupported comparator", "unsupported match_mode",
    "unsupported validator type", "config is required", "invalid json:",
    "unsupported json schema draft", "parse expected", "parse json schema",
    "invalid json path", "invalid quoted property", "normalization step",
)


def classify(outcome: Outcome, kind_name: str) -> OutcomeClass:
    """The outcome class of §6 for an outcome."""
    if outcome.outcome_class is not None:
        return outcome.outcome_class
    if outcome.state == "unavailable":
        return "unavailable"
    if outcome.state == "available":
        return "pass" if outcome.verdict == "pass" else "fail"
    reason = outcome.reason.lower()
    config_problem = reason.startswith("invalid ") and "config" in reason
    if config_problem or any(marker in reason for marker in _PACK_ERROR_MARKERS):
        return "pack_error"
    return "evaluator_error"
