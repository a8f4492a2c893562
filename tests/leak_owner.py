"""Where a socket the garbage collector found unclosed was made.

A socket left unclosed in a reference cycle is finalized whenever the collector runs, so
its ResourceWarning fails whichever test runs then (twice in CI, ``test_hostile_input``:
pure, but allocation-heavy), and the warning names only the socket. This module records
where each socket of the test process is made (a short stack, dropped when it is closed)
and, wrapped around pytest's ``sys.unraisablehook``, prints that stack on stderr (the
failing test's captured output) before pytest records the warning.
"""

from __future__ import annotations

import socket
import sys
import traceback
from collections.abc import Callable
from typing import Any

#: Frames kept of where a socket was made.
FRAMES = 14

_made: dict[int, str] = {}


def install() -> None:
    """Record where sockets are made; wrap the current ``sys.unraisablehook`` (pytest's:
    install after it)."""
    made, closed = socket.socket.__init__, socket.socket.close

    def init(self: socket.socket, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        _made[id(self)] = "".join(traceback.format_stack(limit=FRAMES)[:-1])

    def close(self: socket.socket) -> None:
        _made.pop(id(self), None)
        closed(self)

    socket.socket.__init__ = init  # type: ignore[method-assign]
    socket.socket.close = close  # type: ignore[method-assign]
    inner: Callable[[Any], object] = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: _report(unraisable, inner)


def _report(unraisable: Any, inner: Callable[[Any], object]) -> None:
    found = getattr(unraisable, "object", None)
    if isinstance(found, socket.socket):
        where = _made.pop(id(found), "(not recorded)")
        print(f"unclosed {found!r} was made at:\n{where}", file=sys.stderr)
    inner(unraisable)
