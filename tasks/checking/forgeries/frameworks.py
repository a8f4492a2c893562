"""The forgeries of the battery that aim at a pack's tests: the test frameworks' hooks,
runners, configuration and caches, the deliverable's own tricks when the tests run or
import it (an always-equal value, a patched framework, a registered plugin, a leak of the
tests), and what the candidate leaves behind for the tests. Each wins a pack written to be
forged (tests/reliability/forgeable.py); :data:`FRAMEWORKS` is their part of
:data:`tasks.checking.forgeries.battery.FORGERIES`, in the report's order."""

from __future__ import annotations

import posixpath
import textwrap

from .kit import PASS_LINE, Builder, Forgery, Target, planted, submission


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


FRAMEWORKS: dict[str, Builder] = {
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
}
