"""Where a webhook may go: the operator's allowlist of hosts and ports, and of addresses.

A fleet that calls out is a way into the platform's network if it calls wherever a
request says, so a delivery is sent only when

1. its URL is ``http``/``https`` and its ``host:port`` is on ``EVALFLEET_WEBHOOKS__ALLOW``;
2. every address its host resolves to is public — not loopback, private, link-local,
   shared, multicast or reserved — or inside a network the operator lists
   (``EVALFLEET_WEBHOOKS__NETWORKS``);
3. the connection goes to the address that was checked (never resolved again: no DNS
   rebinding between the check and the connection), and the address the socket is
   connected to is checked once more (:mod:`.transport`).

Anything else is :class:`Forbidden`: recorded as the attempt's answer, never sent, never
retried. Redirects are never followed (:mod:`.transport`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Resolves a host and port to addresses (the seam a test uses for a name that
#: resolves where it must not).
Resolver = Callable[[str, int], list[str]]
DEFAULT_PORTS = {"http": 80, "https": 443}


class Forbidden(Exception):
    """The policy refuses the delivery (the message says why); nothing was sent."""


@dataclass(frozen=True)
class Destination:
    """A callback URL, parsed."""

    scheme: str
    host: str
    port: int
    target: str
    """The request target: path and query (``/`` at least)."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``getaddrinfo`` gives for ``host`` (TCP).

    Raises:
        OSError: the name does not resolve.
    """
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def destination(url: str) -> Destination:
    """The parsed ``url``.

    Raises:
        Forbidden: not an http(s) URL with a host, or one with credentials.
    """
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    except ValueError as err:
        raise Forbidden(f"not a valid URL: {err}") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.password is not None \
            or parts.username is not None:
        raise Forbidden("not an http(s) URL with a host and no credentials")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(parts.scheme, parts.hostname.lower().rstrip("."), port, target)


@dataclass(frozen=True)
class Policy:
    """The allowlists, and the resolver to check a host's addresses with."""

    hosts: frozenset[tuple[str, int | None]]
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
    resolve: Resolver = system_resolver
    source: str = "EVALFLEET_WEBHOOKS__ALLOW"
    """Where the allowlist was set (a refusal names it)."""

    @classmethod
    def of(cls, allow: Iterable[str], networks: Iterable[str],
           resolve: Resolver = system_resolver,
           source: str = "EVALFLEET_WEBHOOKS__ALLOW") -> Policy:
        """The policy of the operator's ``allow`` (``host[:port]``, set in ``source``) and
        ``networks``.

        Raises:
            ValueError: an entry is not a host (with a port) or a network.
        """
        return cls(frozenset(host_port(entry) for entry in allow),
                   tuple(ipaddress.ip_network(n.strip(), strict=False) for n in networks),
                   resolve, source)

    def check(self, url: str) -> tuple[Destination, str]:
        """The destination of ``url`` and the address to connect to.

        Raises:
            Forbidden: the host or port is not allowed, the name does not resolve, or it
                resolves to an address that is not.
        """
        found = destination(url)
        if not self.allows(found):
            raise Forbidden(f"{found.host}:{found.port} is not in {self.source}")
        try:
            addresses = self.resolve(found.host, found.port)
        except OSError as err:
            raise Forbidden(f"{found.host} does not resolve: {err}") from None
        for address in addresses or ["(none)"]:
            self.check_address(address)
        return found, addresses[0]

    def allows(self, found: Destination) -> bool:
        """Whether ``found``'s host and port are on the allowlist (a host listed without
        a port: its scheme's default port only)."""
        default = found.port == DEFAULT_PORTS[found.scheme]
        return (found.host, found.port) in self.hosts or (
            default and (found.host, None) in self.hosts)

    def check_address(self, address: str) -> None:
        """Refuse an address that is not public and not in an allowed network.

        Raises:
            Forbidden: it is not allowed (or not an address).
        """
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            raise Forbidden(f"{address} is not an address") from None
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in network for network in self.networks):
            return
        if not ip.is_global or ip.is_multicast:
            raise Forbidden(f"{ip} is not a public address (and not in "
                            "EVALFLEET_WEBHOOKS__NETWORKS)")


def host_port(entry: str) -> tuple[str, int | None]:
    """An allowlist entry: ``host:port``, ``[v6]:port`` or ``host`` (the scheme's default
    port: ``None``).

    Raises:
        ValueError: it names no host, or a port that is not one.
    """
    parts = urlsplit("//" + entry.strip())
    if not parts.hostname:
        raise ValueError(f"webhook allowlist entry {entry!r} names no host")
    return parts.hostname.lower().rstrip("."), parts.port
