//! Unit tests of the modeled etcd: lease expiry at its boundaries, watch delivery order,
//! and the recipe's decisions, driving the service and clients by hand.

use super::*;
use splitbrain_sim::{Ctx, Process as _};
use splitbrain_sim::{Effect, Signal, SimRng, StreamId, NANOS_PER_MILLI};

const MS: i64 = NANOS_PER_MILLI as i64;

type Out = Vec<Effect<EtcdMsg, EtcdTimer>>;

fn service_call(
    s: &mut EtcdService,
    now: i64,
    f: impl FnOnce(&mut EtcdService, &mut Ctx<'_, EtcdMsg, EtcdTimer>),
) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(3));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId::from(3usize), 3, now, &mut rng, &mut out);
    f(s, &mut ctx);
    out
}

fn msg(s: &mut EtcdService, now: i64, from: usize, m: EtcdMsg) -> Out {
    service_call(s, now, |s, ctx| s.on_message(ctx, NodeId::from(from), m))
}

fn sends(out: &Out) -> Vec<(usize, EtcdMsg)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send { to, msg } => Some((to.index(), msg.clone())),
            _ => None,
        })
        .collect()
}

fn expired(out: &Out) -> Vec<usize> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Signal(Signal::LeaseExpired { holder }) => Some(holder.index()),
            _ => None,
        })
        .collect()
}

fn config() -> EtcdConfig {
    EtcdConfig {
        ttl_ns: 1000 * NANOS_PER_MILLI,
        min_ttl_ns: 500 * NANOS_PER_MILLI,
        election_timeout_ns: 500 * NANOS_PER_MILLI,
        keepalive_ns: 333 * NANOS_PER_MILLI,
        variant: EtcdVariant::Revision,
        client: EtcdClientKind::SendTime,
        lessor_phase_ns: None,
        members: 1,
        version: EtcdVersion::V3_4,
        write_every_ns: None,
    }
}

/// Grants a lease to `from` at `now` and creates its key; returns (lease, create revision).
fn join(s: &mut EtcdService, now: i64, from: usize) -> (u64, u64) {
    let out = msg(
        s,
        now,
        from,
        EtcdMsg::LeaseGrant {
            ttl_ns: 1000 * MS as u64,
            sent_at: 0,
            campaign: 1,
        },
    );
    let lease = match &sends(&out)[0].1 {
        EtcdMsg::LeaseGrantResp { lease, .. } => *lease,
        other => panic!("{other:?}"),
    };
    let out = msg(s, now, from, EtcdMsg::Txn { lease });
    match &sends(&out)[0].1 {
        EtcdMsg::TxnResp { create_rev, .. } => (lease, *create_rev),
        other => panic!("{other:?}"),
    }
}

/// The lessor's sweeps in these tests: the service never ran `on_start`, so they fall on
/// multiples of 500ms from 0.
fn sweep_after(deadline_ns: u64) -> u64 {
    deadline_ns.div_ceil(config::LESSOR_SWEEP_NS) * config::LESSOR_SWEEP_NS
}

#[test]
fn an_expired_lease_lives_until_the_next_sweep_and_a_late_keepalive_waits_for_it() {
    let mut s = EtcdService::new(&config());
    let (lease, _) = join(&mut s, 100 * MS, 0);
    // The deadline is 1100ms; one nanosecond before it the keep-alive renews the lease.
    let mut renewed = s.clone();
    let out = msg(
        &mut renewed,
        1100 * MS - 1,
        0,
        EtcdMsg::KeepAlive { lease, sent_at: 7 },
    );
    let answer = EtcdMsg::KeepAliveResp {
        lease,
        ttl_ns: 1000 * MS as u64,
        sent_at: 7,
    };
    assert_eq!(sends(&out), vec![(0, answer)]);
    // After the deadline, before the sweep (1500ms): no answer yet (etcd's `Renew` waits
    // for the revocation), and the key is still there.
    let out = msg(
        &mut s,
        1200 * MS,
        0,
        EtcdMsg::KeepAlive { lease, sent_at: 8 },
    );
    assert!(sends(&out).is_empty(), "{out:?}");
    assert_eq!(s.keys().len(), 1);
    assert_eq!(s.lease_count(), 1);
    // The sweep revokes it, signals the leader's expiry and answers the keep-alive: gone.
    let out = service_call(&mut s, 1500 * MS, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert_eq!(expired(&out), vec![0]);
    let gone = EtcdMsg::KeepAliveResp {
        lease,
        ttl_ns: 0,
        sent_at: 8,
    };
    assert_eq!(sends(&out), vec![(0, gone)]);
    assert_eq!(s.lease_count(), 0);
    assert!(s.keys().is_empty());
}

#[test]
fn the_expiry_timer_fires_at_the_first_sweep_after_the_deadline() {
    let mut s = EtcdService::new(&config());
    let grant = EtcdMsg::LeaseGrant {
        ttl_ns: 1000 * MS as u64,
        sent_at: 0,
        campaign: 1,
    };
    let out = msg(&mut s, 100 * MS, 0, grant);
    // Deadline 1100ms, swept at 1500ms: 1400ms from now.
    assert_eq!(sweep_after(1100 * MS as u64), 1500 * MS as u64);
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::SetTimer { timer: EtcdTimer::Expiry, after_local_ns } if *after_local_ns == 1400 * MS as u64
    )));
    // A sweep before the deadline leaves the lease and re-arms for the next due sweep.
    let out = service_call(&mut s, 1000 * MS, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert_eq!(s.lease_count(), 1);
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::SetTimer { timer: EtcdTimer::Expiry, after_local_ns } if *after_local_ns == 500 * MS as u64
    )));
    service_call(&mut s, 1500 * MS, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert_eq!(s.lease_count(), 0);
}

