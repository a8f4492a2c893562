"""The Docker driver: one hardened container per run.

Every command and test runs as the profile's non-root ``user``. A host timer kills the
container at the wall deadline. Files move as tar streams (:mod:`sandbox.docker.transfer`)
and the driver's own steps are small ``sh`` scripts (:mod:`sandbox.docker.scripts`).

Two transports carry the same requests (:class:`~sandbox.docker.stream.ExecRequest`):

- **the supervisor** (images that have one): the container's pid 1, as ``user``, takes
  each request over attached stdin (:mod:`sandbox.docker.channel`) and forks it: about a
  millisecond instead of an exec's 60-90. It stops the candidate with ``kill(-1)`` from
  pid 1, which the candidate can neither signal nor race.
- **``docker exec``** (any other image): the keep-alive runs as ``keeper_user`` and the
  stop is a ``kill -9 -1`` loop as ``user``, backed by a host-side kill (``hostkill``)
  when the candidate races it. Stopping is combined with seeding the hidden test files
  and with every capture and listing (:mod:`sandbox.docker.collect`), so a plan costs one
  exec per seed, command and test, plus two.

Requests as another uid (the evaluator, its stopper) always use ``exec``.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import docker.errors

from sandbox.base import Sandbox
from sandbox.capture import CaptureBudget, CaptureCheck, ListingCheck
from sandbox.command import Command, SeedFile
from sandbox.docker import collect, scripts, transfer
from sandbox.docker import evaluator as evaluator_step
from sandbox.docker.channel import Channel, ChannelClosed
from sandbox.docker.failure import classify, start_error_is_candidates
from sandbox.docker.hostkill import host_kill
from sandbox.docker.stream import ExecRequest, RawExec, run_exec
from sandbox.docker.usage import parse_inside, read_usage
from sandbox.errors import SandboxError, SandboxUnavailable
from sandbox.evaluator import EvaluatorRecord, EvaluatorRun, not_run
from sandbox.evaluator import record as record_evaluator
from sandbox.execution import (
    CodeExecution,
    CodeExecutionRecord,
    command_for_test,
    record,
    shell_command,
)
from sandbox.profile import Profile
from sandbox.results import DirectoryListing, ExecResult, FileCapture, FileRead, Listing

log = logging.getLogger(__name__)

#: Timeout of the driver's own steps (stop, capture, listing, OOM counter, usage).
INTERNAL_TIMEOUT_S = 30.0
#: Attempts at stopping the candidate when runc cannot start the stop script (no pids left).
STOP_ATTEMPTS = 20
#: Exit status of a driver script that gave up before the candidate's command started.
DRIVER_FAILED = 97
#: Exit status of a process killed by SIGKILL (OOM killer, timeout, cap).
SIGKILL_STATUS = 137


class DockerSandbox(Sandbox):
    """A started container; see :class:`sandbox.docker.factory.DockerFactory`."""

    def __init__(self, client: Any, container: Any, profile: Profile, *, run_id: str,
                 channel: Channel | None = None) -> None:
        super().__init__(profile)
        self.client, self.container, self.run_id = client, container, run_id
        self.channel = channel
        self._oom_seen = 0
        self._expired = threading.Event()
        self._closed = False
        self._timer = threading.Timer(profile.limits.wall_timeout_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    @property
    def id(self) -> str:
        """The container id."""
        return str(self.container.id)

    @property
    def deadline_exceeded(self) -> bool:
        """Whether the wall deadline killed the container."""
        return self._expired.is_set()

    def write_files(self, files: Sequence[SeedFile]) -> None:
        """Extract a tar of ``files`` into the workspace, as the candidate's user.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone, or ``tar`` failed.
        """
        if not files:
            return
        limits = self.profile.limits
        archive = transfer.seed_archive(files, self.profile.workdir, limits.seed_bytes)
        raw = self._internal(("tar", "-xf", "-", "-C", self.profile.workdir), stdin=archive)
        if raw.exit_code != 0 and not self.deadline_exceeded:
            raise SandboxUnavailable(f"seeding failed: {raw.stderr[:300]!r}", sandbox_id=self.id)

    def exec(self, command: Command) -> ExecResult:
        """Run one command as the candidate (see :meth:`Sandbox.exec`).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        raw = self._run(self._candidate_request(command, command.as_argv(),
                                                stdin=command.stdin), self._kill_candidate)
        if raw is None:
            return ExecResult(exit_code=None, timed_out=True, error="sandbox deadline exceeded")
        return self._exec_result(raw)

    def _candidate_request(self, command: Command, argv: Sequence[str], *, stdin: bytes,
                           marker: bytes = b"", stop_first: bool = False) -> ExecRequest:
        """The exec of a candidate-uid command with its env, workdir, timeout and caps."""
        limits = self.profile.limits
        return ExecRequest(
            argv=argv, user=self.profile.hardening.user,
            workdir=self.profile.workdir if marker else command.workdir or self.profile.workdir,
            env={**self.profile.env, **command.env}, stdin=stdin,
            timeout_s=command.timeout_s or limits.exec_timeout_s,
            cap=command.output_cap_bytes or limits.output_cap_bytes, start_marker=marker,
            stop_first=stop_first)

    def _exec_result(self, raw: RawExec) -> ExecResult:
        """A candidate command's result (an OOM kill told apart from other SIGKILLs)."""
        if raw.start_error:
            return self._start_failure(raw)
        oom = raw.exit_code == SIGKILL_STATUS and not raw.timed_out and self._oom_happened()
        return ExecResult(exit_code=raw.exit_code, stdout=raw.stdout, stderr=raw.stderr,
                          timed_out=raw.timed_out or self.deadline_exceeded,
                          stdout_truncated=raw.stdout_truncated,
                          stderr_truncated=raw.stderr_truncated, duration_s=raw.duration_s,
                          oom_killed=oom)

    def write_and_exec(self, files: Sequence[SeedFile], command: Command) -> ExecResult:
        """Seed ``files`` and run ``command`` in one request (:data:`scripts.SEED_THEN_EXEC`).

        The command keeps its own env, timeout and caps; one with stdin or its own workdir
        (which seeding may create) runs in an exec of its own after the seeding.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        workdir = self.profile.workdir
        if not files or command.stdin or command.workdir not in (None, workdir):
            return super().write_and_exec(files, command)
        archive = transfer.seed_archive(files, workdir, self.profile.limits.seed_bytes)
        nonce = secrets.token_hex(8)
        raw = self._run(self._candidate_request(
            command, ("sh", "-c", scripts.SEED_THEN_EXEC, "sh", workdir, nonce,
                      *command.as_argv()), stdin=archive), self._kill_candidate)
        if raw is None:
            return ExecResult(exit_code=None, timed_out=True, error="sandbox deadline exceeded")
        if raw.start_error or _driver_failed(raw, nonce):
            return super().write_and_exec(files, command)
        return self._exec_result(raw)

    def stop_write_and_test(self, files: Sequence[SeedFile], spec: CodeExecution,
                            context: Mapping[str, Any] | None = None) -> CodeExecutionRecord:
        """Stop the candidate, seed ``files`` and run the test in one request
        (:data:`scripts.STOP_SEED_THEN_EXEC`); step by step if the script could not finish.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        workdir = self.profile.workdir
        archive = transfer.seed_archive(files, workdir,
                                        self.profile.limits.seed_bytes) if files else b""
        text, unresolved = shell_command(spec, context or {})
        command = command_for_test(spec, text, workdir)
        nonce = secrets.token_hex(8)
        marker = f"@{nonce} go\n".encode()
        argv = ("sh", "-c", scripts.STOP_SEED_THEN_EXEC, "sh", workdir, nonce,
                "1" if files else "0", command.workdir or workdir, *command.as_argv())
        raw = self._run(self._candidate_request(command, argv, stdin=archive, marker=marker,
                                                stop_first=True), self._kill_candidate)
        if raw is None:
            result = ExecResult(exit_code=None, timed_out=True, error="sandbox deadline exceeded")
            return record(spec, text, result, unresolved)
        if raw.start_error or not raw.stdout.startswith(marker):
            return super().stop_write_and_test(files, spec, context)
        raw = dataclasses.replace(raw, stdout=raw.stdout[len(marker):])
        return record(spec, text, self._exec_result(raw), unresolved)

    def stop_candidate(self) -> None:
        """Kill every process of the candidate's uid (retrying while pids are exhausted).

        Raises:
            SandboxUnavailable: the processes could not be stopped, or the container is gone.
        """
        for attempt in range(STOP_ATTEMPTS):
            if self._stop_once() or self.deadline_exceeded:
                return
            # A candidate can race the exec'd stopper (same uid, e.g. a `kill -9 -1`
            # loop): from the host's PID namespace its processes cannot race back.
            host_kill(self.container, self.profile.hardening.user)
            time.sleep(0.05 * attempt)
        raise SandboxUnavailable("could not stop the candidate's processes", sandbox_id=self.id)

    def _stop_once(self) -> bool:
        """One stop: by the supervisor when there is one, else by the ``STOP`` script."""
        if self.channel is None:
            return self._internal(("sh", "-c", scripts.STOP), on_limit=_nothing).exit_code == 0
        try:
            left = self.channel.stop()
        except ChannelClosed as error:
            if self.deadline_exceeded:
                return True
            raise SandboxUnavailable(f"stop: {error}", sandbox_id=self.id) from error
        if left:
            log.warning("stopping the candidate in %s: %s", self.id[:12], left)
        return not left

    def read_file(self, path: str, limit: int) -> FileRead:
        """Read one regular file through ``tar -c`` (links are refused, see ``transfer``).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        raw = self._internal(transfer.capture_command(path), cap=limit + transfer.TAR_SLACK)
        if raw.exit_code != 0 and not raw.stdout_truncated:
            return FileRead(exists=False, error=_first_line(raw.stderr) or "not readable")
        return transfer.read_archive(raw.stdout, path, limit)

    def list_dir(self, path: str, max_entries: int) -> Listing:
        """List below ``path`` with ``find`` + ``stat`` in the sandbox, capped in entries.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        raw = self._internal(("sh", "-c", scripts.LIST, "sh", path, str(max_entries + 1)),
                             cap=(max_entries + 1) * transfer.MAX_LINE)
        if raw.exit_code != 0:
            return Listing(error=_first_line(raw.stderr) or "cannot list directory")
        return transfer.parse_listing(raw.stdout, path, max_entries)

    def stop_and_write(self, files: Sequence[SeedFile]) -> None:
        """Stop the candidate and extract ``files`` in one request (see :class:`Sandbox`).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        archive = transfer.seed_archive(files, self.profile.workdir,
                                        self.profile.limits.seed_bytes) if files else b""
        argv = ("sh", "-c", scripts.STOP_AND_EXTRACT if files else scripts.STOP, "sh",
                self.profile.workdir)
        raw = self._internal(argv, stdin=archive, on_limit=_nothing, stop_first=True)
        if raw.exit_code != 0 and not self.deadline_exceeded:
            super().stop_and_write(files)  # e.g. no pids left to start the script: retry

    def stop_and_collect(self, checks: Sequence[CaptureCheck | ListingCheck],
                         budget: CaptureBudget) -> tuple[FileCapture | DirectoryListing, ...]:
        """Stop the candidate and run every check in one request (see :class:`Sandbox`).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        entries = self.profile.limits.listing_entries
        sent = collect.request(checks, self.profile.workdir, budget, entries)
        raw = self._internal(("sh", "-c", scripts.COLLECT, "sh", *sent.argv), cap=sent.cap,
                             on_limit=_nothing, stop_first=True)
        if raw.exit_code == 0 and not raw.stdout_truncated:
            trial = CaptureBudget(budget.total_bytes)
            trial.charged = budget.charged
            try:
                results = collect.parse(raw.stdout, checks, sent, trial, entries)
            except collect.StreamError as error:
                log.warning("collect stream of %s unusable (%s); checking one by one",
                            self.id[:12], error)
            else:
                budget.charged = trial.charged
                return results
        return super().stop_and_collect(checks, budget)

    def run_evaluator(self, spec: EvaluatorRun) -> EvaluatorRecord:
        """Seal the workspace, write the evaluator's files and run it as its own uid with
        no network (see :mod:`sandbox.evaluator`).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        directory = f"/tmp/.evaluator-{secrets.token_hex(8)}"
        self._detach_networks()
        archive = evaluator_step.archive(spec, directory, self.profile.limits.seed_bytes)
        raw = self._internal(("sh", "-c", evaluator_step.SEAL, "sh", self.profile.workdir,
                              directory), stdin=archive, on_limit=_nothing)
        if raw.exit_code != 0:
            return not_run(spec, f"could not prepare the evaluator: {_first_line(raw.stderr)}")
        request = ExecRequest(
            argv=spec.argv(directory), user=evaluator_step.user(self.profile.hardening),
            workdir=directory, env={**self.profile.env,
                                    **spec.environment(self.profile.workdir, directory)},
            stdin=b"", timeout_s=spec.timeout_s,
            cap=spec.output_cap_bytes or self.profile.limits.output_cap_bytes)
        ran = self._run(request, self._kill_evaluator)
        if ran is None:
            return not_run(spec, "sandbox deadline exceeded")
        return record_evaluator(spec, ExecResult(
            exit_code=ran.exit_code, stdout=ran.stdout, stderr=ran.stderr,
            timed_out=ran.timed_out, stdout_truncated=ran.stdout_truncated,
            stderr_truncated=ran.stderr_truncated, duration_s=ran.duration_s,
            error=ran.start_error or None))

    def _detach_networks(self) -> None:
        """Disconnect the container from every network (a pack with egress)."""
        if self.profile.hardening.network_mode == "none":
            return
        try:
            self.container.reload()
            names = list(self.container.attrs["NetworkSettings"]["Networks"])
            for name in names:
                self.client.api.disconnect_container_from_network(self.id, name, force=True)
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what="network disconnect", sandbox_id=self.id) from error

    def _kill_evaluator(self) -> None:
        """Called from the stream when the evaluator passes its timeout or output cap."""
        request = ExecRequest(argv=("sh", "-c", scripts.STOP),
                              user=evaluator_step.user(self.profile.hardening), workdir="/",
                              env={}, stdin=b"", timeout_s=INTERNAL_TIMEOUT_S, cap=4096)
        try:
            self._run(request, _nothing)
        except SandboxError as error:
            log.warning("could not stop the evaluator in %s: %s", self.id[:12], error)

    def usage(self) -> Mapping[str, float]:
        """Peak memory and CPU time from the container's cgroup: the host's when visible,
        else as the supervisor reads it inside; never raises."""
        found = read_usage(self.id)
        if found or self.channel is None:
            return found
        try:
            raw = self._internal(("sh", "-c", scripts.USAGE), cap=4096, on_limit=_nothing)
        except SandboxError as error:
            log.info("usage of %s not readable: %s", self.id[:12], error)
            return {}
        return parse_inside(raw.stdout)

    def close(self) -> None:
        """Remove the container (force); never raises."""
        self._timer.cancel()
        if self._closed:
            return
        self._closed = True
        if self.channel is not None:
            self.channel.close()
        try:
            self.container.remove(force=True)
        except docker.errors.NotFound:
            pass
        except Exception as error:  # close must not raise; the reaper will retry
            log.warning("could not remove sandbox %s: %s", self.id[:12], error)

    def _internal(self, argv: Sequence[str], *, stdin: bytes = b"", cap: int = 1 << 20,
                  on_limit: Callable[[], None] | None = None,
                  stop_first: bool = False) -> RawExec:
        """The driver's own step as the candidate's uid (so it reads what they can)."""
        request = ExecRequest(argv=argv, user=self.profile.hardening.user,
                              workdir=self.profile.workdir, env={}, stdin=stdin,
                              timeout_s=INTERNAL_TIMEOUT_S, cap=cap, stop_first=stop_first)
        raw = self._run(request, on_limit or self._kill_candidate)
        return raw or RawExec(None, b"", b"deadline exceeded", False, False, True, 0.0)

    def _run(self, request: ExecRequest, on_limit: Callable[[], None]) -> RawExec | None:
        """The request through the supervisor (same uid) or ``exec``, with engine errors
        classified; ``None`` past the deadline."""
        if self.deadline_exceeded:
            return None
        try:
            if self.channel is not None and request.user == self.profile.hardening.user:
                return self.channel.run(request, on_limit)
            return run_exec(self.client.api, self.id, request, on_limit)
        except ChannelClosed as error:
            if self.deadline_exceeded:
                return None
            raise SandboxUnavailable(f"supervisor: {error}", sandbox_id=self.id) from error
        except (docker.errors.DockerException, OSError) as error:
            if self.deadline_exceeded:
                return None
            raise classify(error, what="exec", sandbox_id=self.id) from error

    def _start_failure(self, raw: RawExec) -> ExecResult:
        message = raw.start_error or ""
        if not start_error_is_candidates(message):
            raise SandboxUnavailable(f"exec could not start: {message}", sandbox_id=self.id)
        return ExecResult(exit_code=None, error=message, duration_s=raw.duration_s)

    def _kill_candidate(self) -> None:
        """Called from the stream when a command passes its timeout or its output cap."""
        try:
            self.stop_candidate()
        except SandboxError as error:
            log.warning("could not stop the candidate in %s: %s", self.id[:12], error)

    def _oom_happened(self) -> bool:
        """Whether the memory cgroup's OOM-kill counter moved since we last looked."""
        hardening = self.profile.hardening
        user = hardening.user if self.channel is not None else hardening.keeper_user
        request = ExecRequest(argv=("sh", "-c", scripts.OOM_COUNT), user=user, workdir="/", env={},
                              stdin=b"", timeout_s=INTERNAL_TIMEOUT_S, cap=4096)
        raw = self._run(request, _nothing)
        fields = raw.stdout.split() if raw else []
        count = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else self._oom_seen
        happened, self._oom_seen = count > self._oom_seen, max(count, self._oom_seen)
        return happened

    def _expire(self) -> None:
        """The wall deadline: kill the container (``close`` removes it)."""
        self._expired.set()
        try:
            self.container.kill()
        except Exception as error:  # already gone or stopping: nothing left to kill
            log.info("deadline kill of %s: %s", self.id[:12], error)


def _nothing() -> None:
    """An ``on_limit`` for the driver's own scripts: let them finish or time out."""


def _driver_failed(raw: RawExec, nonce: str) -> bool:
    """Whether a driver script gave up before the candidate's command (exit 97 + its line)."""
    return raw.exit_code == DRIVER_FAILED and raw.stderr.startswith(f"@{nonce} ".encode())


def _first_line(data: bytes) -> str:
    return data.decode(errors="replace").strip().splitlines()[0] if data.strip() else ""
