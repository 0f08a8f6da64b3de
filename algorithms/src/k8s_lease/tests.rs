//! The Kubernetes Lease lock on the engine.

use super::*;
use splitbrain_sim::{Ctx, Process as _};
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, PartitionShape, RunReport, Sim, SimConfig, Target,
    NANOS_PER_MILLI,
};

const S: u64 = 1_000_000_000;

/// The timings most tests use: client-go's 15s / 10s / 2s ten times shorter, under the
/// model's `Strict` rules (the model's only rules before issue 28; whole seconds would cut
/// the 1.5s lease to 1s under `ClientGo`).
fn strict() -> K8sConfig {
    K8sConfig {
        lease_duration_ns: 1_500_000_000,
        renew_deadline_ns: 1_000_000_000,
        retry_period_ns: 200_000_000,
        variant: K8sVariant::Lease,
        rules: K8sRules::Strict,
        etcd: None,
        apiservers: 1,
    }
}

fn run(variant: K8sVariant, fencing: bool, faults: Vec<FaultSpec>) -> RunReport {
    let config = K8sConfig {
        variant,
        ..strict()
    };
    let mut sim = SimConfig::quiet(3, 3, 15 * S);
    sim.write_every_ns = 100 * NANOS_PER_MILLI;
    sim.fencing = fencing;
    sim.faults = faults;
    Sim::new(
        sim,
        info(&config, 3),
        crate::k8s_lease::processes(3, &config),
    )
    .run()
    .expect("within the default limits")
}

/// client-go `tools/leaderelection/leaderelection.go`, `tryAcquireOrRenew`: a candidate takes
/// over once `isLeaseValid` (`le.observedTime.Add(..LeaseDurationSeconds..).After(now)`) is
/// false; kube-controller-manager `cmd/kube-controller-manager/app/controllermanager.go`,
/// `Run`: `id = id + "_" + string(uuid.NewUUID())`, so the restarted leader is someone new.
#[test]
fn one_leader_is_elected_and_a_crash_fails_over_after_the_lease_duration() {
    let report = run(
        K8sVariant::Lease,
        true,
        vec![FaultSpec {
            at_ns: 5 * S,
            action: FaultAction::Crash(Target::Leader),
            // Back at once, but as a new identity (a controller's `hostname_uuid`): it
            // waits out the lease like the other candidates.
            heal_after_ns: Some(200 * NANOS_PER_MILLI),
            after: None,
        }],
    );
    assert!(
        report.violated_safety().is_empty(),
        "{:?}",
        report.violations
    );
    assert_eq!(report.leaders.len(), 2, "{:?}", report.leaders);
    let takeover = report.leaders[1].at_ns - 5 * S;
    // Candidates count the lease duration from their own sight of the last change: the
    // leader's last renewal, up to one retry period before the crash, seen at a poll up to
    // 2.2 retry periods later; the takeover waits for the poll after that.
    assert!(takeover >= 1_300 * NANOS_PER_MILLI, "{takeover}");
    assert!(takeover <= 2_400 * NANOS_PER_MILLI, "{takeover}");
}

/// client-go `tools/leaderelection/leaderelection.go`, package doc: "does not guarantee that
/// only one client is acting as a leader (a.k.a. fencing)": a holder paused past the lease
/// duration still acts on the write it decided before the pause.
#[test]
fn a_stalled_leader_is_fenced_and_caught_without_fencing() {
    // The stall must strike the workload's handler for a write to be decided before it; try
    // ten phases of the 100ms write tick.
    let stall = |k: u64| {
        vec![FaultSpec {
            at_ns: 5 * S + k * 10 * NANOS_PER_MILLI,
            action: FaultAction::Stall(Target::Leader, 3 * S),
            heal_after_ns: None,
            after: None,
        }]
    };
    for variant in [K8sVariant::Lease, K8sVariant::DbRow] {
        let mut caught = 0;
        for k in 0..10 {
            assert!(run(variant, true, stall(k)).violated_safety().is_empty());
            if run(variant, false, stall(k)).violated_safety() == vec![Invariant::FencingSafety] {
                caught += 1;
            }
        }
        assert!(caught > 0, "{variant:?}: an unfenced stall is never caught");
    }
}

/// client-go `tools/leaderelection/leaderelection.go`, `renew`:
/// `context.WithTimeout(ctx, le.config.RenewDeadline)` ends leadership before candidates'
/// `isLeaseValid` runs out (`NewLeaderElector` requires `LeaseDuration > RenewDeadline`). The
/// model counts the deadline from the last renewal's send, `retry_period` + a round trip
/// earlier than client-go's round (see the doc's table); this margin holds either way.
#[test]
fn a_partitioned_leader_steps_down_at_its_renew_deadline_before_anyone_takes_over() {
    let report = run(
        K8sVariant::Lease,
        false,
        vec![FaultSpec {
            at_ns: 5 * S,
            action: FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
            heal_after_ns: Some(3 * S),
            after: None,
        }],
    );
    assert!(
        report.violated_safety().is_empty(),
        "{:?}",
        report.violations
    );
    assert_eq!(report.overlap_ns, 0);
}

// Driving the server and clients by hand.

use splitbrain_sim::{Effect, Signal, SimRng, StreamId};

type Out = Vec<Effect<K8sMsg, K8sTimer>>;

const MS: i64 = NANOS_PER_MILLI as i64;

fn server(variant: K8sVariant) -> K8sServer {
    K8sServer::new(&K8sConfig {
        variant,
        ..strict()
    })
}

