//! etcd as a cluster of `members` processes (issue 32; the rules and their sources are in
//! docs/service-clusters.md, the model in docs/algorithms/etcd.md, "Cluster"). Each member
//! runs the repository's Raft ([`RaftNode::embedded`]) with etcd's settings, a replicated
//! state machine of leases and keys (`etcd/store.rs`), and a lessor that is primary only on
//! the leader (`etcd/lessor.rs`); the one-process service shares both. Process ids: the election members are `0..nodes`, the etcd members
//! `nodes..nodes + members`.
//!
//! What a member does, with the etcd source it follows (docs/service-clusters.md, sections
//! 1 to 3):
//! - Grants, transactions and revokes are Raft proposals (`etcdserver/v3_server.go`,
//!   `LeaseGrant`/`LeaseRevoke` → `raftRequestOnce`); a follower forwards them to the leader
//!   (etcd-io/raft `stepFollower`, `MsgProp`); without a leader the request fails at once
//!   (`ErrProposalDropped`) and the client moves on. Every member applies committed entries
//!   in order (`applierV3backend`); the member that took the request answers the client,
//!   or fails it after the 7 s request timeout (`ReqTimeout`).
//! - `Promote(election timeout)` when the leader applies the first entry of its term (the
//!   empty entry `becomeLeader` appends; `server.go`, `applyEntryNormal`); `Demote` once the
//!   member's Ready loop sees it is no longer leader (`raftReadyHandler.updateLeadership`):
//!   modeled as a [`EtcdMsg::Ready`] the member sends itself *behind its own disk writes*,
//!   so a member stuck in `fdatasync` stays primary until the write returns (issue 15247).
//! - The primary's sweep every 500 ms (`runLoop`) proposes a revoke for each expired lease
//!   (at most 500 a pass), offered again after 7 s if it did not commit
//!   (`expiredLeaseRetryInterval` = `ReqTimeout()`). A revoke proposed by a deposed leader
//!   goes to the leader it knows, and commits.
//! - Keep-alives are not proposals (`LeaseRenew`): 3.4 asks its own lessor first
//!   (`lessor.Renew`; `ErrNotPrimary` → forward), 3.5 asks its lessor only while its Raft
//!   leads and `ensureLeadership` holds, and forwards otherwise; a follower forwards to the
//!   leader (`leasehttp.RenewHTTP`, retried every 100 ms and when the leader changes, 7 s
//!   budget) and answers when the leader does; the leader's `leasehttp` handler renews
//!   without `ensureLeadership`. A renewal answered by the member's own lessor waits for its
//!   applied index (`waitAppliedIndex`, `h.waitch()`), which cannot move while its Ready loop
//!   is blocked: the answer is sent behind the member's disk writes, so a member stuck in
//!   `fdatasync` answers no keep-alive, as docs/conformance-clusters.md measured on 3.4.23
//!   and 3.5.35. Forwarding, reads and errors do not wait ([`Ctx::send_unordered`]: the gRPC
//!   goroutines are not behind the WAL). Which of 3.4's two orders (lessor first, or
//!   `isLeader` first as 3.5 has it) 3.4.23 uses was not re-read; with the answer behind the
//!   WAL both give the measured behaviour.
//! - 3.5 (≥ 3.5.16): `ensureLeadership` before a renew on the member's own stream and
//!   before the sweep's revokes. Modeled as: the Raft leads and heard from a majority within
//!   the minimum election timeout. etcd's `isActive` (the raft loop ticked within 300 ms)
//!   or a linearizable read (a quorum answers a ReadIndex) is replaced by the heartbeat
//!   answers the leader already has: both say "a quorum still follows me"; the model's is
//!   stricter than `isActive` (which a stuck Ready loop may pass) and as strict as the read.
//!
//! Simplified, and why it cannot flip a safety verdict: the member's whole state is kept
//! across a crash, as if every write completed at the crash (a valid execution: the write
//! finished, the sends after it were lost); ranges and watches are served from the member's
//! applied state (a stale view only delays a waiter or makes it campaign again: a key it sees
//! lowest was created before every key it does not see); a renew of an expired lease answers
//! TTL 0 at once instead of after the revoke (the client gives up earlier, never later).

mod embed;
#[cfg(test)]
mod tests;

