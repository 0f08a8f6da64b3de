"""etcd conformance experiments: a real single-member etcd 3.4 and etcdctl vs the Etcd model.

Every experiment runs one situation against the real server (conformance/etcd_client.py) and
the same situation through splitbrain (conformance/scenarios/etcd-*.ron), and measures the
same quantity on both sides. The model side reads the quantity from the trace generically
(message names, `sent` columns, `leader` flags): nothing here assumes the model's timing.

Phase: where a fault strikes relative to the keep-alive schedule decides several of these
times. Real trial k (1-based, per experiment) and model seed k strike at the same offset
after the holder's acquisition, 1.5 s + frac(k x golden ratio) x 1 s, so both sides sample
the same phases. The server's own phase, when its lessor sweeps every 500 ms, is not ours to
choose: in the lease-life, SIGSTOP, kill and cut trials a probe lease measures it on the real
server, and the twin model run sweeps at the same phase after the same moment (`lessor_phase`);
in the restart trials the model draws it per seed and the band covers it.

Trials that measure several quantities at once (the cut-off holder, the restart, the 1 s
lease) run once per trial index and hand each row its value (`_Shared`). Two experiments
run several leases or locks per trial, because a single one would make the verdict depend
on luck: the SIGSTOP expiry averages 4 leases spread over the server's 500 ms expiry sweep
(the model averages as many runs with shifted schedules), and the cut-off holder takes the
worst overlap of 6 locks (see CUT_PAIRS).

Run: python3 conformance/run.py --system etcd [-k substring] [--runs N]
"""

from __future__ import annotations

import math
import re
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Optional

from etcd_client import EtcdServer, Etcdctl, granted_ttl_s, lease_id
from harness import (SCENARIO_DIR, Band, Experiment, HarnessError, first_claim,
                     splitbrain_trace)
from proxy import Proxy

NS_PER_S = 1_000_000_000
GOLDEN = 0.6180339887498949
LOCK_TTL_S = 2  # the TTL of every `etcdctl lock` here (and of the model's scenarios)

# ---------------------------------------------------------------------------------------
# Shared pieces


_SERVER: Optional[EtcdServer] = None
_NAMES = 0


def _server() -> EtcdServer:
    """The one etcd of this module, started on first use and reused across experiments."""
    global _SERVER
    if _SERVER is None:
        _SERVER = EtcdServer()
    if _SERVER.proc is None or not _SERVER.proc.alive():
        _SERVER.stop()  # reaps a server that died (or was left stopped by a failed restart)
        _SERVER.start()
    return _SERVER


def shutdown() -> None:
    """Stop the etcd server (run.py calls this at the end)."""
    global _SERVER
    if _SERVER is not None:
        _SERVER.close()
        _SERVER = None


def _unique(prefix: str) -> str:
    global _NAMES
    _NAMES += 1
    return f"conf-{prefix}-{_NAMES}"


def phase(k: int) -> float:
    """The fault phase of trial/seed k, in [0, 1): frac(k x golden ratio)."""
    return (k * GOLDEN) % 1.0


def fault_offset_s(k: int) -> float:
    """How long after the holder's acquisition trial/seed k strikes."""
    return 1.5 + phase(k)


def _dur(ns: float) -> str:
    """A scenario duration of a whole number of nanoseconds."""
    return f"{int(round(ns))}ns"


class _Counter:
    """Trial numbers per experiment (1-based), matching the model's seeds."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n


class _Shared:
    """One trial measures several quantities; each row takes its value from each trial.

    Real: run n of a row reads trial n, running it if no row has yet (so a trial that raised
    is run again, under the same number, by the next row that needs it: a model seed always
    meets the trial of its own number). Model: one simulation per seed, cached.
    """

    def __init__(self, real_trial: Callable[[int], dict], model_trial: Callable[[int], dict]):
        self._real_trial = real_trial
        self._model_trial = model_trial
        self._real: dict[int, dict] = {}
        self._model: dict[int, dict] = {}

    def real(self, key: str) -> Callable[[], float]:
        runs = _Counter()

        def run() -> float:
            k = runs.next()
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


def _stop_all(*procs) -> None:
    for p in procs:
        if p is not None:
            p.stop()


# The server's lessor sweep (lease/lessor.go, runLoop: every 500 ms).
LESSOR_SWEEP_S = 0.5


def _start_sweep_probe(srv: EtcdServer) -> Etcdctl:
    """A lease (TTL 2 s) that nobody keeps alive, with a key on it and a watch on that key:
    the DELETE arrives when the lessor's sweep revoked it (plus the revoke's raft write and
    the watch, the same path as a waiter's), which places the server's sweeps. A real server
    sweeps every 500 ms from its own start (lease/lessor.go, runLoop), a phase no client sees;
    when a dead or cut-off holder's lease goes depends on it, so a model twin takes it as its
    `lessor_phase` instead of drawing a phase of its own. Two errors remain, both a few
    milliseconds: the phase is when the watch printed the DELETE, so the real revoke-to-watch
    delay is in it and the model adds its own on top; and the sweep loop drifts (each pass is
    500 ms plus its own work) between the probe's expiry, 2-2.5 s after it starts, and the
    trial's, a few passes later."""
    key = _unique("sweep-probe")
    watch = Etcdctl(srv, "watch", key, name=f"watch-{key}")
    lease = lease_id(srv.ctl("lease", "grant", str(LOCK_TTL_S)))
    srv.ctl("put", key, "v", f"--lease={lease}")
    return watch


