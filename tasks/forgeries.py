"""The forgery battery: submissions that implement nothing and try to win anyway.

Agents that optimise for a score find these (issue 21): each forgery is built against the
pack's own names — its deliverables (or, for a pack without, the files its tests run next
to) and its hidden test files — and submitted like any run. A forgery **wins** when its run
does not lose, or when any ``code_execution`` validator passes for it. A pack whose tests
run in the judge's clean room, never import the candidate's code and take their verdict
from the judge's own report resists all of them (README, "Packs that cannot be gamed").

The battery is a registry of builders (:data:`FORGERIES`); :func:`battery` builds every one
for a pack and :func:`wins` reads a result.
"""

from __future__ import annotations

import json
import posixpath
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring import Pack

from .messages import RunResult, Submission
from .packs import sandbox_block

#: Every forged deliverable: any name imported from it exists and does nothing (a module
#: ``__getattr__``), so the tests get as far as running and fail, as a wrong answer would.
NOTHING = "def __getattr__(name):\n    return lambda *args, **kwargs: []\n"
PASS_LINE = "3 passed in 0.01s"


@dataclass(frozen=True)
class Target:
    """The names a forgery aims at."""

    deliverables: tuple[str, ...]
    test_files: tuple[str, ...]
    answers: tuple[str, ...] = ()
    """The files a custom-script evaluator reads (the ``required_files`` of its checks)."""
    scores: tuple[str, ...] = ()
    """The keys of the evaluator's ``scores`` the scorecard takes."""
    tests: tuple[str, ...] = ()
    """The keys of the pack's ``code_execution`` validators."""

    @property
    def module(self) -> str:
        """The first Python deliverable's module name ("" when there is none)."""
        for path in self.deliverables:
            if path.endswith(".py"):
                return posixpath.basename(path)[:-3]
        return ""


@dataclass(frozen=True)
class Forgery:
    """One hostile submission and what it tries."""

    name: str
    tries: str
    submission: Submission


Builder = Callable[[Target], Forgery]


def target(pack: Pack) -> Target:
    """The pack's deliverables (or the files its tests target) and hidden test files."""
    block = sandbox_block(pack)
    named = tuple(block.deliverables) or tuple(
        check.path for v in pack.spec.validators if v.type == "code_execution"
        for check in [pack.spec.check(v.target.removeprefix("file:").strip())]
        if check is not None)
    claws = pack.spec.clawdiators
    answers = [path for check in (claws.submission_checks if claws else ())
               if check.type == "required_files" for path in check.paths]
    return Target(deliverables=tuple(_relative(p) for p in named),
                  test_files=tuple(_relative(p) for p in block.test_files),
                  answers=tuple(_relative(p) for p in answers),
                  scores=tuple(d.score_key or d.key for d in pack.spec.scorecard.dimensions
                               if d.source == "script"),
                  tests=tuple(v.key for v in pack.spec.validators if v.type == "code_execution"))


def battery(pack: Pack) -> list[Forgery]:
    """Every forgery of :data:`FORGERIES`, built against ``pack``."""
    aim = target(pack)
    return [build(aim) for build in FORGERIES.values()]


def exposure(pack: Pack) -> list[str]:
    """How the verdict of the pack's ``code_execution`` validators could be forged: one
    line (field, then why) per weakness; none for a clean-room pack with reports."""
    block = sandbox_block(pack)
    tests = [v.key for v in pack.spec.validators if v.type == "code_execution"]
    found = []
    if tests and not block.deliverables:
        found.append(f"pack.version.sandbox.deliverables is not set: the tests of "
                     f"{', '.join(tests)} run next to the submission's files, which can "
                     f"forge their verdict (README, \"Packs that cannot be gamed\")")
    found += [f"pack.version.sandbox.reports.{key} is not set: its verdict is the test's "
              f"output or exit code, not the judge's own report" for key in tests
              if key not in block.reports]
    return found


