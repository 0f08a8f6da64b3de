#!/usr/bin/env python3
"""Run the conformance experiments: real server vs splitbrain model, one table.

    python3 conformance/run.py [--system etcd|zookeeper|k8s] [-k substring] [--runs N]
                               [--markdown FILE]
    python3 conformance/run.py --system etcd-cluster|zookeeper-cluster [--etcd-binary PATH]

Each experiment runs `runs` times against the real server and `runs` times through the
model (seeds 1..runs). The verdict is PASS when every model value lies within
[real_min - slack, real_max + slack], slack = band.abs + band.rel * median(real) (a
`paired_period` band compares model run k with real trial k instead; see harness.Band).

Verdicts: PASS, FAIL, SKIP, ERROR; for an experiment marked with a known difference, KNOWN
(it still disagrees: the suite passes) or FIXED (it agrees now: remove the mark). A row with
no model side (what the models of the 3-member clusters have no counterpart for, such as the
write outage) reads REAL, or FAIL when the real values contradict the documented behaviour
its `expect` checks.

The default set includes the 3-member clusters (`etcd-cluster` with Debian's etcd 3.4.23,
`zookeeper-cluster`); `--etcd-binary` runs the etcd cluster rows on another etcd (a 3.5
from build_etcd_new.sh).

Exit codes: 0 every verdict PASS, REAL, SKIP or KNOWN, 1 at least one FAIL or FIXED, 2 a
harness error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import Experiment, Skip, Spread  # noqa: E402

# The real 3-member clusters against the cluster models (issue 32).
CLUSTER_SYSTEMS = ("etcd-cluster", "zookeeper-cluster")
SYSTEMS = ("zookeeper", "etcd", "k8s") + CLUSTER_SYSTEMS  # the default set (ci.sh runs these)


def module_name(system: str) -> str:
    """The experiments' module of a system ("etcd-cluster" -> etcd_cluster)."""
    return system.replace("-", "_")


@dataclass
class Row:
    exp: Experiment
    runs: int = 0
    real: Optional[Spread] = None
    model: Optional[Spread] = None
    verdict: str = ""
    band: str = ""
    detail: str = ""
    notes: list = field(default_factory=list)


def load_experiments(systems: list[str]) -> tuple[list[Experiment], list[str]]:
    """EXPERIMENTS of each system module that exists; load errors are harness errors."""
    exps, errors = [], []
    for system in systems:
        name = module_name(system)
        if not (harness.CONFORMANCE_DIR / f"{name}.py").exists():
            continue
        try:
            module = importlib.import_module(name)
        except Exception:
            errors.append(f"{system}: import failed:\n{traceback.format_exc()}")
            continue
        exps.extend(module.EXPERIMENTS)
    return exps, errors


def fmt(value: float, unit: str) -> str:
    if unit == "count":
        return f"{value:g}"
    if unit == "ms":
        return f"{value:.0f}"
    return f"{value:.2f}"


def fmt_spread(s: Optional[Spread], unit: str) -> str:
    if s is None:
        return "-"
    return "/".join(fmt(v, unit) for v in (s.min, s.median, s.max))


def measure(fn, args_list: list[tuple]) -> list[float]:
    return [float(fn(*args)) for args in args_list]


def run_experiment(exp: Experiment, runs: int) -> Row:
    """Real trials first, then model trials; Skip makes the row SKIP, anything else ERROR."""
    row = Row(exp, runs)
    started = time.monotonic()
    model = f"{runs} model" if exp.model is not None else "no model"
    print(f"--- {exp.name} ({exp.system}, {runs} real + {model})", flush=True)
    try:
        real_values = measure(exp.real, [()] * runs)
        row.real = Spread.of(real_values)
        print(f"    real  {exp.unit}: {[fmt(v, exp.unit) for v in real_values]}", flush=True)
        if exp.model is None:
            return real_only(row, started)
        model_values = measure(exp.model, [(seed,) for seed in range(1, runs + 1)])
        row.model = Spread.of(model_values)
        print(f"    model {exp.unit}: {[fmt(v, exp.unit) for v in model_values]}", flush=True)
    except Skip as exc:
        row.verdict, row.detail = "SKIP", str(exc)
        print(f"    SKIP: {exc}", flush=True)
        return row
    except Exception as exc:
        row.verdict, row.detail = "ERROR", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
        return row
    row.verdict, lo, hi, slack = harness.verdict(row.real, row.model, exp.band)
    row.band = exp.band.describe(exp.unit)
    if exp.band.paired_period is None:
        row.band += f" -> [{fmt(lo, exp.unit)}, {fmt(hi, exp.unit)}]"
    if row.verdict == "FAIL" and exp.band.paired_period is not None:
        off = [f"{fmt(m, exp.unit)} (real {fmt(r, exp.unit)}"
               + (", not > 0" if exp.band.sign_broken(m, r) else "") + ")"
               for m, r in zip(row.model.values, row.real.values)
               if not exp.band.twin_ok(m, r, slack)]
        row.detail = f"model values off their real trial: {', '.join(off)}"
    elif row.verdict == "FAIL":
        outside = [fmt(v, exp.unit) for v in row.model.values if not lo <= v <= hi]
        row.detail = f"model values outside the band: {', '.join(outside)}"
    if exp.known_difference:
        row.verdict = {"FAIL": "KNOWN", "PASS": "FIXED"}[row.verdict]
        row.detail = "; ".join(d for d in (row.detail, f"known: {exp.known_difference}") if d)
    print(f"    {row.verdict} band {row.band} ({time.monotonic() - started:.1f}s)", flush=True)
    return row


