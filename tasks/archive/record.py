"""One archived run: the published result's exact bytes and the run's status record.

The object is gzip'd JSON::

    {"format": "evalfleet.archive/1", "run_id": "...", "result": "<the body, as text>",
     "result_sha256": "<hex>", "status": {"status": "scored", "scored_at": "...", ...}}

The published body is kept as a JSON *string*, never parsed and serialised again: its
UTF-8 bytes are exactly what was published, so a signature over them still verifies and
``result_sha256`` proves it. The encoding is deterministic (sorted keys, gzip without a
timestamp): archiving a run twice writes the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

FORMAT = "evalfleet.archive/1"


class RecordError(ValueError):
    """An archived object that is not an evalfleet archive record (or was altered)."""


@dataclass(frozen=True)
class ArchivedRun:
    """A run as the archive keeps it."""

    run_id: str
    body: bytes
    """The published result, byte for byte."""
    status: dict[str, str] = field(default_factory=dict)
    """The run's status record when it was archived (field → value, as in Redis)."""

    def encode(self) -> bytes:
        """The object's bytes (the same for the same run, every time)."""
        document = {"format": FORMAT, "run_id": self.run_id, "result": self.body.decode(),
                    "result_sha256": hashlib.sha256(self.body).hexdigest(),
                    "status": self.status}
        text = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return gzip.compress(text.encode(), compresslevel=6, mtime=0)

    @classmethod
    def decode(cls, data: bytes) -> ArchivedRun:
        """The run an object holds.

        Raises:
            RecordError: not gzip'd JSON of this format, or its body's digest differs.
        """
        document = _document(data)
        body = str(document["result"]).encode()
        if hashlib.sha256(body).hexdigest() != document.get("result_sha256"):
            raise RecordError(f"archived result of {document['run_id']!r} fails its digest")
        return cls(str(document["run_id"]), body, dict(document.get("status") or {}))


def _document(data: bytes) -> dict[str, Any]:
    """The JSON document of an object.

    Raises:
        RecordError: it is not one of this format.
    """
    try:
        document = json.loads(gzip.decompress(data))
    except (OSError, EOFError, ValueError) as err:
        raise RecordError(f"not an archive record: {err}") from err
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise RecordError(f"not an archive record of format {FORMAT}")
    return document


def text_record(record: dict[Any, Any]) -> dict[str, str]:
    """A Redis hash reply (bytes or text) as text."""
    return {_text(k): _text(v) for k, v in record.items()}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
