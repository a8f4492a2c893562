"""Model cost in USD from token usage and the spec's price table (docs/scoring.md §15).

Usage comes per (provider, model) from ``model.call.completed`` events; when the run has
none, the run-level token counts are attributed to the single observed model. Each usage
row is priced by exact (provider_key, provider_model_id), then with a trailing
``-YYYY-MM-DD`` date suffix stripped. One unpriced row makes the whole cost unavailable.
Only input and output tokens are priced; ``total_tokens`` is reported, never charged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ..compat.goquote import quote
from ..spec.models import EvaluationSpec, PriceRow
from .evidence import Evidence

PER_MILLION = 1_000_000


class Cost(NamedTuple):
    """A cost outcome: USD (None when unavailable), the reason if not, and metadata."""

    usd: float | None
    reason: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class UsageRow:
    """Token usage of one (provider, model)."""

    provider_key: str
    provider_model_id: str
    input_tokens: float
    output_tokens: float
    total_tokens: float


def run_model_cost_usd(spec: EvaluationSpec, evidence: Evidence) -> Cost:
    """The run's model cost in USD, or why it cannot be known.

    Args:
        spec: The evaluation spec (its ``pricing.models`` table is read).
        evidence: The run's evidence (per-model usage, run-level tokens, observed models).

    Returns:
        ``Cost(usd, reason, metadata)``; ``usd`` is None and ``reason`` says why when the
        cost is unavailable. Metadata of an available cost holds a per-model ``breakdown``.
    """
    prices = spec.pricing.models if spec.pricing else []
    if not prices:
        return Cost(None, "model pricing is unavailable", {})
    rows = usage_rows(evidence)
    if isinstance(rows, Cost):
        return rows
    breakdown: list[dict[str, Any]] = []
    for row in rows:
        price = lookup_price(prices, row.provider_key, row.provider_model_id)
        if price is None:
            return _unpriced(row)
        breakdown.append(_priced(row, price))
    total = sum(entry["cost_usd"] for entry in breakdown)
    metadata = {"state": "available", "breakdown": breakdown, "total_usd": total,
                "priced_run": True}
    return Cost(total, "", metadata)


def usage_rows(evidence: Evidence) -> list[UsageRow] | Cost:
    """Per-model usage sorted by (provider, model), or the run-level fallback row."""
    if evidence.usage_by_model:
        return [UsageRow(p, m, u.input_tokens, u.output_tokens, u.total_tokens)
                for (p, m), u in sorted(evidence.usage_by_model.items())]
    if len(evidence.observed_models) != 1:
        observed = [{"provider_key": p, "provider_model_id": m}
                    for p, m in sorted(evidence.observed_models)]
        return Cost(None, "model usage evidence is unavailable", {"observed_models": observed})
    provider, model = evidence.observed_models[0]
    if (evidence.input_tokens, evidence.output_tokens, evidence.total_tokens) == (None,) * 3:
        return Cost(None, "model usage evidence is unavailable", _model_ref(provider, model))
    return [_run_level_row(provider, model, evidence)]


def _run_level_row(provider: str, model: str, evidence: Evidence) -> UsageRow:
    inputs, outputs = evidence.input_tokens or 0, evidence.output_tokens or 0
    total = evidence.total_tokens if evidence.total_tokens is not None else inputs + outputs
    return UsageRow(provider, model, inputs, outputs, total)


def lookup_price(prices: list[PriceRow], provider_key: str, model_id: str) -> PriceRow | None:
    """The price row for a model: exact id first, then the id without its date suffix."""
    exact = _find(prices, provider_key, model_id)
    if exact is not None:
        return exact
    undated = strip_date_suffix(model_id)
    return _find(prices, provider_key, undated) if undated != model_id else None


def _find(prices: list[PriceRow], provider_key: str, model_id: str) -> PriceRow | None:
    return next((row for row in prices if row.provider_key == provider_key
                 and row.provider_model_id == model_id), None)


def strip_date_suffix(model_id: str) -> str:
    """``claude-sonnet-4-2025-05-14`` → ``claude-sonnet-4``; other ids come back trimmed.

    The suffix is three dash-separated all-digit parts of lengths 4, 2, 2, and it is only
    stripped from ids with at least four parts.
    """
    trimmed = model_id.strip()
    parts = trimmed.split("-")
    if len(parts) < 4:
        return trimmed
    year, month, day = parts[-3:]
    if [len(year), len(month), len(day)] == [4, 2, 2] and all(map(_digits, parts[-3:])):
        return "-".join(parts[:-3])
    return trimmed


def _digits(text: str) -> bool:
    return bool(text) and all("0" <= ch <= "9" for ch in text)


def _priced(row: UsageRow, price: PriceRow) -> dict[str, Any]:
    cost = (row.input_tokens / PER_MILLION * price.input_cost_per_million_tokens
            + row.output_tokens / PER_MILLION * price.output_cost_per_million_tokens)
    return {**_model_ref(row.provider_key, row.provider_model_id),
            "input_tokens": row.input_tokens, "output_tokens": row.output_tokens,
            "total_tokens": row.total_tokens, "cost_usd": cost}


def _unpriced(row: UsageRow) -> Cost:
    reason = (f"model pricing is unavailable for provider {quote(row.provider_key)} "
              f"model {quote(row.provider_model_id)}")
    return Cost(None, reason, _model_ref(row.provider_key, row.provider_model_id))


def _model_ref(provider: str, model: str) -> dict[str, Any]:
    return {"provider_key": provider, "provider_model_id": model}

