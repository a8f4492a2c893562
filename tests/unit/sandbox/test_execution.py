"""Running a code_execution test (§7.3): the working-directory rule, ``sh -lc``."""

from __future__ import annotations

import pytest

from evalfleet.sandbox.evaluation import judge
from evalfleet.sandbox.execution import CodeExecution, working_directory
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.testing.fake import FakeSandbox

SPEC = CodeExecution(validator_key="tests", target="file:sol", target_path="/workspace/sol.py",
                     test_command="pytest -q -x", timeout_ms=1000, pass_threshold=0.5)


@pytest.mark.parametrize(("path", "workdir"), [
    ("/workspace/sol.py", "/workspace"), ("/workspace/a/b/sol.py", "/workspace"),
    ("sol.py", "/workspace"), ("src/sol.py", "/workspace"), ("/sol.py", "/workspace"),
    ("", "/workspace"), ("/opt/app/sol.py", "/opt/app"), ("/tmp/x", "/tmp"),
    ("/workspace2/x", "/workspace2"), ("../etc/x", "/workspace"),
])
def test_working_directory_rule(path: str, workdir: str) -> None:
    """dirname of the file; ``.``, ``/``, empty or under /workspace ⇒ /workspace."""
    assert working_directory(path, "/workspace") == workdir


def test_fake_runs_the_command_with_sh_lc() -> None:
    """The sandbox runs ``sh -lc`` with the timeout in the workdir."""
    sandbox = FakeSandbox(Profile(name="p", image="fake"))
    done = judge.code_execution(sandbox, SPEC)
    command = sandbox.executed[-1]
    assert command.argv == ("sh", "-lc", "pytest -q -x") and command.timeout_s == 1.0
    assert command.workdir == "/workspace" and done.spec == SPEC
    assert done.result.exit_code == 127


def test_fake_scripted_result_is_the_tests_result() -> None:
    """A scripted result for the inner command is what the test's run hands back."""
    scripted = ExecResult(exit_code=0, stdout=b"4 passed")
    sandbox = FakeSandbox(Profile(name="p", image="fake"), script={"pytest -q -x": scripted})
    assert judge.code_execution(sandbox, SPEC).result == scripted
