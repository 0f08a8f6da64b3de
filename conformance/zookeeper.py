"""ZooKeeper experiments: a real standalone ZooKeeper 3.8 against splitbrain's model.

The real server runs from the Debian package's jar (`ZooKeeperServerMain`) with a generated
zoo.cfg: clientPortAddress=127.0.0.1, admin server off, data dir in a temp dir, tickTime
2000 ms or 500 ms. One server runs at a time; it is started once per tick and reused, and
every trial works under its own fresh path, deleted afterwards.

Real clients are separate processes: `zk_client.py` (kazoo, one or more sessions) for the
recipe, and the Java client of the package (`org.apache.zookeeper.ZooKeeperMain`, i.e.
zkCli.sh) for the Java client's disconnect rule. A client whose connection is cut goes
through a `Proxy`; SIGSTOP / SIGKILL go to the client's own process.

The model side runs `conformance/scenarios/zk-*.ron` (placeholders `{{...}}` filled per
experiment) and reads the quantity off the trace. The model starts every client at t=0 and
pings on an exact grid, so a fault at a fixed time would strike at the same ping phase for
every seed; scenarios take the fault time as a placeholder, drawn per seed from
`random.Random(seed)` over one ping interval, as the real trials strike at a random phase.

Times are `time.monotonic()` in every process (CLOCK_MONOTONIC is system-wide).
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import shutil
import socket
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Callable, Optional

import harness
from harness import Band, Experiment, HarnessError, Proc, Skip, free_port, make_temp_dir
from proxy import Proxy

HERE = Path(__file__).resolve().parent
SCEN = HERE / "scenarios"
JAVA = shutil.which("java") or "/usr/bin/java"
ZK_JAR = Path("/usr/share/java/zookeeper.jar")
SLF4J_SIMPLE = Path("/usr/share/java/slf4j-simple.jar")
JVM_FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]

TICK_2S_MS = 2000
TICK_05S_MS = 500
MODEL_LATENCY = 'Uniform("100us", "1ms")'  # one way on loopback, request handling included


# ---------------------------------------------------------------------------------------
# The real server


def _classpath() -> str:
    if not ZK_JAR.exists():
        raise Skip(f"{ZK_JAR} missing (apt-get install zookeeper)")
    jars = [ZK_JAR] + ([SLF4J_SIMPLE] if SLF4J_SIMPLE.exists() else [])
    return ":".join(str(j) for j in jars)


class ZkServer:
    """A standalone ZooKeeper on 127.0.0.1:<free port> at the given tick, by PID."""

    def __init__(self, tick_ms: int):
        self.tick_ms = tick_ms
        self.dir = make_temp_dir(f"zk{tick_ms}")
        self.port = free_port()
        cfg = self.dir / "zoo.cfg"
        cfg.write_text("\n".join([
            f"tickTime={tick_ms}",
            f"dataDir={self.dir / 'data'}",
            f"clientPort={self.port}",
            "clientPortAddress=127.0.0.1",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,cons,srvr,mntr",
            "maxClientCnxns=0",
            "",
        ]))
        argv = [JAVA, *JVM_FLAGS, "-cp", _classpath(),
                "-Dzookeeper.admin.enableServer=false",
                "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg)]
        self.proc = Proc(f"zookeeper-tick{tick_ms}", argv, self.dir / "server.log")
        try:
            harness.wait_until(lambda: self._ruok() or not self.proc.alive(), 60, 0.2)
        except TimeoutError:
            raise HarnessError(f"ZooKeeper did not answer ruok in 60 s; log {self.proc.log_path}")
        if not self.proc.alive():
            raise HarnessError(f"ZooKeeper exited at start: {self.proc.log_path.read_text()[-2000:]}")

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def four(self, cmd: str) -> str:
        """A four-letter-word command's answer."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(cmd.encode())
            chunks = []
            while True:
                data = s.recv(65536)
                if not data:
                    return b"".join(chunks).decode(errors="replace")
                chunks.append(data)

    def _ruok(self) -> bool:
        try:
            return self.four("ruok") == "imok"
        except OSError:
            return False

    def connections(self) -> dict[str, dict]:
        """`cons`: per session id, the connection's fields (to= timeout, lcxid= last xid...)."""
        out = {}
        for line in self.four("cons").splitlines():
            m = re.search(r"\((.*)\)", line)
            if not m:
                continue
            fields = dict(kv.split("=", 1) for kv in m.group(1).split(",") if "=" in kv)
            if "sid" in fields:
                out[fields["sid"]] = fields
        return out

    def stop(self) -> None:
        self.proc.stop()


