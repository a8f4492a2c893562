"""``python -m evalfleet.workers`` runs the evalfleet CLI (the `evalfleet` console script)."""

from evalfleet.workers.cli import main

main()
