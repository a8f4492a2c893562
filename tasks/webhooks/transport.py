"""One POST of a webhook to an address the policy checked (:mod:`.policy`).

``http.client`` is used directly: it follows no redirect, reads no proxy from the
environment, and lets the connection go to the checked address (the ``Host`` header and
TLS's server name stay the URL's host). Once connected, the socket's peer is checked
again, so what was reached is what was allowed. One attempt takes at most ``timeout_s``
in all, however slowly a receiver answers: a timer closes the connection at the deadline.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from .policy import Destination, Forbidden, Policy

#: The most of an answer's body read (and ignored): the status is the answer.
ANSWER_BYTES = 4096


@dataclass(frozen=True)
class Answer:
    """What an attempt got."""

    text: str
    """The status (``"200"``, ``"302 not followed"``), or ``timeout``,
    ``connection: …``, ``refused: …`` (the policy's: nothing was sent)."""
    kind: str
    """Its class, a metric label: ``2xx``, ``3xx``, ``4xx``, ``5xx``, ``timeout``,
    ``connection``, ``refused``, ``deferred`` (nothing sent: the summary's link waits for
    the archive)."""
    ms: float = 0.0

    @property
    def delivered(self) -> bool:
        return self.kind == "2xx"

    @property
    def final(self) -> bool:
        """Refused by the policy: never retried."""
        return self.kind == "refused"


def refused(err: Forbidden) -> Answer:
    """The answer of a delivery the policy refused."""
    return Answer(f"refused: {err}", "refused")


class PinnedConnection(http.client.HTTPSConnection):
    """A connection to ``address`` for ``destination``'s host, TLS only for ``https``."""

    def __init__(self, found: Destination, address: str, policy: Policy,
                 timeout_s: float, tls: ssl.SSLContext) -> None:
        self.tls = tls
        super().__init__(found.host, found.port, timeout=timeout_s, context=tls)
        self.found, self.address, self.policy = found, address, policy
        self.cut = threading.Event()
        """Set when the attempt's deadline closed the connection."""

    def connect(self) -> None:
        """Connect to the checked address, check the peer, then TLS (``https``).

        Raises:
            Forbidden: the socket's peer is not the checked address, or not allowed.
            OSError: the connection failed.
        """
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        peer = str(self.sock.getpeername()[0])
        if peer != self.address:
            raise Forbidden(f"connected to {peer}, not the checked {self.address}")
        self.policy.check_address(peer)
        if self.found.scheme == "https":
            self.sock = self.tls.wrap_socket(self.sock, server_hostname=self.found.host)


def post(url: str, body: bytes, headers: dict[str, str], policy: Policy,
         timeout_s: float, tls: ssl.SSLContext | None = None) -> Answer:
    """POST ``body`` to ``url`` if the policy allows it; the answer, never an exception
    (a receiver's failure is a result: the schedule retries it). ``tls``: the
    certificates trusted for ``https`` (the system's by default); the certificate must
    name the URL's host, whatever address was connected to."""
    started = time.monotonic()
    try:
        found, address = policy.check(url)
    except Forbidden as err:
        return refused(err)
    connection = PinnedConnection(found, address, policy, timeout_s,
                                  tls or ssl.create_default_context())
    deadline = threading.Timer(timeout_s, _cut, [connection])
    deadline.start()
    try:
        answer = _exchange(connection, found, body, headers)
    except Forbidden as err:
        answer = refused(err)
    except (OSError, http.client.HTTPException) as err:
        answer = _failure(err, expired=connection.cut.is_set())
    finally:
        deadline.cancel()
        connection.close()
    return Answer(answer.text, answer.kind, round((time.monotonic() - started) * 1000, 3))


def _exchange(connection: PinnedConnection, found: Destination, body: bytes,
              headers: dict[str, str]) -> Answer:
    """Send the request and read the status (and a little of the body)."""
    connection.request("POST", found.target, body=body, headers=headers)
    response = connection.getresponse()
    response.read(ANSWER_BYTES)
    status = int(response.status)
    kind = f"{min(max(status // 100, 2), 5)}xx"
    if kind == "3xx":
        return Answer(f"{status} not followed", kind)
    return Answer(str(status), kind)


def _failure(err: BaseException, expired: bool) -> Answer:
    if expired or isinstance(err, TimeoutError):
        return Answer("timeout", "timeout")
    return Answer(f"connection: {type(err).__name__}: {err}"[:300], "connection")


def _cut(connection: PinnedConnection) -> None:
    """Close the connection's socket at the attempt's deadline (a slow receiver); the
    failure that follows is then a timeout, whatever the socket says."""
    connection.cut.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
