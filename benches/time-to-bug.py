#!/usr/bin/env python3
"""Time to bug: how long a hunt takes to find each shipped unsafe variant (docs/hunting.md,
"Time to bug").

For every scenario of benches/time-to-bug/ (plus scenarios/raft-broken-nemesis.ron), every
search mode and each of N disjoint seed ranges (1..S+1, S+1..2S+1, ...), it runs

    splitbrain hunt FILE --seed-range A..B --no-shrink --jobs 2 --json --quiet
                    --time-budget BUDGET --jsonl TMP [--search MODE]

and takes the runs to the first safety violation (the position of the first record of the
--jsonl file whose outcome is `safety_mismatch`: for a plain hunt, first failing seed - A + 1;
a guided hunt writes no --jsonl, so its --json `guided.runs_to_first_safety_violation` is
used) and
the wall and CPU seconds of the process. A hunt stops after the batch of 64 seeds that holds its
first failing seed; a seed that fails on liveness only (or outgrows its limits) is not the bug,
so the hunt is started again after it, within the same range and budget. A bug not found
before the budget ran out shows as "not found in X s".

Modes: `plain`, `swarm` and `guided` are passed as `--search MODE` when the binary's
`hunt --help` lists that flag; an older binary runs one mode, `default` (no flag: the
scenario's own nemesis setting).

`--correct` instead runs the correct shipped nemesis scenarios over --seeds seeds each
(--keep-going, no budget) and reports safety violations (expected: 0) and runs per second.

Output: a markdown table on stdout (or --out FILE) and the raw numbers as JSON (--raw FILE).
Exit code: 0; 1 if --correct found a safety violation; 2 for bad usage or a hunt that could not
run (exit 2 or a signal, or unreadable output). Python 3 standard library only.

    benches/time-to-bug.py --binary target/release/splitbrain --ranges 10
    benches/time-to-bug.py --only raft-forgets-vote,etcd-wallclock-token --modes plain,guided
    benches/time-to-bug.py --correct --seeds 100000
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "benches" / "time-to-bug"
# Shipped hunts of a broken variant that live with the scenario library.
EXTRA_SCENARIOS = [ROOT / "scenarios" / "raft-broken-nemesis.ron"]
CORRECT_SCENARIOS = [
    ROOT / "scenarios" / name
    for name in (
        "raft-nemesis.ron",
        "raft-rs-nemesis.ron",
        "raft-rs-nemesis-plain.ron",
        "etcd-nemesis.ron",
        "k8s-nemesis.ron",
        "zk-nemesis.ron",
    )
]
SEARCH_MODES = ("plain", "swarm", "guided")
DEFAULT_MODE = "default"
FOUND = "safety_mismatch"
NOT_SAFETY = ("liveness", "objective", "limit", "panic", "refused")


class BenchError(Exception):
    """A hunt that could not run or whose output could not be read (exit 2)."""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Seeds and seconds to the first violation of each shipped unsafe variant.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--binary", default=str(ROOT / "target" / "release" / "splitbrain"),
                        help="the splitbrain binary (default: target/release/splitbrain)")
    parser.add_argument("--ranges", type=int, default=10,
                        help="disjoint seed ranges per scenario and mode (default: 10)")
    parser.add_argument("--range-size", type=int, default=100_000,
                        help="seeds per range (default: 100000)")
    parser.add_argument("--modes",
                        help="comma-separated search modes (default: plain,swarm,guided when "
                             "the binary has `hunt --search`, else default)")
    parser.add_argument("--only", help="comma-separated scenario names (file stems) to run")
    parser.add_argument("--budget", default="20s",
                        help="hunt --time-budget per range (default: 20s)")
    parser.add_argument("--jobs", type=int, default=2, help="hunt --jobs (default: 2)")
    parser.add_argument("--out", help="write the markdown table here instead of stdout")
    parser.add_argument("--raw", default=str(ROOT / "out" / "time-to-bug.json"),
                        help="write the raw numbers as JSON here (default: out/time-to-bug.json)")
    parser.add_argument("--correct", action="store_true",
                        help="run the correct shipped *-nemesis.ron scenarios instead")
    parser.add_argument("--seeds", type=int, default=100_000,
                        help="--correct: seeds per scenario (default: 100000)")
    args = parser.parse_args(argv)
    for name in ("ranges", "range_size", "jobs", "seeds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def supports_search(binary):
    """Whether the binary's `hunt` takes `--search MODE`."""
    try:
        done = subprocess.run([binary, "hunt", "--help"], capture_output=True, text=True,
                              check=False)
    except OSError as error:
        raise BenchError(f"cannot run {binary}: {error}") from error
    if done.returncode != 0:
        raise BenchError(f"{binary} hunt --help exited {done.returncode}: {done.stderr.strip()}")
    return "--search" in done.stdout


