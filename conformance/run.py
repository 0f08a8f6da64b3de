#!/usr/bin/env python3
"""Run the conformance experiments: real server vs splitbrain model, one table.

    python3 conformance/run.py [--system etcd|zookeeper|k8s] [-k substring] [--runs N]
                               [--markdown FILE] [--jobs N]
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

`--jobs N` (N > 1) runs each selected system in its own child process (this script with
`--system X --rows-json FILE`), at most N at once, longest first, never two of one
SERIAL_GROUPS group at once, each with its own slice of ports (CONFORMANCE_PORT_SLOT, see
harness.free_port); the children's output is streamed line by line, prefixed with the
system's name, and the table, the Markdown and the exit code are those of a serial run, rows
in the same order. `--jobs 1` (the default) runs everything in this process, one system after
another. Why what stays serial: docs/conformance.md, "Running concurrently".

Exit codes: 0 every verdict PASS, REAL, SKIP or KNOWN, 1 at least one FAIL or FIXED, 2 a
harness error; 128 + the signal's number when interrupted (SIGINT, SIGTERM).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
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

# --jobs N > 1: systems of one group never run at the same time (one after another, in
# START_ORDER); a system in no group may overlap any other. docs/conformance.md, "Running
# concurrently", has the reasons and the measurements.
SERIAL_GROUPS: tuple[tuple[str, ...], ...] = (
    # Both start JVMs, seconds of CPU on both cores each (the ZooKeeper servers, the Java CLI
    # client of the disconnect rows, the ensemble's three servers and the two it restarts in
    # every quorum-loss trial), while the other's rows are timed to ±0.15 s (the Java
    # client's disconnect) or time a JVM start (the ensemble's "service back, from restart").
    ("zookeeper", "zookeeper-cluster"),
)
# --jobs N > 1 starts the systems in this order, each as soon as a job and its group are
# free: longest first (serial wall seconds on the shared 2-core machine: etcd-cluster 202,
# etcd 199, zookeeper 175, k8s 127 with its balancer rows, zookeeper-cluster 88), so that no
# long system starts last.
START_ORDER = ("etcd-cluster", "etcd", "zookeeper", "k8s", "zookeeper-cluster")
# A child of --jobs learns its parent's PID from this, to exit when the parent is gone.
PARENT_PID_ENV = "CONFORMANCE_PARENT_PID"
# How long an interrupted --jobs run waits for its children to stop their servers.
CHILD_STOP_S = 60.0


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
    if exp.band.paired_period is None and not exp.band.twins:
        row.band += f" -> [{fmt(lo, exp.unit)}, {fmt(hi, exp.unit)}]"
    if row.verdict == "FAIL" and exp.band.twins:
        off = [f"{fmt(m, exp.unit)} (real {fmt(r, exp.unit)})"
               for k, (m, r) in enumerate(zip(row.model.values, row.real.values), 1)
               if k in harness.off_band(row.real, row.model, exp.band)]
        row.detail = f"model values off their real trial: {', '.join(off)}"
    elif row.verdict == "FAIL" and exp.band.paired_period is not None:
        off = [f"{fmt(m, exp.unit)} (real {fmt(r, exp.unit)}"
               + (", not > 0" if exp.band.sign_broken(m, r) else "") + ")"
               for m, r in zip(row.model.values, row.real.values)
               if not exp.band.twin_ok(m, r, slack)]
        row.detail = f"model values off their real trial: {', '.join(off)}"
    elif row.verdict == "FAIL":
        outside = [fmt(v, exp.unit) for v in row.model.values if not lo <= v <= hi]
        row.detail = f"model values outside the band: {', '.join(outside)}"
    if exp.known_difference and exp.known_where is not None:
        off = harness.off_band(row.real, row.model, exp.band)
        if off and all(exp.known_where(k) for k in off):
            row.verdict = "KNOWN"
            trials = ", ".join(str(k) for k in off)
            row.detail = "; ".join(d for d in (row.detail, f"known (trial {trials}): "
                                               f"{exp.known_difference}") if d)
    elif exp.known_difference:
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
    ap.add_argument("--jobs", type=int, default=1,
                    help="systems run at once, each in its own process (default 1: one "
                         "after another in this process); see SERIAL_GROUPS")
    # Internal (a child of --jobs): write the rows as JSON here instead of the table.
    ap.add_argument("--rows-json", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.rows_json and not args.system:
        ap.error("--rows-json needs --system")
    return args


def exit_code(rows: list[Row], errors: list[str]) -> int:
    """2 on a harness error (or an ERROR row), else 1 on a FAIL or FIXED row, else 0."""
    verdicts = {r.verdict for r in rows}
    if errors or "ERROR" in verdicts:
        return 2
    return 1 if verdicts & {"FAIL", "FIXED"} else 0


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    systems = [args.system] if args.system else list(SYSTEMS)
    if args.jobs > 1 and not args.rows_json:
        return run_concurrently(args, systems)
    harness.install_cleanup()
    if args.rows_json:
        die_with_parent()
    if args.etcd_binary:
        os.environ["CONFORMANCE_ETCD_CLUSTER_BIN"] = str(args.etcd_binary.resolve())
    started = time.monotonic()
    exps, errors = load_experiments(systems)
    for err in errors:
        print(err, file=sys.stderr)
    if args.substring:
        exps = [e for e in exps if args.substring in e.name]
    if not exps and not errors and not args.rows_json:
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
    if args.rows_json:
        write_rows_json(args.rows_json, args.system, rows, errors, total_s)
        print(f"total time {total_s:.0f} s", flush=True)
        return exit_code(rows, errors)
    print()
    print_table(rows)
    if rows:
        print(f"\n{trials_text(rows)}")
    print(f"total time {total_s:.0f} s")
    if args.markdown:
        args.markdown.write_text(markdown(rows, total_s))
    return exit_code(rows, errors)


# ---------------------------------------------------------------------------------------
# --jobs N: each system in a child process (this script, --rows-json), rows merged here


def row_to_json(row: Row) -> dict:
    """What the parent needs of a child's row to print it as a serial run would."""
    exp = row.exp
    return {"name": exp.name, "system": exp.system, "unit": exp.unit, "note": exp.note,
            "has_model": exp.model is not None, "runs": row.runs,
            "real": row.real.values if row.real else None,
            "model": row.model.values if row.model else None,
            "verdict": row.verdict, "band": row.band, "detail": row.detail}


