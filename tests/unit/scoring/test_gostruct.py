"""Go's ``json.Unmarshal`` into a judge reply's struct (scoring/compat/gostruct.py): the
values and error texts AgentClash's ``parseJudgeScore`` / ``parseNWiseScore`` get."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.scoring.compat.gojson import UnmarshalError
from evalfleet.scoring.compat.gostruct import unmarshal_struct
from evalfleet.scoring.judges.parsing import ASSERTION, RANKING, SCORE

SCORE_TYPE = ('struct { Score float64 "json:\\"score\\""; '
              'Confidence string "json:\\"confidence\\"" }')


@pytest.mark.parametrize(("text", "decoded"), [
    pytest.param('{"score": 4}', {"score": 4.0, "confidence": ""}, id="plain"),
    pytest.param("null", {"score": 0.0, "confidence": ""}, id="null-is-the-zero-struct"),
    pytest.param('{"score": 5, "SCORE": 1}', {"score": 1.0, "confidence": ""},
                 id="the-last-key-wins"),
    pytest.param('{"Score": 5, "score": null}', {"score": 5.0, "confidence": ""},
                 id="null-leaves-a-scalar"),
    pytest.param('{"\u017fcore": 2, "other": [1]}', {"score": 2.0, "confidence": ""},
                 id="folded-key-and-unknown-key"),
    pytest.param('{"score": 1e-400}', {"score": 0.0, "confidence": ""}, id="underflow-is-0"),
])
def test_score_struct(text: str, decoded: dict[str, Any]) -> None:
    assert unmarshal_struct(text, SCORE) == decoded


@pytest.mark.parametrize(("text", "decoded"), [
    pytest.param('{"ranking": [null, "a"]}', {"ranking": ["", "a"], "ranked_ids": [],
                                             "confidence": ""}, id="null-item-is-empty"),
    pytest.param('{"ranking": ["a"], "ranking": null}', {"ranking": None, "ranked_ids": [],
                                                         "confidence": ""},
                 id="null-makes-a-slice-nil"),
])
def test_ranking_struct(text: str, decoded: dict[str, Any]) -> None:
    assert unmarshal_struct(text, RANKING) == decoded


@pytest.mark.parametrize(("text", "struct", "message"), [
    ("I cannot judge", SCORE, "invalid character 'I' looking for beginning of value"),
    ('{"score": 4', SCORE, "unexpected end of JSON input"),
    ('{"score": "4"}', SCORE,
     "json: cannot unmarshal string into Go struct field .score of type float64"),
    ('{"score": 1e400}', SCORE,
     "json: cannot unmarshal number 1e400 into Go struct field .score of type float64"),
    ('{"score": ' + "9" * 400 + "}", SCORE, "json: cannot unmarshal number " + "9" * 400
     + " into Go struct field .score of type float64"),
    ("[1]", SCORE, f"json: cannot unmarshal array into Go value of type {SCORE_TYPE}"),
    ('"x"', SCORE, f"json: cannot unmarshal string into Go value of type {SCORE_TYPE}"),
    ('{"confidence": 5, "score": "x"}', SCORE,
     "json: cannot unmarshal number into Go struct field .confidence of type string"),
    ('{"pass": "yes"}', ASSERTION,
     "json: cannot unmarshal string into Go struct field .pass of type bool"),
    ('{"ranking": "a"}', RANKING,
     "json: cannot unmarshal string into Go struct field .ranking of type []string"),
    ('{"ranking": [{}, 1]}', RANKING,
     "json: cannot unmarshal object into Go struct field .ranking of type string"),
    ('{"ranking": ["a"], "ranked_ids": 5}', RANKING,
     "json: cannot unmarshal number into Go struct field .ranked_ids of type []string"),
])
def test_go_error_texts(text: str, struct: Any, message: str) -> None:
    """Syntax first; then the first type error in document order, decoding going on."""
    with pytest.raises(UnmarshalError) as raised:
        unmarshal_struct(text, struct)
    assert str(raised.value) == message
