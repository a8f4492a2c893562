"""Case records in AgentClash pack form: what ``case.*`` and ``artifact.*`` references read.

Cases are decoded leniently (the pack envelope is lenient in AgentClash): unknown keys are
kept out of the way, not rejected. ``inputs``, ``expectations`` and ``artifacts`` may be
given as lists of ``{key, ...}`` entries (the pack form) or as mappings keyed by ``key``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


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

    challenge_key: str = ""
    case_key: str = ""
    payload: Any = None
    inputs: list[CaseEntry] = Field(default_factory=list)
    expectations: list[CaseEntry] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)

    _lists = field_validator("inputs", "expectations", "artifacts", mode="before")(_keyed_list)

    def input(self, key: str) -> CaseEntry | None:
        """The input entry named ``key``."""
        return next((e for e in self.inputs if e.key == key), None)

    def expectation(self, key: str) -> CaseEntry | None:
        """The expectation entry named ``key``."""
        return next((e for e in self.expectations if e.key == key), None)

    def artifact(self, key: str) -> Artifact | None:
        """The artifact named ``key``."""
        return next((a for a in self.artifacts if a.key == key), None)
