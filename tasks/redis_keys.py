"""Every Redis key, stream, channel and consumer group of evalfleet's own (contracts).

Changing one is a breaking change (CHANGELOG.md's contract list points here). All live under
the ``evalfleet:`` prefix. The queues (Redis lists kombu keeps, ``evalfleet.<profile>`` and
its priority sub-lists) are named in :mod:`tasks.queueing`; kombu's own bookkeeping keys are
kombu's.
"""

from __future__ import annotations

from dataclasses import dataclass

RESULT_KEY = "evalfleet:result:{run_id}"
"""A run's published RunResult (string, JSON, with the result TTL); set once (``NX``)."""
RESULTS_STREAM = "evalfleet:results"
"""One entry per published result: ``run_id``, ``outcome``, ``score``, ``scorecard_result``."""
RESULTS_CHANNEL = "evalfleet:results"
"""Pub/sub: the run id of each result as it is published."""
INTAKE_STREAM = "evalfleet:intake"
"""Requests submitted without Python (``XADD … request <RunRequest JSON>``)."""
INTAKE_GROUP = "evalfleet-intake"
"""The workers' consumer group on :data:`INTAKE_STREAM`."""
DELIVERIES_KEY = "evalfleet:deliveries:{run_id}"
"""How many times a run was delivered (the delivery cap counts it)."""
PREFLIGHT_KEY = "evalfleet:preflight:{digest}"
"""The latest ``evalfleet check --fleet`` of a pack version (string, JSON, no expiry)."""
STATUS_KEY = "evalfleet:status:{run_id}"
"""A run's status record (hash: ``status``, ``match``, ``worker``, ``attempt``,
``expires_at``, and ``<status>_at`` for every transition, Unix seconds); it lives as long
as the result (:mod:`tasks.lifecycle`)."""
MATCH_KEY = "evalfleet:match:{match}"
"""A match's runs (sorted set: run id → the time it was first seen), as long as its
latest result lives."""
CANCELS_CHANNEL = "evalfleet:cancels"
"""Pub/sub: the run id of each run cancelled while queued or running (its worker stops
the sandbox)."""
WEBHOOKS_GROUP = "evalfleet-webhooks"
"""The workers' consumer group on :data:`RESULTS_STREAM`: every published result (a
cancel's too) is heard by one worker's webhook dispatcher (:mod:`tasks.webhooks`)."""
WEBHOOKS_DUE = "evalfleet:webhooks:due"
"""Webhook deliveries not yet done (sorted set: run id → when its next attempt is due, Unix
seconds, Redis's clock; a claimed one is pushed past its attempt's lease)."""
WEBHOOKS_PENDING = "evalfleet:webhooks:pending"
"""Webhook deliveries not yet done (sorted set: run id → when it was scheduled): the age
of the oldest undelivered result."""
HEARTBEAT_KEY = "evalfleet:heartbeat:{worker_id}"
"""A worker's heartbeat (string, with a TTL)."""
PACKS_KEY = "evalfleet:packs:{worker_id}"
"""The packs a worker serves from its ``EVALFLEET_PACKS_DIR`` (string, JSON: ``{"worker",
"packs_dir", "packs": [{"name", "version", "digest", "problem"}]}``, with the heartbeat's
TTL); written at start and refreshed with each heartbeat (:mod:`workers.served_packs`),
read by ``evalfleet packs``."""
FLEET_KEY = "evalfleet:fleet"
"""The fleet's id, set once by its first worker."""
ARCHIVE_GROUP = "evalfleet-archive"
"""The archivers' consumer group on :data:`RESULTS_STREAM` (:mod:`tasks.archive`). While
it exists, a result and its status record are published without expiry (the archiver
starts their TTL once the result is in the archive) and the stream is never trimmed past
the group's oldest entry not yet acknowledged."""
ARCHIVE_REFUSAL_KEY = "evalfleet:archive:refusal"
"""Why new runs are refused (string, with a TTL the archivers renew): the archive's
backlog would outgrow Redis's memory. Submissions fail with this text while it exists."""
DOORBELL_KEY = "evalfleet:doorbell:{queue}"
"""A queue's doorbell (list): a token pushed with each message sent to the queue, which
idle workers wait on (``BRPOP``) before they take (:mod:`tasks.broker`); deleted when a
worker finds the queue empty."""

SIGNING_KEYS = "evalfleet:signing_keys"
"""The public keys the fleet's workers sign with (hash): key id → JSON ``{"public_key":
<base64 of 32 bytes>, "worker": <id>, "seen_at": <unix s>}``. Where to find a key, never a
reason to trust one: ``evalfleet verify`` trusts only the keys its operator gives it."""


def result_key(run_id: str) -> str:
    """:data:`RESULT_KEY` of a run."""
    return RESULT_KEY.format(run_id=run_id)


