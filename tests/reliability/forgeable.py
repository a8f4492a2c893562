"""Packs written to be forged: the fixtures every forgery of the battery must win (issue 39).

A forgery that wins nothing tests nothing (the old "framework monkeypatch" rebound a name
pluggy never reads again, and ``evalfleet check`` called a forgeable pack sound). Each
forgery that aims at a pack's tests is proven here: a pack with the weakness it exploits,
which it must win. Both packs are the example ``fizzbuzz-coding`` with its defences taken
out, and an empty deliverable still loses them (the control, "blocked seeding"):

* :func:`workspace_pack`: the tests run next to the candidate's files (AgentClash's way),
  import its module, and take their verdict from output or exit code: under pytest, a
  plain script with ``PYTHONPATH=.``, ``unittest``, and a smoke run of the deliverable
  before the tests;
* :func:`importing_pack`: the clean room, but its tests import the deliverable (declared:
  ``imports_deliverables``), ask only the visible input, and its probe turns Python's user
  site back on with a ``HOME`` the candidate owns.

The forgeries that aim at the fleet (its evaluator's room, its sandbox, its intake) cannot
be let in by a pack; :data:`FLEET_AIMED` names the tests that prove each defence.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from evalfleet.tasks.messages import Submission

EXAMPLE = Path(__file__).parents[2] / "examples" / "packs" / "fizzbuzz-coding"
REFERENCE = Submission(files={"fizzbuzz.py": (EXAMPLE / "submissions" / "pass" /
                                              "fizzbuzz.py").read_text()})

IN_PROCESS_TEST = """\
import os

from fizzbuzz import fizzbuzz

UPTO = int(os.environ["UPTO"])


def test_numbers_stay_numbers():
    assert fizzbuzz(UPTO)[0:2] == ["1", "2"]


def test_multiples_of_three_and_five():
    assert fizzbuzz(UPTO)[2] == "Fizz" and fizzbuzz(UPTO)[4] == "Buzz"


def test_multiples_of_fifteen():
    assert fizzbuzz(UPTO)[14] == "FizzBuzz"
"""
PLAIN_CHECK = """\
import json
import os

from fizzbuzz import fizzbuzz

found = json.loads(json.dumps(fizzbuzz(int(os.environ["UPTO"]))))
assert found[14] == "FizzBuzz" and found[0] == "1", found
"""
UNIT_TEST = """\
import os
import unittest

from fizzbuzz import fizzbuzz


class TestFizzBuzz(unittest.TestCase):
    def test_fifteen(self):
        self.assertEqual(fizzbuzz(int(os.environ["UPTO"]))[14], "FizzBuzz")
"""
PROBE_TEST = """\
import json
import os
import pathlib


def test_the_probe_answers():
    found = json.loads((pathlib.Path(os.environ["PROBES"]) / "fizzbuzz" / "stdout").read_text())
    assert found[14] == "FizzBuzz" and found[0] == "1"
