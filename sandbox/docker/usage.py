"""What a sandbox used: peak memory and CPU time, read from its cgroup.

Best effort. When the worker can see the host's cgroup filesystem (cgroup v1
``cgroupfs`` or v2, Docker's default layouts) the figures are read from it, free. A worker
that cannot (say, in a container of its own) asks the sandbox's supervisor to read the same
counters inside the container (:data:`sandbox.docker.scripts.USAGE`, parsed by
:func:`parse_inside`); without a supervisor it reports nothing.
"""

from __future__ import annotations

from pathlib import Path

from evalfleet.sandbox.results import count

CGROUP_ROOT = Path("/sys/fs/cgroup")


def read_usage(container_id: str, root: Path = CGROUP_ROOT) -> dict[str, float]:
    """``memory_peak_bytes`` and ``cpu_seconds`` of a container, where they can be read."""
    found: dict[str, float] = {}
    for name, reader in (("memory_peak_bytes", _memory_peak), ("cpu_seconds", _cpu_seconds)):
        value = reader(container_id, root)
        if value is not None:
            found[name] = value
    return found


def _memory_peak(container_id: str, root: Path) -> float | None:
    candidates = [root / "memory" / "docker" / container_id / "memory.max_usage_in_bytes",
                  *(_v2_dirs(container_id, root, "memory.peak"))]
    return _first_number(candidates)


def _cpu_seconds(container_id: str, root: Path) -> float | None:
    v1 = _first_number([root / "cpuacct" / "docker" / container_id / "cpuacct.usage"])
    if v1 is not None:
        return v1 / 1e9
    for path in _v2_dirs(container_id, root, "cpu.stat"):
        for line in _read(path).splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec" and value.strip().isdigit():
                return int(value) / 1e6
    return None


def _v2_dirs(container_id: str, root: Path, name: str) -> list[Path]:
    return [root / "system.slice" / f"docker-{container_id}.scope" / name,
            root / "docker" / container_id / name]


def _first_number(paths: list[Path]) -> float | None:
    for path in paths:
        text = _read(path).strip()
        if text.isdigit():
            return float(text)
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


#: Lines of :data:`sandbox.docker.scripts.USAGE` → (usage name, divisor to the unit).
INSIDE = {"memory_peak_bytes": ("memory_peak_bytes", 1.0), "cpu_ns": ("cpu_seconds", 1e9),
          "usage_usec": ("cpu_seconds", 1e6)}


def parse_inside(text: bytes) -> dict[str, float]:
    """The figures of the ``USAGE`` script's output (unknown or malformed lines ignored)."""
    found: dict[str, float] = {}
    for line in text.decode(errors="replace").splitlines():
        key, _, value = line.strip().partition(" ")
        number = count(value) if key in INSIDE else None
        if number is not None:
            name, divisor = INSIDE[key]
            found.setdefault(name, number / divisor)
    return found
