"""On the real engine: the cause of a container's death as :mod:`sandbox.docker.death`
reads it. A memory bomb's death is found both in the container's state and in the engine's
event log (what answers when the state lost the flag), and a SIGKILL from outside in
neither. The containers are made here with the docker SDK: pid 1 is the program."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_support import IMAGES, TEST_LABELS, left_over

from evalfleet.sandbox.docker import death
from evalfleet.sandbox.docker.labels import LABEL_RUN

#: The bomb waits for ``/tmp/go``, written once ``start`` has returned: the engine's shim
#: starts watching the container's memory cgroup for OOM kills only once the container has
#: started, and a bomb that fires before that leaves neither the flag nor the ``oom``
#: event (1 of 12 on a loaded host). A sandbox's candidate always runs well after its
#: start; a pid 1 that blows up at once is this test's own artefact.
BOMB = ("import os, time\n"
        "while not os.path.exists('/tmp/go'): time.sleep(0.01)\n"
        "a = []\nwhile True: a.append(bytearray(8 << 20))")


@pytest.fixture
def make(docker_client: Any, runtime: str) -> Iterator[Any]:
    """Starts a container of ``argv`` on the runtime under test, 64 MiB of memory; removes
    every one at the end."""
    run_id = f"test-death-{uuid.uuid4().hex[:12]}"

    def started(*argv: str) -> Any:
        container = docker_client.containers.create(
            IMAGES["python"], list(argv), user="1000:1000", network_mode="none",
            cap_drop=["ALL"], mem_limit="64m", memswap_limit="64m", runtime=runtime,
            labels={**TEST_LABELS, LABEL_RUN: run_id}, detach=True)
        container.start()
        return container

    yield started
    for container in left_over(docker_client, run_id):
        container.remove(force=True)
    assert left_over(docker_client, run_id) == [], "the host is not clean"


def test_a_memory_bomb_died_of_memory(docker_client: Any, make: Any) -> None:
    container = make("python3", "-c", BOMB)
    # Detached: the bomb may take the sandbox down before an attached exec's stream ends,
    # and under gVisor that stream then never ends (a CI run waited 300 s on it).
    container.exec_run(["touch", "/tmp/go"], user="1000:1000", detach=True)
    assert container.wait(timeout=60)["StatusCode"] == 137
    assert death.died_of_memory(docker_client, container)
    state = death.stopped_state(container)
    assert state is not None
    assert death.oom_event(docker_client, container.id, state)  # the flag aside


def test_a_kill_from_outside_is_not_of_memory(docker_client: Any, make: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(death, "OOM_EVENT_WAIT_S", 0.5)
    container = make("sleep", "60")
    container.kill()
    assert container.wait(timeout=60)["StatusCode"] == 137
    assert not death.died_of_memory(docker_client, container)
