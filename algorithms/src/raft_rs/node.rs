//! One member: a raft-rs `RawNode` over a `MemStorage`, driven through the engine's
//! [`Process`] API. Every entry point makes one call into raft-rs (tick, step, transfer, or
//! a rebuild on restart) and then [`RaftRsNode::after_call`]: the determinism override,
//! the observations for the engine, and the `Ready` handling of `ready.rs`.

use super::config::RaftRsConfig;
use super::messages::{node_id, raft_id, RaftRsMsg, RaftRsTimer};
use raft::eraftpb::{ConfState, MessageType};
use raft::storage::MemStorage;
use raft::{RawNode, StateRole};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};
use std::fmt;

/// The handler context of a raft-rs member.
pub(crate) type RaftRsCtx<'a> = Ctx<'a, RaftRsMsg, RaftRsTimer>;

/// What the adapter reads of raft-rs before a call, to tell what the call changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Seen {
    state: StateRole,
    term: u64,
    vote: u64,
}

/// One raft-rs member. raft-rs does the protocol; the adapter only turns the engine's
/// events into raft-rs calls and raft-rs' `Ready` into the engine's effects.
pub struct RaftRsNode {
    pub(crate) id: NodeId,
    config: RaftRsConfig,
    /// raft-rs' randomized election timeout range in ticks, `[min, max)` (raft-rs
    /// `Config::min_election_tick` and `Config::max_election_tick`).
    timeout_range_ticks: (usize, usize),
    /// Durable: the hard state and the log, which survive a crash. `MemStorage` shares its
    /// contents between clones, so this handle and the `RawNode`'s see the same disk.
    pub(crate) storage: MemStorage,
    /// Volatile: rebuilt from `storage` on restart.
    pub(crate) raw: RawNode<MemStorage>,
    /// The randomized election timeout the adapter last gave raft-rs, in ticks.
    drawn_timeout_ticks: usize,
    /// The term of the leadership declared to the engine, until it ends.
    declared_term: Option<u64>,
}

impl fmt::Debug for RaftRsNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RaftRsNode")
            .field("id", &self.id)
            .field("state", &self.raw.raft.state)
            .field("term", &self.raw.raft.term)
            .field("vote", &self.raw.raft.vote)
            .field("leader_id", &self.raw.raft.leader_id)
            .field("drawn_timeout_ticks", &self.drawn_timeout_ticks)
            .finish()
    }
}

impl RaftRsNode {
    /// Member `id` of a cluster of `members`, all of them voters from the start (every
    /// storage holds the same initial configuration, as raft-rs' `MemStorage` asks).
    pub fn new(id: NodeId, members: usize, config: &RaftRsConfig) -> Self {
        assert!(id.index() < members, "{id} is not one of {members} members");
        let problems = config.validate();
        assert!(
            problems.is_empty(),
            "the scenario loader refuses these settings: {problems:?}"
        );
        let voters: Vec<u64> = (0..members).map(|i| raft_id(NodeId::from(i))).collect();
        let storage = MemStorage::new_with_conf_state(ConfState::from((voters, Vec::new())));
        let raft_config = config.raft_config(raft_id(id));
        let timeout_range_ticks = (
            raft_config.min_election_tick(),
            raft_config.max_election_tick(),
        );
        let raw = new_raw_node(config, id, &storage);
        Self {
            id,
            config: config.clone(),
            timeout_range_ticks,
            storage,
            raw,
            drawn_timeout_ticks: 0,
            declared_term: None,
        }
    }

    /// raft-rs' role.
    #[cfg(test)]
    pub(crate) fn state(&self) -> StateRole {
        self.raw.raft.state
    }

    fn seen(&self) -> Seen {
        Seen {
            state: self.raw.raft.state,
            term: self.raw.raft.term,
            vote: self.raw.raft.vote,
        }
    }

    /// Replaces raft-rs' randomized election timeout with one drawn from this node's stream.
    /// raft-rs 0.7 `src/raft.rs` `Raft::reset_randomized_election_timeout` draws it with
    /// `rand::thread_rng()` uniformly from `[min_election_timeout, max_election_timeout)`;
    /// this draws from the same range, so only the source of randomness differs.
    fn draw_election_timeout(&mut self, ctx: &mut RaftRsCtx<'_>) {
        let (min_ticks, max_ticks) = self.timeout_range_ticks;
        let ticks = ctx.draw_timeout(min_ticks as u64, max_ticks as u64 - 1);
        let ticks = usize::try_from(ticks).expect("drawn from a usize range");
        self.raw.raft.set_randomized_election_timeout(ticks);
        self.drawn_timeout_ticks = ticks;
    }

