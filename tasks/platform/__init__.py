"""The platform's side of the fleet: how a platform submits runs and reads results back.

:mod:`.client` (:class:`EvalfleetClient`) and :mod:`.async_client`
(:class:`AsyncEvalfleetClient`, the same verbs for asyncio), with what they share:
:mod:`.submission` (into the intake stream, pipelined) and :mod:`.reading`; :mod:`.cancels`;
:mod:`.result_groups` (the results stream's consumer groups and how far behind each one
is). All of it needs only ``redis`` and ``pydantic`` (``pip install evalfleet``), except
:mod:`.intake`, the workers' forwarder from the intake stream into the Celery queues
(``evalfleet[worker]``), which this package does not import. A platform imports::

    from evalfleet.tasks.platform import AsyncEvalfleetClient, EvalfleetClient
"""

from .async_client import AsyncEvalfleetClient
from .client import EvalfleetClient
from .submission import SubmitError

__all__ = ["AsyncEvalfleetClient", "EvalfleetClient", "SubmitError"]
