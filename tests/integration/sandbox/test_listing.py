"""Containers by label from the engine's listing alone (``sandbox/docker/listing.py``)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import docker.errors
import pytest
from sandbox_support import IMAGES, TEST_LABELS

from evalfleet.sandbox.docker.listing import labelled, labels_of, name_of, state_of


@pytest.fixture
def pair(docker_client: Any) -> Iterator[tuple[str, Any, Any]]:
    """A running and a never-started container sharing a fresh label."""
    mark = f"evalfleet.test.listing={uuid.uuid4().hex[:12]}"
    labels = {**TEST_LABELS, mark.split("=")[0]: mark.split("=")[1]}
    running = docker_client.containers.run(IMAGES["python"], ["sleep", "60"], detach=True,
                                           labels=labels, network_mode="none")
    created = docker_client.containers.create(IMAGES["python"], ["true"], labels=labels,
                                              network_mode="none")
    try:
        yield mark, running, created
    finally:
        for container in (running, created):
            with contextlib.suppress(docker.errors.NotFound):  # a test removed it
                container.remove(force=True)


def test_listing_finds_running_and_stopped_with_labels_names_and_states(
        docker_client: Any, pair: tuple[str, Any, Any]) -> None:
    mark, running, created = pair
    found = {c.id: c for c in labelled(docker_client, [mark])}
    assert set(found) == {running.id, created.id}
    for container in (running, created):
        container.reload()
        listed = found[container.id]
        assert labels_of(listed) == labels_of(container) == container.labels
        assert name_of(listed) == name_of(container) == container.name
    assert (state_of(found[running.id]), state_of(found[created.id])) == ("running",
                                                                          "created")


def test_engine_filters_narrow_the_listing(docker_client: Any,
                                           pair: tuple[str, Any, Any]) -> None:
    mark, running, _ = pair
    assert [c.id for c in labelled(docker_client, [mark], status="running")] == [running.id]
    assert labelled(docker_client, [mark, "evalfleet.test.listing.absent"]) == []


def test_listed_containers_can_be_removed(docker_client: Any,
                                          pair: tuple[str, Any, Any]) -> None:
    mark, _, _ = pair
    for container in labelled(docker_client, [mark]):
        container.remove(force=True)
    assert labelled(docker_client, [mark]) == []
