"""The fleet's signing key file (``workers.fleet_key``): made once, whole, shared."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evalfleet.tasks.signing_keys import load_private
from evalfleet.workers.fleet_key import fleet_signer, key_file_text
from evalfleet.workers.settings import SigningSettings

pytestmark = pytest.mark.unit


def test_workers_racing_to_make_the_key_all_get_the_one_made(tmp_path: Path) -> None:
    path = tmp_path / "signing.key"
    with ThreadPoolExecutor(8) as pool:
        texts = set(pool.map(lambda _: key_file_text(path), range(32)))

    assert len(texts) == 1 and texts == {path.read_text()}
    load_private(texts.pop())  # a whole key
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert [p.name for p in tmp_path.iterdir()] == ["signing.key"]  # no draft left


def test_a_key_that_cannot_be_read_stops_the_worker_naming_where(tmp_path: Path) -> None:
    path = tmp_path / "signing.key"
    path.write_text("not a key")

    with pytest.raises(SystemExit, match=f"the signing key \\({path}\\): .*neither"):
        fleet_signer(SigningSettings(key_file=path))
    with pytest.raises(SystemExit, match=r"the signing key file .*: "):
        fleet_signer(SigningSettings(key_file=tmp_path / "missing-dir" / "k"))


def test_no_key_set_signs_with_a_key_of_the_workers_life() -> None:
    first, second = fleet_signer(SigningSettings()), fleet_signer(SigningSettings())

    assert first.key_id != second.key_id