def choose_modes(requested, has_search):
    if requested is None:
        return list(SEARCH_MODES) if has_search else [DEFAULT_MODE]
    modes = [mode.strip() for mode in requested.split(",") if mode.strip()]
    for mode in modes:
        if mode == DEFAULT_MODE:
            continue
        if mode not in SEARCH_MODES:
            raise BenchError(f"unknown mode {mode!r} (modes: {', '.join(SEARCH_MODES)}, default)")
        if not has_search:
            raise BenchError(f"mode {mode!r} needs `hunt --search`, which this binary lacks; "
                             "use --modes default")
    return modes


def breaks_of(path):
    """The invariants a bench scenario says it breaks (its `// breaks:` line)."""
    for line in path.read_text().splitlines():
        if line.startswith("// breaks:"):
            return [name.strip() for name in line[len("// breaks:"):].split(",") if name.strip()]
    return []


def bench_scenarios(only):
    files = sorted(SCENARIO_DIR.glob("*.ron")) + EXTRA_SCENARIOS
    if only:
        wanted = [name.strip() for name in only.split(",") if name.strip()]
        by_name = {path.stem: path for path in files}
        unknown = [name for name in wanted if name not in by_name]
        if unknown:
            raise BenchError(f"unknown scenario(s) {', '.join(unknown)}; known: "
                             + ", ".join(sorted(by_name)))
        files = [by_name[name] for name in wanted]
    return files


def hunt_command(binary, path, first_seed, end_seed, mode, args, extra):
    command = [binary, "hunt", str(path), "--seed-range", f"{first_seed}..{end_seed}",
               "--no-shrink", "--jobs", str(args.jobs), "--json", "--quiet"] + extra
    if mode != DEFAULT_MODE:
        command += ["--search", mode]
    return command


def cpu_seconds_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def is_safety(key):
    """Whether a failure key is a safety invariant (not liveness, an objective, a runtime
    limit, a panic, a refused effect or an expected violation that did not happen): the rule
    of the hunt's own `runs_to_first_safety_violation` (lab's Failure::is_safety_violation)."""
    return key not in NOT_SAFETY and not key.startswith("missing:")


def run_hunt(command, jsonl_path):
    """Runs one hunt, with --jsonl to `jsonl_path` unless it is None; returns (wall seconds,
    CPU seconds, --json output, records of the --jsonl file or None). CPU seconds (user +
    system, all threads) tell a loaded machine apart."""
    if jsonl_path is not None:
        if jsonl_path.exists():
            jsonl_path.unlink()
        command = command + ["--jsonl", str(jsonl_path)]
    cpu_start = cpu_seconds_of_children()
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall_s = time.monotonic() - start
    cpu_s = cpu_seconds_of_children() - cpu_start
    if done.returncode not in (0, 1, 3):
        raise BenchError(f"{' '.join(command)} exited {done.returncode}: "
                         f"{done.stderr.strip()[-2000:]}")
    try:
        output = json.loads(done.stdout)
        records = None
        if jsonl_path is not None:
            records = [value for value in map(json.loads, jsonl_path.read_text().splitlines())
                       if "hunt" not in value and "end" not in value]
    except (ValueError, OSError) as error:
        raise BenchError(f"{' '.join(command)}: unreadable output: {error}") from error
    return wall_s, cpu_s, output, records


def budget_seconds(text):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            try:
                return float(text[: -len(unit)]) * units[unit]
            except ValueError:
                break
    raise BenchError(f"--budget {text!r}: write a duration such as 20s, 2m or 500ms")


def first_bug_in_records(records):
    """(runs up to and including the first safety violation, its record) or (runs, None)."""
    for index, record in enumerate(records):
        keys = [f.get("key", "") for f in record.get("failures", [])]
        if record.get("outcome") == FOUND and any(is_safety(k) for k in keys):
            return index + 1, record
    return len(records), None


