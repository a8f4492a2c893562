"""A whole run's sandbox work as one value, and its one result.

The pipeline hands a :class:`Plan` to :func:`sandbox.evaluation.plans.run_plan`: the
environment probe (:mod:`sandbox.envprobe`; a finding ends the plan there) → the pack's
files and setup commands → the submission's files and commands (each command with its own
timeout and caps) → stop every candidate process → (clean room: the captures and
listings, then copy the deliverables out and run the probes as the candidate) → test files
→ test commands (``code_execution``, as the judge) → stop again → (else: the captures and
listings, in declaration order under one capture budget) → the custom-script evaluator, if
any. A driver may carry that out
in as few round trips as it likes (one exec, or none) as long as the result is the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evalfleet.sandbox.capture import DEFAULT_MAX_TOTAL_BYTES, Check
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.envprobe import EnvironmentProbe, EnvironmentReport
from evalfleet.sandbox.evaluator import EvaluatorRecord, EvaluatorRun
from evalfleet.sandbox.execution import CodeExecution, TestRun
from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.results import DirectoryListing, ExecResult, FileCapture
from evalfleet.sandbox.room import Probe


@dataclass(frozen=True)
class Plan:
    """Everything one run needs from its sandbox."""

    files: tuple[SeedFile, ...] = ()
    commands: tuple[Command, ...] = ()
    setup_files: tuple[SeedFile, ...] = ()
    """Seeded with the first of :attr:`setup_commands`, before :attr:`files`."""
    setup_commands: tuple[Command, ...] = ()
    """Run before :attr:`files` are seeded and :attr:`commands` run: nothing of the
    candidate's is in the sandbox yet. Their results come first in
    :attr:`PlanResult.commands`."""
    environment: EnvironmentProbe | None = None
    """Checked before anything is seeded; a finding ends the plan (nothing else runs)."""
    environment_after_setup: EnvironmentProbe | None = None
    """Checked after the setup commands (what they install counts), before anything of the
    candidate's is seeded; a finding ends the plan there."""
    test_files: tuple[SeedFile, ...] = ()
    """The pack's own test files: written only after the candidate is stopped, so a
    submission can neither read nor rewrite them."""
    tests: tuple[CodeExecution, ...] = ()
    checks: tuple[Check, ...] = ()
    """``file_capture`` / ``directory_listing`` checks, in declaration order."""
    stop_on_command_failure: bool = False
    """Skip the remaining commands once one does not exit 0 (tests and captures still run)."""
    capture_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    evaluator: EvaluatorRun | None = None
    """A custom-script evaluator, run last, sealed (:mod:`sandbox.evaluation.evaluator`)."""
    deliverables: tuple[str, ...] = ()
    """What the candidate must produce (workspace paths). Set, the tests run in the judge's
    clean room with only these, copied; unset, next to the candidate's files
    (:mod:`sandbox.room`)."""
    probes: tuple[Probe, ...] = ()
    """Runs of the candidate's code whose outputs the clean room's tests read."""

    @property
    def executes_nothing(self) -> bool:
        """No file to write, command, test, capture, listing, evaluator or probe: a
        sandbox would have nothing to do (a pack scoring only the submitted events)."""
        return not (self.files or self.commands or self.setup_files or self.setup_commands
                    or self.test_files or self.tests or self.checks or self.evaluator
                    or self.probes)


@dataclass(frozen=True)
class PlanResult:
    """One result with a record per step."""

    sandbox_id: str
    profile: str
    image: str
    limits: Limits
    commands: tuple[ExecResult, ...]
    tests: tuple[TestRun, ...]
    checks: tuple[FileCapture | DirectoryListing, ...]
    image_id: str = ""
    """The id (config digest) of the image, where the driver knows it."""
    runtime: str = ""
    """The OCI runtime that isolated the sandbox (``runsc``, ``runc``...)."""
    supervisor: str = ""
    """The sandbox's supervisor build (``evalfleet-supervisor protocol 6``), where the
    driver has one."""
    files_written: int = 0
    commands_skipped: int = 0
    deadline_exceeded: bool = False
    """The sandbox's wall deadline ended it; later steps report timeouts / missing files."""
    duration_s: float = 0.0
    usage: Mapping[str, float | None] = field(default_factory=dict)
    """What the sandbox used (``memory_peak_bytes``, ``cpu_seconds``) where the driver can
    tell; empty otherwise. A figure that cannot be this run's own (a reused sandbox's peak
    memory that could not be re-based) is ``None``."""
    usage_unavailable: str = ""
    """Why :attr:`usage` is empty or has a ``None`` (``""`` when neither)."""
    evaluator: EvaluatorRecord | None = None
    probes: tuple[ExecResult, ...] = ()
    """The probes' results (clean room only), in plan order."""
    environment: EnvironmentReport | None = None
    """The last environment probe's report (``None`` when the plan asked for none): the
    one whose findings ended the plan, if any did."""
    setup_commands: int = 0
    """How many of :attr:`commands` (the first ones) are the pack's setup commands."""
    setup_refused: str = ""
    """Why the sandbox could not write :attr:`Plan.setup_files`, the pack's own
    (:class:`~sandbox.errors.SeedRefused`), or ``""``. The plan ended there, before
    anything of the submission's."""
    files_refused: str = ""
    """Why the sandbox could not write :attr:`Plan.files`, the submission's (``tar``'s
    :class:`~sandbox.errors.SeedRefused`: the workspace full, say), or ``""``. The plan
    ended there: none of the submission's commands ran, no test, capture or listing."""

    @property
    def setup_failure(self) -> ExecResult | None:
        """The setup command that did not succeed (it ended the plan), if one did not."""
        failed = [c for c in self.commands[:self.setup_commands] if not c.ok]
        return failed[0] if failed else None

    @property
    def captures(self) -> tuple[FileCapture, ...]:
        """The file captures among :attr:`checks`."""
        return tuple(c for c in self.checks if isinstance(c, FileCapture))

    @property
    def listings(self) -> tuple[DirectoryListing, ...]:
        """The directory listings among :attr:`checks`."""
        return tuple(c for c in self.checks if isinstance(c, DirectoryListing))
