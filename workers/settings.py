"""The one settings object: every ``EVALFLEET_*`` environment variable is defined here
(the webhooks' and the archive's sections in :mod:`.delivery_settings`).

Read once, at the process edge (``evalfleet worker``, the CLI), and passed down; no other
module reads the environment. Nested sections use ``__``:
``EVALFLEET_PROFILES__DEFAULT__MEMORY_MB=1024``. Secrets may also come from files in
``/run/secrets`` (Docker/Kubernetes secrets), e.g. ``/run/secrets/evalfleet_redis_url``.
"""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.tasks.evaluation.judging import JudgingConfig, ProviderEndpoint
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds
from evalfleet.tasks.redis_connection import sentinel_url

from .admission_settings import AdmissionSettings
from .delivery_settings import ArchiveSettings, WebhookSettings

MiB = 1024 * 1024
SECRETS_DIR = Path("/run/secrets")


class ProfileSettings(BaseModel):
    """One sandbox profile registered by the operator; packs select it by name."""

    image: str = "evalfleet/python:latest"
    """The sandbox image (must exist locally or be pullable)."""
    memory_mb: int = Field(512, gt=5)
    """Memory limit of a sandbox in MiB (swap is the same: none); the workspace's tmpfs
    counts in it."""
    cpus: float = Field(1.0, gt=0)
    """CPUs a sandbox may use (Docker's ``nano_cpus``)."""
    pids: int = Field(256, gt=0)
    """The most processes and threads in a sandbox (a fork bomb stops there)."""
    max_wall_s: float = Field(600.0, gt=0)
    """Ceiling of a run's wall time on this profile (the request and pack may lower it)."""
    workspace_mb: int = Field(64, gt=0)
    """Size of the sandbox's tmpfs workspace in MiB."""
    seed_files: int = Field(10_000, gt=0)
    """The most entries (files and the directories their paths imply) a submission's files
    may make in the workspace; a submission with more is the candidate's loss."""
    tree_depth: int = Field(64, gt=0)
    """How deep evalfleet's own steps go into the tree the candidate made: listings stop
    there (and say so); a deeper workspace withholds the evaluator (the candidate's loss)."""
    tree_entries: int = Field(50_000, gt=0)
    """The most workspace entries the evaluator's preparation walks; past them the
    evaluator is withheld (the candidate's loss)."""
    output_cap_kb: int = Field(1024, gt=0)
    """Default cap per output stream (stdout, stderr) of one command, in KiB; past it the
    capture is truncated (and says so)."""
    allow_network: bool = False
    """Only a profile marked so may run a pack with ``network_access: true``."""
    network: str = "bridge"
    """The Docker network such a pack's sandbox joins (packs without network_access get none)."""
    pool_size: int = Field(0, ge=0)
    """Warm, started sandboxes kept ready per pool process (0 = off; at least 1 when
    ``reuse_runs`` > 1)."""
    reuse_runs: int = Field(1, ge=1)
    """Runs one sandbox may serve, each after a verified reset (1 = a fresh sandbox per
    run). Opt-in: read the threat model (docs/operations.md, "Reusing sandboxes") first.
    Profiles with network access never reuse."""
    runtime: str = Field("auto", min_length=1)
    """The OCI runtime of this profile's sandboxes: ``auto`` (gVisor whenever the engine
    has it, else runc, said loudly at start; ``workers/isolation.py``), or a runtime the
    engine lists (``runsc``, ``runc``, ...). Decided once at worker start."""

    def bounds(self, name: str) -> ProfileBounds:
        """The operator's ceiling for this profile, as the pipeline applies it (an
        unresolved ``auto`` runtime is the engine's default)."""
        limits = Limits(memory_bytes=self.memory_mb * MiB, cpus=self.cpus, pids=self.pids,
                        wall_timeout_s=self.max_wall_s,
                        workspace_bytes=self.workspace_mb * MiB,
                        seed_files=self.seed_files, tree_depth=self.tree_depth,
                        tree_entries=self.tree_entries,
                        output_cap_bytes=self.output_cap_kb * 1024)
        runtime = None if self.runtime == "auto" else self.runtime
        profile = Profile(name=name, image=self.image, limits=limits, runtime=runtime,
                          reuse_runs=self.reuse_runs)
        return ProfileBounds(profile=profile, allow_network=self.allow_network,
                             network_mode=self.network)

    @property
    def warm_sandboxes(self) -> int:
        """Containers a pool process keeps for this profile (one at least, to reuse)."""
        return max(self.pool_size, 1 if self.reuse_runs > 1 else 0)


