//! The modeled etcd server: a global revision, leases with a TTL (raised to a minimum) that
//! expire on the service's own clock at its lessor's 500 ms sweep, keys attached to leases
//! under one election prefix,
//! compare-on-create-revision transactions, ranges, delete watches, and (for the SetNx
//! variant) one Redis-style lock with a TTL.
//!
//! The service is also where an election begins as the system sees it: leadership falls
//! vacant when the lowest key under the prefix (the leader's) is deleted, by lease expiry or
//! revocation, or when the SetNx lock expires or is released; the first key (or the first
//! acquisition) ever opens the initial election. It signals `ElectionStarted` then, with the
//! revision as term; the next claim ends the election.

use super::config::request_timeout_ns;
use super::config::{after, EtcdConfig, LESSOR_SWEEP_NS};
use super::lessor::{Lessor, Renewal};
use super::messages::{EtcdMsg, EtcdTimer, KeyView};
use super::store::KvState;
use crate::seat::record_removed;
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};
use std::collections::BTreeMap;

type EtcdCtx<'a, 'b> = Ctx<'a, EtcdMsg, EtcdTimer>;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Lock {
    owner: NodeId,
    term: u64,
    /// On the service's wall clock: Redis compares a key's expiry with the time of day
    /// (`mstime()` in `keyIsExpired`, src/db.c).
    deadline: LocalNanos,
}

/// The service process's state. It is one process (id = `members`), a single-member etcd:
/// the cluster's key-value store (`store.rs`) and lessor (`lessor.rs`, primary from the
/// start), so that every rule of leases, keys and revisions is written once for both.
/// What etcd proposes through raft (lease grants, transactions, revocations) is written to
/// its disk before the answer and the watch events leave (`ctx.persist`: the scenario's
/// `disk.service` latency); keep-alives, ranges and watches write nothing. A restarted
/// service keeps its keys and leases (a real etcd persists everything; see `on_restart`),
/// so a crash before a write completes loses the answers, not the change.
#[derive(Clone, Debug)]
pub struct EtcdService {
    config: EtcdConfig,
    kv: KvState,
    lessor: Lessor,
    /// Keep-alives that arrived after a lease's expiry but before the sweep revoked it:
    /// etcd's `lessor.Renew` waits for the revocation and then answers "not found" (TTL 0).
    renewals_waiting: BTreeMap<u64, Vec<(NodeId, LocalNanos)>>,
    /// Delete watches: watched create revision -> watchers, in registration order.
    watches: BTreeMap<u64, Vec<NodeId>>,
    lock: Option<Lock>,
    lock_terms: u64,
    /// Whether the handler under way has already signalled a vacancy: leases that expire
    /// together (each delete making the next key the lowest) leave the seat vacant once.
    vacancy_signalled: bool,
    /// A local time the lessor's sweep falls on (drawn at the service's start or restart):
    /// it sweeps at this time plus every multiple of [`LESSOR_SWEEP_NS`].
    sweep_origin: LocalNanos,
    /// When the last sweep ran: leases it left for lack of batch room wait for the next.
    last_sweep: LocalNanos,
}

impl EtcdService {
    /// A service with no lease and no key, at revision 1.
    pub fn new(config: &EtcdConfig) -> Self {
        Self {
            config: config.clone(),
            kv: KvState::new(),
            lessor: Lessor::primary(),
            renewals_waiting: BTreeMap::new(),
            watches: BTreeMap::new(),
            lock: None,
            lock_terms: 0,
            vacancy_signalled: false,
            sweep_origin: 0,
            last_sweep: LocalNanos::MIN,
        }
    }

    /// The global revision (the service's "term" for `term_monotonic`).
    pub fn revision(&self) -> u64 {
        self.kv.revision
    }

    /// Live leases (for tests).
    pub fn lease_count(&self) -> usize {
        self.kv.leases.len()
    }

    /// The election prefix's keys, lowest create revision first.
    pub fn keys(&self) -> Vec<KeyView> {
        self.kv.keys()
    }

