"""Benchmark: evalfleet's own steps over trees the candidate shapes (issue 38, item 2).

Run with ``python -m bench.trees [RUNTIMES] [N]`` from the repository root (default
``runc,runsc`` and 3; needs the Docker engine and the images of ``scripts/setup.sh``). Each
step — the listing of the workspace, the evaluator's preparation and run, the deliverables'
export — is timed (median of N, one sandbox per shape, the tree built once) over each
hostile shape and over the baseline: a plain workspace of ten files, in the same process, on
the same runtime. The figure is the ratio to that baseline: what a shape can make a step
cost at most. Before issue 38 a deep tree took a listing past its output cap with nothing
stopping it (the channel out of step after its grace: ``infra_error``) and an evaluator's
preparation to its 30 s timeout. Numbers go in ``BENCHMARKS.md``; nothing here is a timed
assertion. Containers are labelled ``evalfleet.bench=1`` and removed at the end.
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import docker

from evalfleet.sandbox.capture import ListingCheck
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.sandbox.evaluation import checks, evaluator
from evalfleet.sandbox.evaluator import EvaluatorRun
from evalfleet.sandbox.profile import Limits, Profile

LABELS = {"evalfleet.bench": "1"}
IMAGE = "evalfleet/python:latest"

#: Each shape, as the command that builds it in the workspace (Python: every shape is made
#: in well under a second on runc, a few on gVisor).
SHAPES = {
    "plain (baseline)": "for i in range(10): open(f'f{i}', 'w').write('x')",
    "deep: 3,000 levels of 255-byte names": (
        "os.mkdir('out'); os.chdir('out')\n"
        "for _ in range(3000): os.mkdir('d' * 255); os.chdir('d' * 255)"),
    "nested: 20,000 levels of 1-byte names": (
        "os.mkdir('out'); os.chdir('out')\n"
        "for _ in range(20000): os.mkdir('d'); os.chdir('d')"),
    "wide: 20,000 files": "os.mkdir('out')\nfor i in range(20000): open(f'out/{i}', 'w').close()",
    "locked: 60 nested mode-000 directories": (
        "s = os.getcwd(); os.mkdir('out'); os.chdir('out')\n"
        "for i in range(60): os.mkdir('l'); open(f'l/f{i}', 'w').close(); os.chdir('l')\n"
        "for k in range(60, 0, -1): os.chmod(s + '/out' + '/l' * k, 0)"),
}
EVALUATOR = EvaluatorRun(runtime="python", script="print('{\"scores\": {\"c\": 1}}')")


def steps(sandbox: DockerSandbox) -> dict[str, Callable[[], object]]:
    """The steps timed, by name."""
    return {
        "listing": lambda: checks.list_directory(sandbox, ListingCheck("tree", ".")),
        "evaluator": lambda: evaluator.run(sandbox, EVALUATOR),
        "export": lambda: sandbox.export_files(["out"]),
    }


def measure(factory: DockerFactory, runtime: str, command: str, runs: int) -> dict[str, float]:
    """Median ms of each step over the tree ``command`` builds, in one sandbox."""
    profile = Profile(name="bench-trees", image=IMAGE, runtime=runtime,
                      limits=Limits(wall_timeout_s=1800))
    sandbox = factory.acquire(profile, run_id=f"bench-trees-{uuid.uuid4().hex[:8]}")
    try:
        built = sandbox.exec(Command(f'python3 -c "import os\n{command}"', timeout_s=300))
        if built.exit_code != 0:
            raise SystemExit(f"building the shape failed: {built.stderr[-300:]!r}")
        return {name: _median_ms(step, runs) for name, step in steps(sandbox).items()}
    finally:
        sandbox.close()


def _median_ms(step: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        step()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str]) -> None:
    runtimes = (argv[0] if argv else "runc,runsc").split(",")
    runs = int(argv[1]) if len(argv) > 1 else 3
    client = docker.from_env(timeout=600)
    factory = DockerFactory(client, worker="bench-trees", extra_labels=LABELS)
    try:
        for runtime in runtimes:
            _report(runtime, {shape: measure(factory, runtime, command, runs)
                              for shape, command in SHAPES.items()})
    finally:
        for container in labelled(client, [f"{k}={v}" for k, v in LABELS.items()]):
            container.remove(force=True)


def _report(runtime: str, measured: dict[str, dict[str, float]]) -> None:
    base = measured["plain (baseline)"]
    print(f"\n{runtime}\n\n| shape | " + " | ".join(f"{s} ms | ×" for s in base) + " |")
    print("| --- |" + " ---: | ---: |" * len(base))
    for shape, times in measured.items():
        cells = " | ".join(f"{times[s]:,.0f} | {times[s] / base[s]:.1f}" for s in base)
        print(f"| {shape} | {cells} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
