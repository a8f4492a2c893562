"""Admission: how the runs of several tenants share one fleet (issue 48).

With admission on, the intake's forwarders no longer send each request straight to its
Celery queue: they *park* it in a waiting room (:mod:`.room`), one per queue and owner
(a tenant, or the fleet's own runs). One admitter at a time (:mod:`.admitter`, a lease
among the workers) moves runs from the waiting rooms into the Celery queues, keeping only
a few per worker slot queued ahead of the workers, so that a backlog waits where it can
be shared out:

* between owners by weight (:mod:`.shares`: stride scheduling, so that a tenant with
  weight 3 gets three runs admitted for each one of a tenant with weight 1 while both
  wait);
* within an owner, the most urgent priority first, then its matches in turn (a virtual
  time per match: a match with 10,000 waiting runs does not hold back one with 5);
* under each tenant's quotas (:class:`.share.Share`): runs in flight, runs admitted per
  minute. Over a quota a run waits (its tenant's ``held`` key says which quota) or is
  refused (published ``rejected``, with the quota in its reason), as the tenant's record
  says.

A run is sent once, whatever happens to the admitter: its message goes through the broker
channel's ``PUT_ONCE`` (the status record's ``sent``), and a new admitter first sends what
its predecessor took but did not send.

The package imports nothing at import time, so that :mod:`tasks.tenancy` can use
:mod:`.share`.
"""
