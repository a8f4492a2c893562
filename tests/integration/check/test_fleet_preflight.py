"""A fleet that requires (or flags) a passing preflight, with a live worker and real Redis.

Each test copies an example pack under a fresh slug, so its digest was never checked in
the session's Redis. Worker ids start with ``preflight-`` (the ``evalfleet.worker`` label of
their sandboxes).
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import yaml
from check_support import evalfleet

from evalfleet.tasks.checking.forgeries.battery import FORGERIES
from evalfleet.tasks.checking.preflight import PreflightRecord
from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.evaluation.packs import pack_digest
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.redis_keys import preflight_key
from evalfleet.workers.devtools.local_fleet import wait_until

EXAMPLES = Path(__file__).parents[3] / "examples" / "packs"
UNSOUND = Path(__file__).parent / "packs" / "unsound"


def fresh_copy(source: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A copy of a pack directory whose pack has a slug of its own (a new digest)."""
    folder = tmp_path / f"{source.name}-{uuid.uuid4().hex[:8]}"
    shutil.copytree(source, folder)
    mapping = yaml.safe_load((folder / "pack.yaml").read_text())
    mapping["pack"]["slug"] = folder.name
    (folder / "pack.yaml").write_text(yaml.safe_dump(mapping))
    return folder, mapping


def submit(client: Any, mapping: dict[str, Any], submission: Path) -> Any:
    """Submit one run and wait for its result."""
    run_id = client.submit(RunRequest(run_id=f"pf-{uuid.uuid4().hex[:10]}", pack=mapping,
                                      submission=load_submission(submission)))
    return client.wait(run_id, timeout=120)


def preflight_runs(node: Any, status: str, action: str) -> float:
    """``evalfleet_preflight_runs_total{status, action}`` on the node (0 when absent), once
    the node is idle: a run is published before its task ends and counts it."""
    wait_until(lambda: sample(node, "evalfleet_worker_runs_active") == 0, 30,
               "the worker never went idle")
    return sample(node, "evalfleet_preflight_runs_total", action=action, status=status)


def sample(node: Any, name: str, **labels: str) -> float:
    """One sample of the node's exposition (0 when absent)."""
    wanted = sorted(f'{k}="{v}"' for k, v in labels.items())
    for line in node.metrics().splitlines():
        found, _, value = line.rpartition(" ")
        metric, _, given = found.partition("{")
        if metric == name and sorted(filter(None, given.rstrip("}").split(","))) == wanted:
            return float(value)
    return 0.0


def test_a_pack_runs_only_once_its_preflight_passed(start_worker: Any, client: Any,
                                                    redis_server: Any, tmp_path: Path) -> None:
    """Refused while never checked; `evalfleet check --fleet` runs through the same worker
    (its runs are not refused) and records the verdict with the worker's image; then the
    same run is scored."""
    node = start_worker("preflight", preflight__mode="require")
    folder, mapping = fresh_copy(EXAMPLES / "fizzbuzz-coding", tmp_path)
    passing = folder / "submissions" / "pass"

    before = submit(client, mapping, passing)
    checked = evalfleet("check", str(folder / "pack.yaml"), "--runs", "2", "--fleet",
                        redis_server.url)
    stored = client.redis.get(preflight_key(pack_digest(mapping)))
    after = submit(client, mapping, passing)

    assert before.outcome == "rejected" and before.preflight.status == "missing"
    assert "no preflight recorded for this version" in before.errors[0].message
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"preflight passed, recorded at evalfleet:preflight:{pack_digest(mapping)}" \
        in checked.stderr
    record = PreflightRecord.model_validate_json(stored)
    assert record.passed and record.runs == 2 and record.cases == ["upto-15"]
    assert after.outcome == "scored" and after.scorecard.result == "win"
    assert after.preflight.status == "passed"
    assert record.image_ids == [after.resources["image_id"]]
    assert preflight_runs(node, "missing", "refused") == 1.0
    # every run of the check but "grader events", which the intake refuses before the gate
    assert preflight_runs(node, "preflight", "ran") == 2.0 + len(FORGERIES)
    assert preflight_runs(node, "passed", "ran") == 1.0


def test_a_pack_whose_preflight_failed_is_refused_with_why(start_worker: Any, client: Any,
                                                           redis_server: Any,
                                                           tmp_path: Path) -> None:
    """An unsound pack checked through the fleet is recorded as failed; its runs are then
    refused quoting the check's first error."""
    start_worker("preflight", preflight__mode="require")
    folder, mapping = fresh_copy(UNSOUND, tmp_path)

    checked = evalfleet("check", str(folder / "pack.yaml"), "--runs", "1", "--fleet",
                        redis_server.url)
    found = submit(client, mapping, folder / "reference")

    assert checked.returncode == 1
    assert "preflight failed, recorded at" in checked.stderr
    assert found.outcome == "rejected" and found.preflight.status == "failed"
    assert "its preflight failed: -: empty: the empty submission does not lose" \
        in found.errors[0].message


def test_flag_mode_runs_an_unchecked_pack_and_flags_it(start_worker: Any, client: Any,
                                                       tmp_path: Path) -> None:
    """Under ``flag`` a pack never checked is scored, and its result says why it is flagged."""
    node = start_worker("preflight", preflight__mode="flag")
    folder, mapping = fresh_copy(EXAMPLES / "support-reply-hybrid", tmp_path)

    found = submit(client, mapping, folder / "submissions" / "pass")

    assert found.outcome == "scored" and found.scorecard.result == "win"
    assert found.preflight.status == "missing"
    assert preflight_runs(node, "missing", "ran") == 1.0
