"""Fleet commands of the ``evalfleet`` CLI: worker, run, submit, result, status, cancel,
runs, watch, health."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from evalfleet.scoring import EvaluationSpec, FieldError
from evalfleet.scoring.compat import yamlv3
from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.messages import RunRequest, RunResult

from .archive_url import archive_url_option
from .redis_url import redis_url_option
from .refusal import PackRefused, load
from .settings import ProfileSettings, Settings

PACK = click.Path(exists=True, dir_okay=False, path_type=Path)
#: Seconds the readiness check waits for the engine's ``/_ping`` (probes time out at 10 s).
ENGINE_PING_TIMEOUT_S = 5.0
SUBMISSION = click.Path(exists=True, path_type=Path)


def pack_mapping(path: Path) -> dict[str, Any]:
    """A pack file as the mapping a request carries inline, decoded as AgentClash decodes
    it (yaml.v3: ``no`` stays the text ``no``, ``1e3`` is 1000, dates are RFC 3339 text).

    Raises:
        PackRefused: the file is not a valid pack (each problem with its field).
    """
    pack = load(path)
    if not pack.manifest:
        raise PackRefused(path, [FieldError("", "is a bare evaluation spec, not a pack (a "
                                                "pack has pack, version.evaluation_spec, ...)")])
    return dict(yamlv3.to_json(dict(pack.manifest)))


def build_request(pack: Path, submission: Path, case: str | None,
                  run_id: str | None = None, **extra: Any) -> RunRequest:
    """A request for one submission to one case of a pack file."""
    return RunRequest(run_id=run_id or f"cli-{uuid.uuid4().hex[:12]}", pack=pack_mapping(pack),
                      case_key=case, submission=load_submission(submission), **extra)


def print_result(result: RunResult, output: str, spec: EvaluationSpec | None = None) -> None:
    """A result as JSON, one summary line, or (``table``) the report for people."""
    if output == "table":
        from rich.console import Console

        from .terminal_report import run_report

        Console(highlight=False).print(run_report(result, spec))
        return
    if output == "json":
        click.echo(result.model_dump_json(by_alias=True, indent=2))
        return
    card = result.scorecard
    if card is None:
        problems = "; ".join(f"{e.field} {e.message}" for e in result.errors)
        click.echo(f"{result.run_id}: {result.outcome}: {result.reason} {problems}".rstrip())
        return
    click.echo(f"{result.run_id}: {card.score}/1000 {card.result or 'no contest'} "
               f"({card.validity}) {card.overall_reason}".rstrip())


@click.command()
@click.option("--concurrency", "-c", type=int, help="Runs in parallel (pool processes).")
@click.option("--queues", "-Q", help="Comma-separated sandbox profiles to serve.")
@click.option("--pool", type=click.Choice(["prefork", "solo", "threads"]), default="prefork",
              show_default=True, help="Celery's execution pool.")
@click.option("--pool-size", type=click.IntRange(min=0),
              help="Warm sandboxes per served profile, in each pool process (0 = off).")
@redis_url_option()
def worker(concurrency: int | None, queues: str | None, pool: str,
           pool_size: int | None, redis_url: str) -> None:
    """Run a worker node (Celery worker + metrics + heartbeat + intake + reaper)."""
    from .worker import run_worker

    settings = Settings(redis_url=redis_url)
    if concurrency:
        settings.concurrency = concurrency
    if queues:
        settings.queues = [q.strip() for q in queues.split(",") if q.strip()]
    if pool_size is not None:
        for name in settings.queues:
            settings.profiles.setdefault(name, ProfileSettings()).pool_size = pool_size
    run_worker(settings, pool=pool)


@click.command("run")
@click.argument("pack", type=PACK)
@click.option("--submission", "-s", type=SUBMISSION, required=True)
@click.option("--case", "case_key")
@click.option("--format", "output", type=click.Choice(["table", "summary", "json"]),
              help="Default: table on a terminal, else summary (one line).")
def run_local(pack: Path, submission: Path, case_key: str | None, output: str | None) -> None:
    """Evaluate one submission in-process (real sandbox, no queue): for pack authors."""
    from .terminal_report import chosen_format

    evaluate_here = local_pipeline(Settings())
    result = evaluate_here(build_request(pack, submission, case_key))
    print_result(result, chosen_format(output, "summary"), _spec(pack))
    sys.exit(0 if result.outcome == "scored" else 2)


def _spec(pack: Path) -> EvaluationSpec | None:
    """The pack's spec for the report (None when it does not load: the result says why)."""
    from evalfleet.scoring import SpecError, load_pack

    try:
        return load_pack(pack).spec
    except SpecError:
        return None


