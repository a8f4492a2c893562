"""The evaluator's preparation on the host side, against a recording conduit: the judge
clears first, then the candidate seals; a step that fails keeps the evaluator from
running, with the step's reason (the engine tests are tests/integration/clawdiators). What
the submission caused (the sandbox ended by its limits, something it left that could not
be removed) withholds the evaluator, and every dimension of it scores 0."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from evalfleet.sandbox.docker import evaluator
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec
from evalfleet.sandbox.evaluator import EvaluatorRun
from evalfleet.sandbox.profile import Profile
from evalfleet.scoring.clawdiators.script import script_score

SPEC = EvaluatorRun(runtime="python", script="print('{}')")


def raw(exit_code: int | None = 0, stderr: bytes = b"") -> RawExec:
    return RawExec(exit_code, b"", stderr, False, False, False, 0.01)


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


def scored(record: Any) -> tuple[float | None, str]:
    """The dimension score a record gives (scale 100)."""
    found = script_score(asdict(record), "k", 100)
    return found.score, found.reason


def test_the_judge_clears_then_the_candidate_seals_then_the_evaluator_runs() -> None:
    conduit = Conduit([raw(), raw(), raw()])
    record = evaluator.run(conduit, SPEC)  # type: ignore[arg-type]
    hardening = conduit.profile.hardening
    assert [r.user for r in conduit.sent] == [hardening.judge_user, hardening.user,
                                              evaluator.user(hardening)]
    assert [r.stop_first for r in conduit.sent[:2]] == [True, True]
    assert record.exit_code == 0 and record.error == ""
    home = conduit.sent[2].env["HOME"]
    assert home.startswith("/tmp/.evaluator-") and home.endswith("/home")
    assert conduit.sent[2].env["TMPDIR"] == home
    assert conduit.sent[2].env["PYTHONNOUSERSITE"] == "1"


def test_a_link_left_over_withholds_the_evaluator() -> None:
    """The seal's check found a link the submission left: no evaluator, the reason says
    which, and the dimension scores 0 (not the pack's error: no contest)."""
    left = b"a special file could not be removed: /workspace/answer.json\n"
    conduit = Conduit([raw(), raw(evaluator.LEFT_OVER, left)])
    record = evaluator.run(conduit, SPEC)  # type: ignore[arg-type]
    assert len(conduit.sent) == 2 and record.exit_code is None and record.error == ""
    assert record.stderr == ("[evalfleet] the evaluator did not run: a special file could not "
                             "be removed: /workspace/answer.json")
    score, reason = scored(record)
    assert score == 0.0 and "a special file could not be removed" in reason


@pytest.mark.parametrize(("answers", "ended_by", "why"), [
    ([None], None, "the sandbox's wall deadline passed"),
    ([raw(), None], None, "the sandbox's wall deadline passed"),
    ([raw(), raw(), None], None, "the sandbox's wall deadline passed"),
    ([None], "memory", "the sandbox was killed at its memory limit"),
    ([raw(), raw(), None], "memory", "the sandbox was killed at its memory limit"),
])
def test_a_sandbox_the_submission_ended_withholds_the_evaluator(
        answers: list[RawExec | None], ended_by: str | None, why: str) -> None:
    """The clock or the memory ran out before or while the evaluator ran: the candidate's
    loss (scored 0), never the pack's error."""
    record = evaluator.run(Conduit(answers, ended_by=ended_by), SPEC)  # type: ignore[arg-type]
    assert record.error == "" and not record.timed_out
    assert record.stderr == f"[evalfleet] the evaluator did not run: {why}"
    assert scored(record)[0] == 0.0


def test_a_silent_failure_names_its_exit_code() -> None:
    record = evaluator.run(Conduit([raw(), raw(97)]), SPEC)  # type: ignore[arg-type]
    assert record.error == "could not prepare the evaluator: exit code 97"
