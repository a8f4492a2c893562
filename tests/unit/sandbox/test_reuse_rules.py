"""Sandbox reuse without Docker: the reset's answer, re-based usage, discard reasons, the
profile's rules and what a reusing profile's containers are created with."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalfleet.sandbox.docker.limits import Ownership, create_kwargs, room_parts
from evalfleet.sandbox.docker.reuse import (
    CPU_NOT_REBASED,
    PEAK_NOT_REBASED,
    ResetOutcome,
    Reuse,
    limits_hit,
    parse_answer,
    rebased_usage,
    remembered,
    reset_peak,
)
from evalfleet.sandbox.docker.seccomp import IPC_CREATORS, security_opt
from evalfleet.sandbox.envprobe import EnvironmentProbe, EnvironmentReport
from evalfleet.sandbox.errors import SandboxConfigError
from evalfleet.sandbox.evaluation import environment
from evalfleet.sandbox.profile import Hardening, Profile

OWNER = Ownership(worker="w", run_id="warm", deadline=1.0, pooled=True)


@pytest.mark.parametrize(("answer", "expected"), [
    ("0 rounds=1 cpu_ns=2500000000 oom_kill=0 ms=3",
     ResetOutcome(True, rounds=1, cpu_ns=2_500_000_000, oom_kills=0)),
    ("0 rounds=0 cpu_ns=-1 oom_kill=-1 ms=0", ResetOutcome(True, rounds=0)),
    ("1 not as it started after 4 rounds (2 differences; new: /tmp/x)",
     ResetOutcome(False, "not as it started after 4 rounds (2 differences; new: /tmp/x)")),
    ("1", ResetOutcome(False, "the supervisor did not say why")),
    ("garbage", ResetOutcome(False, "the supervisor did not say why")),
])
def test_the_supervisors_answer(answer: str, expected: ResetOutcome) -> None:
    """Verified only on ``0``; counters it could not read (-1) are ``None``."""
    assert parse_answer(answer) == expected


def test_a_first_run_reports_its_containers_counters_as_they_are() -> None:
    found = {"cpu_seconds": 2.0, "memory_peak_bytes": 5e6}
    assert rebased_usage(found, Reuse()) == (found, "")


def test_a_later_run_counts_from_the_reset() -> None:
    """CPU time from the reset's counter; peak memory only where it was reset too."""
    found = {"cpu_seconds": 2.5, "memory_peak_bytes": 5e6}
    assert rebased_usage(found, Reuse(run=3, cpu_base_s=2.0, peak_rebased=True)) == (
        {"cpu_seconds": 0.5, "memory_peak_bytes": 5e6}, "")
    usage, why = rebased_usage(found, Reuse(run=3, cpu_base_s=2.0))
    assert usage == {"cpu_seconds": 0.5, "memory_peak_bytes": None} and why == PEAK_NOT_REBASED


def test_a_later_run_without_a_base_reports_none_with_the_reason() -> None:
    usage, why = rebased_usage({"cpu_seconds": 2.5}, Reuse(run=2))
    assert usage == {"cpu_seconds": None} and why == CPU_NOT_REBASED


