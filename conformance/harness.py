"""Shared pieces of the conformance suite: experiments, bands, processes, splitbrain runs.

An experiment measures one quantity (a time or a count) several times against the real
server and several times through the splitbrain model (seeds 1..runs), and the verdict
compares the two spreads through a band (see `Band`).

Every process the suite starts goes through `Proc`, which records it in a registry; `run.py`
calls `install_cleanup()` so that every recorded process is stopped by its PID at exit, on an
exception, and on SIGINT/SIGTERM. Nothing is ever stopped by name.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

CONFORMANCE_DIR = Path(__file__).resolve().parent
REPO_ROOT = CONFORMANCE_DIR.parent
SCENARIO_DIR = CONFORMANCE_DIR / "scenarios"

# `splitbrain run` exit codes that mean "the run happened and printed its verdict":
# 0 outcome matched `expect`, 1 a safety outcome differed, 3 liveness / objective missed.
# 2 is bad input or an unwritable output: a harness error.
SPLITBRAIN_RAN_CODES = (0, 1, 3)


class Skip(Exception):
    """Raised by an experiment's real or model function when it cannot be measured here."""


class HarnessError(Exception):
    """Something in the suite itself went wrong (not a disagreement between real and model)."""


@dataclass
class Band:
    """Tolerance of a verdict: slack = abs + rel * median(real), in the experiment's unit.

    PASS when every model value lies within [real_min - slack, real_max + slack]. Counts use
    `abs` only.

    `paired_period` replaces the interval check by a per-trial one, for a quantity that a
    periodic check on each side reports on its next tick, with a race between the tick and the
    moment the condition falls (clientv3's 1 s deadline loop, etcd's 500 ms lessor sweep).
    Model run k is then the real trial k's twin (same fault phase, same loop phase), and its
    value must lie within `abs` of the real value, or of the real value up to `paired_periods`
    periods earlier or later: which side of the race a trial lands on is a millisecond's luck on
    either side, when the condition falls is the model's to get right. Further off fails.

    `positive_where_real` (with `paired_period`) makes a safety row of it: wherever real trial
    k is positive (two holders at once), the model's twin must be positive too. The model may
    overlap where the real race went the other way, never call safe what the real system showed
    unsafe.

    `window` replaces the comparison with the real values by a fixed interval, for a quantity
    that a periodic check reports at a phase neither side controls: the fault lands at an
    offset the harness does not align with the check's loop, so real and model each see any
    value within one period (ZooKeeper's once-per-tick quorum check). Every model value must lie
    in it; the row's `expect` holds the real values to the same interval.

    `twins` compares model run k with real trial k alone, within `abs`, for a model run
    chosen as the real trial's twin in what the real side draws and measures (where a client
    connected): the spread of the other trials says nothing about it.

    `real_above` is one-sided: the real measurement holds up to this much that the model's
    does not, for a documented reason on the real side only (the harness's own client waiting
    out its request timeout), so a model value may lie that much further below the real range,
    never above it.
    """

    abs: float
    rel: float = 0.0
    paired_period: Optional[float] = None
    paired_periods: int = 1
    positive_where_real: bool = False
    window: Optional[tuple[float, float]] = None
    real_above: float = 0.0
    twins: bool = False

    def __post_init__(self) -> None:
        if self.positive_where_real and self.paired_period is None:
            raise ValueError("positive_where_real compares twins: it needs paired_period")
        if self.real_above and (self.paired_period is not None or self.window is not None
                                or self.twins):
            raise ValueError("real_above widens the interval check only")
        if self.twins and (self.paired_period is not None or self.window is not None):
            raise ValueError("twins is a per-trial check of its own")

    def slack(self, real_median: float) -> float:
        return self.abs + self.rel * abs(real_median)

    def describe(self, unit: str) -> str:
        unit = "" if unit == "count" else unit
        if self.window is not None:
            return f"within [{self.window[0]:g}, {self.window[1]:g}]{unit}"
        text = f"±({self.abs:g}{unit}+{self.rel:.0%})" if self.rel else f"±{self.abs:g}{unit}"
        if self.real_above:
            text += f", real up to {self.real_above:g}{unit} above"
        if self.twins:
            text += " per trial"
        if self.paired_period is not None:
            shift = self.paired_periods * self.paired_period
            text += f" per trial, mod {self.paired_period:g}{unit} up to ±{shift:g}{unit}"
        if self.positive_where_real:
            text += ", > 0 where real > 0"
        return text

    def twin_ok(self, model: float, real: float, slack: float) -> bool:
        """Whether model run k agrees with its real twin k (a `paired_period` band)."""
        return not self.sign_broken(model, real) and self.off_period(model, real) <= slack

    def sign_broken(self, model: float, real: float) -> bool:
        """A `positive_where_real` row's twin that is not positive where the real trial is."""
        return self.positive_where_real and real > 0 and not model > 0

    def off_period(self, model: float, real: float) -> float:
        """How far `model` is from `real` plus a whole number of periods, at most
        `paired_periods` either way (inf when it is nearer to a further one: races cannot
        explain it)."""
        p = self.paired_period
        if abs(model - real) > (self.paired_periods + 0.5) * p:
            return math.inf
        d = (model - real) % p
        return min(d, p - d)


