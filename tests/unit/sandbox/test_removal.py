"""A removal the engine failed is asked again while the failure can pass (removing a real
container is in tests/integration/sandbox: every sandbox test ends in one).

The case behind it: Docker gives up a forced removal when the container's exit is not
confirmed within about 12 s of the kill — a gVisor sandbox under a fork bomb on a loaded
host — and the container, dead soon after, stayed on the engine until its deadline.
"""

from __future__ import annotations

import logging

import docker.errors
import pytest
import requests

from evalfleet.sandbox.docker import removal


def engine_error(status: int, message: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError(message, response=response, explanation=message)


KILL_UNCONFIRMED = engine_error(500, "Could not kill running container abc, cannot remove - "
                                     "tried to kill container, but did not receive an exit "
                                     "event")
IN_PROGRESS = engine_error(409, "removal of container abc is already in progress")
GONE = docker.errors.NotFound("No such container: abc")


class Container:
    """Fails each removal with the next of ``failures``, then removes."""

    id = "abc0123456789def"

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.asked = 0
        self.removed = False

    def remove(self, force: bool) -> None:
        assert force
        self.asked += 1
        if self.failures:
            raise self.failures.pop(0)
        self.removed = True


@pytest.mark.parametrize("failures", [
    (KILL_UNCONFIRMED,), (KILL_UNCONFIRMED, KILL_UNCONFIRMED), (IN_PROGRESS, GONE),
], ids=["kill-unconfirmed", "twice", "in-progress-then-gone"])
def test_a_failure_that_can_pass_is_asked_again(failures: tuple[Exception, ...]) -> None:
    container, slept = Container(*failures), []
    assert removal.remove(container, sleep=slept.append)
    assert container.asked == len(failures) + (not isinstance(failures[-1],
                                                              docker.errors.NotFound))
    assert slept == list(removal.PAUSES_S[:container.asked - 1])


@pytest.mark.parametrize("error", [
    requests.exceptions.ConnectionError("refused"),
    requests.exceptions.ReadTimeout("read timed out"),
], ids=["no-engine", "no-answer-in-time"])
def test_an_engine_missing_or_still_at_it_is_not_waited_for(
        caplog: pytest.LogCaptureFixture, error: Exception) -> None:
    """A timed-out removal is under way in the engine: asking again would hold the closer
    (and the runs queued behind it) for another client timeout."""
    container, slept = Container(error), []
    with caplog.at_level(logging.WARNING):
        assert not removal.remove(container, sleep=slept.append)
    assert (container.asked, slept) == (1, [])
    assert "could not remove sandbox abc012345678" in caplog.text


def test_a_container_already_gone_counts_as_removed() -> None:
    container = Container(GONE)
    assert removal.remove(container, sleep=pytest.fail)
    assert container.asked == 1


def test_an_engine_that_keeps_failing_is_given_up_after_the_last_pause(
        caplog: pytest.LogCaptureFixture) -> None:
    container, slept = Container(*[KILL_UNCONFIRMED] * 20), []
    with caplog.at_level(logging.WARNING):
        assert not removal.remove(container, sleep=slept.append)
    assert slept == list(removal.PAUSES_S)
    assert container.asked == len(removal.PAUSES_S) + 1
    assert "did not receive an exit event" in caplog.text
    assert 20 <= sum(removal.PAUSES_S) <= 60  # outlasts the engine's kill, within a drain


class Hangup:
    """The worker's line (a supervisor's channel, a keep-alive's lifeline): hanging up is
    recorded among the container's calls."""

    def __init__(self, container: Exiting) -> None:
        self.container = container

    def close(self) -> None:
        self.container.calls.append(("hang up", None))


class Exiting(Container):
    """A container whose main process was told to exit: ``wait`` answers with ``waited``
    (an exception is raised), recording the order of the engine calls."""

    def __init__(self, waited: Exception | None = None) -> None:
        super().__init__()
        self.waited, self.calls = waited, []

    def wait(self, timeout: float) -> dict[str, int]:
        self.calls.append(("wait", timeout))
        if self.waited is not None:
            raise self.waited
        return {"StatusCode": 0}

    def remove(self, force: bool) -> None:
        self.calls.append(("remove", force))
        super().remove(force)


def test_a_hung_up_sandbox_is_removed_once_it_stopped_by_itself() -> None:
    """No kill while it is still running (a gVisor sandbox killed by the engine can hold
    it for minutes: bug 17): the wait comes first, bounded."""
    container = Exiting()
    assert removal.remove(container, line=Hangup(container))
    assert container.calls == [("hang up", None), ("wait", removal.EXIT_WAIT_S),
                               ("remove", True)]


@pytest.mark.parametrize("waited", [
    requests.exceptions.ConnectionError("Read timed out."), GONE,
    engine_error(500, "engine trouble")], ids=["still-running", "gone", "engine-error"])
def test_a_hung_up_sandbox_is_removed_whatever_the_wait_says(waited: Exception) -> None:
    """Still running after the wait (a stuck supervisor), gone already, or an engine
    error: the forced removal follows all the same."""
    container = Exiting(waited)
    assert removal.remove(container, line=Hangup(container))
    assert [call[0] for call in container.calls] == ["hang up", "wait", "remove"]
    assert container.removed


def test_a_sandbox_not_hung_up_is_not_waited_for() -> None:
    """Without a line (a container this worker never attached to: a leftover, the
    reaper's) there is nobody to hang up on: straight to the removal."""
    container = Exiting()
    assert removal.remove(container)
    assert container.calls == [("remove", True)]