#[test]
fn a_restarted_service_extends_every_lease_by_the_election_timeout() {
    let mut s = EtcdService::new(&config());
    let (_, _) = join(&mut s, 0, 0);
    // Restart at 800ms: deadline 800 + 500 (election timeout) + 1000 = 2300ms, revoked at
    // the first sweep at or after it (the sweeps start again at a phase of their own).
    let out = service_call(&mut s, 800 * MS, |s, ctx| s.on_restart(ctx));
    let sweep_in_ns = out
        .iter()
        .find_map(|e| match e {
            Effect::SetTimer {
                timer: EtcdTimer::Expiry,
                after_local_ns,
            } => Some(*after_local_ns as i64),
            _ => None,
        })
        .expect("an expiry timer");
    assert!(
        (1500 * MS..2000 * MS).contains(&sweep_in_ns),
        "{sweep_in_ns}"
    );
    service_call(&mut s, 2300 * MS - 1, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert_eq!(s.lease_count(), 1);
    service_call(&mut s, 800 * MS + sweep_in_ns, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert_eq!(s.lease_count(), 0);
}

#[test]
fn a_written_lessor_phase_places_the_sweeps() {
    let cfg = EtcdConfig {
        lessor_phase_ns: Some(123 * MS as u64),
        ..config()
    };
    let mut s = EtcdService::new(&cfg);
    service_call(&mut s, 0, |s, ctx| s.on_start(ctx));
    // Deadline 1000ms; sweeps at 123ms + k x 500ms: the first at or after it is 1123ms.
    let out = msg(
        &mut s,
        0,
        0,
        EtcdMsg::LeaseGrant {
            ttl_ns: 1000 * MS as u64,
            sent_at: 0,
            campaign: 1,
        },
    );
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::SetTimer { timer: EtcdTimer::Expiry, after_local_ns } if *after_local_ns == 1123 * MS as u64
    )));
    // A restart at 800ms starts the sweeps again at 800 + 123ms: the deadline 800 + 500
    // (election timeout) + 1000 = 2300ms is swept at 2423ms.
    let out = service_call(&mut s, 800 * MS, |s, ctx| s.on_restart(ctx));
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::SetTimer { timer: EtcdTimer::Expiry, after_local_ns } if *after_local_ns == 1623 * MS as u64
    )));
}

#[test]
fn a_written_lessor_phase_still_makes_the_draw_it_replaces() {
    // The service's stream gives the same next draw whether the phase was drawn or written,
    // so writing the drawn phase back changes nothing else in a run.
    let next_draw = |lessor_phase_ns| {
        let cfg = EtcdConfig {
            lessor_phase_ns,
            ..config()
        };
        let mut s = EtcdService::new(&cfg);
        let mut rng = SimRng::stream(1, StreamId::node(3));
        let mut out = Vec::new();
        let mut ctx = Ctx::new(NodeId::from(3usize), 3, 0, &mut rng, &mut out);
        s.on_start(&mut ctx);
        rng.below(1 << 40)
    };
    assert_eq!(next_draw(None), next_draw(Some(123 * MS as u64)));
}

#[test]
fn a_ttl_below_the_minimum_is_raised_to_it() {
    let mut s = EtcdService::new(&config());
    let out = msg(
        &mut s,
        0,
        0,
        EtcdMsg::LeaseGrant {
            ttl_ns: 1,
            sent_at: 0,
            campaign: 1,
        },
    );
    assert_eq!(
        sends(&out)[0].1,
        EtcdMsg::LeaseGrantResp {
            lease: 1,
            ttl_ns: 500 * MS as u64,
            sent_at: 0,
            campaign: 1,
        }
    );
}

