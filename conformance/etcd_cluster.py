"""A real 3-member etcd cluster on 127.0.0.1, and the experiments of issue 32 on it.

The model side (`_model_trial`) runs conformance/scenarios/etcd-cluster.ron (`Etcd(members: 3,
version: ...)`) twice per seed: without faults, to find the holder's claim and the etcd member
leading then (the trace's `service_leads`), then with the real trial's fault on that member
at the same moment after the claim. Rows the model has no counterpart for (the write outage,
the probe lease) stay REAL (or FAIL where `expect` checks a documented behaviour). Run it by
name:

    conformance/.venv/bin/python conformance/run.py --system etcd-cluster [--runs N]
                                                    [--etcd-binary target/etcd-new/bin/etcd]

The cluster (`EtcdCluster`): three members m0..m2, each with its own client port and data
dir (on /dev/shm when there is one, as etcd_client.EtcdServer), default timing stated
explicitly (--heartbeat-interval 100, --election-timeout 1000), a static --initial-cluster.
Every member listens for peers on its own port but advertises a `Proxy` in front of it, so
that a member can be cut off from its peers: its own proxy holds every connection, and each
other proxy holds the connections the member opened (rafthttp names the sender in the
`X-Server-From` header of every stream and pipeline request). Client traffic goes straight
to the client ports. Every member is a `harness.Proc`, stopped by PID.

The leader is found with the v3 gRPC gateway's `POST /v3/maintenance/status` (what
`etcdctl endpoint status` calls): `header.member_id` and `leader`. A `Watcher` thread polls
every member every 20 ms and records (time, leader, term), so the experiments read when a
member first saw a new leader.

One trial (`_trial`): `etcdctl lock --ttl 5` holder and waiter, each given all three
endpoints (clientv3's balancer fails over); a probe lease (TTL 5 s, never kept alive) with a
key that a thread reads through the surviving members every 20 ms, which places the lease's
expiry; a writer thread putting a key through the surviving members every 20 ms (the
longest time without a success in the 10 s from the fault is the write outage). 1.5 s after
the holder acquired, the fault strikes the leader (or a follower); the trial watches until
the probe's key is gone plus 2 s (and at least 6 s after a SIGCONT / heal), then restores
the cluster (restarts a killed member on its data dir, resumes, heals) before the next.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from etcd_client import Etcdctl
import harness  # noqa: E402
from harness import (SCENARIO_DIR, Band, Experiment, HarnessError, ModelTrials, Proc,
                     SharedTrials, free_port, make_temp_dir, service_leader_at, splitbrain_trace,
                     wait_until)
from proxy import Proxy

N_MEMBERS = 3
HEARTBEAT_MS = 100
ELECTION_MS = 1000
LOCK_TTL_S = 5
PROBE_TTL_S = 5
FAULT_AFTER_S = 1.5  # after the holder acquired
PAUSE_S = 3.0  # SIGSTOP of the leader: three election timeouts
CUT_S = 5.0  # the leader cut off from its peers
SETTLE_S = 4.0  # watched after a resume / heal for leader changes
POLL_S = 0.02
INF = float("inf")


def etcd_binary() -> str:
    """The server binary: run.py's --etcd-binary, else $ETCD, else /usr/bin/etcd."""
    return (os.environ.get("CONFORMANCE_ETCD_CLUSTER_BIN") or os.environ.get("ETCD")
            or shutil.which("etcd") or "/usr/bin/etcd")


def etcd_version(binary: str) -> str:
    """'3.4.23' from `etcd --version`."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    m = re.search(r"etcd Version: (\S+)", out.stdout)
    if not m:
        raise HarnessError(f"{binary} --version: {out.stdout.strip() or out.stderr.strip()}")
    return m.group(1)


def _post(url: str, body: dict, timeout_s: float) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout_s) as r:
        return json.loads(r.read())


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# ---------------------------------------------------------------------------------------
# The cluster


@dataclass
class Member:
    idx: int
    client_port: int
    peer_port: int  # where it listens for peers
    proxy: Proxy  # what it advertises to its peers
    data_dir: Path
    proc: Optional[Proc] = None
    starts: int = 0
    member_id: str = ""  # decimal, as the gateway prints it

    @property
    def name(self) -> str:
        return f"m{self.idx}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.alive()

    def status(self, timeout_s: float = 0.3) -> dict:
        return _post(self.url + "/v3/maintenance/status", {}, timeout_s)

    def metric(self, name: str) -> float:
        """Sum of a Prometheus metric's series."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=2) as r:
            text = r.read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith(name + " ") or line.startswith(name + "{"))


