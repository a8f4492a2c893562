"""``evalfleet verify``: a result's signature, then its scorecard against its evidence —
exit 0 only when both hold; every other finding has its own exit code and names what."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from pipeline_support import PACK, request, run

from evalfleet.scoring import load_pack
from evalfleet.tasks.evaluation.verification import PackUnavailable, verify
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.platform.cancels import cancelled
from evalfleet.tasks.signatures import Signer
from evalfleet.tasks.signing_keys import public_text
from evalfleet.workers.cli import main
from evalfleet.workers.verify_cli import EXITS

pytestmark = pytest.mark.unit

SIGNER = Signer.generate()
TRUSTED = {SIGNER.key_id: SIGNER.public_key}


def scored(answer: str, run_id: str) -> RunResult:
    result, _ = run(request(run_id=run_id, submission={
        "files": {"answer.txt": answer}, "commands": [{"run": f"echo {answer}"}]}))
    assert result.outcome == "scored"
    return result


@pytest.fixture(scope="module")
def win() -> RunResult:
    return scored("42", "run-win")


@pytest.fixture(scope="module")
def loss() -> RunResult:
    return scored("41", "run-loss")


@pytest.fixture
def pack_file(tmp_path: Path) -> Path:
    path = tmp_path / "pack.json"
    path.write_text(json.dumps(PACK))
    return path


def verify_cli(tmp_path: Path, body: str, pack: Path, *keys: str) -> Result:
    file = tmp_path / "result.json"
    file.write_text(body)
    given = keys or (public_text(SIGNER.public_key),)
    args = ["verify", str(file), "--pack", str(pack), *(a for k in given
                                                         for a in ("--public-key", k))]
    return CliRunner().invoke(main, args)


def changed(body: str, **members: Any) -> str:
    document = json.loads(body)
    document.update(members)
    return json.dumps(document)


def test_a_signed_result_whose_evidence_scores_the_same_verifies(
        tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    said = verify_cli(tmp_path, SIGNER.seal(win), pack_file)

    assert said.exit_code == 0, said.output
    assert said.output.startswith("VERIFIED: run-win")
    assert "same scorecard" in said.output


def test_a_changed_field_exits_10_and_names_it(
        tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    said = verify_cli(tmp_path, changed(SIGNER.seal(win), worker="elsewhere"), pack_file)

    assert (said.exit_code, EXITS["tampered"]) == (10, 10), said.output
    assert "TAMPERED: run-win" in said.output and "changed: worker" in said.output


def test_a_swapped_scorecard_exits_13_and_names_what_the_evidence_says(
        tmp_path: Path, pack_file: Path, win: RunResult, loss: RunResult) -> None:
    """The loss's result wearing the win's scorecard (rating too, as a careful forger
    would): the signature fails, and the evidence scores to the loss."""
    assert win.scorecard is not None and loss.scorecard is not None
    body = changed(SIGNER.seal(loss), scorecard=win.scorecard.model_dump(mode="json"),
                   rating=json.loads(win.to_json())["rating"])

    said = verify_cli(tmp_path, body, pack_file)

    assert said.exit_code == 13, said.output
    assert "SCORECARD_MISMATCH: run-loss" in said.output
    assert f"score: 1000 recorded, {loss.scorecard.score} from the evidence" in said.output


def test_a_result_signed_by_an_unknown_key_exits_11(
        tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    other = Signer.generate()

    said = verify_cli(tmp_path, other.seal(win), pack_file)

    assert said.exit_code == 11, said.output
    assert f"signed by '{other.key_id}', which is not trusted" in said.output


def test_an_unsigned_result_exits_12(tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    said = verify_cli(tmp_path, win.to_json(), pack_file)

    assert said.exit_code == 12 and "UNSIGNED" in said.output


def test_a_result_whose_evidence_was_cut_exits_14(
        tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    cut = win.model_copy(update={"events": [], "dropped": ["event output texts", "events"]})

    said = verify_cli(tmp_path, SIGNER.seal(cut), pack_file)

    assert said.exit_code == 14, said.output
    assert "evidence was cut for size (event output texts, events)" in said.output


def test_what_is_not_a_result_exits_15(tmp_path: Path, pack_file: Path) -> None:
    said = verify_cli(tmp_path, "[1, 2]", pack_file)
    assert said.exit_code == 15

    body = SIGNER.sign_document({"run_id": "r", "outcome": "won big"})
    said = verify_cli(tmp_path, body, pack_file)
    assert said.exit_code == 15 and "outcome" in said.output


def test_a_fleet_signed_result_the_evidence_disagrees_with_exits_13(
        tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    """Signed, unchanged, yet not what its evidence gives (a fleet's bug, or semantics
    since changed): never exit 0."""
    assert win.scorecard is not None
    wrong = win.model_copy(update={"scorecard": win.scorecard.model_copy(update={"score": 999})})

    said = verify_cli(tmp_path, SIGNER.seal(wrong), pack_file)

    assert said.exit_code == 13 and "the signature holds" in said.output


def test_a_cancelled_result_is_verified_by_its_signature_alone(tmp_path: Path,
                                                               pack_file: Path) -> None:
    _, body = cancelled("run-c", b"match-1", SIGNER.seal)

    said = verify_cli(tmp_path, body, pack_file)

    assert said.exit_code == 0 and "outcome cancelled" in said.output


def test_no_key_or_the_wrong_pack_is_invalid_input(
        tmp_path: Path, pack_file: Path, win: RunResult) -> None:
    file = tmp_path / "r.json"
    file.write_text(SIGNER.seal(win))
    said = CliRunner().invoke(main, ["verify", str(file), "--pack", str(pack_file)])
    assert said.exit_code == 2 and "no public key" in said.output

    other = tmp_path / "other.json"
    other.write_text(json.dumps({**PACK, "pack": {"slug": "other"}}))
    said = verify_cli(tmp_path, SIGNER.seal(win), other)
    assert said.exit_code == 2 and "not the one run run-win was scored with" in said.output


def test_verify_names_no_pack_when_none_is_found(win: RunResult) -> None:
    def nothing(result: RunResult) -> Any:
        raise PackUnavailable("no pack")

    with pytest.raises(PackUnavailable):
        verify(SIGNER.seal(win), TRUSTED, nothing)
    assert verify(SIGNER.seal(win), TRUSTED, lambda _: load_pack(PACK)).verdict == "verified"
