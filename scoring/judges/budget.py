"""``scorecard.judge_limits`` as bookkeeping: every call reserves its worst case first.

A call's worst case is its input bound (one token per UTF-8 byte of the message — no
tokenizer emits a token shorter than a byte — plus a fixed per-message overhead) plus the
``max_tokens`` it asks for, priced with the spec's pricing table. A call is refused when
its worst case would take the run's judge spending past ``max_tokens`` or
``max_calls_usd``; a model without a price cannot run at all under ``max_calls_usd``.
After the call, the reservation is replaced by the reported usage (or kept whole when the
provider reported none). A limit of 0 (or absent) means no limit, as in AgentClash, whose
zero value is "unset".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..record.pricing import PER_MILLION, lookup_price
from ..spec.models import EvaluationSpec, PriceRow

MESSAGE_OVERHEAD_TOKENS: Final = 64


@dataclass(frozen=True)
class Reservation:
    """What one call may spend at most."""

    input_tokens: int
    output_tokens: int
    usd: float
    price: PriceRow | None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Charge:
    """What one call was charged."""

    tokens: int
    usd: float | None


def worst_case_input_tokens(message: str) -> int:
    """An upper bound of the input tokens of a one-message call."""
    return len(message.encode("utf-8")) + MESSAGE_OVERHEAD_TOKENS


def cost_usd(price: PriceRow | None, input_tokens: int, output_tokens: int) -> float | None:
    """USD of a token count at ``price`` (None without a price)."""
    if price is None:
        return None
    return (input_tokens / PER_MILLION * price.input_cost_per_million_tokens
            + output_tokens / PER_MILLION * price.output_cost_per_million_tokens)


@dataclass
class Budget:
    """The judge spending of one run against its limits."""

    max_tokens: int | None = None
    max_usd: float | None = None
    prices: tuple[PriceRow, ...] = ()
    spent_tokens: int = 0
    spent_usd: float = 0.0

    @classmethod
    def for_spec(cls, spec: EvaluationSpec) -> Budget:
        """The budget ``spec.scorecard.judge_limits`` sets (no limits when absent)."""
        limits = spec.scorecard.judge_limits
        prices = tuple(spec.pricing.models) if spec.pricing else ()
        if limits is None:
            return cls(prices=prices)
        return cls(max_tokens=limits.max_tokens or None, max_usd=limits.max_calls_usd or None,
                   prices=prices)

    def reserve(self, provider_key: str, model: str, message: str,
                max_output_tokens: int) -> Reservation | str:
        """Hold the call's worst case, or say why the budget refuses it."""
        price = lookup_price(list(self.prices), provider_key, model)
        held = Reservation(worst_case_input_tokens(message), max_output_tokens, 0.0, price)
        usd = cost_usd(price, held.input_tokens, held.output_tokens)
        refusal = self._refusal(model, held.tokens, usd)
        if refusal:
            return refusal
        self.spent_tokens += held.tokens
        self.spent_usd += usd or 0.0
        return Reservation(held.input_tokens, held.output_tokens, usd or 0.0, price)

    def _refusal(self, model: str, tokens: int, usd: float | None) -> str:
        if self.max_tokens is not None and self.spent_tokens + tokens > self.max_tokens:
            return (f"judge_limits.max_tokens {self.max_tokens} would be exceeded: "
                    f"{self.spent_tokens} tokens spent, this call may use {tokens}")
        if self.max_usd is None:
            return ""
        if usd is None:
            return (f'judge model "{model}" has no price in pricing.models and cannot run '
                    "under judge_limits.max_calls_usd")
        if self.spent_usd + usd > self.max_usd:
            return (f"judge_limits.max_calls_usd {self.max_usd} would be exceeded: "
                    f"{self.spent_usd:.6f} USD spent, this call may cost {usd:.6f}")
        return ""

    def settle(self, held: Reservation, input_tokens: int | None,
               output_tokens: int | None) -> Charge:
        """Replace the reservation by the reported usage (the whole reservation if none)."""
        self.spent_tokens -= held.tokens
        self.spent_usd -= held.usd
        if input_tokens is None or output_tokens is None:
            input_tokens, output_tokens = held.input_tokens, held.output_tokens
        usd = cost_usd(held.price, input_tokens, output_tokens)
        self.spent_tokens += input_tokens + output_tokens
        self.spent_usd += usd or 0.0
        return Charge(input_tokens + output_tokens, usd)

    def release(self, held: Reservation) -> None:
        """Give a reservation back (the call was never sent)."""
        self.spent_tokens -= held.tokens
        self.spent_usd -= held.usd
