"""Sandboxes for evaluation runs: the contract, its fake, and (in ``sandbox.docker``) the
hardened Docker driver.

The pipeline builds a :class:`Plan`, acquires a :class:`Sandbox` from a
:class:`SandboxFactory` and calls :meth:`Sandbox.run_plan`; the result carries one record
per step. Candidate failures are fields of results; :class:`SandboxUnavailable` (retry) and
:class:`SandboxConfigError` (don't) are ours.
"""

from __future__ import annotations

from sandbox.base import Sandbox, SandboxFactory
from sandbox.capture import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    CaptureBudget,
    CaptureCheck,
    Check,
    ListingCheck,
)
from sandbox.command import Command, SeedFile
from sandbox.counts import TestCounts, TestVerdict, parse_counts
from sandbox.errors import SandboxConfigError, SandboxError, SandboxUnavailable
from sandbox.execution import CodeExecution, CodeExecutionRecord
from sandbox.plan import Plan, PlanResult
from sandbox.profile import Hardening, Limits, Profile
from sandbox.results import DirectoryListing, ExecResult, FileCapture, ListingEntry
from sandbox.template import merge_case_context, render

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "CaptureBudget",
    "CaptureCheck",
    "Check",
    "CodeExecution",
    "CodeExecutionRecord",
    "Command",
    "DirectoryListing",
    "ExecResult",
    "FileCapture",
    "Hardening",
    "Limits",
    "ListingCheck",
    "ListingEntry",
    "Plan",
    "PlanResult",
    "Profile",
    "Sandbox",
    "SandboxConfigError",
    "SandboxError",
    "SandboxFactory",
    "SandboxUnavailable",
    "SeedFile",
    "TestCounts",
    "TestVerdict",
    "merge_case_context",
    "parse_counts",
    "render",
]
