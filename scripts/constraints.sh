#!/usr/bin/env bash
# Write constraints.txt: the exact version of every distribution in .venv but evalfleet
# (its dependencies, transitively, and the dev tools). setup.sh, the worker image
# (scripts/build-worker-image.sh, Dockerfile.worker) and CI install with it; pyproject.toml
# holds ranges. Run it after a deliberate upgrade in .venv, and commit the file.
#
#   bash scripts/constraints.sh
set -euo pipefail
cd "$(dirname "$0")/.."
{
    echo "# The exact versions the image, CI and scripts/setup.sh install (pip install -c)."
    echo "# Written by scripts/constraints.sh from .venv; pyproject.toml holds the ranges."
    .venv/bin/pip freeze --exclude-editable --disable-pip-version-check | grep -v '^evalfleet' \
        | LC_ALL=C sort -f
} >constraints.txt