def deliveries_key(run_id: str) -> str:
    """:data:`DELIVERIES_KEY` of a run."""
    return DELIVERIES_KEY.format(run_id=run_id)


def status_key(run_id: str) -> str:
    """:data:`STATUS_KEY` of a run."""
    return STATUS_KEY.format(run_id=run_id)


def match_key(match: str) -> str:
    """:data:`MATCH_KEY` of a match."""
    return MATCH_KEY.format(match=match)


def preflight_key(digest: str) -> str:
    """:data:`PREFLIGHT_KEY` of a pack digest."""
    return PREFLIGHT_KEY.format(digest=digest)


def heartbeat_key(worker_id: str) -> str:
    """:data:`HEARTBEAT_KEY` of a worker."""
    return HEARTBEAT_KEY.format(worker_id=worker_id)


def packs_key(worker_id: str) -> str:
    """:data:`PACKS_KEY` of a worker."""
    return PACKS_KEY.format(worker_id=worker_id)


def doorbell_key(queue: str) -> str:
    """:data:`DOORBELL_KEY` of a queue (``evalfleet.<profile>``)."""
    return DOORBELL_KEY.format(queue=queue)


TENANTS_KEY = "evalfleet:tenants"
"""The fleet's tenants (hash): name → JSON ``{"user", "created_at", "rules",
"password_sha256"}`` (:mod:`tasks.tenancy`). The fleet's intake forwarders read every
tenant's intake stream, the archivers and webhook dispatchers every tenant's results
stream."""
TENANT_PREFIX = "evalfleet:t:{tenant}:"
"""Where a tenant's keys, streams and channels live: its own copy of the run keys above
(``evalfleet:t:<tenant>:result:<run_id>``, ``…:status:<run_id>``, ``…:match:<match>``,
``…:deliveries:<run_id>``, the streams ``…:intake`` and ``…:results``, the channels
``…:results`` and ``…:cancels``). Its Redis ACL user may touch these and nothing else of
the fleet's (:mod:`tasks.tenancy`)."""
TENANT_PATTERN = r"^[a-z0-9][a-z0-9-]{0,31}$"
"""A tenant's name: lower-case letters, digits and ``-``, at most 32 characters (it names
keys, an ACL user and an archive prefix)."""


@dataclass(frozen=True)
class Keyspace:
    """The run keys of one tenant, or the fleet's own (``tenant`` None): the layout of a
    single-platform fleet, unchanged."""

    tenant: str | None = None

    @property
    def prefix(self) -> str:
        """``evalfleet:`` without a tenant, ``evalfleet:t:<tenant>:`` with one."""
        return "evalfleet:" if self.tenant is None else TENANT_PREFIX.format(tenant=self.tenant)

    @property
    def intake(self) -> str:
        """The intake stream (:data:`INTAKE_STREAM`)."""
        return self.prefix + "intake"

    @property
    def results_stream(self) -> str:
        """The results stream (:data:`RESULTS_STREAM`)."""
        return self.prefix + "results"

    @property
    def results_channel(self) -> str:
        """The results channel (:data:`RESULTS_CHANNEL`)."""
        return self.prefix + "results"

    @property
    def cancels_channel(self) -> str:
        """The cancels channel (:data:`CANCELS_CHANNEL`)."""
        return self.prefix + "cancels"

    def result(self, run_id: str) -> str:
        """A run's result key (:data:`RESULT_KEY`)."""
        return f"{self.prefix}result:{run_id}"

    def status(self, run_id: str) -> str:
        """A run's status record (:data:`STATUS_KEY`)."""
        return f"{self.prefix}status:{run_id}"

    def match(self, match: str) -> str:
        """A match's index (:data:`MATCH_KEY`)."""
        return f"{self.prefix}match:{match}"

    def deliveries(self, run_id: str) -> str:
        """A run's delivery count (:data:`DELIVERIES_KEY`)."""
        return f"{self.prefix}deliveries:{run_id}"

    @property
    def held(self) -> str:
        """Why its runs wait in the admission's waiting room (:data:`HELD_KEY`)."""
        return self.prefix + "held"

    @property
    def owner(self) -> str:
        """Whose share of the fleet this is in admission's keys: the tenant, or
        :data:`FLEET_OWNER` (a name no tenant can have)."""
        return self.tenant or FLEET_OWNER


FLEET = Keyspace()
"""The keys of a fleet without tenants (and of the runs submitted with the fleet's own
credentials on a fleet with tenants)."""


def keyspace(tenant: str | None) -> Keyspace:
    """The keys of ``tenant`` (None or ``""``: the fleet's own)."""
    return Keyspace(tenant or None)


