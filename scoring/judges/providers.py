"""Which provider serves a judge model: AgentClash's prefix table (docs/scoring.md §3).

The model id is trimmed and lower-cased, then matched against the prefixes in order; any
other id containing ``/`` is an OpenRouter slug. An unknown id maps to ``""`` and is
rejected at validation time.
"""

from __future__ import annotations

from typing import Final

PREFIXES: Final[tuple[tuple[str, str], ...]] = (
    ("claude-", "anthropic"),
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("text-embedding", "openai"),
    ("gemini-", "gemini"),
    ("grok-", "xai"),
    ("mistral-", "mistral"),
)
OPENROUTER: Final = "openrouter"


def infer_provider(model: str) -> str:
    """The provider key of a judge model id, or ``""`` when none is inferable."""
    lowered = model.strip().lower()
    for prefix, provider in PREFIXES:
        if lowered.startswith(prefix):
            return provider
    return OPENROUTER if "/" in lowered else ""