use super::config::{
    after, request_timeout_ns, EtcdConfig, EtcdVersion, ETCD_HEARTBEAT_NS, LESSOR_SWEEP_NS,
};
use super::lessor::{Lessor, Renewal};
use super::messages::{Command, EtcdMsg, EtcdTimer, Proposal};
use super::store::{signal_holder_change, KvState};
use crate::raft::{RaftConfig, RaftNode, RaftTimeoutDraw, RaftTimerReset};
use crate::seat::record_removed;
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};
use std::collections::BTreeMap;

type MemberCtx<'a, 'b> = Ctx<'a, EtcdMsg, EtcdTimer>;

/// How often a waiting forwarded renew is retried and timeouts are checked (the model's
/// stand-in for `LeaseRenew`'s retry loop; one heartbeat).
const RENEW_RETRY_NS: u64 = ETCD_HEARTBEAT_NS;

/// How often a Ready probe goes again while a demotion waits for it.
const READY_PROBE_NS: u64 = 1_000_000_000;

/// Raft as etcd configures it (docs/service-clusters.md section 3): 100 ms heartbeat,
/// election timeout `election_timeout_ns` randomized in `[1, 1.9]` of it and drawn on role
/// changes only (`resetRandomizedElectionTimeout`), every step-down resetting the timer
/// (`becomeFollower` → `reset`), check-quorum on, pre-vote off in 3.4 and on in 3.5.
pub fn raft_config(config: &EtcdConfig) -> RaftConfig {
    let ticks = (config.election_timeout_ns / ETCD_HEARTBEAT_NS).max(1);
    RaftConfig {
        election_timeout_min_ns: ticks * ETCD_HEARTBEAT_NS,
        election_timeout_max_ns: (2 * ticks - 1) * ETCD_HEARTBEAT_NS,
        heartbeat_ns: ETCD_HEARTBEAT_NS,
        pre_vote: config.version == EtcdVersion::V3_5,
        check_quorum: true,
        log_lengths: Vec::new(),
        variant: crate::raft::RaftVariant::Correct,
        timer_reset: RaftTimerReset::OnAnyStepDown,
        // Other clients' puts (`write_every`): entries the members apply as nothing.
        propose_every_ns: config.write_every_ns,
        timeout_draw: RaftTimeoutDraw::OnRoleChange,
    }
}

/// A client request waiting for its entry to apply.
#[derive(Clone, Debug)]
struct Waiting {
    client: NodeId,
    deadline: LocalNanos,
}

/// A keep-alive a member could not answer from its own lessor.
#[derive(Clone, Debug)]
struct Forwarded {
    client: NodeId,
    lease: u64,
    sent_at: LocalNanos,
    deadline: LocalNanos,
    /// Sent to this leader at this time and not answered yet.
    out: Option<(NodeId, LocalNanos)>,
}

/// One etcd member of a cluster.
#[derive(Clone, Debug)]
pub struct EtcdMember {
    /// This member's index among the etcd members (its Raft id).
    index: usize,
    /// The process id of member 0 (the number of election members).
    first: usize,
    /// How many etcd members.
    size: usize,
    config: EtcdConfig,
    raft: RaftNode,
    /// The proposal of each log entry that has one, with the entry's term (new leaders'
    /// empty entries have none).
    proposals: BTreeMap<u64, (u64, Proposal)>,
    applied: u64,
    kv: KvState,
    lessor: Lessor,
    /// The Raft term whose first entry this member applied as leader (and promoted in).
    promoted_term: Option<u64>,
    /// The Raft led at the last look.
    was_leader: bool,
    /// A step-down seen, the lessor not yet demoted (waiting for the Ready probe).
    demote_pending: bool,
    next_request: u64,
    waiting: BTreeMap<u64, Waiting>,
    forwarded: BTreeMap<u64, Forwarded>,
    /// Delete watches of this member's clients: create revision -> watchers.
    watches: BTreeMap<u64, Vec<NodeId>>,
}

impl EtcdMember {
    /// Member `index` of `size`, after `nodes` election members.
    pub fn new(index: usize, nodes: usize, size: usize, config: &EtcdConfig) -> Self {
        let raft = RaftNode::embedded(NodeId::from(index), size, &raft_config(config));
        Self {
            index,
            first: nodes,
            size,
            config: config.clone(),
            raft,
            proposals: BTreeMap::new(),
            applied: 0,
            kv: KvState::new(),
            lessor: Lessor::default(),
            promoted_term: None,
            was_leader: false,
            demote_pending: false,
            next_request: 1,
            waiting: BTreeMap::new(),
            forwarded: BTreeMap::new(),
            watches: BTreeMap::new(),
        }
    }

