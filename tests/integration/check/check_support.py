"""Running the CLI as a pack author or operator does, for the check's integration tests."""

from __future__ import annotations

import os
import subprocess
import sys


def evalfleet(*args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own (``settings`` become ``EVALFLEET_<NAME>``); its
    sandboxes carry the worker id ``check-test-<pid>`` (the ``evalfleet.worker`` label)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALFLEET_")}
    env["EVALFLEET_WORKER_ID"] = f"check-test-{os.getpid()}"
    env.update({f"EVALFLEET_{k.upper()}": v for k, v in settings.items()})
    return subprocess.run([sys.executable, "-m", "evalfleet.workers", *args], env=env,
                          capture_output=True, text=True, timeout=280, check=False)
