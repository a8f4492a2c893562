"""The archive: every published result and its status history, kept past Redis's TTL in
an object store (an S3-compatible bucket, or a local directory), and read back by the
clients, the CLI and ``evalfleet rescore`` once Redis has forgotten a run.

* :mod:`.store` — the stores by URL scheme (``file://``, ``s3://``; ``none``);
* :mod:`.layout` — the keys (``runs/<id>.json.gz``, ``by-day/…``, ``by-match/…``);
* :mod:`.record` — one run's object (the published bytes, untouched, and its status);
* :mod:`.archive` — runs written and read back;
* :mod:`.archiver` — the results stream's consumer that writes them, acknowledging only
  after the store has each;
* :mod:`.backlog` — how far behind it is, and when new runs must wait for it.

The slim client imports this package without boto3: only an ``s3://`` store needs it.
"""

from __future__ import annotations

from .archive import Archive
from .errors import NotArchived, StoreError
from .record import ArchivedRun, RecordError
from .store import STORES, Store, open_store

__all__ = ["STORES", "Archive", "ArchivedRun", "NotArchived", "RecordError", "Store",
           "StoreError", "open_store"]
