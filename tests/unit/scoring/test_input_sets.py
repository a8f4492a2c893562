"""Every input set of a pack is reachable: cases keyed ``<input_set>/<case_key>`` or by a bare
key no other set uses; an ambiguous bare key is refused naming both sets. Cases are built as
the platform stores and reads them (challengepack ``StoredPayload``, scoring evidence).
"""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.scoring import CaseError, SpecError, evaluate, load_pack
from evalfleet.scoring.spec.cases import find_case

SPEC = """\
    name: s
    version_number: 1
    judge_mode: deterministic
    validators:
      - {key: v, type: exact_match, target: final_output, expected_from: case.expectations.a}
    scorecard:
      dimensions: [correctness]
"""


def pack(sets: str, assets: str = "") -> str:
    return ("pack: {slug: p, name: P, family: f}\nversion:\n  number: 1\n" + assets
            + "  evaluation_spec:\n" + SPEC + "input_sets:\n" + sets)


TWO_SETS = pack("""\
  - key: real
    cases:
      - {challenge_key: c, case_key: merge-bug-real, expectations: [{key: a, value: fixed}]}
      - {challenge_key: c, case_key: shared, expectations: [{key: a, value: real}]}
  - key: eval
    cases:
      - {challenge_key: c, case_key: merge-bug-eval, expectations: [{key: a, value: eval}]}
      - {challenge_key: c, case_key: shared, expectations: [{key: a, value: eval}]}
""")


def completed(output: str) -> list[dict[str, Any]]:
    return [{"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:01Z",
             "payload": {"final_output": output}}]


def test_every_case_of_every_input_set_is_loaded() -> None:
    """The cases of both sets, in order (the shipped eval-awareness pilot has two sets)."""
    keys = [c.qualified_key for c in load_pack(TWO_SETS).cases]
    assert keys == ["real/merge-bug-real", "real/shared", "eval/merge-bug-eval", "eval/shared"]


@pytest.mark.parametrize(("key", "expected"), [
    ("merge-bug-eval", "eval/merge-bug-eval"), ("merge-bug-real", "real/merge-bug-real"),
    ("eval/shared", "eval/shared"), ("real/shared", "real/shared"),
], ids=["bare-unique-second-set", "bare-unique-first-set", "qualified-a", "qualified-b"])
def test_a_case_is_found_by_bare_or_qualified_key(key: str, expected: str) -> None:
    """A bare key works when unique across sets; ``<input_set>/<case_key>`` always works."""
    assert expected == load_pack(TWO_SETS).case(key).qualified_key  # type: ignore[union-attr]


def test_an_ambiguous_bare_key_names_both_sets() -> None:
    """``shared`` is in two sets: the lookup refuses it and names them."""
    with pytest.raises(CaseError) as raised:
        load_pack(TWO_SETS).case("shared")
    assert str(raised.value) == ('case key "shared" is ambiguous: input sets "eval" and "real" '
                                 'both have it; use "<input_set>/shared"')


def test_an_unknown_key_is_not_found() -> None:
    """No such case: ``Pack.case`` gives None, ``find_case`` says so."""
    loaded = load_pack(TWO_SETS)
    assert loaded.case("nope") is None
    with pytest.raises(CaseError, match='no case "nope" in the pack'):
        find_case(loaded.cases, "nope")


def test_the_chosen_case_is_what_gets_scored() -> None:
    """Scoring the second set's case reads that case's expectations."""
    loaded = load_pack(TWO_SETS)
    card = evaluate(loaded.spec, completed("eval"), [loaded.case("eval/shared")])
    assert (card.overall_score, card.passed) == (1.0, True)


@pytest.mark.parametrize(("sets", "expected"), [
    ("  - {cases: [{challenge_key: c, case_key: k}]}\n",
     [("input_sets[0].key", "is required")]),
    ("  - {key: a, cases: [{challenge_key: c, case_key: k}]}\n"
     "  - {key: a, cases: [{challenge_key: c, case_key: j}]}\n",
     [("input_sets[1].key", "must be unique")]),
    ("  - {key: a, cases: [{challenge_key: c, case_key: k}, {challenge_key: c, case_key: k}]}\n",
     [("input_sets[0].cases[1].case_key", "must be unique per challenge in the input set")]),
    ("  - {key: a, cases: [{challenge_key: c}]}\n",
     [("input_sets[0].cases[0].case_key", "is required")]),
], ids=["set-key-missing", "set-key-repeated", "case-key-repeated", "case-key-missing"])
def test_addressing_rules_are_agentclash_s(sets: str, expected: list[tuple[str, str]]) -> None:
    """challengepack ``ValidateBundle``'s key rules, with its field paths and messages."""
    with pytest.raises(SpecError) as raised:
        load_pack(pack(sets))
    assert expected == [(e.field, e.message) for e in raised.value.errors]


def test_legacy_items_become_cases() -> None:
    """A set with ``items`` (and no cases) has them as cases keyed by ``item_key``."""
    loaded = load_pack(pack("  - key: old\n    items:\n"
                            "      - {challenge_key: c, item_key: i1, payload: {q: 1}}\n"))
    [case] = loaded.cases
    assert (case.qualified_key, case.payload_value()) == ("old/i1", {"q": 1})


def test_payload_forms_follow_the_platform_store() -> None:
    """A payload-only case keeps its payload's JSON as written (exact integers); a case with
    expectations is stored as a document, so its numbers come back as float64."""
    loaded = load_pack(pack("""\
  - key: s
    cases:
      - {challenge_key: c, case_key: plain, payload: {n: 12345678901234567890}}
      - {challenge_key: c, case_key: doc, payload: {n: 12345678901234567890},
         expectations: [{key: a, value: 10}]}
      - {challenge_key: c, case_key: none}
"""))
    plain, doc, none = loaded.cases
    assert plain.payload == '{"n":12345678901234567890}'
    assert doc.payload == '{"n":12345678901234567000}'
    assert none.payload == "{}"
    assert doc.expectations[0].value == 10.0


def test_artifacts_come_from_version_assets_the_case_names() -> None:
    """``artifacts: [{key}]`` and an expectation's ``artifact_key`` resolve against
    ``version.assets``; the case's own ``assets`` are artifacts as given."""
    loaded = load_pack(pack("""\
  - key: s
    cases:
      - challenge_key: c
        case_key: k
        artifacts: [{key: doc}]
        expectations: [{key: a, artifact_key: img}]
        assets: [{key: own, path: /own.txt}]
""", assets="  assets:\n    - {key: doc, path: /d.txt, media_type: text/plain}\n"
             "    - {key: img, path: /i.png}\n    - {key: unused, path: /u}\n"))
    [case] = loaded.cases
    found = {a.key: a.path for a in case.artifacts}
    assert found == {"own": "/own.txt", "doc": "/d.txt", "img": "/i.png"}


def test_an_unstorable_payload_is_a_load_error() -> None:
    """The platform stores cases as JSON: a ``.nan`` payload value cannot be stored."""
    with pytest.raises(SpecError) as raised:
        load_pack(pack("  - key: s\n    cases: [{challenge_key: c, case_key: k,"
                       " payload: {x: .nan}}]\n"))
    found = [(e.field, e.message) for e in raised.value.errors]
    assert found == [("input_sets[0].cases[0].payload.x", "json: unsupported value: NaN")]
