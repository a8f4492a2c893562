"""The sections of ``evalfleet check``: an explicit registry, one class per question.

Each section may ask for :class:`~tasks.checking.subject.Trial`\\ s (submissions to run on a
case, ``repeats`` times) and then judges the runs of every trial of the case into a
:class:`~tasks.checking.report.SectionReport`. Sections asking for the same trial label
share its runs: the reference runs once per index however many sections read it.

Adding a section is adding a class and a line to :data:`SECTIONS`. The forgery battery is
one: its ``trials`` build hostile submissions against the pack's own names
(:mod:`.forgeries.battery`), one :class:`Trial` each (label ``forgery:<name>``), and its
``judge`` lists the forgeries that win. It is not core (it does not decide soundness); its
verdict is recorded per section key in the fleet's preflight record, where an operator may
require it separately (:class:`.preflight.PreflightGate` ``required``), and
``evalfleet check`` exits non-zero when it fails.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import ClassVar, Final

from evalfleet.scoring.record import event_types

from ..evaluation.packs import sandbox_block
from ..messages import RunResult, Submission
from . import leaks, readings
from .forgeries.battery import Forgery, battery, refused, wins
from .report import Level, SectionReport
from .subject import Subject, Trial

Runs = Mapping[str, Sequence[RunResult]]
REFERENCE: Final = "reference"
EMPTY: Final = "empty"
#: The share of its wall limit past which the slowest reference run earns a warning.
HEADROOM: Final = 0.5


class Section:
    """One question the check answers about each case (override what you need)."""

    key: ClassVar[str]
    title: ClassVar[str]
    core: ClassVar[bool] = True
    """Whether the section decides the pack's soundness (and the command's exit)."""

    def trials(self, subject: Subject) -> list[Trial]:
        """The submissions this section needs run on ``subject`` (none by default)."""
        return []

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        """The section's report on ``subject`` from the runs of every trial."""
        raise NotImplementedError

    def report(self, *columns: str) -> SectionReport:
        return SectionReport(key=self.key, title=self.title, core=self.core,
                             columns=list(columns))


#: A run of the check: its trial's label and its index in the trial (1 …).
RunTag = tuple[str, int]


def tally(report: SectionReport, level: Level, found: Sequence[tuple[str, RunTag]],
          total: int) -> None:
    """Add one finding per distinct message, naming the runs it came from."""
    tags: dict[str, list[RunTag]] = {}
    for message, tag in found:
        tags.setdefault(message, []).append(tag)
    for message, where in tags.items():
        report.add(level, f"{message} ({_runs(where, total)})")


def _runs(tags: Sequence[RunTag], total: int) -> str:
    """``all 6 runs``, or per trial: ``reference 1-3, 5; empty 1``."""
    if len(tags) == total > 1:
        return f"all {total} runs"
    by_label: dict[str, list[int]] = {}
    for label, index in tags:
        by_label.setdefault(label, []).append(index)
    return "; ".join(f"{label} {_spans(indexes)}" for label, indexes in by_label.items())


def _spans(indexes: Sequence[int]) -> str:
    spans: list[list[int]] = []
    for index in sorted(indexes):
        if spans and index == spans[-1][-1] + 1:
            spans[-1].append(index)
        else:
            spans.append([index])
    return ", ".join(f"{s[0]}-{s[-1]}" if len(s) > 2 else ", ".join(map(str, s))
                     for s in spans)


def _card_line(result: RunResult) -> str:
    card = result.scorecard
    if result.outcome != "scored" or card is None:
        return f"ended {result.outcome}: {result.reason}".rstrip(": ")
    score = "-" if card.score is None else card.score
    return (f"{score}/1000 {card.result or 'no contest'} ({card.validity}): "
            f"{card.overall_reason}").rstrip(": ")


def _row(result: RunResult) -> list[object]:
    card = result.scorecard
    seconds = readings.seconds(result)
    return [result.outcome, card.score if card else None,
            (card.result or "no contest") if card else None, card.validity if card else None,
            None if seconds is None else round(seconds, 2)]


