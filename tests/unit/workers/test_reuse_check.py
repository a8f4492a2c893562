"""The start-up check of sandbox reuse: a profile whose resets do not verify is told so
loudly and gets a fresh sandbox per run; the metric and health lines say the same."""

from __future__ import annotations

import logging

import pytest

from evalfleet.workers.metrics import ReuseCollector
from evalfleet.workers.reuse_check import ReuseCheck, apply
from evalfleet.workers.settings import Settings


def test_unverified_reuse_is_turned_off_loudly(monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    # Given two profiles asking to reuse, one whose probe failed
    monkeypatch.setenv("EVALFLEET_PROFILES", '{"a": {"reuse_runs": 10}, "b": {"reuse_runs": 20}}')
    settings = Settings()
    checks = [ReuseCheck("a", 10), ReuseCheck("b", 20, "the reset was not verified: x")]
    # When the worker applies them
    with caplog.at_level(logging.INFO):
        apply(settings, checks)
    # Then the failed one reuses nothing, and the log says so
    assert (settings.profiles["a"].reuse_runs, settings.profiles["b"].reuse_runs) == (10, 1)
    assert "SANDBOX REUSE OFF: profile b: a fresh sandbox per run, NOT the 20 asked for: " \
           "the reset was not verified: x" in caplog.text
    (family,) = ReuseCollector(checks).collect()
    assert [(s.labels, s.value) for s in family.samples] == [
        ({"profile": "a", "verified": "true"}, 10.0),
        ({"profile": "b", "verified": "false"}, 1.0)]