def run_ref(run_id: str, keys: Keyspace = FLEET) -> str:
    """A run named fleet-wide: its run id, ``<tenant>/<run_id>`` for a tenant's run (run
    ids are a tenant's own, and have no ``/``): the webhook schedule's members and the
    sandboxes' run label."""
    return run_id if keys.tenant is None else f"{keys.tenant}/{run_id}"


def run_of(ref: str) -> tuple[Keyspace, str]:
    """Whose keys and which run id a :func:`run_ref` names."""
    tenant, _, run_id = ref.rpartition("/")
    return keyspace(tenant), run_id


# Admission (issue 48, :mod:`tasks.admission`): the fleet's own keys, which no tenant's
# user may touch. ``<owner>`` is a tenant's name or :data:`FLEET_OWNER`; ``<queue>`` a
# Celery queue (``evalfleet.<profile>``).
FLEET_OWNER = "_"
"""The fleet's own runs' owner in admission's keys (a tenant's name cannot be ``_``)."""
ADMISSION_PREFIX = "evalfleet:admission:"
WAITING_KEY = ADMISSION_PREFIX + "waiting:{queue}:{owner}"
"""The waiting room of one owner's runs for one queue (sorted set: run id → the most
urgent priority first, then the owner's matches in turn, each in order of arrival)."""
FLOWS_KEY = ADMISSION_PREFIX + "flows:{queue}:{owner}"
"""The virtual time of each of the owner's matches in that waiting room (hash)."""
REQUESTS_KEY = ADMISSION_PREFIX + "requests:{owner}"
"""The requests waiting or being admitted (hash: run id → ``[entry, queue, priority,
parked_at, request]``), deleted once the run's message is queued."""
COUNT_KEY = ADMISSION_PREFIX + "count:{owner}"
"""How many of the owner's runs wait (every queue)."""
IN_FLIGHT_KEY = ADMISSION_PREFIX + "in_flight:{owner}"
"""The owner's runs admitted and not yet published (sorted set: run id → when admitted)."""
RATE_KEY = ADMISSION_PREFIX + "rate:{owner}:{minute}"
"""How many of the owner's runs were admitted in one minute (Unix minutes)."""
ACTIVE_KEY = ADMISSION_PREFIX + "active"
"""Every waiting room with runs in it (set of ``<queue> <owner>``)."""
DEPTH_KEY = ADMISSION_PREFIX + "depth:{queue}"
"""One item per run waiting for ``queue`` (list): what KEDA scales on besides the queue."""
ADMITTED_KEY = ADMISSION_PREFIX + "admitted"
"""Runs admitted so far (hash: owner → count; metrics)."""
REFUSED_KEY = ADMISSION_PREFIX + "refused"
"""Runs refused over a quota so far (hash: ``<owner> <quota>`` → count; metrics)."""
LEASE_KEY = ADMISSION_PREFIX + "lease"
"""The one admitter at a time: the worker id holding it (expires unless renewed)."""
SLOTS_KEY = "evalfleet:slots:{worker_id}"
"""A live worker's slots: ``<concurrency> <queue> <queue> …`` (expires with its
heartbeat): how many runs the admitter keeps queued ahead of each queue's workers."""
HELD_KEY = TENANT_PREFIX + "held"
"""Why a tenant's waiting runs are not admitted now (the quota they are over, JSON), while
they are; the tenant may read it (its client's ``status`` shows it)."""


def waiting_key(queue: str, keys: Keyspace) -> str:
    """:data:`WAITING_KEY` of ``keys``' runs for ``queue``."""
    return WAITING_KEY.format(queue=queue, owner=keys.owner)


def flows_key(queue: str, keys: Keyspace) -> str:
    """:data:`FLOWS_KEY` of ``keys``' runs for ``queue``."""
    return FLOWS_KEY.format(queue=queue, owner=keys.owner)


def depth_key(queue: str) -> str:
    """:data:`DEPTH_KEY` of ``queue``."""
    return DEPTH_KEY.format(queue=queue)


def slots_key(worker_id: str) -> str:
    """:data:`SLOTS_KEY` of a worker."""
    return SLOTS_KEY.format(worker_id=worker_id)


def admission_keys(keys: Keyspace) -> dict[str, str]:
    """The owner-wide admission keys of ``keys``: ``requests``, ``count``, ``in_flight``."""
    owner = keys.owner
    return {"requests": REQUESTS_KEY.format(owner=owner), "count": COUNT_KEY.format(owner=owner),
            "in_flight": IN_FLIGHT_KEY.format(owner=owner)}


def rate_key(keys: Keyspace, minute: int) -> str:
    """:data:`RATE_KEY` of ``keys`` for one Unix minute."""
    return RATE_KEY.format(owner=keys.owner, minute=minute)