_SERVER: Optional[ZkServer] = None


def server(tick_ms: int) -> ZkServer:
    """The running server at this tick; a server at another tick is stopped first."""
    global _SERVER
    if _SERVER is not None and (_SERVER.tick_ms != tick_ms or not _SERVER.proc.alive()):
        _SERVER.stop()
        _SERVER = None
    if _SERVER is None:
        _SERVER = ZkServer(tick_ms)
    return _SERVER


def shutdown() -> None:
    """Stop the server (run.py calls this at the end; the harness registry is the backstop)."""
    global _SERVER
    if _SERVER is not None:
        _SERVER.stop()
        _SERVER = None


# ---------------------------------------------------------------------------------------
# Real clients


class EventLog:
    """Lines from a child's stdout, each with its arrival time, collected by a thread."""

    def __init__(self, proc: Proc, parse: Callable[[str, float], Optional[dict]]):
        self.proc = proc
        self.events: list[dict] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, args=(parse,), daemon=True).start()

    def _read(self, parse) -> None:
        try:
            for line in self.proc.stdout:
                ev = parse(line.rstrip("\n"), time.monotonic())
                if ev is not None:
                    with self.cond:
                        self.events.append(ev)
                        self.cond.notify_all()
        except (ValueError, OSError):
            pass  # pipe closed at stop

    def where(self, pred: Callable[[dict], bool]) -> list[dict]:
        with self.cond:
            return [e for e in self.events if pred(e)]

    def wait_for(self, pred: Callable[[dict], bool], timeout_s: float, what: str = "") -> dict:
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while True:
                for e in self.events:
                    if pred(e):
                        return e
                left = deadline - time.monotonic()
                if left <= 0 or not self.proc.alive():
                    raise HarnessError(
                        f"{self.proc.name}: no {what or 'expected event'} within {timeout_s:g}s "
                        f"(alive={self.proc.alive()}, log {self.proc.log_path}); "
                        f"last events {self.events[-3:]}")
                self.cond.wait(min(left, 0.1))

    def wait_count(self, pred: Callable[[dict], bool], n: int, timeout_s: float,
                   what: str = "") -> list[dict]:
        self.wait_for(lambda _e: len(self.where(pred)) >= n, timeout_s, what)
        return self.where(pred)


def _parse_json_line(line: str, _arrived: float) -> Optional[dict]:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


class KazooProc:
    """A `zk_client.py` process; its JSON events in `.log` (times are its own monotonic)."""

    def __init__(self, name: str, hosts: str, timeout_s: float, count: int = 1,
                 create: str = "", watch: str = "", elect: str = "",
                 recipe: str = "predecessor"):
        argv = [sys.executable, str(HERE / "zk_client.py"), "--hosts", hosts,
                "--timeout-s", str(timeout_s), "--count", str(count), "--recipe", recipe]
        for flag, value in (("--create", create), ("--watch", watch), ("--elect", elect)):
            if value:
                argv += [flag, value]
        self.proc = Proc(name, argv, _logdir() / f"{name}-{uuid.uuid4().hex[:6]}.log",
                         pipe_stdout=True)
        self.log = EventLog(self.proc, _parse_json_line)

    def ready(self, timeout_s: float = 30) -> "KazooProc":
        self.log.wait_for(lambda e: e["ev"] == "ready", timeout_s, "ready")
        return self

    def sessions(self) -> list[str]:
        return [e["session"] for e in self.log.where(lambda e: e["ev"] == "connected")]

    def stop(self) -> None:
        self.proc.stop()


class JavaCliProc:
    """The Java client (ZooKeeperMain, as zkCli.sh runs it); stdout lines timestamped."""

    def __init__(self, name: str, hosts: str, timeout_ms: int):
        argv = [JAVA, *JVM_FLAGS, "-cp", _classpath(),
                "-Dorg.slf4j.simpleLogger.logFile=System.out",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "org.apache.zookeeper.ZooKeeperMain", "-timeout", str(timeout_ms),
                "-server", hosts]
        # stdin stays open: ZooKeeperMain exits at the end of its input.
        self.proc = Proc(name, argv, _logdir() / f"{name}-{uuid.uuid4().hex[:6]}.log",
                         pipe_stdout=True, pipe_stdin=True)
        self.log = EventLog(self.proc, lambda line, t: {"t": t, "line": line})

    def wait_line(self, pattern: str, timeout_s: float) -> dict:
        rx = re.compile(pattern)
        return self.log.wait_for(lambda e: rx.search(e["line"]) is not None, timeout_s, pattern)

    def stop(self) -> None:
        self.proc.stop()


