"""The environment probe's answer read back: findings, or no answer (a broken sandbox)."""

from __future__ import annotations

from evalfleet.sandbox.envprobe import EnvironmentProbe, parse
from evalfleet.sandbox.results import ExecResult

PROBE = EnvironmentProbe(tools=("make", "pytest"), free_bytes=2 * 1024 * 1024)
DF = (b"@df\nFilesystem 1024-blocks Used Available Capacity Mounted on\n"
      b"tmpfs 65536 64512 1024 99% /workspace\n")


def test_a_sound_environment_has_no_findings() -> None:
    report = parse(EnvironmentProbe(), ExecResult(exit_code=0, stdout=b"writable\n" + DF))
    assert report is not None and report.problems == ()
    assert report.free_bytes == 1024 * 1024


def test_every_finding_is_named() -> None:
    answer = b"missing pytest\nmissing sh\nunwritable\n" + DF
    report = parse(PROBE, ExecResult(exit_code=0, stdout=answer))
    assert report is not None
    assert report.problems == (
        "the workspace is not writable",
        "the workspace has 1.0 MiB free, the pack's files need 2.0 MiB",
        "no `pytest` on the sandbox's PATH")  # "sh" was not asked for: not reported


def test_df_that_cannot_tell_is_no_finding() -> None:
    report = parse(PROBE, ExecResult(exit_code=1, stdout=b"writable\n@df\ndf: not found\n"))
    assert report is not None and report.free_bytes is None and report.problems == ()


def test_no_verdict_timeout_or_error_is_no_answer() -> None:
    assert parse(PROBE, ExecResult(exit_code=0, stdout=b"")) is None
    assert parse(PROBE, ExecResult(exit_code=None, timed_out=True)) is None
    assert parse(PROBE, ExecResult(exit_code=None, error="exec failed")) is None
