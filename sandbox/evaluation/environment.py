"""The environment probe (:mod:`sandbox.envprobe`) run in a sandbox: one command as the
candidate's uid in the workspace, before anything is seeded."""

from __future__ import annotations

from evalfleet.sandbox import envprobe
from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.envprobe import EnvironmentProbe, EnvironmentReport
from evalfleet.sandbox.errors import SandboxUnavailable


def check(sandbox: Sandbox, probe: EnvironmentProbe) -> EnvironmentReport:
    """Run the probe and read its report.

    Raises:
        SandboxUnavailable: the engine or the container is gone, or the probe got no
            answer from the sandbox (it could not start it, or it timed out).
    """
    result = sandbox.exec(probe.command(sandbox.profile.workdir))
    found = envprobe.parse(probe, result)
    if found is None:
        why = result.error or ("timed out" if result.timed_out else "no answer")
        raise SandboxUnavailable(f"environment probe: {why}", sandbox_id=sandbox.id)
    return found


def pristine(sandbox: Sandbox, probe: EnvironmentProbe) -> EnvironmentReport:
    """:func:`check` before anything of the run is seeded; a driver whose sandboxes serve
    several runs may answer from an earlier run's probe of the same
    :attr:`~sandbox.envprobe.EnvironmentProbe.key` (:meth:`~sandbox.base.Sandbox.pristine`),
    judged then by this probe's own space need.

    Raises:
        SandboxUnavailable: as :func:`check`.
    """
    fresh: list[EnvironmentReport] = []

    def measure() -> EnvironmentReport:
        fresh.append(check(sandbox, probe))
        return fresh[0]

    found = sandbox.pristine(probe.key, measure)
    return found if fresh else found.for_probe(probe)
