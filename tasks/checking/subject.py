"""What one case of a pack under check is, and where its reference submission comes from.

A pack names its reference submission in ``version.sandbox.reference``: a path (relative
to the pack file's directory) to a submission directory or document that serves every
case, or a mapping ``{case_key: path}`` with one per case. ``evalfleet check --reference``
overrides it for every case checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from evalfleet.scoring import Case, Pack

from ..evaluation.packs import SandboxBlock, sandbox_block
from ..messages import Rejection, Submission
from .submissions import load_submission

#: Where a pack names its reference submission.
REFERENCE_FIELD = "pack.version.sandbox.reference"


class CheckError(ValueError):
    """The check cannot start: no reference, an unreadable one, or no such case."""


@dataclass(frozen=True)
class Trial:
    """A submission a section wants run ``repeats`` times on a case (runs ``1`` … ``n``,
    each seeing its index as ``EVALFLEET_CHECK_RUN``). Sections asking for the same
    ``label`` share its runs."""

    label: str
    submission: Submission
    repeats: int = 1


@dataclass(frozen=True)
class Subject:
    """One case of the pack under check, with everything a section may look at."""

    pack: Pack
    manifest: Mapping[str, Any]
    """The pack document exactly as each request carries it."""
    block: SandboxBlock
    case: Case | None
    reference: Submission
    runs: int
    """How many times the reference runs (``--runs``, default 5)."""

    @property
    def case_key(self) -> str | None:
        return self.case.case_key if self.case else None

    @property
    def deliverables(self) -> list[str]:
        """The paths the pack captures from the workspace (its ``file_capture`` checks):
        what a submission must produce, and what a hostile one would forge."""
        return [c.path for c in self.pack.spec.post_execution_checks if c.type == "file_capture"]


def reference_paths(pack: Pack, pack_dir: Path, case_keys: list[str | None],
                    override: Path | None = None) -> dict[str | None, Path]:
    """The reference submission of each case.

    Raises:
        CheckError: the pack names none (and no override), or names one badly.
    """
    if override is not None:
        return dict.fromkeys(case_keys, override)
    declared = _declared(pack)
    if declared is None:
        raise CheckError(f"{REFERENCE_FIELD}: the pack names no reference submission; set "
                         "it (a path relative to the pack file) or pass --reference PATH")
    if isinstance(declared, str):
        return dict.fromkeys(case_keys, _relative(declared, pack_dir, REFERENCE_FIELD))
    missing = [key for key in case_keys if key not in declared]
    if missing:
        raise CheckError(f"{REFERENCE_FIELD}: names no reference for case(s) "
                         f"{', '.join(str(k) for k in missing)}")
    return {key: _relative(declared[str(key)], pack_dir, f"{REFERENCE_FIELD}.{key}")
            for key in case_keys}


def _declared(pack: Pack) -> str | dict[str, str] | None:
    version = pack.manifest.get("version")
    sandbox = version.get("sandbox") if isinstance(version, Mapping) else None
    found = sandbox.get("reference") if isinstance(sandbox, Mapping) else None
    if found is None or isinstance(found, str):
        return found
    if isinstance(found, Mapping) and all(isinstance(v, str) for v in found.values()):
        return {str(k): str(v) for k, v in found.items()}
    raise CheckError(f"{REFERENCE_FIELD}: must be a path, or a mapping of case keys to paths")


def _relative(path: str, pack_dir: Path, field: str) -> Path:
    if not path or PurePosixPath(path).is_absolute():
        raise CheckError(f"{field}: must be a path relative to the pack file, not {path!r}")
    return pack_dir / path


def read_reference(path: Path) -> Submission:
    """A reference submission from disk (a directory or a submission document).

    Raises:
        CheckError: it does not exist or is not a valid submission.
    """
    try:
        return load_submission(path)
    except (OSError, ValueError) as error:
        raise CheckError(f"reference submission {path}: {error}") from None


def subjects(pack: Pack, manifest: Mapping[str, Any], pack_dir: Path, *, runs: int,
             case_key: str | None = None, reference: Path | None = None) -> list[Subject]:
    """One subject per case checked: every case of the pack, or the one named.

    Raises:
        CheckError: no such case, or a reference is missing or unreadable.
    """
    cases: list[Case | None] = list(pack.cases) or [None]
    if case_key is not None:
        cases = [c for c in cases if c is not None and c.case_key == case_key]
        if not cases:
            raise CheckError(f'case: no case "{case_key}" in the pack')
    paths = reference_paths(pack, pack_dir, [c.case_key if c else None for c in cases],
                            reference)
    try:
        block = sandbox_block(pack)
    except Rejection as rejection:
        raise CheckError(str(rejection)) from None
    return [Subject(pack=pack, manifest=manifest, block=block, case=case,
                    reference=read_reference(paths[case.case_key if case else None]),
                    runs=runs) for case in cases]