fn client(variant: K8sVariant, me: usize) -> K8sClient {
    let config = K8sConfig {
        variant,
        ..strict()
    };
    K8sClient::new(NodeId::from(me), 3, &config)
}

fn to_server(s: &mut K8sServer, now: i64, from: usize, m: K8sMsg) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(3));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId::from(3usize), 3, now, &mut rng, &mut out);
    s.on_message(&mut ctx, NodeId::from(from), m);
    out
}

fn to_client(c: &mut K8sClient, now: i64, m: K8sMsg) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(c.me.index()));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(c.me, 3, now, &mut rng, &mut out);
    c.on_message(&mut ctx, NodeId::from(3usize), m);
    out
}

fn update_resp(out: &Out) -> (bool, Record) {
    out.iter()
        .find_map(|e| match e {
            Effect::Send {
                msg: K8sMsg::UpdateResp { ok, record, .. },
                ..
            } => Some((*ok, record.clone())),
            _ => None,
        })
        .expect("an update is answered")
}

fn id(node: usize) -> Identity {
    Identity {
        node: NodeId::from(node),
        incarnation: 0,
    }
}

fn update(node: usize, expected_rv: u64) -> K8sMsg {
    K8sMsg::Update {
        expected_rv,
        sent_at: 0,
        identity: id(node),
        lease_duration_s: 1,
        request: 1,
    }
}

fn held(holder: usize, rv: u64) -> Record {
    Record {
        holder: Some(id(holder)),
        resource_version: rv,
        acquired_rv: rv,
        expires_at: 0,
        lease_duration_s: 1,
    }
}

/// client-go `tools/leaderelection/leaderelection.go`, `tryAcquireOrRenew`: held while
/// `len(oldLeaderElectionRecord.HolderIdentity) > 0 && le.isLeaseValid(now.Time)`;
/// `isLeaseValid`: `le.observedTime.Add(..).After(now)`, so free exactly at the boundary, and
/// at once when the holder is empty. (client-go takes the duration in whole seconds from the
/// record; the model uses its own `lease_duration`.)
#[test]
fn a_held_lease_looks_free_exactly_one_lease_duration_after_its_last_change_was_seen() {
    let duration_ns = 1_500 * NANOS_PER_MILLI;
    let seen = 1_000 * MS;
    let record = held(0, 7);
    assert!(!looks_free(
        &record,
        seen,
        seen + 1_500 * MS - 1,
        duration_ns
    ));
    assert!(looks_free(&record, seen, seen + 1_500 * MS, duration_ns));
    let released = Record {
        holder: None,
        ..record
    };
    assert!(looks_free(&released, seen, seen, duration_ns));
}

/// apiserver `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`,
/// `(*Store).Update`: `if newResourceVersion != existingResourceVersion` answers a conflict;
/// client-go `tools/leaderelection/resourcelock/leaselock.go`, `Update`, sends `ll.lease`, the
/// object last read or written, with its resourceVersion. (A real 409 carries no object; the
/// model's loser is shown the winner at once.) `leaderelection.go`, `release`: only
/// `if le.IsLeader()`, an update with an empty `HolderIdentity`.
#[test]
fn the_lease_object_takes_one_update_per_resource_version() {
    let mut s = server(K8sVariant::Lease);
    let (ok, won) = update_resp(&to_server(&mut s, 10 * MS, 0, update(0, 1)));
    assert!(ok);
    assert_eq!(
        (won.holder, won.resource_version, won.acquired_rv),
        (Some(id(0)), 2, 2)
    );
    // A second candidate that read the same version loses, and is shown the winner.
    let (ok, seen) = update_resp(&to_server(&mut s, 11 * MS, 1, update(1, 1)));
    assert!(!ok);
    assert_eq!(seen, won);
    // The holder renews on the current version: a new version, the same token.
    let (ok, renewed) = update_resp(&to_server(&mut s, 200 * MS, 0, update(0, 2)));
    assert!(ok);
    assert_eq!((renewed.resource_version, renewed.acquired_rv), (3, 2));
    // A release by anyone but the holder is ignored; the holder's clears the record.
    to_server(&mut s, 300 * MS, 1, K8sMsg::Release { identity: id(1) });
    assert_eq!(s.record().holder, Some(id(0)));
    to_server(&mut s, 300 * MS, 0, K8sMsg::Release { identity: id(0) });
    assert_eq!((s.record().holder, s.record().resource_version), (None, 4));
}

/// No client-go source: `DbRow` is a generic SQL lease (`expires <= now()` by the database's
/// clock), not a system the model follows; this test holds it to its own rule.
#[test]
fn a_database_row_expires_exactly_at_its_deadline_on_the_database_clock() {
    let mut s = server(K8sVariant::DbRow);
    let (ok, _) = update_resp(&to_server(&mut s, 100 * MS, 0, update(0, 0)));
    assert!(ok);
    let deadline = 100 * MS + 1_500 * MS;
    assert_eq!(s.record().expires_at, deadline);
    assert!(!s.row_expired(deadline - 1));
    assert!(s.row_expired(deadline));
    // One nanosecond before, another client's upsert finds the row held.
    let (ok, _) = update_resp(&to_server(&mut s, deadline - 1, 1, update(1, 0)));
    assert!(!ok);
    // At the deadline the database frees the row first, and the upsert wins it.
    let (ok, record) = update_resp(&to_server(&mut s, deadline, 1, update(1, 0)));
    assert!(ok);
    assert_eq!(record.holder, Some(id(1)));
    assert!(record.acquired_rv > 2, "a new holder gets a new token");
}

