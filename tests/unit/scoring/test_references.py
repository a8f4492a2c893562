"""Evidence references: syntax and resolution of every form (docs/scoring.md §4.3)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import T0, completed, evidence_of

from evalfleet.scoring.record.references import is_supported, resolve

PAYLOAD = {"question": "q?", "answer": "x", "nums": [10, 1000000, {"deep": "d"}],
           "obj": {"b": 2, "a": "<&>"}}
ARTIFACTS = [{"key": "doc", "kind": "file", "path": "/data/doc.txt", "media_type": "text/plain"}]


def case(**fields: Any) -> dict[str, Any]:
    """A case mapping in pack form (challenge/case keys filled in)."""
    return {"challenge_key": "c", "case_key": "k", **fields}


def chain(hops: int) -> list[dict[str, Any]]:
    """Inputs i0 → i1 → … → i<hops> via ``source: input:``; the last has a value."""
    entries = [{"key": f"i{n}", "source": f"input:i{n + 1}"} for n in range(hops)]
    return [*entries, {"key": f"i{hops}", "value": "end"}]


def turn(kind: str, index: int, **payload: Any) -> dict[str, Any]:
    """A turn event (``turn.<kind>``) for ``turn_index``."""
    return {"type": f"turn.{kind}", "occurred_at": T0, "payload": {"turn_index": index, **payload}}


TRANSCRIPT = [
    turn("user.message", 0, content="hi"),
    turn("assistant.message", 0, content="hello"),
    turn("completed", 0, phase_id="p1"),
    turn("user.message", 1, content="2+2?"),
    turn("assistant.message", 1, content=""),
    turn("completed", 1, mismatch=True),
    turn("user.message", 2, content="again"),
    turn("assistant.message", 2, content="4"),
]


@pytest.mark.parametrize(("reference", "supported"), [
    pytest.param("final_output", True, id="final_output"),
    pytest.param("run.final_output", True, id="run.final_output"),
    pytest.param("challenge_input", True, id="challenge_input"),
    pytest.param("case.payload", True, id="case.payload"),
    pytest.param("case.payload.a.b", True, id="case.payload-path"),
    pytest.param("case.payload.", False, id="case.payload-blank-segment"),
    pytest.param("case.payloadx", False, id="case.payload-glued"),
    pytest.param("case.payloadx.y", False, id="case.payload-glued-path"),  # validation.go
    pytest.param("case.inputs. a ", True, id="case.inputs-spaced"),
    pytest.param("case.inputs.k", True, id="case.inputs"),
    pytest.param("case.inputs.k.p", True, id="case.inputs-path"),
    pytest.param("case.inputs", False, id="case.inputs-no-key"),
    pytest.param("case.inputs. ", False, id="case.inputs-blank-key"),
    pytest.param("case.expectations.k", True, id="case.expectations"),
    pytest.param("case.expectations..p", False, id="case.expectations-empty-segment"),
    pytest.param("artifact.doc", True, id="artifact"),
    pytest.param("artifact.doc.path", True, id="artifact-field"),
    pytest.param("artifact.", False, id="artifact-blank"),
    pytest.param("file:out", True, id="file"),
    pytest.param("file:  ", False, id="file-blank"),
    pytest.param("literal:", True, id="literal-empty"),
    pytest.param("literal: any thing", True, id="literal"),
    pytest.param("transcript.full", True, id="transcript.full"),
    pytest.param("transcript.from_mismatch", True, id="transcript.from_mismatch"),
    pytest.param("turn.expectations", True, id="turn.expectations"),
    pytest.param("transcript.last_n:3", True, id="last_n"),
    pytest.param("transcript.last_n:0", False, id="last_n-zero"),
    pytest.param("transcript.last_n:-1", False, id="last_n-negative"),
    pytest.param("transcript.last_n:x", False, id="last_n-not-int"),
    pytest.param("transcript.last_n:\u00b2", False, id="last_n-unicode-digit"),
    pytest.param("tool_calls", False, id="tool_calls-outside-assertion"),
    pytest.param("output", False, id="unknown"),
    pytest.param("", False, id="empty"),
])
def test_is_supported(reference: str, supported: bool) -> None:
    """Only the documented reference forms are accepted, every dotted segment non-blank."""
    assert is_supported(reference) is supported


def test_tool_calls_supported_only_when_allowed() -> None:
    """``tool_calls`` is a reference only as the target of tool_call_assertion."""
    assert is_supported("tool_calls", allow_tool_calls=True)


OK, GONE, ERR = "available", "unavailable", "error"


@pytest.mark.parametrize(("reference", "events", "cases", "state", "text"), [
    # final output
    pytest.param("final_output", [completed("done")], [], OK, "done", id="final_output"),
    pytest.param("run.final_output", [completed("done")], [], OK, "done", id="run.final_output"),
    pytest.param("final_output", [completed({"answer": "x", "other": 1})], [], OK, "x",
                 id="final_output-object-collapses"),
    pytest.param("final_output", [completed({"other": 1})], [], GONE,
                 "final output evidence is unavailable", id="final_output-object-not-accepted"),
    pytest.param("final_output", [], [], GONE, "final output evidence is unavailable",
                 id="final_output-missing"),
    # challenge input
    pytest.param("challenge_input", [], [], GONE, "challenge input evidence is unavailable",
                 id="challenge_input-no-case"),
    pytest.param("challenge_input", [], [case(payload={"a": 1}), case(payload={"a": 2})], GONE,
                 "challenge input evidence is unavailable", id="challenge_input-two-cases"),
    pytest.param("challenge_input", [], [case(payload={"question": "q", "text": "t"})], OK, "t",
                 id="challenge_input-loose"),
    pytest.param("challenge_input", [], [case(payload={"b": 1000000, "a": "<"})], OK,
                 '{"a":"\\u003c","b":1000000}', id="challenge_input-object-json"),
    pytest.param("challenge_input", [], [case(payload=' {"b": 1,  "a": 2} ')], OK,
                 '{"b": 1,  "a": 2}', id="challenge_input-raw-text-trimmed"),
    pytest.param("challenge_input", [], [case(payload='{"answer": "raw"}')], OK, "raw",
                 id="challenge_input-raw-text-loose"),
    # case.payload
    pytest.param("case.payload", [], [case(payload={"answer": "x", "other": 1})], OK, "x",
                 id="payload-collapse-trap"),
    # extractLooseString passes over "value" (not string-like) to "text" (engine_util.go)
    pytest.param("case.payload", [], [case(payload={"value": 5, "text": "t"})], OK,
                 "t", id="payload-value-not-string"),
    pytest.param("case.payload.question", [], [case(payload=PAYLOAD)], OK, "q?",
                 id="payload-key"),
    pytest.param("case.payload.nums.0", [], [case(payload=PAYLOAD)], OK, "10",
                 id="payload-array-index"),
    pytest.param("case.payload.nums.1", [], [case(payload=PAYLOAD)], OK, "1e+06",
                 id="payload-number-go-v"),
    pytest.param("case.payload.nums.2.deep", [], [case(payload=PAYLOAD)], OK, "d",
                 id="payload-index-then-key"),
    pytest.param("case.payload.obj", [], [case(payload=PAYLOAD)], OK,
                 '{"a":"\\u003c\\u0026\\u003e","b":2}', id="payload-object-json"),
    pytest.param("case.payload.nums.3", [], [case(payload=PAYLOAD)], GONE,
                 "evidence path is unavailable", id="payload-index-out-of-range"),
    pytest.param("case.payload.nums.x", [], [case(payload=PAYLOAD)], GONE,
                 "evidence path is unavailable", id="payload-non-index-on-array"),
    pytest.param("case.payload.missing", [], [case(payload=PAYLOAD)], GONE,
                 "evidence path is unavailable", id="payload-missing-key"),
    pytest.param("case.payload.question.more", [], [case(payload=PAYLOAD)], GONE,
                 "evidence path is unavailable", id="payload-walk-into-scalar"),
    pytest.param("case.payload", [], [], GONE, "case evidence is unavailable",
                 id="payload-no-case"),
    pytest.param("case.payload", [], [case(payload={}), case(payload={})], GONE,
                 "case evidence is ambiguous across multiple cases", id="payload-two-cases"),
    # case.inputs / case.expectations
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "value": "v"}])], OK, "v",
                 id="input-inline-value"),
    pytest.param("case.inputs.q.a.1", [], [case(inputs=[{"key": "q", "value": {"a": [0, 7]}}])],
                 OK, "7", id="input-value-path"),
    pytest.param("case.inputs.q.b", [], [case(inputs=[{"key": "q", "value": {"a": 1}}])], GONE,
                 "evidence path is unavailable", id="input-value-path-missing"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "value": 1000000}])], OK,
                 "1e+06", id="input-number-million-trap"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "value": None}])], OK, "null",
                 id="input-explicit-null"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "value": "1000000"}])], OK,
                 "1000000", id="input-string-value-not-reparsed"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "value": "[1, 2]"}])], OK,
                 "[1, 2]", id="input-json-looking-string-verbatim"),
    pytest.param("case.inputs.nope", [], [case(inputs=[{"key": "q", "value": "v"}])], GONE,
                 'case input "nope" is unavailable', id="input-missing-key"),
    pytest.param("case.expectations.answer", [],
                 [case(expectations=[{"key": "answer", "value": True}])], OK, "true",
                 id="expectation-value"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "value": "v",
                                                     "source": "input:r", "path": "/p"}])],
                 OK, "v", id="precedence-value-first"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "source": "input:r"},
                                                    {"key": "r", "value": "from r"}])],
                 OK, "from r", id="source-input"),
    pytest.param("case.inputs.q.a", [], [case(inputs=[{"key": "q", "source": "input:r"},
                                                      {"key": "r", "value": {"a": "deep"}}])],
                 OK, "deep", id="source-input-keeps-path"),
    pytest.param("case.inputs.i0", [], [case(inputs=chain(8))], OK, "end",
                 id="source-input-chain-8-hops"),
    pytest.param("case.inputs.i0", [], [case(inputs=chain(9))], ERR,
                 "evidence reference chain exceeds maximum depth",
                 id="source-input-chain-9-hops-error"),
    pytest.param("case.inputs.a", [], [case(inputs=[{"key": "a", "source": "input:b"},
                                                    {"key": "b", "source": "input:a"}])],
                 ERR, "evidence reference chain exceeds maximum depth",
                 id="source-input-cycle-error"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "source": "input:gone"}])],
                 GONE, 'case input "gone" is unavailable', id="source-input-missing"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "source": "artifact:doc",
                                                     "artifact_key": "other"}],
                                            artifacts=ARTIFACTS)],
                 OK, "/data/doc.txt", id="source-artifact-before-artifact-key"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "source": "artifact:nope"}],
                                            artifacts=ARTIFACTS)],
                 GONE, 'artifact "nope" is unavailable', id="source-artifact-missing"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "artifact_key": "doc",
                                                     "path": "/other"}],
                                            artifacts=ARTIFACTS)],
                 OK, "/data/doc.txt", id="artifact-key-before-path"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "path": "/in/file.txt"}])],
                 OK, "/in/file.txt", id="path-string-itself"),
    pytest.param("case.inputs.q", [], [case(inputs=[{"key": "q", "kind": "text"}])], GONE,
                 "evidence is unavailable", id="entry-without-anything"),
    pytest.param("case.inputs.q", [], [], GONE, "case evidence is unavailable",
                 id="inputs-no-case"),
    # artifacts
    pytest.param("artifact.doc", [], [case(artifacts=ARTIFACTS)], OK, "/data/doc.txt",
                 id="artifact-path-string"),
    pytest.param("artifact.doc.media_type", [], [case(artifacts=ARTIFACTS)], OK, "text/plain",
                 id="artifact-field"),
    pytest.param("artifact.doc.key", [], [case(artifacts=ARTIFACTS)], OK, "doc",
                 id="artifact-field-key"),
    pytest.param("artifact.doc.size", [], [case(artifacts=ARTIFACTS)], GONE,
                 "evidence path is unavailable", id="artifact-unknown-field"),
    pytest.param("artifact.nope", [], [case(artifacts=ARTIFACTS)], GONE,
                 'artifact "nope" is unavailable', id="artifact-missing"),
    pytest.param("artifact.doc", [], [case(artifacts=ARTIFACTS)] * 2, GONE,
                 "case evidence is ambiguous across multiple cases", id="artifact-two-cases"),
    # literal
    pytest.param("literal:x", [], [], OK, "x", id="literal"),
    pytest.param("literal:", [], [], OK, "", id="literal-empty"),
    pytest.param("literal: a:b ", [], [], OK, " a:b ", id="literal-verbatim"),
    # unsupported
    pytest.param("outputs", [], [], ERR, "unsupported evidence reference 'outputs'",
                 id="unsupported-error"),
])
def test_resolve(reference: str, events: list[dict[str, Any]], cases: list[dict[str, Any]],
                 state: str, text: str) -> None:
    """Each reference form resolves to a value, or is unavailable / an error with its reason."""
    resolution = resolve(reference, evidence_of(events, cases))
    assert resolution.state == state
    assert (resolution.value if state == OK else resolution.reason) == text


def captured(key: str, **payload: Any) -> dict[str, Any]:
    """A ``grader.verification.file_captured`` event for ``key``."""
    return {"type": "grader.verification.file_captured", "occurred_at": T0,
            "payload": {"key": key, **payload}}


LISTING = {"type": "grader.verification.directory_listed", "occurred_at": T0,
           "payload": {"key": "tree", "path": "/w", "entries": [
               {"path": "/w/a.py", "size": 12}, {"path": "/w/src", "size": 0, "is_dir": True}]}}


@pytest.mark.parametrize(("reference", "events", "state", "text"), [
    pytest.param("file:out", [captured("out", path="/w/o", exists=True, content="body")], OK,
                 "body", id="captured-exists"),
    pytest.param("file:out", [captured("out", path="/w/o", exists=True, content="a"),
                              captured("out", path="/w/o", exists=True, content="b")], OK, "b",
                 id="later-capture-overwrites"),
    pytest.param("file:out", [captured("out", path="/w/o", exists=False)], GONE,
                 'captured file "out" does not exist at path "/w/o"', id="captured-not-exists"),
    pytest.param("file:tree", [LISTING], OK,
                 '{"key":"tree","path":"/w","entries":[{"path":"/w/a.py","size":12},'
                 '{"path":"/w/src","size":0,"is_dir":true}]}', id="listing-json"),
    pytest.param("file:tree", [{**LISTING, "payload": {
        **LISTING["payload"], "truncated": True, "max_entries": 2, "dropped": 1,
        "error": "the listing timed out"}}], OK,
                 '{"key":"tree","path":"/w","entries":[{"path":"/w/a.py","size":12},'
                 '{"path":"/w/src","size":0,"is_dir":true}],"truncated":true,"dropped":1,'
                 '"error":"the listing timed out"}', id="listing-json-with-its-gaps"),
    pytest.param("file:out", [], GONE, 'file capture key "out" is unavailable',
                 id="no-capture-event"),
])
def test_resolve_file(reference: str, events: list[dict[str, Any]], state: str,
                      text: str) -> None:
    """``file:<k>`` reads captured content, a listing's JSON, or is unavailable with a reason."""
    resolution = resolve(reference, evidence_of(events))
    assert resolution.state == state
    assert (resolution.value if state == OK else resolution.reason) == text


