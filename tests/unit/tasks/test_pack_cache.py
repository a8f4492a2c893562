"""Loaded packs kept between runs (:mod:`tasks.evaluation.pack_cache`): each run a copy of its own,
an edited file read again, nothing kept of a pack that does not load."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evalfleet.scoring import SpecError
from evalfleet.tasks.evaluation import pack_cache
from evalfleet.tasks.evaluation.pack_cache import PackCache, cache_key

PACK: dict[str, Any] = {
    "pack": {"slug": "kept"},
    "version": {"evaluation_spec": {
        "name": "kept", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "says", "type": "contains", "target": "final_output",
                        "expected_from": "literal:42"}],
        "scorecard": {"dimensions": ["correctness"]}}},
    "input_sets": [{"key": "default", "cases": [{"case_key": "c1", "payload": {"n": 7}}]}],
}


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every source the cache had to load."""
    seen: list[Any] = []
    real = pack_cache.load_pack

    def counting(source: Any) -> Any:
        seen.append(source)
        return real(source)

    monkeypatch.setattr(pack_cache, "load_pack", counting)
    return seen


def test_the_same_pack_is_loaded_once_and_each_run_gets_its_own_copy(loads: list[Any]) -> None:
    cache = PackCache()
    first = cache.load(copy.deepcopy(PACK))
    first.spec.validators[0].key = "changed by a run"
    first.cases[0].case_key = "changed"
    first.manifest["pack"]["slug"] = "changed"

    second = cache.load(copy.deepcopy(PACK))

    assert len(loads) == 1
    assert second is not first
    assert second.spec.validators[0].key == "says"
    assert second.cases[0].case_key == "c1"
    assert second.manifest["pack"]["slug"] == "kept"
    assert second.content_hash == first.content_hash


def test_another_pack_is_loaded_for_itself(loads: list[Any]) -> None:
    cache = PackCache()
    other = copy.deepcopy(PACK)
    other["version"]["evaluation_spec"]["validators"][0]["expected_from"] = "literal:43"

    assert cache.load(PACK).spec.validators[0].expected_from == "literal:42"
    assert cache.load(other).spec.validators[0].expected_from == "literal:43"
    assert len(loads) == 2


def test_an_edited_pack_file_is_read_again(tmp_path: Path, loads: list[Any]) -> None:
    cache, path = PackCache(), tmp_path / "pack.json"
    path.write_text(json.dumps(PACK))
    cache.load(path)
    cache.load(path)
    edited = copy.deepcopy(PACK)
    edited["version"]["evaluation_spec"]["name"] = "edited"
    path.write_text(json.dumps(edited))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))

    assert cache.load(path).spec.name == "edited"
    assert len(loads) == 2


def test_a_pack_that_does_not_load_is_not_kept(loads: list[Any]) -> None:
    cache, broken = PackCache(), copy.deepcopy(PACK)
    broken["version"]["evaluation_spec"]["validators"][0]["type"] = "no_such_type"

    for _ in range(2):
        with pytest.raises(SpecError):
            cache.load(broken)
    assert len(loads) == 2


def test_the_least_recently_used_pack_goes_first(loads: list[Any]) -> None:
    cache = PackCache(size=2)
    packs = [copy.deepcopy(PACK) for _ in range(3)]
    for number, pack in enumerate(packs):
        pack["version"]["evaluation_spec"]["version_number"] = number + 1
    cache.load(packs[0])
    cache.load(packs[1])
    cache.load(packs[0])  # the most recent now
    cache.load(packs[2])  # the cache is full: packs[1] goes

    cache.load(packs[0])
    cache.load(packs[1])
    assert [p["version"]["evaluation_spec"]["version_number"] for p in loads] == [1, 2, 3, 2]


def test_one_line_text_and_huge_packs_are_never_kept() -> None:
    huge = copy.deepcopy(PACK)
    huge["pack"]["padding"] = "x" * (pack_cache.MAX_TEXT_BYTES + 1)

    assert cache_key("packs/answer/pack.yaml") is None
    assert cache_key(huge) is None
    assert cache_key(Path("/no/such/pack.yaml")) is None
    assert cache_key("pack:\n  slug: x\n") is not None
