#!/bin/sh
# Runs a Rust node: the example clients/rust/examples/$1.rs, or the raft-rs adapter pinned
# at clients/rust/raft-rs-0.3/pins/$V ($1 = raft-rs-$V, e.g. raft-rs-0.3.0), with the other
# arguments. Builds it first (dev profile, into clients/rust/target, gitignored) when the
# binary is missing or older than any .rs, Cargo.toml or Cargo.lock under clients/rust; the
# pins build --locked against their committed Cargo.lock. Several nodes start at once: the
# build holds target/.node.lock. Build output goes to stderr (stdout is the protocol).
# Usage, from anywhere: sh clients/rust/node.sh raft | sh clients/rust/node.sh raft-rs-0.3.0 --pre-vote
set -e
name=$1
[ -n "$name" ] || { echo "usage: node.sh EXAMPLE|raft-rs-VERSION [ARGS...]" >&2; exit 2; }
shift
dir=$(cd "$(dirname "$0")" && pwd)
target=$dir/target
case $name in
raft-rs-*)
	manifest=$dir/raft-rs-0.3/pins/${name#raft-rs-}/Cargo.toml
	[ -f "$manifest" ] || { echo "node.sh: no pin $manifest" >&2; exit 2; }
	build="cargo build --locked --quiet --manifest-path $manifest --target-dir $target"
	bin=$target/debug/raft-rs-$(echo "${name#raft-rs-}" | tr . _) # a binary name has no dots
	;;
*)
	[ -f "$dir/examples/$name.rs" ] || { echo "node.sh: no example $dir/examples/$name.rs" >&2; exit 2; }
	build="cargo build --quiet --manifest-path $dir/Cargo.toml --target-dir $target --example $name"
	bin=$target/debug/examples/$name
	;;
esac
stale() {
	[ ! -x "$bin" ] || [ -n "$(find "$dir" -path "$target" -prune -o \( -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock \) -newer "$bin" -print | head -1)" ]
}
if stale; then
	mkdir -p "$target"
	(
		flock 9
		if stale; then
			$build >&2
			touch "$bin" # cargo leaves an up-to-date binary's time alone
		fi
	) 9>"$target/.node.lock"
fi
exec "$bin" "$@"