def _sweep_phase_s(t_probe_deleted_s: float, t_ref_s: float) -> float:
    """When the probe saw its key deleted, seconds after `t_ref_s` (a holder printing its key, a
    lease's last answer), mod 500 ms."""
    return (t_probe_deleted_s - t_ref_s) % LESSOR_SWEEP_S


def _lessor_phase_ron(t_ref_ns: float, phase_s: Optional[float]) -> str:
    """The model's `lessor_phase` (a RON Option) that sweeps `phase_s` after `t_ref_ns` (its
    claim, its last answer), as the real twin's server did after the same moment; None (drawn
    per seed) without a twin."""
    if phase_s is None:
        return "None"
    sweep_ns = int(LESSOR_SWEEP_S * NS_PER_S)
    return f'Some("{int(round(t_ref_ns + phase_s * NS_PER_S)) % sweep_ns}ns")'


def _check_same_until(first_ns: float, second_ns: float, what: str) -> None:
    """The model's second run must agree with its first up to the fault: the first run found
    `what` there, and the second run's lessor phase was derived from it."""
    if first_ns != second_ns:
        raise HarnessError(f"the model's {what} moved between its two runs: "
                           f"{first_ns} -> {second_ns} ns")


# ---------------------------------------------------------------------------------------
# Trace reading (docs/trace-format.md)


def _trace(name: str, seed: int, **overrides) -> list[dict]:
    return splitbrain_trace(SCENARIO_DIR / name, seed, **overrides)


def _fault(trace: list[dict], pattern: str) -> tuple[int, Optional[int]]:
    """Time and (first) target member of the first fault whose description matches the
    regex `pattern` (descriptions look like "crash n0 (leader)")."""
    for e in trace:
        if e["ev"] == "fault" and re.search(pattern, e["what"]):
            m = re.search(r"\bn(\d+)\b", e["what"])
            return e["t"], (int(m.group(1)) if m else None)
    raise HarnessError(f"no fault matching {pattern!r} in the trace (skipped? no leader?)")



def _first_step_down(trace: list[dict], node: int, after_ns: int) -> float:
    """First event after `after_ns` at `node` with `leader` false (inf if none)."""
    for e in trace:
        if e["node"] == node and e["t"] > after_ns and not e["leader"]:
            return e["t"]
    return math.inf


def _last_delivery(trace: list[dict], node: int, kinds: tuple[str, ...],
                   from_node: Optional[int] = None, before_ns: float = math.inf) -> int:
    """Time of the last message of `kinds` handled (`deliver`) at `node` before `before_ns`."""
    times = [e["t"] for e in trace
             if e["node"] == node and e["ev"] == "deliver" and e["what"] in kinds
             and (from_node is None or e["from"] == from_node) and e["t"] < before_ns]
    if not times:
        raise HarnessError(f"no {kinds} delivered at n{node}")
    return times[-1]


def _last_answer(trace: list[dict], holder: int, before_ns: float) -> int:
    """Time of the holder's last lease answer (the grant's or a keep-alive's) before
    `before_ns`."""
    return _last_delivery(trace, holder, ("LeaseGrantResp", "KeepAliveResp"),
                          before_ns=before_ns)


def _delete_seen(trace: list[dict], watcher: int, after_ns: int) -> tuple[float, float]:
    """The watcher's first WatchEvent after `after_ns` (delivered or held): (arrival, sent by
    the service). inf if none."""
    for e in trace:
        if (e["node"] == watcher and e["what"] == "WatchEvent" and e["ev"] in ("deliver", "held")
                and e["t"] > after_ns):
            return e["t"], e["sent"]
    return math.inf, math.inf


def _s(ns: float) -> float:
    return ns / NS_PER_S


# ---------------------------------------------------------------------------------------
# 1. A lease asked for with TTL 1 s


# Real trial k -> when its server swept after the grant's answer (mod 500 ms).
_MIN_TTL_PHASES_S: dict[int, float] = {}


def _real_min_ttl(k: int) -> dict:
    """`etcdctl lease grant 1`, a key on it, no keep-alive: the granted TTL it prints and the
    time from the grant's answer to the key's DELETE seen by `etcdctl watch`; a probe lease
    places the server's sweeps for the model's twin."""
    srv = _server()
    key = _unique("minttl")
    probe = _start_sweep_probe(srv)
    watch = Etcdctl(srv, "watch", key, name=f"watch-{key}")
    try:
        time.sleep(0.3)  # the watch is established
        grant = Etcdctl(srv, "lease", "grant", "1", name=f"grant-{key}")
        t_grant_s, line = grant.wait_line("granted with TTL", 10)
        grant.stop()
        srv.ctl("put", key, "v", f"--lease={lease_id(line)}")
        t_delete_s, _ = watch.wait_line("^DELETE$", 15)
        t_probe_deleted_s, _ = probe.wait_line("^DELETE$", 15)
    finally:
        _stop_all(watch, probe)
    _MIN_TTL_PHASES_S[k] = _sweep_phase_s(t_probe_deleted_s, t_grant_s)
    return {"granted": float(granted_ttl_s(line)), "lifetime": t_delete_s - t_grant_s}