class EtcdCluster:
    """Three etcd members on 127.0.0.1, peers through proxies; restartable member by member."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.version = etcd_version(binary)
        self.base_dir = make_temp_dir("etcd-cluster")
        root = self.base_dir
        self._tmpfs: Optional[Path] = None
        if os.environ.get("CONFORMANCE_ETCD_DISK") != "1" and os.access("/dev/shm", os.W_OK):
            self._tmpfs = Path(tempfile.mkdtemp(prefix="conformance-etcdc-", dir="/dev/shm"))
            root = self._tmpfs
            atexit.register(self.close)
            harness._TEMP_DIRS.append(self._tmpfs)  # removed on SIGINT/SIGTERM too
        self.members = []
        for i in range(N_MEMBERS):
            peer = free_port()
            self.members.append(Member(i, free_port(), peer, Proxy(peer), root / f"m{i}"))

    @property
    def endpoints(self) -> str:
        """Every client endpoint, comma-separated (what a clientv3 user gives)."""
        return ",".join(m.endpoint for m in self.members)

    @property
    def endpoint(self) -> str:  # for etcd_client.Etcdctl
        return self.endpoints

    def _argv(self, m: Member) -> list[str]:
        initial = ",".join(f"{x.name}=http://127.0.0.1:{x.proxy.port}" for x in self.members)
        return [
            self.binary, "--name", m.name, "--data-dir", str(m.data_dir),
            "--listen-client-urls", m.url, "--advertise-client-urls", m.url,
            "--listen-peer-urls", f"http://127.0.0.1:{m.peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{m.proxy.port}",
            "--initial-cluster", initial, "--initial-cluster-state", "new",
            "--initial-cluster-token", f"conformance-{os.getpid()}",
            f"--heartbeat-interval={HEARTBEAT_MS}", f"--election-timeout={ELECTION_MS}",
            "--logger=zap", "--log-outputs=stderr",
        ]

    def start_member(self, m: Member) -> None:
        if m.alive():
            raise HarnessError(f"{m.name} is already running")
        m.starts += 1
        m.proc = Proc(f"etcd-{m.name}", self._argv(m),
                      self.base_dir / f"{m.name}-{m.starts}.log")

    def start(self, timeout_s: float = 60.0) -> None:
        for m in self.members:
            self.start_member(m)
        self.wait_settled(timeout_s)
        for m in self.members:
            m.member_id = m.status(2.0)["header"]["member_id"]

    def wait_settled(self, timeout_s: float = 30.0) -> int:
        """Wait until every member runs and all report the same leader; its index."""
        try:
            return wait_until(self._agreed_leader, timeout_s, poll_s=0.05)
        except TimeoutError:
            logs = " ".join(str(m.proc.log_path) for m in self.members if m.proc)
            raise HarnessError(f"etcd cluster not settled in {timeout_s:g}s; logs {logs}")

    def _agreed_leader(self):
        leaders = set()
        for m in self.members:
            if not m.alive():
                if m.proc is not None and m.starts:
                    raise HarnessError(f"{m.name} exited: see {m.proc.log_path}")
                return None
            try:
                st = m.status(0.5)
            except OSError:
                return None
            leaders.add(st.get("leader", "0"))
        if len(leaders) != 1 or "0" in leaders:
            return None
        leader = leaders.pop()
        for m in self.members:
            if m.member_id == leader or (not m.member_id and m.status(0.5)["header"]
                                         ["member_id"] == leader):
                return m.idx + 1  # truthy for wait_until
        return None

    def leader(self) -> Member:
        return self.members[self.wait_settled() - 1]

    def by_id(self, member_id: str) -> Optional[Member]:
        return next((m for m in self.members if m.member_id == member_id), None)

    def isolate(self, m: Member) -> None:
        """Cut `m` from its peers (client traffic unaffected): its own proxy holds everything,
        the others hold the connections `m` opened (X-Server-From: its id in hex)."""
        marker = f"X-Server-From: {int(m.member_id):x}\r\n".encode()
        for other in self.members:
            if other is m:
                other.proxy.cut()
            else:
                other.proxy.cut_from(marker)

    def heal(self) -> None:
        for m in self.members:
            m.proxy.heal()

    def close(self) -> None:
        for m in self.members:
            if m.proc is not None:
                m.proc.stop()
                m.proc = None
            m.proxy.close()
        if self._tmpfs is not None:
            shutil.rmtree(self._tmpfs, ignore_errors=True)
            self._tmpfs = None


class Watcher:
    """Polls every member's status every 20 ms on its own thread: (t, leader, term) rows."""

    def __init__(self, cluster: EtcdCluster) -> None:
        self.rows: dict[int, list[tuple[float, str, int]]] = {m.idx: [] for m in cluster.members}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._poll, args=(m,), daemon=True)
                         for m in cluster.members]
        for t in self._threads:
            t.start()

    def _poll(self, m: Member) -> None:
        while not self._stop.is_set():
            try:
                st = m.status(0.3)
                row = (time.monotonic(), st.get("leader", "0"), int(st.get("raftTerm", 0)))
                with self._lock:
                    self.rows[m.idx].append(row)
            except (OSError, ValueError):
                pass
            self._stop.wait(POLL_S)

    def first(self, idx: int, after_s: float, pred: Callable[[str], bool]) -> float:
        """When member `idx` first reported a leader satisfying `pred` after `after_s`."""
        with self._lock:
            rows = list(self.rows[idx])
        return next((t for t, leader, _ in rows if t > after_s and pred(leader)), INF)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(2)


