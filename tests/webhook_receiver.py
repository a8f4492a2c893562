"""A real HTTP receiver on loopback for the webhook tests: it records every delivery and
answers as the test scripts it (a status, after a delay, with headers: a redirect)."""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Delivery:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes
    peer: str


@dataclass(frozen=True)
class Reply:
    """How the receiver answers one request."""

    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


Script = Callable[[Delivery, int], Reply]
"""The answer to a delivery, given how many the receiver got before it."""


def always(reply: Reply) -> Script:
    return lambda delivery, count: reply


def then(*replies: Reply) -> Script:
    """Each reply in turn, the last one for ever after."""
    return lambda delivery, count: replies[min(count, len(replies) - 1)]


class Receiver:
    """An ``http.server`` on 127.0.0.1 (its own port), in a thread; a context manager."""

    def __init__(self, script: Script | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.script = script or always(Reply())
        self.deliveries: list[Delivery] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        if tls is not None:  # https (a failed handshake is dropped by the server)
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "http" if tls is None else "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def got(self, delivery: Delivery) -> Reply:
        with self.lock:
            count = len(self.deliveries)
            self.deliveries.append(delivery)
        return self.script(delivery, count)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                reply = receiver.got(Delivery(self.path, dict(self.headers.items()), body,
                                              self.client_address[0]))
                time.sleep(reply.delay_s)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:  # the sender hung up (its deadline)
                    pass

            def log_message(self, *_: Any) -> None:
                pass

        return Handler