def _model_min_ttl(seed: int) -> dict:
    """The holder is paused; its lease's life at the service (last renewal delivered ->
    delete sent) gives the granted TTL in whole seconds (etcd's TTLs are whole seconds and its
    expiry is late by at most its 500 ms sweep); its life as the clients see it (last answer
    at the holder -> WatchEvent at the watcher) is the lifetime. The lessor sweeps at the
    phase the real twin's probe measured after its grant's answer, here after the last answer
    (found in a first run: the sweeps do not change what comes before the lease expires)."""
    members = 2
    pause_at = _dur((3 + phase(seed)) * NS_PER_S)
    first = _trace("etcd-lease-min-ttl.ron", seed, pause_at=pause_at, lessor_phase="None")
    t_pause, holder = _fault(first, "^pause")
    answered_ns = _last_answer(first, holder, t_pause)
    trace = _trace("etcd-lease-min-ttl.ron", seed, pause_at=pause_at,
                   lessor_phase=_lessor_phase_ron(answered_ns, _MIN_TTL_PHASES_S.get(seed)))
    _check_same_until(answered_ns, _last_answer(trace, holder, t_pause), "last answer")
    watcher = 1 - holder
    renewed_ns = _last_delivery(trace, members, ("LeaseGrant", "KeepAlive"), from_node=holder)
    seen_ns, deleted_ns = _delete_seen(trace, watcher, t_pause)
    return {"granted": math.floor(_s(deleted_ns - renewed_ns) + 1e-9),
            "lifetime": _s(seen_ns - answered_ns)}


_MIN_TTL = _Shared(_real_min_ttl, _model_min_ttl)


# ---------------------------------------------------------------------------------------
# 2. Keep-alive interval


def _real_keepalive_interval(ttl_s: int, window_s: float) -> float:
    """`etcdctl lease keep-alive` on a fresh lease for `window_s`: the median gap between the
    responses it prints. clientv3/lease.go: after each response nextKeepAlive = now + TTL/3;
    sendKeepAliveLoop sends what is due every 500 ms (retryConnWait)."""
    srv = _server()
    lease = lease_id(srv.ctl("lease", "grant", str(ttl_s)))
    ka = Etcdctl(srv, "lease", "keep-alive", lease, name=f"keepalive-{lease}")
    try:
        time.sleep(window_s)
        times = [t for t, line in ka.lines() if "keepalived" in line]
    finally:
        ka.stop()
        srv.ctl("lease", "revoke", lease)
    if len(times) < 3:
        raise HarnessError(f"only {len(times)} keep-alive responses in {window_s}s")
    return statistics.median(b - a for a, b in zip(times, times[1:]))


def _model_keepalive_interval(ttl_s: int, seed: int) -> float:
    """The median gap between the KeepAliveResp messages the one client receives."""
    trace = _trace("etcd-keepalive.ron", seed, ttl=f"{ttl_s}s")
    times = [e["t"] for e in trace
             if e["node"] == 0 and e["ev"] == "deliver" and e["what"] == "KeepAliveResp"]
    if len(times) < 3:
        raise HarnessError(f"only {len(times)} KeepAliveResp in the model run")
    return _s(statistics.median(b - a for a, b in zip(times, times[1:])))


# ---------------------------------------------------------------------------------------
# 3. Expiry after the holder is paused (SIGSTOP)

_PAUSE_TRIALS = _Counter()
# Leases per trial, their keep-alive clients started 500 ms / PAUSE_LEASES apart so that their
# renewals fall at evenly spread points of the server's 500 ms expiry sweep: the trial's mean
# then stands for the sweep's average delay instead of one arbitrary phase (consecutive
# trials otherwise tend to land on the same phase and agree by accident). The model's runs
# (shifted alike, which no longer matters) sweep at the phases a probe measured after each
# real lease's last answer: with the sweep shared, the row checks the TTL and that it counts
# from the last renewal, and a lease whose phase falls within milliseconds of a sweep, and
# may land on either side of it, moves the mean by 500 ms / PAUSE_LEASES at most.
PAUSE_LEASES = 4
# Real pause trial k -> per lease, when the server swept after its last answer (mod 500 ms).
_PAUSE_PHASES_S: dict[int, list[float]] = {}


def _paused_lease_expiry(srv: EtcdServer, k: int, start_at_s: float) -> tuple:
    """Start one lease's keep-alive client at `start_at_s`: (key, watch, keep-alive)."""
    key = _unique("pause")
    lease = lease_id(srv.ctl("lease", "grant", str(LOCK_TTL_S)))
    srv.ctl("put", key, "v", f"--lease={lease}")
    watch = Etcdctl(srv, "watch", key, name=f"watch-{key}")
    _sleep_until(start_at_s)
    ka = Etcdctl(srv, "lease", "keep-alive", lease, name=f"keepalive-{key}")
    return key, watch, ka


