"""Admission's pure parts: who is admitted next (stride scheduling), what a share's quotas
leave, the stored request's codec, and the held quota a status shows."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalfleet.tasks.admission.room import Parked
from evalfleet.tasks.admission.share import Share
from evalfleet.tasks.admission.shares import Strides, plan
from evalfleet.tasks.status import RunStatus


def admitted(weights: dict[str, float], rounds: int, room: int = 1) -> dict[str, int]:
    """How many runs each owner gets in ``rounds`` rounds of ``room``, all always waiting."""
    strides, counts = Strides(), dict.fromkeys(weights, 0)
    for _ in range(rounds):
        for _, owner, n in plan({"q": room}, {("q", o): 10**6 for o in weights}, {},
                                weights, strides):
            counts[owner] += n
    return counts


def test_weights_share_the_room_in_proportion() -> None:
    assert admitted({"a": 3.0, "b": 1.0}, 400) == {"a": 300, "b": 100}
    assert admitted({"a": 1.0, "b": 1.0, "c": 2.0}, 100, room=4) == {"a": 100, "b": 100,
                                                                       "c": 200}


@given(st.dictionaries(st.sampled_from("abcdef"), st.integers(1, 5), min_size=2))
def test_every_owner_gets_its_weight_within_one_run(weights: dict[str, int]) -> None:
    rounds = 12 * sum(weights.values())
    counts = admitted({o: float(w) for o, w in weights.items()}, rounds)
    total = sum(weights.values())
    assert all(abs(counts[o] - rounds * w / total) <= 1 for o, w in weights.items())


def test_an_owner_alone_takes_the_whole_room_at_once() -> None:
    assert plan({"q": 50}, {("q", "a"): 30}, {}, {}, Strides()) == [("q", "a", 30)]


def test_an_owner_coming_back_gets_its_share_not_a_burst() -> None:
    """b waited nothing for 100 rounds; when it comes back it alternates with a."""
    strides = Strides()
    for _ in range(100):
        plan({"q": 1}, {("q", "a"): 10**6}, {}, {}, strides)
        plan({"q": 1}, {("q", "a"): 10**6, ("q", "b"): 0}, {}, {}, strides)
    order = [plan({"q": 1}, {("q", "a"): 10**6, ("q", "b"): 10**6}, {}, {}, strides)[0][1]
             for _ in range(6)]
    assert order.count("b") == 3


def test_quotas_bound_the_grants_and_leave_the_room_to_others() -> None:
    grants = plan({"q": 10}, {("q", "a"): 100, ("q", "b"): 100}, {"a": 2, "b": None}, {},
                  Strides())
    assert dict(((o, n) for _, o, n in grants)) == {"a": 2, "b": 8}
    assert plan({"q": 10}, {("q", "a"): 100}, {"a": 0}, {}, Strides()) == []


def test_a_share_says_what_its_quotas_leave_and_which_one_holds() -> None:
    share = Share(max_in_flight=10, max_per_minute=5)
    assert Share().room(1000, 1000) == (None, None)
    assert share.room(in_flight=3, this_minute=1) == (4, None)
    assert share.room(in_flight=10, this_minute=0) == (0, "max_in_flight")
    assert share.room(in_flight=0, this_minute=5) == (0, "max_per_minute")
    assert share.describe("max_per_minute") == "5 runs admitted per minute (max_per_minute)"


@pytest.mark.parametrize(("fields", "problem"), [
    ({"weight": 0.0}, "weight 0.0: must be above 0"),
    ({"max_in_flight": 0}, "max_in_flight 0: must be at least 1"),
    ({"over_quota": "drop"}, "over_quota 'drop'")])
def test_a_share_that_cannot_be_is_refused_with_the_reason(fields: dict[str, object],
                                                          problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Share(**fields)  # type: ignore[arg-type]


def test_a_parked_request_comes_back_as_it_went() -> None:
    parked = Parked("1-0", "evalfleet.default", 7, 12.5, '{"run_id": "r\\u00e9"}')
    assert Parked.decode(parked.encode()) == parked


def test_a_queued_run_not_sent_shows_the_quota_that_holds_it() -> None:
    held = b'{"quota": "max_in_flight", "limit": 3}'
    waiting = RunStatus.from_record("r", {b"status": b"queued", b"queued_at": b"1"}, held)
    sent = RunStatus.from_record("r", {b"status": b"queued", b"sent": b"1-0"}, held)
    running = RunStatus.from_record("r", {b"status": b"running"}, held)
    assert waiting is not None and waiting.held == "max_in_flight"
    assert [s.held for s in (sent, running) if s is not None] == [None, None]
    assert RunStatus.from_record("r", {b"status": b"queued"}, b"not json").held is None  # type: ignore[union-attr]


def test_the_status_line_says_which_quota_holds_a_run() -> None:
    from evalfleet.workers.fleet_cli import status_line

    found = RunStatus.from_record("r", {b"status": b"queued", b"queued_at": b"0"},
                                  b'{"quota": "max_per_minute"}')
    assert found is not None
    assert status_line(found).startswith(
        "r: queued (held by its tenant's max_per_minute) since 1970-01-01T00:00:00Z")
