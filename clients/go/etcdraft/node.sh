#!/bin/sh
# Runs etcd's raft library at pin $1 (a directory under clients/go/etcdraft/pins) as a
# splitbrain external node, with the remaining arguments as its flags:
#   sh clients/go/etcdraft/node.sh v3.3.13 --election-tick 3 --pre-vote --check-quorum
# The pin's binary is built on first use into clients/go/etcdraft/bin/$1, and again when any
# .go, go.mod or go.sum file under clients/go is newer than it. Several nodes start at once:
# the build holds clients/go/etcdraft/bin/.lock. Build output goes to stderr (stdout is the
# protocol).
set -e
pin=$1
[ -n "$pin" ] || { echo "usage: node.sh PIN [--election-tick N] [--heartbeat-tick N] [--tick D] [--pre-vote] [--check-quorum]" >&2; exit 2; }
shift
dir=$(cd "$(dirname "$0")" && pwd)
[ -f "$dir/pins/$pin/go.mod" ] || { echo "node.sh: no pin $dir/pins/$pin (pins: $(ls "$dir/pins" | tr '\n' ' '))" >&2; exit 2; }
bin=$dir/bin/$pin
stale() {
	[ ! -x "$bin" ] || [ -n "$(find "$dir/.." \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$bin" -print -quit)" ]
}
if stale; then
	mkdir -p "$dir/bin"
	(
		flock 9
		if stale; then
			cd "$dir/pins/$pin" && go build -o "$bin.tmp" . >&2 && mv "$bin.tmp" "$bin"
		fi
	) 9>"$dir/bin/.lock"
fi
exec "$bin" "$@"