def real_expiry_after_pause() -> float:
    """Leases of TTL 2 s each kept alive by `etcdctl lease keep-alive`, which is SIGSTOPped
    at the trial's phase of its keep-alive schedule; time from its last printed response to
    the DELETE `etcdctl watch` prints, averaged over PAUSE_LEASES leases spread over the
    server's sweep. Server side: lessor.runLoop looks for expired leases every 500 ms
    (revokeExpiredLeases) and the revoke goes through raft."""
    k = _PAUSE_TRIALS.next()
    srv = _server()
    probe = _start_sweep_probe(srv)
    t0_s = time.monotonic() + 1.0
    leases = []
    try:
        for j in range(PAUSE_LEASES):
            leases.append(_paused_lease_expiry(srv, k, t0_s + j * LESSOR_SWEEP_S / PAUSE_LEASES))
        firsts_s = [ka.wait_line("keepalived", 10)[0] for _, _, ka in leases]
        for t_s, (_, _, ka) in sorted(zip(firsts_s, leases), key=lambda x: x[0]):
            _sleep_until(t_s + fault_offset_s(k))
            ka.proc.pause()
        delays_s, lasts_s = [], []
        for _, watch, ka in leases:
            t_delete_s, _ = watch.wait_line("^DELETE$", 15)
            answers = [t for t, line in ka.lines() if "keepalived" in line]
            delays_s.append(t_delete_s - answers[-1])
            lasts_s.append(answers[-1])
        t_probe_deleted_s, _ = probe.wait_line("^DELETE$", 15)
    finally:
        _stop_all(probe, *(p for _, watch, ka in leases for p in (ka, watch)))
    _PAUSE_PHASES_S[k] = [_sweep_phase_s(t_probe_deleted_s, t) for t in lasts_s]
    print(f"    (pause trial {k}: by lease {[round(d, 2) for d in delays_s]}; sweeps at the "
          f"last answer + {[round(s, 3) for s in _PAUSE_PHASES_S[k]]} s mod 0.5)", flush=True)
    return statistics.mean(delays_s)


def _model_paused_lease(seed: int, shift_s: float, phase_s: Optional[float]) -> float:
    """One run: both clients held `shift_s` at the start, the holder paused at the seed's
    offset after its claim, the lessor sweeping `phase_s` after the holder's last answer
    before the pause (drawn when None); that answer (a KeepAliveResp or the grant) -> the
    watcher's WatchEvent for its key. The first run (no pause before 14 s) finds the claim
    and the last answer: a later fault or sweep does not change what came before it."""
    shift = _dur(shift_s * NS_PER_S)
    first = _trace("etcd-holder-paused.ron", seed, shift=shift, pause_at="14s",
                   lessor_phase="None")
    t_claim, holder = first_claim(first, 2)
    pause_ns = t_claim + fault_offset_s(seed) * NS_PER_S
    answered_ns = _last_answer(first, holder, pause_ns)
    trace = _trace("etcd-holder-paused.ron", seed, shift=shift, pause_at=_dur(pause_ns),
                   lessor_phase=_lessor_phase_ron(answered_ns, phase_s))
    t_pause, paused = _fault(trace, r"^pause .*\(leader\)")
    if paused != holder:
        raise HarnessError(f"the pause hit n{paused}, not the holder n{holder}")
    _check_same_until(answered_ns, _last_answer(trace, holder, t_pause), "last answer")
    seen_ns, _ = _delete_seen(trace, 1 - holder, t_pause)
    return _s(seen_ns - answered_ns)


def model_expiry_after_pause(seed: int) -> float:
    """The mean over PAUSE_LEASES runs whose lease schedules start 500 ms / PAUSE_LEASES
    apart (1 ms + j x 125 ms), like the real side's leases, each sweeping at the phase of
    the real twin's lease j (drawn per seed when the real side did not run)."""
    phases_s = _PAUSE_PHASES_S.get(seed, [None] * PAUSE_LEASES)
    return statistics.mean(
        _model_paused_lease(seed, 0.001 + j * LESSOR_SWEEP_S / PAUSE_LEASES, phases_s[j])
        for j in range(PAUSE_LEASES))


def _sleep_until(t_mono_s: float) -> None:
    left = t_mono_s - time.monotonic()
    if left > 0:
        time.sleep(left)


# ---------------------------------------------------------------------------------------
# 4. kill -9 of the lock holder

_KILL_TRIALS = _Counter()
# Real kill trial k -> when its server swept, after the holder's key (mod 500 ms).
_KILL_PHASES_S: dict[int, float] = {}


def _lock(srv: EtcdServer, name: str, tag: str, endpoint: Optional[str] = None) -> Etcdctl:
    return Etcdctl(srv, "lock", "--ttl", str(LOCK_TTL_S), name, endpoint=endpoint,
                   name=f"lock-{tag}-{name}")


