"""The forgery battery that ``evalfleet check`` runs against a pack.

:mod:`.battery` is the registry and its forgeries aimed at test frameworks, :mod:`.fleet`
the forgeries aimed at the fleet itself, :mod:`.shapes` the shapes that must end as a
scored loss, and :mod:`.kit` what every forgery is made of.
"""
