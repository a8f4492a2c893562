"""Both stores, against the real thing: a local directory and a real S3 server
(SeaweedFS on loopback). What the archive relies on: bytes come back as written, a key
written twice holds the same bytes, a missing key is None, and listings come from the
store's own prefix listing."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from evalfleet.tasks.archive import Archive, ArchivedRun, Store, StoreError, open_store
from evalfleet.tasks.messages import RunResult


@pytest.fixture(params=["file", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path, seaweedfs: Any) -> Store:
    """A fresh store of each kind (the S3 one under a prefix of its own; every test here
    names the shared server, so that xdist keeps them on its worker)."""
    if request.param == "file":
        made = open_store(f"file://{tmp_path}/archive")
    else:
        made = open_store(seaweedfs.url(f"t-{uuid.uuid4().hex[:8]}"))
    assert made is not None
    return made


def test_bytes_come_back_as_written_and_a_rewrite_is_the_same(store: Store) -> None:
    data = bytes(range(256)) * 9

    store.put("runs/a.json.gz", data)
    store.put("runs/a.json.gz", data)

    assert store.get("runs/a.json.gz") == data
    assert store.get("runs/missing.json.gz") is None


def test_a_listing_is_the_stores_own_and_stays_under_its_prefix(store: Store) -> None:
    for key in ("by-match/m1/r2", "by-match/m1/r1", "by-match/m10/r3", "by-day/2026-11-29/r1"):
        store.put(key, b"")

    assert list(store.keys("by-match/m1/")) == ["by-match/m1/r1", "by-match/m1/r2"]
    assert list(store.keys("by-match/none/")) == []


def test_a_run_is_found_by_its_id_and_listed_by_its_match_and_day(store: Store) -> None:
    """The published bytes are kept untouched (odd spacing, escapes and non-ASCII stay as
    they were), and the run is listed under its match and its day."""
    body = RunResult(run_id="r:1@x", outcome="scored", match="m-1").to_json()
    body = body.replace('"outcome"', ' "outcome" ').replace("}", ', "note": "é\\u00e9"}', 1)
    archive = Archive(store)

    archive.write(ArchivedRun("r:1@x", body.encode(), {"status": "scored",
                                                       "scored_at": "1764374400.5"}),
                  "2025-11-29", "m-1")

    found = archive.run("r:1@x")
    assert found is not None and found.body == body.encode()
    assert archive.match_runs("m-1") == ["r:1@x"]
    assert list(archive.day_runs("2025-11-29")) == ["r:1@x"]
    status = archive.status("r:1@x")
    assert status is not None and status.status == "scored"
    assert archive.run("other") is None


def test_a_store_that_is_not_there_raises_our_error() -> None:
    """A store that cannot be reached is StoreError (our failure), not a missing run."""
    dead = open_store("s3://k:s@bucket/p?endpoint=http://127.0.0.1:9")
    assert dead is not None

    with pytest.raises(StoreError):
        dead.put("runs/x.json.gz", b"x")
    with pytest.raises(StoreError):
        dead.get("runs/x.json.gz")