def real_next_holder_after_kill() -> float:
    """Two `etcdctl lock --ttl 2`; SIGKILL of the holder at the trial's offset after it
    printed its key; time until the waiter prints its key (Mutex.Lock's waitDeletes sees the
    delete when the server expires the dead holder's lease)."""
    k = _KILL_TRIALS.next()
    srv = _server()
    name = _unique("kill")
    probe = _start_sweep_probe(srv)
    holder = _lock(srv, name, "holder")
    waiter = None
    try:
        t_acquired_s, _ = holder.wait_line(f"^{name}/", 10)
        waiter = _lock(srv, name, "waiter")
        _sleep_until(t_acquired_s + fault_offset_s(k))
        if waiter.count(f"^{name}/"):
            raise HarnessError("the waiter acquired the lock while the holder was alive")
        t_kill_s = time.monotonic()
        holder.proc.kill9()
        t_next_s, _ = waiter.wait_line(f"^{name}/", 15)
        t_probe_deleted_s, _ = probe.wait_line("^DELETE$", 15)
    finally:
        _stop_all(holder, waiter, probe)
    _KILL_PHASES_S[k] = _sweep_phase_s(t_probe_deleted_s, t_acquired_s)
    return t_next_s - t_kill_s


def model_next_holder_after_kill(seed: int) -> float:
    """Crash of the holder at the seed's offset after its claim, the lessor's sweeps at the
    real twin's phase after it -> the other member's claim."""
    first = _trace("etcd-holder-killed.ron", seed, crash_at="14s", lessor_phase="None")
    t_claim, _ = first_claim(first, 2)
    trace = _trace("etcd-holder-killed.ron", seed,
                   lessor_phase=_lessor_phase_ron(t_claim, _KILL_PHASES_S.get(seed)),
                   crash_at=_dur(t_claim + fault_offset_s(seed) * NS_PER_S))
    _check_same_until(t_claim, first_claim(trace, 2)[0], "first claim")
    t_crash, holder = _fault(trace, "^crash")
    t_next, _ = first_claim(trace, 2, after_ns=t_crash, exclude=holder)
    return _s(t_next - t_crash)


# ---------------------------------------------------------------------------------------
# 5. The holder's connection is cut (honest clocks)

# Holder/waiter pairs per trial; the overlap row takes the worst of them. Whether a cut-off
# holder's session outlives the server's expiry is a race of a millisecond or so between
# clientv3's 1 s deadline loop and the moment its lease deadline falls (measured here: the
# holder ends about TTL or TTL + 1 s after its last response, each about half the time, and
# runs close together in time tend to agree). One pair per trial would make the safety row
# pass or fail by luck; the worst of several concurrent pairs asks whether the overlap can
# happen, which is the safety question.
CUT_PAIRS = 6


def cut_offset_s(k: int, pair: int) -> float:
    """Pair j of trial/seed k is cut this long after its holder acquired: the pairs spread
    their phases 1/CUT_PAIRS s apart; pair 0 has the trial's own phase."""
    return 1.5 + (phase(k) + pair / CUT_PAIRS) % 1.0


@dataclass
class _CutTwin:
    """What real trial k hands its model twin (seed k)."""
    # Per pair, when the server's lessor sweeps fell: seconds after the pair's holder printed
    # its key, modulo the 500 ms sweep (see _start_sweep_probe). The model's pair puts its
    # sweeps at the same phase after its holder's claim.
    sweep_phases_s: list[float]
    # The pair whose overlap was the worst: the overlap row compares it with the same pair of
    # the model (the worst over the model's pairs could be another pair, at another phase).
    worst_pair: int


_CUT_TWINS: dict[int, _CutTwin] = {}


def _real_cut(k: int) -> dict:
    """Holders `etcdctl lock --ttl 2` each through its own proxy, waiters direct
    (CUT_PAIRS independent locks at once); each proxy stops forwarding (sockets stay open: a
    partition) at its pair's offset after its holder printed its key. From the cut: the
    waiter printing its key and the holder's "session expired" (pair 0), and the worst
    overlap over the pairs (holder's end minus waiter's key). clientv3 lease.go: the
    deadlineLoop closes the keep-alive channel once now > last response + TTL, checked
    every 1 s, and concurrency.Session.Done follows; the server expires on its 500 ms sweep,
    whose phase a probe lease measures (_start_sweep_probe)."""
    srv = _server()
    names = [_unique("cut") for _ in range(CUT_PAIRS)]
    probe = _start_sweep_probe(srv)
    proxies = [Proxy(srv.client_port) for _ in names]
    holders = [_lock(srv, n, "holder", endpoint=f"127.0.0.1:{p.port}")
               for n, p in zip(names, proxies)]
    waiters: list[Etcdctl] = []
    try:
        acquired_s = [h.wait_line(f"^{n}/", 10)[0] for h, n in zip(holders, names)]
        waiters = [_lock(srv, n, "waiter") for n in names]
        cuts = sorted((t + cut_offset_s(k, j), j) for j, t in enumerate(acquired_s))
        t_cut_s = [0.0] * CUT_PAIRS
        for t_s, j in cuts:
            _sleep_until(t_s)
            if waiters[j].count(f"^{names[j]}/"):
                raise HarnessError("a waiter acquired the lock before its holder was cut")
            t_cut_s[j] = time.monotonic()
            proxies[j].cut()
        t_waiter_s = [w.wait_line(f"^{n}/", 15)[0] for w, n in zip(waiters, names)]
        t_end_s = [h.wait_line("session expired", 15)[0] for h in holders]
        t_probe_deleted_s, _ = probe.wait_line("^DELETE$", 15)
    finally:
        _stop_all(*holders, *waiters, probe)
        for p in proxies:
            p.close()
    overlaps_s = [e - w for e, w in zip(t_end_s, t_waiter_s)]
    phases_s = [_sweep_phase_s(t_probe_deleted_s, t) for t in acquired_s]
    _CUT_TWINS[k] = _CutTwin(phases_s, max(range(CUT_PAIRS), key=lambda j: overlaps_s[j]))
    positive = sum(1 for o in overlaps_s if o > 0)
    print(f"    (cut trial {k}: overlap in {positive} of {CUT_PAIRS} pairs: "
          f"{[round(o, 2) for o in overlaps_s]}; sweeps at acquisition + "
          f"{[round(s, 3) for s in phases_s]} s mod 0.5)", flush=True)
    return {"waiter": t_waiter_s[0] - t_cut_s[0], "holder_end": t_end_s[0] - t_cut_s[0],
            "overlap": max(overlaps_s)}


