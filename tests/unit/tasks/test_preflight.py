"""The fleet's preflight requirement: the gate over a stored record, through the pipeline
with the in-memory sandbox (the same path runs on a live worker in tests/integration/check).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from unit.tasks.checking_support import card, result, subject
from unit.tasks.pipeline_support import PACK, TESTS_PASS, config, request

from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.checking import check_pack
from evalfleet.tasks.checking.preflight import Mode, PreflightGate, PreflightRecord, PreflightStore
from evalfleet.tasks.evaluation.packs import pack_digest
from evalfleet.tasks.evaluation.pipeline import run_pipeline
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.redis_keys import preflight_key

IMAGE = "sha256:f00d"
CHECKED = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)


class MemoryRedis:
    """GET and SET over a dict."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def set(self, key: str, value: str) -> None:
        self.data[key] = value.encode()


def record(**fields: Any) -> PreflightRecord:
    """A passing record of the test pipeline's pack (case c1, image IMAGE)."""
    values: dict[str, Any] = {
        "digest": pack_digest(PACK), "pack": "answer", "passed": True, "cases": ["c1"],
        "sections": {"reference": True, "empty": True}, "image_ids": [IMAGE], "runs": 5,
        "checked_at": CHECKED}
    return PreflightRecord(**{**values, **fields})


def gated(mode: Mode, stored: PreflightRecord | None = None, sections: tuple[str, ...] = (),
          **overrides: Any) -> tuple[RunResult, FakeFactory]:
    """Run the test pipeline's request through a gate over a store holding ``stored``."""
    store = PreflightStore(MemoryRedis())
    if stored is not None:
        store.put(stored)
    gate = PreflightGate(store, lambda image: IMAGE, mode, sections)
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    return run_pipeline(request(**overrides), factory, config(), gate=gate), factory


def test_require_refuses_a_pack_never_checked_before_any_sandbox() -> None:
    """No record: rejected with a reason naming the pack and how to check it."""
    found, factory = gated("require")

    assert found.outcome == "rejected" and factory.sandboxes == []
    assert found.reason == "no passing preflight"
    assert found.preflight is not None and found.preflight.status == "missing"
    assert [e.field for e in found.errors] == ["pack"]
    assert found.errors[0].message == (
        f"pack answer v1 (sha256 {pack_digest(PACK)[:12]}): no preflight recorded for this "
        "version; run `evalfleet check PACK --fleet REDIS_URL`")
    assert found.metadata == {"team": "blue"} and found.case_key == "c1"


def test_flag_runs_a_pack_never_checked_and_says_so() -> None:
    """No record under ``flag``: scored as usual, flagged in ``preflight``."""
    found, _ = gated("flag")

    assert found.outcome == "scored" and found.scorecard is not None
    assert found.preflight is not None and found.preflight.status == "missing"


def test_a_passing_preflight_for_the_case_and_image_lets_the_run_through() -> None:
    """A sound check of this version, case and image: scored, ``passed``."""
    found, _ = gated("require", record())

    assert found.outcome == "scored"
    assert found.preflight is not None
    assert (found.preflight.status, found.preflight.image_id) == ("passed", IMAGE)
    assert found.preflight.digest == pack_digest(PACK)


@pytest.mark.parametrize(("stored", "status", "says"), [
    (record(passed=False, errors=["c1: empty: the empty submission does not lose", "x"]),
     "failed", "its preflight failed: c1: empty: the empty submission does not lose (+1 more)"),
    (record(image_ids=["sha256:old"]), "stale",
     "its preflight ran on sha256:old, this run would use sha256:f00d: check it again"),
    (record(cases=["c2"]), "missing", "its preflight did not check case c1"),
    (record(digest=pack_digest({"another": "pack"})), "missing", "no preflight recorded"),
])
def test_a_failed_stale_or_partial_preflight_is_refused(stored: PreflightRecord, status: str,
                                                        says: str) -> None:
    """Each way a record does not vouch for this run is refused with its reason."""
    found, _ = gated("require", stored)

    assert found.outcome == "rejected"
    assert found.preflight is not None and found.preflight.status == status
    assert says in found.errors[0].message


def test_a_section_the_operator_requires_must_have_passed_too() -> None:
    """A sound check whose non-core section ``forgeries`` failed (or never ran) is refused
    when the operator requires that section."""
    failed, _ = gated("require", record(sections={"reference": True, "forgeries": False}),
                      sections=("forgeries",))
    absent, _ = gated("require", record(), sections=("forgeries",))
    passed, _ = gated("require", record(sections={"forgeries": True}), sections=("forgeries",))

    assert [r.outcome for r in (failed, absent, passed)] == ["rejected", "rejected", "scored"]
    assert "did not pass forgeries, which this fleet requires" in failed.errors[0].message


def test_a_run_of_a_check_is_never_refused() -> None:
    """``check_run`` set: the check of a pack never checked can run; it says what it is."""
    found, _ = gated("require", check_run=2)

    assert found.outcome == "scored"
    assert found.preflight is not None and found.preflight.status == "preflight"


def test_without_a_gate_results_carry_no_preflight() -> None:
    """Mode off: no look-up, ``preflight`` stays null."""
    found = run_pipeline(request(), FakeFactory(script={"run-tests 7": TESTS_PASS}), config())

    assert found.outcome == "scored" and found.preflight is None


def test_a_check_report_becomes_the_record_a_gate_reads() -> None:
    """The record keeps the verdict, sections, cases and images of a finished check."""
    manifest = copy.deepcopy(subject().manifest)
    report = check_pack([subject()], lambda rs: [result(card(0, "loss"))] * len(rs),
                        where="fleet")
    store = PreflightStore(MemoryRedis())
    key = store.put(PreflightRecord.of(report, CHECKED))
    found = store.get(pack_digest(manifest))

    assert key == preflight_key(pack_digest(manifest))
    assert found is not None and found.passed is False
    assert (found.cases, found.image_ids, found.runs) == (["c1"], ["sha256:abc"], 5)
    assert found.sections["reference"] is False and found.sections["empty"] is True
    assert found.errors[0].startswith("c1: reference: run 1: 0/1000 loss")
