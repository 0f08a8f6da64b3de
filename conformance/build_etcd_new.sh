#!/bin/sh
# Build a later etcd server (default v3.5.35) from the Go module proxy, outside git.
#
#   conformance/build_etcd_new.sh [VERSION] [OUT_DIR]     # default v3.5.35 target/etcd-new
#
# `go install go.etcd.io/etcd/server/v3@VERSION` is refused (the module's go.mod has replace
# directives), so this writes a throwaway main module that requires the server module and
# calls etcdmain.Main(os.Args), as etcd's own server/main.go does. The binary lands in
# OUT_DIR/bin/etcd-VERSION (and OUT_DIR/bin/etcd links to it); pass it to run.py as
# `--etcd-binary`. Needs Go 1.26 or later (PATH or /usr/local/go/bin) and the module proxy.
set -eu
VERSION=${1:-v3.5.35}
OUT=${2:-$(cd "$(dirname "$0")/.." && pwd)/target/etcd-new}
PATH=$PATH:/usr/local/go/bin
export PATH GOFLAGS=-mod=mod
SRC=$OUT/src-$VERSION
mkdir -p "$SRC" "$OUT/bin"
cd "$SRC"
cat > main.go <<'GO'
// Command etcd is etcd's server, built from the released module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
[ -f go.mod ] || go mod init etcdnew >/dev/null 2>&1
go get "go.etcd.io/etcd/server/v3@$VERSION"
go mod tidy
go build -trimpath -o "$OUT/bin/etcd-$VERSION" .
ln -sf "etcd-$VERSION" "$OUT/bin/etcd"
"$OUT/bin/etcd-$VERSION" --version