/// Issue 43: a TTL of 2^63 ns or more wrapped to a negative span (`as i64` before the
/// saturating add), and the lease was gone at the next sweep. It saturates: the lease lives.
#[test]
fn a_ttl_past_what_a_clock_holds_saturates_instead_of_wrapping() {
    for ttl_ns in [1 << 63, u64::MAX] {
        let mut s = EtcdService::new(&config());
        let grant = EtcdMsg::LeaseGrant {
            ttl_ns,
            sent_at: 0,
            campaign: 1,
        };
        let out = msg(&mut s, 100 * MS, 0, grant);
        let lease = match &sends(&out)[0].1 {
            EtcdMsg::LeaseGrantResp { lease, .. } => *lease,
            other => panic!("{other:?}"),
        };
        msg(&mut s, 100 * MS, 0, EtcdMsg::Txn { lease });
        let out = service_call(&mut s, 1500 * MS, |s, ctx| {
            s.on_timer(ctx, EtcdTimer::Expiry)
        });
        assert!(expired(&out).is_empty(), "{ttl_ns}: {out:?}");
        assert_eq!((s.lease_count(), s.keys().len()), (1, 1), "{ttl_ns}");
        // A keep-alive renews it as long, not into the past.
        let out = msg(
            &mut s,
            2000 * MS,
            0,
            EtcdMsg::KeepAlive { lease, sent_at: 1 },
        );
        let renewed = EtcdMsg::KeepAliveResp {
            lease,
            ttl_ns,
            sent_at: 1,
        };
        assert_eq!(sends(&out), vec![(0, renewed)]);
    }
}

/// etcd refuses a TTL past `lease.MaxLeaseTTL` (9,000,000,000 s): so does the JSON form an
/// external node writes, as a request the service does not take. The longest one is taken.
#[test]
fn a_lease_grant_past_etcds_longest_ttl_is_refused_in_json() {
    let longest = config::MAX_LEASE_TTL_NS;
    assert_eq!(longest, 9_000_000_000 * 1_000_000_000);
    let grant = |ttl_ns: u64| {
        let text = format!(r#"{{"type":"LeaseGrant","ttl_ns":{ttl_ns},"sent_at":0,"campaign":1}}"#);
        serde_json::from_str::<EtcdMsg>(&text)
    };
    assert!(matches!(
        grant(longest),
        Ok(EtcdMsg::LeaseGrant { ttl_ns, .. }) if ttl_ns == longest
    ));
    for too_long in [longest + 1, 1 << 63, u64::MAX] {
        let error = grant(too_long).expect_err("refused").to_string();
        assert!(
            error.contains("longer than etcd's longest lease TTL, 9000000000s"),
            "{error}"
        );
    }
}

#[test]
fn the_create_revision_compare_makes_the_txn_idempotent_and_revisions_grow() {
    let mut s = EtcdService::new(&config());
    let (l0, r0) = join(&mut s, 0, 0);
    let (_, r1) = join(&mut s, 0, 1);
    assert!(r0 < r1);
    let out = msg(&mut s, 0, 0, EtcdMsg::Txn { lease: l0 });
    match &sends(&out)[0].1 {
        EtcdMsg::TxnResp {
            create_rev, keys, ..
        } => {
            assert_eq!(*create_rev, r0);
            assert_eq!(keys, &vec![(r0, NodeId(0)), (r1, NodeId(1))]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn watchers_hear_a_delete_in_registration_order_and_only_once() {
    let mut s = EtcdService::new(&config());
    let (l0, r0) = join(&mut s, 0, 0);
    join(&mut s, 0, 1);
    join(&mut s, 0, 2);
    msg(
        &mut s,
        1,
        2,
        EtcdMsg::Watch {
            key: r0,
            start_rev: 1,
        },
    );
    msg(
        &mut s,
        2,
        1,
        EtcdMsg::Watch {
            key: r0,
            start_rev: 1,
        },
    );
    let out = msg(&mut s, 3, 0, EtcdMsg::Revoke { lease: l0 });
    let to: Vec<usize> = sends(&out).iter().map(|(to, _)| *to).collect();
    assert_eq!(to, vec![2, 1]);
    // Revoked, not expired: no expiry signal.
    assert!(expired(&out).is_empty());
    // A watch on a key already deleted replays the delete at once.
    let out = msg(
        &mut s,
        4,
        1,
        EtcdMsg::Watch {
            key: r0,
            start_rev: 1,
        },
    );
    assert!(matches!(sends(&out)[0], (1, EtcdMsg::WatchEvent { key, .. }) if key == r0));
}

#[test]
fn a_waiters_expiry_is_not_signalled_as_a_leaders() {
    let mut s = EtcdService::new(&config());
    let (l0, _) = join(&mut s, 0, 0);
    join(&mut s, 500 * MS, 1);
    // Keep the leader alive; the waiter's lease runs out at 1500ms.
    msg(
        &mut s,
        900 * MS,
        0,
        EtcdMsg::KeepAlive {
            lease: l0,
            sent_at: 0,
        },
    );
    let out = service_call(&mut s, 1500 * MS, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert!(expired(&out).is_empty());
    assert_eq!(s.keys().len(), 1);
}

#[test]
fn setnx_grants_one_holder_until_the_ttl_then_the_next() {
    let mut s = EtcdService::new(&EtcdConfig {
        variant: EtcdVariant::SetNx,
        ..config()
    });
    let a = msg(
        &mut s,
        0,
        0,
        EtcdMsg::SetNx {
            ttl_ns: 1000 * MS as u64,
        },
    );
    let b = msg(
        &mut s,
        999 * MS,
        1,
        EtcdMsg::SetNx {
            ttl_ns: 1000 * MS as u64,
        },
    );
    let c = msg(
        &mut s,
        1000 * MS,
        1,
        EtcdMsg::SetNx {
            ttl_ns: 1000 * MS as u64,
        },
    );
    let acquired = |o: &Out| matches!(sends(o)[0].1, EtcdMsg::SetNxResp { acquired: true, .. });
    assert!(acquired(&a) && !acquired(&b) && acquired(&c));
    assert_eq!(expired(&c), vec![0]);
}

/// Drives one client by hand with local time `now`.
fn client_call(
    c: &mut EtcdClient,
    now: i64,
    f: impl FnOnce(&mut EtcdClient, &mut Ctx<'_, EtcdMsg, EtcdTimer>),
) -> Out {
    client_call_on(false, c, now, f)
}

/// [`client_call`] with the messages on `Stream` connections if `stream`.
fn client_call_on(
    stream: bool,
    c: &mut EtcdClient,
    now: i64,
    f: impl FnOnce(&mut EtcdClient, &mut Ctx<'_, EtcdMsg, EtcdTimer>),
) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId::from(0usize), 3, now, &mut rng, &mut out).on_stream(stream);
    f(c, &mut ctx);
    out
}

fn claims(out: &Out) -> Vec<(u64, u64)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::BecameLeader { term, token } => Some((*term, *token)),
            _ => None,
        })
        .collect()
}

/// A client that was granted a 1s lease (asked at local 0) and created key 5.
fn client_with_key(variant: EtcdVariant, keys: Vec<(u64, usize)>) -> (EtcdClient, Out) {
    let cfg = EtcdConfig {
        variant,
        ..config()
    };
    client_with_key_in(&cfg, keys)
}

/// The same client with settings `cfg`.
fn client_with_key_in(cfg: &EtcdConfig, keys: Vec<(u64, usize)>) -> (EtcdClient, Out) {
    let mut c = EtcdClient::new(NodeId(0), 3, cfg);
    client_call(&mut c, 0, |c, ctx| c.on_start(ctx));
    client_call(&mut c, 10 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            EtcdMsg::LeaseGrantResp {
                lease: 1,
                ttl_ns: 1000 * MS as u64,
                sent_at: 0,
                campaign: 1,
            },
        )
    });
    let keys = keys
        .into_iter()
        .map(|(r, o)| (r, NodeId::from(o)))
        .collect();
    let out = client_call(&mut c, 20 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            EtcdMsg::TxnResp {
                lease: 1,
                create_rev: 5,
                revision: 6,
                keys,
            },
        )
    });
    (c, out)
}

