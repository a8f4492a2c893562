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

import posixpath
import textwrap
from collections.abc import Iterator
from typing import Any

from evalfleet.scoring import Case, Pack

from ...evaluation.packs import sandbox_block
from ...messages import RunResult, Submission
from .fleet import FLEET
from .kit import PASS_LINE, Builder, Forgery, Target, planted, relative, submission
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


def _pytest_hook(aim: Target) -> Forgery:
    hook = textwrap.dedent("""\
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome, report.longrepr = "passed", None
        """)
    return Forgery("pytest hook", "a conftest.py that rewrites every test report to passed",
                   submission(planted(aim, **{"conftest.py": hook})))


def _shadowed_runner(aim: Target) -> Forgery:
    runner = f"print({PASS_LINE!r})\nraise SystemExit(0)\n"
    return Forgery("shadowed runner", "a pytest.py that prints a pass line and exits 0",
                   submission(planted(aim, **{"pytest.py": runner})))


def _config_plugin(aim: Target) -> Forgery:
    ini = "[pytest]\naddopts = -p forge\npythonpath = .\n"
    plugin = ("def pytest_collection_modifyitems(items):\n"
              "    for item in items:\n"
              "        item.obj = lambda *a, **k: None\n")
    return Forgery("config plugin", "a pytest.ini that loads the candidate's plugin",
                   submission(planted(aim, **{"pytest.ini": ini, "forge.py": plugin})))


def _exit_on_import(aim: Target) -> Forgery:
    code = f"import os, sys\nprint({PASS_LINE!r}, flush=True)\nos._exit(0)\n"
    return Forgery("exit on import", "the deliverable prints a pass line and exits 0 when run",
                   submission(planted(aim, code)))


def _fake_counts(aim: Target) -> Forgery:
    code = (f"import sys\nprint({PASS_LINE!r})\nprint('OK (tests=3)')\n"
            "print('{\"passed\": 3, \"failed\": 0, \"total\": 3}')\n")
    return Forgery("fake counts", "the candidate's program prints test counts",
                   submission(planted(aim, code), "python3 " + " ".join(
                       p for p in aim.deliverables if p.endswith(".py")) or "true"))


def _output_flood(aim: Target) -> Forgery:
    code = textwrap.dedent(f"""\
        import os
        lines = ({PASS_LINE!r} + "\\n").encode() * 4096
        for _ in range(1024):
            try:
                os.write(1, lines)
                os.write(2, lines)
            except OSError:
                break
        os._exit(0)
        """)
    return Forgery("output flood", "the deliverable floods stdout and stderr with pass lines "
                   "far past the output cap, so that the run is voided or miscounted",
                   submission(planted(aim, code), _run_deliverables(aim)))


def _run_deliverables(aim: Target) -> str:
    """A command running every Python deliverable (``true`` when there is none)."""
    return " ; ".join(f"python3 '{p}'" for p in aim.deliverables if p.endswith(".py")) \
        or "true"


def _shadowed_stdlib(aim: Target) -> Forgery:
    evil = f"import os\nprint({PASS_LINE!r}, flush=True)\nos._exit(0)\n"
    files = {name: evil for name in ("json.py", "pathlib.py", "unittest.py", "re.py")}
    return Forgery("shadowed stdlib", "json.py, pathlib.py, ... that end the test run",
                   submission(planted(aim, **files)))


def _planted_pycache(aim: Target) -> Forgery:
    """Bytecode that Python loads without looking at the source (``UNCHECKED_HASH``), at
    the cache path of each hidden test, for a test imported as a module (``unittest``, a
    plain ``import``); pytest keeps its own cache and ignores it."""
    forged = ("import unittest\n\n\ndef test_forged():\n    pass\n\n\n"
              "class TestForged(unittest.TestCase):\n    def test_forged(self):\n"
              "        pass\n")
    compile_all = textwrap.dedent(f"""\
        import importlib.util, py_compile
        for test in {[t for t in aim.test_files if t.endswith(".py")]!r}:
            py_compile.compile("forged.py", cfile=importlib.util.cache_from_source(test),
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        """)
    return Forgery("planted __pycache__", "bytecode for the hidden test names, compiled "
                   "from a test that passes and loaded without a look at the source",
                   submission(planted(aim, **{"forged.py": forged, "plant.py": compile_all}),
                               "python3 plant.py"))


def _startup_hooks(aim: Target) -> Forgery:
    hook = f"import os\nprint({PASS_LINE!r}, flush=True)\nos._exit(0)\n"
    files = {"sitecustomize.py": hook, "usercustomize.py": hook,
             "evil.pth": "import os; print('3 passed'); os._exit(0)\n"}
    return Forgery("start-up hooks", "sitecustomize.py, usercustomize.py and a .pth",
                   submission(planted(aim, **files)))


def _blocked_seeding(aim: Target) -> Forgery:
    blocks = " && ".join(f"mkdir -p '{t}/x'" for t in aim.test_files) or "true"
    links = " ; ".join(f"ln -s /dev/null '{t}.link'" for t in aim.test_files) or "true"
    return Forgery("blocked seeding", "a directory (and links) planted at the hidden test "
                   "files' paths", submission(planted(aim), f"{blocks}; {links}; true"))


