"""Kubernetes Lease conformance experiments: client-go's real leader election vs the K8sLease model.

Real side: `clientgo/cmd/elector` runs ONE elector of k8s.io/client-go v0.37's
`tools/leaderelection` with a `resourcelock.LeaseLock` (the real lock, wrapped only to time
its Get/Create/Update calls) and prints JSON event lines stamped with CLOCK_MONOTONIC
(`time.monotonic()` here); `clientgo/cmd/apiserver` is a stand-in for the API server's Lease
endpoint with real resourceVersion semantics (409 Conflict on a stale version, 404 when
absent; docs/conformance.md). Each elector is its own process, and talks to the stand-in
through its own `Proxy`, so that the holder's connection can be cut. A paused holder is
SIGSTOPped. Like kube-controller-manager, an elector campaigns once: when it stops leading it
exits.

Behind a load balancer (`real_lb`): a fresh stand-in per trial serves one store on three
HTTPS listeners (API servers; client-go then talks HTTP/2, as to a real one), behind a
round-robin `proxy.Balancer` that two electors reach as their one server URL; one listener
is crashed (closed, its connections reset) or black-holed at the balancer.

Model side: `scenarios/k8s-*.ron` (`k8s-apiserver-lb.ron`: K8sLease on a 3-member etcd
behind three API servers), the same timings, members and fault, run through
`splitbrain run --trace`; the quantities are read generically from the trace (first `leader`
true at a member, `UpdateResp` delivered at the leader, first `leader` false at the holder).

Phase: trial k and model seed k strike 3 retry periods + frac(k x golden ratio) retry
periods after the holder's acquisition. The model's renewals are not on the real schedule
(its first renewal waits for the poll timer), so the sharp rows measure from the holder's last
successful renewal before the fault, which neither side's phase moves. The balancer rows
strike 0.15 + 0.3 frac(k x golden ratio) retry periods after a renewal of the holder on both
sides, so that on both the fault falls between two renewals, not on one in flight.

Run: python3 conformance/run.py --system k8s [-k substring] [--runs N]
"""

from __future__ import annotations

import json
import math
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from harness import (CONFORMANCE_DIR, SCENARIO_DIR, Band, Experiment, HarnessError, Proc,
                     free_port, make_temp_dir, splitbrain_trace, wait_until)
from proxy import Balancer, Proxy

NS_PER_S = 1_000_000_000
GOLDEN = 0.6180339887498949
BIN_DIR = CONFORMANCE_DIR / "clientgo" / "bin"
@dataclass(frozen=True)
class Timing:
    """client-go's LeaseDuration / RenewDeadline / RetryPeriod, in seconds."""

    lease_s: float
    renew_s: float
    retry_s: float

    def flags(self) -> list[str]:
        return [f"-lease-duration={self.lease_s}s", f"-renew-deadline={self.renew_s}s",
                f"-retry-period={self.retry_s}s"]

    def overrides(self) -> dict:
        return {"lease": f"{self.lease_s}s", "renew": f"{self.renew_s}s",
                "retry": f"{int(self.retry_s * 1000)}ms"}

    def label(self) -> str:
        return f"{self.lease_s:g}/{self.renew_s:g}/{self.retry_s:g} s"


SHORT = Timing(3, 2, 0.5)
DEFAULTS = Timing(15, 10, 2)  # component-base RecommendedDefaultLeaderElectionConfiguration
# A lease duration that is not whole seconds: client-go writes LeaseDurationSeconds =
# int(LeaseDuration / time.Second) = 1 into the record, and candidates wait that (isLeaseValid).
FRACTIONAL = Timing(1.9, 0.5, 0.2)
PAUSE_S = 5.0  # longer than SHORT's lease duration


def phase(k: int) -> float:
    return (k * GOLDEN) % 1.0


def fault_offset_s(k: int, timing: Timing) -> float:
    """How long after the holder's acquisition trial/seed k strikes. For k = 1..3 that is at
    least 0.15 retry periods from any renewal (the holder renews at once on acquiring and
    then every retry period plus a round trip), never during one: a SIGSTOP inside a renew round would leave the round's deadline
    passed at SIGCONT, and the old holder would stop at once instead of a RenewDeadline
    later."""
    return (3 + phase(k)) * timing.retry_s


# ---------------------------------------------------------------------------------------
# Real side


_SERVER: Optional[Proc] = None
_SERVER_PORT = 0
_DIR = None
_NAMES = 0


def _binaries() -> None:
    for name in ("apiserver", "elector"):
        if not (BIN_DIR / name).exists():
            raise HarnessError(f"{BIN_DIR / name} missing: conformance/ci.sh builds it "
                               "(cd conformance/clientgo && go build -o bin/ ./cmd/...)")


def _log_dir():
    global _DIR
    if _DIR is None:
        _DIR = make_temp_dir("k8s")
    return _DIR


