"""Judge settings from the environment into the pipeline's JudgingConfig (no network)."""

from __future__ import annotations

import pytest

from evalfleet.workers.app import longest_run_s
from evalfleet.workers.settings import Settings


def test_env_builds_endpoints_and_hides_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested env vars give each provider its dialect; keys never show in a repr."""
    monkeypatch.setenv("EVALFLEET_JUDGES__PROVIDERS__ANTHROPIC__BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("EVALFLEET_JUDGES__PROVIDERS__ANTHROPIC__API_KEY", "k-secret")
    monkeypatch.setenv("EVALFLEET_JUDGES__PROVIDERS__OPENROUTER__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EVALFLEET_JUDGES__MAX_RETRIES", "0")
    monkeypatch.setenv("EVALFLEET_JUDGES__MAX_MESSAGE_BYTES", "65536")
    judging = Settings().pipeline_config().judging
    assert judging.max_message_bytes == 65536
    assert {k: e.api for k, e in judging.endpoints.items()} == {
        "anthropic": "anthropic", "openrouter": "openai"}
    assert judging.endpoints["anthropic"].api_key.get_secret_value() == "k-secret"
    assert judging.max_retries == 0
    assert "k-secret" not in repr(judging)


def test_no_provider_is_configured_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in __import__("os").environ if n.startswith("EVALFLEET_JUDGES")]:
        monkeypatch.delenv(name)
    assert Settings().pipeline_config().judging.endpoints == {}
    assert Settings().pipeline_config().judging.max_message_bytes == 256 * 1024


def test_the_judging_deadline_and_rounds_come_from_the_env(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``EVALFLEET_JUDGES__TOTAL_DEADLINE_S`` and ``__ROUNDS`` reach the judging step, and
    Celery's limits make room for the deadline: a slow judge never redelivers the run."""
    monkeypatch.setenv("EVALFLEET_JUDGES__TOTAL_DEADLINE_S", "90")
    monkeypatch.setenv("EVALFLEET_JUDGES__ROUNDS", "2")
    settings = Settings()
    judging = settings.pipeline_config().judging
    assert (judging.total_deadline_s, judging.rounds) == (90.0, 2)
    sandbox = max(p.max_wall_s for p in settings.profiles.values())
    assert longest_run_s(settings) == sandbox + 90.0


@pytest.mark.parametrize(("name", "value"), [("TOTAL_DEADLINE_S", "0"), ("ROUNDS", "0")])
def test_a_judging_step_that_cannot_send_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                    name: str, value: str) -> None:
    """No deadline, or no round, would judge nothing: the settings refuse them."""
    monkeypatch.setenv(f"EVALFLEET_JUDGES__{name}", value)
    with pytest.raises(ValueError, match=name.lower()):
        Settings()
