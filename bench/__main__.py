"""``python -m bench``: every performance case of issue 7, as one Markdown report.

    python -m bench                 # everything (about 40 minutes on 2 cores: scale's
                                    # 100,000-deep drains and reuse's bursts of 1,000)
    python -m bench --quick         # fewer repetitions and runs (about 15 minutes)
    python -m bench cold warm       # only the named cases
    python -m bench --runtimes runc # the end-to-end cases on runc only (default: runc,runsc)

Cases: ``cold``, ``warm`` (enqueue → scorecard against ``docker run``, with the per-phase
breakdown), ``throughput`` (1/2/4 worker processes against parallel ``docker run``),
``scoring`` (validator mix and BLEU/chrF against sacreBLEU), ``long_text`` (ROUGE-L and
token_f1 at 5,000 tokens; it and ``scoring`` need no Docker), ``signing`` (sealing a result
and checking it, against unsigned publication and ``rfc8785``; issue 43), ``dispatch`` (Celery round
trip against a bare no-op task), ``submission`` (the slim client's pipelined submission into
the intake stream against the old Celery send path and a bare ``XADD``, and one forwarder's
rate; needs only ``redis-server``), ``memory`` (worker RSS after many runs), ``sidecar``
(cold and warm runs through an engine container, as Kubernetes worker pods have, against the
host's engine), ``scale`` (the queue layer with sandbox-free runs: 1/2/4 processes against
bare Celery, a deep backlog, latency percentiles, pipelined submission, Redis memory per
run; issue 16), ``reuse`` (sandbox reuse on and off, sequential / staggered / burst with
percentiles; needs images whose supervisor resets, protocol 3: ``EVALFLEET_BENCH_IMAGE_TAG``
names their tag), ``cancel`` (``client.cancel`` → the running run's sandbox stopped and
removed, on each runtime, against removing an idle container directly; issue 41),
``failover`` (the Redis primary killed under a stream of runs through Sentinel: the time
without service; issue 46), ``archive`` (sandbox-free drains with the archive off, on a real
S3 server and on a local directory; bytes per archived result; issue 44), ``fairness``
(tenants' fair shares: a live tenant behind another's backlog, weights 3:1, admission's
cost; issue 48). Needs the
Docker engine, ``redis-server`` and the images of ``scripts/setup.sh``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import (
    archive,
    cancel,
    dispatch,
    endtoend,
    failover,
    fairness,
    long_text,
    reuse,
    scale,
    scoring_core,
    sidecar,
    signing,
    submission,
)
from bench.common import RUNTIMES, Report, private_fleet, sweep_containers

CASES = ("scoring", "long_text", "signing", "dispatch", "submission", "cold", "warm", "throughput",
         "memory", "sidecar", "scale", "reuse", "cancel", "failover", "archive", "fairness")
FLEET_CASES = frozenset({"cold", "warm", "throughput", "memory", "sidecar", "scale",
                         "reuse", "cancel"})
"""Cases that run in the private fleet (``failover`` makes its own Redis, through Sentinel)."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("cases", nargs="*", help=f"any of {', '.join(CASES)} (default: all)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the report here (Markdown)")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES),
                        help="runtimes of the cold/warm/throughput cases (comma-separated)")
    args = parser.parse_args(argv)
    wanted = args.cases or list(CASES)
    unknown = set(wanted) - set(CASES)
    if unknown:
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    quick = args.quick
    report = Report()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, "
          f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs\n")
    print("| case | evalfleet | baseline | ratio | target | |\n"
          "| --- | ---: | ---: | ---: | --- | --- |", flush=True)
    if "scoring" in wanted:
        scoring_core.run(report, seconds=0.3 if quick else 1.0)
    if "long_text" in wanted:
        long_text.run(report, repeats=3 if quick else 5)
    if "signing" in wanted:
        signing.run(report, seconds=0.5 if quick else 2.0)
    if "dispatch" in wanted:
        dispatch.run(report, 50 if quick else 200)
    if "submission" in wanted:
        submission.run(report, 2000 if quick else 10_000)
    if FLEET_CASES.intersection(wanted):
        _fleet_cases(report, wanted, quick, args.runtimes.split(","))
    if "failover" in wanted:
        failover.run(report, rounds=1 if quick else 3)
    if "archive" in wanted:
        archive.run(report, quick)
    if "fairness" in wanted:
        fairness.run(report, quick)
    print("\n" + report.markdown())
    if args.out:
        args.out.write_text(report.markdown() + "\n")


def _fleet_cases(report: Report, wanted: list[str], quick: bool,
                 runtimes: list[str]) -> None:
    """The cases that need a private fleet (Redis, worker processes, Docker)."""
    try:
        with private_fleet() as fleet:
            for runtime in runtimes:
                end_to_end(fleet, report, wanted, quick, runtime)
            if "memory" in wanted:
                endtoend.memory(fleet, report, 200 if quick else 1000)
            if "sidecar" in wanted:
                sidecar.run(fleet, report, 5 if quick else 15, runtimes)
            if "scale" in wanted:
                scale.run(fleet, report, quick)
            if "reuse" in wanted:
                reuse.run(fleet, report, runtimes, quick)
            if "cancel" in wanted:
                cancel.run(fleet, report, runtimes, quick)
    finally:
        sweep_containers()


def end_to_end(fleet: Any, report: Report, wanted: list[str], quick: bool,
               runtime: str) -> None:
    """The cold, warm and throughput cases on one runtime."""
    for case, warm in (("cold", False), ("warm", True)):
        if case in wanted:
            results = endtoend.overhead(fleet, report, 5 if quick else 15, warm=warm,
                                        runtime=runtime)
            endtoend.phases(report, f"{case} run on {runtime}", results)
    if "throughput" in wanted:
        endtoend.throughput(fleet, report, 20 if quick else 60, 10 if quick else 20,
                            runtime=runtime)


if __name__ == "__main__":
    main()
