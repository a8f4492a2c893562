"""Containers by label, from the engine's listing alone.

Docker's full listing (``containers.list()`` without ``sparse``) inspects every container
it lists, one request each, and an inspect waits for the container's lock, which the
engine holds while the container is created, started, killed or removed: a gVisor sandbox
torn down under a fork bomb can hold it past the client's timeout, and one such container
would stall every reaper pass, pool check and metrics scrape. The listing itself
(``GET /containers/json``) reads the engine's snapshot without taking any lock, and carries
what evalfleet needs: the id, the labels, the name and the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def labelled(client: Any, labels: Sequence[str], **filters: str) -> list[Any]:
    """Every container, running or not, carrying each of ``labels`` (``key`` or
    ``key=value``), narrowed by further engine ``filters`` (e.g. ``status="running"``).

    The containers are sparse: read them with :func:`labels_of`, :func:`name_of` and
    :func:`state_of`; ``remove`` and ``kill`` work as on any container.
    """
    return list(client.containers.list(all=True, sparse=True,
                                       filters={"label": list(labels), **filters}))


def labels_of(container: Any) -> dict[str, str]:
    """A listed (or inspected) container's labels."""
    attrs = container.attrs
    return dict(attrs.get("Labels") or (attrs.get("Config") or {}).get("Labels") or {})


def name_of(container: Any) -> str:
    """A listed (or inspected) container's name, without the leading slash."""
    attrs = container.attrs
    names = attrs.get("Names") or [attrs.get("Name") or container.id]
    return str(names[0]).lstrip("/")


def state_of(container: Any) -> str:
    """A listed container's state: ``created``, ``running``, ``exited``, ``removing``…"""
    state = container.attrs.get("State")
    return str(state.get("Status", "") if isinstance(state, dict) else state or "")