_LOGDIR: Optional[Path] = None


def _logdir() -> Path:
    global _LOGDIR
    if _LOGDIR is None:
        _LOGDIR = make_temp_dir("zkclients")
    return _LOGDIR


def _require_kazoo() -> None:
    try:
        import kazoo  # noqa: F401
    except ImportError:
        raise Skip("kazoo is not installed for this python (use conformance/.venv/bin/python)")


def _trial_path(kind: str) -> str:
    return f"/conformance/{kind}-{uuid.uuid4().hex[:8]}"


def _delete_tree(srv: ZkServer, path: str) -> None:
    """Delete a trial's nodes (ephemerals are gone with their sessions; parents remain)."""
    from kazoo.client import KazooClient
    zk = KazooClient(hosts=srv.hosts, timeout=10)
    try:
        zk.start(timeout=15)
        zk.delete(path, recursive=True)
    except Exception:
        pass
    finally:
        zk.stop()
        zk.close()


class _Trial:
    """Stops every client and proxy of one trial, and deletes its path, however it ends."""

    def __init__(self, srv: ZkServer, path: str):
        self.srv, self.path = srv, path
        self.items: list = []

    def add(self, item):
        self.items.append(item)
        return item

    def __enter__(self) -> "_Trial":
        return self

    def __exit__(self, *exc) -> None:
        for item in reversed(self.items):
            (item.close if isinstance(item, Proxy) else item.stop)()
        _delete_tree(self.srv, self.path)


# One real trial can yield several quantities (from the pause and from the last ping, say).
# The first experiment of a family runs the trial; its siblings read the stored results in
# order, and run the trial themselves when nothing is stored (e.g. when `-k` selects one).
_STORED: dict[str, list[dict]] = {}


def shared_trial(family: str, key: str, trial: Callable[[], dict], first: bool) -> Callable[[], float]:
    def real() -> float:
        queue = _STORED.setdefault(family, [])
        if first or not queue:
            result = trial()
            if first:
                queue.append(result)
            return result[key]
        return queue.pop(0)[key]
    return real


# ---------------------------------------------------------------------------------------
# Model side


@functools.lru_cache(maxsize=256)
def _trace(scenario: str, seed: int, overrides: tuple) -> tuple:
    return tuple(harness.splitbrain_trace(SCEN / scenario, seed, **dict(overrides)))


def model_trace(scenario: str, seed: int, **overrides) -> tuple:
    overrides.setdefault("latency", MODEL_LATENCY)
    return _trace(scenario, seed, tuple(sorted(overrides.items())))


def _ms(value_ms: float) -> str:
    return f"{int(round(value_ms))}ms"


def _fault_at_ms(seed: int, base_ms: int, spread_ms: float) -> int:
    """The fault time for a seed: base + a draw over one ping interval (see module doc)."""
    return int(base_ms + random.Random(seed).uniform(0, spread_ms))


def _fault_time(events, kind: str = "fault") -> int:
    for e in events:
        if e["ev"] == kind:
            return e["t"]
    raise HarnessError(f"no {kind} event in the trace")


def _leader_before(events, t: int) -> int:
    """The node that believed it led at the last event before `t`."""
    lead = None
    for e in events:
        if e["t"] >= t:
            break
        if e["node"] is not None and e["local"] is not None:
            if e["leader"]:
                lead = e["node"]
            elif e["node"] == lead:
                lead = None
    if lead is None:
        raise HarnessError("no leader before the fault in the model trace")
    return lead


def _first(events, pred, what: str) -> dict:
    for e in events:
        if pred(e):
            return e
    raise HarnessError(f"model trace: no {what}")


def _s(ns: int) -> float:
    return ns / 1e9


def phase_band(width_s: float) -> Band:
    """The band for a time that is spread over an interval of `width_s` by a phase the
    experiment does not control (the last ping before a fault, the expiry bucket).

    Real and model values both land anywhere in that interval, so 3 samples of each need a
    slack of most of its width: with 0.75 x width, two sets of 3 uniform samples of the same
    interval give a spurious FAIL about 0.5 % of the time (half the width: 8 %). 0.1 s more
    absorbs scheduling noise. A model value further than that outside the real spread fails
    (for tick 0.5 s, T = 2 s: a model expiring at 2T/3, or a tick late, fails).
    """
    return Band(abs=round(0.75 * width_s + 0.1, 2))