def _ran_in_child(*_args) -> float:
    raise harness.HarnessError("this experiment ran in a child process of --jobs")


def row_from_json(d: dict) -> Row:
    """The row a child wrote (its experiment without the functions, which ran there)."""
    exp = Experiment(name=d["name"], system=d["system"], unit=d["unit"], real=_ran_in_child,
                     model=_ran_in_child if d["has_model"] else None, band=None,
                     runs=d["runs"], note=d["note"])
    real = Spread.of(d["real"]) if d["real"] is not None else None
    model = Spread.of(d["model"]) if d["model"] is not None else None
    return Row(exp, d["runs"], real, model, d["verdict"], d["band"], d["detail"])


def write_rows_json(path: Path, system: str, rows: list[Row], errors: list[str],
                    total_s: float) -> None:
    """A child's result: its rows in module order, its harness errors, wall and CPU seconds
    (its own and its reaped children's: servers, clients, splitbrain)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu_s = sum(u.ru_utime + u.ru_stime for u in usage)
    data = {"system": system, "rows": [row_to_json(r) for r in rows], "errors": errors,
            "wall_s": total_s, "cpu_s": cpu_s}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)  # the parent never reads half a file


def die_with_parent() -> None:
    """In a child of --jobs: get SIGTERM when the parent dies, even by SIGKILL (Linux
    PR_SET_PDEATHSIG), so that harness's handler stops this child's servers; exit at once if
    the parent is already gone."""
    parent = os.environ.get(PARENT_PID_ENV)
    if not parent:
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent's SIGTERM is the only way
    if os.getppid() != int(parent):
        os.kill(os.getpid(), signal.SIGTERM)


class Interrupted(Exception):
    """SIGINT or SIGTERM reached the parent of --jobs."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