def _server_port() -> int:
    """The API server stand-in, started on first use and reused (one Lease name per trial)."""
    global _SERVER, _SERVER_PORT
    _binaries()
    if _SERVER is None or not _SERVER.alive():
        _log_dir()
        _SERVER_PORT = free_port()
        _SERVER = Proc("apiserver", [str(BIN_DIR / "apiserver"), f"-port={_SERVER_PORT}"],
                       _DIR / "apiserver.log")
        wait_until(lambda: '"listening"' in (_DIR / "apiserver.log").read_text(), 10)
    return _SERVER_PORT


def shutdown() -> None:
    """Stop the API server stand-in (run.py calls this at the end)."""
    global _SERVER
    if _SERVER is not None:
        _SERVER.stop()
        _SERVER = None


class _Events:
    """A process's JSON event lines on stdout, collected as they come."""

    def __init__(self, proc: Proc):
        self.proc = proc
        self._events: list[dict] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("{"):
                with self._lock:
                    self._events.append(json.loads(line))

    def events(self, ev: Optional[str] = None) -> list[dict]:
        with self._lock:
            return [e for e in self._events if ev is None or e["ev"] == ev]


class Elector(_Events):
    """One elector process, behind its own proxy to the shared stand-in unless `server` (a
    URL) is given; `flags` are added to its command line."""

    def __init__(self, ident: str, lease: str, timing: Timing, server: Optional[str] = None,
                 flags: tuple[str, ...] = ()):
        self.ident = ident
        self.proxy = None
        if server is None:
            self.proxy = Proxy(_server_port())
            server = f"http://127.0.0.1:{self.proxy.port}"
        super().__init__(Proc(f"elector-{lease}-{ident}",
                              [str(BIN_DIR / "elector"), f"-server={server}", f"-id={ident}",
                               f"-lease={lease}", *timing.flags(), *flags],
                              _log_dir() / f"{lease}-{ident}.log", pipe_stdout=True))

    def first(self, ev: str) -> Optional[float]:
        times = [e["t"] for e in self.events(ev)]
        return times[0] if times else None

    def renewals(self, before: float = math.inf) -> list[float]:
        """End times of the successful updates and creates made while leading (the
        acquisition's, then each renewal's), before `before`."""
        started = self.first("started_leading")
        if started is None:
            return []
        acquired = [e["t"] for e in self.events() if e["ev"] in ("create", "update")
                    and e["ok"] and e["t"] <= started]
        renewed = [e["t"] for e in self.events("update") if e["ok"] and e["t"] > started]
        return [t for t in acquired[-1:] + renewed if t < before]

    def stop(self) -> None:
        self.proc.stop()
        if self.proxy is not None:
            self.proxy.close()


def _start(timing: Timing, n: int, server: Optional[str] = None,
           flags: tuple[str, ...] = ()) -> tuple[list[Elector], Elector]:
    """n electors on a fresh Lease; returns them and the one that acquired it."""
    global _NAMES
    _NAMES += 1
    lease = f"conf-{_NAMES}"
    electors = [Elector(chr(ord("a") + i), lease, timing, server, flags) for i in range(n)]
    try:
        holder = wait_until(lambda: next((e for e in electors if e.first("started_leading")),
                                         None), 10 + timing.retry_s * 3)
    except Exception:
        _stop_all(electors)
        raise
    return electors, holder


def _stop_all(electors: list[Elector]) -> None:
    for e in electors:
        e.stop()


def _takeover(electors: list[Elector], holder: Elector) -> Optional[float]:
    times = [e.first("started_leading") for e in electors if e is not holder]
    times = [t for t in times if t is not None]
    return min(times) if times else None


def _winner(electors: list[Elector], holder: Elector, t_new: float) -> Elector:
    return next(e for e in electors if e is not holder and e.first("started_leading") == t_new)


def _observed_time(elector: Elector, before: float) -> float:
    """client-go's observedTime of `elector` when it took over at `before`: the end of its
    last successful Get whose raw record differed from the one before (tryAcquireOrRenew,
    step 3: setObservedRecord when !bytes.Equal(observedRawRecord, raw))."""
    observed, raw = None, None
    for e in elector.events("get"):
        if e["t"] >= before:
            break
        if e["ok"] and e.get("raw") != raw:
            observed, raw = e["t"], e.get("raw")
    if observed is None:
        raise HarnessError(f"elector {elector.ident} read no record before it took over")
    return observed


def real_steady(k: int, timing: Timing = SHORT, window_s: float = 3.2) -> dict:
    """Two electors started together: the first acquisition (from the winner's own start,
    just before LeaderElector.Run) and the median gap between the holder's renewals."""
    electors, holder = _start(timing, 2)
    try:
        time.sleep(window_s)
        renewals = holder.renewals()
    finally:
        _stop_all(electors)
    if len(renewals) < 3:
        raise HarnessError(f"only {len(renewals)} renewals in {window_s}s")
    return {"acquire": holder.first("started_leading") - holder.first("start"),
            "renew": statistics.median(b - a for a, b in zip(renewals, renewals[1:]))}