/// client-go `tools/leaderelection/leaderelection.go`, `tryAcquireOrRenew`, slow path:
/// `le.config.Lock.Get(ctx)`, then `observedTime` is set only
/// `if !bytes.Equal(le.observedRawRecord, oldLeaderElectionRawRecord)`, then
/// `le.config.Lock.Update(ctx, ..)` on the version read once `isLeaseValid` is false.
#[test]
fn a_candidate_reads_before_it_tries_and_tries_only_when_the_lease_looks_free() {
    let mut c = client(K8sVariant::Lease, 1);
    let held_by_0 = K8sMsg::GetResp { record: held(0, 5) };
    let tries = |out: &Out| {
        out.iter()
            .filter(|e| {
                matches!(
                    e,
                    Effect::Send {
                        msg: K8sMsg::Update { expected_rv: 5, .. },
                        ..
                    }
                )
            })
            .count()
    };
    assert_eq!(tries(&to_client(&mut c, 0, held_by_0.clone())), 0);
    // The same record again is no change: the lease duration runs from the first sight.
    assert_eq!(tries(&to_client(&mut c, 1_499 * MS, held_by_0.clone())), 0);
    let out = to_client(&mut c, 1_500 * MS, held_by_0);
    assert_eq!(tries(&out), 1);
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::Signal(Signal::ElectionStarted { term: 6 }))));
}

/// client-go `tools/leaderelection/leaderelection.go`, `renew`:
/// `context.WithTimeout(ctx, le.config.RenewDeadline)` around the round's renewals. The model
/// deliberately counts from the send of the last successful renewal, stricter than client-go,
/// whose round starts `RetryPeriod` after that renewal returned (see the doc's table).
#[test]
fn the_leader_serves_until_its_renew_deadline_counted_from_sending_its_last_renewal() {
    let mut c = client(K8sVariant::Lease, 0);
    let out = to_client(&mut c, 20 * MS, answer(2, 10 * MS, 1));
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::BecameLeader { term: 2, token: 2 })));
    let deadline = 10 * MS + 1_000 * MS;
    assert_eq!(c.write_token(deadline - 1), Some(2));
    assert_eq!(c.write_token(deadline), None);
}

/// A successful answer to request `request`, sent at `sent_at`, for a record held by n0.
fn answer(rv: u64, sent_at: i64, request: u64) -> K8sMsg {
    K8sMsg::UpdateResp {
        ok: true,
        record: held(0, rv),
        sent_at,
        request,
    }
}

/// client-go `tools/leaderelection/leaderelection.go`, `renew`: the renewal runs as
/// `le.tryAcquireOrRenew(timeoutCtx)`, so an answer after the round's `RenewDeadline` is an
/// error, and requests go one at a time (a newer answer is never overtaken by an older one).
#[test]
fn only_the_newest_answer_in_time_is_a_mandate() {
    let mut c = client(K8sVariant::Lease, 0);
    to_client(&mut c, 20 * MS, answer(2, 10 * MS, 2));
    // An older request answered later (its clock read more then: a backward jump since)
    // does not move the renewal.
    to_client(&mut c, 30 * MS, answer(2, 500 * MS, 1));
    assert_eq!(c.write_token(1_010 * MS - 1), Some(2));
    assert_eq!(c.write_token(1_010 * MS), None);
    // An answer that arrives after its own renew deadline makes no leader.
    let mut late = client(K8sVariant::Lease, 0);
    let out = to_client(&mut late, 1_010 * MS, answer(2, 10 * MS, 1));
    assert!(!out.iter().any(|e| matches!(e, Effect::BecameLeader { .. })));
    assert_eq!(late.write_token(1_010 * MS), None);
}

/// client-go `tools/leaderelection/leaderelection.go`, `acquire`:
/// `wait.JitterUntil(.., le.config.RetryPeriod, JitterFactor, true, ..)` with
/// `JitterFactor = 1.2`; apimachinery `pkg/util/wait/wait.go`, `Jitter`:
/// `duration + time.Duration(rand.Float64()*maxFactor*float64(duration))`; `renew`:
/// `wait.Until(.., le.config.RetryPeriod, ..)`, no jitter.
#[test]
fn candidates_retry_with_client_gos_jitter_and_the_leader_without() {
    let retry_ns = strict().retry_period_ns;
    let mut seen = Vec::new();
    for seed in 0..200 {
        let c = client(K8sVariant::Lease, 1);
        let mut rng = SimRng::stream(seed, StreamId::node(1));
        let mut out: Out = Vec::new();
        c.arm_retry(&mut Ctx::new(c.me, 3, 0, &mut rng, &mut out));
        let Some(Effect::SetTimer { after_local_ns, .. }) = out.pop() else {
            panic!("a retry is armed");
        };
        seen.push(after_local_ns);
    }
    assert!(
        seen.iter()
            .all(|d| (retry_ns..=retry_ns * 11 / 5).contains(d)),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|d| *d > retry_ns * 2),
        "the jitter reaches past 2 periods"
    );
    let mut leader = client(K8sVariant::Lease, 0);
    leader.leading = true;
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut out: Out = Vec::new();
    leader.arm_retry(&mut Ctx::new(leader.me, 3, 0, &mut rng, &mut out));
    assert!(
        matches!(out[..], [Effect::SetTimer { after_local_ns, .. }] if after_local_ns == retry_ns)
    );
}