class SharedTrials:
    """Real trial k of one fault, run once and shared by every row that reads a value of it
    (the k-th call of each row's `real` reads trial k): one fault trial gives several rows."""

    def __init__(self, run_trial: Callable[[], object]) -> None:
        self.run_trial = run_trial
        self.done: dict[int, object] = {}

    def row(self, value: Callable[[object], float]) -> Callable[[], float]:
        """A row's `real`: its k-th call returns `value` of trial k."""
        runs = [0]

        def real() -> float:
            runs[0] += 1
            k = runs[0]
            if k not in self.done:
                self.done[k] = self.run_trial()
            return value(self.done[k])
        return real


class ModelTrials:
    """Model trial `seed` of one fault, run once by `run_trial(seed)` and shared by every row
    that reads a value of it (the model-side twin of `SharedTrials`)."""

    def __init__(self, run_trial: Callable[[int], object]) -> None:
        self.run_trial = run_trial
        self.done: dict[int, object] = {}

    def row(self, value: Callable[[object], float]) -> Callable[[int], float]:
        """A row's `model`: `value` of model trial `seed`."""
        def model(seed: int) -> float:
            if seed not in self.done:
                self.done[seed] = self.run_trial(seed)
            return value(self.done[seed])
        return model


def service_leader_at(trace: list[dict], t_ns: float) -> int:
    """The process leading a clustered service at `t_ns` in a trace: the last
    `service_leads` before it not followed by the same process's `service_follows`."""
    leader = None
    for e in trace:
        if e["t"] > t_ns:
            break
        if e["ev"] == "service_leads":
            leader = e["node"]
        elif e["ev"] == "service_follows" and e["node"] == leader:
            leader = None
    if leader is None:
        raise HarnessError(f"the model's service had no leader at {t_ns} ns")
    return leader


def first_claim(trace: list[dict], members: int, after_ns: float = -1,
                exclude: Optional[int] = None) -> tuple[float, Optional[int]]:
    """(time, member) of the first trace event after `after_ns` at an election member (ids
    below `members`) other than `exclude` that leads; (inf, None) if none."""
    for e in trace:
        node = e["node"]
        if (e["t"] > after_ns and node is not None and node < members and node != exclude
                and e["leader"]):
            return e["t"], node
    return math.inf, None


# Expectations of a real-only row (`Experiment.expect`): "" when the real values agree with
# the documented behaviour, else why not.


def all_zero(what: str) -> Callable[[list], str]:
    """`what` happened in no trial."""
    return lambda vs: "" if all(v == 0 for v in vs) else f"{what} in no trial, got {vs}"


