"""The forgeries of the battery that aim at the fleet rather than at a test framework:
the custom-script evaluator (hooks, links, FIFOs, crashes), the space it needs (a full or
locked ``/tmp``), the sandbox itself (a FIFO past ``PATH_MAX``, a memory bomb that ends it)
and the grader's own events. :data:`FLEET` is their part of
:data:`.battery.FORGERIES`, in the report's order."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from ...messages import Submission
from .kit import PASS_LINE, Builder, Forgery, Target, answered, submission


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
                   submission(answered(aim, **{"plant.py": plant}), "python3 plant.py"))


def _evaluator_link(aim: Target) -> Forgery:
    links = " ; ".join(f"ln -sf /proc/self/cwd/ground-truth.json '{p}'"
                       for p in (*aim.answers, *aim.deliverables)) or "true"
    return Forgery("evaluator link", "every answer (submitted, so that the checks see it) "
                   "replaced by a link to the evaluator's own ground truth",
                   submission(answered(aim), links))


def _evaluator_fifo(aim: Target) -> Forgery:
    fifos = " ; ".join(f"rm -f '{p}' && mkfifo '{p}'" for p in aim.answers) or "true"
    return Forgery("evaluator fifo", "every answer (submitted, so that the checks see it) "
                   "replaced by a FIFO, whose open hangs an evaluator until its timeout",
                   submission(answered(aim), fifos))


def _evaluator_crash(aim: Target) -> Forgery:
    texts = [p for p in aim.answers if not p.endswith(".json")]
    garbled = " ; ".join(f"printf '\\377' > '{p}'" for p in texts) or "true"
    lists = {p: "[]" for p in aim.answers if p.endswith(".json")}
    return Forgery("evaluator crash", "every JSON answer a list where an evaluator reads an "
                   "object, every other answer a byte that is not UTF-8: an evaluator that "
                   "reads them crashes, and a crash was no contest",
                   submission({**answered(aim), **lists}, garbled))


def _full_tmp(aim: Target) -> Forgery:
    fill = ("for d in /tmp /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M 2>/dev/null;"
            " mkdir $d/many && i=0 && while [ $i -lt 2000 ] && : > $d/many/$i 2>/dev/null;"
            " do i=$((i+1)); done; done; true")
    return Forgery("full tmp", "/tmp and /dev/shm filled to the last byte, so that whatever "
                   "the fleet writes there after the candidate fails and voids the run",
                   submission(answered(aim), fill))


def _locked_tmp(aim: Target) -> Forgery:
    fill = ("for d in /tmp /dev/shm; do mkdir $d/locked &&"
            " dd if=/dev/zero of=$d/locked/fill bs=1M 2>/dev/null; chmod 000 $d/locked; done;"
            " true")
    return Forgery("locked tmp", "/tmp and /dev/shm filled inside a directory of mode 000, "
                   "which a plain rm -rf cannot empty, so that the evaluator's files do not "
                   "fit and it never runs", submission(answered(aim), fill))


def _deep_fifo(aim: Target) -> Forgery:
    deep = ("i=0; while [ $i -lt 220 ]; do mkdir nested_past_path_max && cd nested_past_path_max"
            " || exit 0; i=$((i+1)); done; mkfifo fifo; true")
    return Forgery("deep fifo", "a FIFO nested past PATH_MAX in the workspace, where a "
                   "seal that cannot remove it would keep the evaluator from running",
                   submission(answered(aim), deep))


def _sandbox_killer(aim: Target) -> Forgery:
    bomb = 'a=x; while :; do a="$a$a"; done'
    return Forgery("sandbox killer", "a last command that runs out of memory: under gVisor "
                   "the host kills the whole sandbox, so that no test or evaluator can run",
                   submission(answered(aim), "true", bomb))


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
    files = answered(aim)
    return Forgery("grader events", "the events of a passing test run and a perfect "
                   "evaluator, submitted to sort after the fleet's own",
                   Submission(files=files, commands=[{"run": "true"}], events=faked))


#: The fleet's forgeries, by name (in the report's order, after the test frameworks').
FLEET: dict[str, Builder] = {
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
