"""The platform's side of the fleet: how a platform submits runs and reads results back.

:mod:`.client` (:class:`EvalfleetClient`: submit over Celery, read results from Redis),
:mod:`.intake` (the plain-Redis way in, for platforms that do not speak Celery, and its
forwarder) and :mod:`.result_groups` (the results stream's consumer groups and how far
behind each one is). A platform imports :class:`EvalfleetClient` from here::

    from evalfleet.tasks.platform import EvalfleetClient
"""

from .client import EvalfleetClient, SubmitError

__all__ = ["EvalfleetClient", "SubmitError"]
