"""The Docker driver on the real engine: hardening as created, env, stdin, labels."""

from __future__ import annotations

from typing import Any

from sandbox_support import WORKER, OpenSandbox

from evalfleet.sandbox import room
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker import seccomp
from evalfleet.sandbox.docker.limits import host_pids

MiB = 1024 * 1024


def test_container_is_hardened_as_created(open_sandbox: OpenSandbox, docker_client: Any,
                                          runtime: str) -> None:
    """Every hardening default (docs/operations.md, "Security") is what the engine reports
    for the container, on the profile's runtime. Under gVisor the pids cgroup counts the
    sandbox kernel's threads, so it is a ceiling above them and the candidate's limit is
    ``nproc`` (per uid, inside)."""
    sandbox = open_sandbox("busybox", memory_bytes=128 * MiB, pids=100, cpus=0.5)
    attrs = docker_client.api.inspect_container(sandbox.id)
    host, config = attrs["HostConfig"], attrs["Config"]
    assert host["NetworkMode"] == "none" and host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"][0] == "no-new-privileges" and host["ReadonlyRootfs"] is True
    assert host["SecurityOpt"][1] == seccomp.security_opt()  # prlimit on others refused
    assert host["Init"] is False and host["Privileged"] is False  # the supervisor is pid 1
    assert config["Cmd"] == ["/bin/evalfleet-supervisor", "--dirs-as", "65532", *room.PARTS]
    assert config["OpenStdin"] is True
    assert host["LogConfig"]["Type"] == "none"  # its stream is the run's, never logged
    assert host["Memory"] == host["MemorySwap"] == 128 * MiB
    assert host["NanoCpus"] == 500_000_000 and host["Runtime"] == runtime
    ulimits = {u["Name"]: u["Hard"] for u in host["Ulimits"]}
    if runtime == "runsc":
        assert host["PidsLimit"] == host_pids(100) and ulimits.pop("nproc") == 100
    else:
        assert host["PidsLimit"] == 100
    assert set(ulimits) == {"nofile", "fsize", "core"}
    assert set(host["Tmpfs"]) == {"/workspace", "/tmp", "/judge"}
    assert "mode=0700,uid=65532,gid=65532" in host["Tmpfs"]["/judge"]  # the judge's room
    # The supervisor: root in the container with three capabilities (and CAP_SETPCAP, shed
    # at its start); every step it starts runs as its own non-root uid with none.
    assert config["User"] == "0:0"
    assert sorted(host["CapAdd"]) == ["KILL", "SETGID", "SETPCAP", "SETUID"]
    labels = config["Labels"]
    assert labels["evalfleet.worker"] == WORKER and labels["evalfleet.run_id"].startswith("test-")
    assert float(labels["evalfleet.deadline"]) > float(labels["evalfleet.created"])
    assert not any(key.startswith("EVALFLEET") for key in config["Env"])


def test_env_workdir_and_large_stdin(open_sandbox: OpenSandbox) -> None:
    """Per-command env and workdir apply; a 4 MiB stdin round-trips under a 5 MiB cap."""
    sandbox = open_sandbox("busybox")
    sandbox.exec(Command("mkdir sub"))
    result = sandbox.exec(Command('echo "$GREETING"; pwd', env={"GREETING": "hi there"},
                                  workdir="/workspace/sub"))
    assert result.stdout == b"hi there\n/workspace/sub\n"
    payload = bytes(range(256)) * (4 * MiB // 256)
    echoed = sandbox.exec(Command("cat", stdin=payload, output_cap_bytes=5 * MiB, timeout_s=30))
    assert echoed.stdout == payload and not echoed.truncated


def test_commands_run_as_the_candidate_uid_not_the_keeper(open_sandbox: OpenSandbox) -> None:
    """Commands run as 1000; the keep-alive (65534) survives ``kill -9 -1``."""
    sandbox = open_sandbox("busybox")
    assert sandbox.exec(Command("id -u")).stdout == b"1000\n"
    sandbox.exec(Command("kill -9 -1; true"))
    assert sandbox.exec(Command("echo still here")).stdout == b"still here\n"
