#!/usr/bin/env bash
# The browser test of run.html (tests/browser/view.mjs) with the given splitbrain binary:
#   bash tests/browser/run.sh target/release/splitbrain [--gallery docs/gallery]
# Needs Node 20 or later and Debian's chromium (installed here when missing and run as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 1 ]; then
    echo "usage: bash tests/browser/run.sh BINARY [--gallery DIR]" >&2
    exit 2
fi
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
install() {
    as_root apt-get install -y --no-install-recommends "$@" \
        || { as_root apt-get update && as_root apt-get install -y --no-install-recommends "$@"; }
}
command -v chromium >/dev/null 2>&1 || install chromium
command -v node >/dev/null 2>&1 || install nodejs
if ! command -v node >/dev/null 2>&1; then
    echo "error: the browser test needs Node, and it could not be installed" >&2
    exit 1
fi
exec node tests/browser/view.mjs "$@"
