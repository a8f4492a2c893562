"""What each worker serves: the packs registered in its ``EVALFLEET_PACKS_DIR``.

A worker publishes them under :data:`~tasks.redis_keys.PACKS_KEY` at start and with every
heartbeat (with the heartbeat's TTL, so a gone worker's list goes with it); a pack is
loaded again only when its file changed. ``evalfleet packs`` reads every worker's list.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from evalfleet.scoring import SpecError, load_pack
from evalfleet.scoring.compat import yamlv3
from evalfleet.tasks.evaluation.packs import pack_digest, registered_pack
from evalfleet.tasks.redis_keys import PACKS_KEY, packs_key


class ServedPack(NamedTuple):
    """One registered pack: ``name`` (its directory, the requests' ``pack_ref``), its
    version number, its digest (as ``evalfleet check`` names it), or why it does not load."""

    name: str
    version: int | None
    digest: str
    problem: str = ""


Signature = tuple[tuple[str, int, int], ...]


def pack_files(packs_dir: Path | None) -> dict[str, Path]:
    """Name → file of every pack registered in ``packs_dir`` (``<name>/pack.yaml``)."""
    if packs_dir is None or not packs_dir.is_dir():
        return {}
    found = {entry.name: registered_pack(entry.name, packs_dir)
             for entry in sorted(packs_dir.iterdir()) if entry.is_dir()}
    return {name: path for name, path in found.items() if path is not None}


def served(name: str, path: Path) -> ServedPack:
    """The registered pack at ``path``, loaded as a worker loads it."""
    try:
        pack = load_pack(path)
    except SpecError as err:
        return ServedPack(name, None, "", "; ".join(str(e) for e in err.errors))
    version = pack.manifest.get("version", {}).get("number") if pack.manifest else None
    digest = pack_digest(yamlv3.to_json(dict(pack.manifest)) if pack.manifest else {})
    return ServedPack(name, version if isinstance(version, int) else None, digest)


class PacksBeacon:
    """Publishes a worker's packs; cheap when nothing changed (a ``stat`` per pack)."""

    def __init__(self, redis: Any, worker_id: str, packs_dir: Path | None,
                 ttl_s: float) -> None:
        self.redis, self.worker_id, self.packs_dir = redis, worker_id, packs_dir
        self.ttl_s = ttl_s
        self._signature: Signature | None = None
        self._document = ""

    def publish(self) -> None:
        """Write this worker's list (loading again only the packs whose files changed)."""
        files = pack_files(self.packs_dir)
        signature = tuple((n, p.stat().st_size, p.stat().st_mtime_ns) for n, p in files.items())
        if signature != self._signature:
            self._document = json.dumps({
                "worker": self.worker_id, "packs_dir": str(self.packs_dir or ""),
                "packs": [served(n, p)._asdict() for n, p in files.items()]})
            self._signature = signature
        self.redis.set(packs_key(self.worker_id), self._document, px=int(self.ttl_s * 1000))


class FleetPack(NamedTuple):
    """A pack as the fleet serves it: the workers that serve this very version."""

    pack: ServedPack
    workers: list[str]


def fleet_packs(redis: Any) -> list[FleetPack]:
    """Every pack some live worker serves, by name, version and digest."""
    by_pack: dict[ServedPack, list[str]] = {}
    for document in _documents(redis):
        for entry in document.get("packs", []):
            pack = ServedPack(**entry)
            by_pack.setdefault(pack, []).append(str(document.get("worker", "?")))
    return [FleetPack(pack, sorted(workers)) for pack, workers in
            sorted(by_pack.items(), key=lambda item: (item[0].name, item[0].digest))]


def _documents(redis: Any) -> Iterator[dict[str, Any]]:
    keys = sorted(redis.scan_iter(match=PACKS_KEY.format(worker_id="*"), count=500))
    for raw in redis.mget(keys) if keys else []:
        if raw is not None:
            yield json.loads(raw)