/// client-go `tools/leaderelection/leaderelection.go`, `release` (`ReleaseOnCancel`): an update
/// with an empty `HolderIdentity`, which `tryAcquireOrRenew` takes at once
/// (`len(oldLeaderElectionRecord.HolderIdentity) > 0` is false). The resigner's sit-out is the
/// model's: client-go's `Run` has returned by then.
#[test]
fn a_released_lease_goes_to_another_candidate_within_a_few_retry_periods() {
    for seed in 0..8 {
        let config = strict();
        let mut sim = SimConfig::quiet(seed, 3, 10 * S);
        sim.faults = vec![FaultSpec {
            at_ns: 5 * S,
            action: FaultAction::Resign(Target::Leader),
            heal_after_ns: None,
            after: None,
        }];
        let report = Sim::new(
            sim,
            info(&config, 3),
            crate::k8s_lease::processes(3, &config),
        )
        .run()
        .expect("within the default limits");
        assert_eq!(report.leaders.len(), 2, "seed {seed}: {:?}", report.leaders);
        let (first, second) = (&report.leaders[0], &report.leaders[1]);
        assert_ne!(
            first.node, second.node,
            "seed {seed}: the resigner sits out"
        );
        let handover_ns = second.at_ns - 5 * S;
        // The next poll (at most 2.2 retry periods away) sees the empty Lease and updates it.
        assert!(
            handover_ns < config.retry_period_ns * 11 / 5 + 50 * NANOS_PER_MILLI,
            "seed {seed}: {handover_ns}"
        );
        assert!(second.term > first.term);
    }
}

/// Fires timer `t` of client `c` at local time `now`.
fn fire(c: &mut K8sClient, now: i64, t: K8sTimer) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(c.me.index()));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(c.me, 3, now, &mut rng, &mut out);
    c.on_timer(&mut ctx, t);
    out
}

/// The updates in `out`, by the version each expects.
fn updates(out: &Out) -> Vec<u64> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send {
                msg: K8sMsg::Update { expected_rv, .. },
                ..
            } => Some(*expected_rv),
            _ => None,
        })
        .collect()
}

/// client-go `tools/leaderelection/leaderelection.go`, `tryAcquireOrRenew`: `observedTime` is
/// reset, by the candidate's own clock, whenever the record read differs from the last one
/// (`if !bytes.Equal(le.observedRawRecord, oldLeaderElectionRawRecord)` ->
/// `setObservedRecord`: `le.observedTime = le.clock.Now()`); the record's own timestamps
/// (here the server-clock `expires_at`) are never compared with a clock (package doc: "A
/// client only acts on timestamps captured locally").
#[test]
fn a_changed_record_restarts_the_lease_duration_from_its_first_sight() {
    let mut c = client(K8sVariant::Lease, 1);
    assert!(updates(&to_client(
        &mut c,
        0,
        K8sMsg::GetResp { record: held(0, 5) }
    ))
    .is_empty());
    // The holder renewed: a new version, first seen at 1s. Its server timestamp says it has
    // long expired; the candidate does not look at it.
    let renewed = Record {
        expires_at: -10_000 * MS,
        ..held(0, 6)
    };
    let read = |record: &Record| K8sMsg::GetResp {
        record: record.clone(),
    };
    assert!(updates(&to_client(&mut c, 1_000 * MS, read(&renewed))).is_empty());
    // 1.5s after the first sight of version 5, but only 0.5s after that of version 6: held.
    assert!(updates(&to_client(&mut c, 1_500 * MS, read(&renewed))).is_empty());
    assert!(updates(&to_client(&mut c, 2_500 * MS - 1, read(&renewed))).is_empty());
    assert_eq!(
        updates(&to_client(&mut c, 2_500 * MS, read(&renewed))),
        vec![6]
    );
}

/// client-go `tools/leaderelection/leaderelection.go`, `tryAcquireOrRenew`, step 1 (the fast
/// path, kubernetes#122069): `if le.IsLeader() && le.isLeaseValid(now.Time)` the leader
/// updates the record it last observed, without a Get; `renew`:
/// `wait.Until(.., le.config.RetryPeriod, ..)`, no jitter.
#[test]
fn the_leader_renews_on_the_version_it_last_saw_without_reading() {
    let retry_ns = strict().retry_period_ns;
    let mut c = client(K8sVariant::Lease, 0);
    to_client(&mut c, 20 * MS, answer(2, 10 * MS, 1));
    let out = fire(&mut c, 200 * MS, K8sTimer::Retry);
    assert_eq!(updates(&out), vec![2]);
    assert!(!out.iter().any(|e| matches!(
        e,
        Effect::Send {
            msg: K8sMsg::Get,
            ..
        }
    )));
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::SetTimer { timer: K8sTimer::Retry, after_local_ns } if *after_local_ns == retry_ns
    )));
}