    fn process_of(&self, raft_index: usize) -> NodeId {
        NodeId::from(self.first + raft_index)
    }

    fn me(&self) -> NodeId {
        self.process_of(self.index)
    }

    /// Whether the member's Raft leads now (`Process::leads_service`).
    pub fn leads(&self) -> bool {
        self.raft.is_leader()
    }

    /// Whether the member's lessor is primary.
    pub fn primary(&self) -> bool {
        self.lessor.primary
    }

    /// The highest applied index.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The applied revision (the member's term for `term_monotonic`).
    pub fn revision(&self) -> u64 {
        self.kv.revision
    }

    /// Live leases in the applied state.
    pub fn lease_count(&self) -> usize {
        self.kv.leases.len()
    }

    /// A lease's expiry on this member's clock, while its lessor is primary.
    pub fn lease_expiry(&self, lease: u64) -> Option<LocalNanos> {
        self.lessor.expiry(lease)
    }

    /// The stored object of a client that is not the election recipe (the API server's
    /// Lease), in the applied state.
    pub fn object(&self) -> Option<&crate::etcd::messages::ObjectView> {
        self.kv.object.as_ref()
    }

    /// A Raft message from another member: the Raft handles it; the proposals of an
    /// `Append` it accepted are kept beside its log.
    fn on_raft(
        &mut self,
        ctx: &mut MemberCtx<'_, '_>,
        from: NodeId,
        msg: crate::raft::RaftMsg,
        proposals: Vec<(u64, Proposal)>,
    ) {
        let Some(peer) = from.index().checked_sub(self.first) else {
            return;
        };
        let entry_term = match msg {
            crate::raft::RaftMsg::Append { entry_term, .. } => Some(entry_term),
            _ => None,
        };
        let ((), out) = self.raft_call(ctx, |raft, c| raft.on_message(c, NodeId::from(peer), msg));
        // Kept only where the log now holds the sent entry (same index, same term): a refused
        // or stale Append leaves the entries there, and their proposals, as they were.
        for (index, proposal) in proposals {
            let held = entry_term.filter(|term| self.raft.term_at(index) == Some(*term));
            if let Some(term) = held {
                self.proposals.insert(index, (term, proposal));
            }
        }
        self.raft_effects(ctx, out);
    }

    /// Takes a client's request (or the lessor's revoke): proposed here on the leader,
    /// forwarded to the leader by a follower, failed at once without a leader.
    fn submit(&mut self, ctx: &mut MemberCtx<'_, '_>, command: Command, client: Option<NodeId>) {
        let request = self.next_request;
        self.next_request += 1;
        let proposal = Proposal {
            command,
            origin: Some(self.me()),
            request,
        };
        let leader = self.raft.leader();
        if leader.is_none() {
            if let Some(client) = client {
                ctx.send_unordered(client, EtcdMsg::Unavailable);
            }
            return;
        }
        if let Some(client) = client {
            let deadline = after(ctx.monotonic_now(), self.request_timeout_ns());
            self.waiting.insert(request, Waiting { client, deadline });
            ctx.set_timer(EtcdTimer::RequestTimeout, RENEW_RETRY_NS);
        }
        match leader {
            Some(leader) if leader.index() == self.index => self.propose(ctx, proposal),
            Some(leader) => {
                let to = self.process_of(leader.index());
                ctx.send(to, EtcdMsg::Propose { proposal });
            }
            None => {}
        }
    }

    /// The leader appends a proposal; anyone else drops it (its origin times out).
    fn propose(&mut self, ctx: &mut MemberCtx<'_, '_>, proposal: Proposal) {
        let (index, out) = self.raft_call(ctx, |raft, c| raft.propose(c));
        if let Some(index) = index {
            let term = self.raft.current_term();
            self.proposals.insert(index, (term, proposal));
        }
        self.raft_effects(ctx, out);
    }

    fn request_timeout_ns(&self) -> u64 {
        request_timeout_ns(self.config.election_timeout_ns)
    }