class Writer:
    """Puts a key every 20 ms through the members in `targets` (0.5 s timeout each);
    records the time of each success."""

    def __init__(self, targets: list[Member], key: str) -> None:
        self.targets = targets
        self.key = key
        self.ok: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            m = self.targets[n % len(self.targets)]
            n += 1
            try:
                _post(m.url + "/v3/kv/put", {"key": _b64(self.key), "value": _b64(str(n))}, 0.5)
                self.ok.append(time.monotonic())
            except (OSError, ValueError):
                pass
            self._stop.wait(POLL_S)

    def longest_gap(self, from_s: float, to_s: float) -> float:
        """The longest time in [from_s, to_s] without a successful put (a put that succeeded
        ends a gap when it returned)."""
        times = [from_s] + [t for t in list(self.ok) if from_s < t < to_s] + [to_s]
        return max(b - a for a, b in zip(times, times[1:]))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


# ---------------------------------------------------------------------------------------
# Trials


_CLUSTER: Optional[EtcdCluster] = None
_NAMES = 0


def cluster() -> EtcdCluster:
    """The one cluster of this module, started on first use, restored between trials."""
    global _CLUSTER
    if _CLUSTER is None:
        _CLUSTER = EtcdCluster(etcd_binary())
        _CLUSTER.start()
    return _CLUSTER


def shutdown() -> None:
    global _CLUSTER
    if _CLUSTER is not None:
        _CLUSTER.close()
        _CLUSTER = None


def _unique(prefix: str) -> str:
    global _NAMES
    _NAMES += 1
    return f"conf-{prefix}-{os.getpid()}-{_NAMES}"


def _sleep_until(t_s: float) -> None:
    left = t_s - time.monotonic()
    if left > 0:
        time.sleep(left)


def _lock(c: EtcdCluster, name: str, tag: str) -> Etcdctl:
    return Etcdctl(c, "lock", "--ttl", str(LOCK_TTL_S), name, name=f"lock-{tag}-{name}")


class ProbeLease:
    """A lease of PROBE_TTL_S that nobody keeps alive, with a key on it; a thread reads the
    key (linearizable range) through the members in `targets` every 20 ms and records when
    it was first gone. (An `etcdctl watch` does not do here: a member without a leader
    cancels its watches, "etcdserver: no leader", and etcdctl exits.)"""

    def __init__(self, targets: list[Member]) -> None:
        self.targets = targets
        self.key = _unique("probe")
        self.granted_s = time.monotonic()
        via = targets[0].url
        lease = _post(via + "/v3/lease/grant", {"TTL": PROBE_TTL_S}, 3.0)["ID"]
        _post(via + "/v3/kv/put", {"key": _b64(self.key), "value": _b64("p"), "lease": lease},
              3.0)
        self.deleted_s: Optional[float] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set() and self.deleted_s is None:
            m = self.targets[n % len(self.targets)]
            n += 1
            try:
                t = time.monotonic()
                answer = _post(m.url + "/v3/kv/range", {"key": _b64(self.key)}, 0.5)
                if int(answer.get("count", 0)) == 0:
                    self.deleted_s = t  # sent after it was gone
            except (OSError, ValueError):
                pass
            self._stop.wait(POLL_S)

    def wait_deleted(self, timeout_s: float) -> float:
        try:
            return wait_until(lambda: self.deleted_s, timeout_s)
        except TimeoutError:
            raise HarnessError(f"probe lease key {self.key} not deleted in {timeout_s:g}s")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


@dataclass
class Trial:
    """What one trial saw; times are time.monotonic() seconds, inf when it never happened."""
    fault_s: float = 0.0
    resume_s: float = 0.0  # SIGCONT / heal
    new_leader_s: float = INF  # a surviving member first named another leader
    write_gap_s: float = INF  # longest time without a put through a survivor
    old_steps_down_s: float = INF  # the old leader first named another (or none)
    probe_grant_s: float = 0.0
    probe_deleted_s: float = INF
    waiter_acquired_s: float = INF  # the waiter printed its key
    holder_ended_s: float = INF  # the holder's etcdctl printed an error or exited
    changes_after_resume: float = 0.0  # leader changes etcd counted after SIGCONT / heal
    holder_said: str = ""  # the holder's output after its key


