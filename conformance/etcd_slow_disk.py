#!/usr/bin/env python3
"""Measure spurious etcd leader elections caused by a slow disk (real etcd 3.4, not the model).

What it measures
----------------
A 3-member etcd cluster runs on 127.0.0.1 with etcd's default timing stated explicitly
(--heartbeat-interval=100 --election-timeout=1000, pre-vote off as in 3.4). A steady,
open-loop write load (HTTP puts to the v3 gRPC-gateway `/v3/kv/put`, 40/s by default,
round-robin over the client URLs of the members whose disk is not being slowed) keeps the
leader appending to and fdatasync-ing its WAL. Before each trial leadership is moved to the
next member (`etcdctl move-leader`): raft draws a member's randomized election timeout
(10..19 ticks) once per term, so a new term makes the trials independent. For each trial
the disk of one member (the current LEADER, or with --target follower a FOLLOWER) is made
slow for a window of W seconds by attaching

    strace -f -qq -o /dev/null -e trace=fdatasync -e inject=fdatasync:delay_enter=<D us> -p PID

which holds every fdatasync(2) of that etcd process for D before it runs (etcd 3.4 on Linux
syncs its WAL and its bbolt backend with fdatasync; the script checks this first by running
`strace -f -c` on the loaded leader for --probe-syscalls seconds, 4 by default, 0 skips it). strace is then
detached (SIGTERM to the strace PID; etcd keeps running). During the window and A seconds
after, it counts leader changes three ways:

* `etcd_server_leader_changes_seen_total` deltas (max over members);
* a poller that asks every member for `/v3/maintenance/status` every 100 ms and counts changes
  of the leader each member reports (max over members);
* the raft term before and after (an election always bumps the term);

and it greps the member logs (zap JSON) for "failed to send out heartbeat on time" (the slowed
leader's warning), "slow fdatasync" (WAL sync > 1 s) and "elected leader" lines in the other
members' logs. The mean WAL fdatasync duration the slowed member itself measured
(`etcd_disk_wal_fsync_duration_seconds` _sum/_count delta) shows the injection took effect.

D = "none" is a control without strace; D = 0 is a control with strace attached and a 0 us
delay (strace stops the tracee at every syscall, so this measures the tracer's overhead).

How to run
----------
    python3 conformance/etcd_slow_disk.py                 # full run: 52 trials, about 17 min
    python3 conformance/etcd_slow_disk.py --quick         # leader none,0,900,2000 + follower
                                                          # 2000, R=1: about 2 min
    python3 conformance/etcd_slow_disk.py --delays none,0,1200 --trials 3 --target both

It prints a Markdown table and writes it (with the reproduce command, flags, achieved write
rate and caveats) to /tmp/etcd-slow-disk-results.md, and raw per-trial data to
/tmp/etcd-slow-disk-results.json. Ports 23790.. (client = base + 2i, peer = base + 2i + 1)
and data dirs under /tmp/etcd-slow-disk-*/ are used. Every process it starts (etcd, strace) is
stopped by PID. Python 3.11 standard library only; needs etcd/etcdctl 3.4 and strace, and
permission to ptrace the etcd processes (root, or ptrace_scope 0).
"""

from __future__ import annotations

import argparse
import atexit
import base64
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

ETCD_BIN = os.environ.get("ETCD", shutil.which("etcd") or "/usr/bin/etcd")
ETCDCTL_BIN = os.environ.get("ETCDCTL", shutil.which("etcdctl") or "/usr/bin/etcdctl")
STRACE_BIN = os.environ.get("STRACE", shutil.which("strace") or "/usr/bin/strace")
HEARTBEAT_MS = 100
ELECTION_MS = 1000
N_MEMBERS = 3

HEARTBEAT_WARN = "failed to send out heartbeat on time"
SLOW_FSYNC = "slow fdatasync"
ELECTED = "elected leader"
CAMPAIGN = "is starting a new election"