def local_pipeline(settings: Settings) -> Callable[[RunRequest], RunResult]:
    """Run requests in this process as a worker would: every profile's runtime resolved as
    at worker start (said on stderr), a cold Docker sandbox per run, the same pipeline.

    Raises:
        SystemExit: a profile asks for a runtime the engine cannot give it.
    """
    from evalfleet.sandbox.docker.factory import DockerFactory
    from evalfleet.tasks.evaluation.pipeline import run_pipeline

    from .clients import docker_client
    from .worker import resolve_isolation

    for isolation in resolve_isolation(settings, sorted(settings.profiles)):
        click.echo(f"sandbox: {isolation.describe()}", err=True)
    factory = DockerFactory(docker_client(settings), worker=settings.worker_id)
    config = settings.pipeline_config()
    return lambda request: run_pipeline(request.model_dump(mode="json"), factory, config)


@click.command()
@click.argument("pack", type=PACK)
@click.option("--submission", "-s", "submissions", type=SUBMISSION, required=True,
              multiple=True, help="Repeat for a batch.")
@click.option("--case", "case_key")
@click.option("--match", help="The match the runs belong to (evalfleet runs --match M).")
@click.option("--callback-url", help="Where the fleet POSTs each result (an allowed host: "
                                     "docs/platform.md, \"Webhooks\").")
@click.option("--wait", "wait", is_flag=True, help="Wait for the scorecards.")
@click.option("--timeout", type=float, default=600.0, show_default=True)
@redis_url_option()
def submit(pack: Path, submissions: tuple[Path, ...], case_key: str | None, match: str | None,
           callback_url: str | None, wait: bool, timeout: float, redis_url: str) -> None:
    """Enqueue submissions to the fleet; print run ids (or, with --wait, scorecards)."""
    from evalfleet.tasks.platform import EvalfleetClient

    extra = {k: v for k, v in (("match", match), ("callback_url", callback_url)) if v}
    requests = [build_request(pack, s, case_key, **extra) for s in submissions]
    client = EvalfleetClient(redis_url)
    run_ids = client.submit_many(requests)
    if not wait:
        click.echo("\n".join(run_ids))
        return
    with click.progressbar(run_ids, label="waiting for scorecards") as bar:
        results = [client.wait(run_id, timeout) for run_id in bar]
    for result in results:
        print_result(result, "summary")


@click.command()
@click.argument("run_id")
@click.option("--format", "output", type=click.Choice(["summary", "json"]), default="json")
@redis_url_option()
@archive_url_option()
def result(run_id: str, output: str, redis_url: str, archive_url: str | None) -> None:
    """Print a run's published result, from the archive once Redis has forgotten it (exit 1
    if there is none yet)."""
    from evalfleet.tasks.platform import EvalfleetClient

    found = EvalfleetClient(redis_url, archive_url=archive_url).result(run_id)
    if found is None:
        click.echo(f"{run_id}: no result (queued, running, unknown, or past its TTL and not "
                   f"archived: "
                   f"evalfleet status {run_id})", err=True)
        sys.exit(1)
    print_result(found, output)


@click.command()
@click.argument("run_id")
@click.option("--format", "output", type=click.Choice(["summary", "json"]), default="summary")
@redis_url_option()
@archive_url_option()
def status(run_id: str, output: str, redis_url: str, archive_url: str | None) -> None:
    """Where a run stands: queued, running (where), or how it ended (exit 1: unknown)."""
    from evalfleet.tasks.platform import EvalfleetClient

    found = EvalfleetClient(redis_url, archive_url=archive_url).status(run_id)
    if found is None:
        click.echo(f"{run_id}: unknown (never submitted, or past its result's TTL)", err=True)
        sys.exit(1)
    click.echo(found.model_dump_json(indent=2) if output == "json" else status_line(found))


def status_line(found: Any) -> str:
    """One line: the run, its status, where it runs, and since when."""
    where = f" on {found.worker} (attempt {found.attempt})" if found.worker else ""
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(found.at.get(found.status, 0)))
    match = f" [match {found.match}]" if found.match else ""
    held = f" (held by its tenant's {found.held})" if found.held else ""
    return (f"{found.run_id}: {found.status}{held}{where} since {since}{match}"
            f"{webhook_words(found)}")


def webhook_words(found: Any) -> str:
    """The delivery of the run's result to its callback, in a few words ("" without one)."""
    hook = found.webhook
    if hook is None:
        return ""
    tries = len(hook.attempts)
    last = f", last: {hook.attempts[-1].answer}" if hook.attempts else ""
    words = {"delivered": f"delivered ({tries} attempt{'s' * (tries != 1)})",
             "failed": f"failed after {tries} attempt{'s' * (tries != 1)}: {hook.reason}",
             "pending": f"pending ({tries} attempt{'s' * (tries != 1)}{last})"}
    return f"; webhook {words[hook.state]}"