_PRINT_LOCK = threading.Lock()  # one whole line at a time from the children's relays


def say(text: str, err: bool = False) -> None:
    """Print a line of the parent's own while children's lines are being relayed."""
    out = sys.stderr if err else sys.stdout
    with _PRINT_LOCK:
        print(text, file=out, flush=True)


def relay(stream, prefix: str, out) -> None:
    """Copy a child's stdout or stderr line by line, each line prefixed with its system.
    It reads to the end whatever happens to `out`, so that a child never blocks on a full
    pipe."""
    for line in stream:
        text = prefix + line.rstrip("\n") + "\n"
        with _PRINT_LOCK:
            try:
                out.write(text)
                out.flush()
            except UnicodeEncodeError:  # "±" to an ASCII terminal
                out.write(text.encode(out.encoding or "ascii", "replace").decode(
                    out.encoding or "ascii"))
                out.flush()
            except OSError:
                pass  # the parent's output is gone (a closed pipe): keep draining
    stream.close()


@dataclass
class Child:
    system: str
    slot: int
    popen: subprocess.Popen
    rows_json: Path
    started: float  # time.monotonic() at its start
    relays: list = field(default_factory=list)
    ended: Optional[float] = None
    returncode: Optional[int] = None


def child_argv(args: argparse.Namespace, system: str, rows_json: Path) -> list[str]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--system", system,
            "--rows-json", str(rows_json)]
    if args.etcd_binary:
        argv += ["--etcd-binary", str(args.etcd_binary.resolve())]
    if args.substring:
        argv += ["-k", args.substring]
    if args.runs:
        argv += ["--runs", str(args.runs)]
    return argv


def start_child(args: argparse.Namespace, system: str, slot: int, work: Path) -> Child:
    """One system in its own process and session (a terminal's Ctrl-C and `timeout` reach
    only this parent, which passes SIGTERM on once), with port slot `slot` of --jobs."""
    rows_json = work / f"{system}.json"
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8", **{
        harness.PORT_SLOT_ENV: f"{slot}/{args.jobs}", PARENT_PID_ENV: str(os.getpid())})
    popen = subprocess.Popen(child_argv(args, system, rows_json), env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, bufsize=1,
                             encoding="utf-8", errors="replace", start_new_session=True)
    child = Child(system, slot, popen, rows_json, time.monotonic())
    width = max(len(s) for s in SYSTEMS) + 2
    prefix = f"[{system}]".ljust(width) + " "
    for stream, out in ((popen.stdout, sys.stdout), (popen.stderr, sys.stderr)):
        t = threading.Thread(target=relay, args=(stream, prefix, out), daemon=True)
        t.start()
        child.relays.append(t)
    return child


def group_of(system: str) -> tuple[str, ...]:
    """The SERIAL_GROUPS group of a system, or the system alone."""
    return next((g for g in SERIAL_GROUPS if system in g), (system,))


def may_start(system: str, running: list[Child]) -> bool:
    return not any(c.system in group_of(system) for c in running)