def real_pause(k: int, timing: Timing = SHORT) -> dict:
    """Three electors; the holder SIGSTOPped for PAUSE_S, then SIGCONTed."""
    electors, holder = _start(timing, 3)
    try:
        time.sleep(max(0.0, holder.first("started_leading") + fault_offset_s(k, timing)
                       - time.monotonic()))
        t_stop = time.monotonic()
        holder.proc.pause()
        time.sleep(PAUSE_S)
        t_cont = time.monotonic()
        holder.proc.resume()
        wait_until(lambda: holder.first("stopped_leading"), timing.renew_s + timing.retry_s + 5)
        t_new = wait_until(lambda: _takeover(electors, holder), 5)
        t_down = holder.first("stopped_leading")
        last = holder.renewals(before=t_stop)[-1]
        observed = _observed_time(_winner(electors, holder, t_new), t_new)
    finally:
        _stop_all(electors)
    return {"takeover_from_last": t_new - last, "takeover_from_pause": t_new - t_stop,
            "takeover_from_observed": t_new - observed,
            "down_after_resume": t_down - t_cont, "overlap": t_down - t_new,
            "both_led": float(t_down > t_new)}


def real_cut(k: int, timing: Timing = SHORT) -> dict:
    """Three electors; the holder's proxy cut (sockets open, bytes held) for good."""
    electors, holder = _start(timing, 3)
    try:
        time.sleep(max(0.0, holder.first("started_leading") + fault_offset_s(k, timing)
                       - time.monotonic()))
        t_cut = time.monotonic()
        holder.proxy.cut()
        t_new = wait_until(lambda: _takeover(electors, holder), timing.lease_s * 2 + 5)
        t_down = wait_until(lambda: holder.first("stopped_leading"), timing.lease_s + 5)
        last = holder.renewals(before=t_cut)[-1]
        observed = _observed_time(_winner(electors, holder, t_new), t_new)
    finally:
        _stop_all(electors)
    return {"down_from_last": t_down - last, "takeover_from_last": t_new - last,
            "takeover_from_observed": t_new - observed,
            "overlap": t_down - t_new, "down_from_cut": t_down - t_cut,
            "takeover_from_cut": t_new - t_cut}


APISERVERS = 3  # behind the balancer


def _client_timeout_s(timing: Timing) -> float:
    """client-go's leader-election client Timeout: resourcelock.NewFromKubeconfig sets
    config.Timeout = max(1s, RenewDeadline / 2) "to keep a single hung request from forcing a
    leader loss"."""
    return max(1.0, timing.renew_s / 2)


def _strike_after_renewal_s(k: int, timing: Timing) -> float:
    """How long after the holder's reference renewal returned trial/seed k strikes: 0.15 to
    0.45 retry periods, inside the RetryPeriod wait before the next round on both sides (a
    renewal in flight at a crash would fail there and cost a retry period of its own)."""
    return (0.15 + 0.3 * phase(k)) * timing.retry_s


def _loss_window_s(timing: Timing) -> float:
    """How long after the holder's last renewal before the fault a loss is counted: its next
    round starts a retry period after that renewal and ends at most RenewDeadline later; plus
    0.3 s for the callback (three times the step-down rows' band)."""
    return timing.retry_s + timing.renew_s + 0.3


class _ApiServers(_Events):
    """The stand-in serving one store on `count` listeners, the API servers, over HTTPS
    (HTTP/2; its self-signed certificate for 127.0.0.1 is `ca_file`)."""

    def __init__(self, name: str, count: int):
        _binaries()
        self.ca_file = _log_dir() / f"{name}-ca.pem"
        ports = ",".join(str(free_port()) for _ in range(count))
        super().__init__(Proc(name, [str(BIN_DIR / "apiserver"), f"-ports={ports}",
                                     f"-cert-file={self.ca_file}"],
                              _log_dir() / f"{name}.log", pipe_stdout=True, pipe_stdin=True))
        self.ports = wait_until(lambda: self.events("listening"), 10)[0]["ports"]

    def crash(self, i: int) -> float:
        """Crash API server i (its listener closed, its connections reset); when it struck."""
        self.proc.stdin.write(f"crash {i}\n")
        self.proc.stdin.flush()
        return wait_until(lambda: next((e["t"] for e in self.events("crashed")
                                        if e["listener"] == i), None), 5)

    def renewals_by(self, holder: str) -> list[dict]:
        """The successful renewals (and acquisition) of `holder` the API servers applied."""
        return [e for e in self.events("request") if e["method"] in ("PUT", "POST")
                and e["code"] in (200, 201) and e["holder"] == holder]

    def stop(self) -> None:
        self.proc.stop()


_LB_TRIALS = 0


