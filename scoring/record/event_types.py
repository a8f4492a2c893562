"""Every event type scoring reads and the worker writes, defined once (contracts).

Events are AgentClash's format, ``{type, sequence_number?, occurred_at, payload}``: the
platform supplies the agent's trajectory, the worker adds what the sandbox and the judges
did (``tasks.evaluation.recording``, ``tasks.evaluation.judging``), and
:mod:`scoring.record.evidence` reads them all. A stored run re-scores offline from its
events, so renaming a type is a breaking change (CHANGELOG.md's contract list points
here). The payloads of the worker's own events are shaped, and read back, in
:mod:`scoring.record.grader_events`.
"""

from __future__ import annotations

from typing import Final

# AgentClash's run events: the run's story, from the platform or the worker.
RUN_STARTED: Final = "system.run.started"
RUN_COMPLETED: Final = "system.run.completed"
RUN_FAILED: Final = "system.run.failed"
STEP_STARTED: Final = "system.step.started"
STEP_COMPLETED: Final = "system.step.completed"
OUTPUT_FINALIZED: Final = "system.output.finalized"
MODEL_CALL_STARTED: Final = "model.call.started"
MODEL_CALL_COMPLETED: Final = "model.call.completed"
MODEL_OUTPUT_DELTA: Final = "model.output.delta"
TOOL_CALL_COMPLETED: Final = "tool.call.completed"
TOOL_CALL_FAILED: Final = "tool.call.failed"

# AgentClash's sandbox and grader events: written by the worker from the sandbox's results.
COMMAND_FAILED: Final = "sandbox.command.failed"
FILE_CAPTURED: Final = "grader.verification.file_captured"
DIRECTORY_LISTED: Final = "grader.verification.directory_listed"
CODE_EXECUTED: Final = "grader.verification.code_executed"

# evalfleet's own: LLM judge calls (scoring.judges rebuilds the judge results from them).
JUDGE_CALL_COMPLETED: Final = "grader.judge.call_completed"
JUDGE_CALL_SKIPPED: Final = "grader.judge.call_skipped"
JUDGE_UNAVAILABLE: Final = "grader.judge.unavailable"

# evalfleet's own: the submission's files the sandbox could not hold (the candidate's loss).
SUBMISSION_REFUSED: Final = "grader.submission.refused"

# evalfleet's own: the Clawdiators layer's evidence.
EVALUATOR_COMPLETED: Final = "grader.evaluator.completed"
SUBMISSION_MANIFEST: Final = "grader.submission.manifest"
