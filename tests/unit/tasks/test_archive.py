"""The archive's pure parts: the key layout, the record's codec, the file store, the
backlog's refusal rule, and that the slim client never imports boto3."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalfleet.tasks.archive import (
    Archive,
    ArchivedRun,
    RecordError,
    StoreError,
    layout,
    open_store,
)
from evalfleet.tasks.archive.backlog import Backlog, Limits, refusal
from evalfleet.tasks.archive.file_store import FileStore

MiB = 1024 * 1024


def test_a_run_is_found_from_its_id_alone_and_browsed_by_day_and_match() -> None:
    assert layout.run_key("r:1@x") == "runs/r:1@x.json.gz"
    assert layout.markers("r1", "2026-11-29", "m-7") == ["by-day/2026-11-29/r1",
                                                        "by-match/m-7/r1"]
    assert layout.markers("r1", "2026-11-29", None) == ["by-day/2026-11-29/r1"]
    assert layout.day_of(1764374400.0) == "2025-11-29"


@pytest.mark.parametrize("hostile", ["../x", "..", ".", "a/b", "é", "%2F"])
def test_a_hostile_id_stays_one_key_component_and_comes_back(hostile: str) -> None:
    name = layout.name(hostile)

    assert "/" not in name and name not in {"", ".", ".."}
    assert layout.run_id_of(f"by-match/m/{name}") == hostile


def test_an_empty_id_is_still_a_key() -> None:
    assert layout.run_key("") == "runs/%00.json.gz"


def test_the_record_keeps_the_published_bytes_and_encodes_the_same_every_time() -> None:
    body = '{"run_id": "r1",  "outcome":"scored", "x": "\\u00e9é\\n"}'.encode()
    run = ArchivedRun("r1", body, {"status": "scored", "scored_at": "1.5"})

    first, second = run.encode(), run.encode()

    assert first == second
    assert ArchivedRun.decode(first) == run


def test_an_altered_record_is_refused() -> None:
    document = json.loads(gzip.decompress(ArchivedRun("r1", b'{"a":1}').encode()))
    document["result"] = '{"a":2}'
    altered = gzip.compress(json.dumps(document).encode())

    with pytest.raises(RecordError, match="digest"):
        ArchivedRun.decode(altered)
    with pytest.raises(RecordError):
        ArchivedRun.decode(b"not gzip")


def test_stores_are_opened_by_scheme(tmp_path: Path) -> None:
    assert open_store("none") is None
    assert isinstance(open_store(f"file://{tmp_path}"), FileStore)
    with pytest.raises(ValueError, match="scheme"):
        open_store("ftp://x/y")
    with pytest.raises(ValueError, match="local directory"):
        open_store("file://host/x")


def test_the_file_store_writes_whole_files_and_refuses_keys_that_leave_it(
        tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.put("runs/a.json.gz", b"1")
    store.put("runs/a.json.gz", b"2")

    assert store.get("runs/a.json.gz") == b"2"
    assert list(store.keys("runs/")) == ["runs/a.json.gz"]
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["a.json.gz"]
    with pytest.raises(StoreError):
        store.put("../escape", b"x")


def test_a_file_store_that_cannot_be_written_raises_our_error(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("a file where a directory should be")

    with pytest.raises(StoreError, match="cannot write"):
        FileStore(tmp_path).put("runs/a.json.gz", b"x")


@pytest.mark.parametrize(("backlog", "refused"), [
    (Backlog(0, 99 * MiB, 100 * MiB), False),       # full, but nothing waits: not ours
    (Backlog(5, 50 * MiB, 100 * MiB), False),       # room left
    (Backlog(5, 81 * MiB, 100 * MiB), True),        # past refuse_at while results wait
    (Backlog(5, 900 * MiB, 0), False),              # no maxmemory, no count cap
])
def test_a_backlog_refuses_new_runs_only_when_redis_would_fill(backlog: Backlog,
                                                               refused: bool) -> None:
    assert (refusal(backlog, Limits(refuse_at=0.8)) is not None) == refused


def test_a_count_cap_refuses_whatever_the_memory() -> None:
    reason = refusal(Backlog(10, 0, 0), Limits(max_results=10))

    assert reason is not None and "10 results behind" in reason


def test_the_slim_client_imports_no_boto3() -> None:
    code = ("import sys; import evalfleet.tasks.platform, evalfleet.tasks.archive; "
            "assert 'boto3' not in sys.modules and 'botocore' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_tenant_with_a_store_of_its_own_is_archived_there_only(tmp_path: Path) -> None:
    """acme has a store of its own; globex, without one, is under the fleet's
    ``tenants/globex/``; None is the fleet's own archive."""
    archive = Archive.at(f"file://{tmp_path}/fleet", {"acme": f"file://{tmp_path}/acme"})
    assert archive is not None
    for tenant in ("acme", "globex", None):
        archive.of_tenant(tenant).store.put("runs/r.json.gz", (tenant or "fleet").encode())

    assert (tmp_path / "acme" / "runs" / "r.json.gz").read_bytes() == b"acme"
    assert (tmp_path / "fleet" / "tenants" / "globex" / "runs" / "r.json.gz").read_bytes() \
        == b"globex"
    assert (tmp_path / "fleet" / "runs" / "r.json.gz").read_bytes() == b"fleet"
    assert not (tmp_path / "fleet" / "tenants" / "acme").exists()


def test_a_tenant_store_that_names_none_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tenant 'acme': its archive URL names no store"):
        Archive.at(f"file://{tmp_path}", {"acme": "none"})
