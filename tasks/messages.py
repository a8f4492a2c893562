"""The wire format: :class:`RunRequest` in, :class:`RunResult` out (``schema_version`` 1).

Both are pydantic models with an exportable JSON Schema (``evalfleet schema request`` /
``evalfleet schema result``). Requests are decoded strictly: an unknown field, a wrong type
or a missing required field is a *rejection* — a published RunResult with ``outcome:
rejected`` and field-path errors — never an exception and never retried.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from evalfleet.scoring import Scorecard

SCHEMA_VERSION: Literal[1] = 1
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
#: A match name (a platform's match, tournament round, ...): the run id's alphabet.
MATCH_PATTERN = RUN_ID_PATTERN
#: The longest ``callback_url`` a request may carry (characters).
MAX_CALLBACK_URL = 2048
Outcome = Literal["scored", "rejected", "infra_error", "internal_error", "cancelled", "expired"]
"""How a run ended. ``cancelled``: the platform cancelled it (:meth:`~tasks.platform.client.
EvalfleetClient.cancel`) before it was published: no scorecard, neither the candidate's loss
nor the fleet's failure. ``expired``: no worker started it by its ``expires_at``."""


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Why a pack or a request may not name the sandbox's OCI runtime.
RUNTIME_IS_THE_OPERATORS = ("cannot be set by a pack or a request: the sandbox runtime "
                            "(gVisor or runc) is the operator's, per profile")


def refuse_runtime(value: Any) -> Any:
    """A ``runtime`` field's validator: any value given is refused (with its field path)."""
    raise ValueError(RUNTIME_IS_THE_OPERATORS)


class SubmissionFile(Wire):
    """A file to seed into the workspace: text, or base64 for bytes."""

    content: str
    encoding: Literal["text", "base64"] = "text"
    mode: int = Field(0o644, ge=0, le=0o777)

    def data(self) -> bytes:
        """The file's bytes.

        Raises:
            ValueError: the base64 content does not decode.
        """
        if self.encoding == "text":
            return self.content.encode("utf-8")
        try:
            return base64.b64decode(self.content, validate=True)
        except binascii.Error as err:
            raise ValueError(f"invalid base64: {err}") from None


class SubmissionCommand(Wire):
    """One command of the submission: a shell string (``sh -c``) or an argv list."""

    run: str | list[str] = Field(min_length=1)
    timeout_ms: int = Field(30_000, gt=0)
    stdin: str = ""


class Submission(Wire):
    """What the candidate submitted: files, commands, and optionally its own story."""

    files: dict[str, str | SubmissionFile] = Field(default_factory=dict)
    commands: list[SubmissionCommand] = Field(default_factory=list)
    final_output: str | None = None
    """The agent's final answer; default: the last command's stdout."""
    events: list[dict[str, Any]] | None = None
    """The agent's trajectory as AgentClash events; the worker adds sandbox/grader events."""


class PeerRun(Wire):
    """Another run of the same case, for ``n_wise`` judges to rank this run against."""

    run_id: str = Field(pattern=RUN_ID_PATTERN)
    events: list[dict[str, Any]] = Field(default_factory=list)
    """The peer's evidence (AgentClash events), as its own RunResult carries it."""
    final_output: str | None = None
    """Shorthand for a peer whose events are just its final answer."""


class SandboxOverrides(Wire):
    """Per-run limits, clamped to what the pack and the operator allow (never raised)."""

    memory_mb: int | None = Field(None, gt=0)
    cpus: float | None = Field(None, gt=0)
    pids: int | None = Field(None, gt=0)
    output_cap_bytes: int | None = Field(None, gt=0)
    runtime: SkipJsonSchema[Any] = Field(None, exclude=True)
    """Never accepted (:data:`RUNTIME_IS_THE_OPERATORS`); named so the refusal says why."""

    _runtime = field_validator("runtime")(refuse_runtime)


