"""Tenants: the platforms that share one fleet, each behind its own Redis ACL user.

A tenant is a name (:data:`~tasks.redis_keys.TENANT_PATTERN`), a record in
:data:`~tasks.redis_keys.TENANTS_KEY`, and a Redis user, ``evalfleet-tenant-<name>``, whose
rules (:func:`acl_rules`) let it touch its own keys and channels
(``evalfleet:t:<name>:*``) and nothing else of the fleet's. The fleet learns a run's
tenant from the intake stream the run came in by, which only that user can write: never
from the request.

The record keeps the password's SHA-256 only (``ACL SETUSER … #<hash>``), so that every
Redis node (a replica promoted by Sentinel included) can be given the same user again
(:func:`apply`) without the password being stored anywhere.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from .admission.share import OverQuota, Share
from .redis_keys import (
    ARCHIVE_GROUP,
    FLEET,
    TENANT_PATTERN,
    TENANT_PREFIX,
    TENANTS_KEY,
    Keyspace,
    keyspace,
)

#: Each tenant's Redis user is named so.
USER_PREFIX = "evalfleet-tenant-"

#: What a tenant's client runs: the verbs of :class:`~tasks.platform.client.EvalfleetClient`
#: (submit and cancel are scripts, which run with the caller's rights: what they write, the
#: tenant may write; read statuses, results and match indexes; follow its results stream and
#: channel), on its own keys and channels only. It can spoil no run but its own, and what the
#: fleet published is signed.
COMMANDS = (
    "+@connection", "-client", "+client|setname", "+client|getname", "+client|id",
    "+select", "+time",
    "+eval", "+evalsha", "+evalsha_ro", "+eval_ro", "+script|load", "+script|exists",
    "+get", "+set", "+mget", "+exists", "+ttl", "+pttl", "+type", "+expire", "+persist",
    "+hget", "+hgetall", "+hmget", "+hexists", "+hset",
    "+zrange", "+zrangebyscore", "+zscore", "+zcard", "+zadd",
    "+xadd", "+xread", "+xreadgroup", "+xrange", "+xrevrange", "+xlen", "+xack",
    "+xgroup|create", "+xgroup|createconsumer", "+xinfo|stream", "+xinfo|groups",
    "+xpending", "+xautoclaim", "+xclaim",
    "+subscribe", "+unsubscribe", "+publish",
    "+multi", "+exec", "+discard",
)
#: Keys a tenant may read though they are the fleet's: why new runs are refused (its
#: submission script reads it).
FLEET_READABLE = ("evalfleet:archive:refusal",)


class TenantError(ValueError):
    """A tenant's name is not valid, or it exists already / does not exist."""


@dataclass(frozen=True)
class Tenant:
    """A tenant's record (:data:`~tasks.redis_keys.TENANTS_KEY`)."""

    name: str
    user: str
    created_at: float
    password_sha256: str
    rotated_at: float | None = None
    weight: float = 1.0
    """Its share of the workers while other owners' runs wait too (:mod:`tasks.admission`)."""
    max_in_flight: int | None = None
    """At most this many of its runs admitted and not yet published (None: no quota)."""
    max_per_minute: int | None = None
    """At most this many of its runs admitted per minute (None: no quota)."""
    over_quota: OverQuota = "wait"
    """A run over a quota waits its turn, or is refused (published ``rejected``)."""

    def __post_init__(self) -> None:
        """A weight or quota a share cannot have raises ValueError (saying which)."""
        _ = self.share

    @property
    def share(self) -> Share:
        """Its weight and quotas, for admission."""
        return Share(self.weight, self.max_in_flight, self.max_per_minute, self.over_quota)

    @property
    def keys(self) -> Keyspace:
        """Where its runs live."""
        return Keyspace(self.name)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: Any) -> Tenant:
        return cls(**json.loads(raw))


def checked_name(name: str) -> str:
    """``name``, if it can name a tenant.

    Raises:
        TenantError: it cannot (what is wrong with it).
    """
    if not re.fullmatch(TENANT_PATTERN, name):
        raise TenantError(f"tenant name {name!r}: use 1-32 lower-case letters, digits and "
                          "'-', starting with a letter or digit")
    return name


def user_of(name: str) -> str:
    """The Redis user of tenant ``name``."""
    return USER_PREFIX + name


def tenant_of_user(user: str | None) -> str | None:
    """The tenant whose Redis user is ``user`` (None: not a tenant's user)."""
    if user and user.startswith(USER_PREFIX):
        return user[len(USER_PREFIX):] or None
    return None