/// client-go `tools/leaderelection/leaderelection.go`, `renew`: a renewal that finds another
/// holder makes `tryAcquireOrRenew` return false, and `wait.PollImmediateUntil` keeps trying
/// until the round's `RenewDeadline`; only then does client-go stop leading. The model
/// deliberately steps down at once (stricter; see the doc's table).
#[test]
fn a_leader_shown_another_holder_steps_down_at_once() {
    let mut c = client(K8sVariant::Lease, 0);
    to_client(&mut c, 20 * MS, answer(2, 10 * MS, 1));
    assert_eq!(c.write_token(210 * MS), Some(2));
    let taken = K8sMsg::UpdateResp {
        ok: false,
        record: held(1, 3),
        sent_at: 200 * MS,
        request: 2,
    };
    let out = to_client(&mut c, 210 * MS, taken);
    assert!(out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    assert_eq!(c.write_token(210 * MS), None);
}

/// kube-controller-manager `cmd/kube-controller-manager/app/controllermanager.go`, `Run`:
/// `id = id + "_" + string(uuid.NewUUID())`: a restarted process is a new identity, so a
/// record naming its old self is someone else's and it waits the lease out
/// (`tryAcquireOrRenew`: `!le.IsLeader()`).
#[test]
fn a_restarted_process_is_a_new_identity_and_waits_out_its_old_lease() {
    let mut c = client(K8sVariant::Lease, 0);
    to_client(&mut c, 20 * MS, answer(2, 10 * MS, 1));
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut out: Out = Vec::new();
    c.on_restart(&mut Ctx::new(c.me, 3, 100 * MS, &mut rng, &mut out));
    assert_eq!(c.write_token(100 * MS), None);
    let old_self = || K8sMsg::GetResp { record: held(0, 2) };
    assert!(updates(&to_client(&mut c, 200 * MS, old_self())).is_empty());
    assert!(updates(&to_client(&mut c, 1_700 * MS - 1, old_self())).is_empty());
    assert_eq!(updates(&to_client(&mut c, 1_700 * MS, old_self())), vec![2]);
}

/// client-go `tools/leaderelection/leaderelection.go`, `NewLeaderElector`:
/// `if lec.LeaseDuration <= lec.RenewDeadline`,
/// `if lec.RenewDeadline <= time.Duration(JitterFactor*float64(lec.RetryPeriod))` and
/// `if lec.RetryPeriod < 1` are errors.
#[test]
fn settings_are_checked_as_new_leader_elector_checks_them() {
    use crate::algorithm::{Algorithm, Cluster};
    use splitbrain_sim::duration::DurationText;
    let check = |lease_ms: u64, renew_ns: u64, retry_ns: u64| {
        let settings = K8sSettings {
            lease_duration: Some(DurationText(lease_ms * NANOS_PER_MILLI)),
            renew_deadline: Some(DurationText(renew_ns)),
            retry_period: Some(DurationText(retry_ns)),
            ..K8sSettings::default()
        };
        let (_, problems) = K8sLease::lower(settings, &Cluster { nodes: 3 });
        problems.into_iter().map(|p| p.error).next()
    };
    let ms = NANOS_PER_MILLI;
    assert_eq!(check(1_500, 1_000 * ms, 200 * ms), None);
    // RenewDeadline must be above 1.2 RetryPeriod: 240ms is not, 1ns more is.
    assert!(matches!(
        check(1_500, 240 * ms, 200 * ms),
        Some(K8sError::RenewDeadlineNotAboveRetry { .. })
    ));
    assert_eq!(check(1_500, 240 * ms + 1, 200 * ms), None);
    // LeaseDuration must be above RenewDeadline.
    assert!(matches!(
        check(1_000, 1_000 * ms, 200 * ms),
        Some(K8sError::LeaseNotAboveRenewDeadline { .. })
    ));
    assert_eq!(check(1_000, 1_000 * ms - 1, 200 * ms), None);
    assert_eq!(check(1_500, 1_000 * ms, 0), Some(K8sError::ZeroRetryPeriod));
}

/// component-base `config/v1alpha1/defaults.go`, `RecommendedDefaultLeaderElectionConfiguration`:
/// `LeaseDuration` 15s, `RenewDeadline` 10s, `RetryPeriod` 2s (kube-controller-manager's and
/// kube-scheduler's); the rules are client-go's. A lease duration written alone keeps the
/// defaults' ratios (the model's own rule).
#[test]
fn defaults_are_client_gos() {
    use crate::algorithm::{Algorithm, Cluster};
    use splitbrain_sim::duration::DurationText;
    let (config, problems) = K8sLease::lower(K8sSettings::default(), &Cluster { nodes: 3 });
    assert!(problems.is_empty());
    assert_eq!(
        (
            config.lease_duration_ns,
            config.renew_deadline_ns,
            config.retry_period_ns,
            config.rules,
            config.lease_duration_s()
        ),
        (15 * S, 10 * S, 2 * S, K8sRules::ClientGo, 15)
    );
    let settings = K8sSettings {
        lease_duration: Some(DurationText(3 * S)),
        ..K8sSettings::default()
    };
    let (config, problems) = K8sLease::lower(settings, &Cluster { nodes: 3 });
    assert!(problems.is_empty());
    assert_eq!(
        (config.renew_deadline_ns, config.retry_period_ns),
        (2 * S, 400 * NANOS_PER_MILLI)
    );
}

// client-go's own rules (`K8sRules::ClientGo`, the default), with client-go's default timings.

/// A process of a `ClientGo` run with client-go's defaults (15s / 10s / 2s).
fn go_client(me: usize) -> K8sClient {
    K8sClient::new(NodeId::from(me), 3, &K8sConfig::default())
}

fn go_server() -> K8sServer {
    K8sServer::new(&K8sConfig::default())
}

/// A record held by `holder` with `LeaseDurationSeconds` `seconds`.
fn held_for(holder: Option<usize>, rv: u64, seconds: u32) -> Record {
    Record {
        holder: holder.map(id),
        resource_version: rv,
        acquired_rv: rv,
        expires_at: 0,
        lease_duration_s: seconds,
    }
}

fn read(record: Record) -> K8sMsg {
    K8sMsg::GetResp { record }
}

fn sends_get(out: &Out) -> bool {
    out.iter().any(|e| {
        matches!(
            e,
            Effect::Send {
                msg: K8sMsg::Get,
                ..
            }
        )
    })
}

fn retry_armed(out: &Out) -> Option<u64> {
    out.iter().rev().find_map(|e| match e {
        Effect::SetTimer {
            timer: K8sTimer::Retry,
            after_local_ns,
        } => Some(*after_local_ns),
        _ => None,
    })
}

/// Makes `c` (node 0) the leader: its acquisition of version 2, sent at 10ms, answered at
/// 20ms. Returns what it did.
fn go_acquired(c: &mut K8sClient) -> Out {
    let won = K8sMsg::UpdateResp {
        ok: true,
        record: held_for(Some(0), 2, 15),
        sent_at: 10 * MS,
        request: 1,
    };
    c.requests = 1;
    to_client(c, 20 * MS, won)
}

/// client-go `leaderelection_test.go`, `TestTryAcquireOrRenew`, cases "acquire from no object"
/// and "acquire from unled object": a record without a holder is taken at the first read (the
/// model's API server always has the object, created empty, so the two cases are one).
/// `tryAcquireOrRenew`: `len(oldLeaderElectionRecord.HolderIdentity) > 0` is false.
#[test]
fn client_go_case_acquire_from_an_unled_object() {
    let mut c = go_client(1);
    let out = to_client(&mut c, 0, read(held_for(None, 1, 0)));
    assert_eq!(updates(&out), vec![1]);
    let mut s = go_server();
    let (ok, record) = update_resp(&to_server(&mut s, 5 * MS, 1, update(1, 1)));
    assert!(ok);
    assert_eq!(record.holder, Some(id(1)), "outHolder baz");
}

/// `TestTryAcquireOrRenew`, "acquire from led object with the lease duration seconds": a
/// record held by another with `LeaseDurationSeconds: 3` is refused at first and taken after
/// 3s, although the candidate's own `LeaseDuration` is longer (10s there, 15s here):
/// `isLeaseValid` reads the seconds of the observed record, not the candidate's setting.
#[test]
fn client_go_case_acquire_from_a_led_object_with_the_lease_duration_seconds() {
    let mut c = go_client(1);
    let bing = || read(held_for(Some(0), 5, 3));
    assert!(updates(&to_client(&mut c, 0, bing())).is_empty());
    assert!(updates(&to_client(&mut c, 3_000 * MS - 1, bing())).is_empty());
    assert_eq!(updates(&to_client(&mut c, 3_000 * MS, bing())), vec![5]);
}

/// `TestTryAcquireOrRenew`, "acquire from led, unacked object": the record is held, but this
/// candidate observed it long ago (`observedTime: past`) and it has not changed since: taken.
#[test]
fn client_go_case_acquire_from_a_led_unacked_object() {
    let mut c = go_client(1);
    let bing = || read(held_for(Some(0), 5, 15));
    assert!(updates(&to_client(&mut c, 0, bing())).is_empty());
    assert_eq!(
        updates(&to_client(&mut c, 1_000 * S as i64, bing())),
        vec![5]
    );
}

/// `TestTryAcquireOrRenew`, "acquire from empty led, acked object": an empty holder is free
/// even when just observed (`observedTime: future`).
#[test]
fn client_go_case_acquire_from_an_empty_led_acked_object() {
    let mut c = go_client(1);
    let out = to_client(&mut c, 0, read(held_for(None, 9, 15)));
    assert_eq!(updates(&out), vec![9]);
}

/// `TestTryAcquireOrRenew`, "don't acquire from led, acked object": held by another and seen
/// to change just now: no update, and the holder is the one the candidate reports
/// (`outHolder: "bing"`). The try has returned, so the next waits from here: `acquire`'s
/// `wait.JitterUntilWithContext(.., RetryPeriod, JitterFactor, true)` (`sliding`).
#[test]
fn client_go_case_dont_acquire_from_a_led_acked_object() {
    let mut c = go_client(1);
    let out = to_client(&mut c, 0, read(held_for(Some(0), 5, 15)));
    assert!(updates(&out).is_empty());
    assert_eq!(c.known_leader(), Some(NodeId::from(0usize)));
    let retry_ns = K8sConfig::default().retry_period_ns;
    let wait = retry_armed(&out).expect("the next try is armed at the answer");
    assert!((retry_ns..=retry_ns * 11 / 5).contains(&wait), "{wait}");
}

/// `TestTryAcquireOrRenew`, "renew already acquired object", and `TestFastPathLeaderElection`,
/// "Exercise fast path after lock acquired": once acquired, `Run` goes straight into
/// `renew`, whose first round tries at once (`PollUntilContextTimeout(.., true, ..)`,
/// immediate), and a holder whose observed lease is valid renews with an Update alone
/// (`tryAcquireOrRenew` step 1).
#[test]
fn client_go_case_renew_an_already_acquired_object_on_the_fast_path() {
    let mut c = go_client(0);
    let out = go_acquired(&mut c);
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::BecameLeader { term: 2, .. })));
    assert_eq!(updates(&out), vec![2], "the first renewal goes at once");
    assert!(!sends_get(&out));
    // The round's renewal succeeds; the next round starts one retry period after it
    // returned (`wait.UntilWithContext`, sliding), again without a read.
    let renewed = K8sMsg::UpdateResp {
        ok: true,
        record: Record {
            acquired_rv: 2,
            ..held_for(Some(0), 3, 15)
        },
        sent_at: 20 * MS,
        request: 2,
    };
    let out = to_client(&mut c, 30 * MS, renewed);
    assert_eq!(
        retry_armed(&out),
        Some(K8sConfig::default().retry_period_ns)
    );
    let out = fire(&mut c, 2_030 * MS, K8sTimer::Retry);
    assert_eq!(updates(&out), vec![3]);
    assert!(!sends_get(&out));
}

