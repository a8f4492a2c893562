"""Judge calls over HTTP (httpx): an OpenAI-compatible chat API and an Anthropic-style
messages API, with a per-call timeout and retries with backoff on 429 / 5xx.

A provider's failure is a failed *call* (:class:`CallFailed`, recorded as the sample's
error), never a crash of the run. The API key travels in a header only and is scrubbed
from every error text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple

import httpx

from evalfleet.scoring.judges import JudgeCall

from .config import JudgingConfig, ProviderEndpoint

RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504, 529})
ERROR_BODY_CHARS: Final = 300


class Reply(NamedTuple):
    """A provider's answer: the text, the usage it reported, the HTTP status, attempts."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    status: int
    attempts: int


#: What kind of failure a :class:`CallFailed` is, recorded as the call's ``failure``
#: (:mod:`scoring.judges.faults` files it on the provider's side or the evidence's).
Failure = Literal["no_endpoint", "timeout", "connect", "status", "envelope", "transport"]


class CallFailed(Exception):
    """The call produced no answer (HTTP error, timeout, malformed envelope)."""

    def __init__(self, message: str, status: int | None = None, attempts: int = 1,
                 kind: Failure = "status") -> None:
        super().__init__(message)
        self.status, self.attempts, self.kind = status, attempts, kind


@dataclass(frozen=True)
class Api:
    """One wire dialect: the path, the headers, the body, and how to read the answer."""

    path: str
    headers: Callable[[ProviderEndpoint, JudgingConfig], dict[str, str]]
    body: Callable[[JudgeCall, int], dict[str, Any]]
    read: Callable[[Any], tuple[str, int | None, int | None]]


def _openai_headers(endpoint: ProviderEndpoint, config: JudgingConfig) -> dict[str, str]:
    return {"authorization": f"Bearer {endpoint.api_key.get_secret_value()}"}


def _anthropic_headers(endpoint: ProviderEndpoint, config: JudgingConfig) -> dict[str, str]:
    return {"x-api-key": endpoint.api_key.get_secret_value(),
            "anthropic-version": config.anthropic_version}


def _body(call: JudgeCall, max_tokens: int) -> dict[str, Any]:
    return {"model": call.model, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": call.message}]}


def _read_openai(data: Any) -> tuple[str, int | None, int | None]:
    """A message without ``content`` is an empty answer: what an output filter leaves
    (``finish_reason: content_filter``), which the judged evidence can trip."""
    text = data["choices"][0]["message"].get("content")
    usage = data.get("usage") or {}
    return str(text or ""), _count(usage.get("prompt_tokens")), \
        _count(usage.get("completion_tokens"))


def _read_anthropic(data: Any) -> tuple[str, int | None, int | None]:
    blocks = data["content"]
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    usage = data.get("usage") or {}
    return text, _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


APIS: Final[dict[str, Api]] = {
    "openai": Api("/chat/completions", _openai_headers, _body, _read_openai),
    "anthropic": Api("/v1/messages", _anthropic_headers, _body, _read_anthropic),
}


class Sender:
    """Sends judge calls to the configured endpoints."""

    def __init__(self, config: JudgingConfig, *, sleep: Callable[[float], None] = time.sleep,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.config, self.sleep = config, sleep
        self.client = httpx.Client(transport=transport, follow_redirects=False)

    def close(self) -> None:
        self.client.close()

    def endpoint(self, provider_key: str) -> ProviderEndpoint | None:
        """The endpoint serving ``provider_key``, if the operator configured one."""
        return self.config.endpoints.get(provider_key)

    def send(self, call: JudgeCall) -> Reply:
        """Send one call, retrying 429 / 5xx / refused connections with backoff. Each
        attempt waits ``call.timeout_ms`` for the answer.

        Raises:
            CallFailed: no endpoint, a timeout, a non-retryable status, retries exhausted,
                or an answer that is not the API's envelope (its ``kind`` says which).
        """
        endpoint = self.endpoint(call.provider_key)
        if endpoint is None:
            raise CallFailed(f'judge provider "{call.provider_key}" is not configured', None, 0,
                             "no_endpoint")
        try:
            return self._attempts(call, endpoint)
        except CallFailed as failed:
            raise CallFailed(_scrub(str(failed), endpoint), failed.status,
                             failed.attempts, failed.kind) from None

    def _attempts(self, call: JudgeCall, endpoint: ProviderEndpoint) -> Reply:
        api = APIS[endpoint.api]
        for attempt in range(1, self.config.max_retries + 2):
            response = self._post(call, endpoint, api, attempt)
            if response is not None and response.status_code not in RETRY_STATUSES:
                return _reply(api, response, attempt)
            if attempt > self.config.max_retries:
                status = response.status_code if response is not None else None
                raise CallFailed(f"judge provider gave up after {attempt} attempts: "
                                 f"{_describe(response)}", status, attempt,
                                 "status" if response is not None else "connect")
            self.sleep(self._delay(attempt, response))
        raise AssertionError("unreachable")

    def _post(self, call: JudgeCall, endpoint: ProviderEndpoint, api: Api,
              attempt: int) -> httpx.Response | None:
        """The response, or None when the connection was refused (a retryable failure)."""
        url = endpoint.base_url.rstrip("/") + api.path
        try:
            return self.client.post(url, json=api.body(call, self.config.max_output_tokens),
                                    headers=api.headers(endpoint, self.config),
                                    timeout=call.timeout_ms / 1000)
        except httpx.ConnectTimeout:
            raise CallFailed(f"judge call could not connect within {call.timeout_ms} ms",
                             None, attempt, "connect") from None
        except httpx.TimeoutException:
            raise CallFailed(f"judge call timed out after {call.timeout_ms} ms",
                             None, attempt, "timeout") from None
        except httpx.ConnectError:
            return None
        except httpx.HTTPError as err:
            raise CallFailed(f"judge call failed: {type(err).__name__}", None, attempt,
                             "transport") from None

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = self.config.backoff_s * float(2 ** (attempt - 1))
        after = response.headers.get("retry-after") if response is not None else None
        if after is not None and after.strip().replace(".", "", 1).isdigit():
            delay = float(after)
        return min(delay, self.config.max_backoff_s)


def _reply(api: Api, response: httpx.Response, attempts: int) -> Reply:
    if response.status_code >= 400:
        raise CallFailed(f"judge provider answered {_describe(response)}",
                         response.status_code, attempts)
    try:
        text, tokens_in, tokens_out = api.read(response.json())
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise CallFailed(f"judge provider answered HTTP {response.status_code} with a body "
                         "that is not the API's response envelope",
                         response.status_code, attempts, "envelope") from None
    return Reply(text, tokens_in, tokens_out, response.status_code, attempts)


def _describe(response: httpx.Response | None) -> str:
    if response is None:
        return "connection refused"
    return f"HTTP {response.status_code}: {response.text[:ERROR_BODY_CHARS]}"


def _scrub(text: str, endpoint: ProviderEndpoint) -> str:
    key = endpoint.api_key.get_secret_value()
    return text.replace(key, "[redacted]") if key else text
