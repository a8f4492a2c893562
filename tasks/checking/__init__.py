"""``evalfleet check``: a pack's preflight through the real sandbox (issue 20).

The reference submission runs K times and an empty one once, per case; each section of
:data:`~tasks.checking.sections.SECTIONS` judges those runs (the reference wins every
time, verdicts do not vary, the empty submission loses, no environmental failure, run
times). The CLI lives in :mod:`workers.check_cli`; the fleet's requirement of a passing
check in :mod:`.preflight`.
"""

from .leaks import LEAK
from .report import CaseReport, CheckReport, Finding, SectionReport
from .runner import Execute, check_pack, one_by_one, plan, through_fleet, trials
from .sections import EMPTY, REFERENCE, SECTIONS, Section
from .subject import CheckError, Subject, Trial, subjects

__all__ = ["EMPTY", "LEAK", "REFERENCE", "SECTIONS", "CaseReport", "CheckError", "CheckReport",
           "Execute", "Finding", "Section", "SectionReport", "Subject", "Trial", "check_pack",
           "one_by_one", "plan", "subjects", "through_fleet", "trials"]
