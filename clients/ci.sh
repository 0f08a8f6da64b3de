#!/usr/bin/env bash
# The step protocol's clients and worked examples, as CI runs them (docs/protocol.md): the
# Python, Go and Rust libraries' unit tests (with the adapters of etcd's raft and raft-rs at
# every pin, built where their launchers find them), then every correct example hunted
# clean (for one of each kind of node, the same summary with --jobs 1 and --jobs 2), and
# every broken one found, shrunk,
# and its reproducer replayed to the same violation. The known bugs of real libraries are
# scripts/known-bugs.sh's. Usage: clients/ci.sh [SPLITBRAIN_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/splitbrain}
SEEDS=${SEEDS:-150}  # per correct example (300 on two job counts took 60 s of CI for Python alone)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== Python client: unit tests"
python3 -m unittest discover -s clients/python -p 'test_*.py'
echo "== Go client: vet and unit tests"
(cd clients/go && go vet ./... && go test -count=1 ./...)
echo "== etcd raft adapter: the pins of the known-bugs corpus built, vetted and their unit tests run"
for pin in clients/go/etcdraft/pins/{v3.2.32,v3.3.13,v3.3.17,v3.4-dd1b699,v3.5.0,current}/; do (cd "$pin" && go build -o /dev/null . && go vet . splitbrain.dev/etcdraft splitbrain.dev/etcdraft/raftlib && go test -count=1 splitbrain.dev/etcdraft) || exit 1; done
echo "== Rust client: fmt, clippy, unit tests; the raft-rs 0.3.0 and 0.3.1 adapters"
(cd clients/rust && cargo fmt --check && cargo clippy --quiet --all-targets -- -D warnings && cargo test --quiet)
for pin in 0.3.0 0.3.1; do # cold, the first pin ~15-28 s on 2 cores, the second ~3 s more
    manifest=clients/rust/raft-rs-0.3/pins/$pin/Cargo.toml
    cargo build --locked --quiet --manifest-path "$manifest" --target-dir clients/rust/target
    cargo test --locked --quiet --manifest-path "$manifest" --target-dir clients/rust/target
done

summary() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["summary"], sort_keys=True))'; }

# A correct example: no violation in $SEEDS seeds (on 2 jobs).
hunt_clean() {
    local scenario=$1
    echo "== $scenario: $SEEDS seeds, expecting no failure"
    "$BIN" hunt "$scenario" --seeds "$SEEDS" --jobs 2 --json --no-shrink | summary > "$out/two"
    grep -q '"failed_seeds": 0' "$out/two" || { echo "error: $scenario failed:" >&2; cat "$out/two" >&2; exit 1; }
}

# The same, and the same summary on 1 job as on 2: once per kind of node process (a Python
# node, a Go node, a node that is a client of a modeled service cluster), since whether the
# jobs change a summary is the runner's property, not the example's (half the CI time of
# checking it for every example).
hunt_clean_any_jobs() {
    local scenario=$1
    hunt_clean "$scenario"
    echo "   ... and on --jobs 1, expecting the same summary"
    "$BIN" hunt "$scenario" --seeds "$SEEDS" --jobs 1 --json --no-shrink | summary > "$out/one"
    cmp "$out/one" "$out/two" || { echo "error: the jobs changed the summary of $scenario" >&2; exit 1; }
}

# A broken example: the hunt finds it (exit 1), shrinks it, and its reproducer replays the
# violation (exit 1) twice with the same output.
hunt_finds() {
    local scenario=$1 seeds=$2 dir
    dir="$out/$(basename "$scenario" .ron)"
    echo "== $scenario: up to $seeds seeds, expecting a violation found, shrunk and replayed"
    local rc=0
    "$BIN" hunt "$scenario" --seeds "$seeds" --out "$dir" > "$dir.log" || rc=$?
    cat "$dir.log"
    [ "$rc" = 1 ] || { echo "error: the hunt of $scenario exited $rc, not 1 (a violation found)" >&2; exit 1; }
    local reproducer
    reproducer=$(ls "$dir"/*.ron | head -1)
    rc=0; "$BIN" run "$reproducer" > "$out/replay1" || rc=$?
    [ "$rc" = 1 ] || { echo "error: the reproducer $reproducer exited $rc, not 1" >&2; exit 1; }
    "$BIN" run "$reproducer" > "$out/replay2" || true
    cmp "$out/replay1" "$out/replay2" || { echo "error: the replay of $reproducer differs" >&2; exit 1; }
    echo "replayed: $reproducer"
}

# A scenario that expects its violation on a share of seeds (expect_rate): the hunt says the
# share it found is consistent with the rate (exit 1: the failing seeds are its point).
hunt_rate() {
    local scenario=$1 seeds=$2 rc=0
    echo "== $scenario: $seeds seeds, expecting its stated rate"
    "$BIN" hunt "$scenario" --seeds "$seeds" --no-shrink > "$out/rate" || rc=$?
    grep -E "seeds of|expect_rate" "$out/rate"
    [ "$rc" = 0 ] || [ "$rc" = 1 ] || { echo "error: the hunt of $scenario exited $rc" >&2; exit 1; }
    grep -q "consistent with the rate" "$out/rate" || { echo "error: $scenario missed its rate" >&2; exit 1; }
}

hunt_clean_any_jobs scenarios/external/python-raft.ron
hunt_finds scenarios/external/python-forgets-vote.ron 2000
hunt_clean_any_jobs scenarios/external/go-raft.ron
hunt_finds scenarios/external/go-broken.ron 2000
hunt_clean scenarios/external/go-etcd-election.ron
hunt_finds scenarios/external/go-etcd-election-broken.ron 1000
# The same client on a 3-member etcd cluster (issue 47): clean under a nemesis that strikes
# members and clients, and etcd issue 15247's fsync-stuck leader found on 3.4, never on 3.5.
hunt_clean_any_jobs scenarios/external/go-etcd-election-cluster.ron
hunt_clean scenarios/external/go-etcd-election-fsync-stuck-3.5.ron
hunt_rate scenarios/external/go-etcd-election-fsync-stuck-3.4.ron 50
# The Python ZooKeeper recipe on a 3-server ensemble (issue 47): clean under a nemesis that
# strikes members and servers, and the session id as fencing token found (rare in the model,
# whose session ids follow commit order: the hunt stops after the batch with seed 320).
hunt_clean scenarios/external/python-zk-recipe-cluster.ron
hunt_finds scenarios/external/python-zk-recipe-broken-cluster.ron 500
# The Rust client is hunted through the raft-rs adapters (scripts/known_bugs.py: 2,000 seeds of
# raft-rs 0.3.1 clean); scenarios/external/rust-raft.ron is not hunted here, to save CI time.
echo "== clients: ok"