def real_lb(k: int, fault: str, timing: Timing = SHORT) -> dict:
    """Two electors reach APISERVERS API servers (one store) through a round-robin
    `Balancer`, their one API server URL. The first renewal of the holder that returns 2
    retry periods after its acquisition or later is the reference; _strike_after_renewal_s
    after it, the API server that applied it (the holder's connection's) is crashed (`fault`
    "crash") or black-holed ("hole")."""
    global _LB_TRIALS
    _LB_TRIALS += 1
    servers = _ApiServers(f"apiservers-lb-{_LB_TRIALS}", APISERVERS)
    balancer = None
    electors: list[Elector] = []
    try:
        balancer = Balancer(servers.ports)
        electors, holder = _start(timing, 2, f"https://127.0.0.1:{balancer.port}",
                                  (f"-ca-file={servers.ca_file}",
                                   f"-timeout={_client_timeout_s(timing):g}s"))
        after_s = holder.first("started_leading") + 2 * timing.retry_s
        ref = wait_until(lambda: next((t for t in holder.renewals() if t >= after_s), None),
                         timing.renew_s + 5)
        time.sleep(max(0.0, ref + _strike_after_renewal_s(k, timing) - time.monotonic()))
        target = servers.renewals_by(holder.ident)[-1]["listener"]
        if fault == "crash":
            t_fault = servers.crash(target)
        else:
            t_fault = time.monotonic()
            balancer.black_hole(target)
        last = holder.renewals(before=t_fault)[-1]
        if last != ref:
            raise HarnessError(f"the fault struck {t_fault - ref:.2f} s after the reference "
                               f"renewal, after the next one (the machine stalled)")
        end = last + _loss_window_s(timing)
        time.sleep(max(0.0, end - time.monotonic()))
        losses = [e["t"] for e in holder.events("stopped_leading") if e["t"] <= end]
        # Renewals the holder started after the fault and that succeeded: (start, end).
        renewed = [(e["t0"], e["t"]) for e in holder.events("update")
                   if e["ok"] and e["t0"] > t_fault and e["t"] <= end]
        # What its requests after the fault went on: its connections (local port, the
        # balancer's server) and the API servers that applied its renewals.
        conns = [e for e in holder.events("conn") if e["t"] > t_fault]
        ports = sorted({e["local"] for e in conns})
        backends = balancer.backends()
        served = [e["listener"] for e in servers.renewals_by(holder.ident) if e["t"] > t_fault]
        print(f"    trial {k}: {fault} of API server {target} (holder {holder.ident}) "
              f"{t_fault - last:.2f} s after its last renewal; {len(conns)} requests after it, "
              f"on connections {[(p, backends.get(p)) for p in ports]} (local port, server); "
              f"renewals applied by {served}; stopped leading: {bool(losses)}", flush=True)
    finally:
        _stop_all(electors)
        if balancer is not None:
            balancer.close()
        servers.stop()
    return {"losses": float(len(losses)),
            "gap": renewed[0][0] - last if renewed else math.inf,
            "down": losses[0] - last if losses else math.inf}


# ---------------------------------------------------------------------------------------
# Model side (docs/trace-format.md)


def _trace(name: str, seed: int, timing: Timing, **overrides) -> list[dict]:
    return splitbrain_trace(SCENARIO_DIR / name, seed, **timing.overrides(), **overrides)


def _s(ns: float) -> float:
    return ns / NS_PER_S


def _claims(trace: list[dict], members: int) -> list[tuple[int, int]]:
    """(time, node) of each event at which a member starts to lead (leader false -> true)."""
    leading = [False] * members
    out = []
    for e in trace:
        node = e["node"]
        if node is None or node >= members:
            continue
        if e["leader"] and not leading[node]:
            out.append((e["t"], node))
        leading[node] = e["leader"]
    return out


def _first_claim(trace: list[dict], members: int) -> tuple[int, int]:
    claims = _claims(trace, members)
    if not claims:
        raise HarnessError("no member led in the model run")
    return claims[0]


def _model_renewals(trace: list[dict], node: int, before_ns: float = math.inf) -> list[int]:
    """UpdateResp delivered at `node` while it leads after handling it (its claim and each
    successful renewal)."""
    return [e["t"] for e in trace if e["node"] == node and e["ev"] == "deliver"
            and e["what"] == "UpdateResp" and e["leader"] and e["t"] < before_ns]


def _fault_time(trace: list[dict]) -> int:
    for e in trace:
        if e["ev"] == "fault":
            return e["t"]
    raise HarnessError("no fault in the model run")


def _after_fault(trace: list[dict], members: int, holder: int,
                 t_fault: int) -> tuple[float, Optional[int], float]:
    """(first claim by another member after the fault, that member, the holder's first event
    with leader false after the fault); inf / None when none."""
    t_new, winner = min(((t, n) for t, n in _claims(trace, members)
                         if t > t_fault and n != holder), default=(math.inf, None))
    t_down = next((e["t"] for e in trace if e["node"] == holder and e["t"] > t_fault
                   and not e["leader"]), math.inf)
    return t_new, winner, t_down


def _model_observed(trace: list[dict], members: int, holder: int, winner: int,
                    t_new: float) -> int:
    """The winner's observedTime: the first GetResp it handled that the server sent after
    applying the holder's last Update (the model's records change with every renewal)."""
    server = members
    applied = [e["t"] for e in trace if e["node"] == server and e["ev"] == "deliver"
               and e["what"] == "Update" and e["from"] == holder and e["t"] < t_new]
    if not applied:
        raise HarnessError("no Update of the holder reached the server")
    seen = [e["t"] for e in trace if e["node"] == winner and e["ev"] == "deliver"
            and e["what"] == "GetResp" and e["sent"] > applied[-1] and e["t"] < t_new]
    if not seen:
        raise HarnessError(f"n{winner} read no record after the holder's last Update")
    return seen[0]