@pytest.mark.parametrize(("reference", "events", "state", "text"), [
    pytest.param("transcript.full", TRANSCRIPT, OK,
                 "user[0]: hi\nassistant[0]: hello\nuser[1]: 2+2?\nuser[2]: again\n"
                 "assistant[2]: 4", id="full-skips-empty"),
    pytest.param("transcript.last_n:1", TRANSCRIPT, OK, "user[2]: again\nassistant[2]: 4",
                 id="last_n-1"),
    pytest.param("transcript.last_n:9", TRANSCRIPT, OK,
                 "user[0]: hi\nassistant[0]: hello\nuser[1]: 2+2?\nuser[2]: again\n"
                 "assistant[2]: 4", id="last_n-more-than-turns"),
    pytest.param("transcript.from_mismatch", TRANSCRIPT, OK,
                 "user[1]: 2+2?\nuser[2]: again\nassistant[2]: 4", id="from_mismatch"),
    pytest.param("transcript.from_mismatch", TRANSCRIPT[:3], GONE,
                 "transcript mismatch evidence is unavailable", id="from_mismatch-none"),
    pytest.param("turn.expectations", TRANSCRIPT, OK,
                 '[{"turn_index":0,"phase_id":"p1","mismatch":false},'
                 '{"turn_index":1,"mismatch":true},{"turn_index":2,"mismatch":false}]',
                 id="turn.expectations"),
    pytest.param("transcript.full", [], GONE, "transcript evidence is unavailable",
                 id="full-no-turns"),
])
def test_resolve_transcript(reference: str, events: list[dict[str, Any]], state: str,
                            text: str) -> None:
    """Transcript references render ``user[i]:``/``assistant[i]:`` lines and turn flags."""
    resolution = resolve(reference, evidence_of(events))
    assert resolution.state == state
    assert (resolution.value if state == OK else resolution.reason) == text


def test_unicode_digit_is_not_an_array_index() -> None:
    """A non-ASCII digit segment on an array is a missing step, not a crash."""
    evidence = evidence_of([], [case(payload={"a": [1, 2, 3]})])
    assert resolve("case.payload.a.\u00b2", evidence).reason == "evidence path is unavailable"
