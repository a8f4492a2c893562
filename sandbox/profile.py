"""What a sandbox is made from: :class:`Limits`, :class:`Hardening` and :class:`Profile`.

Frozen dataclasses, validated on construction (a bad value raises
:class:`~sandbox.errors.SandboxConfigError`). ``workers/settings.py`` builds them from
its own configuration; nothing here reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from evalfleet.sandbox.errors import SandboxConfigError

MiB = 1024 * 1024

#: The workspace every profile mounts and the candidate's commands start in.
WORKSPACE = "/workspace"


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox; every one is recorded in the run's result."""

    memory_bytes: int = 512 * MiB
    """Memory limit; swap is set to the same value, so there is no swap."""
    cpus: float = 1.0
    """CPU share (``nano_cpus = cpus * 1e9``)."""
    pids: int = 256
    """Maximum number of processes and threads in the container."""
    wall_timeout_s: float = 600.0
    """Whole-sandbox deadline, enforced from the host by killing the container."""
    exec_timeout_s: float = 30.0
    """Default timeout of one command when the command names none."""
    output_cap_bytes: int = 1 * MiB
    """Default cap per output stream (stdout, stderr) of one command."""
    workspace_bytes: int = 64 * MiB
    """Size of the tmpfs workspace."""
    tmp_bytes: int = 16 * MiB
    """Size of the tmpfs ``/tmp``."""
    room_bytes: int = 96 * MiB
    """Size of the judge's room (a tmpfs only the judge's uid can enter; see
    :mod:`sandbox.room`): test files, copied deliverables, probe outputs, the tests' home."""
    seed_bytes: int = 32 * MiB
    """Cap on the total size of files written into one sandbox by one call."""
    seed_files: int = 10_000
    """Cap on the entries written into the workspace by one call: the files and the
    directories their paths imply, each counted once (:mod:`sandbox.seed_limits`)."""
    nofile: int = 1024
    """Open file descriptors per process."""
    fsize_bytes: int = 64 * MiB
    """Largest file a process may write (RLIMIT_FSIZE)."""
    listing_entries: int = 10_000
    """Entry cap of a directory listing (the cap and any truncation are reported)."""
    tree_depth: int = 64
    """How deep evalfleet's own steps go into the tree the candidate made: a listing lists
    down to it and says that it left deeper entries out; the evaluator is withheld from a
    workspace deeper than it (the candidate's loss)."""
    tree_entries: int = 50_000
    """Entries of the workspace the evaluator's preparation walks at most: past it, the
    evaluator is withheld (the candidate's loss)."""

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "pids", "output_cap_bytes", "workspace_bytes",
                     "tmp_bytes", "room_bytes", "seed_bytes", "seed_files", "nofile",
                     "fsize_bytes", "listing_entries", "tree_depth", "tree_entries"):
            if getattr(self, name) <= 0:
                raise SandboxConfigError(f"limit {name} must be positive")
        for name in ("cpus", "wall_timeout_s", "exec_timeout_s"):
            if not getattr(self, name) > 0:
                raise SandboxConfigError(f"limit {name} must be positive")
        if self.memory_bytes < 6 * MiB:
            raise SandboxConfigError("limit memory_bytes must be at least 6 MiB (Docker's floor)")


@dataclass(frozen=True)
class Hardening:
    """Container hardening; the defaults are the safe ones (docs/operations.md, "Security")."""

    network_mode: str = "none"
    cap_drop: tuple[str, ...] = ("ALL",)
    cap_add: tuple[str, ...] = ()
    security_opt: tuple[str, ...] = ("no-new-privileges",)
    read_only: bool = True
    init: bool = True
    """Docker's init as pid 1 under the keep-alive. A supervised image's pid 1 is the
    supervisor itself, which reaps like an init, so this applies to ``exec`` images only."""
    user: str = "1000:1000"
    """Numeric uid:gid every command of the candidate runs as (never root)."""
    judge_user: str = "65532:65532"
    """Numeric uid:gid the pack's test commands (``code_execution``) run as: not the
    candidate's, so nothing the candidate runs can signal, trace or impersonate them."""
    keeper_user: str = "65534:65534"
    """Numeric uid:gid of the keep-alive of an image driven by ``exec``; must differ from
    ``user`` so that stopping the candidate (``kill -9 -1`` as ``user``) leaves it running."""

    def __post_init__(self) -> None:
        uids: dict[str, str] = {}
        for name in ("user", "judge_user", "keeper_user"):
            uid, _, gid = getattr(self, name).partition(":")
            if not uid.isdigit() or not (gid or uid).isdigit() or int(uid) == 0:
                raise SandboxConfigError(f"hardening {name} must be a non-root numeric "
                                         f"uid:gid, not {getattr(self, name)!r}")
            if uid in uids:
                raise SandboxConfigError(f"hardening {name} must differ from {uids[uid]}")
            uids[uid] = name


@dataclass(frozen=True)
class Profile:
    """A named recipe for sandboxes: image, limits, hardening, environment, labels."""

    name: str
    image: str
    limits: Limits = field(default_factory=Limits)
    hardening: Hardening = field(default_factory=Hardening)
    env: Mapping[str, str] = field(default_factory=dict)
    """The only environment commands see besides the image's own ``ENV`` lines."""
    workdir: str = WORKSPACE
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra container labels (``evalfleet.*`` names are reserved for the driver)."""
    runtime: str | None = None
    """The engine's OCI runtime for this profile's sandboxes (``runsc`` for gVisor,
    ``runc``, or any the engine lists); ``None`` is the engine's default."""
    reuse_runs: int = 1
    """Runs one sandbox may serve, each after a verified reset (:mod:`sandbox.docker.reuse`);
    1 (the default) is a fresh sandbox per run. Needs a read-only root and no network."""

    @property
    def reusable(self) -> bool:
        """Whether this profile's sandboxes may serve more than one run."""
        return self.reuse_runs > 1

    def __post_init__(self) -> None:
        if not self.name or not self.image:
            raise SandboxConfigError("a profile needs a name and an image")
        if self.reuse_runs < 1:
            raise SandboxConfigError("reuse_runs must be at least 1")
        if self.reusable and not self.hardening.read_only:
            raise SandboxConfigError("a profile that reuses its sandboxes needs a read-only "
                                     "root file system (its reset empties only the mounts)")
        if not self.workdir.startswith("/") or ".." in self.workdir.split("/"):
            raise SandboxConfigError(f"profile workdir must be absolute: {self.workdir!r}")
        if any(key.startswith("evalfleet.") for key in self.labels):
            raise SandboxConfigError("labels under evalfleet. are reserved for the driver")
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "labels", MappingProxyType(dict(self.labels)))