def stop_children(children: list[Child]) -> None:
    """SIGTERM to every child still running (its harness handler stops its servers by PID),
    then wait up to CHILD_STOP_S for all of them. A child is never SIGKILLed: that would
    leave its servers running; one still stopping then is named and left to finish."""
    live = [c for c in children if c.popen.poll() is None]
    for c in live:
        try:
            os.kill(c.popen.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + CHILD_STOP_S
    for c in live:
        try:
            c.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            say(f"{c.system}: still stopping its servers after {CHILD_STOP_S:g} s "
                f"(pid {c.popen.pid})", err=True)
    for c in live:
        for t in c.relays:
            t.join(timeout=2)


def finish_child(child: Child) -> None:
    child.ended = time.monotonic()
    child.returncode = child.popen.returncode
    for t in child.relays:
        t.join()
    say(f"=== {child.system} ended, exit {child.returncode}, "
        f"{child.ended - child.started:.0f} s")


def schedule(args: argparse.Namespace, systems: list[str], work: Path,
             children: list[Child]) -> None:
    """Start the systems in START_ORDER, at most args.jobs at once and one per SERIAL_GROUPS
    group at once, each with the lowest free port slot; return when all have ended.
    `children` collects every child started (the caller stops them on a signal)."""
    pending = [s for s in START_ORDER if s in systems]
    running: list[Child] = []
    free_slots = list(range(args.jobs))
    while pending or running:
        for system in list(pending):
            if len(running) >= args.jobs:
                break
            if not may_start(system, running):
                continue
            slot = free_slots.pop(0)
            say(f"=== {system} starts (port slot {slot}/{args.jobs})")
            child = start_child(args, system, slot, work)
            children.append(child)
            running.append(child)
            pending.remove(system)
        time.sleep(0.2)
        for child in [c for c in running if c.popen.poll() is not None]:
            finish_child(child)
            running.remove(child)
            free_slots = sorted(free_slots + [child.slot])


def collect(children: list[Child], systems: list[str]) -> tuple[list[Row], list[str], dict]:
    """The children's rows in the serial order (SYSTEMS, then module order), their harness
    errors (a child that wrote no rows is one), and each system's JSON summary."""
    by_system = {c.system: c for c in children}
    rows, errors, summaries = [], [], {}
    for system in (s for s in SYSTEMS if s in systems):
        child = by_system[system]
        try:
            data = json.loads(child.rows_json.read_text())
        except (OSError, ValueError) as exc:
            errors.append(f"{system}: the child exited {child.returncode} without its rows "
                          f"({type(exc).__name__})")
            continue
        rows.extend(row_from_json(d) for d in data["rows"])
        errors.extend(data["errors"])
        summaries[system] = data
    return rows, errors, summaries


def print_system_times(children: list[Child], summaries: dict, t0: float, jobs: int) -> None:
    """Each system's start (from the run's start), wall and CPU seconds, rows, exit code."""
    print(f"\nsystems (--jobs {jobs}, started in this order):")
    head = ("system", "start", "wall", "cpu", "rows", "exit")
    lines = [head]
    for c in children:
        data = summaries.get(c.system, {})
        cpu = f"{data['cpu_s']:.0f} s" if "cpu_s" in data else "-"
        lines.append((c.system, f"+{c.started - t0:.0f} s", f"{c.ended - c.started:.0f} s",
                      cpu, str(len(data.get("rows", []))), str(c.returncode)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for line in lines:
        cells = [line[0].ljust(widths[0])] + [x.rjust(w) for x, w in zip(line[1:], widths[1:])]
        print("  " + "  ".join(cells))


def run_concurrently(args: argparse.Namespace, systems: list[str]) -> int:
    """--jobs N > 1: every selected system in a child process, then the serial run's table,
    Markdown and exit code over all rows, and each system's times."""
    if set(START_ORDER) != set(SYSTEMS):
        raise harness.HarnessError("START_ORDER must name every system of SYSTEMS once")

    def on_signal(signum, _frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Interrupted(signum)

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="conformance-jobs-"))
    children: list[Child] = []
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        schedule(args, systems, work, children)
        rows, errors, summaries = collect(children, systems)
    except Interrupted as exc:
        say(f"\ninterrupted by signal {exc.signum}: stopping "
            f"{', '.join(c.system for c in children if c.popen.poll() is None) or 'nothing'}",
            err=True)
        return 128 + exc.signum
    finally:
        stop_children(children)  # on a signal or an error; a no-op when all have ended
        shutil.rmtree(work, ignore_errors=True)
    total_s = time.monotonic() - started
    for err in errors:
        print(err, file=sys.stderr)
    if not rows and not errors:
        print("no experiment selected", file=sys.stderr)
        return 2
    print()
    print_table(rows)
    if rows:
        print(f"\n{trials_text(rows)}")
    print_system_times(children, summaries, started, args.jobs)
    print(f"total time {total_s:.0f} s")
    if args.markdown:
        args.markdown.write_text(markdown(rows, total_s))
    return exit_code(rows, errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
