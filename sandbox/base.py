"""The sandbox contract: what every driver (the Docker driver, the fake) provides.

A driver implements a few primitives (:meth:`Sandbox.write_files`, :meth:`Sandbox.exec`,
:meth:`Sandbox.stop_candidate`, :meth:`Sandbox.read_file`, :meth:`Sandbox.list_dir`,
:meth:`Sandbox.close`); the AgentClash rules (capture caps, code execution, the plan's
order) live here once, so every driver applies them the same way. A driver may override
:meth:`Sandbox.run_plan` to do the same work in fewer round trips. The fake is
:mod:`sandbox.testing.fake`; :mod:`sandbox.testing.contract` holds the checks every
driver passes.
"""

from __future__ import annotations

import dataclasses
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol

from evalfleet.sandbox import envprobe, plan_steps, room
from evalfleet.sandbox.capture import CaptureBudget, CaptureCheck, ListingCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.envprobe import EnvironmentProbe, EnvironmentReport
from evalfleet.sandbox.errors import SandboxUnavailable, SeedRefused
from evalfleet.sandbox.evaluator import EvaluatorRecord, EvaluatorRun, not_run
from evalfleet.sandbox.execution import CodeExecution, TestRun, command_for_test
from evalfleet.sandbox.paths import PathRejected, sandbox_path
from evalfleet.sandbox.plan import Plan, PlanResult
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import DirectoryListing, ExecResult, FileCapture, FileRead, Listing