def model_steady(seed: int, timing: Timing = SHORT) -> dict:
    members = 2
    trace = _trace("k8s-steady.ron", seed, timing)
    t_claim, holder = _first_claim(trace, members)
    renewals = [t for t in _model_renewals(trace, holder) if t >= t_claim]
    if len(renewals) < 3:
        raise HarnessError(f"only {len(renewals)} renewals in the model run")
    return {"acquire": _s(t_claim),
            "renew": _s(statistics.median(b - a for a, b in zip(renewals, renewals[1:])))}


def _model_fault_run(name: str, seed: int, timing: Timing) -> tuple[list[dict], int, int]:
    """The scenario with its fault at the model's own acquisition + fault_offset_s(seed):
    a first run finds the acquisition (nothing before the fault depends on it)."""
    members = 3
    first = _trace(name, seed, timing, fault_at="4s")
    t_claim, holder = _first_claim(first, members)
    at_ns = int(t_claim + fault_offset_s(seed, timing) * NS_PER_S)
    trace = _trace(name, seed, timing, fault_at=f"{at_ns}ns")
    if _first_claim(trace, members) != (t_claim, holder):
        raise HarnessError("the model's acquisition moved between its two runs")
    return trace, holder, _fault_time(trace)


def model_pause(seed: int, timing: Timing = SHORT) -> dict:
    trace, holder, t_stop = _model_fault_run("k8s-holder-paused.ron", seed, timing)
    t_new, winner, t_down = _after_fault(trace, 3, holder, t_stop)
    t_cont = t_stop + PAUSE_S * NS_PER_S
    last = _model_renewals(trace, holder, t_stop)[-1]
    observed = _model_observed(trace, 3, holder, winner, t_new)
    return {"takeover_from_last": _s(t_new - last), "takeover_from_pause": _s(t_new - t_stop),
            "takeover_from_observed": _s(t_new - observed),
            "down_after_resume": _s(t_down - t_cont), "overlap": _s(t_down - t_new),
            "both_led": float(t_down > t_new)}


def model_cut(seed: int, timing: Timing = SHORT) -> dict:
    trace, holder, t_cut = _model_fault_run("k8s-holder-cut.ron", seed, timing)
    t_new, winner, t_down = _after_fault(trace, 3, holder, t_cut)
    last = _model_renewals(trace, holder, t_cut)[-1]
    observed = _model_observed(trace, 3, holder, winner, t_new)
    return {"down_from_last": _s(t_down - last), "takeover_from_last": _s(t_new - last),
            "takeover_from_observed": _s(t_new - observed),
            "overlap": _s(t_down - t_new), "down_from_cut": _s(t_down - t_cut),
            "takeover_from_cut": _s(t_new - t_cut)}


MODEL_FAULTS = {"crash": "Crash(ServiceOfLeader)",
                "hole": "Partition(Isolate(ServiceOfLeader))"}


def model_lb(seed: int, fault: str, timing: Timing = SHORT) -> dict:
    """`k8s-apiserver-lb.ron`: two electors, APISERVERS API servers on a 3-member etcd; the
    API server the holder uses (ServiceOfLeader) crashed or isolated, struck as the real one
    is: _strike_after_renewal_s after the first renewal that returned 2 retry periods after
    the acquisition (a first run, its fault late, finds both)."""
    members = 2
    name, overrides = "k8s-apiserver-lb.ron", {"fault": MODEL_FAULTS[fault],
                                               "apiservers": APISERVERS}
    first = _trace(name, seed, timing, fault_at="10s", **overrides)
    t_claim, holder = _first_claim(first, members)
    ref = next(t for t in _model_renewals(first, holder)
               if t >= t_claim + 2 * timing.retry_s * NS_PER_S)
    at_ns = int(ref + _strike_after_renewal_s(seed, timing) * NS_PER_S)
    trace = _trace(name, seed, timing, fault_at=f"{at_ns}ns", **overrides)
    t_fault = _fault_time(trace)
    resps = [e for e in trace if e["node"] == holder and e["ev"] == "deliver"
             and e["what"] == "UpdateResp" and e["leader"]]
    last_resp = [e for e in resps if e["t"] < t_fault][-1]
    if last_resp["t"] != ref:
        raise HarnessError("the model's run moved before its fault")
    struck = next(e["what"] for e in trace if e["ev"] == "fault")
    # The trace names a service process by its role ("apiserver-2"), an elector as n<id>.
    used = f"apiserver-{last_resp['from'] - members}"
    if f"{used} " not in struck + " ":
        raise HarnessError(f"the fault ({struck}) missed the API server of the holder's last "
                           f"renewal ({used}, n{last_resp['from']})")
    last = last_resp["t"]
    end = last + _loss_window_s(timing) * NS_PER_S
    losses, leading = [], True
    for e in trace:
        if e["node"] == holder and t_fault < e["t"] <= end:
            if leading and not e["leader"]:
                losses.append(e["t"])
            leading = e["leader"]
    # The start of the first renewal after the fault: the send of the Update it answered,
    # the holder's last Update an API server received before that answer.
    gap = math.inf
    first_after = next((e["t"] for e in resps if t_fault < e["t"] <= end), None)
    if first_after is not None:
        sent = [e["sent"] for e in trace if e["ev"] == "deliver" and e["what"] == "Update"
                and e["from"] == holder and e["t"] < first_after]
        gap = _s(sent[-1] - last)
    return {"losses": float(len(losses)), "gap": gap,
            "down": _s(losses[0] - last) if losses else math.inf}