#[test]
fn the_lowest_key_leads_with_its_revision_as_token_until_its_own_clock_says_the_lease_ran_out() {
    let (c, out) = client_with_key(EtcdVariant::Revision, vec![(5, 0), (6, 1)]);
    assert_eq!(claims(&out), vec![(5, 5)]);
    // The deadline counts from the grant's send time (local 0), not its arrival.
    assert_eq!(c.write_token(1000 * MS - 1), Some(5));
    assert_eq!(c.write_token(1000 * MS), None);
}

#[test]
fn the_wall_clock_variant_takes_its_token_from_the_local_clock() {
    let (_, out) = client_with_key(EtcdVariant::WallClockToken, vec![(5, 0)]);
    assert_eq!(claims(&out), vec![(5, 20)]);
}

#[test]
fn a_waiter_watches_its_predecessor_not_the_leader() {
    let (c, out) = client_with_key(EtcdVariant::Revision, vec![(2, 1), (4, 2), (5, 0)]);
    assert!(claims(&out).is_empty());
    assert_eq!(c.phase(), Phase::Waiting { pred: 4 });
    assert_eq!(c.known_leader(), Some(NodeId(1)));
    assert!(sends(&out).contains(&(
        3,
        EtcdMsg::Watch {
            key: 4,
            start_rev: 7
        }
    )));
}

#[test]
fn a_waiter_whose_own_key_is_gone_does_not_lead_when_its_predecessor_goes() {
    let (mut c, _) = client_with_key(EtcdVariant::Revision, vec![(4, 1), (5, 0)]);
    client_call(&mut c, 30 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            EtcdMsg::WatchEvent {
                key: 4,
                revision: 9,
            },
        )
    });
    // The range shows neither the predecessor nor the own key (its lease expired).
    let out = client_call(&mut c, 40 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            EtcdMsg::RangeResp {
                revision: 9,
                keys: vec![(8, NodeId(2))],
            },
        )
    });
    assert!(claims(&out).is_empty());
    assert!(matches!(c.phase(), Phase::Granting { .. }));
    assert!(sends(&out).contains(&(3, EtcdMsg::Revoke { lease: 1 })));
}

#[test]
fn a_keepalive_answered_with_ttl_zero_ends_leadership() {
    let (mut c, _) = client_with_key(EtcdVariant::Revision, vec![(5, 0)]);
    let out = client_call(&mut c, 400 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            EtcdMsg::KeepAliveResp {
                lease: 1,
                ttl_ns: 0,
                sent_at: 333 * MS,
            },
        )
    });
    assert!(out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    assert_eq!(c.write_token(400 * MS), None);
}

