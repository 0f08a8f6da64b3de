#!/bin/sh
# Runs the example node clients/go/examples/$1, building it first into clients/go/bin/$1 when
# the binary is missing or older than any .go file under clients/go. Several nodes start at
# once: the build holds clients/go/bin/.lock. Build output goes to stderr (stdout is the
# protocol). The arguments after the name go to the node. Usage, from anywhere:
#   sh clients/go/node.sh raft
#   sh clients/go/node.sh etcdelection -ttl 2s
set -e
name=$1
[ -n "$name" ] || { echo "usage: node.sh EXAMPLE" >&2; exit 2; }
dir=$(cd "$(dirname "$0")" && pwd)
bin=$dir/bin/$name
[ -d "$dir/examples/$name" ] || { echo "node.sh: no example $dir/examples/$name" >&2; exit 2; }
stale() {
	[ ! -x "$bin" ] || [ -n "$(find "$dir" -name '*.go' -newer "$bin" -print -quit)" ]
}
if stale; then
	mkdir -p "$dir/bin"
	(
		flock 9
		if stale; then
			cd "$dir" && go build -o "$bin.tmp" "./examples/$name" >&2 && mv "$bin.tmp" "$bin"
		fi
	) 9>"$dir/bin/.lock"
fi
shift
exec "$bin" "$@"
