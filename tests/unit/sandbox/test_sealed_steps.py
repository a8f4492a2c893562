"""The sealed run's preparation on the host side (:mod:`sandbox.docker.sealed`), against a
recording conduit, and what the evaluator's record says of it
(:mod:`sandbox.evaluation.evaluator`): the candidate's tree is counted first, then the
judge clears, then the candidate seals; a step that fails keeps the evaluator from
running, with the step's reason (the engine tests are
tests/integration/clawdiators and tests/integration/sandbox/test_tree_shapes.py). What the
submission caused (the sandbox ended by its limits, something it left that could not be
removed, a tree past the bounds) withholds the evaluator, and every dimension of it scores
0."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from evalfleet.sandbox.docker import sealed
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec
from evalfleet.sandbox.evaluation import evaluator
from evalfleet.sandbox.evaluator import EvaluatorRecord, EvaluatorRun
from evalfleet.sandbox.profile import Profile
from evalfleet.scoring.clawdiators.script import script_score

SPEC = EvaluatorRun(runtime="python", script="print('{}')")


def raw(exit_code: int | None = 0, stderr: bytes = b"", *, timed_out: bool = False) -> RawExec:
    return RawExec(exit_code, b"", stderr, False, False, timed_out, 0.01)


@dataclass
class Conduit:
    """Answers each request with the next of ``answers``; records what it was asked."""

    answers: list[RawExec | None]
    profile: Profile = field(default_factory=lambda: Profile(name="p", image="i"))
    id: str = "c" * 64
    channel: Any = None
    sent: list[ExecRequest] = field(default_factory=list)
    ended_by: str | None = None
    """What ends the sandbox when an answer is ``None``: the deadline, or ``memory``."""
    deadline_exceeded: bool = False

    @property
    def ended(self) -> bool:
        return self.deadline_exceeded or self.ended_by is not None

    def detach_networks(self) -> None:
        pass

    def run(self, request: ExecRequest, on_limit: Any) -> RawExec | None:
        self.sent.append(request)
        answer = self.answers.pop(0)
        if answer is None:
            self.deadline_exceeded = self.ended_by is None
        return answer


def run(conduit: Conduit) -> EvaluatorRecord:
    """The evaluator's record of :data:`SPEC`, sealed in ``conduit``."""
    sealed_run = evaluator.sealed_run(SPEC, conduit.profile.workdir, {})
    outcome = sealed.run(conduit, sealed_run)  # type: ignore[arg-type]
    return evaluator.from_outcome(SPEC, outcome)


def scored(record: Any) -> tuple[float | None, str]:
    """The dimension score a record gives (scale 100)."""
    found = script_score(asdict(record), "k", 100)
    return found.score, found.reason


def test_the_tree_is_counted_the_judge_clears_the_candidate_seals_the_evaluator_runs() -> None:
    conduit = Conduit([raw(), raw(), raw(), raw()])
    record = run(conduit)
    hardening, limits = conduit.profile.hardening, conduit.profile.limits
    assert [r.user for r in conduit.sent] == [hardening.user, hardening.judge_user,
                                              hardening.user, sealed.user(hardening)]
    assert [r.stop_first for r in conduit.sent[:3]] == [True, True, True]
    assert conduit.sent[0].argv[-2:] == (str(limits.tree_entries), str(limits.tree_depth))
    assert record.exit_code == 0 and record.error == ""
    home = conduit.sent[3].env["HOME"]
    assert home.startswith("/tmp/.evaluator-") and home.endswith("/home")
    assert conduit.sent[3].env["TMPDIR"] == home
    assert conduit.sent[3].env["PYTHONNOUSERSITE"] == "1"
    directory = home.removesuffix("/home")
    assert conduit.sent[3].workdir == directory
    assert conduit.sent[3].argv == ("sh", "-c", 'ulimit -v "$1" && shift && exec "$@"', "sh",
                                    "524288", "python3", f"{directory}/evaluator.py")
    assert conduit.sent[3].env["GROUND_TRUTH"] == f"{directory}/ground-truth.json"
    assert conduit.sent[3].env["SUBMISSION_DIR"] == conduit.profile.workdir


@pytest.mark.parametrize(("answers", "why"), [
    ([raw(sealed.LEFT_OVER, b"the workspace is deeper than 64 levels\n")],
     "the workspace is deeper than 64 levels"),
    ([raw(sealed.LEFT_OVER, b"the workspace holds more than 50000 entries\n")],
     "the workspace holds more than 50000 entries"),
    ([raw(None, timed_out=True)],
     "preparing the workspace took longer than 30 s (the tree the submission left)"),
    ([raw(), raw(None, timed_out=True)],
     "preparing the workspace took longer than 30 s (the tree the submission left)"),
], ids=["deep", "wide", "census-timed-out", "clear-timed-out"])
def test_a_tree_past_the_bounds_withholds_the_evaluator(answers: list[RawExec],
                                                       why: str) -> None:
    """A tree the preparation cannot walk within its bounds (depth, entries, time) is
    the submission's doing: the evaluator is withheld and scores 0 — never "could not
    run", which blamed the pack (no contest)."""
    conduit = Conduit(list(answers))
    record = run(conduit)
    assert len(conduit.sent) == len(answers) and record.error == ""
    assert record.stderr == f"[evalfleet] the evaluator did not run: {why}"
    assert scored(record)[0] == 0.0


def test_a_link_left_over_withholds_the_evaluator() -> None:
    """The seal's check found a link the submission left: no evaluator, the reason says
    which, and the dimension scores 0 (not the pack's error: no contest)."""
    left = b"a special file could not be removed: /workspace/answer.json\n"
    conduit = Conduit([raw(), raw(), raw(sealed.LEFT_OVER, left)])
    record = run(conduit)
    assert len(conduit.sent) == 3 and record.exit_code is None and record.error == ""
    assert record.stderr == ("[evalfleet] the evaluator did not run: a special file could not "
                             "be removed: /workspace/answer.json")
    score, reason = scored(record)
    assert score == 0.0 and "a special file could not be removed" in reason


@pytest.mark.parametrize(("answers", "ended_by", "why"), [
    ([None], None, "the sandbox's wall deadline passed"),
    ([raw(), None], None, "the sandbox's wall deadline passed"),
    ([raw(), raw(), None], None, "the sandbox's wall deadline passed"),
    ([raw(), raw(), raw(), None], None, "the sandbox's wall deadline passed"),
    ([None], "memory", "the sandbox was killed at its memory limit"),
    ([raw(), raw(), None], "memory", "the sandbox was killed at its memory limit"),
])
def test_a_sandbox_the_submission_ended_withholds_the_evaluator(
        answers: list[RawExec | None], ended_by: str | None, why: str) -> None:
    """The clock or the memory ran out before or while the evaluator ran: the candidate's
    loss (scored 0), never the pack's error."""
    record = run(Conduit(answers, ended_by=ended_by))
    assert record.error == "" and not record.timed_out
    assert record.stderr == f"[evalfleet] the evaluator did not run: {why}"
    assert scored(record)[0] == 0.0


def test_a_silent_failure_names_its_exit_code() -> None:
    record = run(Conduit([raw(), raw(97)]))
    assert record.error == "could not prepare the evaluator: exit code 97"