# ---------------------------------------------------------------------------------------
# 1. Session timeout negotiation


def real_negotiated_s(tick_ms: int, ask_s: float) -> float:
    """Negotiated session timeout of a kazoo session asking for `ask_s`, as the server's
    `cons` reports it (`to=`). Real source: ZooKeeperServer.processConnectRequest clamps
    the requested timeout into [minSessionTimeout, maxSessionTimeout] = [2, 20] x tickTime.
    """
    _require_kazoo()
    srv = server(tick_ms)
    client = KazooProc("zk-negotiate", srv.hosts, ask_s).ready()
    try:
        sid = client.sessions()[0]
        conns = srv.connections()
        if sid not in conns:
            raise HarnessError(f"session {sid} not in cons: {list(conns)}")
        return int(conns[sid]["to"]) / 1000.0
    finally:
        client.stop()


def model_negotiated_s(tick_ms: int, ask_s: float, seed: int) -> float:
    """The model's negotiated timeout: it is not in the trace's columns, but the client pings
    every third of the granted timeout, so it is 3 x the interval between ping timers."""
    events = model_trace("zk-negotiate.ron", seed, tick=_ms(tick_ms), timeout=_ms(ask_s * 1000))
    pings = [e["local"] for e in events if e["ev"] == "timer" and e["what"] == "ping"
             and e["node"] == 0]
    if len(pings) < 3:
        raise HarnessError(f"model: {len(pings)} ping timers, need 3")
    gaps = [b - a for a, b in zip(pings, pings[1:])]
    return _s(3 * statistics.median(gaps))


def negotiation_experiments() -> list[Experiment]:
    cases = [(TICK_2S_MS, 1.0), (TICK_2S_MS, 10.0), (TICK_2S_MS, 60.0),
             (TICK_05S_MS, 0.3), (TICK_05S_MS, 4.0), (TICK_05S_MS, 30.0)]
    exps = []
    for tick_ms, ask_s in cases:
        lo, hi = 2 * tick_ms / 1000, 20 * tick_ms / 1000
        exps.append(Experiment(
            name=f"zk negotiate tick={tick_ms / 1000:g}s ask={ask_s:g}s",
            system="zookeeper", unit="s",
            real=functools.partial(real_negotiated_s, tick_ms, ask_s),
            model=functools.partial(model_negotiated_s, tick_ms, ask_s),
            band=Band(abs=0.01),
            note=f"granted timeout, clamped into [{lo:g}, {hi:g}] s; real from cons to=, "
                 "model as 3 x its ping interval (not printed by the model)",
        ))
    return exps


# ---------------------------------------------------------------------------------------
# 2./3. Ephemeral node deletion after the holder is paused or cut off


def _holder_and_watcher(trial: _Trial, srv: ZkServer, timeout_s: float, path: str):
    proxy = trial.add(Proxy(srv.port))
    holder = trial.add(KazooProc("zk-holder", f"127.0.0.1:{proxy.port}", timeout_s,
                                 create=path + "/holder")).ready()
    watcher = trial.add(KazooProc("zk-watcher", srv.hosts, 30.0, watch=path + "/holder")).ready()
    if not watcher.log.where(lambda e: e["ev"] == "watching" and e["exists"]):
        raise HarnessError("the watcher did not see the holder's node")
    return proxy, holder, watcher


def trial_expiry(tick_ms: int, timeout_s: float, fault: str) -> dict:
    """One holder (through a proxy) with an ephemeral node, one watcher (direct, exists
    watch). Fault: SIGSTOP the holder ("pause") or cut its proxy ("cut"). Measured at the
    watcher's NodeDeleted event: from the fault, and from the last bytes the proxy forwarded
    to the server before it (the holder's last ping: the session's last touch).
    Real source: SessionTrackerImpl.touchSession puts the session in the ExpiryQueue bucket
    roundToNextInterval(now + timeout); SessionTrackerImpl.run expires the bucket when due;
    the close deletes the ephemerals and DataTree/WatchManager fire the exists watches.
    """
    _require_kazoo()
    srv = server(tick_ms)
    path = _trial_path(f"expiry-{fault}")
    with _Trial(srv, path) as trial:
        proxy, holder, watcher = _holder_and_watcher(trial, srv, timeout_s, path)
        time.sleep(random.uniform(0.3, 0.3 + timeout_s / 3))  # settle, random ping phase
        t_fault = time.monotonic()
        if fault == "pause":
            holder.proc.pause()
        else:
            proxy.cut()
        deleted = watcher.log.wait_for(
            lambda e: e["ev"] == "watch" and e["type"] == "DELETED",
            timeout_s + tick_ms / 1000 + 10, "NodeDeleted at the watcher")
        t_last = proxy.last_to_server_s
        if t_last is None or t_last > t_fault + 0.05:
            raise HarnessError(f"proxy forwarded to the server after the {fault}")
        holder.proc.kill9()
        return {"from_fault_s": deleted["t"] - t_fault,
                "from_last_request_s": deleted["t"] - t_last}


