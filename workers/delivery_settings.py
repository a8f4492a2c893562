"""The settings of the results' way out (``EVALFLEET_WEBHOOKS__*``,
``EVALFLEET_ARCHIVE__*``): sections of :class:`workers.settings.Settings`, which reads them
with the rest of the environment."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from evalfleet.tasks.archive.store import STORES, store_url
from evalfleet.tasks.messages import callback_problem
from evalfleet.tasks.tenancy import checked_name
from evalfleet.tasks.webhooks.config import MatchHook, TenantHook, WebhookConfig
from evalfleet.tasks.webhooks.policy import host_port


def listed(value: Any) -> Any:
    """A list given as text: JSON (``["a", "b"]``), or comma-separated (``a,b``)."""
    if not isinstance(value, str):
        return value
    if value.strip().startswith("["):
        return json.loads(value)
    return [item.strip() for item in value.split(",") if item.strip()]


class WebhookMatchSettings(BaseModel):
    """One match's webhook: a callback for its runs, and its own signing secrets."""

    url: str | None = None
    """Where the match's runs without a ``callback_url`` of their own are delivered."""
    secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    """The match's signing secrets (each active one signs every delivery); none: the
    fleet's ``EVALFLEET_WEBHOOKS__SECRETS``."""

    _listed = field_validator("secrets", mode="before")(listed)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None:
            callback_problem(value)
        return value


class WebhookTenantSettings(BaseModel):
    """One tenant's webhooks: its runs use these, never the fleet's allowlist, secrets
    and matches (docs/tenants.md)."""

    allow: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """``host:port`` (or ``host``) the tenant's callbacks may name; empty: every delivery
    of the tenant's is refused."""
    secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    """The tenant's signing secrets (each active one signs every delivery of its runs)."""
    matches: dict[str, WebhookMatchSettings] = Field(default_factory=dict)
    """Per match of the tenant's (as ``EVALFLEET_WEBHOOKS__MATCHES``)."""

    _listed = field_validator("allow", "secrets", mode="before")(listed)

    @field_validator("allow")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for entry in value:
            host_port(entry)
        return value

    def hook(self) -> TenantHook:
        return TenantHook(tuple(self.allow), _secrets(self.secrets), _matches(self.matches))


