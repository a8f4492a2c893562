"""Which runtime isolates each profile: gVisor whenever the engine has it, runc said loudly,
and a profile asking for what the engine cannot give stops the worker at start."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from evalfleet.sandbox.docker.runtimes import RuntimeInfo, offered
from evalfleet.workers.isolation import (
    AUTO,
    Isolation,
    IsolationError,
    apply,
    choose,
    resolve,
    served,
)
from evalfleet.workers.settings import ProfileSettings, Settings

RUNC = RuntimeInfo("runc", "runc")
RUNSC = RuntimeInfo("runsc", "/usr/bin/runsc", ("--network=none", "--oci-seccomp"))
RUNSC_NET = RuntimeInfo("gvisor-net", "/usr/bin/runsc", ("--oci-seccomp",))


def engine(*runtimes: RuntimeInfo) -> dict[str, RuntimeInfo]:
    return {r.name: r for r in runtimes}


def test_docker_info_runtimes_are_read_with_their_arguments() -> None:
    info = {"Runtimes": {"runc": {"path": "runc"},
                         "runsc": {"path": "/usr/bin/runsc",
                                   "runtimeArgs": ["--network=none", "--oci-seccomp"]}},
            "DefaultRuntime": "runc"}
    found = offered(info)
    assert found == {"runc": RUNC, "runsc": RUNSC}
    assert found["runsc"].gvisor and found["runsc"].networkless and not found["runc"].gvisor


def test_auto_is_gvisor_when_the_engine_has_it() -> None:
    assert choose("default", AUTO, False, engine(RUNC, RUNSC)) == Isolation(
        "default", "runsc", gvisor=True)


def test_auto_prefers_runsc_by_name_among_gvisor_runtimes() -> None:
    other = RuntimeInfo("aaa-gvisor", "/opt/runsc", ("--network=none",))
    assert choose("p", AUTO, False, engine(RUNC, other, RUNSC)).runtime == "runsc"
    assert choose("p", AUTO, False, engine(RUNC, other)).runtime == "aaa-gvisor"


def test_auto_falls_back_to_runc_and_says_why() -> None:
    found = choose("default", AUTO, False, engine(RUNC))
    assert (found.runtime, found.gvisor) == ("runc", False)
    assert "no gVisor runtime" in found.fallback and "NOT gVisor" in found.describe()


def test_auto_for_a_network_profile_needs_a_gvisor_runtime_with_network() -> None:
    assert choose("web", AUTO, True, engine(RUNC, RUNSC, RUNSC_NET)).runtime == "gvisor-net"
    fallback = choose("web", AUTO, True, engine(RUNC, RUNSC))
    assert fallback.runtime == "runc" and "--network=none" in fallback.fallback


def test_a_pinned_runtime_is_used_as_named() -> None:
    assert choose("p", "runc", False, engine(RUNC, RUNSC)) == Isolation("p", "runc", False)
    assert choose("p", "runsc", False, engine(RUNC, RUNSC)) == Isolation("p", "runsc", True)


def test_a_runtime_the_engine_lacks_is_an_error_naming_what_it_has() -> None:
    with pytest.raises(IsolationError, match=r"'runsc' is not one .* lists: runc"):
        choose("default", "runsc", False, engine(RUNC))


def test_network_on_a_networkless_gvisor_runtime_is_refused() -> None:
    with pytest.raises(IsolationError, match=r"allows network.*--network=none"):
        choose("web", "runsc", True, engine(RUNC, RUNSC))
    assert choose("web", "gvisor-net", True, engine(RUNSC_NET)).gvisor


def test_resolve_reports_every_bad_profile_at_once() -> None:
    profiles = {"a": ProfileSettings(runtime="kata"), "b": ProfileSettings(runtime="crun"),
                "c": ProfileSettings()}
    with pytest.raises(IsolationError) as raised:
        resolve(profiles, ["a", "b", "c"], engine(RUNC))
    assert "'a'" in str(raised.value) and "'b'" in str(raised.value)


def test_apply_pins_the_runtime_and_warns_once_per_fallback(
        caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(profiles={"default": ProfileSettings(), "web": ProfileSettings(
        allow_network=True)}, queues=["default", "web"])
    with caplog.at_level(logging.INFO, logger="evalfleet.workers.isolation"):
        apply(settings, resolve(settings.profiles, served(settings), engine(RUNC, RUNSC)))
    assert settings.profiles["default"].runtime == "runsc"
    assert settings.profiles["web"].runtime == "runc"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["SANDBOX ISOLATION DEGRADED: " + choose(
        "web", AUTO, True, engine(RUNC, RUNSC)).describe()]
    pipeline = settings.pipeline_config()
    assert pipeline.profiles["default"].profile.runtime == "runsc"


def test_an_unresolved_auto_profile_is_the_engines_default() -> None:
    assert ProfileSettings().bounds("p").profile.runtime is None
    assert ProfileSettings(runtime="runsc").bounds("p").profile.runtime == "runsc"


def test_the_runtime_setting_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALFLEET_PROFILES__DEFAULT__RUNTIME", "runc")
    assert Settings().profiles["default"].runtime == "runc"


def test_served_profiles_are_the_queues_with_a_profile() -> None:
    settings = Settings(profiles={"default": ProfileSettings(), "big": ProfileSettings()},
                        queues=["big", "nope"])
    assert served(settings) == ["big"]


def test_the_isolation_metric_labels_each_profile() -> None:
    from evalfleet.workers.metrics import IsolationCollector

    found: Any = next(iter(IsolationCollector([
        Isolation("default", "runsc", True),
        Isolation("web", "runc", False, fallback="no gVisor")]).collect()))
    assert [(s.labels, s.value) for s in found.samples] == [
        ({"profile": "default", "runtime": "runsc", "gvisor": "true", "fallback": "false"}, 1.0),
        ({"profile": "web", "runtime": "runc", "gvisor": "false", "fallback": "true"}, 1.0)]