class Sandbox(ABC):
    """One started sandbox, used by exactly one run, then closed."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    @property
    @abstractmethod
    def id(self) -> str:
        """A stable identifier (the container id for Docker)."""

    @property
    def deadline_exceeded(self) -> bool:
        """Whether the sandbox's wall deadline has ended it."""
        return False

    @property
    def runtime(self) -> str:
        """The OCI runtime isolating the sandbox (``""`` when the driver has none)."""
        return self.profile.runtime or ""

    @property
    def image_id(self) -> str:
        """The id of the image the sandbox runs (``""`` when the driver has none)."""
        return ""

    @abstractmethod
    def write_files(self, files: Sequence[SeedFile]) -> None:
        """Write files into the workspace (parents created, modes applied).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def exec(self, command: Command) -> ExecResult:
        """Run one command as the candidate's user; every candidate outcome is a result.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def stop_candidate(self) -> None:
        """Kill every process the candidate's commands started (the sandbox stays up).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def read_file(self, path: str, limit: int) -> FileRead:
        """Read a regular file (never through a link): its full size, ``limit`` bytes.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def list_dir(self, path: str, max_entries: int) -> Listing:
        """List everything below ``path`` (recursively), at most ``max_entries`` entries.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def export_files(self, paths: Sequence[str]) -> tuple[SeedFile, ...]:
        """Stop the candidate, then copy out the regular files at (or below) ``paths`` in
        the workspace, as the candidate reads them; links and special files are left
        behind, missing paths skipped, at most ``seed_bytes`` in all. Paths relative to
        the workspace, modes :data:`~sandbox.room.DELIVERABLE_MODE`.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def write_room(self, files: Sequence[SeedFile]) -> None:
        """Write ``files`` (paths relative to :data:`~sandbox.room.ROOM`) into the judge's
        room as the judge, its parts created.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def read_room_file(self, path: str, limit: int) -> FileRead:
        """Read one regular file of the judge's room as the judge (``limit`` bytes).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def close(self) -> None:
        """Remove the sandbox and everything it owns; safe to call twice, never raises."""

    def terminate(self) -> None:
        """End the sandbox now, from any thread (the run was cancelled): a step under way
        and every later one fail or find it ended, and :meth:`close` removes it rather
        than hand it back for reuse. Never raises. The default is :meth:`close`; a driver
        whose ``close`` is not safe beside a running step overrides it."""
        self.close()

    def capture(self, check: CaptureCheck, budget: CaptureBudget) -> FileCapture:
        """Capture one file under the §7.2 caps, charging ``budget``.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        try:
            path = sandbox_path(check.path, self.profile.workdir)
        except PathRejected as rejected:
            return FileCapture(key=check.key, path=check.path, exists=False, error=str(rejected))
        limit = budget.limit_for(check.max_size_bytes)
        return budget.record(check, check.path, self.read_file(path, max(limit, 0)), limit)

    def list_directory(self, check: ListingCheck) -> DirectoryListing:
        """List one directory under the profile's entry cap.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        cap = self.profile.limits.listing_entries
        try:
            listing = self.list_dir(sandbox_path(check.path, self.profile.workdir), cap)
        except PathRejected as rejected:
            listing = Listing(error=str(rejected))
        return DirectoryListing(key=check.key, path=check.path, entries=listing.entries,
                                max_entries=cap, truncated=listing.truncated,
                                error=listing.error, dropped=listing.dropped,
                                capped=listing.capped)

    def code_execution(self, spec: CodeExecution, *, index: int = 0,
                       clean: bool = False) -> TestRun:
        """Run a ``code_execution`` test command as the judge (every other process stopped
        first) in the §7.3 directory, or in the clean room's tests (``clean``), with the
        judge's environment (:mod:`sandbox.room`); with the report it wrote (the
        ``index``-th of the plan's) when it has one.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        result = self.exec(self.judge_command(spec, index=index, clean=clean))
        return TestRun(spec, result, self._report(spec, index))

    def judge_command(self, spec: CodeExecution, *, index: int, clean: bool) -> Command:
        """The test's command as the judge: its directory, caps and environment (in the
        clean room, a ``PATH`` of directories the candidate cannot write:
        :meth:`trusted_env`; in the workspace, AgentClash's environment, untouched)."""
        test = command_for_test(spec, self.profile.workdir)
        report = room.report_path(index) if spec.report else None
        return dataclasses.replace(
            test, user=self.profile.hardening.judge_user,
            workdir=room.TESTS if clean else test.workdir,
            env={**test.env, **room.judge_env(clean=clean, report=report,
                                               imports=spec.imports_deliverables),
                 **(self.trusted_env() if clean else {})})

    def probe_command(self, probe: room.Probe) -> Command:
        """A probe's command as it runs (as the candidate, in the workspace): the pack's,
        in an environment the submission cannot shape (:func:`sandbox.room.probe_env`,
        :meth:`trusted_env`)."""
        command = probe.command
        return dataclasses.replace(
            command, env={**command.env, **room.probe_env(), **self.trusted_env()})

    def trusted_env(self) -> dict[str, str]:
        """``PATH``: the image's, without the directories the candidate can write
        (:func:`sandbox.room.trusted_path`); empty where the driver does not know the
        image's environment."""
        return {}

    def writable(self) -> tuple[str, ...]:
        """The directories the candidate's uid can write: the workspace, ``/tmp``,
        ``/dev/shm`` (the root is read-only)."""
        return room.writable(self.profile)

    def _report(self, spec: CodeExecution, index: int) -> FileRead | None:
        """The report a test with one wrote (read as the judge), else ``None``."""
        if not spec.report:
            return None
        return self.read_room_file(room.report_path(index),
                                   self.profile.limits.output_cap_bytes)

    def stop_and_write(self, files: Sequence[SeedFile]) -> None:
        """Stop the candidate, then write ``files`` (a driver may do both in one round trip).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        self.stop_candidate()
        self.write_files(files)

    def stop_and_collect(self, checks: Sequence[CaptureCheck | ListingCheck],
                         budget: CaptureBudget) -> tuple[FileCapture | DirectoryListing, ...]:
        """Stop the candidate, then run every check in order under one ``budget``.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        self.stop_candidate()
        return tuple(self.capture(c, budget) if isinstance(c, CaptureCheck)
                     else self.list_directory(c) for c in checks)

    def run_plan(self, plan: Plan) -> PlanResult:
        """Carry out a whole :class:`~sandbox.plan.Plan` and return one result. Files the
        sandbox refuses end it there: the pack's
        (:attr:`~sandbox.plan.PlanResult.setup_refused`) or the submission's
        (:attr:`~sandbox.plan.PlanResult.files_refused`).

        Raises:
            SandboxConfigError: a seed file breaks the rules.
            SandboxUnavailable: the engine or the container is gone.
        """
        started = time.monotonic()
        report = (None if plan.environment is None
                  else self.pristine_environment(plan.environment))
        if report is not None and report.problems:  # nothing seeded, nothing run
            return self._result(plan, started, (), (), (), environment=report)
        try:
            setup = plan_steps.setup(self, plan)
        except SeedRefused as refused:  # the pack's own files: the pack's error
            return self._result(plan, started, (), (), (), environment=report,
                                setup_refused=refused.detail)
        if setup and not setup[-1].ok:  # the pack's setup failed: the candidate never runs
            return self._result(plan, started, setup, (), (), environment=report,
                                files_written=len(plan.setup_files))
        report = self._probe(plan.environment_after_setup) or report
        if report is not None and report.problems:
            return self._result(plan, started, setup, (), (), environment=report,
                                files_written=len(plan.setup_files))
        return self._candidates_turn(plan, started, setup, report)

    def _candidates_turn(self, plan: Plan, started: float, setup: tuple[ExecResult, ...],
                         report: EnvironmentReport | None) -> PlanResult:
        """The plan from the submission's files on, once the pack's part went well."""
        try:
            commands = setup + plan_steps.commands(self, plan)
        except SeedRefused as refused:  # the submission's own files: the candidate's loss
            return self._result(plan, started, setup, (), (), environment=report,
                                files_written=len(plan.setup_files),
                                files_refused=refused.detail)
        budget = CaptureBudget(plan.capture_total_bytes)
        # In the clean room the candidate's code runs again (the probes) before the tests:
        # the captures come first, so that they show the files the tests judge.
        early = self.stop_and_collect(plan.checks, budget) if plan.deliverables else None
        tests, probes = plan_steps.tests(self, plan)
        checks = early if early is not None else self.stop_and_collect(plan.checks, budget)
        evaluator = self.run_evaluator(plan.evaluator) if plan.evaluator else None
        return self._result(plan, started, commands, tests, checks, evaluator=evaluator,
                            probes=probes, environment=report,
                            files_written=(len(plan.setup_files) + len(plan.files)
                                           + len(plan.test_files)))

    def _probe(self, probe: EnvironmentProbe | None) -> EnvironmentReport | None:
        """The probe's report, or None when the plan asked for none."""
        return self.check_environment(probe) if probe is not None else None

    def _result(self, plan: Plan, started: float, commands: tuple[ExecResult, ...],
                tests: tuple[TestRun, ...],
                checks: tuple[FileCapture | DirectoryListing, ...], **rest: Any) -> PlanResult:
        """The plan's result from its steps' records (``rest``: further PlanResult fields)."""
        usage = self.usage()
        incomplete = not usage or any(value is None for value in usage.values())
        return PlanResult(
            sandbox_id=self.id, profile=self.profile.name, image=self.profile.image,
            image_id=self.image_id, runtime=self.runtime, limits=self.profile.limits,
            commands=commands, tests=tests, checks=checks,
            setup_commands=min(len(commands), len(plan.setup_commands)),
            commands_skipped=len(plan.setup_commands) + len(plan.commands) - len(commands),
            deadline_exceeded=self.deadline_exceeded, duration_s=time.monotonic() - started,
            usage=usage, usage_unavailable=self.usage_unavailable() if incomplete else "",
            **rest)

    def check_environment(self, probe: EnvironmentProbe) -> EnvironmentReport:
        """Run the environment probe (:mod:`sandbox.envprobe`): one command as the
        candidate's uid in the workspace, before anything is seeded.

        Raises:
            SandboxUnavailable: the engine or the container is gone, or the probe got no
                answer from the sandbox (it could not start it, or it timed out).
        """
        result = self.exec(probe.command(self.profile.workdir))
        report = envprobe.parse(probe, result)
        if report is None:
            why = result.error or ("timed out" if result.timed_out else "no answer")
            raise SandboxUnavailable(f"environment probe: {why}", sandbox_id=self.id)
        return report

    def pristine_environment(self, probe: EnvironmentProbe) -> EnvironmentReport:
        """:meth:`check_environment` before anything of the run is seeded: the sandbox is
        fresh, or reset to how it started. A driver whose sandboxes serve several runs may
        answer from an earlier run's probe of the same sandbox (the same
        :attr:`~sandbox.envprobe.EnvironmentProbe.key`): a verified reset restores what the
        probe looks at.

        Raises:
            SandboxUnavailable: as :meth:`check_environment`.
        """
        return self.check_environment(probe)

    def usage(self) -> Mapping[str, float | None]:
        """What this run has used of the sandbox (peak memory, CPU time), where known; a
        figure that is not this run's own alone is ``None``.

        Raises nothing: a driver that cannot tell returns an empty mapping.
        """
        return {}

    def usage_unavailable(self) -> str:
        """Why :meth:`usage` is empty or has a ``None`` (called only then)."""
        return f"the {type(self).__name__} driver does not measure usage"

    def run_evaluator(self, spec: EvaluatorRun) -> EvaluatorRecord:
        """Run a custom-script evaluator as :mod:`sandbox.evaluator` says (candidate stopped,
        submission read-only to it, ground truth only now). A driver without the
        isolation reports that it did not run.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        return not_run(spec, f"the {type(self).__name__} driver cannot run evaluators")

    def write_and_exec(self, files: Sequence[SeedFile], command: Command) -> ExecResult:
        """Write ``files``, then run ``command`` (a driver may do both in one round trip).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        self.write_files(files)
        return self.exec(command)

    def stop_write_and_test(self, files: Sequence[SeedFile], spec: CodeExecution,
                            *, clean: bool = False) -> TestRun:
        """Stop the candidate, write ``files`` (into the workspace, or the judge's room when
        ``clean``), then run the plan's first test (one round trip allowed).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SeedRefused: the files could not be written into the workspace.
            SandboxUnavailable: the engine or the container is gone.
        """
        if clean:
            self.stop_candidate()
            self.write_room(files)
        else:
            self.stop_and_write(files)
        return self.code_execution(spec, clean=clean)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


class SandboxFactory(Protocol):
    """Gives out started sandboxes (cold, or from a warm pool)."""

    def acquire(self, profile: Profile, *, run_id: str) -> Sandbox:
        """A started, never-used sandbox for ``run_id``; the caller closes it.

        Raises:
            SandboxConfigError: the profile cannot work (image missing, bad limits).
            SandboxUnavailable: the engine is not there.
        """
        ...
