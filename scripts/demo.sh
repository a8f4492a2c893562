#!/usr/bin/env bash
# The main job: set everything up, then score every example pack's recorded runs.
#
#   bash scripts/demo.sh
#
# Each examples/packs/<pack>/events[.<case>].json is one run; a file named for a case
# (events.<case_key>.json) is scored against that case of a multi-case pack.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
EF=.venv/bin/evalfleet
for pack in examples/packs/*/pack.yaml; do
    dir=$(dirname "$pack")
    echo "== $($EF validate "$pack")"
    for events in "$dir"/events*.json; do
        name=$(basename "$events" .json)
        label=${name#events}; label=${label#.}
        args=()
        if [[ -n $label ]] && grep -q "case_key: $label\$" "$pack"; then args=(--case "$label"); fi
        printf '   %-28s ' "${label:-run}"
        $EF score --spec "$pack" --events "$events" "${args[@]}" --format summary
    done
done
