"""Signed results (``tasks.signatures``): what a signature covers, what breaks it, and
which keys a verifier trusts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st
from pipeline_support import request, run

from evalfleet.tasks.canonical import canonical, es6_number
from evalfleet.tasks.messages import RunResult, cap_size
from evalfleet.tasks.publish import sealed
from evalfleet.tasks.signatures import Signer, check
from evalfleet.tasks.signing_keys import (
    KeyProblem,
    key_id_of,
    private_pem,
    public_pem,
    public_text,
    trusted_keys,
)

pytestmark = pytest.mark.unit

SIGNER = Signer.generate()
TRUSTED = {SIGNER.key_id: SIGNER.public_key}


@pytest.fixture(scope="module")
def scored() -> RunResult:
    result, _ = run(request())
    return result


def edited(body: str, **members: Any) -> str:
    document = json.loads(body)
    document.update(members)
    return json.dumps(document)


def test_a_sealed_result_verifies_and_reads_back_as_a_result(scored: RunResult) -> None:
    body = SIGNER.seal(scored)

    assert check(body, TRUSTED).verdict == "verified"
    read = RunResult.model_validate_json(body)
    assert read.signature is not None and read.signature.key_id == SIGNER.key_id
    assert read.model_copy(update={"signature": None}) == scored


def test_the_signature_covers_the_rfc8785_form_of_the_whole_result(scored: RunResult) -> None:
    """``value`` is Ed25519 over RFC 8785 of the result without ``signature.value``: any
    RFC 8785 implementation rebuilds the message (here the reference library on the
    whole document)."""
    document = json.loads(SIGNER.seal(scored))
    value = document["signature"].pop("value")
    raw = __import__("base64").urlsafe_b64decode(value + "=" * (-len(value) % 4))

    SIGNER.public_key.verify(raw, rfc8785.dumps(document))  # raises if not


@pytest.mark.parametrize("member", ["scorecard", "outcome", "events", "worker", "metadata"])
def test_a_changed_member_is_named(scored: RunResult, member: str) -> None:
    body = SIGNER.seal(scored)
    document = json.loads(body)
    document[member] = "changed" if member != "metadata" else {"k": "v"}

    found = check(json.dumps(document), TRUSTED)

    assert (found.verdict, found.changed) == ("tampered", [member])


def test_a_changed_number_deep_inside_is_tampering(scored: RunResult) -> None:
    document = json.loads(SIGNER.seal(scored))
    document["scorecard"]["score"] = 999

    found = check(json.dumps(document), TRUSTED)

    assert (found.verdict, found.changed) == ("tampered", ["scorecard"])


def test_added_and_removed_members_are_named(scored: RunResult) -> None:
    document = json.loads(SIGNER.seal(scored))
    del document["reason"]
    document["bonus"] = 1

    assert check(json.dumps(document), TRUSTED).changed == ["reason", "bonus"]


def test_reformatting_the_text_is_not_tampering(scored: RunResult) -> None:
    """The signature is over values, not bytes: indentation and member order are free."""
    document = json.loads(SIGNER.seal(scored))
    shuffled = dict(reversed(list(document.items())))

    assert check(json.dumps(shuffled, indent=3), TRUSTED).verdict == "verified"


def test_a_changed_signature_or_digest_is_tampering_with_no_member_named(
        scored: RunResult) -> None:
    document = json.loads(SIGNER.seal(scored))
    document["signature"]["fields"]["run_id"] = "AAAAAAAAAAAA"

    found = check(json.dumps(document), TRUSTED)

    assert found.verdict == "tampered" and found.changed == ["run_id"]
    document = json.loads(SIGNER.seal(scored))
    document["signature"]["value"] = document["signature"]["value"][::-1]
    assert check(json.dumps(document), TRUSTED).changed == []


def test_another_trusted_key_claimed_does_not_verify(scored: RunResult) -> None:
    """A result re-labelled with another trusted key's id fails: the key must match."""
    other = Signer.generate()
    document = json.loads(SIGNER.seal(scored))
    document["signature"]["key_id"] = other.key_id

    found = check(json.dumps(document), {**TRUSTED, other.key_id: other.public_key})

    assert found.verdict == "tampered"


def test_a_result_resigned_by_an_unknown_key_is_refused(scored: RunResult) -> None:
    """Changing a score and signing again with a key of one's own gets nowhere."""
    forger = Signer.generate()
    forged = forger.sign_document(json.loads(edited(SIGNER.seal(scored), outcome="scored")))

    found = check(forged, TRUSTED)

    assert (found.verdict, found.key_id) == ("unknown_key", forger.key_id)