@click.command()
@click.argument("run_id", required=False)
@click.option("--match", help="Cancel every run of this match instead.")
@redis_url_option()
def cancel(run_id: str | None, match: str | None, redis_url: str) -> None:
    """Cancel a run (or a match's runs): a queued run never starts, a running one's sandbox
    stops; a finished run is left as it is. Exit 1 when a run is unknown."""
    from evalfleet.tasks.platform import EvalfleetClient

    if (run_id is None) == (match is None):
        raise click.UsageError("give a RUN_ID or --match, not both")
    client = EvalfleetClient(redis_url)
    answers = client.cancel_match(match) if match else [client.cancel(str(run_id))]
    for answer in answers:
        click.echo(CANCEL_WORDS[answer.what].format(run=answer.run_id, was=answer.was))
    sys.exit(1 if any(a.what == "unknown" for a in answers) else 0)


#: What ``evalfleet cancel`` says of each answer.
CANCEL_WORDS = {"cancelled": "{run}: cancelled (it was {was})",
                "finished": "{run}: finished already ({was}): left as it is",
                "unknown": "{run}: unknown (never submitted, or past its result's TTL)"}


@click.command()
@click.option("--match", required=True)
@click.option("--format", "output", type=click.Choice(["summary", "json"]), default="summary")
@redis_url_option()
@archive_url_option()
def runs(match: str, output: str, redis_url: str, archive_url: str | None) -> None:
    """A match's runs with their statuses, in the order they were submitted."""
    from evalfleet.tasks.platform import EvalfleetClient

    found = EvalfleetClient(redis_url, archive_url=archive_url).runs(match)
    if output == "json":
        click.echo(json.dumps([s.model_dump(mode="json") for s in found], indent=2))
        return
    click.echo("\n".join(status_line(s) for s in found) or f"no runs in match {match}")


@click.command()
@click.option("--group", default="evalfleet-watch", show_default=True)
@click.option("--once", is_flag=True, help="Stop when no new result arrives for a while.")
@redis_url_option()
def watch(group: str, once: bool, redis_url: str) -> None:
    """Follow published results as they arrive (resumable through a consumer group)."""
    from evalfleet.tasks.platform import EvalfleetClient

    client = EvalfleetClient(redis_url)
    for found in client.results(group=group, block_ms=2000, stop_when_idle=once):
        print_result(found, "summary")


@click.command()
@click.option("--ready", is_flag=True,
              help="Readiness: also require a reachable broker and Docker engine.")
@redis_url_option()
def health(ready: bool, redis_url: str) -> None:
    """Exit 0 when this worker is live (heartbeat fresh) [and ready], else 1; prints why,
    and the worker's notes (which runtime isolates each profile)."""
    from .clients import docker_client, heartbeat_path, redis_client
    from .health import is_live, is_ready, notes

    settings = Settings(redis_url=redis_url)
    path = heartbeat_path(settings)
    ok, why = (is_ready(path, settings.heartbeat_ttl_s, redis_client(settings),
                        docker_client(settings, timeout=ENGINE_PING_TIMEOUT_S)) if ready
               else is_live(path, settings.heartbeat_ttl_s))
    click.echo("\n".join([why, *notes(path)]), err=not ok)
    sys.exit(0 if ok else 1)


@click.command()
@click.option("--parent", type=int, hidden=True,
              help="Stop when this process (the worker that started it) is gone.")
@redis_url_option()
def archiver(parent: int | None, redis_url: str) -> None:
    """Write every published result to the archive (EVALFLEET_ARCHIVE__URL) until
    stopped; each worker node runs one beside itself."""
    import logging

    from .archiving import serve

    logging.basicConfig(level=logging.INFO,
                        format="[%(asctime)s: %(levelname)s/archiver] %(message)s")
    serve(Settings(redis_url=redis_url), parent)


@click.command()
@click.option("--parent", type=int, hidden=True,
              help="Stop when this process (the worker that started it) is gone.")
@redis_url_option()
def admitter(parent: int | None, redis_url: str) -> None:
    """Admit runs from the tenants' waiting rooms into the queues while this node holds the
    fleet's lease (docs/tenants.md); each worker node runs one beside itself."""
    import logging

    from .admitting import serve

    logging.basicConfig(level=logging.INFO,
                        format="[%(asctime)s: %(levelname)s/admitter] %(message)s")
    serve(Settings(redis_url=redis_url), parent)


COMMANDS = [worker, run_local, submit, result, status, cancel, runs, watch, health, archiver,
            admitter]

