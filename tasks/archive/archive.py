"""An archive: runs written to and read back from a store (:mod:`.layout`, :mod:`.record`).

What the clients, the CLI and ``evalfleet rescore`` ask once Redis has forgotten a run
(its result's TTL passed): the result, byte for byte as published, and the status record.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..messages import RunResult
from ..status import RunStatus
from . import layout
from .record import ArchivedRun
from .store import Store, Within, open_store


@dataclass(frozen=True)
class Archive:
    """Runs in a store; each tenant's under its own prefix of it, or in a store of its own
    (``tenants``: reached with the tenant's own credentials)."""

    store: Store
    tenants: Mapping[str, Store] = field(default_factory=dict)

    @classmethod
    def at(cls, url: str, tenants: Mapping[str, str] | None = None) -> Archive | None:
        """The archive ``url`` names (None for ``none``), with the stores of the tenants
        that have their own (``tenants``: a URL by tenant name).

        Raises:
            ValueError: an unknown scheme or a malformed URL (a tenant's: named).
            StoreError: the store's client is missing (``evalfleet[archive]``).
        """
        store = open_store(url)
        if store is None:
            return None
        return cls(store, {name: _tenant_store(name, own)
                           for name, own in (tenants or {}).items()})

    def of_tenant(self, tenant: str | None) -> Archive:
        """Where ``tenant``'s runs are archived, in the same layout: its own store if it
        has one, else ``tenants/<name>/`` of this one (None: this one). A tenant's client
        reads its own archive by that store's or that prefix's URL."""
        if tenant is None:
            return self
        own = self.tenants.get(tenant)
        return Archive(own or Within(self.store, layout.tenant_prefix(tenant)))

    def write(self, run: ArchivedRun, day: str, match: str | None) -> int:
        """Write ``run`` (its object first, then its day's and match's markers); returns
        the object's size. Writing it again writes the same bytes at the same keys.

        Raises:
            StoreError: the store did not take every key (write it again).
        """
        data = run.encode()
        self.store.put(layout.run_key(run.run_id), data)
        for marker in layout.markers(run.run_id, day, match):
            self.store.put(marker, b"")
        return len(data)

    def link(self, run_id: str, expires_s: int) -> str | None:
        """A URL the archived object of ``run_id`` (an ``evalfleet.archive/1`` record:
        :mod:`.record`) can be fetched from for ``expires_s`` seconds; None when the store
        gives no links (a local directory).

        Raises:
            NotArchived: the run is not archived yet.
            StoreError: the store could not be asked.
        """
        return self.store.link(layout.run_key(run_id), expires_s)

    def run(self, run_id: str) -> ArchivedRun | None:
        """The archived run ``run_id`` (None: not in the archive).

        Raises:
            StoreError: the store could not be read.
            RecordError: the object there is not a record, or was altered.
        """
        data = self.store.get(layout.run_key(run_id))
        return None if data is None else ArchivedRun.decode(data)

    def result(self, run_id: str) -> RunResult | None:
        """The archived result of ``run_id`` (None: not in the archive).

        Raises:
            StoreError: the store could not be read.
            RecordError: the object there is not a record, or was altered.
        """
        found = self.run(run_id)
        return None if found is None else RunResult.model_validate_json(found.body)

    def status(self, run_id: str) -> RunStatus | None:
        """The status record ``run_id`` had when it was archived (None: not archived).

        Raises:
            StoreError: the store could not be read.
            RecordError: the object there is not a record, or was altered.
        """
        found = self.run(run_id)
        return None if found is None else RunStatus.from_record(run_id, found.status)

    def match_runs(self, match: str) -> list[str]:
        """The run ids of ``match`` in the archive (the store's listing of its markers).

        Raises:
            StoreError: the store could not be listed.
        """
        return [layout.run_id_of(k) for k in self.store.keys(layout.match_prefix(match))]

    def day_runs(self, day: str) -> Iterator[str]:
        """The run ids archived for ``day`` (``YYYY-MM-DD``, the day each ended, UTC).

        Raises:
            StoreError: the store could not be listed.
        """
        return (layout.run_id_of(k) for k in self.store.keys(layout.day_prefix(day)))

    def describe(self) -> str:
        return self.store.describe()


def _tenant_store(tenant: str, url: str) -> Store:
    """The store of ``tenant``'s own archive URL.

    Raises:
        ValueError: the URL names no store (``none``), or is malformed.
    """
    try:
        store = open_store(url)
    except ValueError as err:
        raise ValueError(f"tenant {tenant!r}: {err}") from err
    if store is None:
        raise ValueError(f"tenant {tenant!r}: its archive URL names no store")
    return store