"""
PYTEST = "python3 -m pytest -q -p no:cacheprovider"

#: What each fixture must lose to (besides "test leak", which must print the tests into
#: the result): the forgeries of the battery that aim at a pack's tests.
WORKSPACE_WINNERS = frozenset({
    "pytest hook", "shadowed runner", "config plugin", "exit on import", "fake counts",
    "output flood", "shadowed stdlib", "planted __pycache__", "start-up hooks",
    "framework monkeypatch", "always equal", "registered plugin"})
IMPORTING_WINNERS = frozenset({
    "framework monkeypatch", "always equal", "registered plugin", "memorizer",
    "probe start-up hooks"})
#: A forgery that aims at the fleet, and the tests that prove the defence it probes.
FLEET_AIMED = {
    "blocked seeding": "tests/integration/sandbox/test_attacks.py",
    "waiting process": "tests/integration/sandbox/test_attacks.py",
    "unwritable deliverable": "tests/integration/sandbox/test_tree_shapes.py",
    "evaluator hooks": "tests/integration/clawdiators/test_script_evaluator.py",
    "evaluator link": "tests/integration/clawdiators/test_script_evaluator.py",
    "evaluator fifo": "tests/integration/clawdiators/test_script_evaluator.py",
    "evaluator crash": "tests/integration/clawdiators/test_script_evaluator.py",
    "full tmp": "tests/integration/clawdiators/test_script_evaluator.py",
    "locked tmp": "tests/integration/clawdiators/test_script_evaluator.py",
    "deep fifo": "tests/integration/clawdiators/test_script_evaluator.py",
    "sandbox killer": "tests/integration/sandbox/test_death_engine.py",
    "grader events": "tests/unit/tasks/test_clean_room_packs.py",
    "name past NAME_MAX": "tests/unit/tasks/test_forgery_shapes.py",
    "path past PATH_MAX": "tests/unit/tasks/test_forgery_shapes.py",
    "file and directory": "tests/unit/tasks/test_forgery_shapes.py",
    "too many files": "tests/unit/tasks/test_forgery_shapes.py",
    "deep tree": "tests/integration/sandbox/test_tree_shapes.py",
    "wide tree": "tests/integration/sandbox/test_tree_shapes.py",
    "locked tree": "tests/integration/sandbox/test_tree_shapes.py",
    "padded listing": "tests/integration/sandbox/test_tree_shapes.py",
}


def example() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load((EXAMPLE / "pack.yaml").read_text())
    return found


def _with_tests(pack: dict[str, Any], tests: dict[str, str]) -> dict[str, Any]:
    """``pack`` whose ``code_execution`` validators are ``tests`` (key → command), all in
    its correctness dimension, each passing at 60%."""
    spec = pack["version"]["evaluation_spec"]
    kept = [v for v in spec["validators"] if v["type"] != "code_execution"]
    spec["validators"] = [*kept, *({"key": key, "type": "code_execution",
                                    "target": "file:solution",
                                    "config": {"test_command": command, "timeout_ms": 20000,
                                               "pass_threshold": 0.6}}
                                   for key, command in tests.items())]
    for dimension in spec["scorecard"]["dimensions"]:
        if dimension["key"] == "correctness":
            dimension["validators"] = list(tests)
    return pack


def workspace_pack() -> dict[str, Any]:
    """The tests next to the candidate's files, importing its module, verdicts from output
    and exit codes."""
    pack = copy.deepcopy(example())
    sandbox = pack["version"]["sandbox"]
    for key in ("deliverables", "probes", "reports"):
        sandbox.pop(key)
    sandbox["test_files"] = {"test_fizzbuzz.py": IN_PROCESS_TEST,
                             "check_fizzbuzz.py": PLAIN_CHECK, "test_unit.py": UNIT_TEST}
    upto = "UPTO={{ upto }}"
    return _with_tests(pack, {
        "tests": f"{upto} {PYTEST} test_fizzbuzz.py",
        "plain": f"{upto} PYTHONPATH=. python3 check_fizzbuzz.py",
        "unit": f"{upto} python3 -m unittest -q test_unit",
        "smoke": f"{upto} python3 fizzbuzz.py; {upto} {PYTEST} test_fizzbuzz.py"})


def importing_pack() -> dict[str, Any]:
    """The clean room, its tests importing the deliverable (declared) on the visible input
    only, and a probe that lets the candidate's user site in."""
    pack = copy.deepcopy(example())
    sandbox = pack["version"]["sandbox"]
    sandbox["imports_deliverables"] = True
    sandbox["probes"] = {"fizzbuzz": {"run": (
        "env -u PYTHONNOUSERSITE HOME=/workspace python3 -c \"import json, fizzbuzz; "
        "print(json.dumps(fizzbuzz.fizzbuzz({{ upto }})))\"")}}
    sandbox["test_files"] = {"test_fizzbuzz.py": IN_PROCESS_TEST, "test_probe.py": PROBE_TEST}
    pytest = f'UPTO={{{{ upto }}}} {PYTEST} --junitxml="$REPORT"'
    sandbox["reports"] = {"tests": "junit", "probe": "junit"}
    return _with_tests(pack, {"tests": f"{pytest} test_fizzbuzz.py",
                              "probe": f"{pytest} test_probe.py"})