def model_expiry(tick_ms: int, timeout_s: float, fault: str, key: str, seed: int) -> float:
    """The model's holder (leader of 2) paused / isolated at a per-seed time; measured at
    the watcher's NodeDeleted delivery, from the fault and from the holder's last request
    delivered to the server."""
    ping_ms = timeout_s * 1000 / 3
    at = _fault_at_ms(seed, 5000, ping_ms)
    scenario = "zk-pause.ron" if fault == "pause" else "zk-cut.ron"
    events = model_trace(scenario, seed, tick=_ms(tick_ms), timeout=_ms(timeout_s * 1000),
                         at=_ms(at))
    t_fault = _fault_time(events)
    holder = _leader_before(events, t_fault)
    service = 2
    deleted = _first(events, lambda e: e["t"] > t_fault and e["ev"] == "deliver"
                     and e["what"] == "NodeDeleted", "NodeDeleted after the fault")
    last_req = max(e["t"] for e in events if e["ev"] == "deliver" and e["node"] == service
                   and e["from"] == holder and e["t"] < deleted["t"])
    start = t_fault if key == "from_fault_s" else last_req
    return _s(deleted["t"] - start)


def expiry_experiments(tick_ms: int, timeout_s: float, fault: str) -> list[Experiment]:
    family = f"expiry-{fault}-{tick_ms}"
    trial = functools.partial(trial_expiry, tick_ms, timeout_s, fault)
    tick_s = tick_ms / 1000
    verb = "paused (SIGSTOP)" if fault == "pause" else "cut off (proxy)"
    ping_s = timeout_s / 3
    rows = []
    for key, first, label, band, expect in (
            ("from_last_request_s", True, "from last ping", phase_band(tick_s),
             f"expect (T, T+tick] = ({timeout_s:g}, {timeout_s + tick_s:g}] s; "
             f"band ±(0.75 tick + 0.1 s)"),
            ("from_fault_s", False, f"from {fault}", phase_band(ping_s + tick_s),
             f"expect (T - ping interval, T+tick] (kazoo pings after T/3 minus 10-400 ms "
             f"jitter of idle, the model every T/3); band ±(0.75 (T/3 + tick) + 0.1 s)")):
        rows.append(Experiment(
            name=f"zk ephemeral deleted, holder {fault} {label} tick={tick_s:g}s T={timeout_s:g}s",
            system="zookeeper", unit="s",
            real=shared_trial(family, key, trial, first),
            model=functools.partial(model_expiry, tick_ms, timeout_s, fault, key),
            band=band,
            note=f"holder {verb}; time to NodeDeleted at a watcher, {label}"
                 + (" (the proxy's last forward to the server)" if first else "")
                 + f"; {expect}",
        ))
    return rows


# ---------------------------------------------------------------------------------------
# 4. Disconnect detection