/// `TestFastPathLeaderElection`, "Fallback to slow path after fast path fails": a refused
/// optimistic update (a 409, no object in it) is followed, in the same try, by a Get, and a
/// record that still names the leader is updated on the version read.
#[test]
fn client_go_case_fallback_to_the_slow_path_after_the_fast_path_fails() {
    let mut c = go_client(0);
    go_acquired(&mut c);
    let refused = K8sMsg::UpdateResp {
        ok: false,
        record: held_for(Some(0), 4, 15),
        sent_at: 20 * MS,
        request: 2,
    };
    let out = to_client(&mut c, 30 * MS, refused);
    assert!(sends_get(&out));
    assert_eq!(c.write_token(30 * MS), Some(2), "still leading");
    let out = to_client(&mut c, 40 * MS, read(held_for(Some(0), 4, 15)));
    assert_eq!(updates(&out), vec![4]);
}

/// client-go `leaderelection_test.go`, `TestReleaseLeaseLeases` ("release acquired lock from
/// no object"), `TestReleaseMethodCallsGet` and `TestReleaseRetriesOnConflict`: the holder's
/// release empties `HolderIdentity` with `LeaseDurationSeconds: 1` whatever version it last
/// saw (client-go reads first and retries on a conflict; the model's server checks the
/// holder), and only the holder's release counts (`if !le.IsLeader() { return true }`).
#[test]
fn client_go_case_release_an_acquired_lock() {
    let mut c = go_client(0);
    go_acquired(&mut c);
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut out: Out = Vec::new();
    c.on_resign(&mut Ctx::new(c.me, 3, 100 * MS, &mut rng, &mut out));
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::Send {
            msg: K8sMsg::Release { .. },
            ..
        }
    )));
    assert_eq!(c.write_token(100 * MS), None);
    let mut s = go_server();
    to_server(&mut s, 0, 0, update(0, 1));
    to_server(&mut s, 5 * MS, 0, update(0, 2)); // a renewal moves the version on
    to_server(&mut s, 6 * MS, 1, K8sMsg::Release { identity: id(1) });
    assert_eq!(s.record().holder, Some(id(0)), "not the holder: nothing");
    to_server(&mut s, 7 * MS, 0, K8sMsg::Release { identity: id(0) });
    assert_eq!((s.record().holder, s.record().lease_duration_s), (None, 1));
    // The next candidate takes the empty record at its first read.
    let mut next = go_client(1);
    let rv = s.record().resource_version;
    assert_eq!(
        updates(&to_client(&mut next, 8 * MS, read(s.record().clone()))),
        vec![rv]
    );
}

