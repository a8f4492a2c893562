"""Requests that cannot succeed are rejected before any sandbox, naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipeline_support import MiB, request, run, with_pack


def _deep(levels: int) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for _ in range(levels):
        nested = {"x": nested}
    return nested


def _text_payload(payload: str) -> dict[str, Any]:
    """A request whose one event's payload is JSON text (AgentClash's wire allows it)."""
    return request(submission={"events": [{"type": "tool.call.completed", "payload": payload}]})


REJECTIONS = [
    ("not-json", "{nope", "request", "invalid JSON"),
    ("unknown-field", request(colour="red"), "request.colour", 'unknown field "colour"'),
    ("no-pack", {"run_id": "r"}, "request", "exactly one of pack or pack_ref"),
    ("bad-run-id", request(run_id="no spaces"), "request.run_id", "should match pattern"),
    ("spec-error", with_pack(lambda p: p["version"]["evaluation_spec"].update(name="")),
     "pack.version.evaluation_spec.name", "is required"),
    ("unknown-ref", {"run_id": "r", "pack_ref": "nope"}, "request.pack_ref",
     'names no registered pack "nope"'),
    ("no-such-case", request(case_key="c9"), "request.case_key", 'no case "c9" in the pack'),
    ("unknown-profile", with_pack(lambda p: p["version"]["sandbox"].update(profile="gpu")),
     "pack.version.sandbox.profile", 'names no registered profile "gpu"'),
    ("network", with_pack(lambda p: p["version"]["sandbox"].update(network_access=True)),
     "pack.version.sandbox.network_access", "needs a profile that allows egress"),
    ("collision", request(submission={"files": {"README.md": "mine"}}),
     "request.submission.files.README.md", "collides with a file of the pack"),
    ("bad-base64", request(submission={"files": {"a.bin": {"content": "!!", "encoding":
                                                           "base64"}}}),
     "request.submission.files.a.bin", "invalid base64"),
    ("too-large", json.dumps(request(metadata={"pad": "x" * 9 * MiB})), "request",
     "is larger than"),
    ("collision-spelled-otherwise", request(submission={"files": {"./README.md": "mine"}}),
     "request.submission.files../README.md", "collides with a file of the pack"),
    # A path the workspace cannot hold was an infra_error (the fleet's failure, retried).
    ("path-up", request(submission={"files": {"../x": ""}}), "request.submission.files.../x",
     "'..' component"),
    ("path-elsewhere", request(submission={"files": {"/tmp/x": ""}}),
     "request.submission.files./tmp/x", "not a file inside /workspace"),
    ("path-empty", request(submission={"files": {"": ""}}), "request.submission.files.",
     "bad path"),
    # Both failed the run when its result was written: internal_error, retried 3 times.
    ("lone-surrogate", request(submission={"final_output": "a\ud800b"}),
     "request.submission.final_output", "lone surrogate"),
    ("lone-surrogate-key", request(metadata={"\udc80": 1}), "request.metadata",
     "lone surrogate"),
    ("nan", '{"run_id": "r", "pack_ref": "p", "submission": {"events": [{"type": "x", '
            '"payload": {"usage": {"input_tokens": NaN}}}]}}',
     "request.submission.events[0].payload.usage.input_tokens", "finite"),
    ("minus-infinity", '{"run_id": "r", "pack_ref": "p", "metadata": {"x": [-Infinity]}}',
     "request.metadata.x[0]", "finite"),
    # A step of 10^400 ms raised OverflowError in scoring: internal_error, retried 3 times.
    ("past-float64", '{"run_id": "r", "pack_ref": "p", "submission": {"events": [{"type": '
                     '"system.step.completed", "payload": {"step_index": 1, "duration_ms": 1'
                     + "0" * 400 + '}}]}}',
     "request.submission.events[0].payload.duration_ms", "beyond float64's range"),
    # 400 levels of a tool call's arguments overflowed scoring's recursion: internal_error.
    ("deep-event", request(submission={"events": [{"type": "tool.call.completed",
                                                   "payload": {"arguments": _deep(400)}}]}),
     "request.submission.events[0].payload.arguments" + ".x" * 60, "more than 64 levels"),
    # The same three, in a payload sent as JSON text (decoded after the checks, it passed
    # them, and scoring raised: RecursionError, OverflowError, UnicodeEncodeError).
    ("deep-text-payload", _text_payload('{"tool_name": "t", "arguments": ' + "[" * 500
                                        + "]" * 500 + "}"),
     "request.submission.events[0].payload.arguments" + "[0]" * 60, "more than 64 levels"),
    ("huge-text-payload", _text_payload('{"tool_name": "t", "arguments": {"a": 1'
                                        + "0" * 400 + "}}"),
     "request.submission.events[0].payload.arguments.a", "beyond float64's range"),
    ("surrogate-text-payload", _text_payload('{"final_output": "x\\ud800"}'),
     "request.submission.events[0].payload.final_output", "lone surrogate"),
]


@pytest.mark.parametrize(("body", "field", "message"), [r[1:] for r in REJECTIONS],
                         ids=[r[0] for r in REJECTIONS])
def test_bad_requests_are_rejected_before_any_sandbox(body: Any, field: str,
                                                      message: str) -> None:
    """A request that cannot succeed is a rejected result naming the field; no container."""
    result, factory = run(body)

    assert result.outcome == "rejected"
    assert factory.sandboxes == []
    assert any(p.field == field and message in p.message for p in result.errors), result.errors