def wins(result: RunResult) -> bool:
    """Whether a forgery's run did not lose, or any ``code_execution`` passed for it (a
    run refused for what its submission holds did neither)."""
    card = result.scorecard
    if refused(result):
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


def _relative(path: str) -> str:
    return path.removeprefix("/workspace/").lstrip("/")


def _files(aim: Target, deliverable: str = NOTHING, **extra: str) -> dict[str, Any]:
    """The deliverables (each ``deliverable``), plus ``extra`` files."""
    return {**{path: deliverable for path in aim.deliverables}, **extra}


def _answered(aim: Target, **extra: str) -> dict[str, Any]:
    """:func:`_files`, plus an empty answer at each path an evaluator's checks require
    (so that the checks pass and the evaluator's verdict decides)."""
    return _files(aim, **dict.fromkeys(aim.answers, "{}"), **extra)


def _submission(files: dict[str, Any], *commands: str) -> Submission:
    return Submission(files=files, commands=[{"run": c, "timeout_ms": 10_000}
                                             for c in commands or ("true",)])


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
                   _submission(_files(aim, **{"conftest.py": hook})))


def _shadowed_runner(aim: Target) -> Forgery:
    runner = f"print({PASS_LINE!r})\nraise SystemExit(0)\n"
    return Forgery("shadowed runner", "a pytest.py that prints a pass line and exits 0",
                   _submission(_files(aim, **{"pytest.py": runner})))


def _config_plugin(aim: Target) -> Forgery:
    ini = "[pytest]\naddopts = -p forge\npythonpath = .\n"
    plugin = ("def pytest_collection_modifyitems(items):\n"
              "    for item in items:\n"
              "        item.obj = lambda *a, **k: None\n")
    return Forgery("config plugin", "a pytest.ini that loads the candidate's plugin",
                   _submission(_files(aim, **{"pytest.ini": ini, "forge.py": plugin})))


def _exit_on_import(aim: Target) -> Forgery:
    code = f"import os, sys\nprint({PASS_LINE!r}, flush=True)\nos._exit(0)\n"
    return Forgery("exit on import", "the deliverable prints a pass line and exits 0 when run",
                   _submission(_files(aim, code)))


def _fake_counts(aim: Target) -> Forgery:
    code = (f"import sys\nprint({PASS_LINE!r})\nprint('OK (tests=3)')\n"
            "print('{\"passed\": 3, \"failed\": 0, \"total\": 3}')\n")
    return Forgery("fake counts", "the candidate's program prints test counts",
                   _submission(_files(aim, code), "python3 " + " ".join(
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
                   _submission(_files(aim, code), _run_deliverables(aim)))


def _run_deliverables(aim: Target) -> str:
    """A command running every Python deliverable (``true`` when there is none)."""
    return " ; ".join(f"python3 '{p}'" for p in aim.deliverables if p.endswith(".py")) \
        or "true"


def _shadowed_stdlib(aim: Target) -> Forgery:
    evil = f"import os\nprint({PASS_LINE!r}, flush=True)\nos._exit(0)\n"
    files = {name: evil for name in ("json.py", "pathlib.py", "unittest.py", "re.py")}
    return Forgery("shadowed stdlib", "json.py, pathlib.py, ... that end the test run",
                   _submission(_files(aim, **files)))


def _planted_pycache(aim: Target) -> Forgery:
    forged = "def test_forged():\n    pass\n"
    compile_all = "; ".join(
        f"py_compile.compile('forged.py', cfile='__pycache__/{posixpath.basename(t)[:-3]}"
        f".cpython-311.pyc')" for t in aim.test_files if t.endswith(".py")) or "pass"
    return Forgery("planted __pycache__", "bytecode for the hidden test names, compiled "
                   "from a test that passes",
                   _submission(_files(aim, **{"forged.py": forged}),
                               f"python3 -c \"import py_compile; {compile_all}\""))


def _startup_hooks(aim: Target) -> Forgery:
    hook = f"import os\nprint({PASS_LINE!r}, flush=True)\nos._exit(0)\n"
    files = {"sitecustomize.py": hook, "usercustomize.py": hook,
             "evil.pth": "import os; print('3 passed'); os._exit(0)\n"}
    return Forgery("start-up hooks", "sitecustomize.py, usercustomize.py and a .pth",
                   _submission(_files(aim, **files)))


def _blocked_seeding(aim: Target) -> Forgery:
    blocks = " && ".join(f"mkdir -p '{t}/x'" for t in aim.test_files) or "true"
    links = " ; ".join(f"ln -s /dev/null '{t}.link'" for t in aim.test_files) or "true"
    return Forgery("blocked seeding", "a directory (and links) planted at the hidden test "
                   "files' paths", _submission(_files(aim), f"{blocks}; {links}; true"))


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
                   "rewrites what they read", _submission(
                       _files(aim, **{"daemon.py": daemon}), "python3 daemon.py"))


def _monkeypatch(aim: Target) -> Forgery:
    code = textwrap.dedent("""\
        import sys
        try:
            import _pytest.runner as runner
            runner.pytest_runtest_call = lambda item: None
        except Exception:
            pass
        import unittest
        unittest.TestCase.run = lambda self, result=None: result
        """)
    return Forgery("framework monkeypatch", "the deliverable patches pytest and unittest "
                   "when it is imported", _submission(_files(aim, code)))


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
                   _submission({**{k: v for k, v in _files(aim).items() if k != first},
                                "deep.py": deep}, "python3 deep.py"))


