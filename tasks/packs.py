"""Which pack a request means, and what its ``version.sandbox`` block asks for.

The pack fixes the environment; the submission only fills it. AgentClash's sandbox block
(``network_access``, ``network_allowlist``, ``env_vars``, ``additional_packages``,
``sandbox_template_id``) sits in the lenient outer manifest, so evalfleet adds its own keys
there: ``profile`` (an operator-registered profile; default ``default``), ``limits`` (can
only lower the profile's), ``files`` (challenge files seeded before the submission),
``test_files`` (seeded only after the candidate is stopped, so a submission cannot see or
tamper with hidden tests), ``setup_commands`` and ``final_output`` (``last_stdout`` or
``none``: where the final answer comes from when the request gives none).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scoring import Pack, SpecError, load_pack

from .messages import FieldProblem, Rejection, RunRequest, SubmissionCommand, SubmissionFile

PACK_FILE_NAMES = ("pack.yaml", "pack.yml", "pack.json")


class PackLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_mb: int | None = Field(None, gt=5)
    cpus: float | None = Field(None, gt=0)
    pids: int | None = Field(None, gt=0)
    wall_timeout_ms: int | None = Field(None, gt=0)


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

    def profile_name(self, registered: set[str]) -> str:
        """The profile asked for: ``profile``, else a template id naming a profile."""
        if self.profile:
            return self.profile
        if self.sandbox_template_id in registered:
            return self.sandbox_template_id
        return "default"


def resolve_pack(request: RunRequest, packs_dir: Path | None) -> Pack:
    """Load the request's pack (inline or registered).

    Raises:
        Rejection: the pack is unknown or invalid (field paths under ``pack.``).
    """
    source: Any = request.pack if request.pack is not None else _registered(request, packs_dir)
    try:
        return load_pack(source)
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
        Rejection: a key evalfleet reads has the wrong shape.
    """
    version = pack.manifest.get("version")
    raw = version.get("sandbox") if isinstance(version, dict) else None
    try:
        return SandboxBlock.model_validate(raw or {})
    except ValidationError as err:
        raise Rejection([_problem(e) for e in err.errors()], "invalid pack sandbox block") from None


def _problem(error: Any) -> FieldProblem:
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    return FieldProblem(field=f"pack.version.sandbox{loc}", message=str(error["msg"]))
