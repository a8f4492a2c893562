"""A scripted judge provider on 127.0.0.1: both wire APIs, answers chosen by the caller.

The stub broker of the judge family (as dramatiq ships stub brokers): the tests script it
(malformed JSON, fences, 429s, slow answers) and ``evalfleet demo`` runs judge packs
against it, so nothing ever reaches a real provider.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

DEFAULT_TEXT: Final = '{"score": 4, "pass": true, "confidence": "medium", "reasoning": "stub"}'


@dataclass(frozen=True)
class StubRequest:
    """One request the stub received."""

    api: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def message(self) -> str:
        return str(self.body["messages"][0]["content"])


@dataclass(frozen=True)
class Answer:
    """What the stub answers: a model text (or a raw body), a status, an optional delay."""

    text: str = DEFAULT_TEXT
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] = (40, 12)


Responder = Callable[[StubRequest], Answer]


def constant(answer: Answer | None = None) -> Responder:
    """Answer every request the same way."""
    fixed = answer or Answer()
    return lambda request: fixed


def keyword(rules: list[tuple[str, Answer]], default: Answer) -> Responder:
    """The first rule whose substring occurs in the message wins, else ``default``."""
    def respond(request: StubRequest) -> Answer:
        return next((a for needle, a in rules if needle in request.message), default)
    return respond


def envelope(api: str, model: str, answer: Answer) -> dict[str, Any]:
    """The API's success body around ``answer.text``."""
    tokens_in, tokens_out = answer.usage
    if api == "anthropic":
        return {"type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": answer.text}],
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
    return {"object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out}}


class StubJudgeServer:
    """A threaded HTTP server answering ``/chat/completions`` and ``/v1/messages``, on a free
    loopback port unless told otherwise (a container serving its network: ``0.0.0.0``)."""

    def __init__(self, respond: Responder | None = None,
                 script: list[Answer] | None = None, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.respond = respond or constant()
        self.script = list(script or [])
        self.requests: list[StubRequest] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> StubJudgeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, request: StubRequest) -> Answer:
        """The next scripted answer, else the responder's."""
        with self.lock:
            self.requests.append(request)
            if self.script:
                return self.script.pop(0)
        return self.respond(request)


def _api_of(path: str) -> str | None:
    if path.endswith("/chat/completions"):
        return "openai"
    return "anthropic" if path.endswith("/v1/messages") else None


def _handler(stub: StubJudgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            api = _api_of(self.path)
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if api is None:
                return self._send(404, '{"error": "unknown path"}', {})
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = stub.answer(StubRequest(api, self.path, headers, body))
            time.sleep(answer.delay_s)
            text = answer.raw_body if answer.raw_body is not None else json.dumps(
                envelope(api, str(body.get("model")), answer) if answer.status < 400
                else {"error": {"message": "scripted failure"}})
            self._send(answer.status, text, answer.headers)

        def _send(self, status: int, text: str, headers: dict[str, str]) -> None:
            data = text.encode()
            try:
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                pass

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib's name)
            """Quiet: requests carry API keys in headers; nothing is logged."""

    return Handler