def _waiting_process(aim: Target) -> Forgery:
    daemon = textwrap.dedent(f"""\
        import os, time
        if os.fork() == 0:
            os.setsid()
            for _ in range(2000):
                for name in os.listdir('.'):
                    if name.endswith(('.xml', '.py')) and 'test' in name:
                        try:
                            open(name, 'w').write({PASS_LINE!r})
                        except OSError:
                            pass
                time.sleep(0.01)
        """)
    return Forgery("waiting process", "a background process that waits for the tests and "
                   "rewrites what they read", submission(
                       planted(aim, **{"daemon.py": daemon}), "python3 daemon.py"))


def _monkeypatch(aim: Target) -> Forgery:
    """Patches what the frameworks call for each test, on their classes: rebinding
    ``_pytest.runner.pytest_runtest_call`` (this forgery until issue 39) changed nothing,
    since pluggy keeps the function it registered."""
    code = textwrap.dedent("""\
        try:
            import _pytest.python
            _pytest.python.Function.runtest = lambda self: None
        except Exception:
            pass
        import unittest
        unittest.TestCase.run = lambda self, result=None: result

        def __getattr__(name):
            return lambda *args, **kwargs: []
        """)
    return Forgery("framework monkeypatch", "the deliverable, when imported, makes every "
                   "pytest test and unittest case a no-op", submission(planted(aim, code)))


def _always_equal(aim: Target) -> Forgery:
    """Whatever the test asks of the deliverable is one object, equal to everything (a
    ``str``, so that type checks pass too)."""
    code = textwrap.dedent("""\
        class _Anything(str):
            def __eq__(self, other):
                return True

            def __ne__(self, other):
                return False

            __hash__ = str.__hash__

            def __getitem__(self, key):
                return self

            def __getattr__(self, name):
                return self

            def __call__(self, *args, **kwargs):
                return self


        ANYTHING = _Anything()


        def __getattr__(name):
            return ANYTHING
        """)
    return Forgery("always equal", "every name of the deliverable returns one object whose "
                   "comparisons always succeed (a str subclass)", submission(planted(aim, code)))


def _registered_plugin(aim: Target) -> Forgery:
    """A plugin registered with the running pytest's plugin manager when the deliverable
    is imported (no ``conftest.py``, no configuration file): it rewrites every later report
    to passed, before the terminal and the JUnit report read it."""
    code = textwrap.dedent("""\
        import gc


        class _Passing:
            def pytest_runtest_logreport(self, report):
                report.outcome, report.longrepr = "passed", None


        try:
            from _pytest.config import Config
        except ImportError:
            Config = None
        for found in (gc.get_objects() if Config else ()):
            if isinstance(found, Config):
                found.pluginmanager.register(_Passing(), "forged-reports")
                break


        def __getattr__(name):
            return lambda *args, **kwargs: []
        """)
    return Forgery("registered plugin", "the deliverable registers a pytest plugin through "
                   "the running plugin manager when imported, rewriting every report to "
                   "passed", submission(planted(aim, code)))


def _test_leak(aim: Target) -> Forgery:
    """Prints every hidden test file it can read, when imported and when called: from the
    workspace (tests written next to the candidate's files), from the tests' directory (a
    test that imports it, in the judge's process). Its run loses; what it prints must not
    reach the result (``evalfleet check`` reads every forgery's result for the tests)."""
    code = textwrap.dedent(f"""\
        import os

        _NAMES = {[posixpath.basename(t) for t in aim.test_files] + list(aim.test_files)!r}


        def _leak():
            roots = {{os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "/workspace",
                      os.environ.get("TESTS", "/judge/tests")}}
            for path in sorted({{os.path.join(r, n) for r in roots for n in _NAMES}}):
                try:
                    text = open(path, "rb").read()
                except OSError:
                    continue
                for fd in (1, 2):
                    os.write(fd, text)


        _leak()


        def __getattr__(name):
            def leaking(*args, **kwargs):
                _leak()
                return []
            return leaking
        """)
    return Forgery("test leak", "the deliverable prints every hidden test file it can read, "
                   "so that the result hands the tests to the next submission",
                   submission(planted(aim, code), _run_deliverables(aim)))


def _unwritable_deliverable(aim: Target) -> Forgery:
    first = (aim.deliverables or ("deliverable",))[0]
    deep = textwrap.dedent(f"""\
        import os
        os.makedirs({first!r}, exist_ok=True)
        os.chdir({first!r})
        for _ in range(24):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        open("f", "w").write("x")
        """)
    return Forgery("unwritable deliverable", "a deliverable nested past PATH_MAX, which the "
                   "judge's room cannot hold, so that the run ends as the fleet's failure",
                   submission({**{k: v for k, v in planted(aim).items() if k != first},
                                "deep.py": deep}, "python3 deep.py"))


#: Every forgery of the battery, by name (registry order is the report's order): the test
#: frameworks' here, then those that know the answers (:mod:`.memory`), the fleet's
#: (:mod:`.fleet`), and the shapes that must lose (:mod:`.shapes`).
FORGERIES: dict[str, Builder] = {
    "pytest hook": _pytest_hook,
    "shadowed runner": _shadowed_runner,
    "config plugin": _config_plugin,
    "exit on import": _exit_on_import,
    "fake counts": _fake_counts,
    "output flood": _output_flood,
    "shadowed stdlib": _shadowed_stdlib,
    "planted __pycache__": _planted_pycache,
    "start-up hooks": _startup_hooks,
    "blocked seeding": _blocked_seeding,
    "waiting process": _waiting_process,
    "framework monkeypatch": _monkeypatch,
    "always equal": _always_equal,
    "registered plugin": _registered_plugin,
    "test leak": _test_leak,
    "unwritable deliverable": _unwritable_deliverable,
    **MEMORY,
    **FLEET,
    **SHAPES,
}
