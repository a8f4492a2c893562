"""The fleet's work, by room. A change to how a run is evaluated goes in
:mod:`.evaluation`; to ``evalfleet check``, in :mod:`.checking`; to what a platform calls,
in :mod:`.platform`; to the Celery task or a wire contract, here at the top.

* Delivery: :mod:`.run_task` (the Celery task ``evalfleet.run``), :mod:`.task_context`
  (the runtime a worker hands it), :mod:`.publish` (one result per run id),
  :mod:`.patience` (waiting for a full Redis).
* :mod:`.checking`: pack checking (the check's runner, sections and report,
  :mod:`.checking.preflight`, :mod:`.checking.submissions`, the forgery battery
  :mod:`.checking.forgeries`).
* :mod:`.evaluation`: the run's evaluation (pipeline, planning, packs, budgets, the
  Clawdiators step, judge calls, provenance, closing, rescoring, verification). No Celery, kombu or
  Redis, and nothing from :mod:`.platform` or :mod:`.checking`.
* :mod:`.platform`: the platform's side (:mod:`.platform.client`, :mod:`.platform.intake`,
  :mod:`.platform.result_groups`).
* :mod:`.webhooks`: results pushed to the platform (signed, retried, to allowed hosts
  only), sent from the worker's main process. Nothing from :mod:`.evaluation`,
  :mod:`.platform` or :mod:`.checking`.
* :mod:`.archive`: every published result kept past its TTL in an object store (the
  stores, the key layout, the record, the archiver the workers run); below
  :mod:`.platform`, whose clients read it.
* The wire contracts: :mod:`.messages` (``RunRequest``/``RunResult``), :mod:`.decoding`,
  :mod:`.queueing` (task and queue names), :mod:`.redis_keys`, :mod:`.broker` (the Redis
  channel that does not lose a run), :mod:`.signatures` (a result's signature; the
  platform's client never imports it: it needs no ``cryptography``), :mod:`.tenancy` (the
  tenants: their Redis users and keys).
* :mod:`.devtools`: the stub judge server (tests and the demo only).

Each arrow of this map is an import-linter contract in pyproject.toml: delivery →
checking → evaluation | platform | webhooks → archive → the wire.
"""
