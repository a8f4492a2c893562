"""The object stores an archive can live in, registered by URL scheme.

    file:///var/lib/evalfleet/archive      a local directory (the embedded default)
    s3://bucket/prefix?endpoint=http://127.0.0.1:8333&region=us-east-1
                                           an S3-compatible bucket (``evalfleet[archive]``)
    none                                   no archive

A store puts, gets and lists bytes by key; it knows nothing of runs (:mod:`.archive`
does). A store that cannot do what it is asked raises :class:`StoreError`: that is our
failure (the store is down, full or refuses), never a run's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import SplitResult, urlsplit


class Store(Protocol):
    """Bytes by key, and the keys under a prefix."""

    def put(self, key: str, data: bytes) -> None:
        """Write ``data`` at ``key`` (replacing what is there), durable on return.

        Raises:
            StoreError: the store did not take it.
        """

    def get(self, key: str) -> bytes | None:
        """The bytes at ``key``, or None when there is no such key.

        Raises:
            StoreError: the store could not be read.
        """

    def keys(self, prefix: str) -> Iterator[str]:
        """Every key under ``prefix``, in the store's (lexical) order.

        Raises:
            StoreError: the store could not be listed.
        """

    def prepare(self) -> None:
        """Make the store ready to be written (its directory, its bucket).

        Raises:
            StoreError: it could not be made ready.
        """

    def link(self, key: str, expires_s: int) -> str | None:
        """A URL anyone holding it may fetch ``key`` from for ``expires_s`` seconds (None:
        the store has no such links, a local directory).

        Raises:
            NotArchived: there is no object at ``key``.
            StoreError: the store could not be asked.
        """
        ...

    def describe(self) -> str:
        """Where the store is, for people (no secrets)."""


@dataclass(frozen=True)
class Within:
    """The part of a store under ``prefix`` (a tenant's), as a store of its own."""

    store: Store
    prefix: str

    def put(self, key: str, data: bytes) -> None:
        self.store.put(self.prefix + key, data)

    def get(self, key: str) -> bytes | None:
        return self.store.get(self.prefix + key)

    def keys(self, prefix: str) -> Iterator[str]:
        return (key[len(self.prefix):] for key in self.store.keys(self.prefix + prefix))

    def prepare(self) -> None:
        self.store.prepare()

    def link(self, key: str, expires_s: int) -> str | None:
        return self.store.link(self.prefix + key, expires_s)

    def describe(self) -> str:
        return f"{self.store.describe()} under {self.prefix}"


def _file(url: SplitResult) -> Store:
    from .file_store import FileStore

    return FileStore.from_url(url)


def _s3(url: SplitResult) -> Store:
    from .s3_store import S3Store

    return S3Store.from_url(url)


#: The stores, by URL scheme (the S3 one imports boto3 only when opened).
STORES: dict[str, Callable[[SplitResult], Store]] = {"file": _file, "s3": _s3}


def store_url(url: str) -> bool:
    """Whether ``url`` names a store (a registered scheme; ``none`` names none)."""
    return urlsplit(url).scheme in STORES


def open_store(url: str) -> Store | None:
    """The store ``url`` names; None for ``none`` (or an empty URL).

    Raises:
        ValueError: a scheme no store is registered for.
        StoreError: the store's client is missing (``pip install evalfleet[archive]``).
    """
    if url.strip().lower() in {"", "none"}:
        return None
    parts = urlsplit(url)
    if parts.scheme not in STORES:
        raise ValueError(f"archive URL {url!r}: the scheme must be one of "
                         f"{', '.join(sorted(STORES))} (or the URL 'none')")
    return STORES[parts.scheme](parts)