/// client-go `leaderelection.go`, `renew`: `wait.UntilWithContext(ctx, f, RetryPeriod)` runs
/// rounds `f` = `wait.PollUntilContextTimeout(ctx, RetryPeriod, RenewDeadline, true, ..)`:
/// the deadline is `RenewDeadline` from the start of a round, and a round starts one
/// `RetryPeriod` after the last successful one returned. Between rounds nothing ends
/// leadership. The `Strict` rules count from the send of the last renewal instead
/// (`the_leader_serves_until_its_renew_deadline_counted_from_sending_its_last_renewal`).
#[test]
fn client_go_counts_the_renew_deadline_from_the_start_of_a_retry_round() {
    let mut c = go_client(0);
    go_acquired(&mut c);
    let renewed = K8sMsg::UpdateResp {
        ok: true,
        record: Record {
            acquired_rv: 2,
            ..held_for(Some(0), 3, 15)
        },
        sent_at: 20 * MS,
        request: 2,
    };
    to_client(&mut c, 30 * MS, renewed);
    // Between rounds: leading however late (a pause that holds the next round back).
    assert_eq!(c.write_token(30 * MS + 100 * S as i64), Some(2));
    // The next round starts at 2.03s: its deadline is 12.03s, not 20ms + 10s.
    let out = fire(&mut c, 2_030 * MS, K8sTimer::Retry);
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::SetTimer { timer: K8sTimer::RenewDeadline, after_local_ns } if *after_local_ns == 10 * S
    )));
    assert_eq!(c.write_token(12_030 * MS - 1), Some(2));
    assert_eq!(c.write_token(12_030 * MS), None);
    let out = fire(&mut c, 12_030 * MS, K8sTimer::RenewDeadline);
    assert!(out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    // A try of the failed round answered late is cancelled with its round: no mandate.
    let late = K8sMsg::UpdateResp {
        ok: true,
        record: held_for(Some(0), 4, 15),
        sent_at: 2_030 * MS,
        request: 3,
    };
    let out = to_client(&mut c, 12_040 * MS, late);
    assert!(!out.iter().any(|e| matches!(e, Effect::BecameLeader { .. })));
    assert_eq!(c.write_token(12_040 * MS), None);
}

