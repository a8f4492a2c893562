#!/usr/bin/env bash
# Flake hunt: run test lanes again and again and report every test that ever failed.
#
#   bash scripts/flake.sh                       # unit ×20, contract ×20, integration ×3
#   N=50 bash scripts/flake.sh unit             # one lane, 50 times
#   bash scripts/flake.sh unit -- -k channel    # pytest arguments after `--`
#
# Lanes: `unit` (tests/unit), `contract` (tests/contract), `integration` (tests/integration
# and tests/reliability, without the `slow` soak). N (default 20) repeats the unit and
# contract lanes, N_INTEGRATION (default 3) the integration lane. Each run's log is kept
# under FLAKE_DIR (default: a fresh temporary directory). A run that fails without naming a
# test (a crash, a collection error, pytest's exit 5 for "nothing collected") counts too.
# Exits 0 only when every run of every lane passed. Needs the set-up machine and `.venv`
# (`bash scripts/setup.sh` once); it does not run the setup itself.
set -uo pipefail
cd "$(dirname "$0")/.."

N=${N:-20}
N_INTEGRATION=${N_INTEGRATION:-3}
FLAKE_DIR=${FLAKE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/evalfleet-flake.XXXXXX")}
PYTEST=.venv/bin/pytest

lanes=()
while (($#)) && [[ $1 != -- ]]; do lanes+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
((${#lanes[@]})) || lanes=(unit contract integration)

[[ -x $PYTEST ]] || { echo "flake.sh: no $PYTEST (run: bash scripts/setup.sh)" >&2; exit 2; }
mkdir -p "$FLAKE_DIR"

lane_paths() {
    case $1 in
        unit) echo tests/unit ;;
        contract) echo tests/contract ;;
        integration) echo tests/integration tests/reliability ;;
        *) echo "flake.sh: unknown lane '$1' (unit, contract, integration)" >&2; return 1 ;;
    esac
}

lane_runs() { [[ $1 == integration ]] && echo "$N_INTEGRATION" || echo "$N"; }

# run_lane LANE [pytest args]: every run's log in FLAKE_DIR; one line per failure in
# FLAKE_DIR/LANE.failures ("<run> <test id>"); one summary line on stdout.
run_lane() {
    local lane=$1 paths runs log rc started named
    shift
    paths=$(lane_paths "$lane") || return 2
    runs=$(lane_runs "$lane")
    : >"$FLAKE_DIR/$lane.failures"
    for ((i = 1; i <= runs; i++)); do
        log="$FLAKE_DIR/$lane.$i.log"
        started=$SECONDS
        # shellcheck disable=SC2086  # the lane's paths are words on purpose
        $PYTEST -m "not slow and not reference" -p no:cacheprovider -q -rfE $paths "$@" >"$log" 2>&1
        rc=$?
        named=$(grep -E '^(FAILED|ERROR) ' "$log" | sed -E 's/ - .*$//' | sort -u)
        if [[ -n $named ]]; then
            sed "s/^/$i /" <<<"$named" >>"$FLAKE_DIR/$lane.failures"
        elif ((rc != 0)); then
            echo "$i <a run that failed without naming a test: exit $rc>" >>"$FLAKE_DIR/$lane.failures"
        fi
        printf '%s run %d/%d: exit %d in %ds, %s\n' "$lane" "$i" "$runs" "$rc" \
            $((SECONDS - started)) "$(tail -n 1 "$log")"
    done
}

# report LANE: each test that ever failed, with how many of the lane's runs it failed in.
report() {
    local lane=$1 runs failures
    runs=$(lane_runs "$lane")
    failures="$FLAKE_DIR/$lane.failures"
    if [[ ! -s $failures ]]; then
        echo "$lane: $runs runs, no test ever failed"
        return 0
    fi
    echo "$lane: $runs runs; failed at least once (failing runs / runs, test):"
    cut -d' ' -f2- "$failures" | sort | uniq -c | sort -rn |
        while read -r count test; do echo "  $count/$runs  $test"; done
    return 1
}

status=0
for lane in "${lanes[@]}"; do
    lane_paths "$lane" >/dev/null || exit 2
done
for lane in "${lanes[@]}"; do
    run_lane "$lane" "$@"
done
echo "== flake report (logs: $FLAKE_DIR)"
for lane in "${lanes[@]}"; do
    report "$lane" || status=1
done
exit $status
