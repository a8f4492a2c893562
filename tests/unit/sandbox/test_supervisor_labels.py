"""Which images the factory drives through their supervisor: the label names the path and
the protocol label must be one the host speaks; anything else is driven through ``exec``.
Only a supervisor of protocol 3 or later can reset a sandbox for reuse; only one of 4
collects file captures itself; only one of 5 writes seed files itself; only one of 6 queues
requests sent ahead."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from evalfleet.sandbox.docker.channel import PROTOCOL
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.labels import LABEL_PROTOCOL, LABEL_SUPERVISOR


class Images:
    def __init__(self, labels: dict[str, str] | None) -> None:
        self.labels, self.calls = labels, 0

    def get(self, name: str) -> Any:
        self.calls += 1
        return SimpleNamespace(labels=self.labels)


def factory(labels: dict[str, str] | None, *, supervise: bool = True) -> DockerFactory:
    return DockerFactory(SimpleNamespace(images=Images(labels)), worker="w", supervise=supervise)


@pytest.mark.parametrize(("labels", "expected"), [
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: PROTOCOL}, "/bin/sv"),
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "5"}, "/bin/sv"),  # without queueing
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "4"}, "/bin/sv"),  # without seed records
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "3"}, "/bin/sv"),  # without --collect
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "2"}, "/bin/sv"),  # without the reset
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "0"}, None),  # an older supervisor
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "7"}, None),  # a newer one
    ({LABEL_SUPERVISOR: "/bin/sv"}, None),
    ({LABEL_SUPERVISOR: "", LABEL_PROTOCOL: PROTOCOL}, None),
    ({}, None),
    (None, None),
])
def test_supervisor_label_and_protocol(labels: dict[str, str] | None,
                                       expected: str | None) -> None:
    assert factory(labels).supervisor("img") == expected


@pytest.mark.parametrize(("protocol", "resets", "collector", "seeds", "queues"), [
    (PROTOCOL, True, "/bin/sv", True, True), ("5", True, "/bin/sv", True, False),
    ("4", True, "/bin/sv", False, False), ("3", True, None, False, False),
    ("2", False, None, False, False)])
def test_only_a_protocol_3_supervisor_resets(protocol: str, resets: bool,
                                             collector: str | None, seeds: bool,
                                             queues: bool) -> None:
    from evalfleet.sandbox.profile import Profile

    made = factory({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: protocol})
    assert made.image("img").resets is resets
    assert made.image("img").collector == collector
    assert made.image("img").seeds is seeds
    assert made.image("img").queues is queues
    assert made.reusable(Profile(name="p", image="img", reuse_runs=2)) is resets
    assert not made.reusable(Profile(name="p", image="img"))


def test_labels_are_read_once_per_image() -> None:
    made = factory({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: PROTOCOL})
    assert [made.supervisor("img") for _ in range(3)] == ["/bin/sv"] * 3
    assert made.client.images.calls == 1


def test_supervise_false_never_asks() -> None:
    made = factory({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: PROTOCOL}, supervise=False)
    assert made.supervisor("img") is None and made.client.images.calls == 0


@pytest.mark.parametrize(("labels", "why"), [
    ({LABEL_SUPERVISOR: "/bin/sv", LABEL_PROTOCOL: "2"}, "speaks protocol 2, which cannot reset"),
    ({}, "has no evalfleet supervisor"),
])
def test_the_reuse_probe_names_an_image_that_cannot_reset(labels: dict[str, str],
                                                          why: str) -> None:
    """Found before any container starts (the factory only reads the image's labels)."""
    from evalfleet.sandbox.docker.reuse import probe
    from evalfleet.sandbox.profile import Profile

    assert why in probe(factory(labels), Profile(name="p", image="img", reuse_runs=2))