class RunRequest(Wire):
    """One run: one submission for one case of one pack."""

    schema_version: Literal[1] = SCHEMA_VERSION
    run_id: str = Field(pattern=RUN_ID_PATTERN)
    """The idempotency key: one scorecard is ever published per run id."""
    pack: dict[str, Any] | str | None = None
    """The pack inline: a mapping, or its YAML/JSON text."""
    pack_ref: str | None = None
    """The name of a pack registered with the fleet (``EVALFLEET_PACKS_DIR``)."""
    case_key: str | None = None
    """The case to run: ``<input_set>/<case_key>``, or a case key no other input set uses."""
    submission: Submission = Field(default_factory=Submission)
    sandbox: SandboxOverrides | None = None
    priority: int = Field(5, ge=0, le=9)
    time_limit_ms: int | None = Field(None, gt=0)
    peers: list[PeerRun] = Field(default_factory=list, max_length=15)
    """Other runs of the same case that ``n_wise`` judges rank this run against."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Opaque; echoed back in the result."""
    match: str | None = Field(None, pattern=MATCH_PATTERN)
    """The platform's name for the runs that belong together (a match, a tournament round):
    ``client.runs(match)`` lists them, ``client.cancel_match`` and ``wait_many`` take it;
    echoed in the result."""
    expires_at: AwareDatetime | None = None
    """The match's deadline (RFC 3339 with a zone, or Unix seconds): a run no worker has
    started by then never starts and ends ``expired`` (Clawdiators: a draw with no rating
    change). A run started by then runs to its end."""
    check_run: int | None = Field(None, ge=1, le=1000)
    """Set by ``evalfleet check`` only: this run's index in a preflight series of one
    submission. Every step of the run (the pack's setup, the submission's commands, the
    hidden tests, the evaluator) sees it as ``EVALFLEET_CHECK_RUN``."""
    attempt_number: int | None = Field(None, ge=1)
    """The platform's attempt number of this match (Clawdiators: 1 + the number of this
    agent's earlier *completed* matches on this challenge; expired matches do not count).
    Echoed in the result's ``rating``, where it decides the verified bonus; None: not said."""
    memoryless: bool | None = None
    """Whether the agent ran memoryless (no memory carried from earlier matches), as the
    platform knows it. Echoed in the result's ``rating`` (benchmark-grade); None: not said."""
    callback_url: str | None = Field(None, max_length=MAX_CALLBACK_URL)
    """Where the fleet POSTs the run's result when it is published (``http`` or ``https``,
    no user or password, no fragment): signed, retried, and only to a host the operator
    allows (``EVALFLEET_WEBHOOKS__ALLOW``; docs/platform.md, "Webhooks"). The operator may
    also name one per match."""
    runtime: SkipJsonSchema[Any] = Field(None, exclude=True)
    """Never accepted (:data:`RUNTIME_IS_THE_OPERATORS`); named so the refusal says why."""

    _runtime = field_validator("runtime")(refuse_runtime)

    @field_validator("callback_url")
    @classmethod
    def _callback_url(cls, value: str | None) -> str | None:
        if value is not None:
            callback_problem(value)
        return value

    @model_validator(mode="after")
    def _one_pack(self) -> RunRequest:
        if (self.pack is None) == (self.pack_ref is None):
            raise ValueError("exactly one of pack or pack_ref must be set")
        return self


