"""Resource usage read from a container's cgroup (v1 and v2 layouts), best effort."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalfleet.sandbox.docker.usage import read_usage

CID = "c0ffee"


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v1_cgroupfs(tmp_path: Path) -> None:
    """v1: memory.max_usage_in_bytes and cpuacct.usage (nanoseconds)."""
    write(tmp_path, f"memory/docker/{CID}/memory.max_usage_in_bytes", "4075520\n")
    write(tmp_path, f"cpuacct/docker/{CID}/cpuacct.usage", "21434672\n")

    assert read_usage(CID, tmp_path) == {"memory_peak_bytes": 4075520.0,
                                         "cpu_seconds": pytest.approx(0.021434672)}


def test_cgroup_v2_systemd_scope(tmp_path: Path) -> None:
    """v2: memory.peak and cpu.stat's usage_usec (microseconds)."""
    write(tmp_path, f"system.slice/docker-{CID}.scope/memory.peak", "1048576\n")
    write(tmp_path, f"system.slice/docker-{CID}.scope/cpu.stat",
          "usage_usec 250000\nuser_usec 200000\n")

    assert read_usage(CID, tmp_path) == {"memory_peak_bytes": 1048576.0, "cpu_seconds": 0.25}


def test_nothing_visible_reports_nothing(tmp_path: Path) -> None:
    """A worker that cannot see the host's cgroups reports no usage rather than failing."""
    write(tmp_path, f"memory/docker/{CID}/memory.max_usage_in_bytes", "garbage")

    assert read_usage(CID, tmp_path) == {}


@pytest.mark.parametrize(("text", "expected"), [
    (b"memory_peak_bytes 4075520\ncpu_ns 21434672\n",
     {"memory_peak_bytes": 4075520.0, "cpu_seconds": pytest.approx(0.021434672)}),
    (b"memory_peak_bytes 8192\nusage_usec 1500000\n",
     {"memory_peak_bytes": 8192.0, "cpu_seconds": 1.5}),
    (b"memory_peak_bytes max\nnoise 12\ncpu_ns -4\n", {}),
    ("memory_peak_bytes ²\ncpu_ns ٣\n".encode(), {}),
    (b"", {}),
])
def test_usage_read_inside_the_sandbox(text: bytes, expected: dict[str, float]) -> None:
    """The USAGE script's lines (v1 or v2) in the same units; junk is ignored."""
    from evalfleet.sandbox.docker.usage import parse_inside

    assert parse_inside(text) == expected