class _Shared:
    """One trial measures several quantities; each row takes its value from each trial
    (real trial n run once, by the first row that needs it; model runs cached per seed)."""

    def __init__(self, real_trial: Callable[[int], dict], model_trial: Callable[[int], dict]):
        self._real_trial, self._model_trial = real_trial, model_trial
        self._real: dict[int, dict] = {}
        self._model: dict[int, dict] = {}

    def real(self, key: str) -> Callable[[], float]:
        count = [0]

        def run() -> float:
            count[0] += 1
            k = count[0]
            if k not in self._real:
                self._real[k] = self._real_trial(k)
            return self._real[k][key]
        return run

    def model(self, key: str) -> Callable[[int], float]:
        def run(seed: int) -> float:
            if seed not in self._model:
                self._model[seed] = self._model_trial(seed)
            return self._model[seed][key]
        return run


_STEADY = _Shared(real_steady, model_steady)
_PAUSE = _Shared(real_pause, model_pause)
_CUT = _Shared(real_cut, model_cut)
_CUT_FRACTIONAL = _Shared(lambda k: real_cut(k, FRACTIONAL),
                          lambda s: model_cut(s, FRACTIONAL))
_CUT_DEFAULTS = _Shared(lambda k: real_cut(k, DEFAULTS), lambda s: model_cut(s, DEFAULTS))
_LB_CRASH = _Shared(lambda k: real_lb(k, "crash"), lambda s: model_lb(s, "crash"))
_LB_HOLE = _Shared(lambda k: real_lb(k, "hole"), lambda s: model_lb(s, "hole"))


def _poll_band(timing: Timing) -> float:
    """A candidate's jittered poll gap is retry x (1 + U[0, 1.2)) after its last Get returned
    (wait.JitterUntil, JitterFactor 1.2); a takeover from the holder's last renewal holds two
    waits within such gaps (from the renewal to the Get that sees it, from observedTime +
    LeaseDurationSeconds to the next Get), each drawn on each side independently: the band is
    one whole gap, 2.2 retry
    periods. (1.1, the mean gap, failed a takeover row measured from the holder's last
    renewal on its first run: real 3.39/3.43/3.63 s, model 3.50/3.91/4.40 s.) Measured from
    the new holder's own observedTime, a takeover holds only the second wait."""
    return 2.2 * timing.retry_s


_LB_NOTE = (
    "two electors (client-go's leader-election client: HTTP/2 over TLS, Timeout max(1 s, "
    "RenewDeadline / 2) = 1 s as resourcelock.NewFromKubeconfig sets it) reach three API "
    "servers (one stand-in process, one Lease store, one HTTPS listener each) through a "
    "round-robin TCP balancer, their one server URL (model K8sLease(etcd_members: 3, "
    "apiservers: 3) on Stream). 0.15-0.45 retry periods after a renewal of the holder that "
    "returned 2 retry periods or more after its acquisition (the model's fault struck as far "
    "after its own such renewal), ")
_LB_HOLE_KNOWN = (
    "the model moves an elector to the next API server after any unanswered request "
    "(K8sClient::request, next_apiserver); client-go over HTTP/2 stays on the black-holed "
    "connection until the health check closes it, 45 s after the last answer (measured: "
    "45.0 s, 43 requests on the one connection, at 80/60/2 s), longer than the renew "
    "deadline: docs/algorithms/k8s-lease.md, \"The load balancer in front of the API "
    "servers\"; issue 46")
S = SHORT.label()
D = DEFAULTS.label()
F = FRACTIONAL.label()
_OBSERVED_NOTE = (
    "another elector's OnStartedLeading minus its observedTime (the end of its last Get that "
    "showed a changed record; model: its first GetResp sent after the holder's last Update "
    "was applied): client-go takes the lease at its first poll at or after observedTime + "
    "LeaseDurationSeconds (isLeaseValid), so in [L, L + 2.2 retry); ±2.2 retry periods, one "
    "whole jittered poll gap (retry x (1 + U[0, 1.2)), wait.JitterUntil, JitterFactor 1.2), "
    "drawn on each side independently")