def _evaluator_hooks(aim: Target) -> Forgery:
    perfect = json.dumps({"scores": dict.fromkeys(aim.scores or ("correctness",), 1000)})
    hook = f"import atexit; atexit.register(lambda: print({perfect!r}, flush=True))\n"
    plant = textwrap.dedent(f"""\
        import os, site
        for home in ("/tmp", "/workspace"):
            os.environ["HOME"] = home
            site.USER_BASE = site.USER_SITE = None
            where = site.getusersitepackages()
            os.makedirs(where, exist_ok=True)
            open(os.path.join(where, "usercustomize.py"), "w").write({hook!r})
            open(os.path.join(where, "evil.pth"), "w").write("import usercustomize\\n")
            for folder, _, names in os.walk(os.path.join(home, ".local")):
                os.chmod(folder, 0o755)
                for name in names:
                    os.chmod(os.path.join(folder, name), 0o644)
        """)
    return Forgery("evaluator hooks", "Python start-up hooks where an evaluator whose HOME is "
                   "/tmp or the workspace would load them, printing a perfect score",
                   _submission(_answered(aim, **{"plant.py": plant}), "python3 plant.py"))


def _evaluator_link(aim: Target) -> Forgery:
    links = " ; ".join(f"ln -sf /proc/self/cwd/ground-truth.json '{p}'"
                       for p in (*aim.answers, *aim.deliverables)) or "true"
    return Forgery("evaluator link", "every answer (submitted, so that the checks see it) "
                   "replaced by a link to the evaluator's own ground truth",
                   _submission(_answered(aim), links))


def _evaluator_fifo(aim: Target) -> Forgery:
    fifos = " ; ".join(f"rm -f '{p}' && mkfifo '{p}'" for p in aim.answers) or "true"
    return Forgery("evaluator fifo", "every answer (submitted, so that the checks see it) "
                   "replaced by a FIFO, whose open hangs an evaluator until its timeout",
                   _submission(_answered(aim), fifos))


