"""The archive's one error of its own: a store that failed (ours, never a run's)."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The store did not do what it was asked (down, full, refused, misconfigured)."""


class NotArchived(LookupError):
    """A run whose object is not (yet) in the archive: no link to it can be given."""
