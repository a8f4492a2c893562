"""A probe runs the candidate's code, and nothing else the submission placed (issue 39,
item 1), in a real sandbox on each runtime: Python start-up hooks in the user site of
``HOME`` (the image's ``HOME`` is the workspace) and a program of the same name earlier on
``PATH`` printed the expected answer while the deliverable returned nothing, and the run
won. Now the probe's user site is off, its ``HOME`` is in the room and its ``PATH`` holds
no directory the candidate can write: the same submissions lose, and an honest one wins."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from sandbox_support import evaluated_pack, left_over, profile

from evalfleet.sandbox.capture import ListingCheck
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.evaluation import checks
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

pytestmark = pytest.mark.integration

PACK: dict[str, Any] = {
    "pack": {"slug": "probed"},
    "version": {
        "sandbox": {
            "deliverables": ["answer.py"],
            "probes": {"p": {"run": "python3 -c 'import answer; print(answer.value())'"}},
        },
        "evaluation_spec": {
            "name": "probed", "version_number": 1, "judge_mode": "deterministic",
            "post_execution_checks": [{"key": "answer", "type": "file_capture",
                                       "path": "answer.py"}],
            "validators": [{"key": "tests", "type": "code_execution", "target": "file:answer",
                            "config": {"test_command": 'test "$(cat $PROBES/p/stdout)" = 42'
                                                      " && echo '1 passed'"}}],
            "scorecard": {"dimensions": ["correctness"]}}},
}
NOTHING = "def value():\n    return None\n"
#: A start-up hook that answers for the deliverable and ends the interpreter.
HOOK = "import os\nprint(42, flush=True)\nos._exit(0)\n"
PLANT_HOOKS = ("python3 -c \"import os, site\n"
               "where = site.getusersitepackages()\n"
               "os.makedirs(where)\n"
               f"for name in ('usercustomize.py', 'sitecustomize.py'):\n"
               f"    open(os.path.join(where, name), 'w').write({HOOK!r})\n"
               "open(os.path.join(where, 'evil.pth'), 'w').write('import usercustomize\\\\n')\"")


@pytest.mark.parametrize(("deliverable", "command", "path", "result"), [
    ("def value():\n    return 42\n", "true", None, "win"),
    (NOTHING, PLANT_HOOKS, None, "loss"),
    (NOTHING, "mkdir bin && printf '#!/bin/sh\\necho 42\\n' > bin/python3 && chmod +x "
              "bin/python3", "/workspace/bin:/usr/local/bin:/usr/bin:/bin", "loss"),
], ids=["honest", "start-up-hooks", "path"])
def test_a_probe_runs_only_the_deliverable(factory: DockerFactory, runtime: str,
                                           docker_client: Any, deliverable: str,
                                           command: str, path: str | None,
                                           result: str) -> None:
    run_id = f"probed-{uuid.uuid4().hex[:12]}"
    body = {"run_id": run_id, "pack": PACK,
            "submission": {"files": {"answer.py": deliverable},
                           "commands": [{"run": command}]}}
    sandboxed = profile("python", runtime)
    if path is not None:  # an operator's PATH with a directory the candidate writes
        sandboxed = dataclasses.replace(sandboxed, env={"PATH": path})
    config = PipelineConfig(profiles={"default": ProfileBounds(sandboxed)})

    ran = run_pipeline(body, factory, config)

    assert ran.outcome == "scored" and ran.scorecard is not None, ran.reason
    assert ran.scorecard.result == result, ran.scorecard
    assert ran.events and left_over(docker_client, run_id) == []


EVALUATED = evaluated_pack("evaluated-path", "print('{\"scores\": {\"correctness\": 0}}')")
PERFECT = "printf '#!/bin/sh\\necho {\\\"scores\\\": {\\\"correctness\\\": 1000}}\\n'"


def test_the_evaluator_runs_the_images_interpreter(factory: DockerFactory, runtime: str,
                                                   docker_client: Any) -> None:
    """An operator's ``PATH`` with a directory the candidate writes let a planted
    ``python3`` be the evaluator's interpreter, printing a perfect score: the evaluator's
    ``PATH`` holds only directories the candidate cannot write."""
    run_id = f"evaluated-{uuid.uuid4().hex[:12]}"
    plant = f"mkdir bin && {PERFECT} > bin/python3 && chmod 755 bin bin/python3"
    body = {"run_id": run_id, "pack": EVALUATED,
            "submission": {"files": {}, "commands": [{"run": plant}]}}
    sandboxed = dataclasses.replace(profile("python", runtime),
                                    env={"PATH": "/workspace/bin:/usr/local/bin:/usr/bin:/bin"})
    config = PipelineConfig(profiles={"default": ProfileBounds(sandboxed)})

    ran = run_pipeline(body, factory, config)

    assert ran.outcome == "scored" and ran.scorecard is not None, ran.reason
    (evaluated,) = [e["payload"] for e in ran.events
                    if e["type"] == "grader.evaluator.completed"]
    assert evaluated["exit_code"] == 0 and "1000" not in evaluated["stdout"], evaluated
    assert (ran.scorecard.result, ran.scorecard.score) == ("loss", 0), ran.scorecard
    assert left_over(docker_client, run_id) == []


@pytest.mark.parametrize("transport", ["supervisor", "exec"])
def test_the_drivers_own_steps_run_no_planted_program(
        factory: DockerFactory, exec_factory: DockerFactory, runtime: str, transport: str,
        docker_client: Any) -> None:
    """An image whose ``PATH`` starts with a directory the candidate writes: the driver's
    own scripts (the listing's ``find``, the export's ``tar``) still run the image's
    programs, so a planted ``find`` that prints nothing cannot hide ``secret.txt`` from a
    listing, nor a planted ``tar`` hand out a deliverable of its choosing."""
    chosen = exec_factory if transport == "exec" else factory
    sandbox = chosen.acquire(profile("python", runtime), run_id=f"path-{uuid.uuid4().hex[:8]}")
    try:
        sandbox.conduit.base_env["PATH"] = "/workspace/bin:" + sandbox.conduit.base_env.get(
            "PATH", "/usr/bin:/bin")  # as an image's ENV would set it
        planted = sandbox.exec(Command(
            "echo real > answer.txt && touch secret.txt && mkdir bin && for tool in find tar;"
            " do printf '#!/bin/sh\\nexit 0\\n' > bin/$tool; done && chmod 755 bin bin/*"))
        assert planted.exit_code == 0, planted
        listed = checks.list_directory(sandbox, ListingCheck("tree", "."))
        exported = sandbox.export_files(["answer.txt"])
    finally:
        sandbox.close()
    assert "/workspace/secret.txt" in [e.path for e in listed.entries], listed
    assert [(f.path, f.data) for f in exported] == [("answer.txt", b"real\n")]
    assert left_over(docker_client, sandbox.run_id) == []


EXAMPLE = Path(__file__).parents[3] / "examples" / "packs" / "fizzbuzz-coding"
MEMORIZED = ("def fizzbuzz(n):\n    return ['1', '2', 'Fizz', '4', 'Buzz', 'Fizz', '7', '8',"
             " 'Fizz', 'Buzz', '11', 'Fizz', '13', '14', 'FizzBuzz']\n")


@pytest.mark.parametrize(("deliverable", "result"), [
    ((EXAMPLE / "submissions" / "pass" / "fizzbuzz.py").read_text(), "win"),
    (MEMORIZED, "loss"),
], ids=["honest", "memorized"])
def test_the_example_pack_probes_an_input_the_case_does_not_show(
        factory: DockerFactory, runtime: str, docker_client: Any, deliverable: str,
        result: str) -> None:
    """Issue 39, item 3: ``fizzbuzz-coding`` probed only the case's visible input, so a
    deliverable that returned the visible answer whatever it was asked won 1000. A second
    probe asks for 97, and every test reads both."""
    run_id = f"memorized-{uuid.uuid4().hex[:12]}"
    body = {"run_id": run_id, "pack": yaml.safe_load((EXAMPLE / "pack.yaml").read_text()),
            "submission": {"files": {"fizzbuzz.py": deliverable},
                           "commands": [{"run": "true"}]}}
    config = PipelineConfig(profiles={"default": ProfileBounds(profile("python", runtime))})

    ran = run_pipeline(body, factory, config)

    assert ran.outcome == "scored" and ran.scorecard is not None, ran.reason
    assert ran.scorecard.result == result, ran.scorecard
    assert left_over(docker_client, run_id) == []
