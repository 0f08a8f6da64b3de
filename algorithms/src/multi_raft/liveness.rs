//! Store liveness and leader fortification on a [`Step`], for leader leases
//! (`pkg/kv/kvserver/storeliveness`, and `pkg/raft/raft.go`'s fortification in CockroachDB's
//! Raft fork):
//! - every `support_heartbeat` a store asks every other store for support until
//!   `support_duration` from now on its clock; a supporter grants it, and keeps its promise
//!   until that moment on its own clock (the promise survives a restart); support that
//!   lapsed and is granted again comes in a new epoch;
//! - a follower that hears its leader fortifies it if its store supports the leader's
//!   store, and then, while that support lasts in that epoch, neither campaigns nor votes;
//! - the leader's support reaches the quorum-th latest end among itself (always) and the
//!   followers that fortified it in the epoch it knows (`LeadSupportUntil`).

use super::config::{MultiRaftLease, MultiRaftVariant};
use super::messages::{RangeMsg, StoreMsg};
use super::replica::{DeFortify, Replica};
use super::store::Step;
use splitbrain_sim::{LocalNanos, NodeId};

/// Support between two stores: its epoch and its end on the requester's wall clock, and on
/// the supporter's side the requester's incarnation it was asked by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Support {
    pub(crate) epoch: u64,
    pub(crate) until_wall_ns: LocalNanos,
    pub(crate) incarnation: u64,
}

impl Support {
    /// No support ever given.
    pub(crate) const NONE: Support = Support {
        epoch: 0,
        until_wall_ns: LocalNanos::MIN,
        incarnation: 0,
    };
}