def new_password() -> str:
    """A password for a tenant's user (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def digest(password: str) -> str:
    """What Redis's ``#<hash>`` rule takes: the password's SHA-256, hex."""
    return hashlib.sha256(password.encode()).hexdigest()


def acl_rules(tenant: Tenant) -> list[str]:
    """The ``ACL SETUSER`` rules of ``tenant``'s user: its password's hash, its keys and
    channels, and :data:`COMMANDS`. Every rule is reset first: applying them again makes
    the same user."""
    prefix = TENANT_PREFIX.format(tenant=tenant.name)
    return ["reset", "on", f"#{tenant.password_sha256}", f"~{prefix}*",
            *(f"%R~{key}" for key in FLEET_READABLE), f"&{prefix}*", "-@all", *COMMANDS]


def all_tenants(redis: Any) -> list[Tenant]:
    """Every tenant of the fleet, by name."""
    return sorted((Tenant.from_json(raw) for raw in redis.hvals(TENANTS_KEY)),
                  key=lambda tenant: tenant.name)


def names(redis: Any) -> list[str]:
    """The names of every tenant (what the forwarders, archivers and dispatchers read)."""
    return sorted(_text(name) for name in redis.hkeys(TENANTS_KEY))


def find(redis: Any, name: str) -> Tenant:
    """Tenant ``name``.

    Raises:
        TenantError: there is none.
    """
    raw = redis.hget(TENANTS_KEY, checked_name(name))
    if raw is None:
        raise TenantError(f"no tenant {name!r} (evalfleet tenant list)")
    return Tenant.from_json(raw)


def add(redis: Any, nodes: list[Any], name: str, **share: Any) -> tuple[Tenant, str]:
    """Create tenant ``name`` and its user on every node of ``nodes``, with its ``share``
    (``weight``, ``max_in_flight``, ``max_per_minute``, ``over_quota``); the tenant and its
    password (shown once: only its hash is kept).

    Raises:
        TenantError: the name is not valid, or the tenant exists.
        ValueError: a share's value is not valid (what is wrong).
    """
    password = new_password()
    tenant = Tenant(checked_name(name), user_of(name), time.time(), digest(password),
                    **_quotas(share))
    if not redis.hsetnx(TENANTS_KEY, name, tenant.to_json()):
        raise TenantError(f"tenant {name!r} exists (evalfleet tenant show {name})")
    if _archive_on(redis):  # its results are kept until archived from the first one
        make_group(redis, tenant.keys.results_stream, ARCHIVE_GROUP)
    apply(nodes, tenant)
    return tenant, password


def set_share(redis: Any, name: str, **changes: Any) -> Tenant:
    """Change tenant ``name``'s weight or quotas (``weight``, ``max_in_flight``,
    ``max_per_minute``, ``over_quota``; a quota of 0 removes it); the admitter and the
    forwarders read it within seconds.

    Raises:
        TenantError: there is no such tenant.
        ValueError: a value a share cannot have (what is wrong).
    """
    changed = dataclasses.replace(find(redis, name), **_quotas(changes))  # checked here
    redis.hset(TENANTS_KEY, name, changed.to_json())
    return changed


def _quotas(share: dict[str, Any]) -> dict[str, Any]:
    """``share`` with a quota of 0 meaning none."""
    return {k: (None if k.startswith("max_") and v == 0 else v) for k, v in share.items()}


def rotate(redis: Any, nodes: list[Any], name: str) -> tuple[Tenant, str]:
    """A new password for tenant ``name``; the tenant and the new password. The old one
    stops working at once: the connections opened with it are closed, on every node (runs
    in flight are the fleet's and go on)."""
    password = new_password()
    tenant = find(redis, name)
    tenant = dataclasses.replace(tenant, password_sha256=digest(password), rotated_at=time.time())
    redis.hset(TENANTS_KEY, name, tenant.to_json())
    apply(nodes, tenant)
    for node in nodes:
        node.execute_command("CLIENT", "KILL", "USER", tenant.user)
    return tenant, password


def remove(redis: Any, nodes: list[Any], name: str) -> Tenant:
    """Delete tenant ``name``'s user from every node and its record (its keys stay until
    their TTLs end: its results are still archived and delivered)."""
    tenant = find(redis, name)
    for node in nodes:
        node.execute_command("ACL", "DELUSER", tenant.user)
        _save(node)
    redis.hdel(TENANTS_KEY, name)
    return tenant


def apply(nodes: list[Any], tenant: Tenant) -> None:
    """Make ``tenant``'s user on every node of ``nodes`` (the primary and its replicas)."""
    for node in nodes:
        node.execute_command("ACL", "SETUSER", tenant.user, *acl_rules(tenant))
        _save(node)


def apply_all(redis: Any, nodes: list[Any]) -> int:
    """Make every tenant's user on every node of ``nodes`` (a node that joined later, a
    replica promoted after a failover); how many tenants."""
    tenants = all_tenants(redis)
    for tenant in tenants:
        apply(nodes, tenant)
    return len(tenants)


def _archive_on(redis: Any) -> bool:
    """Whether the archive is on: its group exists on the fleet's results stream."""
    try:
        groups = redis.xinfo_groups(FLEET.results_stream)
    except Exception:  # no stream: no group
        return False
    return any(_text(group["name"]) == ARCHIVE_GROUP for group in groups)


def make_group(redis: Any, stream: str, group: str, start: str = "0") -> None:
    """Create consumer ``group`` on ``stream`` at ``start`` unless it exists.

    Raises:
        redis.RedisError: Redis refused (not because the group exists).
    """
    try:
        redis.xgroup_create(stream, group, id=start, mkstream=True)
    except Exception as error:  # made meanwhile by another worker
        if "BUSYGROUP" not in str(error):
            raise


Read = list[tuple[Keyspace, list[Any]]]
"""Entries read, stream by stream: whose keys, and the stream's entries."""


@dataclass
class TenantStreams:
    """One kind of stream, the fleet's and every tenant's (``stream_of`` names it), read
    through one consumer group: what the intake's forwarders, the archivers and the webhook
    dispatchers read. The tenants are read again every ``refresh_s``; a new tenant's stream
    gets the group at its start (its first entries are not missed)."""

    redis: Any
    group: str
    consumer: str
    stream_of: Callable[[Keyspace], str]
    refresh_s: float = 5.0
    keys: list[Keyspace] = field(default_factory=lambda: [FLEET])
    _refreshed: float = float("-inf")

    @property
    def streams(self) -> dict[str, Keyspace]:
        """Stream → whose keys."""
        return {self.stream_of(keys): keys for keys in self.keys}

    def ensure_groups(self, start: str = "0") -> None:
        """:func:`make_group` on every stream read."""
        for stream in self.streams:
            make_group(self.redis, stream, self.group, start)

    def refresh(self) -> list[Keyspace]:
        """The tenants new since the last look (their streams now read), once
        ``refresh_s`` has passed."""
        if time.monotonic() - self._refreshed < self.refresh_s:
            return []
        self._refreshed = time.monotonic()
        new = [keyspace(name) for name in names(self.redis) if keyspace(name) not in self.keys]
        for keys in new:
            make_group(self.redis, self.stream_of(keys), self.group)
            self.keys.append(keys)
        return new

    def read(self, start: str, count: int, block_ms: int | None = None) -> Read:
        """This consumer's entries not acknowledged (``0``) or new ones (``>``)."""
        streams = self.streams
        reply = self.redis.xreadgroup(self.group, self.consumer, dict.fromkeys(streams, start),
                                      count=count, block=block_ms)
        return [(streams[_text(stream)], list(items)) for stream, items in reply or [] if items]

    def claimed(self, idle_ms: int, count: int) -> Read:
        """Entries another consumer left unacknowledged for ``idle_ms``, now this one's."""
        found = []
        for stream, keys in self.streams.items():
            _, entries, *_ = self.redis.xautoclaim(stream, self.group, self.consumer, idle_ms,
                                                   count=count)
            if entries:
                found.append((keys, list(entries)))
        return found


def _save(node: Any) -> None:
    """Keep the node's users across its restart when it has an ACL file (``ACL SAVE``);
    a node without one keeps them in memory only (:func:`apply_all` makes them again)."""
    try:
        node.execute_command("ACL", "SAVE")
    except Exception as error:  # no aclfile configured: nothing to save to
        if "aclfile" not in str(error).lower() and "acl file" not in str(error).lower():
            raise


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def keys_of(client: Any, tenant: str | None = None) -> Keyspace:
    """The keys a client works in: ``tenant``'s when named, else those of the tenant whose
    user the client connects as (its URL's user name), else the fleet's own."""
    if tenant is None:
        kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {})
        tenant = tenant_of_user(kwargs.get("username"))
    return Keyspace(checked_name(tenant)) if tenant else Keyspace()
