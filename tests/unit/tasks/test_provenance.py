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


def judged_pack() -> dict[str, object]:
    """PACK with an n_wise judge (shuffles its candidates: seeded) and a rubric judge of two
    models (no shuffle: no seeds)."""
    pack = copy.deepcopy(PACK)
    spec = pack["version"]["evaluation_spec"]  # type: ignore[index]
    spec["judge_mode"] = "hybrid"
    spec["llm_judges"] = [
        {"key": "rank", "mode": "n_wise", "prompt": "p", "model": "gpt-4o", "samples": 3,
         "context_from": ["final_output"]},
        {"key": "tone", "mode": "rubric", "rubric": "r", "models": ["gpt-4o", "claude-3-5"],
         "consensus": {"aggregation": "mean"}}]
    return pack


def test_the_spec_digest_follows_the_rules_scored_not_the_rest_of_the_pack() -> None:
    """A changed validator changes it; a changed sandbox file (not the spec) does not."""
    base = provenance(load_pack(PACK)).spec_digest
    rules = copy.deepcopy(PACK)
    rules["version"]["evaluation_spec"]["validators"][0]["expected_from"] = "literal:43"
    files = copy.deepcopy(PACK)
    files["version"]["sandbox"]["files"]["README.md"] = "other words"

    assert base is not None and base.startswith("sha256:")
    assert provenance(load_pack(rules)).spec_digest != base
    assert provenance(load_pack(files)).spec_digest == base
    assert provenance(load_pack(files)).pack_hash != provenance(load_pack(PACK)).pack_hash


def test_judge_models_and_the_seeds_of_the_run_are_recorded() -> None:
    """The seeds are the candidate-order seeds of the shuffling judge, one per sample, and
    depend on the run id alone (another run, other seeds; the same run, the same)."""
    pack = load_pack(judged_pack())

    got = provenance(pack, run_id="run-1")
    again, other = provenance(pack, run_id="run-1"), provenance(pack, run_id="run-2")

    assert got.judge_models == {"rank": ["gpt-4o"], "tone": ["gpt-4o", "claude-3-5"]}
    assert list(got.seeds) == ["rank"] and len(got.seeds["rank"]) == 3
    assert got.seeds == again.seeds and got.seeds != other.seeds


def test_the_supervisor_comes_from_the_drivers_resources() -> None:
    assert provenance(resources={"supervisor": "evalfleet-supervisor protocol 6"}
                      ).supervisor == "evalfleet-supervisor protocol 6"
    assert provenance(resources={}).supervisor is None
