"""The Docker driver's half of the evaluator step: the seal script, the files, the uid."""

from __future__ import annotations

from sandbox.command import SeedFile
from sandbox.docker import scripts, transfer
from sandbox.evaluator import EVALUATOR_USER, GROUND_TRUTH, EvaluatorRun
from sandbox.profile import Hardening

#: As the candidate's uid: stop the candidate, make the workspace readable and read-only
#: to everyone (the evaluator is "other"), then extract the evaluator's files into ``$2``.
SEAL = scripts.STOP_FUNCTION + r"""
stop_candidate || exit 97
chmod -R a+rX,a-w "$1" 2>/dev/null
mkdir -m 755 "$2" && exec tar -xf - -C "$2"
"""


def archive(spec: EvaluatorRun, directory: str, max_bytes: int) -> bytes:
    """A tar of the script and ``ground-truth.json``, relative to ``directory``."""
    files = [SeedFile(path=spec.script_name, content=spec.script, mode=0o644),
             SeedFile(path=GROUND_TRUTH, content=spec.ground_truth, mode=0o644)]
    return transfer.seed_archive(files, directory, max_bytes)


def user(hardening: Hardening) -> str:
    """:data:`EVALUATOR_USER`, or the next free uid below it if a profile uses it."""
    taken = {hardening.user.split(":")[0], hardening.keeper_user.split(":")[0]}
    uid = 65533
    while str(uid) in taken:
        uid -= 1
    return EVALUATOR_USER if uid == 65533 else f"{uid}:{uid}"
