"""A real 3-member etcd cluster on 127.0.0.1, and the experiments of issue 32 on it.

The model side (`_model_trial`, `_model_stuck_trial`) runs
conformance/scenarios/etcd-cluster.ron (`Etcd(members: 3, version: ...)`, the lock's two
clients and a probe client, the real trial's 20 ms write load) three times per trial: with
the probe held back, to find the holder's claim; with the probe started then, to find the
etcd leader at the fault time and the member each lock client talks to; and with the real
trial's fault on that member at the same moment after the claim. Model trial k is a seed whose
lock clients sit as real trial k's did (on the struck member or not; `_TwinSeeds`): which
member a client uses is drawn on both sides and decides some rows. Every row has a model
side; where the model disagrees for a known reason the row says so (`known_difference`).
Run it by name:

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
endpoints (clientv3's balancer fails over; which member's keep-alive stream each opened is
read from the members' grpc_server_started_total); a probe lease (TTL 5 s, never kept alive) with a
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
                     SharedTrials, free_port, make_temp_dir, service_leader_at, wait_until)
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

    def metric(self, name: str, label: str = "") -> float:
        """Sum of a Prometheus metric's series (those whose labels contain `label`)."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=2) as r:
            text = r.read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if (line.startswith(name + " ") or line.startswith(name + "{"))
                   and label in line)


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
    # Whether each lock client's keep-alive stream is on the struck member (None: not seen).
    holder_on_target: Optional[bool] = None
    waiter_on_target: Optional[bool] = None


def _keepalive_streams(c: EtcdCluster) -> dict[int, float]:
    """LeaseKeepAlive streams each member has started (grpc_server_started_total): a lock
    client's session opens one on the member its balancer picks."""
    return {m.idx: m.metric("grpc_server_started_total", 'grpc_method="LeaseKeepAlive"')
            for m in c.members}


def _stream_member(before: dict[int, float], after: dict[int, float]) -> Optional[int]:
    """The member whose keep-alive streams went up from `before` to `after` (None: none, or
    several)."""
    grew = [i for i in after if after[i] > before.get(i, 0)]
    return grew[0] if len(grew) == 1 else None


def _trial(fault: str) -> Trial:
    """One trial of `fault` in kill-leader, kill-follower, pause-leader, cut-leader."""
    c = cluster()
    leader = c.leader()
    target = leader if fault != "kill-follower" else next(m for m in c.members if m is not leader)
    survivors = [m for m in c.members if m is not target]
    name = _unique(fault)
    tr = Trial()
    streams = _keepalive_streams(c)
    holder = _lock(c, name, "holder")
    waiter = probe = None
    watcher = Watcher(c)
    writer = Writer(survivors, _unique("w"))
    try:
        t_acquired, _ = holder.wait_line(f"^{name}/", 15)
        held = _keepalive_streams(c)
        waiter = _lock(c, name, "waiter")
        probe = ProbeLease(survivors)
        tr.probe_grant_s = probe.granted_s
        _sleep_until(t_acquired + FAULT_AFTER_S - 0.2)
        on = lambda m: None if m is None else m == target.idx  # noqa: E731
        tr.holder_on_target = on(_stream_member(streams, held))
        tr.waiter_on_target = on(_stream_member(held, _keepalive_streams(c)))
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
          f"changes after resume {tr.changes_after_resume:g}, keep-alives of holder / waiter "
          f"on m{target.idx}: {tr.holder_on_target} / {tr.waiter_on_target}"
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