def _trial(fault: str) -> Trial:
    """One trial of `fault` in kill-leader, kill-follower, pause-leader, cut-leader."""
    c = cluster()
    leader = c.leader()
    target = leader if fault != "kill-follower" else next(m for m in c.members if m is not leader)
    survivors = [m for m in c.members if m is not target]
    name = _unique(fault)
    tr = Trial()
    holder = _lock(c, name, "holder")
    waiter = probe = None
    watcher = Watcher(c)
    writer = Writer(survivors, _unique("w"))
    try:
        t_acquired, _ = holder.wait_line(f"^{name}/", 15)
        waiter = _lock(c, name, "waiter")
        probe = ProbeLease(survivors)
        tr.probe_grant_s = probe.granted_s
        _sleep_until(t_acquired + FAULT_AFTER_S)
        if waiter.count(f"^{name}/"):
            raise HarnessError("the waiter acquired the lock while the holder was alive")
        tr.fault_s = _strike(c, fault, target)
        if fault in ("pause-leader", "cut-leader"):
            _sleep_until(tr.fault_s + (PAUSE_S if fault == "pause-leader" else CUT_S))
            before = max(m.metric("etcd_server_leader_changes_seen_total") for m in survivors)
            tr.resume_s = time.monotonic()
            if fault == "pause-leader":
                target.proc.resume()
            else:
                c.heal()
        t_probe = probe.wait_deleted(30)
        tr.probe_deleted_s = t_probe
        _sleep_until(max(t_probe, tr.resume_s + SETTLE_S) + 2.0)
        if tr.resume_s:
            after = max(m.metric("etcd_server_leader_changes_seen_total") for m in survivors)
            tr.changes_after_resume = after - before
        old_id = leader.member_id
        tr.new_leader_s = min(watcher.first(m.idx, tr.fault_s, lambda l: l not in ("0", old_id))
                              for m in survivors)
        tr.old_steps_down_s = watcher.first(leader.idx, tr.fault_s, lambda l: l != old_id)
        now = time.monotonic()
        tr.write_gap_s = writer.longest_gap(tr.fault_s, min(tr.fault_s + 10.0, now))
        tr.waiter_acquired_s = next((t for t, line in waiter.lines()
                                     if line.startswith(f"{name}/")), INF)
        errors = [t for t, line in holder.lines() if re.search("(?i)error|expired", line)]
        tr.holder_ended_s = min(errors + [holder.exited_at or INF])
        tr.holder_said = " | ".join(line for _, line in holder.lines()[1:])[:200]
    finally:
        watcher.stop()
        writer.stop()
        for p in (holder, waiter, probe):
            if p is not None:
                p.stop()
        _restore(c, target)
    print(f"    ({fault} {c.version}: m{target.idx} {'leader' if target is leader else 'follower'}"
          f", new leader {tr.new_leader_s - tr.fault_s:.2f}s, writes stopped {tr.write_gap_s:.2f}s"
          f", probe deleted {tr.probe_deleted_s - tr.probe_grant_s:.2f}s after grant, "
          f"waiter acquired {tr.waiter_acquired_s - tr.fault_s:.2f}s, holder ended "
          f"{tr.holder_ended_s - tr.fault_s:.2f}s, "
          f"changes after resume {tr.changes_after_resume:g}"
          + (f", holder said: {tr.holder_said}" if tr.holder_said else "") + ")", flush=True)
    return tr


# ---------------------------------------------------------------------------------------
# The fsync-stuck leader (etcd issues 12528, 15247; ensureLeadership from 3.5.13 / 3.4.31)

STUCK_S = 10.0  # every fdatasync of the leader waits this long, for this long
STRACE_BIN = os.environ.get("STRACE", shutil.which("strace") or "/usr/bin/strace")


@dataclass
class StuckTrial:
    """What one fsync-stuck trial saw; times are seconds after the leader got stuck, inf when
    it never happened in the trial."""
    new_leader: float = INF  # a follower first named another leader
    holder_ended: float = INF  # the holder (pinned to the stuck leader) printed an error
    waiter_acquired: float = INF  # the waiter (through the followers) printed its key
    waiter_ended: float = INF  # the waiter printed an error after acquiring
    holder_said: str = ""
    waiter_said: str = ""