_STARTED: list[subprocess.Popen] = []  # every child we start, for cleanup by PID


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def stop_pid(p: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM one child by PID, then SIGKILL after `grace_s`; reap it."""
    if p.poll() is None:
        try:
            os.kill(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(grace_s)
        except subprocess.TimeoutExpired:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(5)
    if p in _STARTED:
        _STARTED.remove(p)


def _cleanup() -> None:
    # strace first (detaches from etcd), then etcd.
    for p in sorted(list(_STARTED), key=lambda p: 0 if "strace" in str(p.args[0]) else 1):
        stop_pid(p)


atexit.register(_cleanup)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def http_json(url: str, body: Optional[dict] = None, timeout: float = 1.0) -> dict:
    data = json.dumps(body if body is not None else {}).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def http_text(url: str, timeout: float = 2.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def metric(text: str, name: str) -> float:
    """Sum of all series of one Prometheus metric in a /metrics dump."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


# ----------------------------------------------------------------------------- cluster

@dataclass
class Member:
    idx: int
    client_port: int
    peer_port: int
    data_dir: Path
    log_path: Path
    proc: Optional[subprocess.Popen] = None
    member_id: str = ""  # decimal, as the JSON gateway reports it

    @property
    def name(self) -> str:
        return f"m{self.idx}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    def status(self, timeout: float = 0.5) -> dict:
        return http_json(self.url + "/v3/maintenance/status", timeout=timeout)

    def metrics(self) -> str:
        return http_text(self.url + "/metrics")

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")


class Cluster:
    def __init__(self, base_port: int, root: Path) -> None:
        self.root = root
        self.members = [
            Member(i, base_port + 2 * i, base_port + 2 * i + 1,
                   root / f"m{i}", root / f"m{i}.log")
            for i in range(N_MEMBERS)
        ]
        self.starts = 0

    def flags(self, m: Member) -> list[str]:
        ic = ",".join(f"{x.name}=http://127.0.0.1:{x.peer_port}" for x in self.members)
        return [
            "--name", m.name, "--data-dir", str(m.data_dir),
            "--listen-client-urls", m.url, "--advertise-client-urls", m.url,
            "--listen-peer-urls", f"http://127.0.0.1:{m.peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{m.peer_port}",
            "--initial-cluster", ic, "--initial-cluster-state", "new",
            "--initial-cluster-token", f"slow-disk-{os.getpid()}",
            f"--heartbeat-interval={HEARTBEAT_MS}", f"--election-timeout={ELECTION_MS}",
            "--logger=zap", "--log-outputs=stderr",
        ]

    def start(self) -> None:
        self.starts += 1
        for m in self.members:
            shutil.rmtree(m.data_dir, ignore_errors=True)
            logf = open(m.log_path, "ab")
            m.proc = subprocess.Popen([ETCD_BIN, *self.flags(m)], stdin=subprocess.DEVNULL,
                                      stdout=logf, stderr=logf, start_new_session=True)
            logf.close()
            _STARTED.append(m.proc)
        log(f"started etcd cluster #{self.starts}: PIDs "
            + ", ".join(f"{m.name}={m.proc.pid}" for m in self.members))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                for m in self.members:
                    m.member_id = m.status()["header"]["member_id"]
                if self.leader() is not None:
                    return
            except (OSError, KeyError, ValueError):
                pass
            for m in self.members:
                if m.proc.poll() is not None:
                    raise RuntimeError(f"{m.name} exited; see {m.log_path}")
            time.sleep(0.2)
        raise RuntimeError("cluster did not elect a leader in 30 s")

    def stop(self) -> None:
        for m in self.members:
            if m.proc is not None:
                stop_pid(m.proc)
                m.proc = None

    def by_id(self, member_id: str) -> Optional[Member]:
        return next((m for m in self.members if m.member_id == member_id), None)

    def leader(self) -> Optional[Member]:
        """The leader all members agree on (same leader id and term), else None."""
        views = set()
        for m in self.members:
            try:
                s = m.status()
                views.add((s.get("leader", "0"), s.get("raftTerm", "0")))
            except (OSError, ValueError):
                return None
        if len(views) != 1:
            return None
        lid, _ = views.pop()
        return self.by_id(lid) if lid != "0" else None


# ----------------------------------------------------------------------------- load + poll

class Background:
    """Daemon threads in `self.threads` that run until `self.stop_ev` is set."""

    threads: list[threading.Thread]
    stop_ev: threading.Event

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _stop_threads(self, join_s: float) -> None:
        self.stop_ev.set()
        for t in self.threads:
            t.join(join_s)


class Writer(Background):
    """Open-loop writer: a pacer enqueues one put every 1/rate s; `workers` threads send them
    round-robin to the members whose disk is not being slowed (a follower forwards the
    proposal to the leader, so the leader's WAL gets every write either way). A tick is
    dropped (counted) when every worker is busy, so the achieved rate is what the cluster
    actually accepted."""

    def __init__(self, cluster: Cluster, rate: float, workers: int, timeout_s: float) -> None:
        self.cluster, self.rate, self.timeout_s = cluster, rate, timeout_s
        self.q: queue.Queue = queue.Queue(maxsize=workers)
        self.lock = threading.Lock()
        self.ok: list[tuple[float, float]] = []  # (completion time, latency)
        self.errors: list[float] = []
        self.dropped: list[float] = []
        self.exclude: Optional[int] = None  # member idx not to send puts to (the slowed one)
        self.stop_ev = threading.Event()
        self.threads = [threading.Thread(target=self._pace, daemon=True)]
        self.threads += [threading.Thread(target=self._work, args=(i,), daemon=True)
                         for i in range(workers)]

    def stop(self) -> None:
        self._stop_threads(self.timeout_s + 1)

    def _pace(self) -> None:
        period, n, t0 = 1.0 / self.rate, 0, time.monotonic()
        while not self.stop_ev.is_set():
            n += 1
            try:
                self.q.put_nowait(n)
            except queue.Full:
                with self.lock:
                    self.dropped.append(time.monotonic())
            delay = t0 + n * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def _work(self, wi: int) -> None:
        key = base64.b64encode(f"slow-disk/w{wi}".encode()).decode()
        while not self.stop_ev.is_set():
            try:
                n = self.q.get(timeout=0.2)
            except queue.Empty:
                continue
            targets = [m for m in self.cluster.members if m.idx != self.exclude]
            m = targets[n % len(targets)]
            val = base64.b64encode(f"v{n}".encode()).decode()
            t = time.monotonic()
            try:
                http_json(m.url + "/v3/kv/put", {"key": key, "value": val},
                          timeout=self.timeout_s)
                with self.lock:
                    self.ok.append((time.monotonic(), time.monotonic() - t))
            except (OSError, ValueError):
                with self.lock:
                    self.errors.append(time.monotonic())

    def stats(self, t0: float, t1: float) -> dict:
        with self.lock:
            oks = [lat for t, lat in self.ok if t0 <= t < t1]
            errs = sum(1 for t in self.errors if t0 <= t < t1)
            drops = sum(1 for t in self.dropped if t0 <= t < t1)
        dur = max(t1 - t0, 1e-9)
        return {"writes_per_s": len(oks) / dur, "errors": errs, "dropped": drops,
                "max_latency_s": max(oks, default=0.0),
                "mean_latency_s": sum(oks) / len(oks) if oks else 0.0}


class Poller(Background):
    """Every `period_s`, each member's own view (leader id, raft term) via /v3/maintenance/status."""

    def __init__(self, cluster: Cluster, period_s: float = 0.1) -> None:
        self.cluster, self.period_s = cluster, period_s
        self.lock = threading.Lock()
        self.samples: list[tuple[float, int, str, int]] = []  # (t, member idx, leader, term)
        self.stop_ev = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(m,), daemon=True)
                        for m in cluster.members]

    def stop(self) -> None:
        self._stop_threads(2)

    def _run(self, m: Member) -> None:
        nxt = time.monotonic()
        while not self.stop_ev.is_set():
            try:
                s = m.status(timeout=0.3)
                sample = (time.monotonic(), m.idx, s.get("leader", "0"), int(s.get("raftTerm", 0)))
                with self.lock:
                    self.samples.append(sample)
            except (OSError, ValueError):
                pass
            nxt += self.period_s
            time.sleep(max(0.0, nxt - time.monotonic()))

    def leader_changes(self, t0: float, t1: float) -> int:
        """Max over members of the number of times the (non-zero) leader it reports changed."""
        with self.lock:
            samples = [s for s in self.samples if t0 <= s[0] < t1]
        best = 0
        for idx in range(N_MEMBERS):
            seq = [lid for _, i, lid, _ in samples if i == idx and lid != "0"]
            best = max(best, sum(1 for a, b in zip(seq, seq[1:]) if a != b))
        return best

    def first_change(self, t0: float, t1: float, leader_id: str) -> Optional[float]:
        """Seconds from t0 until some member first reported a leader other than `leader_id`
        (a new leader, or none: it has lost its leader)."""
        with self.lock:
            ts = [t for t, _, lid, _ in self.samples if t0 <= t < t1 and lid != leader_id]
        return min(ts) - t0 if ts else None

    def quiet_since(self, t: float) -> bool:
        """All members reported the same leader and term in every sample since t (and each
        member answered at least once)."""
        with self.lock:
            samples = [s for s in self.samples if s[0] >= t]
        views = {(lid, term) for _, _, lid, term in samples}
        seen = {i for _, i, _, _ in samples}
        return len(views) == 1 and next(iter(views))[0] != "0" and len(seen) == N_MEMBERS