    /// `LeaseRenew` on this member (see the module doc for the two versions).
    fn keep_alive(
        &mut self,
        ctx: &mut MemberCtx<'_, '_>,
        client: NodeId,
        lease: u64,
        sent_at: LocalNanos,
    ) {
        let now = ctx.monotonic_now();
        let ask_lessor = match self.config.version {
            EtcdVersion::V3_4 => true,
            EtcdVersion::V3_5 if self.raft.is_leader() => {
                if !self.raft.leads_with_recent_quorum(now) {
                    // `ensureLeadership` failed: `ErrNotPrimary` ends the stream.
                    ctx.send_unordered(client, EtcdMsg::Unavailable);
                    return;
                }
                true
            }
            EtcdVersion::V3_5 => false,
        };
        if ask_lessor {
            let ttl = self.kv.leases.get(&lease).map(|l| l.ttl_ns);
            if let Renewal::Ttl(ttl_ns) = self.lessor.renew(lease, ttl, now) {
                let answer = EtcdMsg::KeepAliveResp {
                    lease,
                    ttl_ns,
                    sent_at,
                };
                // `waitAppliedIndex` before the answer: it cannot move while the Ready loop
                // is blocked in a save, so the answer waits behind the WAL
                // (docs/conformance-clusters.md: a stuck member answers no keep-alive).
                ctx.send(client, answer);
                return;
            }
        }
        let request = self.next_request;
        self.next_request += 1;
        let deadline = after(now, self.request_timeout_ns());
        let forwarded = Forwarded {
            client,
            lease,
            sent_at,
            deadline,
            out: None,
        };
        self.forwarded.insert(request, forwarded);
        self.send_forward(ctx, request);
        ctx.set_timer(EtcdTimer::RequestTimeout, RENEW_RETRY_NS);
    }

    /// Sends a waiting renew to the leader this member knows (itself: asks its lessor).
    fn send_forward(&mut self, ctx: &mut MemberCtx<'_, '_>, request: u64) {
        let Some(leader) = self.raft.leader() else {
            return;
        };
        let Some(forwarded) = self.forwarded.get_mut(&request) else {
            return;
        };
        if leader.index() == self.index {
            let lease = forwarded.lease;
            let ttl = self.kv.leases.get(&lease).map(|l| l.ttl_ns);
            if let Renewal::Ttl(ttl_ns) = self.lessor.renew(lease, ttl, ctx.monotonic_now()) {
                self.forward_answered(ctx, request, Some(ttl_ns), true);
            }
            return;
        }
        forwarded.out = Some((leader, ctx.monotonic_now()));
        let msg = EtcdMsg::RenewForward {
            lease: forwarded.lease,
            request,
        };
        ctx.send_unordered(self.process_of(leader.index()), msg);
    }

    /// The leader answered a forwarded renew: the client hears it (`behind_wal`: this member
    /// renewed it itself, after its applied index); `ErrNotPrimary` is retried at the next
    /// pass.
    fn forward_answered(
        &mut self,
        ctx: &mut MemberCtx<'_, '_>,
        request: u64,
        ttl: Option<u64>,
        behind_wal: bool,
    ) {
        let Some(ttl_ns) = ttl else {
            if let Some(forwarded) = self.forwarded.get_mut(&request) {
                forwarded.out = None;
            }
            return;
        };
        let Some(forwarded) = self.forwarded.remove(&request) else {
            return;
        };
        let answer = EtcdMsg::KeepAliveResp {
            lease: forwarded.lease,
            ttl_ns,
            sent_at: forwarded.sent_at,
        };
        if behind_wal {
            ctx.send(forwarded.client, answer);
        } else {
            ctx.send_unordered(forwarded.client, answer);
        }
    }

    /// Every 100 ms while anything waits: requests past the 7 s timeout fail
    /// (`ErrTimeout`), renewals not out go to the leader again.
    fn retry_and_expire(&mut self, ctx: &mut MemberCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        let late: Vec<u64> = self
            .waiting
            .iter()
            .filter(|(_, w)| w.deadline <= now)
            .map(|(request, _)| *request)
            .collect();
        for request in late {
            if let Some(w) = self.waiting.remove(&request) {
                ctx.send_unordered(w.client, EtcdMsg::Unavailable);
            }
        }
        let late: Vec<u64> = self
            .forwarded
            .iter()
            .filter(|(_, f)| f.deadline <= now)
            .map(|(request, _)| *request)
            .collect();
        for request in late {
            if let Some(f) = self.forwarded.remove(&request) {
                ctx.send_unordered(f.client, EtcdMsg::Unavailable);
            }
        }
        // Not out, out to a leader since replaced, or unanswered for a second (a dead
        // leader's peer URL fails and the loop tries again, `waitLeader` first).
        let leader = self.raft.leader();
        let idle: Vec<u64> = self
            .forwarded
            .iter()
            .filter(|(_, f)| match f.out {
                None => true,
                Some((to, at)) => Some(to) != leader || after(at, READY_PROBE_NS) <= now,
            })
            .map(|(request, _)| *request)
            .collect();
        for request in idle {
            self.send_forward(ctx, request);
        }
        if !self.waiting.is_empty() || !self.forwarded.is_empty() {
            ctx.set_timer(EtcdTimer::RequestTimeout, RENEW_RETRY_NS);
        }
    }

