"""The forgery battery: submissions that implement nothing and try to win anyway.

Agents that optimise for a score find these (issue 21): each forgery is built against the
pack's own names — its deliverables (or, for a pack without, the files its tests run next
to), its hidden test files, its listed directories — and submitted like any run. A forgery
**wins** when its run does not lose, or when any ``code_execution`` validator passes for it;
a shape that could void its run (:mod:`.shapes`) wins when it ends as
anything but a scored loss, a refusal included. A pack whose tests run in the judge's clean
room, never import the candidate's code and take their verdict from the judge's own report
resists all of them (docs/packs.md, "Packs that cannot be gamed").

The battery is a registry of builders (:data:`FORGERIES`); :func:`battery` builds every one
for a pack and :func:`wins` reads a result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evalfleet.scoring import Case, Pack

from ...evaluation.packs import sandbox_block
from ...messages import RunResult, Submission
from .fleet import FLEET
from .frameworks import FRAMEWORKS
from .kit import Builder, Forgery, Target, relative
from .memory import FORGERIES as MEMORY
from .shapes import SHAPES

__all__ = ["FORGERIES", "Forgery", "Target", "battery", "exposure", "refused", "target", "wins"]


def target(pack: Pack, reference: Submission | None = None,
           case: Case | None = None) -> Target:
    """The pack's deliverables (or the files its tests target), hidden test files, the
    answers and scores of its evaluator, its tests and its listed directories; with the
    reference submission's deliverables and the visible values of ``case`` when given."""
    block = sandbox_block(pack)
    named = tuple(block.deliverables) or tuple(
        check.path for v in pack.spec.validators if v.type == "code_execution"
        for check in [pack.spec.check(v.target.removeprefix("file:").strip())]
        if check is not None)
    claws = pack.spec.clawdiators
    answers = [path for check in (claws.submission_checks if claws else ())
               if check.type == "required_files" for path in check.paths]
    return Target(deliverables=tuple(relative(p) for p in named),
                  test_files=tuple(relative(p) for p in block.test_files),
                  answers=tuple(relative(p) for p in answers),
                  scores=tuple(d.score_key or d.key for d in pack.spec.scorecard.dimensions
                               if d.source == "script"),
                  tests=tuple(v.key for v in pack.spec.validators if v.type == "code_execution"),
                  listings=tuple(c.path for c in pack.spec.post_execution_checks
                                 if c.type == "directory_listing"),
                  reference=_texts(reference, named), visible=tuple(_scalars(case)))


def _texts(reference: Submission | None, named: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The reference's files at the deliverables' paths that are text."""
    files = reference.files if reference else {}
    wanted = {relative(p) for p in named}
    return tuple((relative(path), text) for path, given in files.items()
                 if relative(path) in wanted
                 for text in [given if isinstance(given, str) else _text(given.data())]
                 if text is not None)


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scalars(case: Case | None) -> Iterator[str]:
    """Every scalar the agent sees in ``case`` (payload, inputs), as text."""
    if case is None:
        return
    stack: list[object] = [case.payload_value(), *(e.value for e in case.inputs)]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif value is not None:
            yield str(value)


def battery(pack: Pack, reference: Submission | None = None,
            case: Case | None = None) -> list[Forgery]:
    """Every forgery of :data:`FORGERIES` built against ``pack`` (those needing a reference
    only with one: :mod:`tasks.checking.forgeries.memory`)."""
    aim = target(pack, reference, case)
    return [forgery for build in FORGERIES.values() if (forgery := build(aim)) is not None]


def exposure(pack: Pack) -> list[str]:
    """How the verdict of the pack's ``code_execution`` validators could be forged: one
    line (field, then why) per weakness; none for a clean-room pack with reports whose
    tests do not import the deliverables."""
    block = sandbox_block(pack)
    tests = [v.key for v in pack.spec.validators if v.type == "code_execution"]
    found = []
    if tests and not block.deliverables:
        found.append(f"pack.version.sandbox.deliverables is not set: the tests of "
                     f"{', '.join(tests)} run next to the submission's files, which can "
                     f"forge their verdict (docs/packs.md, \"Packs that cannot be gamed\")")
    if tests and block.deliverables and block.imports_deliverables:
        found.append("pack.version.sandbox.imports_deliverables is set: the candidate's code "
                     "runs in the tests' process, where it can forge their verdict unless "
                     "the tests resist it (evalfleet check's battery shows whether they do; "
                     "docs/forgeries.md)")
    found += [f"pack.version.sandbox.reports.{key} is not set: its verdict is the test's "
              f"output or exit code, not the judge's own report" for key in tests
              if key not in block.reports]
    found += [f"evaluation_spec.validators[{index}] ({decl.key}) {why}"
              for index, decl in enumerate(pack.spec.validators)
              if (why := absence_passes(decl.type, decl.config))]
    return found


def absence_passes(kind: str, config: Any) -> str:
    """Why a validator that passes on what is *absent* from a capture can be made to pass
    by padding (``""`` for any other): a capture is cut at its caps, and validators see
    only what is left (AgentClash's capture rules, docs/scoring.md §7.2). A listing that is
    not whole (cut at its cap, entries left out, failed) fails ``forbidden_files`` instead
    (evalfleet's rule, §5.18)."""
    config = config if isinstance(config, dict) else {}
    if (kind, config.get("match_mode")) == ("file_content_match", "not_contains") or (
            (kind, config.get("condition")) == ("postcondition", "not_contains")):
        return ("passes while its text is not in the capture, and a capture is cut at its "
                "cap (1 MiB a file, 10 MiB a run, charged by full size in declaration "
                "order): declare this capture first, with max_size_bytes above any honest "
                "file, or a submission that pads the file or the captures before it hides "
                "the text")
    return ""


def wins(result: RunResult, *, must_lose: bool = False) -> bool:
    """Whether a forgery's run did not lose, or any ``code_execution`` passed for it (a
    run refused for what its submission holds did neither, unless the forgery
    ``must_lose``: then a refusal too is a void its candidate chose)."""
    card = result.scorecard
    if refused(result) and not must_lose:
        return False  # the submission itself was refused: no verdict came of it
    if result.outcome != "scored" or card is None:
        return True  # "no result" instead of a loss is a win for a losing submission
    passed = any(v.type == "code_execution" and v.verdict == "pass"
                 for v in card.validator_details)
    return card.result != "loss" or passed


def refused(result: RunResult) -> bool:
    """Whether the fleet refused the run for what its submission holds (every problem in
    ``request.submission``): the forgery met the intake, not the pack."""
    return result.outcome == "rejected" and bool(result.errors) and all(
        e.field.startswith("request.submission") for e in result.errors)


#: Every forgery of the battery, by name (registry order is the report's order): those aimed
#: at the tests (:mod:`.frameworks`), those that know the answers (:mod:`.memory`), the
#: fleet's (:mod:`.fleet`), and the shapes that must lose (:mod:`.shapes`).
FORGERIES: dict[str, Builder] = {**FRAMEWORKS, **MEMORY, **FLEET, **SHAPES}