def _stuck(leader: Member, base_dir: Path) -> Proc:
    """Every fdatasync(2) of `leader` now waits STUCK_S before it runs (strace's syscall
    delay injection, as etcd_slow_disk.py): its raft loop blocks in the WAL save of its next
    Ready, as in etcd issue 15247. Stopping the Proc detaches strace; etcd runs on."""
    if not os.access(STRACE_BIN, os.X_OK):
        raise harness.Skip(f"strace not found at {STRACE_BIN} (apt-get install strace)")
    delay_us = int(STUCK_S * 1_000_000)
    argv = [STRACE_BIN, "-f", "-qq", "-o", "/dev/null", "-e", "trace=fdatasync",
            "-e", f"inject=fdatasync:delay_enter={delay_us}", "-p", str(leader.proc.pid)]
    return Proc(f"strace-{leader.name}", argv, base_dir / f"strace-{leader.name}.log")


def _stuck_trial() -> StuckTrial:
    """The holder's `etcdctl lock --ttl 5` talks to the leader only (a client connected to
    the member that gets stuck, as in 15247), the waiter's to the two followers; a writer
    puts through the followers every 20 ms (their forwarded proposals make the leader save
    and fdatasync). 1.5 s after the holder acquired, the leader's fdatasync is delayed
    STUCK_S for STUCK_S; watched until 8 s after, then restored."""
    c = cluster()
    leader = c.leader()
    followers = [m for m in c.members if m is not leader]
    name = _unique("stuck")
    tr = StuckTrial()
    holder = Etcdctl(c, "lock", "--ttl", str(LOCK_TTL_S), name, endpoint=leader.endpoint,
                     name=f"lock-holder-{name}")
    waiter = strace = None
    watcher = Watcher(c)
    writer = Writer(followers, _unique("w"))
    try:
        t_acquired, _ = holder.wait_line(f"^{name}/", 15)
        waiter = Etcdctl(c, "lock", "--ttl", str(LOCK_TTL_S), name,
                         endpoint=",".join(m.endpoint for m in followers),
                         name=f"lock-waiter-{name}")
        _sleep_until(t_acquired + FAULT_AFTER_S)
        t0 = time.monotonic()
        strace = _stuck(leader, c.base_dir)
        _sleep_until(t0 + STUCK_S)
        strace.stop()
        strace = None
        _sleep_until(t0 + STUCK_S + 8.0)
        old_id = leader.member_id
        tr.new_leader = min(watcher.first(m.idx, t0, lambda l: l not in ("0", old_id))
                            for m in followers) - t0
        errors = lambda p: [t for t, line in p.lines() if re.search("(?i)error|expired", line)]
        tr.holder_ended = min(errors(holder) + [holder.exited_at or INF]) - t0
        acquired = [t for t, line in waiter.lines() if line.startswith(f"{name}/")]
        tr.waiter_acquired = (acquired[0] if acquired else INF) - t0
        after = [t for t in errors(waiter) + [waiter.exited_at or INF]
                 if acquired and t > acquired[0]]
        tr.waiter_ended = min(after + [INF]) - t0
        tr.holder_said = " | ".join(line for _, line in holder.lines()[1:])[:200]
        tr.waiter_said = " | ".join(line for _, line in waiter.lines()[1:])[:200]
    finally:
        if strace is not None:
            strace.stop()
        watcher.stop()
        writer.stop()
        for p in (holder, waiter):
            if p is not None:
                p.stop()
        _restore(c, leader)
    print(f"    (stuck leader {c.version}: m{leader.idx}, new leader {tr.new_leader:.2f}s, "
          f"holder ended {tr.holder_ended:.2f}s, waiter acquired {tr.waiter_acquired:.2f}s, "
          f"waiter ended {tr.waiter_ended:.2f}s; holder said: {tr.holder_said}; "
          f"waiter said: {tr.waiter_said})", flush=True)
    return tr


def _stuck_rows(v: str) -> list[Experiment]:
    """What the holder pinned to an fsync-stuck leader and the waiter see, per version."""
    trials = SharedTrials(_stuck_trial)
    prefix = f"{v} fsync-stuck leader {STUCK_S:g}s"
    row = lambda name, unit, value, note="": Experiment(  # noqa: E731
        f"{prefix}: {name}", "etcd-cluster", unit, trials.row(value), None, None, note=note)
    return [
        row("new leader seen, from stuck", "s", lambda t: t.new_leader,
            "first status poll (every 20 ms) of a follower naming another leader"),
        row("holder's session ended, from stuck", "s", lambda t: t.holder_ended,
            "the holder's etcdctl (endpoint: the stuck leader only) printed an error"),
        row("waiter acquired, from stuck", "s", lambda t: t.waiter_acquired,
            "the waiter's etcdctl (endpoints: the two followers) printed its key"),
        row("both held at once", "count",
            lambda t: float(t.waiter_acquired < t.holder_ended),
            "the waiter printed its key before the holder printed its error"),
        row("waiter's session ended after acquiring", "count",
            lambda t: float(t.waiter_ended < INF),
            "a late revoke of the waiter's lease by the unstuck old leader (12528) would end it"),
    ]