#[test]
fn info_is_the_granted_ttl_plus_one_sweep_and_one_keepalive() {
    let about = info(&config(), 5);
    assert_eq!(about.name, "etcd");
    assert_eq!(about.min_group_for_progress, 1);
    assert_eq!(
        about.failure_detection_ns,
        (1000 + 500 + 333) * NANOS_PER_MILLI
    );
}

// What an election record means for the recipe: it opens when the service deletes the
// leader's key (its lease expired or was revoked) or creates the first key of all, and
// closes at the next claim.

use crate::testing::traced::{self, crash_leader, deliveries, Events};
use splitbrain_sim::{EventKind, FaultSpec, RunReport};

const S: u64 = 1_000_000_000;

fn run_traced(members: usize, cfg: &EtcdConfig, faults: Vec<FaultSpec>) -> (RunReport, Events) {
    traced::run_traced(
        members,
        info(cfg, members),
        crate::etcd::processes(members, cfg),
        faults,
    )
}

/// The first time at or after `from_ns` the service's expiry timer fired (a lessor sweep;
/// its phase is drawn per run).
fn first_sweep_at_or_after(events: &Events, service: usize, from_ns: u64) -> u64 {
    let at = Some(NodeId::from(service));
    events
        .0
        .iter()
        .filter(|e| e.node == at && e.t_ns >= from_ns)
        .find(|e| matches!(&e.kind, EventKind::Timer { timer } if timer.as_ref() == "expiry"))
        .map(|e| e.t_ns)
        .expect("a sweep after the deadline")
}

/// Runs two crashes of the leader and checks each failover's election: it starts when the
/// service expires the dead holder's lease (at the first sweep after its last renewal, by
/// `renewals`, plus the TTL; the SetNx lock, a Redis key, at that instant) and ends at the
/// next claim.
fn assert_one_election_per_failover_from_the_expiry(cfg: &EtcdConfig, renewals: &[&str]) {
    let (report, events) = run_traced(5, cfg, vec![crash_leader(4, 3), crash_leader(10, 3)]);
    traced::assert_one_election_per_failover(&report, |failover| {
        let restart_ns = failover.at_ns + 3 * S;
        let last = *deliveries(&events, 5, failover.old_leader, renewals, restart_ns)
            .last()
            .expect("the leader renewed");
        let deadline = last + cfg.granted_ttl_ns();
        match cfg.variant {
            EtcdVariant::SetNx => deadline,
            _ => first_sweep_at_or_after(&events, 5, deadline),
        }
    });
}

#[test]
fn each_failover_is_one_election_from_the_expiry_of_the_dead_leaders_lease_to_the_next_claim() {
    for client in [EtcdClientKind::SendTime, EtcdClientKind::Clientv3] {
        let cfg = EtcdConfig { client, ..config() };
        assert_one_election_per_failover_from_the_expiry(&cfg, &["LeaseGrant", "KeepAlive"]);
    }
}

#[test]
fn a_setnx_failover_is_one_election_from_the_locks_expiry_to_the_next_acquisition() {
    let cfg = EtcdConfig {
        variant: EtcdVariant::SetNx,
        ..config()
    };
    assert_one_election_per_failover_from_the_expiry(&cfg, &["SetNx", "Extend"]);
}

#[test]
fn a_quiet_run_has_one_election_and_leaves_none_open() {
    for variant in [EtcdVariant::Revision, EtcdVariant::SetNx] {
        let cfg = EtcdConfig {
            variant,
            ..config()
        };
        let (report, _) = run_traced(5, &cfg, Vec::new());
        traced::assert_one_election_and_none_left_open(&report, &format!("{variant:?}"));
    }
}

#[test]
fn a_resignation_starts_the_election_when_the_service_revokes_the_lease() {
    let (report, _) = run_traced(3, &config(), vec![traced::resign_leader(5)]);
    // The revoke travels one message latency (1 to 10ms here); nobody waits for a TTL.
    traced::assert_handover_election_starts_at_the_service(&report);
}

fn elections_started(out: &Out) -> usize {
    out.iter()
        .filter(|e| matches!(e, Effect::Signal(Signal::ElectionStarted { .. })))
        .count()
}

