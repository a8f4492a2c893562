"""Why a gVisor sandbox died, read from the engine's records (:mod:`sandbox.docker.death`):
its state's ``OOMKilled`` flag, or else its ``oom`` event, which the engine publishes even
when it handled the exit first and so never set the flag."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.sandbox.docker import death

STARTED, FINISHED = "2026-11-27T21:40:01.123456789Z", "2026-11-27T21:40:02.5Z"


class Stream(list[dict[str, Any]]):
    """The engine's event stream: the events asked for, then closed."""

    closed = False

    def close(self) -> None:
        self.closed = True


class Client:
    """Records the one events query made; answers with ``events``."""

    def __init__(self, *events: dict[str, Any]) -> None:
        self.stream, self.asked = Stream(events), {}

    def events(self, **query: Any) -> Stream:
        self.asked = query
        return self.stream


class Container:
    """A container the engine calls running for ``running`` reloads, then stopped."""

    id = "c0ffee"

    def __init__(self, oom_killed: bool, running: int = 0) -> None:
        self.oom_killed, self.running, self.attrs = oom_killed, running, {}

    def reload(self) -> None:
        self.running -= 1
        self.attrs = {"State": {"Running": self.running >= 0, "OOMKilled": self.oom_killed,
                                "StartedAt": STARTED, "FinishedAt": FINISHED}}


def test_the_flag_answers_without_the_event_log() -> None:
    client = Client()
    assert death.died_of_memory(client, Container(oom_killed=True, running=2))
    assert client.asked == {}


def test_an_oom_event_after_the_exit_is_a_death_of_memory() -> None:
    """The flag lost (the exit handled first), the event still tells."""
    client = Client({"status": "oom", "id": Container.id})
    assert death.died_of_memory(client, Container(oom_killed=False))
    assert client.stream.closed
    assert client.asked["filters"] == {"type": "container", "container": "c0ffee",
                                       "event": "oom"}
    since, until = float(client.asked["since"]), float(client.asked["until"])
    assert since == pytest.approx(death.unix_time(STARTED))
    assert until == pytest.approx(death.unix_time(FINISHED) + death.OOM_EVENT_WAIT_S)


def test_a_death_with_neither_is_not_of_memory() -> None:
    client = Client()
    assert not death.died_of_memory(client, Container(oom_killed=False))
    assert client.stream.closed


def test_a_container_still_running_is_not_dead(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(death, "DEATH_WAIT_S", 0.05)
    client = Client({"status": "oom"})
    assert not death.died_of_memory(client, Container(oom_killed=True, running=10**6))
    assert client.asked == {}


def test_an_unreadable_time_is_no_evidence() -> None:
    state = {"StartedAt": "yesterday", "FinishedAt": FINISHED}
    assert not death.oom_event(Client({"status": "oom"}), "c0ffee", state)


@pytest.mark.parametrize(("stamp", "seconds"), [
    ("1970-01-01T00:00:00Z", 0.0),
    ("1970-01-01T00:00:01.5Z", 1.5),
    ("1970-01-01T00:01:00.000000001Z", 60.000000001),
])
def test_engine_times_in_seconds(stamp: str, seconds: float) -> None:
    assert death.unix_time(stamp) == pytest.approx(seconds, abs=1e-9)