def trial_disconnect(tick_ms: int, timeout_s: float) -> dict:
    """The Java client (ZooKeeperMain) and a kazoo client, each through its own proxy; both
    proxies cut at once. Measured: when each client reports the disconnect (Java: "Client
    session timed out, have not heard from server" / state:Disconnected; kazoo: SUSPENDED),
    from the cut and from the last bytes its proxy forwarded to it.
    Real source: ClientCnxn.SendThread.run, to = readTimeout - idleRecv, readTimeout =
    2/3 of the negotiated timeout (ClientCnxn.SendThread.onConnected); kazoo:
    ConnectionHandler._connect_loop raises ConnectionDropped when a ping sent after
    read_timeout/2 minus jitter of idle is still unanswered at the next such deadline.
    """
    _require_kazoo()
    srv = server(tick_ms)
    path = _trial_path("disconnect")
    with _Trial(srv, path) as trial:
        pj, pk = trial.add(Proxy(srv.port)), trial.add(Proxy(srv.port))
        java = trial.add(JavaCliProc("zk-java-cli", f"127.0.0.1:{pj.port}",
                                     int(timeout_s * 1000)))
        kz = trial.add(KazooProc("zk-kazoo", f"127.0.0.1:{pk.port}", timeout_s)).ready()
        java.wait_line(r"state:SyncConnected", 30)
        time.sleep(random.uniform(0.5, 0.5 + timeout_s / 3))  # a few pings, random phase
        t_cut = time.monotonic()
        pj.cut()
        pk.cut()
        heard_j, heard_k = pj.last_to_client_s, pk.last_to_client_s
        j = java.wait_line(r"have not heard from server|state:Disconnected", timeout_s + 10)
        k = kz.log.wait_for(lambda e: e["ev"] == "state" and e["state"] == "SUSPENDED",
                            timeout_s + 10, "kazoo SUSPENDED")
        return {"java_from_cut_s": j["t"] - t_cut, "java_from_heard_s": j["t"] - heard_j,
                "kazoo_from_cut_s": k["t"] - t_cut, "kazoo_from_heard_s": k["t"] - heard_k}


def model_disconnect(tick_ms: int, timeout_s: float, key: str, seed: int) -> float:
    """The model's isolated leader's disconnect timer (it steps down then: `leader` turns
    false), from the cut or from the last message it received before the cut."""
    at = _fault_at_ms(seed, 5000, timeout_s * 1000 / 3)
    events = model_trace("zk-cut.ron", seed, tick=_ms(tick_ms), timeout=_ms(timeout_s * 1000),
                         at=_ms(at))
    t_cut = _fault_time(events)
    holder = _leader_before(events, t_cut)
    gone = _first(events, lambda e: e["t"] >= t_cut and e["node"] == holder
                  and e["ev"] == "timer" and e["what"] == "disconnect" and not e["leader"],
                  "disconnect of the isolated leader")
    heard = max(e["t"] for e in events if e["node"] == holder and e["ev"] == "deliver"
                and e["t"] < t_cut)
    return _s(gone["t"] - (t_cut if key.endswith("from_cut_s") else heard))


_KAZOO_NOTES: dict[str, list[float]] = {}


def disconnect_experiments(tick_ms: int, timeout_s: float) -> list[Experiment]:
    family = f"disconnect-{tick_ms}"
    tick_s = tick_ms / 1000

    def trial() -> dict:
        result = trial_disconnect(tick_ms, timeout_s)
        for k in ("kazoo_from_cut_s", "kazoo_from_heard_s"):
            _KAZOO_NOTES.setdefault(k, []).append(result[k])
        exps[1].note = _disconnect_note(timeout_s)
        return result

    rule = 2 * timeout_s / 3
    exps = [
        Experiment(
            name=f"zk disconnect seen, from cut (Java client) T={timeout_s:g}s",
            system="zookeeper", unit="s",
            real=shared_trial(family, "java_from_cut_s", trial, True),
            model=functools.partial(model_disconnect, tick_ms, timeout_s, "java_from_cut_s"),
            band=phase_band(timeout_s / 3),
            note=f"Java rule: nothing heard for 2T/3 = {rule:.2f} s; from the cut that is "
                 f"2T/3 minus the time since the last answer before it, so in "
                 f"(2T/3 - ping interval, 2T/3] (Java pings after T/3 idle, 1 s earlier "
                 f"once idle over 1 s; the model every T/3); band ±(0.75 T/3 + 0.1 s)"),
        Experiment(
            name=f"zk disconnect seen, from last heard (Java client) T={timeout_s:g}s",
            system="zookeeper", unit="s",
            real=shared_trial(family, "java_from_heard_s", trial, False),
            model=functools.partial(model_disconnect, tick_ms, timeout_s, "java_from_heard_s"),
            band=Band(abs=0.15),
            note=_disconnect_note(timeout_s)),
    ]
    return exps


def _disconnect_note(timeout_s: float) -> str:
    def spread(k: str) -> str:
        v = _KAZOO_NOTES.get(k)
        if not v:
            return "not measured"
        return f"{min(v):.2f}/{statistics.median(v):.2f}/{max(v):.2f} s"
    return (f"expect 2T/3 = {2 * timeout_s / 3:.2f} s after the last byte received. "
            f"kazoo (not the verdict's client) reports SUSPENDED earlier: from cut "
            f"{spread('kazoo_from_cut_s')}, from last heard {spread('kazoo_from_heard_s')} "
            f"(min/med/max): it drops the connection when a ping sent after read_timeout/2 "
            f"minus 10-400 ms jitter is unanswered one such interval later")


