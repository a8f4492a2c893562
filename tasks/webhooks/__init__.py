"""Results pushed to the platform: signed webhooks, retried, to allowed hosts only.

A run whose request names a ``callback_url`` (or whose match the operator gave one,
``EVALFLEET_WEBHOOKS__MATCHES``) has its published result POSTed there, byte for byte (or,
past ``max_body_bytes``, a summary), signed with HMAC-SHA256, at least once, the run id as
the idempotency key. Every worker's main process runs the dispatcher
(:mod:`.dispatcher`): it hears every published result through the consumer group
``evalfleet-webhooks`` of ``evalfleet:results`` (a cancel's too), keeps the schedule in
Redis (:mod:`.schedule`: a worker restart loses nothing), and sends only to the hosts and
addresses the operator allows (:mod:`.policy`, :mod:`.transport`), never from a sandbox.

* :mod:`.signature`: the signature header, and how a receiver verifies it (stdlib only).
* :mod:`.config`: what the operator set (``workers.settings`` builds it).
* :mod:`.policy`: the allowlist of hosts and ports, and of addresses.
* :mod:`.transport`: one POST to a checked address, no redirect followed.
* :mod:`.payload`: the body: the result, or a summary past the size limit.
* :mod:`.schedule`: the schedule's Lua scripts and the status record's ``webhook`` fields.
* :mod:`.dispatcher`: the results stream into the schedule, and due deliveries out.
"""
