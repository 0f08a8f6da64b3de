#!/usr/bin/env python3
"""How well the shrinker shrinks (docs/hunting.md, "Shrinking and reproducers").

For each scenario and each of N disjoint seed ranges (k*1000000+1..=k*1000000+S, k = 1..N)
it runs

    splitbrain hunt FILE --seed-range A..=B --jobs J --json --quiet --out TMP [--search MODE]

and takes, from the first reproducer of the --json output, the faults before and after
shrinking and the shrink runs, and the wall seconds of the hunt (seeds and shrinking). A
range with no failure is left out. Prints one markdown row per scenario: the ranges that
failed, the sums of faults before and after and of shrink runs, and the largest reproducer.

    scripts/shrink-table.py --binary target/release/splitbrain --ranges 5 \\
        benches/time-to-bug/k8s-dbrow.ron scenarios/raft-broken-nemesis.ron

Python 3 standard library only.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time


def one_range(args, path, k):
    first = k * 1_000_000 + 1
    last = k * 1_000_000 + args.seeds
    with tempfile.TemporaryDirectory() as out:
        cmd = [args.binary, "hunt", path, "--seed-range", f"{first}..={last}",
               "--jobs", str(args.jobs), "--json", "--quiet", "--out", out]
        if args.search:
            cmd += ["--search", args.search]
        start = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr}")
    reproducers = json.loads(done.stdout).get("reproducers") or []
    if not reproducers:
        return None
    r = reproducers[0]
    return {"range": k, "seed": r["seed"], "key": r["key"], "before": r["faults_before"],
            "after": r["faults_after"], "runs": r["shrink_runs"],
            "verified": r["replay_verified"], "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--binary", default="target/release/splitbrain")
    parser.add_argument("--ranges", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=2000, help="seeds per range")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--search")
    parser.add_argument("--raw", help="write every range's numbers here as JSON")
    args = parser.parse_args()
    print("| scenario | ranges failed | faults before | faults after | max after "
          "| shrink runs | max runs | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    raw = {}
    for path in args.files:
        rows = [r for k in range(1, args.ranges + 1) if (r := one_range(args, path, k))]
        raw[path] = rows
        if not rows:
            print(f"| {path} | 0 of {args.ranges} | | | | | | |")
            continue
        total = lambda key: sum(r[key] for r in rows)
        unverified = sum(not r["verified"] for r in rows)
        note = f" ({unverified} not replayed)" if unverified else ""
        name = path.rsplit("/", 1)[-1].removesuffix(".ron")
        print(f"| {name} | {len(rows)} of {args.ranges}{note} | {total('before')} "
              f"| {total('after')} | {max(r['after'] for r in rows)} | {total('runs')} "
              f"| {max(r['runs'] for r in rows)} | {total('seconds'):.1f} |", flush=True)
    if args.raw:
        with open(args.raw, "w", encoding="utf-8") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