def _model_cut_pair(seed: int, pair: int) -> tuple[float, float]:
    """Isolate(Leader) at the pair's offset after the claim, the lessor's sweeps at the real
    twin's phase after it (drawn per seed when the real side did not run); from the cut: the
    other member's claim and the holder's step-down (inf if it never happens in the run)."""
    first = _trace("etcd-holder-cut.ron", seed, cut_at="14s", lessor_phase="None")
    t_claim, _ = first_claim(first, 2)
    twin = _CUT_TWINS.get(seed)
    lessor_phase = _lessor_phase_ron(t_claim, twin.sweep_phases_s[pair] if twin else None)
    trace = _trace("etcd-holder-cut.ron", seed, lessor_phase=lessor_phase,
                   cut_at=_dur(t_claim + cut_offset_s(seed, pair) * NS_PER_S))
    _check_same_until(t_claim, first_claim(trace, 2)[0], "first claim")
    t_cut, holder = _fault(trace, "^partition")
    t_waiter, _ = first_claim(trace, 2, after_ns=t_cut, exclude=holder)
    t_end = _first_step_down(trace, holder, t_cut)
    return _s(t_waiter - t_cut), _s(t_end - t_cut)


def _model_cut(seed: int) -> dict:
    """The same pairs, one run each (same seed, the pair's phases); the overlap of the pair
    that was the real twin's worst (the model's worst when the real side did not run)."""
    pairs = [_model_cut_pair(seed, j) for j in range(CUT_PAIRS)]
    overlaps_s = [e - w for w, e in pairs]
    twin = _CUT_TWINS.get(seed)
    waiter_s, end_s = pairs[0]
    return {"waiter": waiter_s, "holder_end": end_s,
            "overlap": overlaps_s[twin.worst_pair] if twin else max(overlaps_s)}


_CUT = _Shared(_real_cut, _model_cut)


# ---------------------------------------------------------------------------------------
# 6. Server restart


_DOWNTIMES_S: dict[int, tuple[float, float]] = {}  # trial -> (kill-to-stop gap, downtime)
_DEFAULT_GAP_S, _DEFAULT_DOWNTIME_S = 0.005, 1.5
RESTART_TTL_S = 5


def _real_restart(k: int) -> dict:
    """Lease TTL 5 s kept alive by `etcdctl lease keep-alive`; right after one of its
    responses it is SIGKILLed and etcd is stopped (SIGTERM) and started again on its data
    dir. The DELETE `etcdctl watch` prints, from the server being healthy again and from the
    last response. etcdserver promotes the lessor on becoming leader with extend = election
    timeout (lessor.Promote: every lease's expiry = now + extend + TTL)."""
    srv = _server()
    key = _unique("restart")
    lease = lease_id(srv.ctl("lease", "grant", str(RESTART_TTL_S)))
    srv.ctl("put", key, "v", f"--lease={lease}")
    watch = Etcdctl(srv, "watch", key, name=f"watch-{key}")
    ka = Etcdctl(srv, "lease", "keep-alive", lease, name=f"keepalive-{key}")
    try:
        ka.wait_line("keepalived", 10)
        t_last_s, _ = ka.wait_line("keepalived", 10, after=1)
        ka.proc.kill9()
        t_stop_s = time.monotonic()
        srv.stop()
        t_ready_s = srv.start()
        t_delete_s, _ = watch.wait_line("^DELETE$", 30)
    finally:
        _stop_all(ka, watch)
    _DOWNTIMES_S[k] = (t_stop_s - t_last_s, t_ready_s - t_stop_s)
    print(f"    (restart trial {k}: last response -> stop {t_stop_s - t_last_s:.3f}s, "
          f"down {t_ready_s - t_stop_s:.2f}s)", flush=True)
    return {"from_ready": t_delete_s - t_ready_s, "from_last": t_delete_s - t_last_s}


