#!/usr/bin/env bash
# How long a new user and CI wait, on a fresh clone (docs/performance.md, "Fast feedback"):
#
#   benches/feedback.sh [--ci] [--keep] [REV]
#
# Clones this repository at REV (default HEAD) into a temporary folder and times, one after
# the other, with nothing shared but cargo's download cache (~/.cargo/registry):
#
#   install    `cargo install --path . --root TMP` (the README's first command, its own target)
#   test       `cargo test --workspace` (the README's second command, the clone's target)
#   own crate  `cargo test` in examples/own-algorithm (a user's crate, its own target folder)
#   ci         `bash .ci/run` with CI=true (only with --ci; in a second fresh clone, a copy of
#              ../shared beside it)
#
# and prints a table of wall and CPU seconds, the number of tests run, and each test binary's
# own time as `cargo test` reported it. A benchmark, not a test: run it on an otherwise idle
# machine. --keep leaves the clone (its path is printed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ci=0 keep=0 rev=HEAD
for arg in "$@"; do
    case "$arg" in
        --ci) ci=1 ;;
        --keep) keep=1 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        -*) echo "feedback.sh: unknown option $arg" >&2; exit 2 ;;
        *) rev=$arg ;;
    esac
done

tmp=$(mktemp -d /tmp/splitbrain-feedback.XXXXXX)
[ "$keep" = 1 ] || trap 'rm -rf "$tmp"' EXIT
git clone --quiet "$here" "$tmp/main"
git -C "$tmp/main" checkout --quiet "$rev"
commit=$(git -C "$tmp/main" rev-parse --short HEAD)
unset CARGO_TARGET_DIR
export CARGO_TERM_COLOR=never

results=()
# timed NAME LOG -- COMMAND...: runs COMMAND, records wall and CPU seconds (children included).
timed() {
    local name=$1 log=$2; shift 3
    local start end rc=0
    start=$(date +%s.%N)
    /usr/bin/env time -f '%U %S' -o "$tmp/$name.cpu" "$@" > "$log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    local wall cpu
    wall=$(echo "$end - $start" | bc)
    cpu=$(tail -1 "$tmp/$name.cpu" | awk '{print $1 + $2}')
    results+=("$(printf '%-10s %8.0f %8.0f %5s' "$name" "$wall" "$cpu" "$rc")")
    if [ "$rc" != 0 ]; then
        echo "feedback.sh: $name exited $rc; the end of its log ($log):" >&2
        tail -20 "$log" >&2
    fi
}

echo "feedback.sh: $commit in $tmp ($(nproc) cores, $(date -u +%Y-%m-%d))"
cd "$tmp/main"
timed install "$tmp/install.log" -- cargo install --quiet --path . --root "$tmp/root"
timed test "$tmp/test.log" -- cargo test --workspace
(cd examples/own-algorithm && timed own-crate "$tmp/own.log" -- cargo test; printf '%s\n' "${results[-1]}" > "$tmp/own.row")
results+=("$(cat "$tmp/own.row")")
if [ "$ci" = 1 ]; then
    # A clone of its own, so that nothing the steps above built is reused.
    mkdir "$tmp/ci"
    git clone --quiet "$here" "$tmp/ci/main"
    git -C "$tmp/ci/main" checkout --quiet "$rev"
    cp -r "$here/../shared" "$tmp/ci/shared"
    (cd "$tmp/ci/main" && CI=true timed ci "$tmp/ci.log" -- bash .ci/run < /dev/null
     printf '%s\n' "${results[-1]}" > "$tmp/ci.row")
    results+=("$(cat "$tmp/ci.row")")
fi

tests=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i == "passed;") n += $(i - 1) } END { print n + 0 }' "$tmp/test.log")
echo
printf '%-10s %8s %8s %5s\n' step "wall s" "cpu s" exit
printf '%s\n' "${results[@]}"
echo
echo "cargo test --workspace: $tests tests passed"
echo "per test binary (seconds as cargo test reported them):"
awk '/^     Running |^   Doc-tests / { name = $2; if ($1 == "Doc-tests") name = "doc " $2 }
     /^test result:/ { for (i = 1; i <= NF; i++) if ($i == "finished") printf "  %-50s %8s\n", name, $(i + 2) }' \
    "$tmp/test.log" | sed 's/;$//'
if [ "$ci" = 1 ]; then
    echo ".ci/run steps:"
    sed -n '/^ci: steps/,$p' "$tmp/ci.log" | sed 's/^/  /'
fi
[ "$keep" = 1 ] && echo "kept: $tmp"
exit 0