    /// The lessor's sweep: revokes proposed for expired leases (3.5: only if
    /// `ensureLeadership` holds; else the batch is dropped).
    fn sweep(&mut self, ctx: &mut MemberCtx<'_, '_>) {
        if !self.lessor.primary {
            return;
        }
        ctx.set_timer(EtcdTimer::Sweep, LESSOR_SWEEP_NS);
        let now = ctx.monotonic_now();
        let expired = self.lessor.expired(now, self.request_timeout_ns());
        let guarded = self.config.version == EtcdVersion::V3_5;
        if expired.is_empty() || (guarded && !self.raft.leads_with_recent_quorum(now)) {
            return;
        }
        for lease in expired {
            let command = Command::Revoke {
                lease,
                expired: true,
            };
            self.submit(ctx, command, None);
        }
    }

    /// After every event: the proposals kept match the log, a step-down starts a demotion,
    /// committed entries are applied.
    fn settle(&mut self, ctx: &mut MemberCtx<'_, '_>) {
        let raft = &self.raft;
        self.proposals
            .retain(|index, (term, _)| raft.term_at(*index) == Some(*term));
        let leads = self.raft.is_leader();
        if self.was_leader && !leads && !self.demote_pending {
            // `updateLeadership` runs in the Ready loop, behind the WAL writes before it.
            self.demote_pending = true;
            ctx.send(self.me(), EtcdMsg::Ready);
            ctx.set_timer(EtcdTimer::ReadyProbe, READY_PROBE_NS);
        }
        self.was_leader = leads;
        self.apply_committed(ctx);
    }

    /// Applies every committed entry not yet applied, in order.
    fn apply_committed(&mut self, ctx: &mut MemberCtx<'_, '_>) {
        let commit = self.raft.commit_index().min(self.raft.last_index());
        while self.applied < commit {
            let index = self.applied + 1;
            let term = self.raft.term_at(index).unwrap_or(0);
            let proposal = self
                .proposals
                .get(&index)
                .filter(|(t, _)| *t == term)
                .map(|(_, p)| p.clone());
            self.applied = index;
            if let Some(proposal) = proposal {
                self.apply(ctx, proposal);
            }
            let current = self.raft.current_term();
            if self.raft.is_leader() && term == current && self.promoted_term != Some(current) {
                self.promote(ctx, current);
            }
        }
    }

    /// `Promote(election timeout)`: the lessor becomes primary and starts its sweeps.
    fn promote(&mut self, ctx: &mut MemberCtx<'_, '_>, term: u64) {
        self.promoted_term = Some(term);
        self.demote_pending = false;
        let leases = self.kv.leases.iter().map(|(id, l)| (*id, l.ttl_ns));
        self.lessor
            .promote(ctx.monotonic_now(), self.config.election_timeout_ns, leases);
        ctx.set_timer(EtcdTimer::Sweep, LESSOR_SWEEP_NS);
    }

