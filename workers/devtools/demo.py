"""``evalfleet demo``: the example packs through a live local fleet, then a table.

Starts a private Redis (unless ``EVALFLEET_REDIS_URL`` is set) and two worker nodes,
submits every example pack's passing and failing submission, shows progress, prints one
row per run, stops everything it started, and exits 0 only when every run was scored.
Packs with LLM judges are judged by a scripted stub judge on 127.0.0.1 that the demo
starts (every answer: score 4 of 5, assertion passes); the demo never calls a real provider.
The command itself is declared in :mod:`workers.cli`, which imports this module only when
the command runs.
"""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import click

from evalfleet.tasks.devtools.judge_stub import StubJudgeServer
from evalfleet.tasks.messages import RunRequest, RunResult
from evalfleet.tasks.platform import EvalfleetClient

from ..fleet_cli import pack_mapping
from ..settings import Settings
from .local_fleet import RedisServer, Starter, free_port

SUBMISSIONS = ("pass", "fail")


@dataclass(frozen=True)
class DemoRun:
    pack: str
    case: str | None
    submission: str
    request: RunRequest


def demo_runs(packs_dir: Path) -> list[DemoRun]:
    """One run per example submission; a multi-case pack runs against its first case."""
    from evalfleet.tasks.checking.submissions import load_submission

    runs: list[DemoRun] = []
    for pack_file in sorted(packs_dir.glob("*/pack.yaml")):
        mapping = pack_mapping(pack_file)
        cases = (mapping.get("input_sets") or [{}])[0].get("cases") or []
        case = cases[0].get("case_key") if len(cases) > 1 else None
        for name in SUBMISSIONS:
            folder = pack_file.parent / "submissions" / name
            if folder.is_dir():
                request = RunRequest(run_id=f"demo-{uuid.uuid4().hex[:10]}", pack=mapping,
                                     case_key=case, submission=load_submission(folder))
                runs.append(DemoRun(pack_file.parent.name, case, name, request))
    return runs


def row(run: DemoRun, result: RunResult | None) -> str:
    card = result.scorecard if result else None
    score = "-" if card is None or card.score is None else str(card.score)
    verdict = (card.result or "no contest") if card else (result.outcome if result else "missing")
    validity = card.validity if card else "-"
    runtime = str(result.resources.get("runtime") or "-") if result else "-"
    return (f"{run.request.run_id:<16} {run.pack:<22} {run.case or '-':<7} {run.submission:<5} "
            f"{score:>5} {verdict:<11} {validity:<8} {runtime}")


def run_demo(packs_dir: Path, timeout: float) -> int:
    """Run the demo; returns the process exit code."""
    settings = Settings()
    with tempfile.TemporaryDirectory(prefix="evalfleet-demo-") as tmp:
        redis = None if _redis_given() else RedisServer(free_port(), Path(tmp)).start()
        url = redis.url if redis else settings.redis_url
        judge = StubJudgeServer().start()
        starter = Starter(url, Path(tmp), **stub_judge_settings(judge.url))
        try:
            click.echo(f"fleet: redis {url}, starting 2 worker nodes")
            starter("demo"), starter("demo")
            return _submit_and_report(EvalfleetClient(url), demo_runs(packs_dir), timeout)
        finally:
            starter.stop_all()
            judge.stop()
            if redis:
                redis.stop()


def stub_judge_settings(url: str) -> dict[str, str]:
    """Worker settings sending every judge provider to the local stub judge."""
    settings = {"judges__backoff_s": "0"}
    for provider in ("anthropic", "openai", "gemini", "xai", "mistral", "openrouter"):
        base = url if provider == "anthropic" else url + "/v1"
        settings[f"judges__providers__{provider}__base_url"] = base
        settings[f"judges__providers__{provider}__api_key"] = "demo-stub"
    return settings


def _redis_given() -> bool:
    import os

    return "EVALFLEET_REDIS_URL" in os.environ


def _submit_and_report(client: EvalfleetClient, runs: list[DemoRun], timeout: float) -> int:
    client.submit_many([r.request for r in runs])
    results: list[RunResult | None] = []
    with click.progressbar(runs, label=f"scoring {len(runs)} runs") as bar:
        for run in bar:
            try:
                results.append(client.wait(run.request.run_id, timeout))
            except TimeoutError:
                results.append(None)
    click.echo(f"\n{'run':<16} {'pack':<22} {'case':<7} {'sub':<5} {'score':>5} "
               f"{'result':<11} {'validity':<8} runtime")
    for run, result in zip(runs, results, strict=True):
        click.echo(row(run, result))
    scored = sum(1 for r in results if r is not None and r.outcome == "scored")
    click.echo(f"\n{scored}/{len(runs)} runs scored; {runtime_summary(results)}")
    return 0 if scored == len(runs) else 1


def runtime_summary(results: list[RunResult | None]) -> str:
    """Which runtimes isolated the runs, and how many runs needed no sandbox (a pack that
    scores only the submitted events)."""
    runtimes = [str(r.resources.get("runtime") or "") for r in results if r and r.resources]
    used = sorted(set(filter(None, runtimes)))
    text = f"sandbox runtime: {', '.join(used) or '-'}{' (gVisor)' if used == ['runsc'] else ''}"
    without = runtimes.count("")
    return text + (f"; {without} run{'s' * (without != 1)} needed no sandbox" if without else "")