def test_a_containers_later_runs_take_its_environment_answer_without_asking(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run of a container asks; a later run with the same tools and environment
    gets that answer, judged by its own space need and taking no time; another key asks."""
    asked: list[EnvironmentProbe] = []

    def ask(_sandbox: object, probe: EnvironmentProbe) -> EnvironmentReport:
        asked.append(probe)
        return EnvironmentReport(free_bytes=4096, needed_bytes=probe.free_bytes,
                                 missing=("pytest",), duration_s=0.003)

    def run(reused: Reuse, probe: EnvironmentProbe) -> EnvironmentReport:
        sandbox = SimpleNamespace(pristine=lambda key, measure: remembered(reused, key, measure))
        return environment.pristine(sandbox, probe)  # type: ignore[arg-type]

    monkeypatch.setattr(environment, "check", ask)
    reused = Reuse()
    first = run(reused, EnvironmentProbe(tools=("sh", "pytest"), free_bytes=10, env={"A": "1"}))
    later = run(Reuse(run=2, environments=reused.environments),
                EnvironmentProbe(tools=("sh", "pytest"), free_bytes=8192, env={"A": "1"}))
    other = run(Reuse(run=3, environments=reused.environments),
                EnvironmentProbe(tools=("sh", "pytest"), env={"A": "2"}))

    assert len(asked) == 2 and asked[1].env == {"A": "2"}
    assert first.problems == ("no `pytest` on the sandbox's PATH",)
    assert (later.free_bytes, later.needed_bytes, later.duration_s) == (4096, 8192, 0.0)
    assert later.problems == ("the workspace has 0.0 MiB free, the pack's files need 0.0 MiB",
                              "no `pytest` on the sandbox's PATH")
    assert other.duration_s == 0.003


def test_the_peak_is_reset_where_the_host_can_write_it(tmp_path: Path) -> None:
    """cgroup v1's max_usage_in_bytes written with 0; nothing to write: not re-based."""
    where = tmp_path / "memory" / "docker" / "abc"
    assert not reset_peak("abc", tmp_path)
    where.mkdir(parents=True)
    (where / "memory.max_usage_in_bytes").write_text("123")
    assert reset_peak("abc", tmp_path)
    assert (where / "memory.max_usage_in_bytes").read_text() == "0"


def conduit(*, expired: bool = False, ended_by: str | None = None,
            hits: set[str] | None = None) -> SimpleNamespace:
    return SimpleNamespace(conduit=SimpleNamespace(deadline_exceeded=expired,
                                                   ended_by=ended_by, hits=hits or set()))


@pytest.mark.parametrize(("sandbox", "reason"), [
    (conduit(), None),
    (conduit(expired=True, hits={"timeout"}), "deadline"),
    (conduit(ended_by="memory"), "oom"),
    (conduit(hits={"oom", "output"}), "oom"),
    (conduit(hits={"output", "timeout"}), "timeout"),
    (conduit(hits={"output"}), "output"),
])
def test_a_limit_hit_is_a_discard_reason(sandbox: SimpleNamespace, reason: str | None) -> None:
    assert limits_hit(sandbox) == reason


def test_a_reusing_profile_needs_a_read_only_root_and_a_positive_count() -> None:
    with pytest.raises(SandboxConfigError, match="read-only"):
        Profile(name="p", image="i", reuse_runs=2, hardening=Hardening(read_only=False))
    with pytest.raises(SandboxConfigError, match="at least 1"):
        Profile(name="p", image="i", reuse_runs=0)
    assert not Profile(name="p", image="i").reusable
    assert Profile(name="p", image="i", reuse_runs=2).reusable


def test_the_ipc_refusing_seccomp_variant_drops_only_the_creators() -> None:
    """Every other rule of the profile is kept as it is."""
    plain = json.loads(security_opt().removeprefix("seccomp="))
    refusing = json.loads(security_opt(refuse_ipc=True).removeprefix("seccomp="))
    names = {name for rule in refusing["syscalls"] for name in rule["names"]}
    assert not names & IPC_CREATORS and {
        name for rule in plain["syscalls"] for name in rule["names"]} >= IPC_CREATORS
    kept = [dict(rule, names=[n for n in rule["names"] if n not in IPC_CREATORS])
            for rule in plain["syscalls"]]
    assert refusing["syscalls"] == [rule for rule in kept if rule["names"]]


def test_a_reusable_sandboxs_supervisor_records_its_start() -> None:
    """A pooled container of a reusing profile starts its supervisor ``--reusable``; under
    gVisor every sandbox of such a profile, pooled or cold, refuses lasting IPC objects."""
    profile = Profile(name="p", image="i", reuse_runs=5)
    kwargs = create_kwargs(profile, OWNER, supervisor="/sv", reusable=True)
    assert kwargs["command"] == ["/sv", "--reusable", *room_parts(profile)]
    assert kwargs["security_opt"][-1] == security_opt()
    cold = create_kwargs(profile, OWNER, supervisor="/sv", gvisor=True)
    assert cold["command"] == ["/sv", *room_parts(profile)]
    assert cold["security_opt"][-1] == security_opt(refuse_ipc=True)
    plain = create_kwargs(Profile(name="p", image="i"), OWNER, supervisor="/sv", gvisor=True)
    assert plain["security_opt"][-1] == security_opt()
