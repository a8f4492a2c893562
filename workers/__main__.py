"""``python -m workers`` runs the evalfleet CLI."""

from workers.cli import main

main()
