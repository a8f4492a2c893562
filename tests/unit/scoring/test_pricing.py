"""Model cost from usage and the price table (docs/scoring.md §15)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import evidence_of, spec_with

from evalfleet.scoring.record.pricing import lookup_price, run_model_cost_usd, strip_date_suffix
from evalfleet.scoring.spec.models import PriceRow

VALIDATOR = {"key": "v", "type": "exact_match", "target": "final_output",
             "expected_from": "literal:x"}


def price(provider: str, model: str, inp: float, out: float) -> dict[str, Any]:
    """A pricing row."""
    return {"provider_key": provider, "provider_model_id": model,
            "input_cost_per_million_tokens": inp, "output_cost_per_million_tokens": out}


def usage(provider: str, model: str, seq: int, **tokens: Any) -> dict[str, Any]:
    """A model.call.completed event with usage."""
    return {"type": "model.call.completed", "sequence_number": seq,
            "payload": {"provider_key": provider, "provider_model_id": model, "usage": tokens}}


def started(provider: str, model: str, seq: int) -> dict[str, Any]:
    """A model.call.started event."""
    return {"type": "model.call.started", "sequence_number": seq,
            "payload": {"provider_key": provider, "model": model}}


def run_completed(seq: int, **payload: Any) -> dict[str, Any]:
    """A system.run.completed event."""
    return {"type": "system.run.completed", "sequence_number": seq, "payload": payload}


def cost_of(rows: list[dict[str, Any]] | None, events: list[dict[str, Any]]) -> Any:
    """run_model_cost_usd over a spec with the given pricing rows and events."""
    extra = {} if rows is None else {"pricing": {"models": rows}}
    return run_model_cost_usd(spec_with(VALIDATOR, **extra), evidence_of(events))


OPENAI = price("openai", "gpt-4o", 2.5, 10.0)


@pytest.mark.parametrize(("rows", "events", "expected"), [
    ([OPENAI], [usage("openai", "gpt-4o", 1, input_tokens=1_000_000, output_tokens=500_000)],
     7.5),
    ([OPENAI], [usage("openai", "gpt-4o", 1, input_tokens=1000, output_tokens=0,
                      total_tokens=999_999)], 0.0025),
    ([OPENAI, price("anthropic", "claude-sonnet-4", 3, 15)],
     [usage("openai", "gpt-4o", 1, input_tokens=2_000_000),
      usage("anthropic", "claude-sonnet-4-2025-05-14", 2, output_tokens=1_000_000)], 20.0),
    ([OPENAI], [started("openai", "gpt-4o", 1),
                run_completed(2, input_tokens=400_000, output_tokens=100_000)], 2.0),
    ([OPENAI], [started("openai", "gpt-4o", 1), run_completed(2, total_tokens=10)], 0.0),
    ([price("openai", "gpt-4o-2024-08-06", 1, 1), OPENAI],
     [usage("openai", "gpt-4o-2024-08-06", 1, input_tokens=1_000_000)], 1.0),
    ([price("p", "m", 0, 0)], [usage("p", "m", 1, input_tokens=5, output_tokens=5)], 0.0),
])
def test_cost_available(rows: list[dict[str, Any]], events: list[dict[str, Any]],
                        expected: float) -> None:
    """Cost is Σ input/1e6 × in_price + output/1e6 × out_price; total tokens are not priced."""
    usd, reason, metadata = cost_of(rows, events)
    assert (usd, reason) == (pytest.approx(expected), "")
    assert metadata["total_usd"] == usd


@pytest.mark.parametrize(("rows", "events", "reason"), [
    (None, [usage("openai", "gpt-4o", 1, input_tokens=1)], "model pricing is unavailable"),
    ([], [usage("openai", "gpt-4o", 1, input_tokens=1)], "model pricing is unavailable"),
    ([OPENAI], [], "model usage evidence is unavailable"),
    ([OPENAI], [started("openai", "gpt-4o", 1)], "model usage evidence is unavailable"),
    ([OPENAI], [started("openai", "gpt-4o", 1), started("openai", "gpt-4o-mini", 2),
                run_completed(3, input_tokens=5)], "model usage evidence is unavailable"),
    ([OPENAI], [run_completed(1, input_tokens=5)], "model usage evidence is unavailable"),
    ([OPENAI], [usage("openai", "gpt-4o", 1, input_tokens=1),
                usage("openai", "gpt-4o-mini", 2, input_tokens=1)],
     'model pricing is unavailable for provider "openai" model "gpt-4o-mini"'),
    ([OPENAI], [usage("azure", "gpt-4o", 1, input_tokens=1)],
     'model pricing is unavailable for provider "azure" model "gpt-4o"'),
    ([price("p", "m-2024-08-06", 1, 1)], [usage("p", "m", 1, input_tokens=1)],
     'model pricing is unavailable for provider "p" model "m"'),
])
def test_cost_unavailable(rows: list[dict[str, Any]] | None, events: list[dict[str, Any]],
                          reason: str) -> None:
    """No pricing, no usage (or not exactly one observed model), or any unpriced row."""
    assert cost_of(rows, events)[:2] == (None, reason)


def test_breakdown_per_model_sorted() -> None:
    """Metadata lists each model's tokens and cost, sorted by provider then model."""
    rows = [OPENAI, price("anthropic", "claude-x", 1, 2)]
    events = [usage("openai", "gpt-4o", 1, input_tokens=1_000_000, output_tokens=0),
              usage("anthropic", "claude-x", 2, input_tokens=1_000_000, output_tokens=1_000_000)]
    _, _, metadata = cost_of(rows, events)
    assert metadata["breakdown"] == [
        {"provider_key": "anthropic", "provider_model_id": "claude-x", "input_tokens": 1_000_000,
         "output_tokens": 1_000_000, "total_tokens": 2_000_000, "cost_usd": 3.0},
        {"provider_key": "openai", "provider_model_id": "gpt-4o", "input_tokens": 1_000_000,
         "output_tokens": 0, "total_tokens": 1_000_000, "cost_usd": 2.5},
    ]
    assert metadata["priced_run"] is True