# ---------------------------------------------------------------------------------------
# 5. Herd vs predecessor: waiters notified when the leader's node goes


def real_notified(n: int, recipe: str) -> float:
    """N candidates (the leader in its own process with a 1 s session, N-1 waiters in
    another); SIGKILL the leader; count the waiters' watch notifications until 1 s after
    the next leader's claim. Real source: WatchManager.triggerWatch on the delete fires
    the exists watches on the node (predecessor: one waiter) and the child watches on the
    parent (herd: every waiter)."""
    _require_kazoo()
    srv = server(TICK_05S_MS)
    path = _trial_path(f"notify-{recipe}-{n}")
    with _Trial(srv, path) as trial:
        leader = trial.add(KazooProc("zk-leader", srv.hosts, 1.0, elect=path, recipe=recipe))
        leader.ready().log.wait_for(lambda e: e["ev"] == "leader", 10, "leader")
        waiters = trial.add(KazooProc("zk-waiters", srv.hosts, 4.0, count=n - 1, elect=path,
                                      recipe=recipe)).ready(60)
        time.sleep(0.5)  # the herd's joins fire child watches; let them settle
        t_kill = time.monotonic()
        leader.proc.kill9()
        claim = waiters.log.wait_for(lambda e: e["ev"] == "leader", 15, "next leader")
        time.sleep(1.0)
        return float(len(waiters.log.where(lambda e: e["ev"] == "notified"
                                           and e["t"] > t_kill)))


def model_notified(n: int, recipe: str, seed: int) -> float:
    """Watch notifications (NodeDeleted / ChildrenChanged deliveries) to the members after
    the leader's crash; nothing else changes the children in that run."""
    events = model_trace("zk-notify.ron", seed, nodes=n,
                         recipe="Herd" if recipe == "herd" else "Predecessor")
    t_crash = _fault_time(events)
    return float(sum(1 for e in events if e["t"] > t_crash and e["ev"] == "deliver"
                     and e["what"] in ("NodeDeleted", "ChildrenChanged")))


def notify_experiments() -> list[Experiment]:
    exps = []
    for recipe in ("herd", "predecessor"):
        for n in (5, 20):
            expect = n - 1 if recipe == "herd" else 1
            exps.append(Experiment(
                name=f"zk waiters notified, {recipe} N={n}", system="zookeeper", unit="count",
                real=functools.partial(real_notified, n, recipe),
                model=functools.partial(model_notified, n, recipe),
                band=Band(abs=0.5),
                note=f"leader killed (-9); expect {expect}; exact match required"))
    return exps


# ---------------------------------------------------------------------------------------
# 6. Failover after kill -9 of the leader


def real_failover_s(tick_ms: int, timeout_s: float) -> float:
    """Leader and successor (predecessor recipe) in separate processes; SIGKILL the leader;
    time until the successor claims. The server keeps a session whose connection closed
    until it expires (NIOServerCnxn.close does not close the session), so this is the
    expiry of the leader's session plus NodeDeleted and one getChildren round trip."""
    _require_kazoo()
    srv = server(tick_ms)
    path = _trial_path("failover")
    with _Trial(srv, path) as trial:
        leader = trial.add(KazooProc("zk-leader", srv.hosts, timeout_s, elect=path))
        leader.ready().log.wait_for(lambda e: e["ev"] == "leader", 10, "leader")
        nxt = trial.add(KazooProc("zk-successor", srv.hosts, timeout_s, elect=path)).ready()
        nxt.log.wait_for(lambda e: e["ev"] == "waiting", 10, "waiting")
        time.sleep(random.uniform(0.3, 0.3 + timeout_s / 3))
        t_kill = time.monotonic()
        leader.proc.kill9()
        claim = nxt.log.wait_for(lambda e: e["ev"] == "leader", timeout_s + tick_ms / 1000 + 10,
                                 "successor's claim")
        return claim["t"] - t_kill


def model_failover_s(tick_ms: int, timeout_s: float, seed: int) -> float:
    at = _fault_at_ms(seed, 5000, timeout_s * 1000 / 3)
    events = model_trace("zk-failover.ron", seed, tick=_ms(tick_ms),
                         timeout=_ms(timeout_s * 1000), at=_ms(at))
    t_crash = _fault_time(events)
    old = _leader_before(events, t_crash)
    claim = _first(events, lambda e: e["t"] > t_crash and e["leader"] and e["node"] is not None
                   and e["local"] is not None and e["node"] != old, "next leader")
    return _s(claim["t"] - t_crash)