impl Step<'_, '_, '_> {
    /// Whether this run takes leader leases.
    pub(crate) fn leader_leases(&self) -> bool {
        self.config.lease == MultiRaftLease::Leader
    }

    /// Asks every other store for support until `support_duration` from now, naming its
    /// incarnation.
    pub(crate) fn request_support(&mut self) {
        let duration = self.config.support_duration_ns as LocalNanos;
        let until_wall_ns = self.ctx.wall_now().saturating_add(duration);
        let incarnation = self.incarnation;
        for store in (0..self.stores).map(NodeId::from) {
            if store != self.me {
                let request = StoreMsg::SupportRequest {
                    incarnation,
                    until_wall_ns,
                };
                self.ctx.send(store, request);
            }
        }
    }

    /// A support request: support that lapsed, or asked for by a new incarnation of the
    /// requester (it restarted: the leaderships it fortified died with it), starts a new
    /// epoch, ending every fortification of the old one; otherwise the end only moves later.
    pub(crate) fn on_support_request(
        &mut self,
        from: NodeId,
        incarnation: u64,
        until_wall_ns: LocalNanos,
    ) {
        let now = self.ctx.wall_now();
        let support = &mut self.support_for[from.index()];
        if incarnation > support.incarnation {
            support.incarnation = incarnation;
            support.epoch += 1;
            support.until_wall_ns = until_wall_ns;
        } else if support.until_wall_ns < now {
            support.epoch += 1;
        }
        support.until_wall_ns = support.until_wall_ns.max(until_wall_ns);
        let grant = StoreMsg::SupportGrant {
            epoch: support.epoch,
            until_wall_ns: support.until_wall_ns,
        };
        self.ctx.send(from, grant);
    }

    /// A grant: in the known epoch it extends the support; a newer epoch means the supporter
    /// withdrew its support meanwhile, so it no longer fortifies any range this store leads,
    /// and the leases it fortified are looked at again.
    pub(crate) fn on_support_grant(
        &mut self,
        replicas: &mut [Replica],
        from: NodeId,
        epoch: u64,
        until_wall_ns: LocalNanos,
    ) {
        let known = &mut self.volatile.support_from[from.index()];
        if epoch == known.epoch {
            // Support only grows: the leases' ends on file stay lower bounds (lease.rs,
            // `lease_end_due`).
            known.until_wall_ns = known.until_wall_ns.max(until_wall_ns);
            return;
        }
        if epoch < known.epoch {
            return;
        }
        *known = Support {
            epoch,
            until_wall_ns,
            incarnation: 0,
        };
        for r in replicas.iter_mut().filter(|r| r.leads()) {
            let bit = self.bit(from, r.range);
            if r.fortifiers & bit != 0 {
                r.fortifiers &= !bit;
                self.refresh_leader_lease(r);
            }
        }
    }

    /// The epoch in which this store supports `store` now, if it does.
    pub(crate) fn supports(&self, store: NodeId) -> Option<u64> {
        let support = self.support_for[store.index()];
        (support.until_wall_ns >= self.ctx.wall_now()).then_some(support.epoch)
    }

    /// A follower hears `leader`: it fortifies it if its store supports the leader's; the
    /// epoch goes back in the heartbeat's answer.
    pub(crate) fn fortify(&mut self, r: &mut Replica, leader: NodeId) -> Option<u64> {
        if !self.leader_leases() {
            return None;
        }
        let epoch = self.supports(leader);
        r.fortified = epoch.map(|epoch| (leader, epoch));
        epoch
    }

    /// Whether `r` still supports the leader it fortified, in the same epoch
    /// (`supportingFortifiedLeader`): it must then neither campaign nor vote.
    pub(crate) fn fortification_holds(&self, r: &Replica) -> bool {
        r.fortified.is_some_and(|(leader, epoch)| {
            leader != self.me && self.supports(leader) == Some(epoch)
        })
    }

    /// Whether a vote request must be ignored for the fortified leader's sake: while the
    /// fortification holds (variant `EarlyLease`: never).
    pub(crate) fn supporting_fortified_leader(&self, r: &Replica) -> bool {
        self.config.variant != MultiRaftVariant::EarlyLease && self.fortification_holds(r)
    }

    /// A follower's answer to a heartbeat said whether it fortified this leader, and in
    /// which epoch; only an epoch the leader knows counts.
    pub(crate) fn count_fortifier(&mut self, r: &mut Replica, from: NodeId, epoch: Option<u64>) {
        let bit = self.bit(from, r.range);
        let known = self.volatile.support_from[from.index()].epoch;
        let fortifiers = if epoch == Some(known) {
            r.fortifiers | bit
        } else {
            r.fortifiers & !bit
        };
        if fortifiers != r.fortifiers {
            r.fortifiers = fortifiers;
            self.refresh_leader_lease(r);
        }
    }

    /// A leader that stepped down releases the followers that fortified it, on every tick
    /// once the support it had then has run out, until it learns of a newer term
    /// (`pkg/raft/raft.go`: `shouldBcastDeFortify` waits for `CanDefortify`, the end of the
    /// leader's support, and stops once a later term commits; `bcastDeFortify`).
    pub(crate) fn maybe_defortify(&mut self, r: &mut Replica) {
        let Some(DeFortify {
            term,
            after_wall_ns,
        }) = r.defortify
        else {
            return;
        };
        if r.term > term {
            r.defortify = None;
        } else if self.ctx.wall_now() > after_wall_ns {
            self.send_to_peers(
                r.range,
                RangeMsg::DeFortify {
                    range: r.range,
                    term,
                },
            );
        }
    }

    /// `MsgDeFortifyLeader` from the leader of `term`: a follower that fortified it stops
    /// (`deFortify`), and may campaign after its randomized timeout.
    pub(crate) fn on_defortify(&mut self, r: &mut Replica, from: NodeId, term: u64) {
        let fortified_sender = r.fortified.is_some_and(|(leader, _)| leader == from);
        if term == r.term && fortified_sender {
            self.de_fortify(r);
        }
    }

    /// `LeadSupportUntil`: the quorum-th latest end of support among the leader itself
    /// (always supported) and its fortifiers; `MIN` without a quorum.
    pub(crate) fn lead_support_until(&self, r: &Replica) -> LocalNanos {
        let mut ends = [LocalNanos::MIN; 8];
        ends[0] = LocalNanos::MAX;
        let stores = self.stores as u64;
        for position in 0..self.config.replication {
            if r.fortifiers & (1 << position) != 0 {
                let store = ((r.range + position) % stores) as usize;
                ends[position as usize + 1] = self.volatile.support_from[store].until_wall_ns;
            }
        }
        ends.sort_unstable_by(|a, b| b.cmp(a));
        ends[self.config.quorum() - 1]
    }
}