class JudgeProviderSettings(BaseModel):
    """One LLM-judge provider endpoint (``EVALFLEET_JUDGES__PROVIDERS__OPENAI__BASE_URL``)."""

    base_url: str
    """E.g. ``https://api.openai.com/v1``; nothing is contacted unless the operator sets it."""
    api_key: SecretStr = SecretStr("")
    """Never logged or published (also from ``/run/secrets``)."""
    api: Literal["openai", "anthropic"] | None = None
    """Wire dialect; default ``anthropic`` for the anthropic provider, else OpenAI-compatible."""

    def endpoint(self, provider_key: str) -> ProviderEndpoint:
        api = self.api or ("anthropic" if provider_key == "anthropic" else "openai")
        return ProviderEndpoint(api=api, base_url=self.base_url, api_key=self.api_key)


class JudgeSettings(BaseModel):
    """LLM judges: provider endpoints by provider key, and the call policy."""

    providers: dict[str, JudgeProviderSettings] = Field(default_factory=dict)
    """Keys: anthropic, openai, gemini, xai, mistral, openrouter (the model prefix table,
    docs/scoring.md §3)."""
    max_output_tokens: int = Field(1024, gt=0)
    """``max_tokens`` of every judge call, and its output's worst case for the budget."""
    max_message_bytes: int = Field(256 * 1024, gt=0)
    """The largest judge message the fleet sends (UTF-8 bytes): evidence that would make
    it larger stops the call as a budget would, and the judge scores 0."""
    max_retries: int = Field(2, ge=0)
    """Retries of a judge call answered 429 / 5xx (or refused at connect)."""
    backoff_s: float = Field(0.5, ge=0)
    """First retry delay of a judge call; doubled per retry, capped by ``max_backoff_s``
    (a provider's Retry-After wins)."""
    max_backoff_s: float = Field(8.0, ge=0)
    """The longest wait between a call's retries, and the wait between judging rounds."""
    total_deadline_s: float = Field(240.0, gt=0)
    """One deadline for a run's judging step, its retries included
    (``EVALFLEET_JUDGES__TOTAL_DEADLINE_S``). A judge whose provider has not answered by
    then withholds the run's score and result; it never decides them. Give it at least one
    call timeout per judge model of your packs (AgentClash's default timeout is 60 s); it
    is added to Celery's time limits, so the run is never redelivered for its judging."""
    rounds: int = Field(3, ge=1)
    """How many times the judging step sends a call that failed on the provider's side,
    the first time included (``EVALFLEET_JUDGES__ROUNDS``)."""

    def config(self) -> JudgingConfig:
        """What the pipeline's judging step needs."""
        return JudgingConfig(
            endpoints={k: p.endpoint(k) for k, p in self.providers.items()},
            max_output_tokens=self.max_output_tokens,
            max_message_bytes=self.max_message_bytes, max_retries=self.max_retries,
            backoff_s=self.backoff_s, max_backoff_s=self.max_backoff_s,
            total_deadline_s=self.total_deadline_s, rounds=self.rounds)


class PreflightSettings(BaseModel):
    """Whether runs need a passing ``evalfleet check`` of their pack version
    (``EVALFLEET_PREFLIGHT__MODE``; see :mod:`tasks.checking.preflight`)."""

    mode: Literal["off", "flag", "require"] = "off"
    """``off``: runs never look; ``require``: a run whose pack version has no passing
    preflight (recorded by ``evalfleet check --fleet``) for its case and image is rejected
    before any container starts; ``flag``: it runs, and its result's ``preflight`` says why
    it is flagged."""
    sections: list[str] = Field(default_factory=list)
    """Check sections that must have passed too, beside the pack being sound (by key, e.g.
    ``["forgeries"]`` for the forgery battery): the operator's separate requirement."""