def _strike(c: EtcdCluster, fault: str, target: Member) -> float:
    t = time.monotonic()
    if fault.startswith("kill"):
        target.proc.kill9()
    elif fault == "pause-leader":
        target.proc.pause()
    elif fault == "cut-leader":
        c.isolate(target)
    else:
        raise HarnessError(f"unknown fault {fault}")
    return t


def _restore(c: EtcdCluster, target: Member) -> None:
    """Heal, resume, restart the member on its data dir; wait for one agreed leader."""
    c.heal()
    if target.proc is not None and target.proc.alive():
        target.proc.resume()
    else:
        target.proc = None
        c.start_member(target)
    c.wait_settled(60)


def _trials(fault: str) -> SharedTrials:
    """The real trials of `fault`, shared by its rows."""
    return SharedTrials(lambda: _trial(fault))


# ---------------------------------------------------------------------------------------
# The model side: conformance/scenarios/etcd-cluster.ron, the same fault at the same moment
# (FAULT_AFTER_S after the holder's claim) on the member that leads the service then.

MODEL_MEMBERS = 2  # the election members n0, n1; the etcd members are processes 2..4
NS = 1_000_000_000


def _model_version(binary_version: str) -> str:
    """The model's `version` for a real binary's ("3.4.23" -> "3.4")."""
    return ".".join(binary_version.split(".")[:2])


def _model_run(seed: int, version: str, faults: str) -> list[dict]:
    return splitbrain_trace(SCENARIO_DIR / "etcd-cluster.ron", seed, version=version,
                            faults=faults)



def _model_faults(fault: str, t_ns: int, leader: int) -> str:
    """The scenario's faults for `fault` at `t_ns` on service member process `leader`."""
    at = f'at: "{t_ns}ns"'
    m = leader - MODEL_MEMBERS
    other = (m + 1) % N_MEMBERS
    if fault == "kill-leader":
        return f"({at}, do: Crash(ServiceMember({m})))"
    if fault == "kill-follower":
        return f"({at}, do: Crash(ServiceMember({other})))"
    if fault == "pause-leader":
        return f'({at}, do: Pause(ServiceMember({m}), "{PAUSE_S:g}s"))'
    if fault == "cut-leader":
        return ", ".join(f'({at}, do: Partition(CutLink(ServiceMember({m}), '
                         f'ServiceMember({o}))), heal_after: "{CUT_S:g}s")'
                         for o in range(N_MEMBERS) if o != m)
    raise HarnessError(f"unknown fault {fault}")


def _model_trial(fault: str, version: str, seed: int) -> Trial:
    """One model trial: times in seconds from the model's fault, as the real `Trial` has them
    from the real one (fault_s = 0)."""
    import etcd  # noqa: E402 (the single-member suite's trace readers)
    first = _model_run(seed, version, "")
    t_claim, holder = harness.first_claim(first, MODEL_MEMBERS)
    if holder is None:
        raise HarnessError("nobody acquired the lock in the model's run without faults")
    t_fault = int(t_claim + FAULT_AFTER_S * NS)
    leader = service_leader_at(first, t_fault)
    trace = _model_run(seed, version, _model_faults(fault, t_fault, leader))
    if harness.first_claim(trace, MODEL_MEMBERS)[0] != t_claim:
        raise HarnessError("the model's first claim moved between its two runs")
    resume = {"pause-leader": PAUSE_S, "cut-leader": CUT_S}.get(fault)
    s = lambda t_ns: (t_ns - t_fault) / NS  # noqa: E731
    tr = Trial(fault_s=0.0, resume_s=resume or 0.0)
    leads_after = [e for e in trace if e["ev"] == "service_leads" and e["t"] > t_fault]
    tr.new_leader_s = s(min((e["t"] for e in leads_after if e["node"] != leader),
                            default=INF))
    tr.old_steps_down_s = s(min((e["t"] for e in trace if e["ev"] == "service_follows"
                                 and e["node"] == leader and e["t"] > t_fault), default=INF))
    if resume is not None:
        t_resume = t_fault + resume * NS
        tr.changes_after_resume = float(sum(1 for e in leads_after if e["t"] > t_resume))
    tr.holder_ended_s = s(etcd._first_step_down(trace, holder, t_fault))
    tr.waiter_acquired_s = s(harness.first_claim(trace, MODEL_MEMBERS, after_ns=t_fault,
                                               exclude=holder)[0])
    print(f"    (model {fault} {version} seed {seed}: leader p{leader}, new leader "
          f"{tr.new_leader_s:.2f}s, waiter acquired {tr.waiter_acquired_s:.2f}s, holder "
          f"ended {tr.holder_ended_s:.2f}s, changes after resume {tr.changes_after_resume:g})",
          flush=True)
    return tr