    /// The lessor's sweeps fall at a phase of their own, drawn from the service's stream: a
    /// real server started at some unknown time before its clients, so its sweeps are not in
    /// step with their loops. A written `lessor_phase` replaces the draw (which is still made,
    /// so that the stream's later draws stay the same).
    fn start_sweeps(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        let drawn_ns = ctx.rng().below(LESSOR_SWEEP_NS);
        let phase_ns = self.config.lessor_phase_ns.unwrap_or(drawn_ns) as i64;
        self.sweep_origin = ctx.monotonic_now().saturating_add(phase_ns);
    }

    /// The lessor's sweep: revokes the leases whose expiry the service clock has reached (at
    /// most the lessor's batch a pass; a revoke commits at once on the one member).
    fn sweep_leases(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        self.last_sweep = now;
        let retry_ns = request_timeout_ns(self.config.election_timeout_ns);
        for lease in self.lessor.expired(now, retry_ns) {
            self.revoke(ctx, lease, true);
        }
    }

    /// Expires the SetNx lock if the service's wall clock has reached its deadline.
    fn expire_lock(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        let now = ctx.wall_now();
        if self.lock.as_ref().is_some_and(|l| l.deadline <= now) {
            let lock = self.lock.take().expect("checked");
            self.kv.revision += 1;
            ctx.signal(Signal::LeaseExpired { holder: lock.owner });
            ctx.signal(Signal::LeaseEnded { holder: lock.owner });
            ctx.signal(Signal::ElectionStarted {
                term: self.kv.revision,
            });
        }
    }

    /// Deletes `lease` and its key; notifies the key's watchers.
    fn revoke(&mut self, ctx: &mut EtcdCtx<'_, '_>, lease: u64, expired: bool) {
        let Some(removed) = self.kv.revoke(lease) else {
            return;
        };
        self.lessor.forget(lease);
        // A revocation, asked for or by the lessor's sweep, is a raft proposal too.
        ctx.persist(());
        for (waiting, sent_at) in self.renewals_waiting.remove(&lease).unwrap_or_default() {
            let gone = EtcdMsg::KeepAliveResp {
                lease,
                ttl_ns: 0,
                sent_at,
            };
            ctx.send(waiting, gone);
        }
        let Some((key, led)) = removed.key else {
            return;
        };
        let term = self.kv.revision;
        let signalled = &mut self.vacancy_signalled;
        record_removed(ctx, removed.owner, (led, expired), term, signalled);
        for watcher in self.watches.remove(&key).unwrap_or_default() {
            ctx.send(
                watcher,
                EtcdMsg::WatchEvent {
                    key,
                    revision: self.kv.revision,
                },
            );
        }
    }

    /// The first sweep at or after `deadline`.
    fn sweep_at_or_after(&self, deadline: LocalNanos) -> LocalNanos {
        let sweep_ns = LESSOR_SWEEP_NS as i64;
        let since_origin = deadline.saturating_sub(self.sweep_origin);
        let sweeps = since_origin
            .saturating_add(sweep_ns - 1)
            .div_euclid(sweep_ns);
        self.sweep_origin
            .saturating_add(sweeps.saturating_mul(sweep_ns))
    }

    /// Arms the expiry timer for the sweep that will revoke the earliest lease (on the
    /// monotonic clock: the lessor's `time.Now()` deadlines), and the lock's for its deadline
    /// on the wall clock (a Redis key's expiry is a time of day); cancels what has nothing to
    /// expire.
    fn arm_expiry(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        match self.lessor.earliest() {
            Some(deadline) => {
                let sweep = self.sweep_at_or_after(deadline.max(self.last_sweep.saturating_add(1)));
                let after = sweep.saturating_sub(ctx.monotonic_now()).max(0) as u64;
                ctx.set_timer(EtcdTimer::Expiry, after);
            }
            None => ctx.cancel_timer(EtcdTimer::Expiry),
        }
        match &self.lock {
            Some(lock) => ctx.set_wall_timer(EtcdTimer::LockExpiry, lock.deadline),
            None => ctx.cancel_timer(EtcdTimer::LockExpiry),
        }
    }
}