def _model_restart(seed: int) -> dict:
    """The holder crashes just after a KeepAliveResp (found in a first run: a later fault
    does not change what came before it), the service crashes after the real trial's gap and
    restarts after the real trial's downtime (defaults when the real side did not run).
    From the service's restart and from that KeepAliveResp to the watcher's WatchEvent."""
    gap_s, downtime_s = _DOWNTIMES_S.get(seed, (_DEFAULT_GAP_S, _DEFAULT_DOWNTIME_S))
    first = _trace("etcd-server-restart.ron", seed, holder_stop_at="18s",
                   service_stop_at="18500ms", downtime="1s")
    _, holder = first_claim(first, 2)
    t_last = next(e["t"] for e in first
                  if e["node"] == holder and e["ev"] == "deliver"
                  and e["what"] == "KeepAliveResp" and e["t"] > 3 * NS_PER_S)
    trace = _trace("etcd-server-restart.ron", seed, holder_stop_at=_dur(t_last + 1),
                   service_stop_at=_dur(t_last + 1 + gap_s * NS_PER_S),
                   downtime=_dur(max(downtime_s, 0.001) * NS_PER_S))
    t_crash, crashed = _fault(trace, "^crash")
    if crashed != holder:
        raise HarnessError(f"the crash hit n{crashed}, not the holder n{holder}")
    t_restart = next(e["t"] for e in trace if e["ev"] == "restart")
    seen_ns, _ = _delete_seen(trace, 1 - holder, t_crash)
    return {"from_ready": _s(seen_ns - t_restart), "from_last": _s(seen_ns - t_last)}


_RESTART = _Shared(_real_restart, _model_restart)


# ---------------------------------------------------------------------------------------
# 7. Waiters' requests while waiting

WAITERS = 5
WAIT_WINDOW_S = 20.0


def real_waiter_ranges() -> float:
    """One `etcdctl lock --ttl 2` holder and 5 waiters; the Range RPCs the server starts in
    20 s once all wait (grpc_server_started_total{grpc_method="Range"} on /metrics). A waiter
    ranges once in waitDeletes (clientv3/concurrency/key.go) and then only watches."""
    srv = _server()
    name = _unique("waiters")
    holder = _lock(srv, name, "holder")
    waiters: list[Etcdctl] = []
    try:
        holder.wait_line(f"^{name}/", 10)
        waiters = [_lock(srv, name, f"waiter{i}") for i in range(WAITERS)]
        time.sleep(2.0)  # every waiter has its key, its range and its watch
        before = srv.metric_sum("grpc_server_started_total", grpc_method="Range")
        time.sleep(WAIT_WINDOW_S)
        after = srv.metric_sum("grpc_server_started_total", grpc_method="Range")
        if any(w.count(f"^{name}/") for w in waiters) or not holder.proc.alive():
            raise HarnessError("the lock changed hands during the window")
    finally:
        _stop_all(holder, *waiters)
    return after - before


def model_waiter_ranges(seed: int) -> float:
    """Range messages delivered at the service from 5 s to 25 s (all members wait by then)."""
    members = WAITERS + 1
    trace = _trace("etcd-waiters.ron", seed)
    lo, hi = 5 * NS_PER_S, 5 * NS_PER_S + WAIT_WINDOW_S * NS_PER_S
    return float(sum(1 for e in trace
                     if e["node"] == members and e["ev"] == "deliver" and e["what"] == "Range"
                     and lo <= e["t"] < hi))


# ---------------------------------------------------------------------------------------
# The table rows


