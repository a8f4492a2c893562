"""From a request, its pack and its case to a sandbox :class:`~sandbox.plan.Plan`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalfleet.sandbox.capture import CaptureCheck, Check, ListingCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.paths import PathRejected, seeded_as, workspace_path
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.profile import WORKSPACE
from evalfleet.sandbox.room import Probe
from evalfleet.scoring import Case, EvaluationSpec, placeholders

from ..messages import FieldProblem, Rejection, RunRequest, SubmissionCommand, SubmissionFile
from . import pack_environment
from .clawdiators import evaluator_run
from .packs import ProbeSpec, SandboxBlock


def build_plan(spec: EvaluationSpec, case: Case | None, block: SandboxBlock,
               request: RunRequest, output_cap: int | None = None,
               workspace: str = WORKSPACE) -> Plan:
    """Everything the run needs from its sandbox, in the pipeline's order: the pack's own
    files and setup commands first, then the submission's (``workspace``: the profile's,
    for the environment probes of :mod:`tasks.evaluation.pack_environment`).

    Raises:
        Rejection: a submission file collides with a pack file or does not decode.
    """
    own = seed_files(block.files, "pack.version.sandbox.files", workspace)
    files = seed_files(request.submission.files, "request.submission.files", workspace)
    pack_paths = {seeded_as(p, workspace) for p in (*block.files, *block.test_files)}
    clashes = [path for path in request.submission.files
               if seeded_as(path, workspace) in pack_paths]
    if clashes:
        raise Rejection([FieldProblem(field=f"request.submission.files.{path}",
                                      message="collides with a file of the pack")
                         for path in clashes])
    env = step_env(block, request)
    setup = tuple(command(c, env, output_cap) for c in block.setup_commands)
    commands = [command(c, env, output_cap) for c in request.submission.commands]
    tests = seed_files(block.test_files, "pack.version.sandbox.test_files")
    context = case_context(case)
    runs = code_executions(spec, block.reports, context,
                           imports_deliverables=block.imports_deliverables)
    probes = tuple(probe(name, p, block.env_vars, output_cap, context)
                   for name, p in block.probes.items())
    evaluator = evaluator_run(spec, output_cap)
    before, after = pack_environment.probes(
        setup=setup, tests=runs, probes=[p.command for p in probes], evaluator=evaluator,
        env=env, workspace=workspace,
        needed_bytes=_bytes(own) + (0 if block.deliverables else _bytes(tests)))
    return Plan(setup_files=tuple(own), setup_commands=setup, files=tuple(files),
                commands=tuple(commands), test_files=tuple(tests), tests=runs,
                checks=checks(spec), evaluator=evaluator,
                deliverables=tuple(block.deliverables), probes=probes,
                environment=before, environment_after_setup=after)


def _bytes(files: list[SeedFile]) -> int:
    return sum(len(f.content) for f in files)


#: What a preflight run (``evalfleet check``) tells every step of the sandbox: its index in
#: the series of runs of one submission (``1`` … ``K``), so a pack can be flaky on purpose.
CHECK_RUN_ENV = "EVALFLEET_CHECK_RUN"


def step_env(block: SandboxBlock, request: RunRequest) -> dict[str, str]:
    """The environment the pack and the request add to every step of the run: the pack's
    ``env_vars``, and on a preflight run :data:`CHECK_RUN_ENV` (the pack cannot set it)."""
    env = {k: v for k, v in block.env_vars.items() if k != CHECK_RUN_ENV}
    if request.check_run is not None:
        env[CHECK_RUN_ENV] = str(request.check_run)
    return env


def seed_files(files: Mapping[str, str | SubmissionFile], field: str,
               workspace: str = WORKSPACE) -> list[SeedFile]:
    """Seed files from the wire form.

    Raises:
        Rejection: a path outside the workspace (``..``, absolute elsewhere, empty, NUL),
            or base64 content that does not decode.
    """
    seeds: list[SeedFile] = []
    for path, spec in files.items():
        item = SubmissionFile(content=spec) if isinstance(spec, str) else spec
        try:
            workspace_path(path, workspace)
            seeds.append(SeedFile(path=path, content=item.data(), mode=item.mode))
        except (PathRejected, ValueError) as err:
            raise Rejection([FieldProblem(field=f"{field}.{path}", message=str(err))]) from None
    return seeds


def command(spec: SubmissionCommand, env: Mapping[str, str], output_cap: int | None) -> Command:
    argv: tuple[str, ...] | str = spec.run if isinstance(spec.run, str) else tuple(spec.run)
    return Command(argv=argv, stdin=spec.stdin.encode(), env=dict(env),
                   timeout_s=spec.timeout_ms / 1000, output_cap_bytes=output_cap)


def probe(name: str, spec: ProbeSpec, env: Mapping[str, str], output_cap: int | None,
          context: Mapping[str, Any]) -> Probe:
    """A probe of the pack: its command as the candidate, placeholders filled."""
    fill = placeholders.render
    argv: tuple[str, ...] | str = (fill(spec.run, context).text if isinstance(spec.run, str)
                                   else tuple(fill(a, context).text for a in spec.run))
    return Probe(name=name, command=Command(argv=argv, stdin=spec.stdin.encode(),
                                            env=dict(env), timeout_s=spec.timeout_ms / 1000,
                                            output_cap_bytes=output_cap))


def code_executions(spec: EvaluationSpec, reports: Mapping[str, str] | None = None,
                    context: Mapping[str, Any] | None = None, *,
                    imports_deliverables: bool = False) -> tuple[CodeExecution, ...]:
    """One test run per ``code_execution`` validator whose target is a file capture (with
    the report the pack's ``reports`` names for it), its command's ``{{ path }}``
    placeholders filled from the case ``context`` (those without a value stay as they are,
    and are named); each importing the deliverables when the pack declares it does."""
    runs: list[CodeExecution] = []
    for decl in spec.validators:
        check = spec.check(decl.target.removeprefix("file:").strip())
        if decl.type != "code_execution" or check is None or check.type != "file_capture":
            continue
        config: dict[str, Any] = decl.config or {}
        command = placeholders.render(str(config.get("test_command", "")).strip(), context or {})
        runs.append(CodeExecution(
            validator_key=decl.key, target=decl.target, target_path=check.path,
            test_command=command.text, unresolved=command.unresolved,
            timeout_ms=int(config.get("timeout_ms") or 30_000),
            pass_threshold=float(config.get("pass_threshold", 1.0)),
            scoring=str(config.get("scoring") or "fraction_passed"),
            report=(reports or {}).get(decl.key), imports_deliverables=imports_deliverables))
    return tuple(runs)


def checks(spec: EvaluationSpec) -> tuple[Check, ...]:
    """The post-execution checks, in declaration order."""
    return tuple(
        CaptureCheck(key=c.key, path=c.path, max_size_bytes=c.max_size_bytes or None)
        if c.type == "file_capture" else ListingCheck(key=c.key, path=c.path,
                                                      recursive=c.recursive)
        for c in spec.post_execution_checks)


def case_context(case: Case | None) -> dict[str, Any]:
    """``{{ path }}`` context: the payload object merged with inputs that carry a value."""
    if case is None:
        return {}
    payload = case.payload_value()
    context = dict(payload) if isinstance(payload, dict) else {}
    context.update({entry.key: entry.value for entry in case.inputs if entry.has_value})
    return context
