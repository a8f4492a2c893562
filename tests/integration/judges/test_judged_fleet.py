"""The hybrid judge pack through the live fleet: workers call a scripted judge on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.devtools.judge_stub import Answer, StubJudgeServer, keyword
from evalfleet.tasks.messages import RunRequest

PACK = Path(__file__).parents[3] / "examples" / "packs" / "support-reply-judged"


@pytest.fixture
def judge() -> Iterator[StubJudgeServer]:
    server = StubJudgeServer(keyword([("sorry", Answer(text='{"score": 5, "pass": true}'))],
                                     Answer(text='{"score": 1, "pass": false}'))).start()
    yield server
    server.stop()


def judge_settings(url: str) -> dict[str, str]:
    """Worker settings pointing both judge providers at the stub."""
    return {"judges__providers__openai__base_url": url + "/v1",
            "judges__providers__openai__api_key": "fleet-test-key",
            "judges__providers__anthropic__base_url": url,
            "judges__providers__anthropic__api_key": "fleet-test-key",
            "judges__backoff_s": "0"}


def test_judged_pack_scores_through_the_fleet(judge: StubJudgeServer, start_worker: Any,
                                              client: Any) -> None:
    """Passing reply wins with both judges at 1; the curt one loses; calls are evidence."""
    start_worker("judged", **judge_settings(judge.url))
    mapping = yaml.safe_load((PACK / "pack.yaml").read_text())
    requests = [RunRequest(run_id=f"judged-{name}-{id(judge)}", pack=mapping,
                           submission=load_submission(PACK / "submissions" / name))
                for name in ("pass", "fail")]
    client.submit_many(requests)
    passed, failed = [client.wait(r.run_id, timeout=120) for r in requests]
    assert (passed.outcome, failed.outcome) == ("scored", "scored")
    assert (passed.scorecard.result, failed.scorecard.result) == ("win", "loss")
    assert passed.scorecard.dimensions["tone"].score == 1.0
    assert failed.scorecard.dimensions["tone"].score == 0.0
    assert failed.scorecard.dimensions["apology"].score == 0.0
    assert len(judge.requests) == 10  # (2 × 2 tone + 1 apology) per run
    assert "fleet-test-key" not in passed.model_dump_json()
    assert all(r.headers.get("x-api-key", r.headers.get("authorization", "")).endswith(
        "fleet-test-key") for r in judge.requests)