/// The lease a grant answered.
fn lease_of(out: &Out) -> u64 {
    match &sends(out)[0].1 {
        EtcdMsg::LeaseGrantResp { lease, .. } => *lease,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_service_starts_an_election_for_the_first_key_and_for_the_leaders_only() {
    let mut s = EtcdService::new(&config());
    let ttl_ns = 1000 * MS as u64;
    let grant = msg(
        &mut s,
        0,
        0,
        EtcdMsg::LeaseGrant {
            ttl_ns,
            sent_at: 0,
            campaign: 1,
        },
    );
    assert_eq!(elections_started(&grant), 0);
    let l0 = lease_of(&grant);
    let first = msg(&mut s, 0, 0, EtcdMsg::Txn { lease: l0 });
    assert_eq!(elections_started(&first), 1, "the first key");
    let (l1, _) = join(&mut s, 0, 1);
    let (l2, _) = join(&mut s, 0, 2);
    // A waiter leaving is no vacancy; the leader leaving is one.
    let waiter = msg(&mut s, 1, 1, EtcdMsg::Revoke { lease: l1 });
    assert_eq!(elections_started(&waiter), 0);
    let leader = msg(&mut s, 2, 0, EtcdMsg::Revoke { lease: l0 });
    assert_eq!(elections_started(&leader), 1);
    let last = msg(&mut s, 3, 2, EtcdMsg::Revoke { lease: l2 });
    assert_eq!(elections_started(&last), 1);
    // The seat is already vacant: a new first key does not start another election.
    let lease = lease_of(&msg(
        &mut s,
        4,
        0,
        EtcdMsg::LeaseGrant {
            ttl_ns,
            sent_at: 0,
            campaign: 1,
        },
    ));
    assert_eq!(
        elections_started(&msg(&mut s, 4, 0, EtcdMsg::Txn { lease })),
        0
    );
}

#[test]
fn leases_expiring_together_leave_the_seat_vacant_once() {
    let mut s = EtcdService::new(&config());
    for client in 0..3 {
        join(&mut s, 0, client);
    }
    let out = service_call(&mut s, 1000 * MS, |s, ctx| {
        s.on_timer(ctx, EtcdTimer::Expiry)
    });
    assert_eq!(s.lease_count(), 0);
    assert_eq!(expired(&out), vec![0, 1, 2]);
    assert_eq!(elections_started(&out), 1);
}

/// The grant of `lease` for the request the client sent at `sent_at` in `campaign`.
fn granted(lease: u64, sent_at: i64, campaign: u64) -> EtcdMsg {
    EtcdMsg::LeaseGrantResp {
        lease,
        ttl_ns: 1000 * MS as u64,
        sent_at,
        campaign,
    }
}

#[test]
fn answers_meant_for_an_abandoned_campaign_are_ignored() {
    let mut c = EtcdClient::new(NodeId(0), 3, &config());
    client_call(&mut c, 0, |c, ctx| c.on_start(ctx));
    client_call(&mut c, 10 * MS, |c, ctx| {
        c.on_message(ctx, NodeId(3), granted(1, 0, 1))
    });
    // The lease runs out (by the client's clock) before the transaction is answered: the
    // client revokes lease 1 and campaigns again from local 1s.
    client_call(&mut c, 1000 * MS, |c, ctx| {
        c.on_timer(ctx, EtcdTimer::LeaseDeadline)
    });
    assert_eq!(c.phase(), Phase::Granting { campaign: 2 });
    // A grant asked for by the first campaign is not this campaign's lease, whatever the
    // clocks say (a backward jump can make an old request look newer).
    client_call(&mut c, 1010 * MS, |c, ctx| {
        c.on_message(ctx, NodeId(3), granted(2, 300 * MS, 1))
    });
    assert_eq!(c.phase(), Phase::Granting { campaign: 2 });
    client_call(&mut c, 1020 * MS, |c, ctx| {
        c.on_message(ctx, NodeId(3), granted(3, 1000 * MS, 2))
    });
    assert_eq!(c.phase(), Phase::Creating);
    // The late answer to lease 1's transaction says its key is the lowest; lease 1 is
    // revoked, so this must not make a leader.
    let out = client_call(&mut c, 1030 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            EtcdMsg::TxnResp {
                lease: 1,
                create_rev: 4,
                revision: 4,
                keys: vec![(4, NodeId(0))],
            },
        )
    });
    assert!(claims(&out).is_empty());
    assert_eq!(c.phase(), Phase::Creating);
}

#[test]
fn a_leader_ignores_an_older_view_and_steps_down_on_a_newer_one_that_disagrees() {
    let (mut c, out) = client_with_key(EtcdVariant::Revision, vec![(5, 0)]);
    assert_eq!(claims(&out), vec![(5, 5)]);
    let range = |revision, keys| EtcdMsg::RangeResp { revision, keys };
    // Answered before the claim's view (revision 6), delivered after it: stale.
    client_call(&mut c, 30 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            range(5, vec![(3, NodeId(1)), (5, NodeId(0))]),
        )
    });
    assert_eq!(c.phase(), Phase::Leading);
    let out = client_call(&mut c, 40 * MS, |c, ctx| {
        c.on_message(
            ctx,
            NodeId(3),
            range(7, vec![(3, NodeId(1)), (5, NodeId(0))]),
        )
    });
    assert!(out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    assert_ne!(c.phase(), Phase::Leading);
}

// What the real servers do (issue 12's measurements of etcd 3.4.23 and its Go client; the
// conformance suite in `conformance/` measures them again against the real server).