def callback_problem(url: str) -> None:
    """Check the shape of a ``callback_url`` (where it may point is the operator's
    allowlist, checked when the fleet delivers).

    Raises:
        ValueError: not an absolute ``http``/``https`` URL with a host, or it carries a
            user, a password or a fragment.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise ValueError(f"is not a valid URL: {err}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http or https URL with a host")
    if parts.username is not None or parts.password is not None or parts.fragment:
        raise ValueError("may not carry a user, a password or a fragment")
    if port == 0:
        raise ValueError("may not name port 0")


class FieldProblem(Wire):
    field: str
    message: str


PreflightStatus = Literal["passed", "failed", "missing", "stale", "preflight"]


class Preflight(BaseModel):
    """Where the run's pack version stands with its preflight (``evalfleet check``), when
    the operator asks (``EVALFLEET_PREFLIGHT__MODE``; see :mod:`tasks.checking.preflight`)."""

    status: PreflightStatus
    """``passed``; ``failed`` (the recorded check failed, or not a section the operator
    requires); ``missing`` (never checked, or not this case); ``stale`` (checked on
    another image); ``preflight`` (this run is itself part of a check)."""
    reason: str = ""
    digest: str
    """The pack version: SHA-256 of the pack document in canonical JSON."""
    image_id: str = ""
    """The image the run would use, as the check must have seen it."""


RatingCategory = Literal["win", "draw", "loss", "expired"]


class Rating(BaseModel):
    """What a platform's rating update needs from a run (docs/scoring.md §C9),
    computed by :mod:`tasks.evaluation.rating`. The fleet computes no rating itself: it
    states the facts, and the multiplier they give, so a platform can apply either reading
    of "benchmark-grade" (Clawdiators' code checks the attempt only, its docs all three)."""

    category: RatingCategory | None
    """``win`` (≥ 700), ``draw`` (≥ 400) or ``loss`` from the scorecard's ``result``;
    ``expired`` for a run not started by its match's ``expires_at`` (Clawdiators records
    it as a draw with no rating change); None when the scorecard has no result (no
    contest: the pack's or the fleet's failure decided nothing)."""
    elo_score: float | None
    """Clawdiators' S: 1 for a win, 0.5 for a draw, 0 for a loss; 0.5 for ``expired`` (a
    draw); None with no category."""
    rating_change: bool
    """Whether the platform changes the agent's rating for this run: false for ``expired``
    (a draw with no rating change) and for a run with no category."""
    verified: bool
    """The agent's trajectory was verified (docs/scoring.md §C4: ``model.call.completed``
    / ``tool.call.*`` steps, all within the run's window, give or take 5 s), read from the
    run's events whatever the pack (a pack without the Clawdiators layer too); false with
    no trajectory, and for ``expired`` (nothing ran)."""
    attempt_number: int | None = None
    """The request's ``attempt_number``, echoed (None: the request did not say)."""
    memoryless: bool | None = None
    """The request's ``memoryless``, echoed (None: the request did not say)."""
    benchmark_grade: bool | None
    """Verified, memoryless and attempt 1 (Clawdiators' scoring page). False as soon as
    one of the three is known false; None when none is false but memoryless or the attempt
    is unknown."""
    multiplier: float | None
    """What Clawdiators multiplies a *positive* rating change by (never a loss, never a
    zero change): 1.2 for a verified first attempt, 1.1 for a verified later one (its
    code's reading: the attempt alone). None when not verified, when the attempt is
    unknown, or with no rating change."""


class Provenance(BaseModel):
    """What produced a result: the code, its scoring semantics, the pack and the sandbox.

    Results are comparable only when these agree; ``evalfleet rescore`` re-scores a stored
    result under today's semantics and reports what changes.
    """

    evalfleet_version: str
    scoring_semantics: str
    """:data:`scoring.run.semantics.SEMANTICS_VERSION` of the code that scored the run."""
    agentclash_commit: str
    """The AgentClash ``runtime/scoring`` commit those semantics follow."""
    pack_hash: str | None = None
    """``sha256:<hex>`` of the pack as decoded (:attr:`scoring.Pack.content_hash`); None
    when no pack was loaded (a rejected request)."""
    pack_ref: str | None = None
    """The registered pack's name, when the request named one (else the pack was inline)."""
    image_digest: str | None = None
    """The sandbox image's ID (``sha256:...``), when the sandbox driver reports it."""
    runtime: str | None = None
    """The container runtime the sandbox ran under (``runc``, ``runsc``), when reported."""
    spec_digest: str | None = None
    """``sha256:<hex>`` of the evaluation spec as scored (its normalized form, RFC 8785
    JSON): the rules the scorecard applied, whatever else the pack holds."""
    supervisor: str | None = None
    """The sandbox's supervisor build, as its driver reports it (``evalfleet-supervisor
    protocol 6``); its binary is a layer of ``image_digest``. None without a sandbox."""
    judge_models: dict[str, list[str]] = Field(default_factory=dict)
    """Each LLM judge's model(s), by judge key, as the spec names them."""
    seeds: dict[str, list[int]] = Field(default_factory=dict)
    """The seeds of the run's randomness: each judge's candidate-order seed per sample
    (FNV-1a of the run id, the judge key and the sample), by judge key. Nothing else in a
    run is random."""


class Signature(BaseModel):
    """A published result's signature (:mod:`tasks.signatures` says what it covers)."""

    alg: Literal["ed25519"]
    key_id: str
    """Which key signed: a verifier trusts keys by id (several while keys rotate)."""
    fields: dict[str, str]
    """A short digest of each top-level member, to name what changed."""
    value: str
    """Ed25519 over the result's RFC 8785 JSON without ``value``, base64url."""


class RunResult(BaseModel):
    """What the fleet publishes for a run: the scorecard plus the run's own record."""

    schema_version: Literal[1] = SCHEMA_VERSION
    run_id: str
    outcome: Outcome
    reason: str = ""
    errors: list[FieldProblem] = Field(default_factory=list)
    scorecard: Scorecard | None = None
    pack: str | None = None
    case_key: str | None = None
    input_set: str | None = None
    """The key of the input set the scored case belongs to."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    match: str | None = None
    """The request's ``match``, echoed."""
    attempt: int = 1
    """How many times this run was delivered to a worker (1 = first delivery)."""
    worker: str = ""
    timings_ms: dict[str, float] = Field(default_factory=dict)
    """Per phase: queue_wait, sandbox_acquire, seed, commands, code_execution, capture,
    scoring, publish, total."""
    resources: dict[str, Any] = Field(default_factory=dict)
    """The sandbox's profile, image and limits, and what the run used of them."""
    events: list[dict[str, Any]] = Field(default_factory=list)
    """All evidence, as AgentClash events: ``evalfleet score`` re-scores a stored result."""
    dropped: list[str] = Field(default_factory=list)
    """What was cut to keep the result under its size cap (see :func:`cap_size`)."""
    preflight: Preflight | None = None
    """The pack's preflight standing, when the operator requires or flags it: a run that is
    not ``passed`` is ``rejected`` (require) or scored and flagged here (flag)."""
    provenance: Provenance | None = None
    """What produced this result; None only in results stored before it was recorded."""
    rating: Rating | None = None
    """What a platform's rating update needs: set on every ``scored`` result and on an
    ``expired`` one; None otherwise (and in results stored before it was recorded)."""
    signature: Signature | None = None
    """The fleet's Ed25519 signature (:mod:`tasks.signatures`); None before the fleet
    signed (a result being built, one stored before signing, a cancel a client without a
    key published)."""

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)