def failover_experiment(tick_ms: int, timeout_s: float) -> Experiment:
    tick_s = tick_ms / 1000
    return Experiment(
        name=f"zk failover after kill -9 tick={tick_s:g}s T={timeout_s:g}s", system="zookeeper",
        unit="s", real=functools.partial(real_failover_s, tick_ms, timeout_s),
        model=functools.partial(model_failover_s, tick_ms, timeout_s),
        band=phase_band(timeout_s / 3 + tick_s),
        note=f"kill to the successor's claim; expect (T - ping interval, T + tick] plus a "
             f"round trip; band ±(0.75 (T/3 + tick) + 0.1 s)")


# ---------------------------------------------------------------------------------------
# 7. Requests of waiters while they wait


WAITERS = 20
WAIT_WINDOW_S = 20.0


def real_waiter_requests(timeout_s: float) -> float:
    """20 waiters behind a stable leader for 20 s: the requests they send, from the server's
    own per-connection last cxid (`cons` lcxid; pings carry xid -2 and do not move it).
    A waiter of the recipe sends nothing but pings while its watch is set."""
    _require_kazoo()
    srv = server(TICK_05S_MS)
    path = _trial_path("waiters")
    with _Trial(srv, path) as trial:
        leader = trial.add(KazooProc("zk-leader", srv.hosts, timeout_s, elect=path))
        leader.ready().log.wait_for(lambda e: e["ev"] == "leader", 10, "leader")
        waiters = trial.add(KazooProc("zk-waiters", srv.hosts, timeout_s, count=WAITERS,
                                      elect=path)).ready(60)
        sids = waiters.sessions()
        time.sleep(0.5)
        before = _lcxids(srv, sids)
        time.sleep(WAIT_WINDOW_S)
        after = _lcxids(srv, sids)
        if any(after[s] < before[s] for s in sids):
            raise HarnessError("a waiter reconnected during the window (lcxid went back)")
        return float(sum(after[s] - before[s] for s in sids))


def _lcxids(srv: ZkServer, sids: list[str]) -> dict[str, int]:
    conns = srv.connections()
    missing = [s for s in sids if s not in conns]
    if missing:
        raise HarnessError(f"waiter sessions missing from cons: {missing}")
    return {s: int(conns[s]["lcxid"], 16) for s in sids}


def model_waiter_requests(timeout_s: float, seed: int) -> float:
    """Requests other than pings that the model's waiters (every member but the leader)
    send in a 20 s window from t = 3 s, with a stable leader."""
    events = model_trace("zk-waiters.ron", seed, timeout=_ms(timeout_s * 1000))
    service = WAITERS + 1
    start_ns, end_ns = 3 * 10**9, int((3 + WAIT_WINDOW_S) * 1e9)
    leader = _leader_before(events, start_ns)
    return float(sum(1 for e in events if e["ev"] == "deliver" and e["node"] == service
                     and e["from"] != leader and e["what"] != "Ping"
                     and start_ns <= e["sent"] < end_ns))


def waiter_requests_experiment(timeout_s: float) -> Experiment:
    return Experiment(
        name=f"zk requests by {WAITERS} waiters in {WAIT_WINDOW_S:g}s T={timeout_s:g}s",
        system="zookeeper", unit="count",
        real=functools.partial(real_waiter_requests, timeout_s),
        model=functools.partial(model_waiter_requests, timeout_s),
        band=Band(abs=1),
        note="pings excluded; a real waiter only waits on its watch, and so does the "
             "model's on the Stream transport (its default)")


# ---------------------------------------------------------------------------------------

EXPERIMENTS: list[Experiment] = [
    # tick 2 s first (one server at a time), then tick 0.5 s
    *[e for e in negotiation_experiments() if "tick=2s" in e.name],
    *expiry_experiments(TICK_2S_MS, 4.0, "pause"),
    *expiry_experiments(TICK_2S_MS, 4.0, "cut"),
    *[e for e in negotiation_experiments() if "tick=0.5s" in e.name],
    *expiry_experiments(TICK_05S_MS, 2.0, "pause"),
    *expiry_experiments(TICK_05S_MS, 2.0, "cut"),
    *disconnect_experiments(TICK_05S_MS, 3.0),
    *notify_experiments(),
    failover_experiment(TICK_05S_MS, 2.0),
    waiter_requests_experiment(4.0),
]