fn clientv3(ttl_s: u64) -> EtcdConfig {
    let mut cfg = EtcdConfig {
        ttl_ns: ttl_s * S,
        election_timeout_ns: config::ETCD_ELECTION_TIMEOUT_NS,
        min_ttl_ns: config::min_ttl_for(config::ETCD_ELECTION_TIMEOUT_NS),
        client: EtcdClientKind::Clientv3,
        ..config()
    };
    cfg.keepalive_ns = cfg.granted_ttl_ns() / 3;
    cfg
}

fn isolate_leader(at_s: u64, for_s: u64) -> FaultSpec {
    FaultSpec {
        at_ns: at_s * S,
        action: splitbrain_sim::FaultAction::Partition(splitbrain_sim::PartitionShape::Isolate(
            splitbrain_sim::Target::Leader,
        )),
        heal_after_ns: Some(for_s * S),
        after: None,
    }
}

#[test]
fn clientv3_keeps_alive_a_third_of_the_ttl_after_each_answer_rounded_up_to_its_500ms_loop() {
    // Measured: 1.00s for TTL 2s and 2.00s for TTL 5s (not 0.667s and 1.667s).
    for (ttl_s, interval_ms) in [(2, 1000), (5, 2000)] {
        let (_, events) = run_traced(1, &clientv3(ttl_s), vec![]);
        let sent = deliveries(&events, 1, NodeId::from(0), &["KeepAlive"], 15 * S);
        assert!(sent.len() >= 5, "{sent:?}");
        // After the first (sent with the grant's answer), every interval is the loop's.
        for gap in sent.windows(2).skip(1).map(|w| w[1] - w[0]) {
            let off_ns = gap.abs_diff(interval_ms * NANOS_PER_MILLI);
            assert!(
                off_ns < 10 * NANOS_PER_MILLI,
                "TTL {ttl_s}s: gap {gap} in {sent:?}"
            );
        }
    }
}

#[test]
fn a_ttl_below_etcds_minimum_is_granted_the_minimum() {
    // Measured: a 1s request is granted 2s with the default 1s election timeout.
    let cfg = EtcdConfig {
        ttl_ns: S,
        ..clientv3(2)
    };
    assert_eq!(cfg.granted_ttl_ns(), 2 * S);
    let mut s = EtcdService::new(&cfg);
    let grant = EtcdMsg::LeaseGrant {
        ttl_ns: S,
        sent_at: 0,
        campaign: 1,
    };
    let out = msg(&mut s, 0, 0, grant);
    assert!(matches!(
        sends(&out)[0].1,
        EtcdMsg::LeaseGrantResp { ttl_ns, .. } if ttl_ns == 2 * S
    ));
}

/// The old leader's belief and the next leader's claim after the old one is cut off from
/// the service at 5s for 6s: (when the old one stepped down, when the next one claimed).
fn step_down_and_next_claim(cfg: &EtcdConfig) -> (u64, u64) {
    let (report, _) = run_traced(3, cfg, vec![isolate_leader(5, 6)]);
    let old = &report.leadership_spans[0];
    let next = report
        .leadership_spans
        .iter()
        .find(|span| span.node != old.node)
        .expect("a waiter took over");
    (old.to_ns, next.from_ns)
}

#[test]
fn clientv3_cut_off_from_the_service_believes_past_the_servers_expiry_and_overlaps() {
    // Measured with TTL 2s: the waiter acquired 1.6-2.05s after the cut, the cut-off
    // holder's session ended 2.56s after it: both believed for 0.5-0.93s.
    let (stepped_down, next_claimed) = step_down_and_next_claim(&clientv3(2));
    assert!(
        stepped_down > next_claimed,
        "no overlap: stepped down at {stepped_down}, next claimed at {next_claimed}"
    );
    let overlap_ns = stepped_down - next_claimed;
    assert!(overlap_ns <= 2 * S, "{overlap_ns}");
    // The careful client, counting from the send time and checking at that instant, gives
    // up before the service expires its lease.
    let careful = EtcdConfig {
        client: EtcdClientKind::SendTime,
        ..clientv3(2)
    };
    let (stepped_down, next_claimed) = step_down_and_next_claim(&careful);
    assert!(stepped_down < next_claimed, "{stepped_down} {next_claimed}");
}

