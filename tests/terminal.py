"""Running the CLI with its stdout on a real pseudo-terminal (what a person sees)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

#: What the pseudo-terminal's process must not inherit.
INHERITED_NOT = frozenset({"NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES"})


def in_terminal(*args: str, timeout: float = 120, **env: str) -> str:
    """Run ``evalfleet ARGS`` with stdout on a 120-column pseudo-terminal; what it wrote
    there (stderr is discarded). ``env`` adds variables; ``NO_COLOR``, ``FORCE_COLOR`` and
    the ``COLUMNS``/``LINES`` a parent may set (pytest-xdist's workers do) are not
    inherited: the terminal's own size decides."""
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    base = {k: v for k, v in os.environ.items() if k not in INHERITED_NOT}
    process = subprocess.Popen([sys.executable, "-m", "evalfleet.workers", *args], stdout=child,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                               env={**base, "TERM": "xterm-256color", **env})
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(parent, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout)
    os.close(parent)
    return b"".join(chunks).decode()