    /// After every call into raft-rs: replace a timeout raft-rs drew, tell the engine what
    /// changed, and handle the `Ready`.
    fn after_call(&mut self, ctx: &mut RaftRsCtx<'_>, before: Seen) {
        let after = self.seen();
        if raft_redrew(before, after) {
            self.draw_election_timeout(ctx);
        } else {
            assert_eq!(
                self.raw.raft.randomized_election_timeout(),
                self.drawn_timeout_ticks,
                "raft-rs drew an election timeout the adapter did not replace ({before:?} -> {after:?})"
            );
        }
        // raft-rs `Raft::become_candidate`: a new term, with a vote for itself.
        if after.term > before.term && after.vote == raft_id(self.id) {
            ctx.signal(Signal::ElectionStarted { term: after.term });
        }
        self.declare_leadership(ctx);
        self.handle_ready(ctx);
    }

    /// Tells the engine when raft-rs' role becomes or stops being leader. The fencing token
    /// is the term, as in splitbrain's own Raft model.
    fn declare_leadership(&mut self, ctx: &mut RaftRsCtx<'_>) {
        let leading = (self.raw.raft.state == StateRole::Leader).then_some(self.raw.raft.term);
        if leading == self.declared_term {
            return;
        }
        if self.declared_term.is_some() {
            ctx.stepped_down();
        }
        if let Some(term) = leading {
            ctx.became_leader(term, term);
        }
        self.declared_term = leading;
    }

    /// The signals of a tick that ran out raft-rs' election timeout (`Raft::tick_election`
    /// zeroes `election_elapsed` and steps `MsgHup`; `Raft::hup` campaigns, through a
    /// pre-vote when `pre_vote` is on).
    fn signal_timeout(&self, ctx: &mut RaftRsCtx<'_>, before: Seen) {
        match before.state {
            StateRole::Follower => ctx.signal(Signal::LeaderSuspected),
            StateRole::PreCandidate => ctx.signal(Signal::ElectionRoundFailed {
                term: before.term + 1,
            }),
            StateRole::Candidate => ctx.signal(Signal::ElectionRoundFailed { term: before.term }),
            StateRole::Leader => unreachable!("a leader's tick runs no election timeout"),
        }
        if self.config.pre_vote {
            ctx.signal(Signal::PreVoteStarted {
                term: before.term + 1,
            });
        }
    }

    /// The peer a resigning leader hands over to: the one whose log matches furthest (raft-rs
    /// sends it the missing entries before `MsgTimeoutNow`), the lowest id among equals.
    fn transfer_target(&self) -> Option<u64> {
        let me = raft_id(self.id);
        self.raw
            .raft
            .prs()
            .iter()
            .filter(|(id, _)| **id != me)
            .max_by_key(|(id, progress)| (progress.matched, std::cmp::Reverse(**id)))
            .map(|(id, _)| *id)
    }
}

/// A `RawNode` for member `id` over `storage`, with a logger that discards everything.
fn new_raw_node(config: &RaftRsConfig, id: NodeId, storage: &MemStorage) -> RawNode<MemStorage> {
    let raft_config = config.raft_config(raft_id(id));
    debug_assert!(raft_config.validate().is_ok(), "RaftRsConfig::validate");
    let logger = slog::Logger::root(slog::Discard, slog::o!());
    RawNode::new(&raft_config, storage.clone(), &logger)
        .expect("validated settings over an initialized storage")
}

/// Whether raft-rs drew a new randomized election timeout during a call that took it from
/// `before` to `after`. raft-rs 0.7 draws only in `Raft::reset` (`src/raft.rs`), which only
/// `become_follower`, `become_candidate` and `become_leader` call, and each of those changes
/// the term or the role within one call: `become_candidate` raises the term;
/// `become_leader` is reached from candidate; `become_follower` is called with a higher term
/// or from leader (`step_leader`, check quorum) or (pre-)candidate (`step_candidate`,
/// `poll`, `maybe_commit_by_vote`). `become_pre_candidate` changes the role but does not
/// call `reset`, so it keeps the timeout.
fn raft_redrew(before: Seen, after: Seen) -> bool {
    after.term != before.term
        || (after.state != before.state && after.state != StateRole::PreCandidate)
}

