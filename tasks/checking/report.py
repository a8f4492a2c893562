"""What ``evalfleet check`` reports: per case, one :class:`SectionReport` per section.

A section is sound when it has no ``error`` finding; a pack is sound when every *core*
section of every case is. Warnings and notes never fail a pack. ``--format json`` prints
:class:`CheckReport` as is (``schema_version`` 1).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

SCHEMA_VERSION: Literal[1] = 1
Level = Literal["error", "warning", "info"]


class Finding(BaseModel):
    """One thing a section found: an ``error`` makes the section (and the pack) unsound."""

    level: Level
    message: str


class SectionReport(BaseModel):
    """One section's verdict on one case: a small table and its findings."""

    key: str
    title: str
    core: bool = True
    """Whether the section decides the pack's soundness (and ``evalfleet check``'s exit)."""
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """No error among the findings."""
        return not any(f.level == "error" for f in self.findings)

    def add(self, level: Level, message: str) -> None:
        self.findings.append(Finding(level=level, message=message))


class CaseReport(BaseModel):
    """Every section's report on one case of the pack."""

    case_key: str | None
    sections: list[SectionReport] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Every core section passed."""
        return all(s.passed for s in self.sections if s.core)


class CheckReport(BaseModel):
    """The preflight of one pack version: what ran where, and every case's sections."""

    schema_version: Literal[1] = SCHEMA_VERSION
    pack: str
    """The spec's name."""
    version_number: int | None = None
    digest: str
    """SHA-256 of the pack document in canonical JSON
    (:func:`tasks.evaluation.packs.pack_digest`)."""
    runs: int
    """How many times the reference ran per case."""
    where: str
    """``local`` (this machine's engine) or the fleet's Redis location (no password)."""
    images: list[str] = Field(default_factory=list)
    image_ids: list[str] = Field(default_factory=list)
    runtimes: list[str] = Field(default_factory=list)
    cases: list[CaseReport] = Field(default_factory=list)
    passed: bool = False
    """The pack is sound: every core section of every case passed."""
    sections: dict[str, bool] = Field(default_factory=dict)
    """Per section key: whether it passed on every case (core or not)."""

    def seal(self) -> CheckReport:
        """Fill :attr:`passed` and :attr:`sections` from the case reports."""
        self.passed = bool(self.cases) and all(c.passed for c in self.cases)
        keys = dict.fromkeys(s.key for c in self.cases for s in c.sections)
        self.sections = {key: all(s.passed for c in self.cases for s in c.sections
                                  if s.key == key) for key in keys}
        return self

    def errors(self) -> list[str]:
        """Every error finding, as ``case: section: message``."""
        return [f"{c.case_key or '-'}: {s.key}: {f.message}" for c in self.cases
                for s in c.sections for f in s.findings if f.level == "error"]