# ----------------------------------------------------------------------------- strace

def start_strace(pid: int, delay_us: int, out: Path) -> subprocess.Popen:
    argv = [STRACE_BIN, "-f", "-qq", "-o", "/dev/null", "-e", "trace=fdatasync",
            "-e", f"inject=fdatasync:delay_enter={delay_us}", "-p", str(pid)]
    errf = open(out, "ab")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=errf, stderr=errf,
                         start_new_session=True)
    errf.close()
    _STARTED.append(p)
    # Attached once the tracee's TracerPid is strace's PID.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            if re.search(rf"^TracerPid:\s+{p.pid}$", status, re.M):
                return p
        except OSError:
            pass
        if p.poll() is not None:
            break
        time.sleep(0.02)
    stop_pid(p)
    raise RuntimeError(f"strace did not attach to {pid}: see {out}")


def probe_syscalls(pid: int, seconds: float, out: Path) -> str:
    """`strace -f -c -p PID` for a few seconds; the sync-family lines of its summary."""
    p = subprocess.Popen([STRACE_BIN, "-f", "-c", "-o", str(out), "-p", str(pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    _STARTED.append(p)
    time.sleep(seconds)
    os.kill(p.pid, signal.SIGINT)  # strace prints its summary on SIGINT
    try:
        p.wait(10)
    finally:
        stop_pid(p)
    text = out.read_text(errors="replace")
    rows = [l for l in text.splitlines() if re.search(r"\b(f(data)?sync|sync_file_range|syncfs|msync)\b", l)]
    return "\n".join(rows) if rows else "(no sync syscalls seen)\n" + text


# ----------------------------------------------------------------------------- trial

def go_ms(d: str) -> float:
    """A Go time.Duration string ("1.2s", "15.0ms", "1m2.5s", "900us") in milliseconds."""
    unit = {"h": 3.6e6, "m": 6e4, "s": 1e3, "ms": 1.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}
    return sum(float(v) * unit[u] for v, u in re.findall(r"([\d.]+)(h|ms|us|µs|ns|m|s)", d))


@dataclass
class Trial:
    target: str
    delay: str  # "none" or ms
    n: int
    slowed: str = ""
    leader_before: str = ""
    leader_after: str = ""
    same_leader_after: bool = False  # the leader before the trial is the leader after it
    term_before: int = 0
    term_after: int = 0
    metric_changes: int = 0
    poll_changes: int = 0
    heartbeat_warnings: int = 0
    slow_fdatasync_warnings: int = 0
    elected_lines_others: int = 0
    campaigns: int = 0  # "is starting a new election" lines, all members
    wal_fsyncs: int = 0
    wal_fsync_mean_ms: float = 0.0
    detach_s: float = 0.0
    fresh_term: bool = False
    first_change_s: Optional[float] = None
    max_hb_exceeded_ms: float = 0.0
    max_slow_fdatasync_ms: float = 0.0
    wal_fsyncs_over_1s: int = 0
    writes_before: dict = field(default_factory=dict)
    writes_window: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.metric_changes > 0 or self.poll_changes > 0 or self.term_after > self.term_before


def move_leader(cluster: Cluster, leader: Member, to: Member) -> bool:
    """`etcdctl move-leader`: a new term in which every member draws a fresh randomized
    election timeout (raft keeps it for the whole term), so trials are independent."""
    p = subprocess.Popen([ETCDCTL_BIN, "--endpoints", leader.url, "--dial-timeout", "2s",
                          "--command-timeout", "5s", "move-leader", format(int(to.member_id), "x")],
                         env=dict(os.environ, ETCDCTL_API="3"), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    _STARTED.append(p)
    try:
        out, _ = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        out = b"timeout"
    stop_pid(p)
    if p.returncode != 0:
        log(f"move-leader {leader.name} -> {to.name} failed: {out.decode(errors='replace').strip()}")
    return p.returncode == 0


def wait_stable(cluster: Cluster, poller: Poller, quiet_s: float, timeout_s: float = 40) -> Member:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if poller.quiet_since(time.monotonic() - quiet_s):
            ldr = cluster.leader()
            if ldr is not None:
                return ldr
    raise RuntimeError("no stable leader")


def run_trial(cluster: Cluster, poller: Poller, writer: Writer, target: str, delay: str,
              n: int, window_s: float, after_s: float, work: Path) -> Trial:
    tr = Trial(target, delay, n)
    leader = wait_stable(cluster, poller, quiet_s=1.0)
    nxt = cluster.members[(leader.idx + 1) % N_MEMBERS]
    tr.fresh_term = move_leader(cluster, leader, nxt)
    leader = wait_stable(cluster, poller, quiet_s=3.0)
    victim = leader if target == "leader" else next(m for m in cluster.members if m is not leader)
    tr.slowed, tr.leader_before = victim.name, leader.name
    writer.exclude = victim.idx
    t_pre = time.monotonic()
    tr.writes_before = writer.stats(t_pre - 3.0, t_pre)
    before = {m.idx: m.metrics() for m in cluster.members}
    offsets = {m.idx: m.log_size() for m in cluster.members}
    tr.term_before = max(int(m.status()["raftTerm"]) for m in cluster.members)

    strace = None
    if delay != "none":
        strace = start_strace(victim.proc.pid, int(float(delay) * 1000),
                              work / f"strace-{target}-{delay}-{n}.log")
    t0 = time.monotonic()
    time.sleep(window_s)
    # WAL fsync stats of the window, read before detaching: after the detach the backlog of
    # queued puts is flushed by a burst of fast fsyncs that would dilute the mean.
    at_end = victim.metrics()
    t1 = time.monotonic()
    if strace is not None:
        stop_pid(strace)
    tr.detach_s = time.monotonic() - t1
    tr.writes_window = writer.stats(t0, t1)
    time.sleep(after_s)
    t2 = time.monotonic()
    writer.exclude = None

    after = {m.idx: m.metrics() for m in cluster.members}
    tr.term_after = max(int(m.status()["raftTerm"]) for m in cluster.members)
    tr.metric_changes = int(max(
        metric(after[i], "etcd_server_leader_changes_seen_total")
        - metric(before[i], "etcd_server_leader_changes_seen_total") for i in after))
    tr.poll_changes = poller.leader_changes(t0 - 0.05, t2)
    tr.first_change_s = poller.first_change(t0 - 0.05, t2, leader.member_id)
    wal = "etcd_disk_wal_fsync_duration_seconds"
    cnt = metric(at_end, wal + "_count") - metric(before[victim.idx], wal + "_count")
    tot = metric(at_end, wal + "_sum") - metric(before[victim.idx], wal + "_sum")
    le1 = (metric(at_end, wal + '_bucket{le="1.024"}')
           - metric(before[victim.idx], wal + '_bucket{le="1.024"}'))
    tr.wal_fsyncs, tr.wal_fsync_mean_ms = int(cnt), (1000 * tot / cnt if cnt else 0.0)
    tr.wal_fsyncs_over_1s = int(cnt - le1)
    logs = {m.idx: m.log_since(offsets[m.idx]) for m in cluster.members}
    tr.heartbeat_warnings = logs[victim.idx].count(HEARTBEAT_WARN)
    tr.slow_fdatasync_warnings = logs[victim.idx].count(SLOW_FSYNC)
    tr.elected_lines_others = sum(logs[i].count(ELECTED) for i in logs if i != victim.idx)
    tr.campaigns = sum(log_text.count(CAMPAIGN) for log_text in logs.values())
    tr.max_hb_exceeded_ms = max((go_ms(x) for x in re.findall(
        r'"exceeded-duration":"([^"]+)"', logs[victim.idx])), default=0.0)
    tr.max_slow_fdatasync_ms = max((go_ms(x) for x in re.findall(
        r'"msg":"slow fdatasync","took":"([^"]+)"', logs[victim.idx])), default=0.0)
    ldr = cluster.leader()
    if ldr is None:  # mid-election right now; wait a little for agreement
        try:
            ldr = wait_stable(cluster, poller, quiet_s=1.0, timeout_s=15)
        except RuntimeError:
            ldr = None
    tr.leader_after = ldr.name if ldr else "?"
    tr.same_leader_after = ldr is leader
    return tr


# ----------------------------------------------------------------------------- report

def summarize(trials: list[Trial]) -> list[dict]:
    rows = []
    groups: dict[tuple[str, str], list[Trial]] = {}
    for t in trials:
        groups.setdefault((t.target, t.delay), []).append(t)
    for (target, delay), ts in groups.items():
        k = len(ts)
        rows.append({
            "target": target, "delay": delay, "trials": k,
            "changed": sum(t.changed for t in ts),
            "mean_changes": sum(max(t.metric_changes, t.poll_changes) for t in ts) / k,
            "hb_warn": sum(t.heartbeat_warnings > 0 for t in ts),
            "mean_term_inc": sum(t.term_after - t.term_before for t in ts) / k,
            "still_leader": sum(t.same_leader_after for t in ts),
            "fsync_ms": sum(t.wal_fsync_mean_ms for t in ts) / k,
            "max_fsync_ms": max(t.max_slow_fdatasync_ms for t in ts),
            "max_hb_ms": max(t.max_hb_exceeded_ms for t in ts),
            "first_change": [round(t.first_change_s, 2) for t in ts if t.first_change_s is not None],
            "slow_fsync": sum(t.slow_fdatasync_warnings for t in ts) / k,
            "w_before": sum(t.writes_before.get("writes_per_s", 0) for t in ts) / k,
            "w_window": sum(t.writes_window.get("writes_per_s", 0) for t in ts) / k,
            "w_err": sum(t.writes_window.get("errors", 0) for t in ts) / k,
        })
    return rows


def table(rows: list[dict]) -> str:
    head = ("| slowed | D (ms) | trials | trials w/ leader change | mean leader changes "
            "| 'heartbeat on time' warning (trials) | mean term increase "
            "| original leader still leader after | s to first change (each trial) "
            "| WAL fdatasync in window: mean / max (ms) | max heartbeat lateness (ms) "
            "| writes/s before -> during window |")
    sep = "|" + "---|" * (head.count("|") - 1)
    lines = [head, sep]
    for r in rows:
        lines.append(
            f"| {r['target']} | {r['delay']} | {r['trials']} | {r['changed']} "
            f"| {r['mean_changes']:.2f} | {'yes' if r['hb_warn'] else 'no'} ({r['hb_warn']}/{r['trials']}) "
            f"| {r['mean_term_inc']:.2f} | {r['still_leader']}/{r['trials']} "
            f"| {', '.join(f'{x:g}' for x in r['first_change']) or '-'} "
            f"| {r['fsync_ms']:.1f} / {r['max_fsync_ms']:.0f} "
            f"| {r['max_hb_ms']:.0f} | {r['w_before']:.1f} -> {r['w_window']:.1f} |")
    return "\n".join(lines)


def threshold(rows: list[dict], target: str) -> str:
    numeric = sorted((float(r["delay"]), r) for r in rows
                     if r["target"] == target and r["delay"] != "none")
    for d, r in numeric:
        if r["changed"]:
            return f"{d:g} ms ({r['changed']}/{r['trials']} trials)"
    return "none observed up to " + (f"{numeric[-1][0]:g} ms" if numeric else "?")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delays", default="none,0,200,500,700,900,1000,1100,1200,1500,2000,3000",
                    help="comma-separated per-fdatasync delays in ms ('none' = no strace)")
    ap.add_argument("--trials", "-R", type=int, default=4)
    ap.add_argument("--window", type=float, default=10.0, help="slow-disk window W (s)")
    ap.add_argument("--after", type=float, default=5.0, help="observation after the window (s)")
    ap.add_argument("--rate", type=float, default=40.0, help="target writes/s")
    ap.add_argument("--workers", type=int, default=32, help="concurrent put clients")
    ap.add_argument("--target", choices=["leader", "follower", "both"], default="both")
    ap.add_argument("--follower-delays", default="1200,3000",
                    help="delays (ms) for the follower runs with --target both/follower")
    ap.add_argument("--follower-trials", type=int, default=2)
    ap.add_argument("--base-port", type=int, default=23790)
    ap.add_argument("--out", default="/tmp/etcd-slow-disk-results.md")
    ap.add_argument("--probe-syscalls", type=float, default=4.0,
                    help="seconds of `strace -f -c` on the leader first (0 = skip)")
    ap.add_argument("--quick", action="store_true",
                    help="delays none,0,900,2000, R=1, follower 2000 only")
    ap.add_argument("--keep-data", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.delays, args.trials = "none,0,900,2000", 1
        args.follower_delays, args.follower_trials = "2000", 1

    plan: list[tuple[str, str, int]] = []
    if args.target in ("leader", "both"):
        for n in range(args.trials):  # interleave delays across repetitions
            plan += [("leader", d.strip(), n) for d in args.delays.split(",")]
    if args.target in ("follower", "both"):
        ftrials = args.trials if args.target == "follower" else args.follower_trials
        fdelays = args.delays if args.target == "follower" else args.follower_delays
        for n in range(ftrials):
            plan += [("follower", d.strip(), n) for d in fdelays.split(",")]

    work = Path(tempfile.mkdtemp(prefix="etcd-slow-disk-", dir="/tmp"))
    log(f"work dir {work}; {len(plan)} trials of {args.window:g}+{args.after:g} s")
    cluster = Cluster(args.base_port, work)
    t_start = time.monotonic()
    trials: list[Trial] = []
    syscall_summary = ""
    poller = writer = None
    try:
        cluster.start()
        poller = Poller(cluster)
        poller.start()
        writer = Writer(cluster, args.rate, args.workers, timeout_s=10.0)
        writer.start()
        leader = wait_stable(cluster, poller, quiet_s=2.0)
        if args.probe_syscalls > 0:
            syscall_summary = probe_syscalls(leader.proc.pid, args.probe_syscalls,
                                             work / "strace-c.txt")
            log("sync syscalls of the leader under load (strace -f -c):\n" + syscall_summary)
        for i, (target, delay, n) in enumerate(plan):
            try:
                tr = run_trial(cluster, poller, writer, target, delay, n,
                               args.window, args.after, work)
            except RuntimeError as e:  # no stable leader: restart the cluster, skip the trial
                log(f"trial {target} D={delay} #{n}: {e}; restarting the cluster")
                poller.stop(); writer.stop(); cluster.stop()
                cluster.start()
                poller = Poller(cluster); poller.start()
                writer = Writer(cluster, args.rate, args.workers, timeout_s=10.0); writer.start()
                continue
            trials.append(tr)
            log(f"[{i + 1}/{len(plan)}] {target} D={delay}ms #{n}: slowed {tr.slowed} "
                f"(leader {tr.leader_before} -> {tr.leader_after}); changes metric="
                f"{tr.metric_changes} poll={tr.poll_changes}; term {tr.term_before}->"
                f"{tr.term_after}; hb-warn={tr.heartbeat_warnings} slow-fsync="
                f"{tr.slow_fdatasync_warnings} elected(others)={tr.elected_lines_others} "
                f"campaigns={tr.campaigns}; "
                f"WAL fsync {tr.wal_fsyncs}x mean {tr.wal_fsync_mean_ms:.1f} ms; writes/s "
                f"{tr.writes_before.get('writes_per_s', 0):.1f}->"
                f"{tr.writes_window.get('writes_per_s', 0):.1f} (err "
                f"{tr.writes_window.get('errors', 0)}, max lat "
                f"{tr.writes_window.get('max_latency_s', 0):.2f}s); detach {tr.detach_s:.2f}s; "
                f"first change {tr.first_change_s}; max fsync {tr.max_slow_fdatasync_ms:.0f} ms "
                f"(>1s: {tr.wal_fsyncs_over_1s}); max hb late {tr.max_hb_exceeded_ms:.0f} ms; "
                f"fresh term {tr.fresh_term}")
    finally:
        if writer is not None:
            writer.stop()
        if poller is not None:
            poller.stop()
        cluster.stop()
        _cleanup()
    elapsed = time.monotonic() - t_start
    if not trials:
        log("no trial completed")
        return 1

    rows = summarize(trials)
    md_table = table(rows)
    print(md_table)
    cmd = "python3 conformance/etcd_slow_disk.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    m0 = cluster.members[0]
    all_before = [t.writes_before.get("writes_per_s", 0) for t in trials]
    report = f"""# etcd {subprocess.run([ETCD_BIN, '--version'], capture_output=True, text=True).stdout.splitlines()[0].split()[-1]}: leader elections under a slow disk (strace fdatasync delay injection)

{md_table}

Observed threshold (smallest per-fdatasync delay with a leader change), leader slowed: **{threshold(rows, 'leader')}**;
follower slowed: **{threshold(rows, 'follower')}**.

* Reproduce: `{cmd.strip()}` (from /work/main; took {elapsed / 60:.1f} min)
* Cluster: 3 members on 127.0.0.1, flags (member m0):
  `etcd {' '.join(shlex.quote(f) for f in cluster.flags(m0))}` (pre-vote off, the 3.4 default; data dirs on {work}).
* Slow disk: `strace -f -qq -o /dev/null -e trace=fdatasync -e inject=fdatasync:delay_enter=<D*1000> -p <etcd pid>` for {args.window:g} s, then SIGTERM to strace; leader changes counted over the window + {args.after:g} s.
  D = none: no strace at all; D = 0: strace attached, 0 us delay (tracer overhead control).
* Sync syscall etcd uses (strace -f -c on the leader under load, {args.probe_syscalls:g} s):
```
{syscall_summary or '(probe skipped)'}
```
* Write load: open-loop target {args.rate:g} puts/s, {args.workers} concurrent HTTP clients, `POST /v3/kv/put` round-robin over the members whose disk is not being slowed (10 s timeout).
  Achieved before each trial: mean {sum(all_before) / max(len(all_before), 1):.1f} writes/s; during the window see the last column
  (puts wait for the slowed leader's raft loop, so with the leader slowed and still leader the rate falls to about
  workers / put latency (latency is about 2 D); the pacer then drops ticks, but {args.workers} puts stay queued, so the leader always has entries to sync).
* Columns: "leader changes" = max over members of the etcd_server_leader_changes_seen_total delta and of the leader changes seen by a 100 ms poller of /v3/maintenance/status;
  "trials w/ leader change" also counts a raft term increase; "heartbeat on time" = the slowed member logged "{HEARTBEAT_WARN}";
  "s to first change" = from strace attach until a member first reported a leader other than the slowed/old one;
  WAL fdatasync mean = the slowed member's etcd_disk_wal_fsync_duration_seconds sum/count from just before attach to just before detach,
  it includes the one normal-speed sync between that snapshot and the attach, so it reads (n-1)/n of D;
  max = the largest "slow fdatasync" took= it logged (only syncs > 1 s are logged; 0 = none);
  heartbeat lateness = largest exceeded-duration (beyond the 200 ms expected) in its "{HEARTBEAT_WARN}" lines.
* Before every trial leadership is moved (`etcdctl move-leader` to the next member) so each trial starts a new term:
  raft draws each member's randomized election timeout (10-19 ticks of 100 ms) once per term, so without
  this, trials in the same term would reuse the same timeouts and not be independent.

## Per trial
| slowed | D | # | member | leader before -> after | changes (metric/poll) | term | campaigns | s to first change | hb warn (max late ms) | slow fdatasync (max ms) | 'elected leader' lines (others) | WAL fsyncs / mean ms / >1 s | writes/s before -> window (errors, max latency) |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(
        f"| {t.target} | {t.delay} | {t.n} | {t.slowed} | {t.leader_before} -> {t.leader_after} "
        f"| {t.metric_changes}/{t.poll_changes} | {t.term_before}->{t.term_after} | {t.campaigns} "
        f"| {'-' if t.first_change_s is None else f'{t.first_change_s:.2f}'} "
        f"| {t.heartbeat_warnings} ({t.max_hb_exceeded_ms:.0f}) "
        f"| {t.slow_fdatasync_warnings} ({t.max_slow_fdatasync_ms:.0f}) | {t.elected_lines_others} "
        f"| {t.wal_fsyncs} / {t.wal_fsync_mean_ms:.1f} / {t.wal_fsyncs_over_1s} "
        f"| {t.writes_before.get('writes_per_s', 0):.1f} -> {t.writes_window.get('writes_per_s', 0):.1f} "
        f"({t.writes_window.get('errors', 0)}, {t.writes_window.get('max_latency_s', 0):.2f}s) |"
        for t in trials) + "\n"
    Path(args.out).write_text(report)
    Path(args.out).with_suffix(".json").write_text(json.dumps(
        {"args": vars(args), "trials": [t.__dict__ for t in trials], "summary": rows}, indent=1))
    log(f"wrote {args.out} and {Path(args.out).with_suffix('.json')}")
    if not args.keep_data:
        for m in cluster.members:
            shutil.rmtree(m.data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