# ---------------------------------------------------------------------------------------
# Expectations (documented behaviour; a FAIL means the harness or the server changed)


def _real_row(name: str, unit: str, trials: SharedTrials, value: Callable[[Trial], float],
              expect: Optional[Callable[[list], str]] = None, note: str = "",
              model: Optional[ModelTrials] = None, band: Optional[Band] = None) -> Experiment:
    """A row of `value` over the real trials and, with `model` and `band`, over the model's
    (the same `value`: a model trial's times count from its fault as the real one's)."""
    return Experiment(name, "etcd-cluster", unit, trials.row(value),
                      model.row(value) if model else None, band if model else None,
                      note=note, expect=expect)


# The followers' randomized election timeout spans [1, 1.9) s after the last heartbeat
# (etcd-io/raft resetRandomizedElectionTimeout): three trials sample it, so a new leader's
# time agrees within half that span. Counts agree exactly.
ELECTION_BAND = Band(abs=0.5)
COUNT_BAND = Band(abs=0.5)


def _lock_rows(prefix: str, trials: SharedTrials, waiter_stays_out: bool,
               holder_lives_on: bool, model: ModelTrials) -> list[Experiment]:
    """The lock's rows of a fault: the holder's session ended, the waiter acquired, and the
    waiter acquired before the holder's session ended (both held the lock at once)."""
    return [
        _real_row(f"{prefix}: lock TTL 5, holder's session ended", "count", trials,
                  lambda t: float(t.holder_ended_s < INF),
                  harness.all_zero("the holder's session lives on") if holder_lives_on else None,
                  "etcdctl lock printed an error (\"session expired\") or exited",
                  model, COUNT_BAND),
        _real_row(f"{prefix}: lock TTL 5, waiter acquired", "count", trials,
                  lambda t: float(t.waiter_acquired_s < INF),
                  harness.all_zero("the waiter stays out (the server keeps the lease)")
                  if waiter_stays_out else None, "", model, COUNT_BAND),
        _real_row(f"{prefix}: lock TTL 5, both held at once", "count", trials,
                  lambda t: float(t.waiter_acquired_s < t.holder_ended_s),
                  harness.all_zero("never two holders"),
                  "the waiter printed its key before the holder printed its error",
                  model, COUNT_BAND),
    ]


# Under a leader cut a holder loses its session only if its keep-alives go to the cut member
# (directly, or through a follower that still follows it); which member a client talks to is
# a draw on both sides (clientv3's balancer; the model's client starts at its id modulo the
# members), so three trials of each compare two draws, not the rule (real 3.4.23: the holder
# ended in 6 of 9 trials over three runs, 3 of 3 in a fourth).
CUT_DRAW = ("which member the holder's client talks to is drawn differently on the two "
            "sides (clientv3 at random, the model by client id): tracked in issue 32")


def _drawn(rows: list[Experiment]) -> list[Experiment]:
    """Real-only rows: comparing two draws would pass or fail by luck (a known difference
    that happens to agree reads FIXED and fails the suite; CI run of 66d64bf). The model's
    own counts for these rows are in docs/conformance-clusters.md."""
    for row in rows:
        row.model, row.band = None, None
        row.note = f"{row.note}; real only: {CUT_DRAW}".lstrip("; ")
    return rows


