"""Which tools the environment probe asks for: the pack's own commands, never the
submission's."""

from __future__ import annotations

import pytest

from evalfleet.sandbox.command import Command
from evalfleet.sandbox.evaluator import EvaluatorRun
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.tasks.evaluation.pack_environment import probes, program_of


@pytest.mark.parametrize(("run", "tool"), [
    ("pytest -q tests", "pytest"),
    ("LANG=C make -C x test", "make"),
    (["python3", "-m", "pytest"], "python3"),
    ("/usr/bin/env python3 x.py", "/usr/bin/env"),
    ("/workspace/run.sh", None),
    ("/tmp/tool", None),
    ("./run.sh", None),
    ("$PYTHON x.py", None),
    ("if true; then :; fi", None),
    ("echo 'unbalanced", None),
    ("", None),
])
def test_the_program_a_command_names(run: str | list[str], tool: str | None) -> None:
    assert program_of(run, "/workspace") == tool


def test_without_setup_one_probe_asks_for_everything() -> None:
    test = CodeExecution(validator_key="t", target="file:x", target_path="x",
                         test_command="pytest -q")
    before, after = probes(setup=(), tests=[test], probes=[Command(argv="node p.js")],
                           evaluator=EvaluatorRun(runtime="python", script=""),
                           env={"PATH": "/opt/bin"},
                           workspace="/workspace", needed_bytes=10)
    assert (before.tools, before.free_bytes, before.env) == (
        ("node", "pytest", "python3"), 10, {"PATH": "/opt/bin"})
    assert after is None


def test_with_setup_the_tests_tools_are_asked_for_after_it() -> None:
    """What a setup command installs counts: the tests' tools are looked for after it."""
    test = CodeExecution(validator_key="t", target="file:x", target_path="x",
                         test_command="pytest")
    before, after = probes(setup=(Command(argv="pip install pytest"),), tests=[test],
                           probes=[], evaluator=None, env={},
                           workspace="/workspace", needed_bytes=0)
    assert before.tools == ("pip",)
    assert after is not None and after.tools == ("pytest",)