def real_only(row: Row, started: float) -> Row:
    """The verdict of a row without a model side: REAL, or FAIL when `expect` objects."""
    exp = row.exp
    problem = exp.expect(row.real.values) if exp.expect else ""
    row.verdict = "FAIL" if problem else "REAL"
    row.detail = f"expected: {problem}" if problem else ""
    print(f"    {row.verdict}{' ' + problem if problem else ''} "
          f"({time.monotonic() - started:.1f}s)", flush=True)
    return row


def table_lines(rows: list[Row]) -> list[list[str]]:
    head = ["experiment", "unit", "real min/med/max", "model min/med/max", "band", "verdict"]
    body = [[r.exp.name, r.exp.unit, fmt_spread(r.real, r.exp.unit),
             fmt_spread(r.model, r.exp.unit), r.band or "-", r.verdict] for r in rows]
    return [head] + body


def note_of(row: Row) -> str:
    parts = [p for p in (row.exp.note, row.detail) if p]
    return " | ".join(parts)


def print_table(rows: list[Row]) -> None:
    lines = table_lines(rows)
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for n, line in enumerate(lines):
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print()
    for row in rows:
        note = note_of(row)
        if note:
            print(f"{row.exp.name}: {note}")


def trials_text(rows: list[Row]) -> str:
    counts = sorted({r.runs for r in rows})
    if all(r.exp.model is None for r in rows):
        return f"{'/'.join(map(str, counts))} real trials each (real side only, no model)"
    if len(counts) == 1:
        return f"{counts[0]} real and {counts[0]} model trials each (seeds 1..{counts[0]})"
    return (f"{'/'.join(map(str, counts))} real and as many model trials each, "
            f"by experiment (seeds 1..N)")


def markdown(rows: list[Row], total_s: float) -> str:
    lines = table_lines(rows)
    out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines[1:]]
    out.append("")
    out.append(f"{trials_text(rows)}; total {total_s:.0f} s.")
    out.append("")
    for row in rows:
        note = note_of(row)
        if note:
            out.append(f"- **{row.exp.name}**: {note}")
    return "\n".join(out) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", choices=SYSTEMS,
                    help="only this system's experiments")
    ap.add_argument("--etcd-binary", type=Path,
                    help="etcd server binary for etcd-cluster (default /usr/bin/etcd; "
                         "a later etcd from build_etcd_new.sh)")
    ap.add_argument("-k", dest="substring", help="only experiments whose name contains this")
    ap.add_argument("--runs", type=int, help="trials per side (default: each experiment's)")
    ap.add_argument("--markdown", type=Path, help="also write the table as Markdown here")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    harness.install_cleanup()
    if args.etcd_binary:
        os.environ["CONFORMANCE_ETCD_CLUSTER_BIN"] = str(args.etcd_binary.resolve())
    started = time.monotonic()
    systems = [args.system] if args.system else list(SYSTEMS)
    exps, errors = load_experiments(systems)
    for err in errors:
        print(err, file=sys.stderr)
    if args.substring:
        exps = [e for e in exps if args.substring in e.name]
    if not exps and not errors:
        print("no experiment selected", file=sys.stderr)
        return 2
    rows = []
    try:
        for exp in exps:
            rows.append(run_experiment(exp, args.runs or exp.runs))
    finally:
        for system in systems:
            module = sys.modules.get(module_name(system))
            if module is not None and hasattr(module, "shutdown"):
                module.shutdown()
        harness.stop_all()
    total_s = time.monotonic() - started
    print()
    print_table(rows)
    if rows:
        print(f"\n{trials_text(rows)}")
    print(f"total time {total_s:.0f} s")
    if args.markdown:
        args.markdown.write_text(markdown(rows, total_s))
    verdicts = {r.verdict for r in rows}
    if errors or "ERROR" in verdicts:
        return 2
    return 1 if verdicts & {"FAIL", "FIXED"} else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