class ReferenceWins(Section):
    """The reference submission must win every one of its runs."""

    key = "reference"
    title = "The reference submission wins every run"

    def trials(self, subject: Subject) -> list[Trial]:
        return [Trial(REFERENCE, subject.reference, subject.runs)]

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = self.report("run", "outcome", "score", "result", "validity", "seconds")
        results = runs.get(REFERENCE, [])
        degraded: list[tuple[str, RunTag]] = []
        for index, result in enumerate(results, 1):
            report.rows.append([index, *_row(result)])
            card = result.scorecard
            if card is None or card.result != "win":
                report.add("error", f"run {index}: {_card_line(result)}")
            elif card.validity != "valid":
                degraded.append((f"{card.validity}: {card.validity_reason}", ("run", index)))
        tally(report, "warning", degraded, len(results))
        if not results:
            report.add("error", "the reference never ran")
        return report


class Flakiness(Section):
    """Every validator and hidden test must give the same verdict in every reference run."""

    key = "flaky"
    title = "Validators and hidden tests agree across the reference runs"

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = self.report("kind", "name", "verdict per run")
        scored = [r for r in runs.get(REFERENCE, []) if r.outcome == "scored"]
        if len(scored) < 2:
            report.add("info", "fewer than two scored reference runs: nothing to compare")
            return report
        kinds = {"validator": readings.validator_verdicts,
                 "hidden test": readings.hidden_test_verdicts}
        compared = 0
        for kind, read in kinds.items():
            seen = [read(result) for result in scored]
            for name in dict.fromkeys(k for verdicts in seen for k in verdicts):
                compared += 1
                series = [verdicts.get(name, "absent") for verdicts in seen]
                if len(set(series)) > 1:
                    report.rows.append([kind, name, " | ".join(series)])
                    report.add("error", f"{kind} {name} varies across runs: "
                                        + ", ".join(series))
        if report.passed:
            report.add("info", f"{compared} verdicts identical in {len(scored)} runs")
        return report


class EmptyLoses(Section):
    """A submission that delivers nothing must lose; what it passes is worth a look."""

    key = "empty"
    title = "The empty submission loses"

    def trials(self, subject: Subject) -> list[Trial]:
        return [Trial(EMPTY, Submission(), 1)]

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = self.report("outcome", "score", "result", "validity", "seconds")
        for result in runs.get(EMPTY, []):
            report.rows.append(_row(result))
            card = result.scorecard
            if card is None or card.result != "loss":
                hint = (" (no contest is not a loss: gate the score on a validator the empty "
                        "submission fails, e.g. a hybrid gate)"
                        if card is not None and card.result is None else "")
                report.add("error", f"the empty submission does not lose: "
                                    f"{_card_line(result)}{hint}")
            for detail in card.validator_details if card else []:
                if detail.verdict == "pass":
                    report.add("warning", f"validator {detail.key} ({detail.type}) passes "
                                          "the empty submission")
        return report


class Environment(Section):
    """Failures that are the environment's, not a candidate's: setup commands, missing
    tools, timeouts, limits the reference hits, runs that never got scored."""

    key = "environment"
    title = "No environmental failures"

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = self.report()
        found: list[tuple[str, RunTag]] = []
        total = sum(1 for label, results in runs.items() for result in results
                    if not _ended_at_its_submission(label, result))
        for label, results in runs.items():
            for index, result in enumerate(results, 1):
                found += [(problem, (label, index))
                          for problem in self._problems(subject, label, result)]
        tally(report, "error", found, total)
        if report.passed:
            report.add("info", f"no setup, tool, timeout or limit problem in {total} runs")
        return report

    @staticmethod
    def _problems(subject: Subject, label: str, result: RunResult) -> list[str]:
        if _ended_at_its_submission(label, result):
            return []  # the forgery never met the pack's environment
        if result.outcome != "scored":
            return [f"the run ended {result.outcome}: {result.reason}"]
        fault = readings.pack_fault(result)  # it names a failed setup command itself
        problems = ([fault] if fault else
                    readings.setup_failures(result, len(subject.block.setup_commands)))
        if label != REFERENCE:  # what the candidate's own runs trip over is theirs
            return problems
        problems += readings.missing_tools(result, len(subject.block.setup_commands))
        problems += [p for p in map(readings.hidden_test_problem,
                                    readings.payloads(result, event_types.CODE_EXECUTED)) if p]
        problems += [f"the reference hit a limit: {hit}" for hit in readings.limits_hit(result)]
        failed = readings.evaluator_failure(result)
        return [*problems, failed] if failed else problems


