"""The forgery battery that ``evalfleet check`` runs against a pack.

:mod:`.battery` is the registry and its forgeries aimed at test frameworks, :mod:`.fleet`
the forgeries aimed at the fleet itself, and :mod:`.kit` what every forgery is made of.
"""
