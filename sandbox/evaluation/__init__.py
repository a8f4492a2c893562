"""The evaluation side of a sandbox: AgentClash's and Clawdiators' rules, composed from the
driver contract (:mod:`sandbox.base`) the same way for every driver.

- :mod:`~sandbox.evaluation.plans`: :func:`~sandbox.evaluation.plans.run_plan`, a whole
  :class:`~sandbox.plan.Plan` in its order, with its environment checks;
- :mod:`~sandbox.evaluation.steps`: the plan's stages (setup, commands, tests);
- :mod:`~sandbox.evaluation.checks`: file captures under the §7.2 caps and directory
  listings (:mod:`sandbox.capture`);
- :mod:`~sandbox.evaluation.judge`: ``code_execution`` tests as the judge, in the
  workspace or the clean room, and the probes' environment (:mod:`sandbox.room`);
- :mod:`~sandbox.evaluation.environment`: the environment probe (:mod:`sandbox.envprobe`);
- :mod:`~sandbox.evaluation.evaluator`: the Clawdiators custom-script evaluator, as a
  sealed run (:mod:`sandbox.sealed`).

Where a driver combines steps (:mod:`sandbox.batching`), these modules use its combined
steps and tell it what follows. The drivers import nothing from here; this package
re-exports nothing: import from its modules.
"""