EXPERIMENTS = [
    Experiment(
        name="etcd granted TTL, 1 s asked", system="etcd", unit="s",
        real=_MIN_TTL.real("granted"), model=_MIN_TTL.model("granted"), band=Band(abs=0.0),
        note="real: `lease grant 1` prints TTL(2s): minimum ceil(1.5 x 1 s election timeout) "
             "(lessor minLeaseTTL); model: not in its trace, read as the whole seconds of the "
             "un-renewed lease's life at the service (its election timeout is etcd's default, "
             "1 s, so its minimum is 2 s)"),
    Experiment(
        name="etcd lease life, 1 s asked, no keep-alive", system="etcd", unit="s",
        real=_MIN_TTL.real("lifetime"), model=_MIN_TTL.model("lifetime"), band=Band(abs=0.25),
        note="grant answer (model: holder's last answer before its pause) -> DELETE at a "
             "watcher; real = granted TTL + up to the 500 ms expiry sweep, whose phase a probe "
             "lease measures for the model's twin: with the sweep shared, the row checks the "
             "granted TTL (2 s, not the 1 s asked) and that it counts from the last answer"),
    Experiment(
        name="etcd keep-alive interval, TTL 2 s", system="etcd", unit="s",
        real=lambda: _real_keepalive_interval(2, 5.5),
        model=lambda seed: _model_keepalive_interval(2, seed), band=Band(abs=0.1),
        note="median gap between keep-alive responses; clientv3: TTL/3 after the last "
             "response, sent on a 500 ms loop"),
    Experiment(
        name="etcd keep-alive interval, TTL 5 s", system="etcd", unit="s",
        real=lambda: _real_keepalive_interval(5, 7.5),
        model=lambda seed: _model_keepalive_interval(5, seed), band=Band(abs=0.1),
        note="as above for TTL 5 s"),
    Experiment(
        name="etcd expiry after holder SIGSTOP, TTL 2 s", system="etcd", unit="s",
        real=real_expiry_after_pause, model=model_expiry_after_pause, band=Band(abs=0.15),
        note=f"holder's last keep-alive response -> DELETE at a watcher; real: mean of "
             f"{PAUSE_LEASES} leases spread over the 500 ms expiry sweep (so about TTL + "
             "0.25 s); model: mean of as many runs whose clients start 125 ms apart, each "
             "sweeping at the phase a probe lease measured after its real twin's last answer, "
             "so the row checks the TTL and that it counts from the last renewal; ±0.15 s: one "
             "lease within milliseconds of a sweep may land on the other side of it (0.125 s "
             "on the mean)"),
    Experiment(
        name="etcd kill -9 holder -> next holder, TTL 2 s", system="etcd", unit="s",
        real=real_next_holder_after_kill, model=model_next_holder_after_kill,
        band=Band(abs=0.5),
        note="kill at acquisition + 1.5 s + frac(k x 0.618) s on both sides, the model's "
             "lessor sweeping at the phase a probe lease measured in its real twin; ±0.5 s: "
             "one pass of clientv3's 500 ms send loop (the keep-alive race of the cut rows)"),
    Experiment(
        name="etcd holder cut: waiter acquires after", system="etcd", unit="s",
        real=_CUT.real("waiter"), model=_CUT.model("waiter"),
        band=Band(abs=0.1, paired_period=LESSOR_SWEEP_S, paired_periods=2), runs=5,
        note="cut (proxy, sockets open; model Isolate(Leader)) at acquisition + 1.5 s + "
             "frac(k x 0.618) s -> waiter prints its key (model: claims). Per trial, since "
             "both sides share the cut's phase and the lessor's: twins agree within about "
             "10 ms, or are a whole number of 500 ms passes apart, up to 1 s, when a race "
             "of a millisecond or so goes the other way (whether the last keep-alive before "
             "the cut left, which moves the lease's deadline by a keep-alive period, about "
             "1 s at TTL 2 s; a sweep phase within milliseconds of the deadline). Seen on "
             "2026-11-24 CI: trial 4, sweep phase 0.000 s, real 2.03 vs model 1.03 failed the "
             "old check (the model within ±0.5 s of the real range); earlier, with the phase "
             "drawn on each side, 2.02 vs 1.23 failed a ±0.25 s band"),
    Experiment(
        name="etcd holder cut: holder session ends after", system="etcd", unit="s",
        real=_CUT.real("holder_end"), model=_CUT.model("holder_end"),
        band=Band(abs=0.25, paired_period=1.0), runs=5,
        note="cut -> holder's 'session expired' (model: holder steps down); per trial, "
             "since both sides share the cut's phase: clientv3's 1 s deadline loop reports "
             "on the tick after the lease deadline or, when the two fall within a "
             "millisecond or so, one tick later on either side, so a model value may be a "
             "whole second off its twin, never more"),
    Experiment(
        name="etcd holder cut: overlap (safety)", system="etcd", unit="s",
        real=_CUT.real("overlap"), model=_CUT.model("overlap"),
        band=Band(abs=0.15, paired_period=LESSOR_SWEEP_S, paired_periods=2,
                  positive_where_real=True), runs=5,
        note=f"worst of {CUT_PAIRS} locks cut together (phases 1/{CUT_PAIRS} s apart) and the "
             "same lock in the model: holder's session end minus waiter's acquisition; > 0 "
             "means two holders believed at once for that long (`etcdctl lock` has no "
             "fencing). Each model lock sweeps at the phase a probe lease measured on the real "
             "server in its twin trial (a phase drawn on each side failed the old median check "
             "on 2026-11-24 CI: real 0.56 vs model 0.87). Per trial, mod the 500 ms sweep up to "
             "1 s either way: a phase within milliseconds of a sweep may fall on either sweep, "
             "and clientv3's 1 s race may go either way. Wherever the real locks overlapped the "
             "model's must, so a model that never overlaps fails"),
    Experiment(
        name="etcd restart: healthy -> key deleted, TTL 5 s", system="etcd", unit="s",
        real=_RESTART.real("from_ready"), model=_RESTART.model("from_ready"),
        band=Band(abs=0.5),
        note="keep-alive stopped, etcd SIGTERM + start on its data dir; from /health true "
             "(model: service restart) to DELETE at a watcher; real = TTL + 1 s election "
             "timeout (lessor.Promote) + up to the 500 ms sweep"),
    Experiment(
        name="etcd restart: last keep-alive -> key deleted, TTL 5 s", system="etcd",
        unit="s", real=_RESTART.real("from_last"), model=_RESTART.model("from_last"),
        band=Band(abs=0.5),
        note="same trials from the last keep-alive response; the model's server is down "
             "for the real trial's measured downtime; both restart bands are the 500 ms "
             "sweep, whose phase differs between the two sides"),
    Experiment(
        name="etcd waiters' Range requests, 5 waiters, 20 s", system="etcd", unit="count",
        real=real_waiter_ranges, model=model_waiter_ranges, band=Band(abs=2),
        note="real: grpc_server_started_total{grpc_method=Range} delta; model: Range "
             "delivered at the service (on Stream its waiters send nothing while waiting)")
]