/// client-go `leaderelection.go`, `renew`: a try that finds another holder makes
/// `tryAcquireOrRenew` return false and `PollUntilContextTimeout` tries again every
/// `RetryPeriod` until the round's deadline; only then does `renew` return and `Run` stop
/// leading. (`Strict`: `a_leader_shown_another_holder_steps_down_at_once`.)
#[test]
fn client_go_keeps_leading_until_the_round_deadline_when_shown_another_holder() {
    let mut c = go_client(0);
    go_acquired(&mut c); // round 1 opens at 20ms: deadline 10.02s
    let refused = K8sMsg::UpdateResp {
        ok: false,
        record: held_for(Some(1), 3, 15),
        sent_at: 20 * MS,
        request: 2,
    };
    let out = to_client(&mut c, 30 * MS, refused);
    assert!(!out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    let out = to_client(&mut c, 40 * MS, read(held_for(Some(1), 3, 15)));
    assert!(updates(&out).is_empty(), "another holder's live lease");
    assert_eq!(c.write_token(10_020 * MS - 1), Some(2));
    assert_eq!(c.write_token(10_020 * MS), None);
}

/// Runs seed `seed` with client-go's default timings under `rules`, no fencing: the leader
/// is cut off from everyone at 20s (for 40s) and its VM suspended for `suspend_ns` at 21s.
fn cut_off_and_suspended(seed: u64, rules: K8sRules, suspend_ns: u64) -> RunReport {
    let config = K8sConfig {
        rules,
        ..K8sConfig::default()
    };
    let mut sim = SimConfig::quiet(seed, 3, 70 * S);
    sim.write_every_ns = 100 * NANOS_PER_MILLI;
    sim.fencing = false;
    sim.faults = vec![
        FaultSpec {
            at_ns: 20 * S,
            action: FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
            heal_after_ns: Some(40 * S),
            after: None,
        },
        FaultSpec {
            at_ns: 21 * S,
            action: FaultAction::Suspend(Target::Leader, suspend_ns),
            heal_after_ns: None,
            after: None,
        },
    ];
    Sim::new(
        sim,
        info(&config, 3),
        crate::k8s_lease::processes(3, &config),
    )
    .run()
    .expect("within the default limits")
}

/// The margin each rule set leaves, and a pause between the two. With client-go's defaults
/// (L = 15s lease, D = 10s renew deadline, P = 2s retry period), a leader cut off from the
/// API server right after a renewal applied at S (sent at `s0 <= S`, answered at `R >= S`):
///
/// - candidates may take over at `S + L` at the earliest (a read just after S starts their
///   `observedTime`, a poll exactly L later finds `isLeaseValid` false);
/// - `Strict`: the leader leads until `s0 + D`: a margin of `L - D` = 5s;
/// - `ClientGo` (`renew`): the next round starts at `R + P` and ends at `R + P + D`: a margin
///   of `L - P - D - (R - S)` = 3s less a one-way latency.
///
/// A VM suspend of the cut-off leader (its monotonic clock stands still) pushes its end
/// later by its length; 4.8s lies between the margins: never unsafe for `Strict`, and unsafe
/// for `ClientGo` whenever a candidate reads the renewal and then polls within about 1.8s of
/// the earliest instants (candidates poll every 2 to 4.4s).
#[test]
fn a_suspend_between_the_two_margins_breaks_client_go_and_not_the_strict_rules() {
    let suspend_ns = 4_800 * NANOS_PER_MILLI;
    let seeds = 1..=20;
    let unsafe_seeds = |rules| {
        seeds
            .clone()
            .filter(|&seed| {
                let report = cut_off_and_suspended(seed, rules, suspend_ns);
                assert!(report.leaders.len() >= 2, "seed {seed}: a takeover");
                !report.violated_safety().is_empty()
            })
            .count()
    };
    assert_eq!(unsafe_seeds(K8sRules::Strict), 0);
    let client_go = unsafe_seeds(K8sRules::ClientGo);
    assert!(client_go >= 2, "{client_go} of 20 seeds");
    // Shorter than client-go's margin less the candidates' quickest poll: safe under both.
    let short_ns = 2_500 * NANOS_PER_MILLI;
    for seed in seeds {
        let report = cut_off_and_suspended(seed, K8sRules::ClientGo, short_ns);
        assert!(report.violated_safety().is_empty(), "seed {seed}");
    }
}

/// client-go `leaderelection.go`, `tryAcquireOrRenew`: `LeaseDurationSeconds:
/// int(le.config.LeaseDuration / time.Second)`: under client-go's rules a lease duration that
/// is not whole seconds is cut, and `check`/`run`/`compare`/`sweep` say so (the model's
/// `adjustments`); whole seconds, or the `Strict` rules, run as written.
#[test]
fn a_lease_duration_cut_to_whole_seconds_is_reported() {
    use crate::algorithm::Algorithm;
    let cut = K8sConfig {
        rules: K8sRules::ClientGo,
        ..strict()
    };
    let notes = K8sLease::adjustments(&cut);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("LeaseDurationSeconds 1"), "{notes:?}");
    assert!(
        notes[0].contains("not longer than the renew deadline"),
        "{notes:?}"
    );
    assert!(K8sLease::adjustments(&strict()).is_empty());
    assert!(K8sLease::adjustments(&K8sConfig::default()).is_empty());
}
