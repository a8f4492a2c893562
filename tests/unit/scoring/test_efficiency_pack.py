"""Clawdiators efficiency and speed, expressed as AgentClash metric/latency dimensions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evalfleet.scoring import evaluate, load_pack

PACK = Path(__file__).parents[3] / "examples" / "packs" / "agent-efficiency"


def card_for(submission: str) -> Any:
    """The scorecard of one of the pack's recorded trajectories."""
    pack = load_pack(PACK / "pack.yaml")
    events = yaml.safe_load((PACK / "submissions" / submission / "submission.yaml").read_text())
    return evaluate(pack.spec, events["events"], pack.cases)


@pytest.mark.parametrize(("submission", "points", "weighted", "total", "result"), [
    ("pass", {"answered": 1000, "correctness": 1000, "token_efficiency": 750,
              "call_efficiency": 667, "speed": 700}, 884, 884, "win"),
    ("fail", {"answered": 0, "correctness": 0, "token_efficiency": 0, "call_efficiency": 0,
              "speed": 100}, 15, 0, "loss"),
])
def test_efficiency_and_speed_on_the_0_to_1000_scale(submission: str, points: dict[str, int],
                                                     weighted: int, total: int,
                                                     result: str) -> None:
    """4000 tokens (target 2000, max 10000) ⇒ 750; 6 calls (3..12) ⇒ 667; 90 s of a 300 s
    limit ⇒ speed 700, and 90 % of the limit ⇒ 100, as 1000 × (1 − used/limit). The gate
    ``answered`` (weight 0) zeroes a wrong answer's total under hybrid."""
    card = card_for(submission)

    assert {k: v.score for k, v in card.score_breakdown.items()} == points
    assert (card.score, card.result) == (total, result)
    assert sum(v.weighted for v in card.score_breakdown.values()) == pytest.approx(weighted,
                                                                                  abs=1)
