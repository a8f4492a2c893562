"""Every RunResult records what produced it: code, semantics, pack hash, image and runtime."""

from __future__ import annotations

import copy

import pytest
from pipeline_support import PACK, request, run

from evalfleet.scoring import load_pack
from evalfleet.scoring.run.semantics import AGENTCLASH_COMMIT, SEMANTICS_VERSION
from evalfleet.tasks.evaluation.provenance import evalfleet_version, provenance
from evalfleet.tasks.messages import RunResult


def test_a_scored_run_records_code_semantics_and_pack_hash() -> None:
    """The pack hash is the loaded pack's; image and runtime are None until the sandbox
    driver reports them in ``resources``."""
    result, _ = run(request())

    got = result.provenance
    assert got is not None
    assert (got.evalfleet_version, got.scoring_semantics, got.agentclash_commit) == (
        evalfleet_version(), SEMANTICS_VERSION, AGENTCLASH_COMMIT)
    assert got.pack_hash == load_pack(PACK).content_hash
    assert got.pack_hash is not None and got.pack_hash.startswith("sha256:")
    assert got.pack_ref is None
    # The fake driver reports neither (empty): provenance says None, not "".
    assert (got.image_digest, got.runtime) == (result.resources.get("image_id") or None,
                                               result.resources.get("runtime") or None)


def test_a_rejected_request_records_the_code_but_no_pack() -> None:
    """A request that never loaded a pack still says which code answered it."""
    result, _ = run({"run_id": "r-bad", "pack": {"pack": {}}})

    assert result.outcome == "rejected"
    assert result.provenance is not None
    assert result.provenance.scoring_semantics == SEMANTICS_VERSION
    assert result.provenance.pack_hash is None


def test_the_pack_hash_follows_content_not_formatting() -> None:
    """A changed expectation changes the hash; the same pack as YAML-equivalent JSON does not."""
    changed = copy.deepcopy(PACK)
    changed["version"]["evaluation_spec"]["validators"][0]["expected_from"] = "literal:43"
    reordered = dict(reversed(list(copy.deepcopy(PACK).items())))

    assert load_pack(changed).content_hash != load_pack(PACK).content_hash
    assert load_pack(reordered).content_hash == load_pack(PACK).content_hash


@pytest.mark.parametrize(("resources", "expected"), [
    ({"image_id": "sha256:abc", "runtime": "runsc"}, ("sha256:abc", "runsc")),
    ({"image_id": "", "runtime": None}, (None, None)),
    ({}, (None, None)),
])
def test_image_and_runtime_come_from_the_drivers_resources(
        resources: dict[str, object], expected: tuple[str | None, str | None]) -> None:
    """Filled from ``resources["image_id"]`` / ``resources["runtime"]`` when present."""
    got = provenance(load_pack(PACK), "answer", dict(resources))

    assert (got.image_digest, got.runtime, got.pack_ref) == (*expected, "answer")


def test_results_stored_before_provenance_still_load() -> None:
    """An older stored result has no provenance: it reads as None, not as today's."""
    old = RunResult(run_id="r", outcome="scored").model_dump(exclude={"provenance"})

    assert RunResult.model_validate(old).provenance is None
