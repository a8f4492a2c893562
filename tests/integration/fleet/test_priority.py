"""Request priority orders a backlog: more urgent runs are taken first."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.redis_keys import RESULTS_STREAM

PACK: dict[str, Any] = {
    "pack": {"slug": "prio"},
    "version": {
        "sandbox": {"profile": "prio"},
        "evaluation_spec": {
            "name": "prio", "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "ok", "type": "contains", "target": "final_output",
                            "expected_from": "literal:ok"}],
            "scorecard": {"dimensions": ["correctness"]}}},
}


def test_urgent_runs_overtake_a_backlog(start_worker: Any, client: Any) -> None:
    """With no worker running, 4 routine runs then 1 urgent one: the urgent one runs first."""
    stamp = time.time_ns()
    routine = [RunRequest(run_id=f"routine-{stamp}-{i}", pack=copy.deepcopy(PACK), priority=1,
                          submission={"commands": [{"run": "echo ok"}]}) for i in range(4)]
    urgent = RunRequest(run_id=f"urgent-{stamp}", pack=copy.deepcopy(PACK), priority=9,
                        submission={"commands": [{"run": "echo ok"}]})
    client.submit_many([*routine, urgent])

    start_worker("prio", queues='["prio"]', profiles=json.dumps({"prio": {}}))
    for request in [*routine, urgent]:
        client.wait(request.run_id, timeout=120)

    published = [f[b"run_id"].decode() for _, f in client.redis.xrange(RESULTS_STREAM)]
    order = [run_id for run_id in published if str(stamp) in run_id]
    assert order[0] == urgent.run_id
    assert sorted(order[1:]) == sorted(r.run_id for r in routine)
