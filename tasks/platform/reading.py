"""What both clients make of Redis's replies when they read results and statuses back
(:class:`~.client.EvalfleetClient`, :class:`~.async_client.AsyncEvalfleetClient`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ..archive import Archive
from ..messages import RunResult
from ..status import RunStatus

log = logging.getLogger("evalfleet.tasks.platform.client")
#: Results fetched (and acknowledged) per round trip by ``results``.
FETCH_CHUNK = 10
#: Entries of the results stream read per ``XREADGROUP``/``XAUTOCLAIM``.
READ_COUNT = 100


def result(raw: bytes | str | None) -> RunResult | None:
    """A stored result, or None."""
    return None if raw is None else RunResult.model_validate_json(raw)


def published(raws: Iterable[bytes | None]) -> list[RunResult]:
    """The results among ``raws`` (an ``MGET``'s reply)."""
    return [RunResult.model_validate_json(raw) for raw in raws if raw is not None]


def statuses(run_ids: list[str], records: list[Any]) -> list[RunStatus]:
    """The statuses of ``run_ids`` from their records (``HGETALL`` each), known ones only."""
    found = (RunStatus.from_record(r, record) for r, record in zip(run_ids, records,
                                                                    strict=True))
    return [status for status in found if status is not None]


def archived_runs(archive: Archive, match: str, known: set[str]) -> list[RunStatus]:
    """The archive's runs of ``match`` not in ``known`` (Redis forgot them), in the order
    they were first seen.

    Raises:
        tasks.archive.StoreError: the archive could not be listed or read.
    """
    found = (archive.status(r) for r in archive.match_runs(match) if r not in known)
    return sorted((s for s in found if s is not None),
                  key=lambda s: (min(s.at.values(), default=0.0), s.run_id))


def announced(message: dict[str, Any] | None, run_ids: set[str]) -> bool:
    """Whether to read again: a quiet second passed, or one of ``run_ids`` was published."""
    return message is None or message["data"].decode(errors="replace") in run_ids


def entries(reply: Any) -> list[Any]:
    """The stream entries of an ``XREADGROUP`` reply."""
    return [e for _, stream_entries in reply or [] for e in stream_entries]


def claimed(reply: Any) -> list[Any]:
    """The stream entries of an ``XAUTOCLAIM`` reply."""
    _, found, *_ = reply
    return list(found)


def run_id(fields: dict[bytes, bytes] | None) -> str:
    """The run id a results-stream entry names ("" for a trimmed entry)."""
    return (fields or {}).get(b"run_id", b"").decode()


def entry_result(fields: dict[bytes, bytes] | None, raw: bytes | None,
                 group: str) -> RunResult | None:
    """The result a group's entry names; None (with a warning) when it expired."""
    if raw is None:  # the result expired, or the entry was trimmed while pending
        log.warning("results: group %s skips %s: its result expired before it was read",
                    group, run_id(fields) or "a trimmed entry")
        return None
    return RunResult.model_validate_json(raw)


def fetched(replies: list[Any], acked: bool) -> list[Any]:
    """The result bodies of a fetch's replies (after the ``XACK``'s, when it had one)."""
    return list(replies[1:] if acked else replies)


def created(err: Exception | None) -> bool:
    """Whether ``XGROUP CREATE`` made the group (``err``: what it raised, if anything).

    Raises:
        Exception: ``err``, unless it says the group exists.
    """
    if err is None:
        return True
    if "BUSYGROUP" not in str(err):
        raise err
    return False


def missed_warning(group: str, missed: int) -> None:
    """Log how many results the stream dropped before ``group`` read them."""
    if missed:
        log.warning("results: group %s was away too long: %d results expired before it "
                    "read them", group, missed)


def no_result(run_ids: Iterable[str], timeout: float) -> TimeoutError:
    """The error of a wait that ran out."""
    names = sorted(run_ids)
    if len(names) == 1:
        return TimeoutError(f"no result for run {names[0]!r} within {timeout} s")
    return TimeoutError(f"no result within {timeout} s for {', '.join(names)}")
