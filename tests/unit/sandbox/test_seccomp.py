"""The seccomp profile is Docker 20.10's default but for ``prlimit64``, allowed on pid 0 only,
and ``io_uring``, refused (as in Docker 25's default)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from evalfleet.sandbox.docker.seccomp import IO_URING, PROFILE_PATH, security_opt

#: sha256 of moby ``profiles/seccomp/default.json`` at v20.10.24, parsed and dumped with
#: ``sort_keys=True, separators=(",", ":")``.
DOCKER_20_10_24_DEFAULT_SHA256 = "ea56ae0fe060a2451cbb6c89f07302febb224d1da3500d42c38b890cf72ad526"
OUR_RULE = {"names": ["prlimit64"], "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]}


def load() -> dict[str, Any]:
    profile: dict[str, Any] = json.loads(PROFILE_PATH.read_text(encoding="utf-8"))
    return profile


def unconditional_allows(profile: dict[str, Any]) -> set[str]:
    """Syscalls allowed whatever their arguments, caps, arch or kernel."""
    return {name for rule in profile["syscalls"]
            if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args")
            and not any(rule.get("includes", {}).values())
            and not any(rule.get("excludes", {}).values())
            for name in rule["names"]}


def rules_naming(profile: dict[str, Any], syscall: str) -> list[dict[str, Any]]:
    return [rule for rule in profile["syscalls"] if syscall in rule["names"]]


def test_the_default_action_is_errno_which_the_runtime_makes_eperm() -> None:
    """Docker 20.10 has no ``defaultErrnoRet`` (its daemon would drop it): the runtime's
    default errno for ``SCMP_ACT_ERRNO`` is EPERM."""
    profile = load()

    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    assert "defaultErrnoRet" not in profile


def test_prlimit64_is_allowed_only_when_its_pid_argument_is_zero() -> None:
    rules = rules_naming(load(), "prlimit64")

    assert len(rules) == 1
    (rule,) = rules
    assert {key: rule[key] for key in OUR_RULE} == OUR_RULE
    assert not any(rule["includes"].values()) and not any(rule["excludes"].values())
    assert "prlimit64" not in unconditional_allows(load())


def test_io_uring_is_refused_whatever_the_arguments_or_capabilities() -> None:
    """No rule names an io_uring call: each falls to the default action (EPERM)."""
    profile = load()

    assert {"io_uring_setup", "io_uring_enter", "io_uring_register"} == IO_URING
    assert [rule for syscall in IO_URING for rule in rules_naming(profile, syscall)] == []
    assert not IO_URING & unconditional_allows(json.loads(security_opt(refuse_ipc=True)[8:]))


def test_everything_else_is_dockers_default_profile() -> None:
    """Undoing our two changes gives back Docker 20.10.24's default profile exactly."""
    profile = load()
    docker_default = copy.deepcopy(profile)
    docker_default["syscalls"] = [rule for rule in docker_default["syscalls"]
                                  if rule["names"] != ["prlimit64"]]
    allow_list = docker_default["syscalls"][0]["names"]
    allow_list.insert(allow_list.index("preadv2") + 1, "prlimit64")
    at = allow_list.index("io_submit") + 1
    allow_list[at:at] = ["io_uring_enter", "io_uring_register", "io_uring_setup"]

    canonical = json.dumps(docker_default, sort_keys=True, separators=(",", ":"))
    assert hashlib.sha256(canonical.encode()).hexdigest() == DOCKER_20_10_24_DEFAULT_SHA256
    assert len(profile["syscalls"]) == len(docker_default["syscalls"]) + 1


@pytest.mark.parametrize("syscall", ["read", "write", "execve", "getrlimit", "setrlimit",
                                     "ugetrlimit", "kill", "socket", "io_submit",
                                     "close_range", "landlock_create_ruleset"])
def test_dockers_unconditional_allows_stay(syscall: str) -> None:
    assert syscall in unconditional_allows(load())


def test_dockers_conditional_rules_stay_as_they_were() -> None:
    """clone only without namespace flags, clone3 ENOSYS, ptrace from kernel 4.8, mount
    only with CAP_SYS_ADMIN, personality on a few values: all as in Docker's default."""
    profile = load()
    allowed = unconditional_allows(profile)
    for syscall in ("clone", "clone3", "ptrace", "mount", "unshare", "bpf", "personality"):
        assert syscall not in allowed

    clone = [rule for rule in rules_naming(profile, "clone") if rule["args"]]
    assert [rule["args"][0]["op"] for rule in clone] == ["SCMP_CMP_MASKED_EQ"] * 2
    assert [rule["excludes"]["caps"] for rule in clone] == [["CAP_SYS_ADMIN"]] * 2
    (clone3,) = [rule for rule in rules_naming(profile, "clone3")
                 if rule["action"] == "SCMP_ACT_ERRNO"]
    assert clone3["errnoRet"] == 38
    assert {"includes": {"minKernel": "4.8"}}.items() <= rules_naming(profile, "ptrace")[0].items()
    assert {rule["includes"].get("caps", [""])[0] for rule in rules_naming(profile, "mount")} \
        == {"CAP_SYS_ADMIN"}
    assert sorted(rule["args"][0]["value"] for rule in rules_naming(profile, "personality")) \
        == [0, 8, 131072, 131080, 4294967295]


def test_security_opt_carries_the_profile_inline_and_compact() -> None:
    option = security_opt()

    assert option == "seccomp=" + json.dumps(load(), separators=(",", ":"))
    assert "\n" not in option and "\t" not in option
    assert security_opt() is option  # read once