def test_unavailable_metadata_names_observed_models() -> None:
    """Several observed models without per-call usage: the metadata lists them."""
    events = [started("openai", "b", 1), started("openai", "a", 2), run_completed(3)]
    _, _, metadata = cost_of([OPENAI], events)
    assert metadata == {"observed_models": [
        {"provider_key": "openai", "provider_model_id": "a"},
        {"provider_key": "openai", "provider_model_id": "b"}]}


@pytest.mark.parametrize(("model_id", "expected"), [
    ("claude-sonnet-4-2025-05-14", "claude-sonnet-4"),
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("model-2024-08-06", "model"),
    ("2024-08-06", "2024-08-06"),
    ("gpt-4o-24-08-06", "gpt-4o-24-08-06"),
    ("gpt-4o-2024-8-06", "gpt-4o-2024-8-06"),
    ("gpt-4o-2024-08-6x", "gpt-4o-2024-08-6x"),
    ("gpt-4o-202a-08-06", "gpt-4o-202a-08-06"),
    ("gpt-4o-2024-08-06-preview", "gpt-4o-2024-08-06-preview"),
    ("  gpt-4o  ", "gpt-4o"),
    ("gpt-4o-２０２４-08-06", "gpt-4o-２０２４-08-06"),
])
def test_strip_date_suffix(model_id: str, expected: str) -> None:
    """Only a trailing 4/2/2 ASCII-digit suffix on an id of ≥ 4 dash parts is stripped."""
    assert strip_date_suffix(model_id) == expected


@pytest.mark.parametrize(("provider", "model", "expected"), [
    ("openai", "gpt-4o", "exact"),
    ("openai", "gpt-4o-2024-08-06", "exact-dated"),
    ("openai", "gpt-4o-2024-11-20", "exact"),
    ("azure", "gpt-4o", None),
    ("openai", "gpt-4o-mini", None),
])
def test_lookup_price_exact_then_undated(provider: str, model: str,
                                         expected: str | None) -> None:
    """Exact (provider, id) wins over the undated fallback; providers must match."""
    rows = [PriceRow(provider_key="openai", provider_model_id="gpt-4o",
                     input_cost_per_million_tokens=1.0),
            PriceRow(provider_key="openai", provider_model_id="gpt-4o-2024-08-06",
                     input_cost_per_million_tokens=2.0)]
    found = lookup_price(rows, provider, model)
    names = {1.0: "exact", 2.0: "exact-dated"}
    assert (names[found.input_cost_per_million_tokens] if found else None) == expected