class SigningSettings(BaseModel):
    """The fleet's Ed25519 key, which signs every result it publishes
    (``EVALFLEET_SIGNING__*``; see :mod:`tasks.signatures` and docs/operations.md,
    "Signing keys")."""

    key: SecretStr = SecretStr("")
    """The private key: PEM (PKCS#8) or base64 of its 32-byte seed. Wins over ``key_file``."""
    key_file: Path | None = None
    """A file holding the private key; created (mode 0600) by the first worker that finds
    it missing, so workers sharing a volume share one key. With neither set, each worker
    signs with a key of its own life (a warning says so; its public key is in its log and
    in ``evalfleet keys list``)."""
    key_id: str = ""
    """The id results name (default: ``ed25519:`` and 16 hex digits of the public key's
    SHA-256). Name keys by date to rotate (``fleet-2026-11``)."""
    trusted_keys: list[str] = Field(default_factory=list)
    """Public keys ``evalfleet verify`` trusts besides its ``--public-key``: base64 of the
    32 raw bytes, PEM, a path to a file of either, or ``<key_id>=<key>`` for a key with a
    chosen id (a JSON list in the environment)."""


def _default_worker_id() -> str:
    """``<hostname>-<pid>``: unique per process on a host."""
    return f"{socket.gethostname()}-{os.getpid()}"


