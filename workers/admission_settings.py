"""The settings of admission (``EVALFLEET_ADMISSION__*``; :mod:`tasks.admission`): a section
of :class:`workers.settings.Settings`, which reads it with the rest of the environment."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from evalfleet.tasks.admission.share import Share


class AdmissionSettings(BaseModel):
    """How runs are admitted from the intakes into the queues (docs/tenants.md, "Quotas and
    fair shares")."""

    mode: Literal["auto", "on", "off"] = "auto"
    """``auto``: runs wait in admission's waiting rooms, shared out between tenants by weight
    and quota, once the fleet has a tenant (a fleet without tenants sends them straight to
    the queues); ``on``: always (the fleet's own matches then take turns too); ``off``:
    never (tenants' quotas and weights are then not applied)."""
    queued_per_slot: int = Field(2, ge=1)
    """Runs admitted ahead of the workers, per worker slot serving a queue: enough to keep
    every slot busy, few enough that a new tenant's runs start within about one run's time."""
    fleet_weight: float = Field(1.0, gt=0)
    """The share of the fleet's own runs (submitted with the fleet's credentials) beside the
    tenants' weights."""
    lease_s: float = Field(5.0, gt=0)
    """The admitter's lease: when the worker admitting dies, another takes over after this."""

    @property
    def fleet_share(self) -> Share:
        return Share(weight=self.fleet_weight)
