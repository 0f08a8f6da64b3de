#!/bin/sh
# Runs to the first failing run of `hunt` with --search plain, swarm and guided, over
# disjoint seed ranges (docs/hunting.md, "Guided search"). Usage:
#   scripts/guided-vs-plain.sh SCENARIO [RANGES] [MAX_SEEDS] [MUTANTS_PER_BATCH]
# RANGES (default 4): ranges k*1000000+1 .. k*1000000+MAX_SEEDS (default 8000), k = 1..RANGES.
# Prints one line per (range, search): the runs to the first failure ("-" for none in the
# range), the runs made, and the seconds taken. Needs `splitbrain` (release) on PATH or $SB.
set -eu
sb=${SB:-splitbrain}
scenario=$1
ranges=${2:-4}
max=${3:-8000}
mutants=${4:-32}
printf 'range\tsearch\truns_to_first_failure\truns\tseconds\n'
k=1
while [ "$k" -le "$ranges" ]; do
    first=$((k * 1000000 + 1))
    last=$((k * 1000000 + max))
    for search in plain swarm guided; do
        extra=""
        [ "$search" = guided ] && extra="--mutants-per-batch $mutants"
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        json=$("$sb" hunt "$scenario" --search "$search" $extra --seed-range "$first..=$last" \
            --no-shrink --quiet --json || true)
        end=$(date +%s.%N)
        printf '%s\n' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s, g = d["summary"], d.get("guided")
first = int(sys.argv[1])
if g is not None:
    to_first = g["runs_to_first_failure"]
    runs = s["seeds_run"] + g["mutants_run"]
else:
    seeds = [f["first_seed"] for f in s["failures"]]
    to_first = min(seeds) - first + 1 if seeds else None
    runs = s["seeds_run"]
print("%s..=%s\t%s\t%s\t%d\t%.1f" % (sys.argv[1], sys.argv[2], sys.argv[3],
      "-" if to_first is None else to_first, runs, float(sys.argv[5]) - float(sys.argv[4])))
' "$first" "$last" "$search" "$start" "$end"
    done
    k=$((k + 1))
done