class Settings(BaseSettings):
    """evalfleet's configuration (environment prefix ``EVALFLEET_``)."""

    model_config = SettingsConfigDict(
        env_prefix="EVALFLEET_", env_nested_delimiter="__", extra="ignore",
        secrets_dir=str(SECRETS_DIR) if SECRETS_DIR.is_dir() else None)

    redis_url: str = "redis://127.0.0.1:6379/0"
    """Broker and result store (``redis://[:password@]host:port/db``, ``rediss://`` over
    TLS), or a primary found through Sentinel (``sentinel://[:password@]host:port,host:port
    /<master>/<db>``; :mod:`tasks.redis_connection`)."""
    redis_sentinels: str = ""
    """Sentinels, ``host:port,host:port,...``: the fleet's Redis is then the primary they
    name ``redis_master``, with the login, database and TLS of ``redis_url`` (its host is
    not used)."""
    redis_master: str = "evalfleet"
    """The master name the sentinels monitor (with ``redis_sentinels``)."""
    docker_url: str | None = None
    """The Docker engine (default: the local socket / ``DOCKER_HOST``)."""
    docker_api_version: str = "1.41"
    """Docker API version (``auto`` asks the engine at start; a fixed one starts offline)."""
    fleet: str = ""
    """This fleet's name on a shared Docker engine (default: the id stored in the Redis the
    fleet shares, ``evalfleet:fleet``; a digest of the Redis URL when that is unreachable).
    Sandboxes carry it as the label ``evalfleet.fleet``; the reaper removes containers of
    its own fleet, whose workers' heartbeats it can see, and of another fleet only once
    they are an hour past their deadline (garbage whatever their fleet)."""
    worker_id: str = Field(default_factory=_default_worker_id)
    """This worker's identity: container labels, heartbeats and results name it."""
    queues: list[str] = Field(default_factory=lambda: ["default"])
    """Profiles this worker serves; each is the queue ``evalfleet.<profile>``."""
    concurrency: int = Field(2, gt=0)
    """Runs this worker executes at once (Celery pool processes); KEDA's target per replica
    (deploy/k8s) assumes 2."""
    profiles: dict[str, ProfileSettings] = Field(
        default_factory=lambda: {"default": ProfileSettings()})
    """The sandbox profiles, by name (``EVALFLEET_PROFILES__<NAME>__<FIELD>``); packs select
    one by name, and each is served on its own queue."""
    packs_dir: Path | None = None
    """Packs registered with the fleet: ``<packs_dir>/<name>/pack.yaml`` serves pack_ref name."""
    max_request_bytes: int = Field(8 * MiB, gt=0)
    """The largest run request accepted (bytes); a larger one is rejected, never run."""
    max_result_bytes: int = Field(32 * MiB, gt=0)
    """The largest result published (bytes, as JSON): a larger one loses its events' output
    copies first, then whole events (the captures are capped in the sandbox already)."""
    delivery_cap: int = Field(3, gt=0)
    """Deliveries of one run before it is published as failed instead of retried."""
    retry_backoff_s: float = Field(2.0, ge=0)
    """Delay before a run that failed on our side is retried; doubled per delivery."""
    visibility_timeout_s: int = Field(3600, gt=0)
    """Redis redelivers a reserved, unacked run after this; keep it above the longest run."""
    result_ttl_s: int = Field(7 * 24 * 3600, gt=0)
    """How long a result is kept: its key, and its entry in the ``evalfleet:results`` stream
    (so a consumer group away for up to this long misses nothing). With the archive on, it
    runs from the moment the result is archived."""
    metrics_port: int = Field(9808, ge=0)
    """Prometheus metrics port of the worker (0 = off)."""
    metrics_addr: str = "0.0.0.0"
    """The address the metrics server listens on (``127.0.0.1``: this host only)."""
    heartbeat_interval_s: float = Field(5.0, gt=0)
    """How often the worker beats: its heartbeat file (``evalfleet health``), its heartbeat
    in Redis and its served packs."""
    heartbeat_ttl_s: float = Field(30.0, gt=0)
    """A heartbeat older than this means the worker is gone: ``evalfleet health`` fails, and
    its heartbeat in Redis expires (other workers' reapers then treat its sandboxes as a
    dead worker's)."""
    reaper_interval_s: float = Field(60.0, gt=0)
    """How often the worker removes sandboxes of dead workers and past their deadline."""
    engine_wait_s: float = Field(60.0, ge=0)
    """How long a starting worker waits for the Docker engine to answer (it must know the
    engine's runtimes before it takes a run) before it exits with an error."""
    heartbeat_file: Path | None = None
    """Where the worker writes its liveness beat (default: ``<tmp>/evalfleet-worker.heartbeat``)."""
    judges: JudgeSettings = Field(default_factory=JudgeSettings)
    """LLM-judge providers (``EVALFLEET_JUDGES__PROVIDERS__<KEY>__BASE_URL`` / ``__API_KEY``)."""
    signing: SigningSettings = Field(default_factory=SigningSettings)
    """The key that signs results (``EVALFLEET_SIGNING__KEY_FILE`` …)."""
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    """The archive (``EVALFLEET_ARCHIVE__URL``, ``__REFUSE_AT``, ``__MAX_BACKLOG``)."""
    preflight: PreflightSettings = Field(default_factory=PreflightSettings)
    """Require (or flag) a passing preflight per pack version (``EVALFLEET_PREFLIGHT__MODE``,
    ``EVALFLEET_PREFLIGHT__SECTIONS``)."""
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    """Results POSTed to callbacks (``EVALFLEET_WEBHOOKS__ALLOW``, ``__SECRETS``, …)."""
    admission: AdmissionSettings = Field(default_factory=AdmissionSettings)
    """Tenants' fair shares and quotas (``EVALFLEET_ADMISSION__MODE``, ``__QUEUED_PER_SLOT``, …)."""

    @model_validator(mode="after")
    def _through_sentinels(self) -> Settings:
        """With ``redis_sentinels``, every component's Redis URL is Sentinel's."""
        if self.redis_sentinels:
            self.redis_url = sentinel_url(self.redis_url, self.redis_sentinels,
                                          self.redis_master)
        return self

    @property
    def fleet_label(self) -> str:
        """The fleet's name: ``fleet``, else a digest of the Redis location (no password)."""
        if self.fleet:
            return self.fleet
        url = urlsplit(self.redis_url)
        where = (f"{url.netloc.rpartition('@')[2]}{url.path}" if url.scheme.startswith(
            "sentinel") else f"{url.hostname}:{url.port}{url.path}")  # never the password
        return "redis-" + hashlib.sha256(where.encode()).hexdigest()[:12]

    def pipeline_config(self) -> PipelineConfig:
        """What the run pipeline needs from the operator."""
        return PipelineConfig(
            profiles={name: p.bounds(name) for name, p in self.profiles.items()},
            packs_dir=self.packs_dir, max_request_bytes=self.max_request_bytes,
            max_result_bytes=self.max_result_bytes, worker_id=self.worker_id,
            judging=self.judges.config())
