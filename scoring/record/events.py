"""AgentClash events: decoding, and the ordering scoring reads them in (docs/scoring.md §4.1)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator


class Event(BaseModel):
    """One run event: ``{type, sequence_number?, occurred_at, payload}``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    type: str
    sequence_number: int | None = None
    occurred_at: datetime | None = None
    payload: dict[str, Any] = {}

    @field_validator("payload", mode="before")
    @classmethod
    def _decode_payload(cls, value: Any) -> Any:
        if isinstance(value, str | bytes):
            try:
                value = json.loads(value) if value.strip() else {}
            except RecursionError:
                raise ValueError("is nested too deeply") from None
        return {} if value is None else value

    @field_validator("occurred_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


_EPOCH = datetime.min.replace(tzinfo=UTC)


def order_events(events: list[Event]) -> list[Event]:
    """Sequenced events by sequence number first, then the rest by time and type (stable)."""
    sequenced = [e for e in events if e.sequence_number and e.sequence_number > 0]
    unsequenced = [e for e in events if not (e.sequence_number and e.sequence_number > 0)]
    sequenced.sort(key=lambda e: e.sequence_number or 0)
    unsequenced.sort(key=lambda e: (e.occurred_at or _EPOCH, e.type))
    return sequenced + unsequenced


def decode_events(raw: list[Any]) -> list[Event]:
    """Events from plain mappings (or Event instances)."""
    return [e if isinstance(e, Event) else Event.model_validate(e) for e in raw]