    /// Applies one committed proposal; the member that took the request answers it and
    /// reports the election's signals (once per entry).
    fn apply(&mut self, ctx: &mut MemberCtx<'_, '_>, proposal: Proposal) {
        let mine = proposal.origin == Some(self.me());
        let client = mine
            .then(|| self.waiting.remove(&proposal.request))
            .flatten()
            .map(|w| w.client);
        match proposal.command {
            Command::Grant {
                owner,
                ttl_ns,
                sent_at,
                campaign,
            } => {
                let ttl_ns = ttl_ns.max(self.config.min_ttl_ns);
                let lease = self.kv.grant(owner, ttl_ns);
                self.lessor.granted(lease, ttl_ns, ctx.monotonic_now());
                if let Some(client) = client {
                    let answer = EtcdMsg::LeaseGrantResp {
                        lease,
                        ttl_ns,
                        sent_at,
                        campaign,
                    };
                    ctx.send(client, answer);
                }
            }
            Command::Txn { owner, lease } => {
                let (create_rev, new, first) = self.kv.txn(owner, lease);
                if mine && new {
                    ctx.signal(Signal::LeaseHeld { holder: owner });
                    if first {
                        ctx.signal(Signal::ElectionStarted {
                            term: self.kv.revision,
                        });
                    }
                }
                if let Some(client) = client {
                    let answer = EtcdMsg::TxnResp {
                        lease,
                        create_rev,
                        revision: self.kv.revision,
                        keys: self.kv.keys(),
                    };
                    ctx.send(client, answer);
                }
            }
            Command::ObjectGet { request } => {
                let object = self.kv.object.clone();
                if let Some(client) = client {
                    let answer = EtcdMsg::ObjectResp {
                        request,
                        ok: true,
                        object,
                    };
                    ctx.send(client, answer);
                }
            }
            Command::ObjectPut {
                request,
                expected_rev,
                owner,
                value,
            } => {
                let (ok, before) = self.kv.put_object(expected_rev, owner, value);
                if mine && ok {
                    signal_holder_change(ctx, before, owner);
                }
                if let Some(client) = client {
                    let object = self.kv.object.clone();
                    ctx.send(
                        client,
                        EtcdMsg::ObjectResp {
                            request,
                            ok,
                            object,
                        },
                    );
                }
            }
            Command::Revoke { lease, expired } => {
                self.lessor.forget(lease);
                let Some(removed) = self.kv.revoke(lease) else {
                    return;
                };
                let Some((key, led)) = removed.key else {
                    return;
                };
                if mine {
                    // Each entry applies alone: no other removal shares its vacancy.
                    let term = self.kv.revision;
                    let holder = removed.owner;
                    record_removed(ctx, holder, (led, expired), term, &mut false);
                }
                for watcher in self.watches.remove(&key).unwrap_or_default() {
                    let event = EtcdMsg::WatchEvent {
                        key,
                        revision: self.kv.revision,
                    };
                    ctx.send(watcher, event);
                }
            }
        }
    }
}

impl Process for EtcdMember {
    type Msg = EtcdMsg;
    type Timer = EtcdTimer;
    type Durable = ();

    /// The owner of the lowest key in the applied state.
    fn known_leader(&self) -> Option<NodeId> {
        self.kv.first_owner()
    }

    /// The member's state, for `run --stop-at`.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        // The Raft names members by their Raft ids (n0, n1, ...): shown as etcd members, so
        // that they are not read as the election's clients.
        let mut fields: Vec<(&'static str, String)> = self
            .raft
            .inspect()
            .into_iter()
            .map(|(name, value)| match (name, value.strip_prefix('n')) {
                ("voted_for" | "leader" | "transfer_target", Some(id)) => {
                    (name, format!("etcd-{id}"))
                }
                _ => (name, value),
            })
            .collect();
        fields.push(("raft_term", self.raft.current_term().to_string()));
        fields.push(("commit", self.raft.commit_index().to_string()));
        fields.push(("applied", self.applied.to_string()));
        fields.push(("revision", self.kv.revision.to_string()));
        fields.push(("leases", self.kv.leases.len().to_string()));
        fields.push(("primary", self.lessor.primary.to_string()));
        fields
    }

    /// The member starts as a Raft follower.
    fn on_start(&mut self, ctx: &mut MemberCtx<'_, '_>) {
        let ((), out) = self.raft_call(ctx, |raft, c| raft.on_start(c));
        self.raft_effects(ctx, out);
        self.settle(ctx);
    }

    /// A restarted member keeps its log, its applied state and its term (see the module
    /// doc); it forgets its role, its lessor's primacy, and its clients' requests and
    /// watches (their connections broke).
    fn on_restart(&mut self, ctx: &mut MemberCtx<'_, '_>) {
        self.lessor.demote();
        self.promoted_term = None;
        self.was_leader = false;
        self.demote_pending = false;
        self.waiting.clear();
        self.forwarded.clear();
        self.watches.clear();
        let ((), out) = self.raft_call(ctx, |raft, c| raft.on_restart(c));
        self.raft_effects(ctx, out);
        self.settle(ctx);
    }

