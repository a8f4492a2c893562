"""Profiles, limits and hardening validate on construction; docker kwargs are hardened."""

from __future__ import annotations

import pytest

from evalfleet.sandbox import room
from evalfleet.sandbox.docker import seccomp
from evalfleet.sandbox.docker.labels import LABEL_RUN, LABEL_WORKER
from evalfleet.sandbox.docker.limits import Ownership, create_kwargs, host_pids
from evalfleet.sandbox.errors import SandboxConfigError
from evalfleet.sandbox.paths import PathRejected, sandbox_path
from evalfleet.sandbox.profile import Hardening, Limits, Profile


@pytest.mark.parametrize("bad", [{"memory_bytes": 0}, {"pids": -1}, {"cpus": 0},
                                 {"wall_timeout_s": 0}, {"memory_bytes": 1024}])
def test_bad_limits(bad: dict[str, float]) -> None:
    """Non-positive or below-Docker-floor limits are config errors."""
    with pytest.raises(SandboxConfigError):
        Limits(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"user": "0:0"}, {"user": "root"},
                                 {"user": "5:5", "keeper_user": "5:6"},
                                 {"judge_user": "0"}, {"judge_user": "1000:1000"},
                                 {"judge_user": "65534:1"}, {"user": "1000:x"}])
def test_bad_hardening(bad: dict[str, str]) -> None:
    """Root, a non-numeric id, or the candidate, judge and keeper sharing a uid is refused."""
    with pytest.raises(SandboxConfigError):
        Hardening(**bad)


def test_profile_rules() -> None:
    """Relative workdirs and our reserved labels are refused."""
    with pytest.raises(SandboxConfigError):
        Profile(name="p", image="i", workdir="work")
    with pytest.raises(SandboxConfigError):
        Profile(name="p", image="i", labels={"evalfleet.run_id": "x"})


def test_docker_kwargs_are_hardened_by_default() -> None:
    """Every hardening default (docs/operations.md, "Security") is in the create arguments."""
    profile = Profile(name="p", image="img", env={"A": "1"})
    kwargs = create_kwargs(profile, Ownership(worker="w1", run_id="r1", deadline=1.0))
    assert kwargs["network_mode"] == "none" and kwargs["cap_drop"] == ["ALL"]
    assert kwargs["security_opt"] == ["no-new-privileges", seccomp.security_opt()]
    assert kwargs["read_only"] is True
    assert kwargs["init"] is True and kwargs["user"] == "65534:65534"
    assert kwargs["command"] == ["sh", "-c", "while read -r _; do :; done"]
    assert kwargs["stdin_open"] is True and kwargs["detach"] is False  # StdinOnce: lifeline
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == 512 * 1024 * 1024
    assert kwargs["pids_limit"] == 256 and kwargs["nano_cpus"] == 1_000_000_000
    assert kwargs["environment"] == {"A": "1"} and kwargs["cap_add"] is None
    assert {u["Name"]: u["Hard"] for u in kwargs["ulimits"]} == {
        "nofile": 1024, "fsize": 64 * 1024 * 1024, "core": 0}
    assert "size=67108864" in kwargs["tmpfs"]["/workspace"]
    assert "nosuid" in kwargs["tmpfs"]["/workspace"]
    assert kwargs["labels"][LABEL_RUN] == "r1" and kwargs["labels"][LABEL_WORKER] == "w1"
    assert "evalfleet.created" in kwargs["labels"]


def test_the_supervisor_makes_the_rooms_parts_only_as_a_uid_that_is_its_gid() -> None:
    """The supervisor acts as one number for uid and gid: a judge whose gid differs gets
    no parts made at the start (its requests make them)."""
    odd = Profile(name="p", image="img", hardening=Hardening(judge_user="65532:65500"))
    kwargs = create_kwargs(odd, Ownership(worker="w1", run_id="r1", deadline=1.0),
                           supervisor="/sv")
    assert kwargs["command"] == ["/sv"]


