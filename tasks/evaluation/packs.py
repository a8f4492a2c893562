"""Which pack a request means, and what its ``version.sandbox`` block asks for.

The pack fixes the environment; the submission only fills it. AgentClash's sandbox block
(``network_access``, ``network_allowlist``, ``env_vars``, ``additional_packages``,
``sandbox_template_id``) sits in the lenient outer manifest, so evalfleet adds its own keys
there: ``profile`` (an operator-registered profile; default ``default``), ``limits`` (can
only lower the profile's), ``files`` (challenge files seeded before the submission),
``test_files`` (seeded only after the candidate is stopped, so a submission cannot see or
tamper with hidden tests), ``setup_commands`` and ``final_output`` (``last_stdout`` or
``none``: where the final answer comes from when the request gives none). A ``runtime``
key is refused: which OCI runtime (gVisor, runc) isolates a run is the operator's choice.
``reference`` (the pack's reference submission) is read by ``evalfleet check`` only
(:mod:`tasks.checking.subject`); a worker ignores it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import to_jsonable_python

from evalfleet.sandbox.paths import PathRejected, workspace_path
from evalfleet.sandbox.profile import WORKSPACE
from evalfleet.scoring import Pack, SpecError

from ..messages import (
    FieldProblem,
    Rejection,
    RunRequest,
    SubmissionCommand,
    SubmissionFile,
    refuse_runtime,
)
from .pack_cache import PackCache

PACK_FILE_NAMES = ("pack.yaml", "pack.yml", "pack.json")


class PackLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_mb: int | None = Field(None, gt=5)
    cpus: float | None = Field(None, gt=0)
    pids: int | None = Field(None, gt=0)
    wall_timeout_ms: int | None = Field(None, gt=0)


#: A probe's name: a directory name under ``$PROBES``.
PROBE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class ProbeSpec(BaseModel):
    """One run of the candidate's code for the judge (clean room only): ``run`` as the
    candidate in the workspace after it is stopped; ``{{ path }}`` placeholders take the
    case's values, as in a test command."""

    model_config = ConfigDict(extra="forbid")

    run: str | list[str] = Field(min_length=1)
    stdin: str = ""
    timeout_ms: int = Field(10_000, gt=0)


