"""The one way every component connects to Redis: a plain URL, or Sentinel's.

    redis://[[user]:password@]host:port/db          one server (rediss:// over TLS)
    sentinel://[[user]:password@]h1:p1,h2:p2,h3:p3/<master>/<db>   (sentinels:// over TLS)

With Sentinel, clients ask the sentinels where the primary of ``<master>`` is, follow it
when it fails over, and never write to a replica. The credentials and the TLS options are
the primary's (the sentinels take ``sentinel_username`` / ``sentinel_password`` from the
query when they require a login of their own); the query's ``ssl_*`` options apply to every
TLS connection. Workers, the broker channel with its scripts (:func:`broker`), the intake
forwarders, the clients, metrics and the CLI all connect through :func:`connect`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import redis
import redis.asyncio
import redis.asyncio.sentinel
import redis.sentinel

SENTINEL_SCHEMES = {"sentinel": False, "sentinels": True}
#: Query options that configure TLS (redis-py's names), passed on as they are.
TLS_OPTIONS = ("ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile",
               "ssl_check_hostname")
DEFAULT_SENTINEL_PORT = 26379
#: redis-py's Sentinel clients (untyped there).
_SENTINEL: Any = redis.sentinel.Sentinel
_ASYNC_SENTINEL: Any = redis.asyncio.sentinel.Sentinel


class RedisURLError(ValueError):
    """A Redis URL evalfleet cannot connect with (the message says what is wrong)."""


@dataclass(frozen=True)
class SentinelTarget:
    """A primary found through Sentinel: where the sentinels are, which master, how to log in."""

    nodes: tuple[tuple[str, int], ...]
    master: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False
    options: dict[str, str] = field(default_factory=dict)
    """The query's options: ``ssl_*`` for TLS, ``sentinel_username`` / ``sentinel_password``."""

    def connection_kwargs(self) -> dict[str, Any]:
        """What every connection to the primary takes: database, credentials, TLS."""
        found: dict[str, Any] = {"db": self.db}
        if self.username:
            found["username"] = self.username
        if self.password:
            found["password"] = self.password
        if self.tls:
            found["ssl"] = True
            found.update({k: _tls_value(k, v) for k, v in self.options.items()
                          if k in TLS_OPTIONS})
        return found

    def sentinel_kwargs(self) -> dict[str, Any]:
        """What connections to the sentinels themselves take (TLS alike; their own login)."""
        found: dict[str, Any] = {k: v for k, v in self.connection_kwargs().items()
                                 if k not in ("db", "username", "password")}
        for ours, theirs in (("sentinel_username", "username"),
                             ("sentinel_password", "password")):
            if self.options.get(ours):
                found[theirs] = self.options[ours]
        return found


def _tls_value(name: str, value: str) -> Any:
    if name == "ssl_check_hostname":
        return value.lower() in ("1", "true", "yes")
    return value


def sentinel_target(url: str) -> SentinelTarget | None:
    """The Sentinel target a ``sentinel://`` URL names; None for any other URL.

    Raises:
        RedisURLError: a ``sentinel://`` URL without sentinels or a master name, or with a
            database that is not a number.
    """
    parts = urlsplit(url)
    if parts.scheme not in SENTINEL_SCHEMES:
        return None
    auth, _, hosts = parts.netloc.rpartition("@")
    nodes = tuple(_node(node) for node in hosts.split(",") if node)
    path = [unquote(p) for p in parts.path.split("/") if p]
    if not nodes or not path:
        raise RedisURLError(f"{_shown(url)}: a Sentinel URL is sentinel://HOST:PORT[,HOST:PORT"
                            "...]/MASTER[/DB]")
    username, _, password = auth.partition(":")
    return SentinelTarget(nodes, path[0], _db(path, url), unquote(username) or None,
                          unquote(password) or None, SENTINEL_SCHEMES[parts.scheme],
                          dict(parse_qsl(parts.query)))