def test_docker_kwargs_with_a_supervisor() -> None:
    """The supervisor is pid 1 as root in the container with CAP_KILL, CAP_SETGID and
    CAP_SETUID, plus CAP_SETPCAP, which it sheds at start (every other one dropped), stdin
    open and no log; the confinement is the same as the keep-alive's."""
    profile = Profile(name="p", image="img")
    owner = Ownership(worker="w1", run_id="r1", deadline=1.0)
    kwargs = create_kwargs(profile, owner, supervisor="/bin/evalfleet-supervisor")
    assert kwargs["command"] == ["/bin/evalfleet-supervisor", "--dirs-as", "65532", *room.PARTS]
    assert kwargs["user"] == "0:0"
    assert kwargs["cap_drop"] == ["ALL"]
    assert kwargs["cap_add"] == ["KILL", "SETGID", "SETPCAP", "SETUID"]
    assert kwargs["init"] is False and kwargs["stdin_open"] is True and kwargs["tty"] is False
    assert kwargs["log_config"]["Type"] == "none"
    plain = create_kwargs(profile, owner)
    same = ("network_mode", "cap_drop", "security_opt", "read_only", "pids_limit",
            "mem_limit", "memswap_limit", "nano_cpus", "ulimits", "tmpfs", "runtime")
    assert {k: kwargs[k] for k in same} == {k: plain[k] for k in same}


def test_the_runtime_is_the_profiles() -> None:
    """``runtime`` goes to the engine as is (``None``: the engine's default)."""
    owner = Ownership(worker="w1", run_id="r1", deadline=1.0)
    assert create_kwargs(Profile(name="p", image="img"), owner)["runtime"] is None
    assert create_kwargs(Profile(name="p", image="img", runtime="runsc"),
                         owner)["runtime"] == "runsc"


def test_under_gvisor_the_pids_cgroup_is_a_ceiling_for_the_sandbox_kernel() -> None:
    """gVisor's processes are threads of its kernel on the host: the candidate's limit is
    RLIMIT_NPROC inside (gVisor counts it per uid), the cgroup a ceiling above its threads;
    under runc there is no nproc ulimit (it would count the uid across the host)."""
    profile = Profile(name="p", image="img", runtime="runsc", limits=Limits(pids=100))
    owner = Ownership(worker="w1", run_id="r1", deadline=1.0)
    kwargs = create_kwargs(profile, owner, supervisor="/sv", gvisor=True)
    assert kwargs["pids_limit"] == host_pids(100) > 100 * 18
    assert {u["Name"]: u["Hard"] for u in kwargs["ulimits"]}["nproc"] == 100
    plain = create_kwargs(profile, owner, gvisor=True)  # through exec: more threads each
    assert plain["pids_limit"] == host_pids(100, supervised=False) > kwargs["pids_limit"]
    runc = create_kwargs(profile, owner, supervisor="/sv")
    assert runc["pids_limit"] == 100 and "nproc" not in {u["Name"] for u in runc["ulimits"]}


def test_a_profiles_own_seccomp_option_replaces_ours() -> None:
    """``seccomp=...`` in the hardening (even ``unconfined``) is the operator's choice."""
    hardening = Hardening(security_opt=("no-new-privileges", "seccomp=unconfined"))
    kwargs = create_kwargs(Profile(name="p", image="img", hardening=hardening),
                           Ownership(worker="w1", run_id="r1", deadline=1.0))
    assert kwargs["security_opt"] == ["no-new-privileges", "seccomp=unconfined"]


@pytest.mark.parametrize(("path", "resolved"), [("a/b", "/w/a/b"), ("/x/./y", "/x/y"),
                                                ("/", "/"), ("a//b/", "/w/a/b")])
def test_sandbox_paths(path: str, resolved: str) -> None:
    """Relative paths are under the workspace; normalisation never climbs."""
    assert sandbox_path(path, "/w") == resolved


@pytest.mark.parametrize("path", ["", "a/../b", "..", "a\0b"])
def test_rejected_paths(path: str) -> None:
    """Empty, NUL and ``..`` paths are rejected."""
    with pytest.raises(PathRejected):
        sandbox_path(path, "/w")