def first_bug_in_summary(output, first_seed):
    """The same from the --json output alone (a guided hunt writes no --jsonl): runs to the
    first safety violation from `guided.runs_to_first_safety_violation` when given (an older
    binary's `guided.runs_to_first_failure` counts a liveness failure too), else from the lowest
    failing seed. Exact unless, without the first field, a run that failed on liveness only
    came before the first violation."""
    summary = output.get("summary", {})
    guided = output.get("guided") or {}
    failures = [f for f in summary.get("failures", []) + guided.get("failures", [])
                if is_safety(f.get("key", ""))]
    runs_run = summary.get("seeds_run", 0) + guided.get("mutants_run", 0)
    if not failures:
        return runs_run, None
    seeds = [f["first_seed"] for f in failures if isinstance(f.get("first_seed"), int)]
    runs = guided.get("runs_to_first_safety_violation", guided.get("runs_to_first_failure"))
    if runs is None:
        runs = min(seeds) - first_seed + 1 if seeds else runs_run
    first = min(seeds) if seeds else failures[0].get("first")
    found = {"seed": first, "failures": failures}
    return runs, found


def time_to_bug(binary, path, mode, first_seed, end_seed, args, scratch):
    """One range: hunt until a safety violation, the end of the range or the budget."""
    budget_s = budget_seconds(args.budget)
    # A guided hunt refuses --jsonl (its mutants are no seed's record).
    jsonl_path = None if mode == "guided" else Path(scratch) / "hunt.jsonl"
    result = {"scenario": path.stem, "file": os.path.relpath(path, ROOT), "mode": mode,
              "range": [first_seed, end_seed], "found": False, "runs": 0, "wall_s": 0.0,
              "cpu_s": 0.0, "restarts": 0, "ended": None, "first_seed": None,
              "invariants": [], "detail": None}
    seed = first_seed
    while seed < end_seed:
        left_s = budget_s - result["wall_s"]
        if left_s <= 0:
            break
        extra = ["--time-budget", f"{max(int(left_s * 1000), 1)}ms", "--out", scratch]
        command = hunt_command(binary, path, seed, end_seed, mode, args, extra)
        wall_s, cpu_s, output, records = run_hunt(command, jsonl_path)
        result["wall_s"] += wall_s
        result["cpu_s"] += cpu_s
        result["ended"] = output.get("ended")
        if records is None:
            runs, found = first_bug_in_summary(output, seed)
        else:
            runs, found = first_bug_in_records(records)
        result["runs"] += runs
        if found is not None:
            failures = found.get("failures", [])
            result["found"] = True
            result["first_seed"] = found.get("seed")
            result["invariants"] = sorted({f["key"] for f in failures if is_safety(f["key"])})
            result["detail"] = (failures or [{}])[0].get("detail")
            return result
        # Stopped by a failure that is not the bug (liveness, a limit): go on after it.
        last = output.get("summary", {}).get("last_seed")
        if output.get("ended") != "first_failure" or not isinstance(last, int):
            break
        result["restarts"] += 1
        seed = last + 1
    return result