class SandboxBlock(BaseModel):
    """evalfleet's reading of a pack's ``version.sandbox`` (unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    profile: str = ""
    sandbox_template_id: str = ""
    network_access: bool = False
    env_vars: dict[str, str] = Field(default_factory=dict)
    limits: PackLimits = Field(default_factory=PackLimits)
    files: dict[str, str | SubmissionFile] = Field(default_factory=dict)
    test_files: dict[str, str | SubmissionFile] = Field(default_factory=dict)
    setup_commands: list[SubmissionCommand] = Field(default_factory=list)
    final_output: Literal["last_stdout", "none"] = "last_stdout"
    deliverables: list[str] = Field(default_factory=list)
    """What the candidate must produce: set, the hidden tests run in the judge's clean room
    with only these (copied, read-only), never next to the rest of the workspace."""
    probes: dict[str, ProbeSpec] = Field(default_factory=dict)
    """Name → a run of the candidate's code whose output the clean room's tests read."""
    imports_deliverables: bool = False
    """The clean room's tests import the deliverables (from the judge's copy, which is on
    their ``PYTHONPATH``, after every process of the candidate is gone): the candidate's
    code then runs in the test's process, and the pack's tests must resist it
    (docs/forgeries.md, "What each mode trusts")."""
    reports: dict[str, Literal["junit"]] = Field(default_factory=dict)
    """``code_execution`` validator key → the report its test writes to ``$REPORT``: the
    verdict comes from there, never from the output or exit code (no report, no pass)."""
    runtime: Any = None
    """Never accepted (:data:`~tasks.messages.RUNTIME_IS_THE_OPERATORS`)."""

    _runtime = field_validator("runtime")(refuse_runtime)

    @field_validator("deliverables")
    @classmethod
    def _inside_the_workspace(cls, paths: list[str]) -> list[str]:
        for path in paths:
            try:
                workspace_path(path, WORKSPACE)
            except PathRejected as rejected:
                raise ValueError(str(rejected)) from None
        return paths

    @field_validator("probes")
    @classmethod
    def _probe_names(cls, probes: dict[str, ProbeSpec]) -> dict[str, ProbeSpec]:
        bad = [name for name in probes if not re.match(PROBE_NAME, name)]
        if bad:
            raise ValueError(f"probe names must match {PROBE_NAME}: {', '.join(bad)}")
        return probes

    def profile_name(self, registered: set[str]) -> str:
        """The profile asked for: ``profile``, else a template id naming a profile."""
        if self.profile:
            return self.profile
        if self.sandbox_template_id in registered:
            return self.sandbox_template_id
        return "default"


#: The packs this process has loaded (:mod:`tasks.evaluation.pack_cache`).
PACKS = PackCache()


def resolve_pack(request: RunRequest, packs_dir: Path | None) -> Pack:
    """Load the request's pack (inline or registered): a copy of its own.

    Raises:
        Rejection: the pack is unknown or invalid (field paths under ``pack.``).
    """
    source: Any = request.pack if request.pack is not None else _registered(request, packs_dir)
    try:
        return PACKS.load(source)
    except SpecError as err:
        raise Rejection([FieldProblem(field=f"pack.{e.field}", message=str(e.message))
                         for e in err.errors], "invalid pack") from None


def _registered(request: RunRequest, packs_dir: Path | None) -> Path:
    name = request.pack_ref or ""
    found = registered_pack(name, packs_dir)
    if found is not None:
        return found
    problem = FieldProblem(field="request.pack_ref", message=f'names no registered pack "{name}"')
    raise Rejection([problem], "unknown pack")


def registered_pack(name: str, packs_dir: Path | None) -> Path | None:
    """The file of the pack registered as ``name`` (``<packs_dir>/<name>/pack.yaml``)."""
    if packs_dir is not None and name and "/" not in name and not name.startswith("."):
        for file_name in PACK_FILE_NAMES:
            if (packs_dir / name / file_name).is_file():
                return packs_dir / name / file_name
    return None


def sandbox_block(pack: Pack) -> SandboxBlock:
    """The pack's sandbox block.

    Raises:
        Rejection: a key evalfleet reads has the wrong shape, or names what is not there.
    """
    version = pack.manifest.get("version")
    raw = version.get("sandbox") if isinstance(version, dict) else None
    try:
        block = SandboxBlock.model_validate(raw or {})
    except ValidationError as err:
        raise Rejection([_problem(e) for e in err.errors()], "invalid pack sandbox block") from None
    problems = [*_unknown_reports(block, pack), *_needs_the_room(block)]
    if problems:
        raise Rejection(problems, "invalid pack sandbox block")
    return block


def _unknown_reports(block: SandboxBlock, pack: Pack) -> list[FieldProblem]:
    tests = {v.key for v in pack.spec.validators if v.type == "code_execution"}
    return [FieldProblem(field=f"pack.version.sandbox.reports.{key}",
                         message="names no code_execution validator of the spec")
            for key in block.reports if key not in tests]


def _needs_the_room(block: SandboxBlock) -> list[FieldProblem]:
    """Probes and ``imports_deliverables`` mean something only in the clean room."""
    problems = []
    if block.probes and not block.deliverables:
        problems.append(FieldProblem(field="pack.version.sandbox.probes", message=(
            "need deliverables (probes feed the clean room's tests)")))
    if block.imports_deliverables and not block.deliverables:
        problems.append(FieldProblem(field="pack.version.sandbox.imports_deliverables", message=(
            "needs deliverables (the clean room's tests import their copy)")))
    return problems


def _problem(error: Any) -> FieldProblem:
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    return FieldProblem(field=f"pack.version.sandbox{loc}", message=str(error["msg"]))


def pack_digest(manifest: Mapping[str, Any]) -> str:
    """The identity of a pack version: SHA-256 of its document in canonical JSON.

    Canonical: keys sorted, no insignificant whitespace, UTF-8 (not ASCII-escaped), values
    as a request's JSON carries them (a YAML date is its ISO text), so the mapping a pack
    file loads to and the one a worker decodes from the request give the same digest.
    """
    text = json.dumps(to_jsonable_python(manifest), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