impl Process for EtcdService {
    type Msg = EtcdMsg;
    type Timer = EtcdTimer;
    type Durable = ();

    /// The service's state, for `run --stop-at` (read-only): revision, leases, the keys
    /// under the prefix by create revision, the SET NX lock.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let keys: Vec<String> = self
            .kv
            .keys()
            .iter()
            .map(|(rev, owner)| format!("{rev}:{owner}"))
            .collect();
        let mut fields = vec![
            ("revision", self.kv.revision.to_string()),
            ("leases", self.kv.leases.len().to_string()),
            ("keys", format!("[{}]", keys.join(" "))),
        ];
        if let Some(lock) = &self.lock {
            let text = format!(
                "{} term {} until wall {}",
                lock.owner, lock.term, lock.deadline
            );
            fields.push(("lock", text));
        }
        fields
    }

    /// The service waits for requests; its lessor's sweep loop runs from now on.
    fn on_start(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        self.start_sweeps(ctx);
    }

    /// etcd persists its keys and leases; on restart it keeps them and, as etcd's lessor does
    /// when the member is promoted to leader (`lessor.Promote(s.Cfg.ElectionTimeout())`),
    /// extends every lease to its TTL plus the election timeout from now. The single member's
    /// own election after a restart (a fraction of the election timeout) is not modeled: it
    /// serves at once.
    fn on_restart(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        self.start_sweeps(ctx);
        let leases = self.kv.leases.iter().map(|(id, l)| (*id, l.ttl_ns));
        self.lessor
            .promote(now, self.config.election_timeout_ns, leases);
        if let Some(lock) = self.lock.as_mut() {
            lock.deadline = after(ctx.wall_now(), self.config.ttl_ns);
        }
        self.arm_expiry(ctx);
    }

    /// The expiry timers: the lessor's sweep revokes every lease whose deadline has come, and
    /// the SetNx lock expires at its deadline.
    fn on_timer(&mut self, ctx: &mut EtcdCtx<'_, '_>, timer: EtcdTimer) {
        self.vacancy_signalled = false;
        match timer {
            EtcdTimer::Expiry => self.sweep_leases(ctx),
            EtcdTimer::LockExpiry => self.expire_lock(ctx),
            _ => return,
        }
        self.arm_expiry(ctx);
    }

    /// Serves the request and re-arms the expiry timer. A lease past its deadline lives on
    /// (its key too) until the next sweep revokes it, as in etcd; the SetNx lock, a Redis
    /// key, is expired on access first.
    fn on_message(&mut self, ctx: &mut EtcdCtx<'_, '_>, from: NodeId, msg: EtcdMsg) {
        self.vacancy_signalled = false;
        self.expire_lock(ctx);
        match msg {
            EtcdMsg::LeaseGrant {
                ttl_ns,
                sent_at,
                campaign,
            } => {
                let ttl_ns = ttl_ns.max(self.config.min_ttl_ns);
                let lease = self.kv.grant(from, ttl_ns);
                self.lessor.granted(lease, ttl_ns, ctx.monotonic_now());
                // A lease grant is a raft proposal: in the WAL before it is answered.
                ctx.persist(());
                let grant = EtcdMsg::LeaseGrantResp {
                    lease,
                    ttl_ns,
                    sent_at,
                    campaign,
                };
                ctx.send(from, grant);
            }
            EtcdMsg::KeepAlive { lease, sent_at } => {
                let now = ctx.monotonic_now();
                if self.lessor.is_past(lease, now) {
                    // Expired, not yet revoked: the answer waits for the sweep.
                    let waiting = self.renewals_waiting.entry(lease).or_default();
                    waiting.push((from, sent_at));
                    return self.arm_expiry(ctx);
                }
                let ttl = self.kv.leases.get(&lease).map(|l| l.ttl_ns);
                let ttl_ns = match self.lessor.renew(lease, ttl, now) {
                    Renewal::Ttl(ttl_ns) => ttl_ns,
                    Renewal::NotPrimary => unreachable!("the one-process service is primary"),
                };
                ctx.send(
                    from,
                    EtcdMsg::KeepAliveResp {
                        lease,
                        ttl_ns,
                        sent_at,
                    },
                );
            }
            EtcdMsg::Revoke { lease } => self.revoke(ctx, lease, false),
            EtcdMsg::Txn { lease } => {
                // A lease that is gone fails the put (etcd: "requested lease not found").
                let (create_rev, new, first) = self.kv.txn(from, lease);
                if new {
                    ctx.signal(Signal::LeaseHeld { holder: from });
                }
                if first {
                    // The first candidate ever: the initial election begins.
                    ctx.signal(Signal::ElectionStarted {
                        term: self.kv.revision,
                    });
                }
                // Every transaction is a raft proposal, whether its put happens or not.
                ctx.persist(());
                ctx.send(
                    from,
                    EtcdMsg::TxnResp {
                        lease,
                        create_rev,
                        revision: self.kv.revision,
                        keys: self.keys(),
                    },
                );
            }
            EtcdMsg::Range => ctx.send(
                from,
                EtcdMsg::RangeResp {
                    revision: self.kv.revision,
                    keys: self.keys(),
                },
            ),
            EtcdMsg::Watch { key, .. } => {
                if self.kv.has_key(key) {
                    let watchers = self.watches.entry(key).or_default();
                    if !watchers.contains(&from) {
                        watchers.push(from);
                    }
                } else {
                    // Already deleted (at or after start_rev): the history replays the delete.
                    ctx.send(
                        from,
                        EtcdMsg::WatchEvent {
                            key,
                            revision: self.kv.revision,
                        },
                    );
                }
            }
            EtcdMsg::SetNx { ttl_ns } => {
                let ttl_ns = ttl_ns.max(self.config.min_ttl_ns);
                let acquired = self.lock.is_none();
                if acquired {
                    self.lock_terms += 1;
                    self.kv.revision += 1;
                    if self.lock_terms == 1 {
                        // The first acquisition ever: the initial election begins (and ends
                        // when the holder hears it).
                        ctx.signal(Signal::ElectionStarted {
                            term: self.kv.revision,
                        });
                    }
                    ctx.signal(Signal::LeaseHeld { holder: from });
                    self.lock = Some(Lock {
                        owner: from,
                        term: self.lock_terms,
                        deadline: after(ctx.wall_now(), ttl_ns),
                    });
                }
                let lock = self.lock.as_ref();
                ctx.send(
                    from,
                    EtcdMsg::SetNxResp {
                        acquired,
                        term: lock.map_or(self.lock_terms, |l| l.term),
                        holder: lock.map(|l| l.owner),
                    },
                );
            }
            EtcdMsg::Extend { term, sent_at } => {
                let now = ctx.wall_now();
                let ttl_ns = self.config.ttl_ns.max(self.config.min_ttl_ns);
                let ok = match self.lock.as_mut() {
                    Some(l) if l.term == term && l.owner == from => {
                        l.deadline = after(now, ttl_ns);
                        true
                    }
                    _ => false,
                };
                ctx.send(from, EtcdMsg::ExtendResp { ok, term, sent_at });
            }
            EtcdMsg::Del { term }
                if self
                    .lock
                    .as_ref()
                    .is_some_and(|l| l.term == term && l.owner == from) =>
            {
                self.lock = None;
                self.kv.revision += 1;
                ctx.signal(Signal::LeaseEnded { holder: from });
                ctx.signal(Signal::ElectionStarted {
                    term: self.kv.revision,
                });
            }
            // Responses never reach the service.
            _ => {}
        }
        self.arm_expiry(ctx);
    }

    /// The global revision (the service's "term" for `term_monotonic`).
    fn term(&self) -> u64 {
        self.kv.revision
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}
