"""Every container and image label evalfleet sets or reads (contracts).

Operators filter on these (``docker ps --filter label=evalfleet.fleet=…``), the reaper
removes by them, and images built by ``scripts/build-images.sh`` carry the image labels:
renaming one is a breaking change (CHANGELOG.md's contract list points here). All start
with :data:`LABEL_PREFIX`, which a profile's own labels may not use.
"""

from __future__ import annotations

LABEL_PREFIX = "evalfleet."

# Container labels, set when a sandbox is created (labels cannot change afterwards).
LABEL_RUN = "evalfleet.run_id"
"""The run the sandbox was created for, or :data:`WARM_RUN_ID`."""
LABEL_WORKER = "evalfleet.worker"
"""The worker (``EVALFLEET_WORKER_ID``) that owns the sandbox."""
LABEL_CREATED = "evalfleet.created"
"""Creation time (Unix seconds)."""
LABEL_DEADLINE = "evalfleet.deadline"
"""When the sandbox's wall limit runs out (Unix seconds); the reaper's last word."""
LABEL_PROFILE = "evalfleet.profile"
"""The sandbox profile."""
LABEL_POOL = "evalfleet.pool"
"""Set on a warm-pool sandbox."""
LABEL_FLEET = "evalfleet.fleet"
"""The fleet (the workers sharing one Redis) the sandbox belongs to."""
LABEL_PROCESS = "evalfleet.process"
"""The pid of the pool process that owns the sandbox (on the worker's host)."""
WARM_RUN_ID = "warm"
"""Run id of a warm container nobody has taken yet."""

# Image labels, set by the image builds.
LABEL_SUPERVISOR = "evalfleet.supervisor"
"""The supervisor's path in the image (``sandbox/images/supervisor``)."""
LABEL_PROTOCOL = "evalfleet.supervisor.protocol"
"""The version of the supervisor's protocol; an image whose supervisor speaks none the
driver supports (:data:`sandbox.docker.channel.SUPPORTED`) is driven by exec."""