def all_one(what: str) -> Callable[[list], str]:
    """`what` happened in every trial."""
    return lambda vs: "" if all(v == 1 for v in vs) else f"{what} in every trial, got {vs}"


def all_within(lo: float, hi: float, what: str) -> Callable[[list], str]:
    """Every trial's value within [lo, hi] seconds."""
    return lambda vs: ("" if all(lo <= v <= hi for v in vs)
                       else f"{what} within [{lo:g}, {hi:g}] s, got {[round(v, 2) for v in vs]}")


@dataclass
class Experiment:
    name: str
    system: str  # "etcd" or "zookeeper"
    unit: str  # "s", "ms" or "count"
    real: Callable[[], float]  # one trial against the real server, returns the measured value
    # One simulated trial for a seed, returns the same quantity. None for a row measured on
    # the real side only (no model of it yet): its verdict is REAL, or FAIL when `expect`
    # objects.
    model: Optional[Callable[[int], float]]
    band: Optional[Band]
    runs: int = 3
    note: str = ""
    # A disagreement the project knows and has not fixed yet, with where it is tracked. The
    # row still runs and shows its numbers; a FAIL then reads KNOWN and does not fail the
    # suite, and a PASS reads FIXED, which does (remove the mark once the model agrees).
    known_difference: str = ""
    # A real-only row's check of the documented real behaviour (e.g. "the session survives a
    # leader kill"): given the real values, "" when they agree, else why not (verdict FAIL),
    # so that a broken harness or a changed server does not pass unnoticed.
    expect: Optional[Callable[[list], str]] = None
    # With `known_difference`: which trials (k = 1..runs) the known difference concerns, for a
    # difference that shows only in some trials (a real draw the model does not make the same
    # way, read from real trial k). The row then reads KNOWN when every model value off the
    # band belongs to such a trial, FAIL when one belongs to another, and PASS (not FIXED)
    # when none is off: whether the difference shows is the draw's, not the model's.
    known_where: Optional[Callable[[int], bool]] = None


@dataclass
class Spread:
    values: list
    min: float
    median: float
    max: float

    @staticmethod
    def of(values: Sequence[float]) -> "Spread":
        vals = [float(v) for v in values]
        return Spread(vals, min(vals), statistics.median(vals), max(vals))


def verdict(real: Spread, model: Spread, band: Band) -> tuple[str, float, float, float]:
    """PASS/FAIL and the interval [lo, hi] the model values had to lie in, and the slack."""
    lo, hi, slack = interval(real, band)
    ok = not off_band(real, model, band)
    return ("PASS" if ok else "FAIL"), lo, hi, slack


def interval(real: Spread, band: Band) -> tuple[float, float, float]:
    """The interval [lo, hi] the model values must lie in (a `paired_period` band checks each
    twin instead), and the slack."""
    if band.window is not None:
        return band.window[0], band.window[1], 0.0
    slack = band.slack(real.median)
    return real.min - slack - band.real_above, real.max + slack, slack


def off_band(real: Spread, model: Spread, band: Band) -> list[int]:
    """The trials k (1-based) whose model value the band does not accept."""
    lo, hi, slack = interval(real, band)
    if band.twins:
        return [k for k, (m, r) in enumerate(zip(model.values, real.values), 1)
                if not abs(m - r) <= slack]
    if band.paired_period is None or band.window is not None:
        return [k for k, v in enumerate(model.values, 1) if not lo <= v <= hi]
    return [k for k, (m, r) in enumerate(zip(model.values, real.values), 1)
            if not band.twin_ok(m, r, slack)]


# ---------------------------------------------------------------------------------------
# Process registry


_REGISTRY: list["Proc"] = []
_REGISTRY_LOCK = threading.RLock()  # re-entrant: the signal handler may interrupt a holder
_TEMP_DIRS: list[Path] = []