def _ended_at_its_submission(label: str, result: RunResult) -> bool:
    """Whether a forgery's run ended at what its submission holds, before the pack's
    environment: refused at the intake, or files the sandbox could not hold."""
    return label.startswith(FORGERY) and (refused(result) or readings.files_refused(result))


def _hidden_tests(subject: Subject) -> dict[str, str]:
    """The pack's test files (path → source) that are text."""
    files = sandbox_block(subject.pack).test_files
    return {path: spec if isinstance(spec, str) else spec.data().decode(errors="replace")
            for path, spec in files.items()}


class Timing(Section):
    """How long the runs took (a note, never a failure): min, median and max per trial."""

    key = "timing"
    title = "Run time spread"
    core = False

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = self.report("submission", "runs", "min s", "median s", "max s")
        for label, results in runs.items():
            times = [s for s in map(readings.seconds, results) if s is not None]
            if times:
                report.rows.append([label, len(times), round(min(times), 2),
                                    round(statistics.median(times), 2), round(max(times), 2)])
        self._headroom(report, runs.get(REFERENCE, []))
        return report

    @staticmethod
    def _headroom(report: SectionReport, results: Sequence[RunResult]) -> None:
        for result in results:
            wall = (result.resources.get("limits") or {}).get("wall_timeout_s")
            took = readings.seconds(result)
            if wall and took is not None and took > HEADROOM * wall:
                report.add("warning", f"a reference run took {took:.1f} s of its {wall:.0f} s "
                                      "wall limit: little headroom")
                return


class Forgeries(Section):
    """The forgery battery (:mod:`.forgeries.battery`): submissions that implement nothing
    and try to win anyway, built against the pack's own deliverable and test names. A
    forgery wins when its run does not lose or any ``code_execution`` passes for it; one of
    the shapes that must lose (:mod:`.forgeries.shapes`) wins when its run ends as
    anything but a scored loss, refused at the intake included.

    Not core: whether the fleet requires it is the operator's separate choice
    (``EVALFLEET_PREFLIGHT__SECTIONS='["forgeries"]'``); ``evalfleet check`` still exits
    non-zero when any forgery wins.
    """

    key = "forgeries"
    title = "No forgery wins"
    core = False

    def trials(self, subject: Subject) -> list[Trial]:
        return [Trial(f"{FORGERY}{f.name}", f.submission, 1) for f in _battery(subject)]

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = self.report("forgery", "outcome", "score", "result", "wins")
        built = {f.name: f for f in _battery(subject)}
        for label, results in runs.items():
            name = label.removeprefix(FORGERY)
            if not label.startswith(FORGERY) or not results:
                continue
            forgery = built.get(name)
            won = wins(results[0], must_lose=forgery is not None and forgery.must_lose)
            report.rows.append([name, *_row(results[0])[:3], won])
            if won:
                report.add("error", f"forgery {name!r} ({forgery.tries if forgery else '?'}) "
                                    f"wins: {_card_line(results[0])}")
                if forgery is not None and forgery.means:
                    report.add("error", f"forgery {name!r} wins: {forgery.means}")
            for path in leaks.leaked(_hidden_tests(subject), results[0]):
                report.add("error", f"{leaks.LEAK}{name!r}: {path}")
        if report.passed:
            report.add("info", f"none of {len(built)} forgeries wins, and no hidden test "
                               f"reaches a result")
        return report


def _battery(subject: Subject) -> list[Forgery]:
    """The battery for one case: against the pack, its reference and the case."""
    return battery(subject.pack, subject.reference, subject.case)


#: Trial labels of the forgery battery.
FORGERY: Final = "forgery:"

#: Every section, in report order.
SECTIONS: tuple[Section, ...] = (ReferenceWins(), Flakiness(), EmptyLoses(), Environment(),
                                 Forgeries(), Timing())
