"""What the operator set for webhooks (``EVALFLEET_WEBHOOKS__*``; ``workers.settings``
builds it): where a match's results go, which secrets sign them, which hosts and
addresses may be reached, the size past which a summary is sent, and the retry schedule."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MatchHook:
    """A match's own callback and secrets (both optional)."""

    url: str | None = None
    """Where the match's runs without a ``callback_url`` of their own are delivered."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """The match's signing secrets (all active, newest first); none: the fleet's."""


@dataclass(frozen=True)
class TenantHook:
    """A tenant's webhooks: the hosts its callbacks may name, the secrets that sign its
    deliveries, its matches' callbacks. A tenant's run is never signed with the fleet's
    secrets (another tenant could forge its deliveries) nor sent where only the fleet's
    allowlist allows."""

    allow: tuple[str, ...] = ()
    secrets: tuple[str, ...] = field(default=(), repr=False)
    matches: dict[str, MatchHook] = field(default_factory=dict)


@dataclass(frozen=True)
class WebhookConfig:
    """The dispatcher's configuration (see :mod:`tasks.webhooks`)."""

    allow: tuple[str, ...] = ()
    """Allowed ``host:port`` (or ``host``: the scheme's default port); none: every
    delivery is refused."""
    networks: tuple[str, ...] = ()
    """Networks (CIDR) allowed although not public (loopback, private, link-local are
    refused unless listed): the platform's own, when it is internal."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """The fleet's signing secrets (all active; each signs every delivery)."""
    matches: dict[str, MatchHook] = field(default_factory=dict)
    tenants: dict[str, TenantHook] = field(default_factory=dict)
    """Per tenant (its runs use these, never the fleet's ``allow``, ``secrets`` and
    ``matches``)."""
    max_body_bytes: int = 1024 * 1024
    """A result larger than this is delivered as a summary (:mod:`.payload`)."""
    timeout_s: float = 10.0
    """The most one attempt may take, connection to answer."""
    first_retry_s: float = 10.0
    max_retry_s: float = 3600.0
    give_up_after_s: float = 86400.0
    """No attempt is made later than this after the delivery was scheduled."""
    senders: int = 2
    """Deliveries a worker sends at once."""
    ca_file: str | None = None
    """Certificates (PEM) to trust for ``https`` callbacks instead of the system's (a
    platform with its own CA)."""

    def secrets_for(self, match: str | None, tenant: str | None = None) -> tuple[str, ...]:
        """The secrets that sign a run of ``match``: the match's own, else its tenant's
        (a tenant's run), else the fleet's (the fleet's own run)."""
        matches, secrets = self._of(tenant)
        hook = matches.get(match or "")
        return hook.secrets if hook is not None and hook.secrets else secrets

    def url_for(self, callback_url: str | None, match: str | None,
                tenant: str | None = None) -> str | None:
        """Where a run's result goes: its request's ``callback_url``, else its match's
        (its tenant's match, for a tenant's run)."""
        hook = self._of(tenant)[0].get(match or "")
        return callback_url or (hook.url if hook is not None else None)

    def allow_for(self, tenant: str | None) -> tuple[str, ...]:
        """The hosts a run's callback may name: its tenant's (none for a tenant the
        operator gave none), or the fleet's."""
        if tenant is None:
            return self.allow
        hook = self.tenants.get(tenant)
        return hook.allow if hook is not None else ()

    def _of(self, tenant: str | None) -> tuple[dict[str, MatchHook], tuple[str, ...]]:
        if tenant is None:
            return self.matches, self.secrets
        hook = self.tenants.get(tenant, TenantHook())
        return hook.matches, hook.secrets

    @property
    def lease_s(self) -> float:
        """How long a claimed delivery is another sender's to leave alone: past it (the
        sender died mid-attempt), the delivery is due again."""
        return 2 * self.timeout_s + 5.0
