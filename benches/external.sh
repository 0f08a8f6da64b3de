#!/usr/bin/env bash
# The step protocol's cost, measured on the release binary as users run it
# (docs/performance.md, "Nodes in any language"): events per second through the protocol for
# the Python and Go Raft examples, pinned to one core and on every core; the same run with
# splitbrain's own Raft in process; the syscalls per event; and seeds per second of 5-node
# hunts. Usage: benches/external.sh [SPLITBRAIN_BINARY]   (default target/release/splitbrain)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/splitbrain}
B=benches/external

events_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["report"]["events"])'; }

# One timed run: wall seconds, events, events/s.
timed() {
    local label=$1; shift
    local start end events
    start=$(date +%s.%N)
    events=$("$@" --json | events_of)
    end=$(date +%s.%N)
    python3 -c "import sys; s=$end-$start; print(f'{sys.argv[1]:<34} {$events:>9} events {s:7.2f} s {$events/s:>9,.0f} events/s')" "$label"
}

sh clients/go/node.sh raft </dev/null >/dev/null 2>&1 || true   # build the Go example first
echo "== events per second (10 simulated minutes, 5 nodes, no fault)"
for lang in python go; do
    timed "$lang, one core (taskset -c 0)" taskset -c 0 "$BIN" run $B/$lang-steady.ron
    timed "$lang, every core" "$BIN" run $B/$lang-steady.ron
done
timed "built-in raft, one core" taskset -c 0 "$BIN" run $B/raft-steady.ron

echo "== system calls of the simulator per event (go, every core; strace -c -f off the nodes)"
strace -c -o /tmp/external-strace.txt "$BIN" run $B/go-steady.ron --json > /tmp/external-run.json
events=$(events_of < /tmp/external-run.json)
python3 - "$events" <<'PY'
import sys
events = int(sys.argv[1])
calls = {}
for line in open("/tmp/external-strace.txt"):
    parts = line.split()
    if len(parts) >= 5 and parts[-1] in ("read", "write", "poll", "ppoll"):
        calls[parts[-1]] = int(parts[3])
print("  " + ", ".join(f"{name} {count / events:.2f}" for name, count in sorted(calls.items())) + f" per event ({events} events)")
PY

echo "== seeds per second, 5-node hunts (200 seeds, --jobs 2)"
for lang in python go; do
    start=$(date +%s.%N)
    "$BIN" hunt $B/$lang-nemesis.ron --seeds 200 --jobs 2 --json --no-shrink > /tmp/external-hunt.json || true
    end=$(date +%s.%N)
    python3 -c "import json,sys; s=$end-$start; d=json.load(open('/tmp/external-hunt.json'))['summary']; print(f'{sys.argv[1]:<10} {d[\"seeds_run\"]} seeds, {d[\"failed_seeds\"]} failed, {s:.1f} s, {d[\"seeds_run\"]/s:.1f} seeds/s')" "$lang"
done