def median_of(values):
    """Median of (value, censored) pairs; censored ones count as larger than any value."""
    ordered = sorted(values, key=lambda item: (item[1], item[0]))
    count = len(ordered)
    low, high = ordered[(count - 1) // 2], ordered[count // 2]
    if low[1] or high[1]:
        return (max(low[0], high[0]), True)
    return ((low[0] + high[0]) / 2, False)


def summarise(results):
    seeds = [(r["runs"], not r["found"]) for r in results]
    seconds = [(r["wall_s"], not r["found"]) for r in results]
    return {
        "found": sum(r["found"] for r in results),
        "ranges": len(results),
        "median_runs": median_of(seeds),
        "max_runs": max(seeds, key=lambda item: (item[1], item[0])),
        "median_s": median_of(seconds),
        "max_s": max(seconds, key=lambda item: (item[1], item[0])),
        "median_cpu_s": median_of([(r["cpu_s"], not r["found"]) for r in results]),
        "invariants": sorted({k for r in results for k in r["invariants"]}),
    }


def show_runs(pair):
    value, censored = pair
    return f"> {value:,.0f}" if censored else f"{value:,.0f}"


def show_seconds(pair):
    value, censored = pair
    return f"not found in {value:.0f} s" if censored else f"{value:.2f}"


def show_cpu(pair):
    value, censored = pair
    return f"> {value:.2f}" if censored else f"{value:.2f}"


def table(rows, breaks):
    lines = [
        "| scenario | mode | found in | median seeds | max seeds | median s | max s | median CPU s | invariant |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (scenario, mode), stats in rows:
        found = ", ".join(stats["invariants"]) or "-"
        expected = breaks.get(scenario, [])
        if expected and stats["invariants"] and not set(stats["invariants"]) & set(expected):
            found += f" (expected {', '.join(expected)})"
        lines.append(
            f"| {scenario} | {mode} | {stats['found']} of {stats['ranges']} | "
            f"{show_runs(stats['median_runs'])} | {show_runs(stats['max_runs'])} | "
            f"{show_seconds(stats['median_s'])} | {show_seconds(stats['max_s'])} | "
            f"{show_cpu(stats['median_cpu_s'])} | {found} |")
    return "\n".join(lines) + "\n"


def run_time_to_bug(args, binary, modes):
    files = bench_scenarios(args.only)
    breaks = {path.stem: breaks_of(path) for path in files}
    results, rows = [], []
    with tempfile.TemporaryDirectory(prefix="time-to-bug-") as scratch:
        for path in files:
            for mode in modes:
                mine = []
                for index in range(args.ranges):
                    first = 1 + index * args.range_size
                    result = time_to_bug(binary, path, mode, first, first + args.range_size,
                                         args, scratch)
                    mine.append(result)
                    print(f"{path.stem} {mode} {first}..{first + args.range_size}: "
                          + (f"seed {result['first_seed']} after {result['runs']} runs, "
                             f"{','.join(result['invariants'])}" if result["found"]
                             else f"not found in {result['runs']} runs")
                          + f", {result['wall_s']:.2f} s", file=sys.stderr, flush=True)
                results += mine
                rows.append(((path.stem, mode), summarise(mine)))
    header = (f"Seeds (runs) and wall seconds to the first safety violation; {args.ranges} "
              f"disjoint ranges of {args.range_size:,} seeds each, `--jobs {args.jobs}`, "
              f"budget {args.budget} per range.\n\n")
    return header + table(rows, breaks), {"kind": "time-to-bug",
                                                       "results": results}


def run_correct(args, binary, modes):
    results = []
    lines = ["| scenario | mode | runs | safety violations | liveness failures | s | runs/s | "
             "CPU s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory(prefix="time-to-bug-") as scratch:
        for path in CORRECT_SCENARIOS:
            for mode in modes:
                command = hunt_command(binary, path, 1, 1 + args.seeds, mode, args,
                                       ["--keep-going", "--out", scratch])
                wall_s, cpu_s, output, _ = run_hunt(command, None)
                summary = output.get("summary", {})
                guided = output.get("guided") or {}
                failures = summary.get("failures", []) + guided.get("failures", [])
                # Seeds (and mutants) that broke each safety invariant.
                violations = {f["key"]: f["count"] for f in failures if is_safety(f["key"])}
                liveness = sum(f["count"] for f in failures if f["key"] == "liveness")
                runs = summary.get("seeds_run", 0) + guided.get("mutants_run", 0)
                result = {"scenario": path.stem, "file": os.path.relpath(path, ROOT),
                          "mode": mode, "runs": runs, "violations": violations,
                          "liveness_failures": liveness, "wall_s": wall_s, "cpu_s": cpu_s,
                          "ended": output.get("ended"), "failures": failures}
                results.append(result)
                shown = ", ".join(f"{k} {n}" for k, n in sorted(violations.items())) or "0"
                print(f"{path.stem} {mode}: {runs} runs, violations: {shown}, {wall_s:.1f} s",
                      file=sys.stderr, flush=True)
                lines.append(f"| {path.stem} | {mode} | {runs:,} | {shown} | {liveness} | "
                             f"{wall_s:.1f} | {runs / wall_s:,.0f} | {cpu_s:.1f} |")
    header = (f"Correct shipped nemesis hunts, seeds 1..={args.seeds}, `--jobs {args.jobs}`, "
              "`--keep-going --no-shrink`; violations are seeds (and mutants) per broken "
              "invariant.\n\n")
    return header + "\n".join(lines) + "\n", {"kind": "correct", "results": results}


def write(path_text, text):
    path = Path(path_text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main(argv):
    args = parse_args(argv)
    try:
        has_search = supports_search(args.binary)
        if args.correct and args.modes is None:
            modes = [DEFAULT_MODE]
        else:
            modes = choose_modes(args.modes, has_search)
        budget_seconds(args.budget)
        if args.correct:
            markdown, raw = run_correct(args, args.binary, modes)
        else:
            markdown, raw = run_time_to_bug(args, args.binary, modes)
        raw.update({"binary": args.binary, "modes": modes, "jobs": args.jobs,
                    "budget": args.budget, "range_size": args.range_size,
                    "ranges": args.ranges, "seeds": args.seeds})
        write(args.raw, json.dumps(raw, indent=2) + "\n")
        if args.out:
            write(args.out, markdown)
        else:
            sys.stdout.write(markdown)
    except BenchError as error:
        print(f"time-to-bug: {error}", file=sys.stderr)
        return 2
    if args.correct and any(r["violations"] for r in raw["results"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
