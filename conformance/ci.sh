#!/usr/bin/env bash
# Conformance suite for CI: install what is missing (idempotent), build the simulator, run
# conformance/run.py with a bounded total time, and exit with its code.
#
#   conformance/ci.sh [run.py arguments, e.g. --system zookeeper --runs 3 --markdown out.md]
#
# Builds splitbrain (cargo; skipped when SPLITBRAIN names an executable, which the harness
# then runs) and the client-go programs of conformance/clientgo (go build).
#
# Environment: CONFORMANCE_TIMEOUT (seconds, default 900) bounds run.py; CONFORMANCE_JOBS
# (default 3) is passed as run.py's --jobs, how many systems run at once (1: one after
# another; an explicit --jobs argument wins); SPLITBRAIN, an already built splitbrain binary;
# PIP_FIND_LINKS or PIP_INDEX_URL are honoured by pip as usual. Must run as root (or with
# sudo) when packages are missing. Every server the suite starts binds 127.0.0.1 and is
# stopped by its PID.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
VENV="$REPO/conformance/.venv"
KAZOO_VERSION=2.10.0

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing_packages() {
    [ -x /usr/bin/etcd ] || echo etcd-server
    [ -x /usr/bin/etcdctl ] || echo etcd-client
    [ -f /usr/share/java/zookeeper.jar ] || echo zookeeper
    command -v java >/dev/null || echo default-jre-headless
    command -v python3 >/dev/null || echo python3
    python3 -c 'import venv, ensurepip' 2>/dev/null || echo python3-venv
    command -v strace >/dev/null || echo strace  # the etcd cluster's fsync-stuck leader
}

apt_install() {
    # Packages must not start system services (etcd-server would start one on :2379): the
    # suite starts its own servers. policy-rc.d is only written if none exists.
    local policy=/usr/sbin/policy-rc.d own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
        as_root chmod +x "$policy"
        own_policy=1
    fi
    export DEBIAN_FRONTEND=noninteractive
    local rc=0
    as_root apt-get install -y --no-install-recommends "$@" \
        || { as_root apt-get update && as_root apt-get install -y --no-install-recommends "$@"; } \
        || rc=$?
    if [ "$own_policy" -eq 1 ]; then as_root rm -f "$policy"; fi
    return "$rc"
}

mapfile -t NEED < <(missing_packages)
if [ "${#NEED[@]}" -gt 0 ]; then
    echo "ci.sh: installing ${NEED[*]}"
    apt_install "${NEED[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import kazoo" 2>/dev/null; then
    "$VENV/bin/pip" install --quiet "kazoo==$KAZOO_VERSION"
fi

if [ -n "${SPLITBRAIN:-}" ]; then
    # An existing binary (harness.splitbrain_binary reads the same variable): no cargo.
    [ -x "$SPLITBRAIN" ] || { echo "ci.sh: SPLITBRAIN=$SPLITBRAIN is not an executable" >&2; exit 2; }
    echo "ci.sh: using SPLITBRAIN=$SPLITBRAIN (no cargo build)"
else
    command -v cargo >/dev/null || { echo "ci.sh: cargo not found (install Rust)" >&2; exit 2; }
    cargo build --release --quiet
fi

# The Kubernetes rows drive the real client-go (k8s.io/client-go v0.37, which needs Go 1.26):
# build the elector and the API server stand-in, modules through the Go module proxy. The
# machine image ships Go in /usr/local/go; Debian's golang-go (1.19) is too old to build it.
[ -x /usr/local/go/bin/go ] && export PATH="/usr/local/go/bin:$PATH"
if ! command -v go >/dev/null; then
    echo "ci.sh: go not found: the k8s rows need Go 1.26 or later (Debian's is too old)" >&2
    exit 2
fi
(
    cd conformance/clientgo
    export GOFLAGS="-mod=mod -buildvcs=false"
    go vet ./...
    go test ./...   # the API server stand-in's 404 / 409 semantics, through client-go
    go build -o bin/ ./cmd/...
)

# Systems run concurrently, at most CONFORMANCE_JOBS at once (run.py's SERIAL_GROUPS keep
# the ones that must not overlap apart); argparse lets a later --jobs in "$@" win.
set +e
timeout --signal=TERM --kill-after=30 "${CONFORMANCE_TIMEOUT:-900}" \
    "$VENV/bin/python" "$REPO/conformance/run.py" --jobs "${CONFORMANCE_JOBS:-3}" "$@"
rc=$?
set -e
if [ "$rc" -eq 124 ]; then
    echo "ci.sh: the suite ran out of its ${CONFORMANCE_TIMEOUT:-900} s" >&2
fi
exit "$rc"