def _node(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    try:
        return host, int(port) if port else DEFAULT_SENTINEL_PORT
    except ValueError:
        raise RedisURLError(f"a sentinel's port is a number: {text!r}") from None


def _db(path: list[str], url: str) -> int:
    try:
        return int(path[1]) if len(path) > 1 else 0
    except ValueError:
        raise RedisURLError(f"{_shown(url)}: the database is a number") from None


def _shown(url: str) -> str:
    """``url`` without its password."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


def sentinel_url(base: str, sentinels: str, master: str) -> str:
    """The Sentinel URL of ``master`` behind ``sentinels`` (``host:port,...``), logging in
    and choosing the database as ``base`` (a ``redis://`` or ``rediss://`` URL) does; its
    host is not used."""
    parts = urlsplit(base)
    auth = parts.netloc.rpartition("@")[0]
    scheme = "sentinels" if parts.scheme == "rediss" else "sentinel"
    db = parts.path.strip("/") or "0"
    nodes = ",".join(node.strip() for node in sentinels.split(",") if node.strip())
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{auth + '@' if auth else ''}{nodes}/{quote(master, safe='')}/{db}{query}"


def connect(url: str, **options: Any) -> Any:
    """A ``redis.Redis`` for ``url`` (Sentinel's or a plain one); ``options`` as redis-py's
    (``health_check_interval``, ``socket_timeout``, ...).

    Raises:
        RedisURLError: see :func:`sentinel_target`.
    """
    target = sentinel_target(url)
    if target is None:
        return redis.Redis.from_url(url, **options)
    sentinel = _SENTINEL(target.nodes, sentinel_kwargs=target.sentinel_kwargs(),
                         **_merged(target, options))
    return sentinel.master_for(target.master, redis_class=redis.Redis)


def connect_async(url: str, **options: Any) -> Any:
    """:func:`connect` for ``redis.asyncio``."""
    target = sentinel_target(url)
    if target is None:
        return redis.asyncio.Redis.from_url(url, **options)
    sentinel = _ASYNC_SENTINEL(target.nodes, sentinel_kwargs=target.sentinel_kwargs(),
                               **_merged(target, options))
    return sentinel.master_for(target.master, redis_class=redis.asyncio.Redis)


def _merged(target: SentinelTarget, options: dict[str, Any]) -> dict[str, Any]:
    return {**target.connection_kwargs(), **options}


@dataclass(frozen=True)
class Broker:
    """What a Celery app needs to reach the broker: kombu's URL and transport options, and
    ``broker_use_ssl`` (None: no TLS, or the URL says it as ``rediss://`` does)."""

    url: str
    transport_options: dict[str, Any] = field(default_factory=dict)
    use_ssl: dict[str, Any] | None = None


def broker(url: str) -> Broker:
    """The broker settings of ``url``: kombu's ``sentinel://`` form (one URL per sentinel,
    joined by ``;``, and ``master_name``) for a Sentinel URL; the URL itself otherwise.

    Raises:
        RedisURLError: see :func:`sentinel_target`.
    """
    target = sentinel_target(url)
    if target is None:
        return Broker(url)
    auth = _auth(target)
    joined = ";".join(f"sentinel://{auth}{host}:{port}/{target.db}" for host, port in target.nodes)
    options: dict[str, Any] = {"master_name": target.master,
                               "sentinel_kwargs": target.sentinel_kwargs()}
    tls = {k: _tls_value(k, v) for k, v in target.options.items() if k in TLS_OPTIONS}
    return Broker(joined, options, tls if target.tls else None)


def configure_broker(conf: Any, url: str, options: dict[str, Any]) -> None:
    """Point a Celery app's ``conf`` at ``url``'s broker, with its transport ``options``
    (:func:`tasks.queueing.transport_options`) and Sentinel's.

    Raises:
        RedisURLError: see :func:`sentinel_target`.
    """
    found = broker(url)
    conf.broker_url = found.url
    conf.broker_transport_options = {**options, **found.transport_options}
    if found.use_ssl is not None:
        conf.broker_use_ssl = found.use_ssl


def _auth(target: SentinelTarget) -> str:
    if not target.password:
        return f"{quote(target.username)}@" if target.username else ""
    return f"{quote(target.username or '')}:{quote(target.password, safe='')}@"


def shown(url: str) -> str:
    """``url`` as a log line or an error names it: no password."""
    return _shown(url)


def data_nodes(url: str) -> list[Any]:
    """A ``redis.Redis`` for every data node behind ``url``, primary first: what must hold
    the same ACL users (:mod:`tasks.tenancy`) so that a failover loses none. Under
    Sentinel, the primary and replicas the sentinels know; else the server and the
    replicas its ``INFO replication`` names, logged in as ``url`` says.

    Raises:
        RedisURLError: see :func:`sentinel_target`.
        redis.RedisError: a node could not be reached.
    """
    target = sentinel_target(url)
    if target is None:
        primary = redis.Redis.from_url(url)
        kwargs = dict(primary.connection_pool.connection_kwargs)
        return [primary, *(redis.Redis(**{**kwargs, "host": host, "port": port})
                           for host, port in _replicas(primary))]
    sentinel = _SENTINEL(target.nodes, sentinel_kwargs=target.sentinel_kwargs(),
                         **target.connection_kwargs())
    found = [sentinel.discover_master(target.master), *sentinel.discover_slaves(target.master)]
    return [redis.Redis(host=host, port=port, **target.connection_kwargs())
            for host, port in found]


def _replicas(primary: Any) -> list[tuple[str, int]]:
    """The replicas a primary's ``INFO replication`` names (``slaveN: ip=…,port=…``)."""
    info = primary.info("replication")
    return [(str(entry["ip"]), int(entry["port"])) for name, entry in sorted(info.items())
            if name.startswith("slave") and isinstance(entry, dict)]