class WebhookSettings(BaseModel):
    """Results POSTed to callback URLs (``EVALFLEET_WEBHOOKS__*``; docs/platform.md,
    "Webhooks"): signed, retried, only to the hosts allowed here."""

    allow: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """``host:port`` (or ``host``: the scheme's default port) that callbacks may name,
    comma-separated (``EVALFLEET_WEBHOOKS__ALLOW=hooks.example.com,10.0.0.5:8443``). Empty:
    every delivery is refused."""
    networks: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Networks (CIDR) a callback's host may resolve to although they are not public
    (loopback, private, link-local are refused otherwise): ``10.20.0.0/16``."""
    secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    """The signing secrets, comma-separated; each signs every delivery (a ``v1=`` each in
    ``Evalfleet-Signature``), so one is rotated by adding the new, then removing the old."""
    matches: dict[str, WebhookMatchSettings] = Field(default_factory=dict)
    """Per match (JSON: ``{"m1": {"url": "https://…", "secrets": ["…"]}}``)."""
    tenants: dict[str, WebhookTenantSettings] = Field(default_factory=dict)
    """Per tenant (JSON: ``{"acme": {"allow": ["hooks.acme.example"], "secrets": ["…"],
    "matches": {…}}}``); a tenant not named here has no webhooks."""
    max_body_bytes: int = Field(1024 * 1024, gt=0)
    """A result larger than this is delivered as a summary (``result_url``: the archive's
    link, ``null`` without an archive)."""
    timeout_s: float = Field(10.0, gt=0)
    """The most one attempt takes, connection to answer."""
    first_retry_s: float = Field(10.0, gt=0)
    """The wait after a first failed attempt; it doubles (with jitter) up to
    ``max_retry_s``."""
    max_retry_s: float = Field(3600.0, gt=0)
    """The longest wait between two attempts."""
    give_up_after_s: float = Field(86400.0, gt=0)
    """No attempt is made later than this after the result was published: the delivery
    then fails (the run's status and ``evalfleet_webhook_deliveries_total`` say so)."""
    senders: int = Field(2, gt=0)
    """Deliveries each worker sends at once."""
    ca_file: Path | None = None
    """Certificates (PEM) trusted for ``https`` callbacks instead of the system's."""

    _listed = field_validator("allow", "networks", "secrets", mode="before")(listed)

    @field_validator("allow")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for entry in value:
            host_port(entry)
        return value

    @field_validator("tenants")
    @classmethod
    def _tenants(cls, value: dict[str, WebhookTenantSettings]
                 ) -> dict[str, WebhookTenantSettings]:
        for name in value:
            checked_name(name)
        return value

    @field_validator("networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for entry in value:
            ipaddress.ip_network(entry, strict=False)
        return value

    def config(self) -> WebhookConfig:
        """What the dispatcher needs."""
        return WebhookConfig(
            allow=tuple(self.allow), networks=tuple(self.networks),
            secrets=_secrets(self.secrets), matches=_matches(self.matches),
            tenants={name: t.hook() for name, t in self.tenants.items()},
            max_body_bytes=self.max_body_bytes, timeout_s=self.timeout_s,
            first_retry_s=self.first_retry_s, max_retry_s=self.max_retry_s,
            give_up_after_s=self.give_up_after_s, senders=self.senders,
            ca_file=None if self.ca_file is None else str(self.ca_file))


def _secrets(secrets: list[SecretStr]) -> tuple[str, ...]:
    return tuple(s.get_secret_value() for s in secrets)


def _matches(matches: dict[str, WebhookMatchSettings]) -> dict[str, MatchHook]:
    return {name: MatchHook(m.url, _secrets(m.secrets)) for name, m in matches.items()}


class ArchiveSettings(BaseModel):
    """The archive of every published result (``EVALFLEET_ARCHIVE__URL``; :mod:`tasks.archive`)."""

    url: str = "file:///var/lib/evalfleet/archive"
    """Where results go once published, kept past their Redis TTL: ``file:///a/directory``
    (the default), ``s3://[KEY:SECRET@]bucket/prefix?endpoint=http://host:8333`` (needs
    ``evalfleet[archive]``), or ``none`` (off: results are gone after their TTL). While it
    is on, a result's TTL starts once it is archived."""
    refuse_at: float = Field(0.8, gt=0, le=1)
    """New runs are refused while results wait for the archive and Redis uses more than
    this fraction of its ``maxmemory`` (``EVALFLEET_ARCHIVE__REFUSE_AT``)."""
    max_backlog: int = Field(0, ge=0)
    """New runs are refused while this many results wait for the archive (0: no cap; set
    one for a Redis without ``maxmemory``)."""
    claim_after_s: float = Field(60.0, gt=0)
    """An archiver takes over the results another left unwritten for this long (it died)."""
    tenants: dict[str, str] = Field(default_factory=dict)
    """Tenants whose runs go to a store of their own, reached with their own credentials
    (``EVALFLEET_ARCHIVE__TENANTS='{"acme": "s3://KEY:SECRET@bucket/acme?endpoint=…"}'``):
    an archive URL by tenant name, in the same layout. A tenant not named here is archived
    under ``tenants/<name>/`` of ``url``, with the fleet's credentials (docs/tenants.md)."""

    @field_validator("tenants")
    @classmethod
    def _tenant_stores(cls, value: dict[str, str]) -> dict[str, str]:
        for name, url in value.items():
            checked_name(name)
            if not store_url(url):
                raise ValueError(f"tenant {name!r}: the archive URL's scheme must be one of "
                                 f"{', '.join(sorted(STORES))}")
        return value

    @property
    def on(self) -> bool:
        return self.url.strip().lower() not in {"", "none"}