def _stuck_rows(v: str, version: str) -> list[Experiment]:
    """What the holder pinned to an fsync-stuck leader and the waiter see, per version; the
    model's twins are seeds whose holder talks to the etcd leader and whose waiter talks to a
    follower, as the real clients are pinned."""
    trials = SharedTrials(_stuck_trial)
    twins = _TwinSeeds("stuck-leader", version, lambda k: (True, False))
    model = ModelTrials(lambda k: _model_stuck_trial(version, twins, k))
    prefix = f"{v} fsync-stuck leader {STUCK_S:g}s"

    def answered(k: int) -> bool:
        """Real trial k's holder kept its session through the stuck period."""
        tr = trials.done.get(k)
        return tr is not None and tr.holder_ended >= STUCK_S

    def row(name: str, unit: str, value: Callable[[StuckTrial], float], note: str,
            band: Band, known: bool = False, pinned: bool = False) -> Experiment:
        if pinned and version == "3.5":
            return Experiment(f"{prefix}: {name}", "etcd-cluster", unit, trials.row(value),
                              model.row(value), band, note=note, known_difference=PINNED,
                              known_where=_every_trial)
        return Experiment(f"{prefix}: {name}", "etcd-cluster", unit, trials.row(value),
                          model.row(value), band, note=note,
                          known_difference=STUCK_ANSWERED if known else "",
                          known_where=answered if known else None)
    return [
        row("new leader seen, from stuck", "s", lambda t: t.new_leader,
            "first status poll (every 20 ms) of a follower naming another leader (model: "
            "SlowDisk on the leader member, 10 s fsyncs for 10 s)", ELECTION_BAND),
        row("holder's session ended, from stuck", "s", lambda t: t.holder_ended,
            "the holder's etcdctl (endpoint: the stuck leader only) printed an error; model: "
            "a seed whose holder talks to the leader member. Its keep-alives go unanswered, so "
            "clientv3's deadline loop ends it TTL after its last answer: per trial mod 1 s "
            "(the loop's tick races the deadline by a millisecond or so)", DEADLINE_BAND,
            known=True, pinned=True),
        row("waiter acquired, from stuck", "s", lambda t: t.waiter_acquired,
            "the waiter's etcdctl (endpoints: the two followers) printed its key; model: a "
            "seed whose waiter talks to a follower. The new leader's lessor expires the "
            "holder's lease TTL + 1 s after its promotion, at its next sweep: ±0.75 s, half "
            "the election's span and half the sweep's", ELECTION_SWEEP_BAND, pinned=True),
        row("both held at once", "count",
            lambda t: float(t.waiter_acquired < t.holder_ended),
            "the waiter printed its key before the holder printed its error; twins per trial",
            TWIN_COUNT_BAND, known=True),
        row("waiter's session ended after acquiring", "count",
            lambda t: float(t.waiter_ended < INF),
            "a late revoke of the waiter's lease by the unstuck old leader (12528) ends it: "
            "its lessor was not demoted while stuck, and 3.4 proposes revokes without "
            "ensureLeadership", TWIN_COUNT_BAND),
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
#
# Each model trial is three runs of one seed: (A) the probe client held back, to find the
# holder's claim; (B) the probe started at that claim, to find the etcd leader at the fault
# time and which member each lock client talks to then; (C) the same with the fault. B and C
# are the same run up to the fault (checked), so what B found holds in C.

MODEL_MEMBERS = 3  # the election members n0, n1 (the lock) and n2 (the probe)
PROBE_NODE = 2  # its client grants a lease and puts its key, then never sends again
NS = 1_000_000_000
# How many seeds a twin search may try before giving up (a twin whose clients sit as the
# real trial's were is found within a few seeds: each client is on the struck member in
# about a third of them).
SEED_SEARCH = 400


def _model_version(binary_version: str) -> str:
    """The model's `version` for a real binary's ("3.4.23" -> "3.4")."""
    return ".".join(binary_version.split(".")[:2])


def _model_run(seed: int, version: str, faults: str) -> tuple[list[dict], dict]:
    """One run of etcd-cluster.ron: its trace and its `--json` summary."""
    return harness.splitbrain_trace_report(SCENARIO_DIR / "etcd-cluster.ron", seed,
                                           version=version, faults=faults)


def _probe_faults(t_claim_ns: Optional[int]) -> str:
    """The probe client (n2) held back until `t_claim_ns` (for good when None): crashed at 0,
    restarted then, it grants its lease (TTL 5, as the real probe's) and puts its key, and is
    crashed for good right after it sent its first request past the put (a watch on its
    predecessor's key): its lease is never renewed again, as the real probe's never is. The
    one keep-alive clientv3's session sends with the grant's answer renews it once, a round
    trip after the grant."""
    held = f"(at: \"0s\", do: Crash(Node({PROBE_NODE}))"
    if t_claim_ns is None:
        return held + ")"
    return (f'{held}, heal_after: "{t_claim_ns}ns"), '
            f'(at: "{t_claim_ns}ns", after: (event: Sent("Watch"), by: Node({PROBE_NODE})), '
            f"do: Crash(Node({PROBE_NODE})))")


def _model_faults(fault: str, t_ns: int, target: int) -> str:
    """The scenario's faults for `fault` at `t_ns` on service member process `target`."""
    at = f'at: "{t_ns}ns"'
    m = target - MODEL_MEMBERS
    if fault in ("kill-leader", "kill-follower"):
        return f"({at}, do: Crash(ServiceMember({m})))"
    if fault == "pause-leader":
        return f'({at}, do: Pause(ServiceMember({m}), "{PAUSE_S:g}s"))'
    if fault == "cut-leader":
        return ", ".join(f'({at}, do: Partition(CutLink(ServiceMember({m}), '
                         f'ServiceMember({o}))), heal_after: "{CUT_S:g}s")'
                         for o in range(N_MEMBERS) if o != m)
    if fault == "stuck-leader":
        return (f'({at}, do: SlowDisk(ServiceMember({m}), "{STUCK_S:g}s"), '
                f'heal_after: "{STUCK_S:g}s")')
    raise HarnessError(f"unknown fault {fault}")


def _member_used(trace: list[dict], client: int, before_ns: float) -> Optional[int]:
    """The etcd member process that last handled a request of `client` before `before_ns`
    (a model client talks to one member at a time: docs/algorithms/etcd.md, "client")."""
    used = None
    for e in trace:
        if e["t"] >= before_ns:
            break
        if e["ev"] == "deliver" and e["from"] == client and e["node"] >= MODEL_MEMBERS:
            used = e["node"]
    return used


@dataclass
class _Setup:
    """What runs A and B of a seed found (see the section's comment)."""
    t_claim: int
    holder: int
    t_fault: int
    leader: int  # the etcd member process leading at the fault
    holder_used: Optional[int]  # the member process each lock client talks to then
    waiter_used: Optional[int]


_SETUPS: dict[tuple[int, str], _Setup] = {}


def _setup(seed: int, version: str) -> _Setup:
    key = (seed, version)
    if key not in _SETUPS:
        first, _ = _model_run(seed, version, _probe_faults(None))
        t_claim, holder = harness.first_claim(first, 2)
        if holder is None:
            raise HarnessError(f"nobody acquired the lock in the model's seed {seed}")
        t_claim = int(t_claim)
        t_fault = int(t_claim + FAULT_AFTER_S * NS)
        second, _ = _model_run(seed, version, _probe_faults(t_claim))
        if harness.first_claim(second, 2)[0] != t_claim:
            raise HarnessError("the model's first claim moved when the probe started")
        _SETUPS[key] = _Setup(t_claim, holder, t_fault, service_leader_at(second, t_fault),
                              _member_used(second, holder, t_fault),
                              _member_used(second, 1 - holder, t_fault))
    return _SETUPS[key]


def _target(fault: str, setup: _Setup) -> int:
    """The member process the fault strikes: the leader, or (kill-follower) the next one."""
    if fault != "kill-follower":
        return setup.leader
    m = setup.leader - MODEL_MEMBERS
    return MODEL_MEMBERS + (m + 1) % N_MEMBERS


class _TwinSeeds:
    """Model trial k runs the first seed (from 1 up) not taken by an earlier trial whose lock
    clients talk to the struck member, or not, as the real trial k's did (`placement(k)`:
    (holder on it, waiter on it), None where unknown: any seed).

    Which etcd member a client talks to is drawn on both sides and decides some rows (a
    client on a member cut off from its peers is not renewed; the real fsync-stuck trial
    pins the holder to the leader and the waiter to the followers): a twin that sits as its
    real trial did compares the rule, not two draws. The seed is chosen from runs A and B,
    before the fault: never by what the fault run shows."""

    def __init__(self, fault: str, version: str,
                 placement: Callable[[int], Optional[tuple[Optional[bool], Optional[bool]]]]):
        self.fault, self.version, self.placement = fault, version, placement
        self.seeds: dict[int, int] = {}

    def seed(self, k: int) -> int:
        if k in self.seeds:
            return self.seeds[k]
        want = self.placement(k)
        used = set(self.seeds.values())
        for seed in range(1, SEED_SEARCH + 1):
            if seed in used:
                continue
            s = _setup(seed, self.version)
            target = _target(self.fault, s)
            have = (s.holder_used == target, s.waiter_used == target)
            if want is None or all(w is None or w == h for w, h in zip(want, have)):
                self.seeds[k] = seed
                return seed
        raise HarnessError(f"no model seed among 1..{SEED_SEARCH} has the lock clients "
                           f"placed as real trial {k} ({want})")


def _serving_gap(trace: list[dict], t_from: int, t_to: int, struck: int,
                 struck_until: float) -> float:
    """The longest time in [t_from, t_to] (ns) in which no etcd member led that the writer
    could reach: the struck member counts only from `struck_until` on (a killed member never,
    a paused one from its resume, a cut one from the heal)."""
    changes = [e for e in trace if e["ev"] in ("service_leads", "service_follows")]
    points = sorted({t_from, t_to} | {e["t"] for e in changes if t_from < e["t"] < t_to}
                    | ({int(struck_until)} if t_from < struck_until < t_to else set()))
    leading: set[int] = set()
    longest, gap_from, i = 0, None, 0
    for p in points:
        while i < len(changes) and changes[i]["t"] <= p:
            (leading.add if changes[i]["ev"] == "service_leads" else leading.discard)(
                changes[i]["node"])
            i += 1
        up = any(m != struck or p >= struck_until for m in leading)
        if not up and gap_from is None and p < t_to:
            gap_from = p
        elif (up or p >= t_to) and gap_from is not None:
            longest, gap_from = max(longest, p - gap_from), None
    return longest / NS


def _model_trial(fault: str, version: str, twins: _TwinSeeds, k: int) -> Trial:
    """Model trial k of `fault`: times in seconds from the model's fault, as the real `Trial`
    has them from the real one (fault_s = 0)."""
    import etcd  # noqa: E402 (the single-member suite's trace readers)
    seed = twins.seed(k)
    st = _setup(seed, version)
    t_fault, holder = st.t_fault, st.holder
    target = _target(fault, st)
    trace, summary = _model_run(seed, version, _probe_faults(st.t_claim) + ", "
                                + _model_faults(fault, t_fault, target))
    if harness.first_claim(trace, 2)[0] != st.t_claim:
        raise HarnessError("the model's first claim moved between its runs")
    if service_leader_at(trace, t_fault - 1) != st.leader:
        raise HarnessError("the model's etcd leader before the fault moved between its runs")
    resume = {"pause-leader": PAUSE_S, "cut-leader": CUT_S}.get(fault)
    s = lambda t_ns: (t_ns - t_fault) / NS  # noqa: E731
    tr = Trial(fault_s=0.0, resume_s=resume or 0.0)
    leads_after = [e for e in trace if e["ev"] == "service_leads" and e["t"] > t_fault]
    tr.new_leader_s = s(min((e["t"] for e in leads_after if e["node"] != st.leader),
                            default=INF))
    tr.old_steps_down_s = s(min((e["t"] for e in trace if e["ev"] == "service_follows"
                                 and e["node"] == st.leader and e["t"] > t_fault), default=INF))
    if resume is not None:
        t_resume = t_fault + resume * NS
        tr.changes_after_resume = float(sum(1 for e in leads_after if e["t"] > t_resume))
    tr.holder_ended_s = s(etcd._first_step_down(trace, holder, t_fault))
    tr.waiter_acquired_s = s(harness.first_claim(trace, 2, after_ns=t_fault,
                                               exclude=holder)[0])
    struck_until = (INF if fault.startswith("kill") else t_fault + (resume or 0) * NS)
    tr.write_gap_s = _serving_gap(trace, t_fault, t_fault + 10 * NS, target, struck_until)
    # The probe: its grant request (the real probe's grant_s is taken before its request)
    # and the end of its lease span (the revoke applied at the member that proposed it).
    tr.probe_grant_s = s(next(e["sent"] for e in trace if e["ev"] == "deliver"
                              and e["from"] == PROBE_NODE and e["what"] == "LeaseGrant"
                              and e["t"] >= st.t_claim))
    report = summary["report"]
    spans = [sp for sp in report["lease_spans"] if sp["node"] == PROBE_NODE]
    if not spans:
        raise HarnessError(f"the model's probe (n{PROBE_NODE}) held no lease")
    tr.probe_deleted_s = (s(spans[-1]["to_ns"]) if spans[-1]["to_ns"] < report["end_ns"]
                          else INF)
    print(f"    (model {fault} {version} seed {seed}: leader p{st.leader}, holder n{holder} on "
          f"p{st.holder_used}, waiter on p{st.waiter_used}, new leader "
          f"{tr.new_leader_s:.2f}s, writes stopped {tr.write_gap_s:.2f}s, probe deleted "
          f"{tr.probe_deleted_s - tr.probe_grant_s:.2f}s after grant, waiter acquired "
          f"{tr.waiter_acquired_s:.2f}s, holder ended {tr.holder_ended_s:.2f}s, changes after "
          f"resume {tr.changes_after_resume:g})", flush=True)
    return tr


def _model_stuck_trial(version: str, twins: _TwinSeeds, k: int) -> StuckTrial:
    """Model trial k of the fsync-stuck leader, its times from the stuck moment: the holder
    talks to the etcd leader, the waiter to a follower (`twins`: as the real clients are
    pinned)."""
    import etcd  # noqa: E402
    seed = twins.seed(k)
    st = _setup(seed, version)
    t_fault, holder = st.t_fault, st.holder
    trace, _ = _model_run(seed, version, _probe_faults(st.t_claim) + ", "
                          + _model_faults("stuck-leader", t_fault, st.leader))
    if harness.first_claim(trace, 2)[0] != st.t_claim:
        raise HarnessError("the model's first claim moved between its runs")
    s = lambda t_ns: (t_ns - t_fault) / NS  # noqa: E731
    tr = StuckTrial()
    tr.new_leader = s(min((e["t"] for e in trace if e["ev"] == "service_leads"
                           and e["t"] > t_fault and e["node"] != st.leader), default=INF))
    tr.holder_ended = s(etcd._first_step_down(trace, holder, t_fault))
    t_acq, _ = harness.first_claim(trace, 2, after_ns=t_fault, exclude=holder)
    tr.waiter_acquired = s(t_acq)
    tr.waiter_ended = (s(etcd._first_step_down(trace, 1 - holder, t_acq)) if t_acq < INF
                       else INF)
    print(f"    (model stuck leader {version} seed {seed}: leader p{st.leader}, holder "
          f"n{holder} on p{st.holder_used}, waiter on p{st.waiter_used}, new leader "
          f"{tr.new_leader:.2f}s, holder ended {tr.holder_ended:.2f}s, waiter acquired "
          f"{tr.waiter_acquired:.2f}s, waiter ended {tr.waiter_ended:.2f}s)", flush=True)
    return tr


# ---------------------------------------------------------------------------------------
# Expectations (documented behaviour; a FAIL means the harness or the server changed)


def _real_row(name: str, unit: str, trials: SharedTrials, value: Callable[[Trial], float],
              expect: Optional[Callable[[list], str]] = None, note: str = "",
              model: Optional[ModelTrials] = None, band: Optional[Band] = None,
              known_difference: str = "",
              known_where: Optional[Callable[[int], bool]] = None) -> Experiment:
    """A row of `value` over the real trials and, with `model` and `band`, over the model's
    (the same `value`: a model trial's times count from its fault as the real one's)."""
    return Experiment(name, "etcd-cluster", unit, trials.row(value),
                      model.row(value) if model else None, band if model else None,
                      note=note, expect=expect, known_difference=known_difference,
                      known_where=known_where)


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


# The writer's puts go through the survivors one at a time, each with a 0.5 s timeout, every
# 20 ms: a put forwarded to a leader that is gone waits out its timeout, so the real outage
# ends up to a timeout and a poll after the service can take writes again (real only: the
# model's writes are its leader's own, `write_every`).
WRITER_WAIT_S = 0.5 + POLL_S
# Probe lease from the new leader: Promote(1 s) gives it TTL + 1 s, then the lessor revokes it
# at its next 500 ms sweep, at a phase neither side aligns with the promotion; each side within
# the same window as the real side's documented expectation.
PROMOTED_WINDOW = (PROBE_TTL_S + 1 - 0.3, PROBE_TTL_S + 1 + 0.8)
PROMOTED_BAND = Band(abs=0.0, window=PROMOTED_WINDOW)
# A lease the leader's lessor keeps: TTL after its grant, then the next sweep, at a phase
# neither side aligns with the grant; each side within the real side's documented window.
TTL_WINDOW = (PROBE_TTL_S - 0.1, PROBE_TTL_S + 0.8)
TTL_BAND = Band(abs=0.0, window=TTL_WINDOW)
# A new leader's time and the sweep's phase, each half its span (ELECTION_BAND's rule).
ELECTION_SWEEP_BAND = Band(abs=0.5 + 0.25)
# After the heal of a 3.4 leader cut (pre-vote off) the cut member's higher term deposes the
# new leader, and its vote requests (its log is behind, it cannot win) reset the others'
# randomized timeouts until one of them fires first (etcd-io/raft: becomeFollower on a
# higher-term MsgVote out of lease, reset). Each round the cut member wins adds 1 to 1.9 s, so
# the outage spans about 1 to 5 s (real and model alike), and three trials of each differ by
# a round: ±1.9 s, one randomized election timeout at most.
HEAL_RACE_S = 1.9
# The holder pinned to the fsync-stuck leader ends its session TTL after its last answer,
# reported by clientv3's 1 s deadline loop on the tick after the deadline or, when the two
# fall within a millisecond or so (the deadline loop starts with the session, the deadline
# is its first keep-alive's answer + TTL), one tick later or earlier: as the single member's
# cut row, per trial, mod 1 s (real values 3.50 and 4.50 both seen, in the cut trials too).
DEADLINE_BAND = Band(abs=0.25, paired_period=1.0)

# A lock client whose keep-alive stream is on a follower of a cut-off leader: real 3.4.23
# forwards the renewal to the leader it still knows, over the peer transport, and that request
# waits for the 7 s request timeout (leasehttp.RenewHTTP: the peer round tripper has no read
# timeout, rafthttp.NewRoundTripper; etcdserver/v3_server.go LeaseRenew's loop waits in it),
# longer than the TTL, so the client's session ends at its deadline (every such trial so far:
# 3.5 or 4.5 s after the cut). The model's follower sends a renewal again to the new leader
# once it has waited a second unanswered, so that client keeps its session. A client on the
# cut member itself is renewed there until it steps down, then waits for a leader it can
# reach: it keeps its session if the election after the heal ends before its deadline (5.5 s
# after the cut, checked once a second), a race on both sides (real: 2 of 3 such trials kept
# it; the model's election after the heal is slower and its clients lost it). So every trial
# concerns the known difference: the rows show the numbers and cannot fail.
# Measured 2026-12-07 (the model over seeds 1-200, etcd_cluster._serving_gap of the cut-leader
# fault on 3.4): the model's longest write outage spans 1.0-5.0 s, median 2.2 s, 17 of 200
# seeds above 4.46 s and 40 above 3.5 s; the real cluster's trials so far 1.58-2.56 s (two CI
# runs, six trials). Three twins drawn for their clients' placement, not their race, put one
# model value above the band in about a quarter of the suite's runs (CI of b1332b2's
# successor failed so).
CUT_HEAL_TAIL = ("the model's election after the heal can take several rounds (outages up to "
                 "the whole 5 s cut, 8% of seeds above 4.46 s, 20% above 3.5 s; the probe's "
                 "deletion, which waits for that election, off its band on 8% of seeds); the "
                 "real cluster's trials never passed 2.6 s of outage; cause not found")
# Measured 2026-12-07 over model seeds: the probe's deletion after the new leader (cut-leader,
# 3.4) falls off [9.28, 14.42] s on 12 of 150 twins (4 below, 8 above), the same race as
# CUT_HEAL_TAIL; no leader change after the heal on 2 of 100.
CUT_HEAL_NO_CHANGE = ("in 2 of 100 model seeds no leader change follows the heal (1 in every real "
                      "trial so far); cause not found")
CUT_FORWARD = ("a renewal a follower forwards to the cut-off leader waits for the 7 s request "
               "timeout in etcd 3.4.23 (RenewHTTP on the peer round tripper, no read timeout), "
               "so a client on a follower loses its session at its deadline, while the model's "
               "follower re-sends it to the new leader after 1 s unanswered and its client "
               "keeps it; a client on the cut member keeps it only if the election after the "
               "heal ends before its deadline, a race on both sides")
# 3.5 only: the stuck member's `ensureLeadership` fails, and its renewals with it; the real
# holder, given that member's endpoint alone, loses its session, the model's client moves to
# another member and keeps it (a model client cannot be pinned), so the holder's lease lives
# and the waiter never acquires. Not run in CI (3.4.23 there); not measured since the rows got
# their model side.
PINNED = ("the real holder is given the stuck leader's endpoint only; on 3.5 its renewals "
          "fail there (ensureLeadership) and the model's client moves to another member and "
          "keeps its session, which a model client cannot be kept from")
# Twins placed alike (`_TwinSeeds`) are compared trial by trial: counts must match.
TWIN_COUNT_BAND = Band(abs=0.5, twins=True)
# The stuck leader answers the holder's keep-alives in some real trials: its lessor is still
# primary, and `waitAppliedIndex` returns at once when the apply loop had applied every
# committed entry before the backend's 100 ms commit blocked in the stuck fdatasync (a race
# not traced). The holder then keeps its session until the release, when its keep-alive is
# forwarded to the new leader and answered TTL 0. The model's stuck member answers every
# renewal behind its disk write, so it shows only the other outcome.
STUCK_ANSWERED = ("the stuck leader answered the holder's keep-alives (its apply loop had "
                  "caught up before its backend commit got stuck: a race); the model's stuck "
                  "member answers renewals only behind its disk write")


def _placement(trials: SharedTrials) -> Callable[[int], Optional[tuple]]:
    """Real trial k's lock clients on the struck member or not (None: the real side did not
    run, or did not see it)."""
    def placement(k: int) -> Optional[tuple]:
        tr = trials.done.get(k)
        return None if tr is None else (tr.holder_on_target, tr.waiter_on_target)
    return placement


def experiments(binary: str) -> list[Experiment]:
    """The rows for one etcd binary, named after its version."""
    v = f"etcdc {etcd_version(binary)}"
    kill_l, kill_f = _trials("kill-leader"), _trials("kill-follower")
    pause, cut = _trials("pause-leader"), _trials("cut-leader")
    version = _model_version(etcd_version(binary))

    def model(fault: str, trials: SharedTrials) -> ModelTrials:
        twins = _TwinSeeds(fault, version, _placement(trials))
        return ModelTrials(lambda k: _model_trial(fault, version, twins, k))
    m_kill_l, m_kill_f = model("kill-leader", kill_l), model("kill-follower", kill_f)
    m_pause, m_cut = model("pause-leader", pause), model("cut-leader", cut)
    # After a promotion the lessor extends every lease to now + election timeout + TTL
    # (lessor.Promote, 3.4 and 3.5 without checkpoints), so the probe's key goes TTL + 1 s
    # after the new leader (minus the watcher's 20 ms polling, plus up to the 500 ms sweep).
    promoted = harness.all_within(*PROMOTED_WINDOW,
                                  "probe deleted TTL + election timeout after the new leader")
    changes = ("etcd_server_leader_changes_seen_total, max over the others, from the SIGCONT "
               "or heal to 2 s after the probe's key is gone (at least 6 s)")
    first_poll = "first status poll (every 20 ms) of a survivor naming another leader"
    gap = ("puts through the survivors every 20 ms (0.5 s timeout): the longest time without "
           "a success in the 10 s from the {}; model: the longest time in which no member the "
           "writer reaches leads (its writes are the leader's own); ±0.5 s, the election's "
           "half span, and the real value up to a put's 0.5 s timeout + 20 ms above (a put "
           "forwarded to a leader that is gone waits it out)")
    probe_new = ("lessor.Promote(electionTimeout): the full TTL + 1 s again, then the next "
                 "500 ms sweep; model: the probe client's lease span ends (it granted, put its "
                 "key and was crashed). Within [5.7, 6.8] s on both sides: the sweep's phase "
                 "after the promotion is aligned by neither")
    probe_grant = ("the probe's grant request (model: the probe client's LeaseGrant, sent at "
                   "the holder's claim; its session's one keep-alive renews it a round trip "
                   "later) to its key's deletion")
    lock_note = "etcdctl lock printed an error (\"session expired\") or exited"
    cut_known = dict(known_difference=CUT_FORWARD, known_where=_every_trial)
    return [
        _real_row(f"{v} kill -9 leader: new leader seen, from kill", "s", kill_l,
                  lambda t: t.new_leader_s - t.fault_s, harness.all_within(0.5, 5.0, "a new leader"),
                  first_poll, m_kill_l, ELECTION_BAND),
        _real_row(f"{v} kill -9 leader: no write served, longest", "s", kill_l,
                  lambda t: t.write_gap_s, None, gap.format("kill"), m_kill_l,
                  Band(abs=0.5, real_above=WRITER_WAIT_S)),
        _real_row(f"{v} kill -9 leader: probe lease TTL 5 deleted, from new leader", "s",
                  kill_l, lambda t: t.probe_deleted_s - t.new_leader_s, promoted, probe_new,
                  m_kill_l, PROMOTED_BAND),
        _real_row(f"{v} kill -9 leader: probe lease TTL 5 deleted, from grant", "s", kill_l,
                  lambda t: t.probe_deleted_s - t.probe_grant_s, None,
                  probe_grant + ": 1.5 s to the kill, the election, TTL + 1 s and the sweep; "
                  "±0.75 s, half the election's span and half the sweep's", m_kill_l,
                  ELECTION_SWEEP_BAND),
        *_lock_rows(f"{v} kill -9 leader", kill_l, True, False, m_kill_l),
        _real_row(f"{v} kill -9 follower: new leader", "count", kill_f,
                  lambda t: float(t.new_leader_s < INF),
                  harness.all_zero("no new leader after a follower's crash"), "", m_kill_f,
                  COUNT_BAND),
        _real_row(f"{v} kill -9 follower: probe lease TTL 5 deleted, from grant", "s", kill_f,
                  lambda t: t.probe_deleted_s - t.probe_grant_s,
                  harness.all_within(*TTL_WINDOW, "deleted at its TTL"),
                  probe_grant + ": the leader's lessor keeps it, so TTL and the next sweep, at "
                  "a phase aligned by neither side: both within [4.9, 5.8] s", m_kill_f,
                  TTL_BAND),
        *_lock_rows(f"{v} kill -9 follower", kill_f, True, True, m_kill_f),
        _real_row(f"{v} SIGSTOP leader 3s: new leader seen, from stop", "s", pause,
                  lambda t: t.new_leader_s - t.fault_s,
                  harness.all_within(0.5, PAUSE_S, "a new leader while it is stopped"), first_poll,
                  m_pause, ELECTION_BAND),
        _real_row(f"{v} SIGSTOP leader 3s: no write served, longest", "s", pause,
                  lambda t: t.write_gap_s, None, gap.format("stop"), m_pause,
                  Band(abs=0.5, real_above=WRITER_WAIT_S)),
        _real_row(f"{v} SIGSTOP leader 3s: old leader follows, from SIGCONT", "s", pause,
                  lambda t: t.old_steps_down_s - t.resume_s, None,
                  "first status poll of the resumed member naming another leader; the "
                  "model's first step-down after its resume (the higher-term messages that "
                  "waited for it)", m_pause, Band(abs=0.1)),
        _real_row(f"{v} SIGSTOP leader 3s: leader changes after SIGCONT", "count", pause,
                  lambda t: t.changes_after_resume, None, changes, m_pause, COUNT_BAND),
        _real_row(f"{v} SIGSTOP leader 3s: probe lease TTL 5 deleted, from new leader", "s",
                  pause, lambda t: t.probe_deleted_s - t.new_leader_s, promoted, probe_new,
                  m_pause, PROMOTED_BAND),
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
                  "as for the kill, in the 10 s from the cut (the heal at 5 s included): with "
                  "pre-vote off the election after the heal is the longest; ±1.9 s, a round of "
                  "its race (one randomized election timeout), the real value up to a put's "
                  "timeout above", m_cut, Band(abs=HEAL_RACE_S, real_above=WRITER_WAIT_S),
                  known_difference=CUT_HEAL_TAIL, known_where=_every_trial),
        _real_row(f"{v} leader cut from peers 5s: leader changes after heal", "count", cut,
                  lambda t: t.changes_after_resume, None, changes, m_cut, COUNT_BAND,
                  known_difference=CUT_HEAL_NO_CHANGE, known_where=_every_trial),
        _real_row(f"{v} leader cut from peers 5s: probe lease TTL 5 deleted, from new leader",
                  "s", cut, lambda t: t.probe_deleted_s - t.new_leader_s, None,
                  "the election after the heal promotes a lessor again (TTL + 1 s from then, "
                  "then the sweep); ±2.15 s: a round of that election's race (1.9 s) and half "
                  "the sweep's span", m_cut, Band(abs=HEAL_RACE_S + 0.25),
                  known_difference=CUT_HEAL_TAIL, known_where=_every_trial),
        _real_row(f"{v} leader cut from peers 5s: lock TTL 5, holder's session ended", "count",
                  cut, lambda t: float(t.holder_ended_s < INF), None,
                  lock_note + "; the model's twin is a seed whose holder and waiter talk to the "
                  "cut member, or not, as the real trial's did (keep-alive streams per member, "
                  "grpc_server_started_total)", m_cut, TWIN_COUNT_BAND, **cut_known),
        _real_row(f"{v} leader cut from peers 5s: lock TTL 5, waiter acquired", "count", cut,
                  lambda t: float(t.waiter_acquired_s < INF), None,
                  "the waiter printed its key; twins placed as the row above", m_cut,
                  TWIN_COUNT_BAND, **cut_known),
        _lock_rows(f"{v} leader cut from peers 5s", cut, False, False, m_cut)[2],
        *_stuck_rows(v, version),
    ]


def _every_trial(_k: int) -> bool:
    return True


EXPERIMENTS = experiments(etcd_binary())