EXPERIMENTS = [
    Experiment(
        name=f"k8s first acquisition, 2 electors, {S}", system="k8s", unit="s",
        real=_STEADY.real("acquire"), model=_STEADY.model("acquire"), band=Band(abs=0.05),
        note="elector's start (just before LeaderElector.Run; model t = 0) -> started leading: "
             "an immediate Get (404) and Create (model: Get, then Update); ±0.05 s for the "
             "real client's first TCP connection and Go's start-up of the HTTP client"),
    Experiment(
        name=f"k8s renew interval, {S}", system="k8s", unit="s",
        real=_STEADY.real("renew"), model=_STEADY.model("renew"), band=Band(abs=0.05),
        note="median gap between the holder's successful renewals (real: Update returned; "
             "model: UpdateResp delivered); client-go: a round starts RetryPeriod after the "
             "last one returned (wait.Until, sliding), so a gap is the retry period plus a "
             "loopback round trip; ±0.05 s"),
    Experiment(
        name=f"k8s holder SIGSTOP {PAUSE_S:g}s: takeover from observedTime, {S}",
        system="k8s", unit="s", real=_PAUSE.real("takeover_from_observed"),
        model=_PAUSE.model("takeover_from_observed"), band=Band(abs=_poll_band(SHORT)),
        note="L = 3 s: " + _OBSERVED_NOTE),
    Experiment(
        name=f"k8s holder SIGSTOP {PAUSE_S:g}s: takeover from pause, {S}",
        system="k8s", unit="s", real=_PAUSE.real("takeover_from_pause"),
        model=_PAUSE.model("takeover_from_pause"),
        band=Band(abs=_poll_band(SHORT) + SHORT.retry_s),
        note="SIGSTOP (model Pause(Leader)) at acquisition + (3 + frac(k x 0.618)) retry "
             "periods -> another elector's OnStartedLeading: the row above plus the wait "
             "from the holder's last renewal to a candidate's Get that shows a change, minus "
             "where the pause fell in the renewal period (which the model's schedule does "
             "not share); ±(2.2 + 1) retry periods"),
    Experiment(
        name=f"k8s holder SIGSTOP {PAUSE_S:g}s: old holder stops leading after SIGCONT, {S}",
        system="k8s", unit="s", real=_PAUSE.real("down_after_resume"),
        model=_PAUSE.model("down_after_resume"), band=Band(abs=0.1),
        note="SIGCONT -> OnStoppedLeading (model: resume -> leader false). client-go: the "
             "pause fell in renew's RetryPeriod wait, so at SIGCONT a new round starts with a "
             "fresh RenewDeadline; its fast path is off (lease no longer valid by its own "
             "observedTime), the slow path's Get shows the new holder and the round retries "
             "until its deadline: RenewDeadline after the resume. ±0.1 s (Go timers, "
             "loopback)"),
    Experiment(
        name=f"k8s holder SIGSTOP {PAUSE_S:g}s: both led at once (safety), {S}",
        system="k8s", unit="count", real=_PAUSE.real("both_led"),
        model=_PAUSE.model("both_led"), band=Band(abs=0.5),
        note="1 when the old holder's OnStoppedLeading came after the new holder's "
             "OnStartedLeading (model: step-down after the claim), else 0; exact. How long "
             "they overlapped is jitter-dominated (the takeover's poll gaps), so it is in "
             "docs/conformance.md, not a row: real 2.9-4.8 s in 9 trials on 2026-11-27"),
    Experiment(
        name=f"k8s holder cut: holder stops leading after last renewal, {S}",
        system="k8s", unit="s", real=_CUT.real("down_from_last"),
        model=_CUT.model("down_from_last"), band=Band(abs=0.1),
        note="holder's proxy cut (sockets open; model Partition(Isolate(Leader))) at "
             "acquisition + (3 + frac(k x 0.618)) retry periods -> OnStoppedLeading, from "
             "its last successful renewal: client-go's round starts RetryPeriod after that "
             "renewal returned and ends RenewDeadline later, so retry + renew = 2.5 s; "
             "±0.1 s (Go timers, loopback)"),
    Experiment(
        name=f"k8s holder cut: takeover from observedTime, {S}", system="k8s", unit="s",
        real=_CUT.real("takeover_from_observed"), model=_CUT.model("takeover_from_observed"),
        band=Band(abs=_poll_band(SHORT)), note="L = 3 s: " + _OBSERVED_NOTE),
    Experiment(
        name=f"k8s holder cut: takeover from observedTime, {F}", system="k8s", unit="s",
        real=_CUT_FRACTIONAL.real("takeover_from_observed"),
        model=_CUT_FRACTIONAL.model("takeover_from_observed"),
        band=Band(abs=_poll_band(FRACTIONAL)),
        note="LeaseDuration 1.9 s is written into the Lease as LeaseDurationSeconds 1 "
             "(int(LeaseDuration / time.Second)), which candidates wait: L = 1 s (the model "
             "writes and waits the same whole seconds): " + _OBSERVED_NOTE),
    Experiment(
        name=f"k8s holder cut: overlap (safety), {F}", system="k8s", unit="s",
        real=_CUT_FRACTIONAL.real("overlap"), model=_CUT_FRACTIONAL.model("overlap"),
        band=Band(abs=_poll_band(FRACTIONAL)),
        note="the cut holder's OnStoppedLeading (retry + renew = 0.7 s after its last "
             "renewal) minus the new holder's OnStartedLeading: > 0 when both led at once. "
             "The takeover comes 1 s (LeaseDurationSeconds) and up to a poll gap after an "
             "observedTime that, with renewals 0.2 s apart and the record's renew time in "
             "whole seconds (metav1.Time), may precede the last renewal by up to 0.8 s; so "
             "real values reach above 0 and lie within about (-0.74, 0.5]; ±2.2 retry periods"),
    Experiment(
        name=f"k8s holder cut: holder stops leading after last renewal, {D}", system="k8s",
        unit="s", real=_CUT_DEFAULTS.real("down_from_last"),
        model=_CUT_DEFAULTS.model("down_from_last"), band=Band(abs=0.1), runs=2,
        note="client-go's defaults (component-base RecommendedDefaultLeaderElectionConfiguration"
             "): retry + renew = 12 s after the last renewal; ±0.1 s"),
    Experiment(
        name=f"k8s holder cut: takeover from observedTime, {D}", system="k8s", unit="s",
        real=_CUT_DEFAULTS.real("takeover_from_observed"),
        model=_CUT_DEFAULTS.model("takeover_from_observed"),
        band=Band(abs=_poll_band(DEFAULTS)), runs=2, note="L = 15 s: " + _OBSERVED_NOTE),
    Experiment(
        name=f"k8s API server crash behind a balancer: holder lost the lease, {S}",
        system="k8s", unit="count", real=_LB_CRASH.real("losses"),
        model=_LB_CRASH.model("losses"), band=Band(abs=0.5),
        note=_LB_NOTE + "the API server that applied the holder's last renewal crashes (its "
             "listener closed, its connections reset; model Crash(ServiceOfLeader)). 1 if the "
             "holder stopped leading within retry + renew + 0.3 s of its last renewal, else 0; "
             "exact. client-go: the reset ends the HTTP/2 connection (the balancer closes the "
             "client's side), the next round dials a new one, which the balancer gives to "
             "another API server; the model moves the elector at once on the broken Stream "
             "connection (on_disconnect)"),
    Experiment(
        name=f"k8s API server crash behind a balancer: holder's renewal gap, {S}",
        system="k8s", unit="s", real=_LB_CRASH.real("gap"), model=_LB_CRASH.model("gap"),
        band=Band(abs=0.05),
        note="the same trials: the holder's last successful renewal before the crash "
             "(returned) -> the start of its first successful renewal after it: a whole "
             "number of retry periods, 1 when no try failed, 2 when the first went to the "
             "crashed API server; to the start, since the model's renewal goes through etcd "
             "(up to 0.1 s) and the stand-in's does not, and the new connection's TCP and "
             "TLS handshakes fall after the start. ±0.05 s (Go timers, loopback). The model "
             "on Datagram, K8sLease's default transport, sends the first try to the crashed "
             "API server: 1.0 s"),
    Experiment(
        name=f"k8s API server black-holed behind a balancer: holder lost the lease, {S}",
        system="k8s", unit="count", real=_LB_HOLE.real("losses"),
        model=_LB_HOLE.model("losses"), band=Band(abs=0.5),
        note=_LB_NOTE + "the API server that applied the holder's last renewal is "
             "black-holed: the balancer stops carrying its bytes both ways, sockets open, new "
             "connections it gives that server included (model Partition(Isolate("
             "ServiceOfLeader))). Counted as above. client-go keeps its HTTP/2 connection "
             "through timed-out requests (x/net/http2 v0.57: a cancelled stream holds one of "
             "the connection's stream slots, 250 here, until a PING is answered), until the "
             "health check "
             "closes it (ReadIdleTimeout 30 s + PingTimeout 15 s, apimachinery "
             "SetTransportDefaults): the round's Update (1 s timeout) and its slow path's Get "
             "go to the dead API server on the one connection, and the holder loses the lease. "
             "The model sends the try after an unanswered one to the next API server",
        known_difference=_LB_HOLE_KNOWN),
    Experiment(
        name=f"k8s API server black-holed behind a balancer: holder stops leading after "
             f"last renewal, {S}",
        system="k8s", unit="s", real=_LB_HOLE.real("down"), model=_LB_HOLE.model("down"),
        band=Band(abs=0.1),
        note="the same trials: the holder's last renewal before the black hole -> "
             "OnStoppedLeading: the round starts RetryPeriod after it and ends RenewDeadline "
             "later, retry + renew = 2.5 s, as for a cut holder (its one connection is as good "
             "as cut); ±0.1 s (Go timers, loopback). The model's holder does not stop (inf): "
             "its second try, a retry period after the first, goes to the next API server and "
             "renews, 1.0 s after its last renewal",
        known_difference=_LB_HOLE_KNOWN),
]
