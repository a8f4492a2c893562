#!/usr/bin/env bash
# Build the local Docker images evalfleet needs. There may be no registry (offline
# build machines), so the Debian base is made with mmdebstrap and every
# other image builds FROM it with the legacy builder. An image that exists is not rebuilt
# unless its inputs changed (a content hash is kept as an image label).
# IMAGE_TAG (default latest) tags them evalfleet/<name>:$IMAGE_TAG: build a set of your own
# when you change the supervisor, and point the tests at it (EVALFLEET_TEST_IMAGE_TAG).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\033[1mimages:\033[0m %s\n' "$*"; }
export DOCKER_BUILDKIT=0
BASE=evalfleet/sandbox-base:bookworm
IMAGE_TAG=${IMAGE_TAG:-latest}

have_image() { docker image inspect "$1" >/dev/null 2>&1; }
label_of() { docker image inspect -f "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

apt_mirror() {
    awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null \
        || echo "http://deb.debian.org/debian"
}

build_base() {
    have_image "$BASE" && return 0
    log "building $BASE with mmdebstrap (~30 s)"
    mmdebstrap --quiet --variant=apt --include=python3,ca-certificates bookworm - "$(apt_mirror)" \
        | docker import \
            --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV LANG=C.UTF-8' \
            - "$BASE" >/dev/null
}

# build_dir TAG DIR: docker build DIR as TAG when the hash of DIR's files changed.
build_dir() {
    local tag=$1 dir=$2 hash
    hash=$(find "$dir" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
    [[ $(label_of "$tag" evalfleet.inputs) == "$hash" ]] && return 0
    log "building $tag"
    docker build --force-rm -q --network host --build-arg "BASE=$BASE" \
        --label "evalfleet.inputs=$hash" -t "$tag" "$dir" >/dev/null
    # Multi-stage builds leave their helper stages as dangling images; those are labelled.
    docker image prune -f --filter label=evalfleet.stage=build >/dev/null
}

# fetch_wheels DIR: download DIR/requirements.txt's wheels into DIR/wheels on the host (for
# the image's Python, cp311), once per version of requirements.txt.
fetch_wheels() {
    local dir=$1 want
    [[ -f $dir/requirements.txt ]] || return 0
    want=$(sha256sum "$dir/requirements.txt" | cut -c1-16)
    [[ -f $dir/wheels/.requirements && $(cat "$dir/wheels/.requirements") == "$want" ]] && return 0
    log "downloading wheels for $dir"
    rm -rf "$dir/wheels" && mkdir -p "$dir/wheels"
    python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version 3.11 --implementation cp --platform "manylinux2014_$(uname -m)" \
        -d "$dir/wheels" -r "$dir/requirements.txt" 2> >(grep -v "is ignored: it is neither" >&2)
    echo "$want" >"$dir/wheels/.requirements"
}

# build_supervisor: compile the sandbox's pid 1 (static, so any image can run it) into
# every image directory that COPYs it; gcc output is reproducible, so an unchanged source
# leaves the images' input hashes alone.
build_supervisor() {
    local src=sandbox/images/supervisor/supervisor.c out=build/evalfleet-supervisor d
    mkdir -p build
    if [[ ! -f $out || $src -nt $out ]]; then
        log "compiling $out"
        gcc -static -Os -Wall -Wextra -Werror -o "$out.tmp" "$src" && strip "$out.tmp"
        mv "$out.tmp" "$out"
    fi
    for d in sandbox/images/*/; do
        grep -q evalfleet-supervisor "$d/Dockerfile" 2>/dev/null || continue
        cmp -s "$out" "$d/evalfleet-supervisor" || cp "$out" "$d/evalfleet-supervisor"
    done
}

build_base
build_supervisor
for d in sandbox/images/*/; do
    [[ -f $d/Dockerfile ]] || continue
    fetch_wheels "${d%/}"
    build_dir "evalfleet/$(basename "$d"):$IMAGE_TAG" "$d"
done
