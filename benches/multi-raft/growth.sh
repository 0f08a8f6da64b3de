#!/usr/bin/env bash
# Growth of the multi-range model from 100 to 10,000 ranges (issue 48's scale requirement;
# docs/performance.md, "Many ranges"): wall time and peak memory of `splitbrain run` as a
# whole process, 7 stores, replication 3, 60 s simulated, no faults.
#
#   [REPS=3] [OUT=FILE] benches/multi-raft/growth.sh [SPLITBRAIN_BINARY]
#
# SPLITBRAIN_BINARY defaults to target/release/splitbrain; OUT, if relative, is relative to
# the repository's root.
#
# The scenarios are made from one template, benches/multi-raft/ranges-10000.ron, with only
# `ranges:` (and the name) changed, into a temporary folder; each is validated with
# `splitbrain check`. Every size runs REPS times (default 3), in rounds (every size once, then
# again), after one unrecorded warm-up run. The run's output goes to /dev/null; a run that
# exits with anything but 0 stops the script (exit 1) with its stderr.
#
# Writes benches/multi-raft/growth.csv (or $OUT), one row per size:
#   ranges        the number of ranges
#   wall_s        median wall seconds of the REPS runs (bash's $EPOCHREALTIME around
#                 /usr/bin/time and the process, or the wrapper's clock around its fork: the
#                 fork and exec are in it)
#   max_rss_kib   median of the REPS runs' peak resident set size, KiB (`/usr/bin/time
#                 -f %M`; without GNU time, ru_maxrss of wait4 from a Python wrapper: the same
#                 figure)
#   us_per_range  wall_s / ranges, microseconds: the whole run's time per range, fixed cost
#                 (process start, the 7 stores' events) included
#   kib_per_range (max_rss_kib - baseline) / (ranges - 100), the baseline being the 100-range
#                 row's max_rss_kib: the memory one more range costs; empty on the baseline row
# and prints the load average before and after to stderr (the figures mean little above 1.5
# on a 2-core machine). A manual benchmark, not run by CI; the chart is plot_growth.py.
set -euo pipefail
# Resolve the binary against the caller's folder before moving to the repository's root.
BIN=${1:-target/release/splitbrain}
[ -e "$BIN" ] && BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
cd "$(dirname "$0")/../.."
[ -x "$BIN" ] || { echo "growth.sh: no executable binary at $BIN (cargo build --release?)" >&2; exit 2; }

SIZES=(100 200 500 1000 2000 5000 10000)
REPS=${REPS:-3}
OUT=${OUT:-benches/multi-raft/growth.csv}
TEMPLATE=benches/multi-raft/ranges-10000.ron

tmp=$(mktemp -d /tmp/splitbrain-growth.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# One scenario per size from the template, which must hold `MultiRaft(ranges: 10000, ...)`.
for r in "${SIZES[@]}"; do
    f="$tmp/ranges-$r.ron"
    sed -e "s/ranges: 10000,/ranges: $r,/" -e "s/\"multi-raft-ranges-10000\"/\"multi-raft-ranges-$r\"/" \
        "$TEMPLATE" > "$f"
    grep -q "MultiRaft(ranges: $r, replication: 3)" "$f" \
        || { echo "growth.sh: $TEMPLATE no longer has 'MultiRaft(ranges: 10000, replication: 3)'" >&2; exit 2; }
    "$BIN" check "$f" > /dev/null || { echo "growth.sh: splitbrain check $f failed" >&2; exit 1; }
done

if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2> /dev/null; then
    measure=gnu-time
else
    measure=python
fi

# measure SIZE: runs the scenario once; prints "wall_seconds max_rss_kib".
measure() {
    local f="$tmp/ranges-$1.ron" start end rc=0
    if [ "$measure" = gnu-time ]; then
        start=$EPOCHREALTIME
        /usr/bin/time -f %M -o "$tmp/rss" "$BIN" run "$f" > /dev/null 2> "$tmp/stderr" || rc=$?
        end=$EPOCHREALTIME
        echo "$start $end $(tail -1 "$tmp/rss")" > "$tmp/measured"
    else
        # The clock starts after Python's own start-up, at the fork.
        python3 -c '
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
end = time.perf_counter()
open(sys.argv[1], "w").write(f"{start} {end} {usage.ru_maxrss}\n")  # ru_maxrss: KiB on Linux
sys.exit(os.waitstatus_to_exitcode(status))
' "$tmp/measured" "$BIN" run "$f" > /dev/null 2> "$tmp/stderr" || rc=$?
    fi
    if [ "$rc" != 0 ]; then
        echo "growth.sh: '$BIN run $f' exited $rc; its stderr:" >&2
        cat "$tmp/stderr" >&2
        exit 1
    fi
    awk '{ printf "%.6f %d\n", $2 - $1, $3 }' "$tmp/measured"
}

echo "growth.sh: $("$BIN" --version), sizes ${SIZES[*]}, $REPS runs each, rss by $measure" >&2
echo "growth.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
measure "${SIZES[0]}" > /dev/null   # warm-up: the binary into the page cache
for rep in $(seq "$REPS"); do
    for r in "${SIZES[@]}"; do
        m=$(measure "$r")   # an assignment, so that a failed run stops the script (set -e)
        read -r wall rss <<< "$m"
        echo "$r $wall $rss" >> "$tmp/runs"
        printf 'growth.sh: run %d, %5d ranges: %.3f s, %d KiB\n' "$rep" "$r" "$wall" "$rss" >&2
    done
done
echo "growth.sh: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$tmp/runs" "$OUT" "${SIZES[@]}" <<'PY'
import statistics, sys
runs_path, out_path, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
walls, rsss = {r: [] for r in sizes}, {r: [] for r in sizes}
for line in open(runs_path):
    r, wall, rss = line.split()
    walls[int(r)].append(float(wall))
    rsss[int(r)].append(int(rss))
base = sizes[0]
base_rss = statistics.median(rsss[base])
with open(out_path, "w") as out:
    out.write("ranges,wall_s,max_rss_kib,us_per_range,kib_per_range\n")
    for r in sizes:
        wall, rss = statistics.median(walls[r]), statistics.median(rsss[r])
        per_range_kib = "" if r == base else f"{(rss - base_rss) / (r - base):.3f}"
        out.write(f"{r},{wall:.4f},{rss:.0f},{wall * 1e6 / r:.2f},{per_range_kib}\n")
PY
echo "growth.sh: wrote $OUT" >&2
cat "$OUT"