    /// Raft timers go to the Raft; the lessor's sweep; request timeouts and renew retries;
    /// the Ready probe's resend.
    fn on_timer(&mut self, ctx: &mut MemberCtx<'_, '_>, timer: EtcdTimer) {
        if let Some(inner) = embed::inner_timer(timer) {
            let ((), out) = self.raft_call(ctx, |raft, c| raft.on_timer(c, inner));
            self.raft_effects(ctx, out);
        } else {
            match timer {
                EtcdTimer::Sweep => self.sweep(ctx),
                EtcdTimer::RequestTimeout => self.retry_and_expire(ctx),
                EtcdTimer::ReadyProbe if self.demote_pending => {
                    ctx.send(self.me(), EtcdMsg::Ready);
                    ctx.set_timer(EtcdTimer::ReadyProbe, READY_PROBE_NS);
                }
                _ => {}
            }
        }
        self.settle(ctx);
    }

    /// Raft traffic, forwarded proposals and renewals, and clients' requests.
    fn on_message(&mut self, ctx: &mut MemberCtx<'_, '_>, from: NodeId, msg: EtcdMsg) {
        match msg {
            EtcdMsg::Raft { msg, proposals } => self.on_raft(ctx, from, msg, proposals),
            EtcdMsg::Propose { proposal } => self.propose(ctx, proposal),
            EtcdMsg::RenewForward { lease, request } => {
                // `leasehttp`: the leader's lessor renews, without `ensureLeadership`.
                let ttl = self.kv.leases.get(&lease).map(|l| l.ttl_ns);
                let ttl_ns = match self.lessor.renew(lease, ttl, ctx.monotonic_now()) {
                    Renewal::Ttl(ttl_ns) => Some(ttl_ns),
                    Renewal::NotPrimary => None,
                };
                // It waits for the applied index first (`h.waitch()`): behind the WAL.
                ctx.send(from, EtcdMsg::RenewForwardResp { request, ttl_ns });
            }
            EtcdMsg::RenewForwardResp { request, ttl_ns } => {
                self.forward_answered(ctx, request, ttl_ns, false)
            }
            EtcdMsg::Ready => {
                if self.demote_pending && !self.raft.is_leader() {
                    self.lessor.demote();
                    ctx.cancel_timer(EtcdTimer::Sweep);
                }
                self.demote_pending = false;
                ctx.cancel_timer(EtcdTimer::ReadyProbe);
            }
            EtcdMsg::LeaseGrant {
                ttl_ns,
                sent_at,
                campaign,
            } => {
                let command = Command::Grant {
                    owner: from,
                    ttl_ns,
                    sent_at,
                    campaign,
                };
                self.submit(ctx, command, Some(from));
            }
            EtcdMsg::Txn { lease } => {
                self.submit(ctx, Command::Txn { owner: from, lease }, Some(from))
            }
            EtcdMsg::Revoke { lease } => {
                let command = Command::Revoke {
                    lease,
                    expired: false,
                };
                self.submit(ctx, command, None);
            }
            EtcdMsg::ObjectGet { request } => {
                self.submit(ctx, Command::ObjectGet { request }, Some(from))
            }
            EtcdMsg::ObjectPut {
                request,
                expected_rev,
                owner,
                value,
            } => {
                let command = Command::ObjectPut {
                    request,
                    expected_rev,
                    owner,
                    value,
                };
                self.submit(ctx, command, Some(from));
            }
            EtcdMsg::KeepAlive { lease, sent_at } => self.keep_alive(ctx, from, lease, sent_at),
            EtcdMsg::Range => {
                let answer = EtcdMsg::RangeResp {
                    revision: self.kv.revision,
                    keys: self.kv.keys(),
                };
                ctx.send_unordered(from, answer);
            }
            EtcdMsg::Watch { key, .. } => {
                if self.kv.has_key(key) || key > self.kv.revision {
                    let watchers = self.watches.entry(key).or_default();
                    if !watchers.contains(&from) {
                        watchers.push(from);
                    }
                } else {
                    let event = EtcdMsg::WatchEvent {
                        key,
                        revision: self.kv.revision,
                    };
                    ctx.send_unordered(from, event);
                }
            }
            // SetNx is refused in cluster mode (settings); answers never reach a member.
            _ => {}
        }
        self.settle(ctx);
    }

    /// The member's revision (its "term" for `term_monotonic`).
    fn term(&self) -> u64 {
        self.revision()
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    /// An etcd member leads its cluster while its Raft leads.
    fn leads_service(&self) -> bool {
        self.leads()
    }
}
