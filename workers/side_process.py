"""A process a worker node runs beside itself (``evalfleet archiver``, ``evalfleet
admitter``): its own interpreter, so that its Python work does not hold the GIL the
worker's Celery consumer needs; started again if it exits, stopped with the worker, and
gone when the worker is (it watches its parent: ``--parent``)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from types import FrameType

from .settings import Settings

log = logging.getLogger(__name__)

#: Seconds between two looks at whether the process still runs.
WATCH_INTERVAL_S = 5.0


@dataclass
class SideProcess:
    """``evalfleet <command> --parent <this pid>``, at ``niceness`` (0: the worker's)."""

    settings: Settings
    command: str
    niceness: int = 0
    process: subprocess.Popen[bytes] | None = None
    stopped: bool = field(default=False)

    def start(self) -> SideProcess:
        env = {**os.environ, "EVALFLEET_REDIS_URL": self.settings.redis_url,
               "EVALFLEET_WORKER_ID": self.settings.worker_id,
               "EVALFLEET_RESULT_TTL_S": str(self.settings.result_ttl_s)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "evalfleet.workers", self.command, "--parent",
             str(os.getpid())], env=env)
        if self.niceness:
            try:
                os.setpriority(os.PRIO_PROCESS, self.process.pid, self.niceness)
            except OSError as err:  # gone already: check() starts it again
                log.warning("%s: not niced: %s", self.command, err)
        return self

    def check(self) -> None:
        """Start it again if it exited (it is never meant to while the worker runs)."""
        if not self.stopped and self.process is not None and self.process.poll() is not None:
            log.warning("the %s exited (%s); starting it again", self.command,
                        self.process.returncode)
            self.start()

    def stop(self) -> None:
        self.stopped = True
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Stopping:
    """SIGTERM and SIGINT ask a side process's loop to end after its step."""

    asked = False

    def install(self) -> Stopping:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._ask)
        return self

    def _ask(self, signum: int, frame: FrameType | None) -> None:
        self.asked = True
