"""Sandboxes for evaluation runs: the contract and (in ``sandbox.docker``) the hardened
Docker driver; the contract's in-memory fake and its checks are in ``sandbox.testing``,
which production code never imports.

The driver contract is :mod:`sandbox.base` (primitives only) with the optional combined
steps of :mod:`sandbox.batching` and the optional sealed run of :mod:`sandbox.sealed`; the
evaluation side, :mod:`sandbox.evaluation`, composes them into AgentClash's and
Clawdiators' rules. The pipeline builds a
:class:`~sandbox.plan.Plan`, acquires a :class:`~sandbox.base.Sandbox` from a
:class:`~sandbox.base.SandboxFactory` and calls
:func:`~sandbox.evaluation.plans.run_plan`; the result carries one record per step.
Candidate failures are fields of results;
:class:`~sandbox.errors.SandboxUnavailable` (retry) and
:class:`~sandbox.errors.SandboxConfigError` (don't) are ours. This package re-exports
nothing: import from its modules.
"""
