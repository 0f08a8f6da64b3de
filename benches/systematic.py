#!/usr/bin/env python3
"""Time to bug for `hunt --search systematic`, beside the seed hunts' table
(docs/hunting.md, "Systematic search").

For each scenario it runs

    splitbrain hunt FILE --search systematic --steps K --no-shrink --json --quiet \
        --time-budget BUDGET [--jobs J]

(a systematic search runs the scenario's own seed: there are no ranges) and takes the wall
seconds of the whole process, the schedules it ran, whether it found a violation of an
invariant the file's `// breaks:` line names, and with how many steps. `--correct FILE...`
runs clean hunts instead and reports how far they got ("complete up to k steps") and their
distinct states per second.

    benches/systematic.py --binary target/release/splitbrain               # every scenario
    benches/systematic.py --only raft-forgets-vote-3-no-prevote --steps 4
    benches/systematic.py --correct scenarios/raft-nemesis.ron --nodes 3 --steps 2 --budget 60s
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "benches" / "time-to-bug"
EXTRA = [ROOT / "scenarios" / "raft-broken-nemesis.ron"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=str(ROOT / "target" / "release" / "splitbrain"))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--budget", default="10s")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", help="comma-separated file stems")
    p.add_argument("--correct", nargs="*", help="clean scenarios: report coverage instead")
    p.add_argument("--nodes", type=int, help="with --correct: run on this many nodes")
    p.add_argument("--out", help="write the markdown table here (default: stdout)")
    return p.parse_args(argv)


def breaks_of(path):
    for line in path.read_text().splitlines():
        if line.startswith("// breaks:"):
            return [b.strip() for b in line.split(":", 1)[1].split(",")]
    return []


def scenarios(only):
    files = sorted(BENCH.glob("*.ron")) + EXTRA
    if only:
        wanted = {s.strip() for s in only.split(",")}
        files = [f for f in files if f.stem in wanted]
    return files


def hunt(args, path):
    command = [args.binary, "hunt", str(path), "--search", "systematic", "--steps", str(args.steps),
               "--no-shrink", "--json", "--quiet", "--time-budget", args.budget, "--jobs", str(args.jobs)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode == 2:
        raise SystemExit(f"{path.name}: {done.stderr.strip()}")
    return json.loads(done.stdout), seconds


def row(args, path):
    out, seconds = hunt(args, path)
    found = out.get("counterexample")
    breaks = breaks_of(path)
    keys = [f["key"] for f in found["failures"]] if found else []
    hit = [k for k in keys if k in breaks or (not breaks and k not in ("liveness", "objective"))]
    cov = out["coverage"]
    if hit:
        verdict = f"found, {len(found['steps'])} steps"
    elif keys:
        verdict = f"other failure first ({', '.join(keys)})"
    else:
        verdict = f"not found in {args.budget} (complete to {cov['complete_to']})"
    return f"| {path.stem} | {verdict} | {cov['schedules']:,} | {seconds:.2f} | {', '.join(hit) or '-'} |"


def correct_row(args, path):
    source = path
    if args.nodes:
        text = path.read_text()
        import re
        text = re.sub(r"nodes: \d+", f"nodes: {args.nodes}", text, count=1)
        tmp = pathlib.Path(tempfile.mkdtemp()) / path.name
        tmp.write_text(text)
        source = tmp
    out, seconds = hunt(args, source)
    cov = out["coverage"]
    found = out.get("counterexample")
    keys = ", ".join(f["key"] for f in found["failures"]) if found else "none"
    return (f"| {path.stem} ({args.nodes or 'as written'} nodes) | {out['ended']} | complete to "
            f"{cov['complete_to']} of {args.steps} steps | {cov['schedules']:,} | {cov['distinct_states']:,} "
            f"| {seconds:.1f} | {out['states_per_second']:,.0f} | {keys} |")


def main(argv):
    args = parse_args(argv)
    if args.correct:
        lines = ["| scenario | ended | coverage | schedules | distinct states | s | states/s | failures |",
                 "|---|---|---|---:|---:|---:|---:|---|"]
        lines += [correct_row(args, pathlib.Path(p)) for p in args.correct]
    else:
        lines = ["| scenario | systematic | schedules | s | invariant |", "|---|---|---:|---:|---|"]
        lines += [row(args, p) for p in scenarios(args.only)]
    text = "\n".join(lines) + "\n"
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main(sys.argv[1:])
