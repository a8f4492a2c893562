"""Loaded packs kept between runs: a worker sees the same pack run after run.

Loading a pack (parse, decode, validate) is most of a request's preparation; copying a
loaded one costs a fifth of that. Every run gets a deep copy of its own (the spec's
models are mutable), so nothing a run does to its pack reaches another, and the kept
original is never handed out. Kept: inline packs given as a mapping or as multi-line text
(keyed by the SHA-256 of their text) and registered pack files (keyed by path, size and
modification time, so an edited file is read again); at most :data:`MAX_PACKS`, none over
:data:`MAX_TEXT_BYTES`. A pack that does not load is not kept: each request gets its
errors.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from evalfleet.scoring import Pack, load_pack

#: Packs kept per process (least recently used goes first).
MAX_PACKS = 32
#: Larger packs (their JSON or text) are loaded every time.
MAX_TEXT_BYTES = 1 << 20


class PackCache:
    """:func:`scoring.load_pack`, remembering what it loaded (thread-safe)."""

    def __init__(self, size: int = MAX_PACKS) -> None:
        self.size = size
        self._packs: OrderedDict[Hashable, Pack] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, source: Mapping[str, Any] | str | Path) -> Pack:
        """A copy of the pack ``source`` names, loaded once while it is kept.

        Raises:
            SpecError: the pack is invalid (nothing is kept).
        """
        key = cache_key(source)
        if key is None:
            return load_pack(source)
        with self._lock:
            kept = self._packs.get(key)
            if kept is not None:
                self._packs.move_to_end(key)
        if kept is None:
            kept = load_pack(source)
            self._keep(key, kept)
        return copy.deepcopy(kept)

    def _keep(self, key: Hashable, pack: Pack) -> None:
        with self._lock:
            self._packs[key] = pack
            while len(self._packs) > self.size:
                self._packs.popitem(last=False)


def cache_key(source: Mapping[str, Any] | str | Path) -> Hashable | None:
    """What identifies ``source``'s content, or None when it is not to be kept (one-line
    text, which the loader may read as a file's name; a file that cannot be stat'ed; text
    over :data:`MAX_TEXT_BYTES`)."""
    if isinstance(source, Path):
        try:
            stat = source.stat()
        except OSError:
            return None
        return ("file", str(source.resolve()), stat.st_size, stat.st_mtime_ns)
    if isinstance(source, str):
        text = source if "\n" in source else None
    else:
        try:
            text = json.dumps(source, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return None
    if text is None or len(text) > MAX_TEXT_BYTES:
        return None
    kind = "text" if isinstance(source, str) else "mapping"
    return (kind, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
