"""What judging needs from the operator, built from ``workers.settings`` (never the env)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import SecretStr

Api = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ProviderEndpoint:
    """Where one judge provider (``openai``, ``anthropic``, ``openrouter``, …) is served."""

    api: Api
    """``openai``: an OpenAI-compatible ``/chat/completions``; ``anthropic``: ``/v1/messages``."""
    base_url: str
    api_key: SecretStr = field(default_factory=lambda: SecretStr(""))
    """Sent in a header only; never logged, never recorded in events."""


@dataclass(frozen=True)
class JudgingConfig:
    """Judge provider endpoints and call policy."""

    endpoints: dict[str, ProviderEndpoint] = field(default_factory=dict)
    """By provider key; a judge model whose provider is absent fails its calls."""
    max_output_tokens: int = 1024
    """``max_tokens`` of every call, and its output worst case for the budget."""
    max_message_bytes: int = 256 * 1024
    """The largest message sent (UTF-8 bytes). A larger one is never sent: its call is
    stopped as a budget stops one (the judge scores 0). A model's context window or a
    provider's per-request token limit would refuse it anyway, and how it refuses (HTTP
    400, 413, or a 429 that looks like load) must not decide the verdict."""
    max_retries: int = 2
    """Retries of a call answered 429 / 5xx (or refused at connect)."""
    backoff_s: float = 0.5
    """First retry delay; doubled per retry, capped by ``max_backoff_s`` (Retry-After wins)."""
    max_backoff_s: float = 8.0
    """Also the wait between two rounds of the judging step."""
    total_deadline_s: float = 240.0
    """The judging step's one deadline, its rounds included (:mod:`.rounds`): a call is
    sent with its own timeout clipped to what is left; a call it leaves no time for fails
    on the provider's side, and its judge withholds the result rather than deciding it."""
    rounds: int = 3
    """How many times the judging step sends a call that failed on the provider's side
    (the first round included)."""
    anthropic_version: str = "2023-06-01"
