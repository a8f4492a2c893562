#!/usr/bin/env bash
# Idempotent machine + project setup for evalfleet (Debian 12, as root, no systemd).
#
#   bash scripts/setup.sh          # everything: apt packages, dockerd, local images, .venv
#
# Re-running it on a ready machine takes seconds: every step checks before it acts.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

APT_PACKAGES=(docker.io redis-server redis-sentinel mmdebstrap iproute2 ca-certificates prometheus docker-compose prometheus-redis-exporter
              gcc libc6-dev runsc)

install_apt_packages() {
    local missing=()
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    log "apt-get install ${missing[*]}"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}

start_dockerd() {
    docker info >/dev/null 2>&1 && return 0
    if pgrep -x dockerd >/dev/null; then
        log "dockerd is starting; waiting"
    else
        log "starting dockerd"
        nohup dockerd --host unix:///var/run/docker.sock >/var/log/dockerd.log 2>&1 &
    fi
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return 0; sleep 0.5; done
    echo "dockerd did not come up; see /var/log/dockerd.log" >&2
    exit 1
}

# register_gvisor: make the engine offer gVisor as the runtime "runsc" (docs/operations.md,
# "Isolation"). --network=none: sandboxes have no network anyway, and without it a
# `--network none` container fails to start under runsc; --oci-seccomp: without it runsc
# ignores the container's seccomp profile. The engine re-reads its runtimes on SIGHUP: a
# reload, never a second dockerd. Other keys of daemon.json are kept.
register_gvisor() {
    local conf=/etc/docker/daemon.json changed
    mkdir -p /etc/docker
    changed=$(python3 - "$conf" <<'PY'
import json, os, sys
path = sys.argv[1]
config = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
want = {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none", "--oci-seccomp"]}
if config.get("runtimes", {}).get("runsc") != want:
    config.setdefault("runtimes", {})["runsc"] = want
    with open(path + ".tmp", "w") as out:
        json.dump(config, out, indent=2)
    os.replace(path + ".tmp", path)
    print("changed")
PY
)
    if [[ -z $changed ]] && docker info --format '{{json .Runtimes}}' 2>/dev/null \
            | grep -q '"runsc":{[^}]*oci-seccomp'; then
        return 0
    fi
    log "registering gVisor (runsc) with the Docker engine (reload)"
    kill -HUP "$(pgrep -xo dockerd)"
    for _ in $(seq 1 40); do
        docker info --format '{{json .Runtimes}}' 2>/dev/null \
            | grep -q '"runsc":{[^}]*oci-seccomp' && return 0
        sleep 0.25
    done
    echo "dockerd did not pick up the runsc runtime; see /var/log/dockerd.log" >&2
    exit 1
}

# create_venv: .venv with evalfleet (editable), the worker's dependencies and the dev tools,
# at the exact versions of constraints.txt (pyproject.toml holds ranges).
create_venv() {
    local stamp=.venv/.evalfleet-installed want
    want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
    [[ -f $stamp && $(cat "$stamp") == "$want" ]] && return 0
    log "creating .venv and installing evalfleet[worker,dev] (constraints.txt)"
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    if ! { .venv/bin/pip install -q --upgrade pip \
            && .venv/bin/pip install -q -c constraints.txt -e ".[worker,dev]"; } \
        >.venv/install.log 2>&1; then
        grep -v "is ignored: it is neither" .venv/install.log >&2
        exit 1
    fi
    echo "$want" >"$stamp"
}

# install_kubectl: kubectl renders the Kubernetes manifests (`kubectl kustomize`, the deploy
# tests). Bookworm's is 1.20 (no native sidecars, an old kustomize); Debian's trixie suite has
# 1.32 (package `kubectl`, libc6 >= 2.34 only), fetched through a private apt configuration
# that reads trixie's lists without adding the suite to the machine's own sources.
install_kubectl() {
    command -v kubectl >/dev/null && return 0
    local dir=/var/cache/evalfleet/trixie-apt
    local apt=(-o "Dir::Etc::SourceList=$dir/trixie.sources" -o Dir::Etc::SourceParts=/dev/null
               -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
    log "installing kubectl from Debian trixie"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: trixie" \
        "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
        >"$dir/trixie.sources"
    apt-get "${apt[@]}" update -q >/dev/null
    if ! (cd "$dir" && rm -f kubectl_*.deb \
            && apt-get "${apt[@]}" download -q kubectl/trixie >"$dir/download.log" 2>&1); then
        cat "$dir/download.log" >&2
        echo "could not download kubectl from Debian trixie" >&2
        exit 1
    fi
    dpkg -i "$dir"/kubectl_*.deb >/dev/null
}

install_apt_packages
install_kubectl
start_dockerd
register_gvisor
create_venv
bash "$ROOT/scripts/build-images.sh"
bash "$ROOT/scripts/build-worker-image.sh"
log "ready"