class Proc:
    """A subprocess started with its output to a log file, recorded for cleanup by PID.

    stdout goes to the log unless `pipe_stdout` is set (then `.stdout` is a text pipe the
    caller reads line by line); stderr always goes to the log. `pipe_stdin` keeps a text pipe
    open as `.stdin` (for interactive clients that exit at end of input). The child gets its own
    session so a Ctrl-C in the terminal reaches only the suite, which then stops it.
    """

    def __init__(self, name: str, argv: Sequence[str], log_path: Path,
                 env: Optional[dict] = None, cwd: Optional[Path] = None,
                 pipe_stdout: bool = False, pipe_stdin: bool = False):
        self.name = name
        self.argv = list(argv)
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        self.popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE if pipe_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE if pipe_stdout else self._log,
            stderr=self._log,
            env=env,
            cwd=str(cwd) if cwd else None,
            start_new_session=True,
            text=(pipe_stdout or pipe_stdin) or None,
            bufsize=1 if (pipe_stdout or pipe_stdin) else -1,
        )
        self.pid = self.popen.pid
        self.stdout = self.popen.stdout
        self.stdin = self.popen.stdin
        with _REGISTRY_LOCK:
            _REGISTRY.append(self)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def _signal(self, sig: int) -> None:
        if self.alive():
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def pause(self) -> None:
        """SIGSTOP: the process stops running (a GC pause); its sockets stay open."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def kill9(self) -> None:
        """SIGKILL: a crash; the kernel closes its sockets (the peer sees a reset/FIN)."""
        self._signal(signal.SIGKILL)
        self._reap(5.0)

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `grace_s`; always reaps and unregisters."""
        if self.alive():
            self._signal(signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            self._signal(signal.SIGTERM)
            if not self._reap(grace_s):
                self._signal(signal.SIGKILL)
                self._reap(5.0)
        self._close()

    def _reap(self, timeout_s: float) -> bool:
        try:
            self.popen.wait(timeout=timeout_s)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _close(self) -> None:
        with _REGISTRY_LOCK:
            if self in _REGISTRY:
                _REGISTRY.remove(self)
        for f in (self.popen.stdin, self.popen.stdout, self._log):
            try:
                if f:
                    f.close()
            except OSError:
                pass

    def __repr__(self) -> str:
        return f"Proc({self.name}, pid={self.pid})"


def stop_all() -> None:
    """Stop every process the suite started, newest first, by PID."""
    with _REGISTRY_LOCK:
        procs = list(reversed(_REGISTRY))
    for p in procs:
        try:
            p.stop(grace_s=3.0)
        except Exception as exc:  # keep stopping the others
            print(f"cleanup: could not stop {p}: {exc}", file=sys.stderr)


def running() -> list[Proc]:
    with _REGISTRY_LOCK:
        return [p for p in _REGISTRY if p.alive()]


def make_temp_dir(prefix: str) -> Path:
    """A temp dir removed at exit (kept when CONFORMANCE_KEEP=1, for reading logs)."""
    d = Path(tempfile.mkdtemp(prefix=f"conformance-{prefix}-"))
    _TEMP_DIRS.append(d)
    return d


def _scratch_dir(prefix: str) -> Path:
    """A temp dir the caller removes when done; also removed at exit if it is interrupted."""
    d = Path(tempfile.mkdtemp(prefix=f"conformance-{prefix}-"))
    _TEMP_DIRS.append(d)
    return d


def _remove_temp_dirs() -> None:
    if os.environ.get("CONFORMANCE_KEEP") == "1":
        for d in _TEMP_DIRS:
            if d.exists():
                print(f"kept {d}", file=sys.stderr)
        return
    for d in _TEMP_DIRS:
        shutil.rmtree(d, ignore_errors=True)


_CLEANUP_INSTALLED = False


def install_cleanup() -> None:
    """Stop every registered process at exit and on SIGINT/SIGTERM (then exit 128+sig)."""
    global _CLEANUP_INSTALLED
    if _CLEANUP_INSTALLED:
        return
    _CLEANUP_INSTALLED = True

    def at_exit() -> None:
        stop_all()
        _remove_temp_dirs()

    atexit.register(at_exit)

    def on_signal(signum, _frame):
        # A second signal (run.py --jobs forwards one to a child that its terminal or
        # `timeout` also signalled) must not re-enter stop_all half way: ignore it.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print(f"\ninterrupted by signal {signum}: stopping servers", file=sys.stderr)
        stop_all()
        _remove_temp_dirs()
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


# ---------------------------------------------------------------------------------------
# Small utilities


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    Under `run.py --jobs N`, each system running at the same time as others has its own
    CONFORMANCE_PORT_SLOT=k/n and draws from its own slice of ports (`_slot_port`): a port
    bound and closed here is free until its server binds it, and another process asking
    the kernel for "any port" in between could be handed the same one.
    """
    slot = _port_slot()
    if slot is not None:
        return _slot_port(*slot)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT_SLOT_ENV = "CONFORMANCE_PORT_SLOT"
_PORT_POOL_START = 10000  # slot ports: from here up to the kernel's ephemeral range
_PORT_LOCK = threading.Lock()
_slot_cursor: Optional[int] = None


def _port_slot() -> Optional[tuple[int, int]]:
    """(k, n) from CONFORMANCE_PORT_SLOT=k/n, or None when unset (a serial run)."""
    text = os.environ.get(PORT_SLOT_ENV)
    if not text:
        return None
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise HarnessError(f"{PORT_SLOT_ENV}={text!r}: expected k/n")
    if not 0 <= k < n:
        raise HarnessError(f"{PORT_SLOT_ENV}={text!r}: expected 0 <= k < n")
    return k, n


def _ephemeral_range() -> tuple[int, int]:
    """The kernel's range for bind(port 0) and outgoing connections (inclusive)."""
    try:
        lo, hi = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(lo), int(hi)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def slot_ports(k: int, n: int) -> range:
    """Slot k of n: one n-th of the ports outside the kernel's ephemeral range (10000 up to
    its start, or above its end if that is larger). Slices are disjoint, and no bind(0)
    (`Proxy`) or outgoing connection of any process is handed a port in them.

    Not `port % n == k` over bind(0): since Linux 4.6 bind(0) hands out odd ports only
    (leaving the even ones to connect()), so slot 0 of 2 would never be served."""
    lo, hi = _ephemeral_range()
    start, end = max((_PORT_POOL_START, lo), (hi + 1, 65536), key=lambda r: r[1] - r[0])
    width = (end - start) // n
    if width < 256:
        raise HarnessError(f"ports {start}..{end - 1} are too few for {n} port slots")
    return range(start + k * width, start + (k + 1) * width)


def _slot_port(k: int, n: int) -> int:
    """The next port of slot k of n that binds on 127.0.0.1 now (no SO_REUSEADDR, so a port
    with connections in TIME_WAIT is passed over). The slice is walked from a start drawn
    per process, so one process never hands out the same port twice until it wraps."""
    global _slot_cursor
    ports = slot_ports(k, n)
    with _PORT_LOCK:
        if _slot_cursor is None:
            _slot_cursor = random.Random(os.getpid()).randrange(len(ports))
        for _ in range(len(ports)):
            port = ports[_slot_cursor % len(ports)]
            _slot_cursor += 1
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise HarnessError(f"no free port in slot {k}/{n} ({ports.start}..{ports.stop - 1})")


def wait_until(pred: Callable[[], object], timeout_s: float, poll_s: float = 0.01):
    """Poll `pred` until it returns something truthy (returned); TimeoutError otherwise."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"condition not met within {timeout_s:g}s")
        time.sleep(poll_s)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


# ---------------------------------------------------------------------------------------
# splitbrain


def splitbrain_binary() -> Path:
    env = os.environ.get("SPLITBRAIN")
    path = Path(env) if env else REPO_ROOT / "target" / "release" / "splitbrain"
    if not path.exists():
        raise HarnessError(f"splitbrain binary not found at {path} (cargo build --release)")
    return path


def render_scenario(scenario: Path, **overrides) -> str:
    """The scenario text with each `{{name}}` placeholder replaced by overrides[name].

    A placeholder without an override, or an override without a placeholder, is an error,
    so a typo cannot silently run the default.
    """
    text = Path(scenario).read_text()
    for key, value in overrides.items():
        mark = "{{" + key + "}}"
        if mark not in text:
            raise HarnessError(f"{scenario}: no placeholder {mark} for override {key}")
        text = text.replace(mark, str(value))
    left = sorted(set(_PLACEHOLDER.findall(text)))
    if left:
        raise HarnessError(f"{scenario}: placeholders left without a value: {left}")
    return text


_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def splitbrain_run(scenario: Path, seed: int, extra_args: Sequence[str] = (),
                   **overrides) -> tuple[subprocess.CompletedProcess, Path]:
    """Run `splitbrain run` on the (rendered) scenario; returns the process and a work dir."""
    scenario = Path(scenario).resolve()
    work = _scratch_dir("sb")
    src = scenario
    if overrides or _PLACEHOLDER.search(scenario.read_text()):
        src = work / scenario.name
        src.write_text(render_scenario(scenario, **overrides))
    argv = [str(splitbrain_binary()), "run", str(src), "--seed", str(seed), *extra_args]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT)
    if proc.returncode not in SPLITBRAIN_RAN_CODES:
        shutil.rmtree(work, ignore_errors=True)
        raise HarnessError(f"splitbrain exited {proc.returncode} on {scenario} seed {seed}:\n"
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc, work


def splitbrain_trace(scenario: Path, seed: int, **overrides) -> list[dict]:
    """Run the scenario for `seed` and return its trace events (docs/trace-format.md).

    `overrides` fill `{{name}}` placeholders in the scenario text (see render_scenario).
    """
    out_dir = _scratch_dir("tr")
    trace = out_dir / "trace.jsonl"
    try:
        proc, work = splitbrain_run(scenario, seed, ["--trace", str(trace)], **overrides)
        shutil.rmtree(work, ignore_errors=True)
        if not trace.exists():
            raise HarnessError(f"splitbrain wrote no trace for {scenario} seed {seed}:\n"
                               f"{proc.stderr.strip()}")
        with open(trace) as f:
            return [json.loads(line) for line in f if line.strip()]
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def splitbrain_trace_report(scenario: Path, seed: int,
                            **overrides) -> tuple[list[dict], dict]:
    """One run of the scenario for `seed` with `--trace` and `--json`: its trace events and
    its summary (the `--json` object), for a model side that reads both of one run."""
    out_dir = _scratch_dir("tr")
    trace = out_dir / "trace.jsonl"
    try:
        proc, work = splitbrain_run(scenario, seed, ["--trace", str(trace), "--json"],
                                    **overrides)
        shutil.rmtree(work, ignore_errors=True)
        if not trace.exists():
            raise HarnessError(f"splitbrain wrote no trace for {scenario} seed {seed}:\n"
                               f"{proc.stderr.strip()}")
        with open(trace) as f:
            events = [json.loads(line) for line in f if line.strip()]
        try:
            return events, json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            raise HarnessError(f"splitbrain --json output is not JSON: {exc}: "
                               f"{proc.stdout[:300]}")
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def splitbrain_json(scenario: Path, seed: int, **overrides) -> dict:
    """Run the scenario for `seed` with `--json` and return the parsed summary."""
    proc, work = splitbrain_run(scenario, seed, ["--json"], **overrides)
    shutil.rmtree(work, ignore_errors=True)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise HarnessError(f"splitbrain --json output is not JSON: {exc}: {proc.stdout[:300]}")


def seconds(ns: int) -> float:
    return ns / 1e9
