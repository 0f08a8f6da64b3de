#!/bin/sh
# Runs one of the Go examples as a splitbrain node, building it first when its binary is
# missing or older than any Go source of the module:
#   algorithm: External(command: ["sh", "clients/go/node.sh", "raft"])
# Several nodes start at once (a hunt's workers): one builds while the others wait (flock).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
name=$1
bin="$dir/bin/$name"
mkdir -p "$dir/bin"
exec 9>"$dir/bin/.lock"
flock 9
if [ ! -x "$bin" ] || [ -n "$(find "$dir" -name '*.go' -newer "$bin" -print -quit)" ]; then
    (cd "$dir" && go build -o "$bin" "./examples/$name") >&2
fi
exec 9>&-
exec "$bin"
