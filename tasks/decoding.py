"""Decoding a run request off the wire: :func:`parse_request` turns a body into a
:class:`~tasks.messages.RunRequest` or a :class:`~tasks.messages.Rejection` whose problems
name their fields, before any sandbox starts. Besides the model's own rules it refuses what
would fail a run far later: numbers that are not finite, strings that are not Unicode text,
a submission nested too deeply, and the grader's own events in a submission.
:func:`decode_loosely` and :func:`fallback_run_id` give a request that cannot be parsed an
id to be rejected under.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from evalfleet.scoring.compat import as_float64

from .messages import MAX_CALLBACK_URL, FieldProblem, Rejection, RunRequest, callback_problem


def parse_request(body: str | bytes | dict[str, Any], max_bytes: int) -> RunRequest:
    """Decode and validate a request.

    Raises:
        Rejection: the body is too large, not JSON, or not a valid RunRequest.
    """
    if isinstance(body, str | bytes):
        if len(body) > max_bytes:
            raise Rejection([FieldProblem(field="request",
                                          message=f"is larger than {max_bytes} bytes")])
        try:
            body = json.loads(body)
        except ValueError as err:
            problem = FieldProblem(field="request", message=f"invalid JSON: {err}")
            raise Rejection([problem]) from None
        except RecursionError:  # 10k-deep nesting: a rejection, not a crash of the task
            problem = FieldProblem(field="request", message="invalid JSON: nested too deeply")
            raise Rejection([problem]) from None
    try:
        request = RunRequest.model_validate(body)
    except ValidationError as err:
        raise Rejection([_problem(e) for e in err.errors()]) from None
    except RecursionError:
        raise Rejection([FieldProblem(field="request", message="is nested too deeply")]) from None
    _check_values(body)
    _check_events(request.submission.events or [])
    return request


#: How deep a submission's values may nest (an event's payload, a tool call's arguments):
#: far past any agent's, and well inside what scoring can walk.
MAX_SUBMISSION_DEPTH = 64
#: The depth of an event's payload in the request (``request.submission.events[i].payload``).
PAYLOAD_DEPTH = 4


def _check_values(body: Any) -> None:
    """No number that is not finite (JSON has none; Python's reader takes ``NaN``) or is
    past float64's range (Python keeps a 400-digit integer whole; Go refuses it), no
    string that is not Unicode text (a lone surrogate, which ``\\ud800`` gives) and no
    submission nested past :data:`MAX_SUBMISSION_DEPTH`: each would fail the run far later
    (when it is scored, or its result written) or score as nonsense."""
    problems = _value_problems("request", body, 0)
    if problems:
        raise Rejection(problems)


def _value_problems(field: str, value: Any, depth: int) -> list[FieldProblem]:
    """The problems of ``value`` (at ``field``, ``depth`` levels into the request) and of
    every value in it: at most ten, by field."""
    problems: list[FieldProblem] = []
    stack: list[tuple[str, Any, int]] = [(field, value, depth)]
    while stack and len(problems) < 10:
        field, value, depth = stack.pop()
        problem = _value_problem(field, value, depth)
        if problem:
            problems.append(FieldProblem(field=field, message=problem))
        else:
            stack.extend(_children(field, value, depth))
    return sorted(problems, key=lambda p: p.field)


def _value_problem(field: str, value: Any, depth: int) -> str:
    """What is wrong with one value of the request itself ("" if nothing)."""
    if depth > MAX_SUBMISSION_DEPTH and field.startswith("request.submission"):
        return f"nests more than {MAX_SUBMISSION_DEPTH} levels deep"
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    if isinstance(value, int) and not isinstance(value, bool) and math.isinf(as_float64(value)):
        return "is a number beyond float64's range"
    if isinstance(value, str) and not _is_text(value):
        return "is not Unicode text (a lone surrogate)"
    if isinstance(value, dict) and not all(_is_text(k) for k in value if isinstance(k, str)):
        return "has a key that is not Unicode text (a lone surrogate)"
    return ""


def _children(field: str, value: Any, depth: int) -> list[tuple[str, Any, int]]:
    if isinstance(value, dict):
        return [(f"{field}.{key}", item, depth + 1) for key, item in value.items()]
    if isinstance(value, list):
        return [(f"{field}[{i}]", item, depth + 1) for i, item in enumerate(value)]
    return []


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Event types only the grader writes (captures, test runs, the evaluator, the judges, the
#: submission's manifest): the verdict's evidence, never part of a submission.
GRADER_EVENTS = "grader."


def _check_events(events: list[dict[str, Any]]) -> None:
    """The submitted trajectory must decode as AgentClash events (scoring reads them later;
    a malformed one must be a rejection here, not an exception in the pipeline), none of
    them the grader's: scoring takes the later of two grader events, and one sorted after
    the fleet's (no sequence number and a late time) would be the verdict. A payload sent
    as JSON text gets the checks of :func:`_check_values` once decoded: found by a
    red-team pass, a nested, huge-integer or lone-surrogate payload sent that way passed
    them and made scoring raise (the run void)."""
    from evalfleet.scoring.record import Event

    problems: list[FieldProblem] = []
    for index, event in enumerate(events):
        try:
            decoded = Event.model_validate(event)
        except ValidationError as err:
            problems += [_problem({**e, "loc": ("submission", "events", index, *e["loc"])})
                         for e in err.errors()]
            continue
        if decoded.type.startswith(GRADER_EVENTS):
            problems.append(FieldProblem(
                field=f"request.submission.events[{index}].type",
                message=f"{decoded.type!r} is the grader's own event: a submission cannot "
                        f"carry one (the fleet records what it captured, ran and judged)"))
        if isinstance(event.get("payload"), str | bytes):  # JSON text: decoded only now
            problems += _value_problems(f"request.submission.events[{index}].payload",
                                        decoded.payload, PAYLOAD_DEPTH)
    if problems:
        raise Rejection(problems)


def _problem(error: Any) -> FieldProblem:
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    field = ("request" + loc) if loc else "request"
    if error["type"] == "extra_forbidden":
        return FieldProblem(field=field, message=f'unknown field "{error["loc"][-1]}"')
    return FieldProblem(field=field, message=str(error["msg"]))


def decode_loosely(body: Any) -> Any:
    """The request body as JSON data when it parses, else as given."""
    if isinstance(body, str | bytes):
        try:
            return json.loads(body)
        except (ValueError, RecursionError):  # 10k-deep nesting must not crash the task
            return body
    return body


def fallback_run_id(body: Any) -> str:
    """A stable id for a request whose own ``run_id`` is unusable (so it can be rejected)."""
    raw = body.get("run_id") if isinstance(body, dict) else None
    if isinstance(raw, str) and raw and len(raw) <= 128:
        return raw
    text = body if isinstance(body, str | bytes) else json.dumps(body, sort_keys=True, default=str)
    data = text.encode() if isinstance(text, str) else text
    return "invalid-" + hashlib.sha256(data).hexdigest()[:24]


@dataclass(frozen=True)
class Life:
    """What the worker reads of a request before it is parsed: its ``match``,
    ``expires_at`` (Unix seconds) and ``callback_url``, each ``None`` when absent or not
    valid (the pipeline then rejects the request, naming the field)."""

    match: str | None = None
    expires_at: float | None = None
    callback_url: str | None = None


def life_of(body: Any) -> Life:
    """The :class:`Life` of a loosely decoded request."""
    if not isinstance(body, dict):
        return Life()
    try:
        fields = RunRequest.model_validate({"run_id": "x", "pack_ref": "x",
                                            "match": body.get("match"),
                                            "expires_at": body.get("expires_at")})
    except ValidationError:
        return Life(callback_url=callback_of(body))
    moment = fields.expires_at
    return Life(fields.match, None if moment is None else moment.timestamp(),
                callback_of(body))


def callback_of(body: dict[str, Any]) -> str | None:
    """The request's ``callback_url`` when it is one (a request rejected for another
    reason still has its rejection delivered there); else ``None``."""
    url = body.get("callback_url")
    if not isinstance(url, str) or len(url) > MAX_CALLBACK_URL:
        return None
    try:
        callback_problem(url)
    except ValueError:
        return None
    return url