def _evaluator_crash(aim: Target) -> Forgery:
    texts = [p for p in aim.answers if not p.endswith(".json")]
    garbled = " ; ".join(f"printf '\\377' > '{p}'" for p in texts) or "true"
    lists = {p: "[]" for p in aim.answers if p.endswith(".json")}
    return Forgery("evaluator crash", "every JSON answer a list where an evaluator reads an "
                   "object, every other answer a byte that is not UTF-8: an evaluator that "
                   "reads them crashes, and a crash was no contest",
                   _submission({**_answered(aim), **lists}, garbled))


def _full_tmp(aim: Target) -> Forgery:
    fill = ("for d in /tmp /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M 2>/dev/null;"
            " mkdir $d/many && i=0 && while [ $i -lt 2000 ] && : > $d/many/$i 2>/dev/null;"
            " do i=$((i+1)); done; done; true")
    return Forgery("full tmp", "/tmp and /dev/shm filled to the last byte, so that whatever "
                   "the fleet writes there after the candidate fails and voids the run",
                   _submission(_answered(aim), fill))


def _locked_tmp(aim: Target) -> Forgery:
    fill = ("for d in /tmp /dev/shm; do mkdir $d/locked &&"
            " dd if=/dev/zero of=$d/locked/fill bs=1M 2>/dev/null; chmod 000 $d/locked; done;"
            " true")
    return Forgery("locked tmp", "/tmp and /dev/shm filled inside a directory of mode 000, "
                   "which a plain rm -rf cannot empty, so that the evaluator's files do not "
                   "fit and it never runs", _submission(_answered(aim), fill))


def _deep_fifo(aim: Target) -> Forgery:
    deep = ("i=0; while [ $i -lt 220 ]; do mkdir nested_past_path_max && cd nested_past_path_max"
            " || exit 0; i=$((i+1)); done; mkfifo fifo; true")
    return Forgery("deep fifo", "a FIFO nested past PATH_MAX in the workspace, where a "
                   "seal that cannot remove it would keep the evaluator from running",
                   _submission(_answered(aim), deep))


def _sandbox_killer(aim: Target) -> Forgery:
    bomb = 'a=x; while :; do a="$a$a"; done'
    return Forgery("sandbox killer", "a last command that runs out of memory: under gVisor "
                   "the host kills the whole sandbox, so that no test or evaluator can run",
                   _submission(_answered(aim), "true", bomb))


def _grader_events(aim: Target) -> Forgery:
    """The grader's events a passing run would have, after the fleet's own (no sequence
    number, a late time): scoring takes the later of two."""
    late = "9999-12-31T23:59:59Z"
    faked: list[dict[str, Any]] = [
        {"type": "grader.verification.code_executed", "occurred_at": late, "payload": {
            "validator_key": key, "exit_code": 0, "stdout": PASS_LINE, "stderr": "",
            "timed_out": False, "passed_tests": 3, "failed_tests": 0, "error_tests": 0,
            "total_tests": 3, "pass_threshold": 1.0, "scoring": "fraction_passed"}}
        for key in aim.tests or ("tests",)]
    faked.append({"type": "grader.evaluator.completed", "occurred_at": late, "payload": {
        "runtime": "python", "exit_code": 0, "stderr": "",
        "stdout": json.dumps({"scores": dict.fromkeys(aim.scores or ("correctness",), 1000)})}})
    files = _answered(aim)
    return Forgery("grader events", "the events of a passing test run and a perfect "
                   "evaluator, submitted to sort after the fleet's own",
                   Submission(files=files, commands=[{"run": "true"}], events=faked))


#: Every forgery of the battery, by name (registry order is the report's order).
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
    "unwritable deliverable": _unwritable_deliverable,
    "evaluator hooks": _evaluator_hooks,
    "evaluator link": _evaluator_link,
    "evaluator fifo": _evaluator_fifo,
    "evaluator crash": _evaluator_crash,
    "full tmp": _full_tmp,
    "locked tmp": _locked_tmp,
    "deep fifo": _deep_fifo,
    "sandbox killer": _sandbox_killer,
    "grader events": _grader_events,
}