class Rejection(Exception):
    """A request that will never succeed: published as ``rejected``, never retried."""

    def __init__(self, problems: list[FieldProblem], reason: str = "invalid request") -> None:
        self.problems = problems
        self.reason = reason
        super().__init__("; ".join(f"{p.field} {p.message}" for p in problems) or reason)


def cap_size(result: RunResult, max_bytes: int) -> RunResult:
    """Keep a result under ``max_bytes``: drop event payload texts first, then events.

    Captures are already capped by the sandbox (10 MiB per run); what goes first is the
    bulky copy of outputs inside ``events`` (stdout/stderr/content), then whole events.
    """
    if _size(result) <= max_bytes:
        return result
    slim = [_slim_event(e) for e in result.events]
    capped = result.model_copy(update={"events": slim, "dropped": [*result.dropped,
                                                                   "event output texts"]})
    if _size(capped) <= max_bytes:
        return capped
    return capped.model_copy(update={"events": [], "dropped": [*capped.dropped, "events"]})


def _size(result: RunResult) -> int:
    """The result's size as published: UTF-8 bytes (a character can take four)."""
    return len(result.to_json().encode())


_BULKY = ("stdout", "stderr", "content", "output", "final_output")


def _slim_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event with each bulky text of its payload cut to 1,024 characters; a payload
    that is not an object (JSON text, as a submission may send it) is left out whole."""
    if not isinstance(event.get("payload"), dict):
        return {**event, "payload": {}}
    payload = dict(event["payload"])
    for key in _BULKY:
        if isinstance(payload.get(key), str) and len(payload[key]) > 1024:
            payload[key] = payload[key][:1024]
            payload[f"{key}_truncated"] = True
    return {**event, "payload": payload}