def experiments(binary: str) -> list[Experiment]:
    """The rows for one etcd binary, named after its version."""
    v = f"etcdc {etcd_version(binary)}"
    kill_l, kill_f = _trials("kill-leader"), _trials("kill-follower")
    pause, cut = _trials("pause-leader"), _trials("cut-leader")
    version = _model_version(etcd_version(binary))
    def model(fault: str) -> ModelTrials:
        return ModelTrials(lambda seed: _model_trial(fault, version, seed))
    m_kill_l, m_kill_f = model("kill-leader"), model("kill-follower")
    m_pause, m_cut = model("pause-leader"), model("cut-leader")
    # After a promotion the lessor extends every lease to now + election timeout + TTL
    # (lessor.Promote, 3.4 and 3.5 without checkpoints), so the probe's key goes TTL + 1 s
    # after the new leader (minus the watcher's 20 ms polling, plus up to the 500 ms sweep).
    promoted = harness.all_within(PROBE_TTL_S + 1 - 0.3, PROBE_TTL_S + 1 + 0.8,
                           "probe deleted TTL + election timeout after the new leader")
    changes = ("etcd_server_leader_changes_seen_total, max over the others, from the SIGCONT "
               "or heal to 2 s after the probe's key is gone (at least 6 s)")
    first_poll = "first status poll (every 20 ms) of a survivor naming another leader"
    return [
        _real_row(f"{v} kill -9 leader: new leader seen, from kill", "s", kill_l,
                  lambda t: t.new_leader_s - t.fault_s, harness.all_within(0.5, 5.0, "a new leader"),
                  first_poll, m_kill_l, ELECTION_BAND),
        _real_row(f"{v} kill -9 leader: no write served, longest", "s", kill_l,
                  lambda t: t.write_gap_s, None,
                  "puts through the survivors every 20 ms (0.5 s timeout): the longest time "
                  "without a success in the 10 s from the kill"),
        _real_row(f"{v} kill -9 leader: probe lease TTL 5 deleted, from new leader", "s",
                  kill_l, lambda t: t.probe_deleted_s - t.new_leader_s, promoted,
                  "lessor.Promote(electionTimeout): the full TTL + 1 s again"),
        _real_row(f"{v} kill -9 leader: probe lease TTL 5 deleted, from grant", "s", kill_l,
                  lambda t: t.probe_deleted_s - t.probe_grant_s),
        *_lock_rows(f"{v} kill -9 leader", kill_l, True, False, m_kill_l),
        _real_row(f"{v} kill -9 follower: new leader", "count", kill_f,
                  lambda t: float(t.new_leader_s < INF),
                  harness.all_zero("no new leader after a follower's crash"), "", m_kill_f,
                  COUNT_BAND),
        _real_row(f"{v} kill -9 follower: probe lease TTL 5 deleted, from grant", "s", kill_f,
                  lambda t: t.probe_deleted_s - t.probe_grant_s,
                  harness.all_within(PROBE_TTL_S - 0.1, PROBE_TTL_S + 0.8, "deleted at its TTL")),
        *_lock_rows(f"{v} kill -9 follower", kill_f, True, True, m_kill_f),
        _real_row(f"{v} SIGSTOP leader 3s: new leader seen, from stop", "s", pause,
                  lambda t: t.new_leader_s - t.fault_s,
                  harness.all_within(0.5, PAUSE_S, "a new leader while it is stopped"), first_poll,
                  m_pause, ELECTION_BAND),
        _real_row(f"{v} SIGSTOP leader 3s: no write served, longest", "s", pause,
                  lambda t: t.write_gap_s, None, "as for the kill, in the 10 s from the stop"),
        _real_row(f"{v} SIGSTOP leader 3s: old leader follows, from SIGCONT", "s", pause,
                  lambda t: t.old_steps_down_s - t.resume_s, None,
                  "first status poll of the resumed member naming another leader; the "
                  "model's first step-down after its resume (the higher-term messages that "
                  "waited for it)", m_pause, Band(abs=0.1)),
        _real_row(f"{v} SIGSTOP leader 3s: leader changes after SIGCONT", "count", pause,
                  lambda t: t.changes_after_resume, None, changes, m_pause, COUNT_BAND),
        _real_row(f"{v} SIGSTOP leader 3s: probe lease TTL 5 deleted, from new leader", "s",
                  pause, lambda t: t.probe_deleted_s - t.new_leader_s, promoted),
        *_lock_rows(f"{v} SIGSTOP leader 3s", pause, False, False, m_pause),
        _real_row(f"{v} leader cut from peers 5s: new leader seen, from cut", "s", cut,
                  lambda t: t.new_leader_s - t.fault_s,
                  harness.all_within(0.5, CUT_S, "a new leader during the cut"), first_poll, m_cut,
                  ELECTION_BAND),
        _real_row(f"{v} leader cut from peers 5s: old leader steps down, from cut", "s", cut,
                  lambda t: t.old_steps_down_s - t.fault_s,
                  harness.all_within(0.5, CUT_S, "check-quorum step-down during the cut"),
                  "raft CheckQuorum: no quorum heard from within an election timeout", m_cut,
                  ELECTION_BAND),
        _real_row(f"{v} leader cut from peers 5s: no write served, longest", "s", cut,
                  lambda t: t.write_gap_s, None,
                  "as for the kill, in the 10 s from the cut (the heal at 5 s included)"),
        _real_row(f"{v} leader cut from peers 5s: leader changes after heal", "count", cut,
                  lambda t: t.changes_after_resume, None, changes, m_cut, COUNT_BAND),
        _real_row(f"{v} leader cut from peers 5s: probe lease TTL 5 deleted, from new leader",
                  "s", cut, lambda t: t.probe_deleted_s - t.new_leader_s),
        *_drawn(_lock_rows(f"{v} leader cut from peers 5s", cut, False, False, m_cut)[:2]),
        _lock_rows(f"{v} leader cut from peers 5s", cut, False, False, m_cut)[2],
        *_stuck_rows(v),
    ]


EXPERIMENTS = experiments(etcd_binary())