impl Process for RaftRsNode {
    type Msg = RaftRsMsg;
    type Timer = RaftRsTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut RaftRsCtx<'_>) {
        // Real members do not boot in the same nanosecond: the first tick comes after a
        // phase drawn from this node's stream, so the members' ticks interleave.
        let phase_ns = ctx.rng().between(1, self.config.tick_ns);
        ctx.set_timer(RaftRsTimer::Tick, phase_ns);
        // `RawNode::new` drew with thread_rng (`Raft::new` calls `become_follower`).
        self.draw_election_timeout(ctx);
        let seen = self.seen();
        self.after_call(ctx, seen);
    }

    fn on_message(&mut self, ctx: &mut RaftRsCtx<'_>, from: NodeId, msg: RaftRsMsg) {
        let message = msg.into_raft_message();
        assert_eq!(
            node_id(message.from),
            Some(from),
            "raft-rs names its sender"
        );
        let before = self.seen();
        let asks_vote_for_later_term = matches!(
            message.get_msg_type(),
            MessageType::MsgRequestVote | MessageType::MsgRequestPreVote
        ) && message.term > before.term;
        let stepped = self.raw.step(message);
        assert!(
            stepped.is_ok(),
            "raft-rs refused a peer's message: {stepped:?}"
        );
        // raft-rs `Raft::step`: with check_quorum, a vote request of a later term within
        // the election timeout of hearing from the leader is dropped unanswered (Raft thesis
        // §4.2.3); every other vote request gets a response.
        let answered = self.raw.raft.msgs.iter().any(|m| m.to == raft_id(from));
        if asks_vote_for_later_term && !answered {
            ctx.signal(Signal::DisruptionPrevented);
        }
        self.after_call(ctx, before);
    }

    fn on_timer(&mut self, ctx: &mut RaftRsCtx<'_>, timer: RaftRsTimer) {
        match timer {
            RaftRsTimer::Tick => {
                ctx.set_timer(RaftRsTimer::Tick, self.config.tick_ns);
                let before = self.seen();
                self.raw.tick();
                // `Raft::tick_election` adds one to `election_elapsed` and zeroes it only when
                // the timeout ran out.
                let timed_out =
                    before.state != StateRole::Leader && self.raw.raft.election_elapsed == 0;
                if timed_out {
                    self.signal_timeout(ctx, before);
                }
                self.after_call(ctx, before);
            }
        }
    }

    fn on_restart(&mut self, ctx: &mut RaftRsCtx<'_>) {
        // Hard state and log come back from storage (`Raft::new` loads them through
        // `Storage::initial_state`); role, leader, votes, progress and ticks do not. The
        // engine ended any leadership at the crash.
        self.raw = new_raw_node(&self.config, self.id, &self.storage);
        self.declared_term = None;
        ctx.set_timer(RaftRsTimer::Tick, self.config.tick_ns);
        self.draw_election_timeout(ctx);
        let seen = self.seen();
        self.after_call(ctx, seen);
    }

    fn on_resign(&mut self, ctx: &mut RaftRsCtx<'_>) {
        // raft-rs `RawNode::transfer_leader` (Raft thesis §3.10); it gives up after an
        // election timeout (`Raft::tick_heartbeat`, `abort_leader_transfer`).
        if self.raw.raft.state != StateRole::Leader {
            return;
        }
        let Some(target) = self.transfer_target() else {
            return;
        };
        let before = self.seen();
        self.raw.transfer_leader(target);
        self.after_call(ctx, before);
    }

    fn term(&self) -> u64 {
        self.raw.raft.term
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        // raft-rs `Raft::step_leader` drops proposals while a transfer is under way.
        let raft = &self.raw.raft;
        let serving = raft.state == StateRole::Leader && raft.lead_transferee.is_none();
        serving.then_some(raft.term)
    }

    fn known_leader(&self) -> Option<NodeId> {
        node_id(self.raw.raft.leader_id)
    }

    /// What raft-rs keeps that decides its next steps: its hard and soft state, its tick
    /// counters (ticks are relative already), the votes and each peer's progress, the log's
    /// positions and the terms of its entries, and the messages not yet taken.
    fn digest(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let raft = &self.raw.raft;
        let mut h = DefaultHasher::new();
        (raft.term, raft.vote, raft.leader_id, raft.lead_transferee).hash(&mut h);
        format!("{:?}", raft.state).hash(&mut h);
        (raft.election_elapsed, raft.heartbeat_elapsed()).hash(&mut h);
        (raft.randomized_election_timeout(), self.drawn_timeout_ticks).hash(&mut h);
        let log = &raft.raft_log;
        (
            log.committed,
            log.applied,
            log.last_index(),
            log.last_term(),
        )
            .hash(&mut h);
        let terms: Vec<u64> = (log.first_index()..=log.last_index())
            .map(|i| log.term(i).unwrap_or(0))
            .collect();
        terms.hash(&mut h);
        let mut votes: Vec<(u64, bool)> =
            raft.prs().votes().iter().map(|(k, v)| (*k, *v)).collect();
        votes.sort_unstable();
        votes.hash(&mut h);
        let mut progress: Vec<String> = raft
            .prs()
            .iter()
            .map(|(id, p)| format!("{id} {p:?}"))
            .collect();
        progress.sort_unstable();
        progress.hash(&mut h);
        let msgs: Vec<String> = raft.msgs.iter().map(|m| format!("{m:?}")).collect();
        msgs.hash(&mut h);
        (
            self.declared_term,
            raft.pending_conf_index,
            raft.pending_request_snapshot,
        )
            .hash(&mut h);
        Some(h.finish())
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        let raft = &self.raw.raft;
        let shown = |id: u64| node_id(id).map_or("none".to_string(), |n| n.to_string());
        vec![
            ("role", format!("{:?}", raft.state)),
            ("voted_for", shown(raft.vote)),
            ("leader", shown(raft.leader_id)),
            ("commit", raft.raft_log.committed.to_string()),
            ("log_last_index", raft.raft_log.last_index().to_string()),
            (
                "election_timeout_ticks",
                self.drawn_timeout_ticks.to_string(),
            ),
        ]
    }
}
