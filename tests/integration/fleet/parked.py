"""A pack whose runs stay queued: its profile is one no test worker serves."""

from __future__ import annotations

from typing import Any

PARKED_PACK: dict[str, Any] = {
    "pack": {"slug": "parked"},
    "version": {
        "sandbox": {"profile": "parked-nowhere"},
        "evaluation_spec": {
            "name": "parked", "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "hi", "type": "contains", "target": "final_output",
                            "expected_from": "literal:hi"}],
            "scorecard": {"dimensions": ["correctness"]}}},
}