#[test]
fn clientv3_ends_its_session_on_the_first_deadline_loop_pass_after_the_deadline() {
    let (mut c, out) = client_with_key_in(&clientv3(2), vec![(5, 0)]);
    assert_eq!(claims(&out), vec![(5, 5)]);
    // An answer arriving at 1000ms: the deadline is 3000ms.
    let answer = EtcdMsg::KeepAliveResp {
        lease: 1,
        ttl_ns: 2 * S,
        sent_at: 0,
    };
    client_call(&mut c, 1000 * MS, |c, ctx| {
        c.on_message(ctx, NodeId::from(3), answer)
    });
    assert_eq!(c.lease_deadline(), 3000 * MS);
    // Past the deadline but before a loop pass it still leads and writes.
    assert_eq!(c.write_token(3400 * MS), Some(5));
    let out = client_call(&mut c, 3000 * MS, |c, ctx| {
        c.on_timer(ctx, EtcdTimer::LeaseDeadline)
    });
    assert!(!out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    let out = client_call(&mut c, 3500 * MS, |c, ctx| {
        c.on_timer(ctx, EtcdTimer::LeaseDeadline)
    });
    assert!(out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    assert_eq!(c.write_token(3500 * MS), None);
}

/// Range requests the service took from waiters over a whole 15 s run.
fn ranges_at_service(transport: splitbrain_sim::Transport) -> usize {
    let cfg = config();
    let members = 3;
    let (_, events) = traced::run_traced_on(
        transport,
        members,
        info(&cfg, members),
        crate::etcd::processes(members, &cfg),
        Vec::new(),
    );
    (0..members)
        .map(|m| deliveries(&events, members, NodeId::from(m), &["Range"], u64::MAX).len())
        .sum()
}

/// clientv3's `concurrency.Election`: a waiter blocks on its watch and sends nothing more
/// (`waitDeletes` -> `client.Watch`); on the Stream transport the model's waiters do the
/// same. Datagram keeps the resync once per TTL that survives a lost notification.
#[test]
fn on_stream_a_waiter_sends_nothing_while_it_waits_and_on_datagram_it_resyncs() {
    let stream = splitbrain_sim::Transport::Stream(splitbrain_sim::StreamConfig::default());
    assert_eq!(ranges_at_service(stream), 0);
    assert!(ranges_at_service(splitbrain_sim::Transport::Datagram) >= 2 * 15 / 2);
}

/// A broken connection loses what was in flight: a waiter reads the prefix again and
/// watches its predecessor anew (clientv3 resumes a watch from the last revision); nothing
/// is retried on a timer.
#[test]
fn on_stream_a_waiter_that_lost_its_connection_ranges_and_watches_again() {
    let (mut c, _) = client_with_key(EtcdVariant::Revision, vec![(3, 1), (5, 0)]);
    assert_eq!(c.phase(), Phase::Waiting { pred: 3 });
    let service = NodeId::from(3usize);
    let out = client_call_on(true, &mut c, 100 * MS, |c, ctx| {
        c.on_disconnect(ctx, service)
    });
    assert!(matches!(sends(&out)[..], [(3, EtcdMsg::Range)]));
    assert!(!out.iter().any(|e| matches!(
        e,
        Effect::SetTimer {
            timer: EtcdTimer::Retry,
            ..
        }
    )));
    let view = EtcdMsg::RangeResp {
        revision: 12,
        keys: vec![(3, NodeId::from(1usize)), (5, NodeId::from(0usize))],
    };
    let out = client_call_on(true, &mut c, 110 * MS, |c, ctx| {
        c.on_message(ctx, service, view)
    });
    assert!(matches!(
        sends(&out)[..],
        [(
            3,
            EtcdMsg::Watch {
                key: 3,
                start_rev: 13
            }
        )]
    ));
    assert!(!out.iter().any(|e| matches!(
        e,
        Effect::SetTimer {
            timer: EtcdTimer::Retry,
            ..
        }
    )));
}

#[test]
fn on_stream_a_waiter_behind_a_non_leader_observes_the_leaders_key() {
    let view = |stream: bool| {
        let mut c = EtcdClient::new(NodeId(0), 3, &config());
        let on = move |c: &mut EtcdClient, now: i64, m: EtcdMsg| {
            client_call_on(stream, c, now, |c, ctx| c.on_message(ctx, NodeId(3), m))
        };
        client_call_on(stream, &mut c, 0, |c, ctx| c.on_start(ctx));
        let grant = EtcdMsg::LeaseGrantResp {
            lease: 1,
            ttl_ns: 1000 * MS as u64,
            sent_at: 0,
            campaign: 1,
        };
        on(&mut c, 10 * MS, grant);
        let keys = vec![(2, NodeId(1)), (4, NodeId(2)), (5, NodeId(0))];
        let txn = EtcdMsg::TxnResp {
            lease: 1,
            create_rev: 5,
            revision: 6,
            keys,
        };
        let out = on(&mut c, 20 * MS, txn);
        (c, sends(&out), on)
    };
    let watch = |key| (3, EtcdMsg::Watch { key, start_rev: 7 });
    // Stream: the predecessor's key, and the leader's as clientv3's Election.Observe does.
    let (mut c, sent, on) = view(true);
    assert!(
        sent.contains(&watch(4)) && sent.contains(&watch(2)),
        "{sent:?}"
    );
    // The leader's key goes: the waiter reads the prefix again to learn the next leader.
    let out = on(
        &mut c,
        30 * MS,
        EtcdMsg::WatchEvent {
            key: 2,
            revision: 8,
        },
    );
    assert!(sends(&out).contains(&(3, EtcdMsg::Range)));
    // Datagram: only the predecessor's; the periodic range keeps the leader known.
    let (_, sent, _) = view(false);
    assert!(
        sent.contains(&watch(4)) && !sent.contains(&watch(2)),
        "{sent:?}"
    );
}