def test_unsigned_and_malformed_results_say_so(scored: RunResult) -> None:
    assert check(scored.to_json(), TRUSTED).verdict == "unsigned"
    assert check("not json", TRUSTED).verdict == "malformed"
    assert check("[1]", TRUSTED).verdict == "malformed"
    assert check('{"a": NaN, "signature": {}}', TRUSTED).verdict == "malformed"
    document = json.loads(SIGNER.seal(scored))
    document["signature"]["alg"] = "none"
    found = check(json.dumps(document), TRUSTED)
    assert found.verdict == "malformed" and "alg" in found.reason


def test_rotation_trusts_old_and_new_keys_at_once(scored: RunResult) -> None:
    old, new = Signer.generate("fleet-2026-10"), Signer.generate("fleet-2026-11")
    trusted = trusted_keys([f"fleet-2026-10={public_text(old.public_key)}",
                            f"fleet-2026-11={public_text(new.public_key)}"])

    assert check(old.seal(scored), trusted).verdict == "verified"
    assert check(new.seal(scored), trusted).verdict == "verified"
    assert check(new.seal(scored), trusted_keys([public_text(new.public_key)])).verdict == \
        "unknown_key"  # a chosen id must be given with the key


def test_keys_are_read_as_base64_pem_or_files(tmp_path: Path) -> None:
    key = Signer.generate().public_key
    file = tmp_path / "k.pem"
    file.write_text(public_pem(key))

    for given_as in (public_text(key), public_pem(key), str(file)):
        assert list(trusted_keys([given_as])) == [key_id_of(key)]
    with pytest.raises(KeyProblem, match="32 bytes"):
        trusted_keys(["c2hvcnQ="])
    with pytest.raises(KeyProblem, match="neither"):
        trusted_keys(["not a key at all!"])
    with pytest.raises(KeyProblem, match="PEM"):
        trusted_keys([private_pem(Signer.generate().key)])


def test_integers_past_53_bits_and_lone_surrogates_still_give_a_signed_result(
        scored: RunResult) -> None:
    """Text a submission controls never stops publication: the result is made I-JSON."""
    odd = scored.model_copy(update={"metadata": {"big": 2**64, "huge": 10**400,
                                                 "text": "a\ud800b", "ok": 2**53 - 1}})
    body = SIGNER.seal(odd)

    assert check(body, TRUSTED).verdict == "verified"
    metadata = json.loads(body)["metadata"]
    assert float(metadata.pop("big")) == float(2**64)  # the nearest double, as ES writes it
    assert metadata == {"huge": str(10**400), "text": "a\ufffdb", "ok": 2**53 - 1}


def test_the_signature_is_added_after_the_size_cap(scored: RunResult) -> None:
    """A capped result is signed as capped, and the signed body stays within the cap."""
    big = scored.model_copy(update={"events": [*scored.events, {
        "type": "system.run.completed", "payload": {"stdout": "x" * 200_000}}]})
    cap = len(scored.to_json().encode()) + 60_000

    body = sealed(big, cap, SIGNER)

    assert len(body.encode()) <= cap
    assert json.loads(body)["dropped"] == ["event output texts"]
    assert check(body, TRUSTED).verdict == "verified"
    assert cap_size(big, cap).dropped == ["event output texts"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53 + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20)
BIG_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20)


@given(st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k != "signature"),
                       BIG_JSON, max_size=6))
def test_any_json_document_round_trips_through_its_text(document: dict[str, Any]) -> None:
    """Whatever the values (floats, deep text, big integers), the published text parses
    back to what was signed."""
    body = SIGNER.sign_document(document)

    assert check(body, TRUSTED).verdict == "verified"


@given(JSON)
def test_the_canonical_form_is_rfc8785s(value: Any) -> None:
    """The fast path (the json module's C encoder on a normalized copy) and the careful one
    write exactly what the reference implementation writes, names beyond the BMP too."""
    assert canonical(value) == rfc8785.dumps(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_double_is_written_as_ecmascript_writes_it(number: float) -> None:
    assert es6_number(number) == rfc8785.dumps(number).decode()


@pytest.mark.parametrize("number", [1.0, -0.0, 1e21, 1e20, 1e-7, 1e-6, 1e-4, 9.999e-5,
                                    2.0**53, 2.0**53 + 2, 1e16, 5e-324, 1.7976931348623157e308])
def test_the_doubles_at_the_edges_of_each_form(number: float) -> None:
    assert canonical({"n": [number]}) == rfc8785.dumps({"n": [number]})


def test_the_published_body_is_canonical_json_itself(scored: RunResult) -> None:
    body = SIGNER.seal(scored)

    assert rfc8785.dumps(json.loads(body)) == body.encode()
