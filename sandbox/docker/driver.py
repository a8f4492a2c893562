"""The Docker driver: one hardened container per run.

Every command of the candidate runs as the profile's non-root ``user``, every test command
as its ``judge_user``. This module speaks the sandbox contract in requests;
:mod:`sandbox.docker.conduit` carries them to the container and keeps its wall deadline,
and :mod:`sandbox.docker.sealed` is the sealed run (:mod:`sandbox.sealed`). Files move as
tar streams (:mod:`sandbox.docker.transfer`) and the driver's own steps are small ``sh``
scripts (:mod:`sandbox.docker.scripts`), run as the candidate's uid once the candidate is
stopped (they read what the candidate could).

Two transports carry the same requests (:class:`~sandbox.docker.stream.ExecRequest`):

- **the supervisor** (images that have one): the container's pid 1, root in the container
  with only CAP_SETUID, CAP_SETGID and CAP_KILL, takes each request over attached stdin
  (:mod:`sandbox.docker.channel`) and starts it as the request's uid: about a millisecond
  instead of an exec's 60-90. It stops every process with ``kill(-1)`` from pid 1, which
  no process in the sandbox can signal, trace or race.
- **``docker exec``** (any other image): the keep-alive runs as ``keeper_user`` and the
  stop is a ``kill -9 -1`` loop as the uid to stop, backed by a host-side kill
  (``hostkill``) when the candidate races it (:mod:`sandbox.docker.stopping`). Stopping
  is combined with seeding the hidden test files and with every capture and listing
  (:mod:`sandbox.docker.collect`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from evalfleet.sandbox import batching
from evalfleet.sandbox.batching import Batching, Follower, Read, Reads
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker import (
    ahead,
    collect,
    judgeroom,
    outcome,
    reuse,
    scripts,
    seeding,
    stopping,
    transfer,
)
from evalfleet.sandbox.docker import sealed as sealing
from evalfleet.sandbox.docker.conduit import (
    CANCELLED,
    DEFAULT_PATH,
    PAST_DEADLINE,
    Conduit,
    internal_request,
)
from evalfleet.sandbox.docker.lifeline import Line
from evalfleet.sandbox.docker.limits import room_parts
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec, first_line
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult, FileRead, Listing
from evalfleet.sandbox.room import ROOM
from evalfleet.sandbox.sealed import SealedOutcome, SealedRun

log = logging.getLogger(__name__)
T = TypeVar("T")


class DockerSandbox(Batching):
    """A started container; see :class:`sandbox.docker.factory.DockerFactory`."""

    def __init__(self, client: Any, container: Any, profile: Profile, *, run_id: str,
                 line: Line | None = None, base_env: Mapping[str, str] | None = None,
                 gvisor: bool = False, runtime: str = "", image_id: str = "",
                 reused: reuse.Reuse | None = None, collector: str | None = None,
                 seeds: bool = False, queues: bool = False, supervisor: str = "") -> None:
        super().__init__(profile)
        self._runtime, self._image_id, self._supervisor = runtime, image_id, supervisor
        self.client, self.container, self.run_id = client, container, run_id
        self.conduit = Conduit(client, container, profile, line, base_env=base_env,
                               gvisor=gvisor)
        self.channel = self.conduit.channel
        self.reused = reused or reuse.Reuse()
        """Which run of its container this is (counters are re-based on later ones)."""
        self.release: Callable[[DockerSandbox], None] | None = None
        """Set by a pool that may reuse the container: :meth:`close` hands it back there
        instead of removing it."""
        self._usage_unavailable = ""
        self.collector = collector if self.channel is not None else None
        """The supervisor binary that collects file captures itself (protocol 4)."""
        self.bare_first_test = self.collector is not None and bool(room_parts(profile))
        """Whether the supervisor made the room's parts and gives a null stdin (protocol 4)."""
        self.seeds = seeds and self.channel is not None
        """Whether the supervisor writes a request's seed records itself (protocol 5)."""
        self.queues = queues and self.seeds
        """Whether the supervisor queues requests sent ahead (protocol 6)."""
        self._ahead = ahead.Lookahead()

    @property
    def id(self) -> str:
        """The container id."""
        return self.conduit.id

    @property
    def deadline_exceeded(self) -> bool:
        """Whether the wall deadline killed the container."""
        return self.conduit.deadline_exceeded

    @property
    def ended(self) -> bool:
        """Whether a limit ended the sandbox (the deadline, or a gVisor sandbox's memory)."""
        return self.conduit.ended

    @property
    def gvisor(self) -> bool:
        """Whether the sandbox runs under gVisor."""
        return self.conduit.gvisor

    @property
    def runtime(self) -> str:
        """The engine's name of the sandbox's OCI runtime."""
        return self._runtime or super().runtime

    @property
    def image_id(self) -> str:
        """The id (config digest) of the image the container runs."""
        return self._image_id

    @property
    def supervisor(self) -> str:
        """The image's supervisor and its protocol (``""``: the engine's exec runs steps)."""
        return self._supervisor

    def write_files(self, files: Sequence[SeedFile]) -> None:
        """Extract a tar of ``files`` into the workspace as the candidate's user, clearing
        whatever is in their way (:func:`sandbox.docker.seeding.extract`).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SeedRefused: ``tar`` ran and failed (the workspace is full, say).
            SandboxUnavailable: the engine or the container is gone.
        """
        seeding.extract(self.conduit, files)

    def exec(self, command: Command) -> ExecResult:
        """Run one command as its user (the candidate's unless it names another; see
        :meth:`Sandbox.exec`); as the judge, started by :data:`scripts.JUDGE_TEST` (the
        room's parts made, no stale report left).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        argv = command.as_argv()
        if command.user == self.profile.hardening.judge_user:
            argv = ("sh", "-c", scripts.JUDGE_TEST, "sh", *argv)
        request = outcome.request(self.conduit, command, argv,
                                  stdin=command.stdin, stop_first=command.user is not None)
        raw = self._run(request, stopping.stopper(self.conduit, request.user), self._then())
        if raw is None:
            return outcome.ended(self.conduit)
        return outcome.result(self.conduit, raw)

    def write_and_exec(self, files: Sequence[SeedFile], command: Command) -> ExecResult:
        """Seed ``files`` and run ``command`` in one request: the supervisor's process
        writes them and becomes the command (protocol 5), else
        :data:`scripts.SEED_THEN_EXEC` does; if either could not, step by step.

        The command keeps its own env, timeout and caps; one with stdin or its own workdir
        (which seeding may create) runs in an exec of its own after the seeding.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        workdir = self.profile.workdir
        if (not files or command.stdin or command.user is not None
                or command.workdir not in (None, workdir)):
            return batching.write_then_exec(self, files, command)
        nonce, request = seeding.with_command(self.conduit, files, command, native=self.seeds)
        raw = self._run(request, self._kill_candidate, () if nonce else self._then())
        if raw is None:
            return outcome.ended(self.conduit)
        if raw.start_error or (nonce and outcome.driver_failed(raw, nonce)):
            return batching.write_then_exec(self, files, command)
        return outcome.result(self.conduit, raw)

    def stop_write_and_exec(self, files: Sequence[SeedFile], command: Command, *,
                            room: bool = False) -> ExecResult:
        """Through the supervisor, one request as the judge (``command``'s user): pid 1
        stops every process, then :data:`scripts.SEED_THEN_TEST` writes ``files`` (into the
        workspace, or the judge's room when ``room``) and becomes the command — or, with
        nothing to write or remove (no ``REPORT``) and the room's parts made at the start
        (protocol 4), the command itself starts, its stdin ``/dev/null``; step by step if
        the script could not (in the workspace: seeded as the candidate, clearing what is
        in the way), or through ``exec``.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes its limit.
            SeedRefused: the files could not be written into the workspace.
            SandboxUnavailable: the engine or the container is gone.
        """
        if self.channel is None:
            return batching.stop_write_then_exec(self, files, command, room=room)
        nonce, request = self._test_request(files, command, room=room)
        # A command that seeds may yet be run step by step: nothing goes ahead of it.
        then = () if room or nonce else self._then()
        self._ahead.followers = ()
        raw = self._run(request, self._kill_candidate, then)
        if raw is None:
            return outcome.ended(self.conduit)
        if raw.start_error or (nonce and outcome.driver_failed(raw, nonce)):
            return batching.stop_write_then_exec(self, files, command, room=room)
        return outcome.result(self.conduit, raw)

    def _test_request(self, files: Sequence[SeedFile], command: Command, *,
                      room: bool) -> tuple[str, ExecRequest]:
        """The first test's request, and the nonce of its seeding script (``""`` for a bare
        test: nothing to write or remove, its stdin ``/dev/null``;
        :func:`seeding.with_test`)."""
        limits = self.profile.limits
        root, limit, most = ((ROOM, limits.room_bytes, None) if room
                             else (self.profile.workdir, limits.seed_bytes, limits.seed_files))
        return seeding.with_test(self.conduit, files, command, root=root, limit=limit,
                                 bare=self._bare(files, command), most=most)

    def _bare(self, files: Sequence[SeedFile], command: Command) -> bool:
        """Whether the first test may start by itself: nothing to write, no report to
        remove, the room's parts made by the supervisor (protocol 4)."""
        return not files and "REPORT" not in command.env and self.bare_first_test

    @property
    def command_path(self) -> str:
        """The ``PATH`` commands get: the profile's, else the image's, else the engine's."""
        return (self.profile.env.get("PATH") or self.conduit.base_env.get("PATH")
                or DEFAULT_PATH)

    def export_files(self, paths: Sequence[str]) -> tuple[SeedFile, ...]:
        """The deliverables, copied out as the candidate once it is stopped
        (:func:`sandbox.docker.judgeroom.export`).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        found = judgeroom.export(self.conduit, paths)
        if found is None:  # the script could not stop the candidate: stop, ask again
            self.stop_candidate()
            found = judgeroom.export(self.conduit, paths)
        return found or ()

    def write_room(self, files: Sequence[SeedFile]) -> None:
        """Write ``files`` into the judge's room as the judge.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes the room's size.
            SandboxUnavailable: the engine or the container is gone.
        """
        judgeroom.write(self.conduit, files)

    def read_room_file(self, path: str, limit: int) -> FileRead:
        """One regular file of the judge's room, read as the judge.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        return judgeroom.read(self.conduit, path, limit)

    def stop_candidate(self) -> None:
        """Kill every process of the candidate's uid (:func:`stopping.stop_candidate`).

        Raises:
            SandboxUnavailable: the processes could not be stopped, or the container is gone.
        """
        stopping.stop_candidate(self.conduit)

    def read_file(self, path: str, limit: int) -> FileRead:
        """Read one regular file through ``tar -c`` (links are refused, see ``transfer``);
        nothing at ``path`` is no error (:func:`transfer.read_command`).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        raw = self._internal(transfer.read_command(path), cap=limit + transfer.TAR_SLACK)
        if raw.exit_code == transfer.MISSING:
            return FileRead(exists=False)
        if raw.exit_code != 0 and not raw.stdout_truncated:
            return FileRead(exists=False, error=first_line(raw.stderr) or "not readable")
        return transfer.read_archive(raw.stdout, path, limit)

    def list_dir(self, path: str, max_entries: int) -> Listing:
        """List below ``path`` with ``find`` + ``stat`` in the sandbox, capped in entries.
        A listing that fails keeps what it gave before, and says why: its output past
        its cap (lines over 8 KiB), its timeout, the directory not there.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        depth = self.profile.limits.tree_depth
        cap = (max_entries + 1) * (transfer.MAX_LINE + 2)
        raw = self._internal(("sh", "-c", scripts.LIST, "sh", path, str(max_entries + 1),
                              str(depth + 1), str(transfer.MAX_LINE + 1)), cap=cap)
        cut = raw.stdout_truncated or raw.timed_out or raw.exit_code is None
        listing = transfer.parse_listing(raw.stdout, path, max_entries, cut=cut, depth=depth)
        if raw.exit_code == 0 and not cut:
            return listing
        return dataclasses.replace(listing, error=_listing_error(raw, cap))

    def stop_and_write(self, files: Sequence[SeedFile]) -> None:
        """Stop the candidate and extract ``files`` in one request (see :class:`Sandbox`),
        clearing whatever the candidate left in their way; step by step if the script
        could not stop it (no pids left to start it, say).

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
            SeedRefused: ``tar`` ran and failed (the workspace is full, say).
            SandboxUnavailable: the engine or the container is gone.
        """
        if not seeding.stop_and_extract(self.conduit, files):
            batching.stop_then_write(self, files)

    def stop_and_read(self, reads: Sequence[Read],
                      total_bytes: int) -> tuple[FileRead | Listing, ...] | None:
        """Stop the candidate and make every read in one request
        (:mod:`sandbox.docker.collect`); ``None`` when its answer is unusable.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        sent, request = self._collect_request(reads, total_bytes)
        self._ahead.collect = None  # its nonce serves one request
        raw = self._run(request, self._kill_candidate) or PAST_DEADLINE
        return collect.answer(raw, reads, sent, total_bytes, self.profile.limits,
                              where=self.id[:12])

    def _collect_request(self, reads: Sequence[Read],
                         total_bytes: int) -> tuple[collect.Request, ExecRequest]:
        """The request of every read in one (the collector's, else the script's), as the
        candidate's uid once every process is stopped; the one built ahead for these reads
        when there is one."""
        return self._ahead.reads(reads, total_bytes, lambda: collect.build(
            self.profile, reads, total_bytes, self.collector))

    @contextlib.contextmanager
    def ahead(self, followers: Sequence[Follower]) -> Iterator[None]:
        """With a supervisor that queues (protocol 6), ``followers`` go ahead of the next
        request they may follow (:mod:`sandbox.docker.ahead`)."""
        self._ahead.followers = tuple(followers) if self.queues else ()
        try:
            yield
        finally:
            self._ahead.followers = ()

    def _then(self) -> tuple[ExecRequest, ...]:
        """The requests that may go ahead of the one being sent (:mod:`sandbox.docker.ahead`)."""
        if self.channel is not None and self.channel.ahead:
            return ()  # what follows was sent ahead already
        return self._ahead.behind(self._queueable)

    def _queueable(self, follower: Follower) -> ExecRequest | None:
        """The request of ``follower``, or ``None`` when it cannot be queued (a test whose
        files go on its stdin)."""
        if isinstance(follower, Reads):
            return self._collect_request(follower.reads, follower.total_bytes)[1]
        if not self._bare(follower.files, follower.command):
            return None
        return self._test_request((), follower.command, room=False)[1]

    def run_sealed(self, run: SealedRun) -> SealedOutcome:
        """Seal the workspace, write ``run.files`` into a fresh directory and run its
        command there as its own uid with no network (:func:`sandbox.docker.sealed.run`;
        a :class:`~sandbox.sealed.Sealing`).

        Raises:
            SandboxConfigError: ``run.files`` pass ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        return sealing.run(self.conduit, run)

    def pristine(self, key: Hashable, measure: Callable[[], T]) -> T:
        """An earlier run's measure when this container has one (:func:`reuse.remembered`)."""
        return reuse.remembered(self.reused, key, measure)

    def usage(self) -> Mapping[str, float | None]:
        """This run's peak memory and CPU time (:meth:`Conduit.usage`, re-based on a reused
        container by :func:`sandbox.docker.reuse.rebased_usage`); never raises."""
        found, why = self.conduit.usage()
        usage, rebasing = reuse.rebased_usage(dict(found), self.reused)
        self._usage_unavailable = why or rebasing
        return usage

    def usage_unavailable(self) -> str:
        """Why the last :meth:`usage` came back empty or with a ``None`` (``""`` if not)."""
        return self._usage_unavailable

    def reset(self) -> reuse.ResetOutcome:
        """Make the sandbox as it was at its start, verified by its supervisor (see
        :mod:`sandbox.docker.reuse`); an unverified outcome when it cannot. Never raises."""
        if self.channel is None:
            return reuse.ResetOutcome(False, "the sandbox has no supervisor")
        return reuse.reset(self)

    def terminate(self) -> None:
        """End the container now, as its wall deadline would (hung up on, then killed):
        the step under way ends; it is removed at :meth:`close`, never reused."""
        self.release = None
        self.conduit.end(CANCELLED)

    def close(self) -> None:
        """Remove the container (force), or hand it back to the pool that may reuse it;
        never raises."""
        release, self.release = self.release, None
        if release is None:
            self.conduit.close()
            return
        try:
            release(self)
        except Exception:  # close must not raise: remove what the pool could not take back
            log.exception("handing sandbox %s back failed; removing it", self.id[:12])
            self.conduit.close()

    def _internal(self, argv: Sequence[str], *, stdin: bytes = b"", cap: int = 1 << 20,
                  on_limit: Callable[[], None] | None = None,
                  stop_first: bool = False) -> RawExec:
        """The driver's own step as the candidate's uid (:func:`internal_request`)."""
        request = internal_request(self.profile, argv, stdin=stdin, cap=cap,
                                   stop_first=stop_first)
        return self._run(request, on_limit or self._kill_candidate) or PAST_DEADLINE

    def _run(self, request: ExecRequest, on_limit: Callable[[], None],
             then: Sequence[ExecRequest] = ()) -> RawExec | None:
        """The driver's own requests go here; every request of the sandbox (these, and
        those of :mod:`~sandbox.docker.seeding` and :mod:`~sandbox.docker.judgeroom`) ends
        in :meth:`Conduit.run`."""
        return self.conduit.run(request, on_limit, then)

    def _kill_candidate(self) -> None:
        """Called from the stream when a command passes its timeout or its output cap."""
        stopping.kill_candidate(self.conduit)


def _listing_error(raw: RawExec, cap: int) -> str:
    """Why a listing failed, as its request ended (``cap``: its output's)."""
    if raw.stdout_truncated:
        return f"the listing's output passed its cap of {cap} bytes"
    if raw.timed_out:
        return "the listing timed out"
    return first_line(raw.stderr) or raw.start_error or "cannot list directory"
