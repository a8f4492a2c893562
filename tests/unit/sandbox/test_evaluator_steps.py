"""The evaluator's preparation on the host side, against a recording conduit: the judge
clears first, then the candidate seals; a step that fails keeps the evaluator from
running, with the step's reason (the engine tests are tests/integration/clawdiators)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandbox.docker import evaluator
from sandbox.docker.stream import ExecRequest, RawExec
from sandbox.evaluator import EvaluatorRun
from sandbox.profile import Profile

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

    def detach_networks(self) -> None:
        pass

    def run(self, request: ExecRequest, on_limit: Any) -> RawExec | None:
        self.sent.append(request)
        return self.answers.pop(0)


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


def test_a_link_left_over_keeps_the_evaluator_from_running() -> None:
    """The seal's check found a link: no evaluator, and the reason says which."""
    left = b"a special file could not be removed: /workspace/answer.json\n"
    conduit = Conduit([raw(), raw(1, left)])
    record = evaluator.run(conduit, SPEC)  # type: ignore[arg-type]
    assert len(conduit.sent) == 2 and record.exit_code is None
    assert record.error == ("could not prepare the evaluator: a special file could not be removed: "
                            "/workspace/answer.json")


def test_a_clear_cut_short_by_the_deadline_says_so() -> None:
    record = evaluator.run(Conduit([None]), SPEC)  # type: ignore[arg-type]
    assert record.error == "could not prepare the evaluator: sandbox deadline exceeded"


def test_a_silent_failure_names_its_exit_code() -> None:
    record = evaluator.run(Conduit([raw(), raw(97)]), SPEC)  # type: ignore[arg-type]
    assert record.error == "could not prepare the evaluator: exit code 97"
