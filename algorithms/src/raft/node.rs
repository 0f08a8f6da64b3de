//! The Raft node: its durable and volatile state, the role transitions
//! (`become_follower` / `become_pre_candidate` / `become_candidate` / `become_leader`), and
//! the [`Process`] entry points, which dispatch to the per-role steps in `voter.rs`,
//! `candidate.rs` and `leader.rs`.

use super::config::{RaftConfig, RaftTimeoutDraw, RaftTimerReset, RaftVariant};
use super::log::{LogPosition, RaftLog};
use super::messages::{RaftMsg, RaftTimer};
use super::replication::{AppendAnswer, AppendArgs};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};

/// The handler context of a Raft node.
pub(crate) type RaftCtx<'a> = Ctx<'a, RaftMsg, RaftTimer, Durable>;

/// What a node is doing in its current term (paper §5.1, plus thesis §9.6's pre-candidate).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Follower,
    /// Thesis §9.6: probing with PreVote; the term has not been incremented.
    PreCandidate,
    Candidate,
    Leader,
}

/// Paper figure 2, "persistent state on all servers": updated on stable storage before
/// responding to RPCs, so it survives a crash. Written with [`Ctx::persist`] wherever it
/// changes, as LogCabin's `RaftConsensus::updateLogMetadata` is called (on a new term in
/// `stepDown`, on a new election in `startNewElection`, on a granted vote in
/// `handleRequestVote`), before anything the handler sends after it.
#[derive(Clone, Debug)]
pub struct Durable {
    pub(crate) current_term: u64,
    pub(crate) voted_for: Option<NodeId>,
    pub(crate) log: RaftLog,
}

impl splitbrain_sim::DurableState for Durable {
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.log.heap_bytes()
    }

    /// The vote is the one node id on disk.
    fn renamed(&self, names: &[NodeId]) -> Option<Self> {
        Some(Self {
            voted_for: self.voted_for.map(|n| n.renamed(names)),
            ..self.clone()
        })
    }
}

impl Durable {
    /// What member `id` has on disk before it ever writes: term 0, no vote, and the initial
    /// log `config.log_lengths[id]` entries of term 0 long (empty when the list does not
    /// name it).
    fn initial(id: NodeId, config: &RaftConfig) -> Self {
        let log_length = config.log_lengths.get(id.index()).copied().unwrap_or(0);
        Self {
            current_term: 0,
            voted_for: None,
            log: RaftLog::uniform(log_length, 0),
        }
    }
}

/// What a durable write is for, so that a broken variant can skip one kind of fsync.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum DurableWrite {
    /// A new term (and the vote cleared with it, or a candidate's vote for itself).
    Term,
    /// A vote granted to another candidate.
    Vote,
    /// Entries appended to the log (the proposal workload).
    Log,
}

/// What the leader knows of one peer, for check-quorum and transfer-target choice.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct PeerProgress {
    /// Thesis §6.2: the peer answered since the last check-quorum round.
    pub(crate) heard_this_round: bool,
    /// Local time of the peer's last AppendEntriesResp in this term.
    pub(crate) last_response_local: Option<LocalNanos>,
    /// The peer's log position from that response.
    pub(crate) position: Option<LogPosition>,
    /// Paper §5.3: the index of the next entry to send the peer (the proposal workload).
    pub(crate) next_index: u64,
    /// The highest index known to match the leader's log on the peer.
    pub(crate) match_index: u64,
    /// After a refusal: one message at a time until the peer accepts (etcd `StateProbe`).
    pub(crate) probing: bool,
}

/// Everything lost on a crash: role, leader, votes, timers' bookkeeping.
#[derive(Clone, Debug)]
pub(crate) struct Volatile {
    pub(crate) role: Role,
    /// The leader recognised in the current term (itself when leader).
    pub(crate) leader_id: Option<NodeId>,
    /// Local time of the last valid AppendEntries from `leader_id`.
    pub(crate) leader_contact_local: Option<LocalNanos>,
    /// (Pre-)candidate: per member, `None` until it answers, then whether it granted.
    pub(crate) votes: Vec<Option<bool>>,
    /// Candidate: this election was asked for by TimeoutNow (thesis §3.10).
    pub(crate) transfer_campaign: bool,
    /// Leader: per member.
    pub(crate) peers: Vec<PeerProgress>,
    /// Leader: the target of a leadership transfer in progress.
    pub(crate) transfer_target: Option<NodeId>,
    /// With [`RaftTimeoutDraw::OnRoleChange`]: the election timeout drawn since the last
    /// role change, reused until the next one.
    pub(crate) election_timeout_ns: Option<u64>,
}

impl Volatile {
    fn fresh(members: usize) -> Self {
        Self {
            role: Role::Follower,
            leader_id: None,
            leader_contact_local: None,
            votes: vec![None; members],
            transfer_campaign: false,
            peers: vec![PeerProgress::default(); members],
            transfer_target: None,
            election_timeout_ns: None,
        }
    }

    /// Forgets everything, in place (no allocation: followers reset on every heartbeat).
    pub(crate) fn reset(&mut self) {
        self.role = Role::Follower;
        self.leader_id = None;
        self.leader_contact_local = None;
        self.votes.fill(None);
        self.transfer_campaign = false;
        self.peers.fill(PeerProgress::default());
        self.transfer_target = None;
        self.election_timeout_ns = None;
    }
}

/// One Raft election member as a pure state machine (no log replication; see
/// `docs/algorithms/raft.md`).
#[derive(Clone, Debug)]
pub struct RaftNode {
    pub(crate) id: NodeId,
    pub(crate) members: usize,
    pub(crate) config: RaftConfig,
    pub(crate) durable: Durable,
    pub(crate) volatile: Volatile,
    /// Run inside a replicated service (an etcd member): commitment is tracked, a new
    /// leader appends an empty entry of its term, and lagging followers are caught up from
    /// heartbeat answers. False for every plain Raft run.
    pub(crate) embedded: bool,
    /// Paper figure 2, "volatile state on all servers": the highest log index known to be
    /// committed. Only tracked when `embedded`; kept across role changes and restarts (a
    /// committed entry stays committed).
    pub(crate) commit_index: u64,
}

impl RaftNode {
    /// Member `id` of a cluster of `members`, with the initial log `config.log_lengths[id]`
    /// entries of term 0 long (empty when the list does not name it).
    pub fn new(id: NodeId, members: usize, config: &RaftConfig) -> Self {
        assert!(id.index() < members, "{id} is not one of {members} members");
        assert!(config.election_timeout_min_ns <= config.election_timeout_max_ns);
        assert!(config.heartbeat_ns > 0, "a zero heartbeat would spin");
        Self {
            id,
            members,
            config: config.clone(),
            durable: Durable::initial(id, config),
            volatile: Volatile::fresh(members),
            embedded: false,
            commit_index: 0,
        }
    }

    /// Member `id` of `members` run inside a replicated service (`algorithms/src/etcd/cluster`):
    /// as [`RaftNode::new`], plus commitment (paper §5.3 and §5.4.2), the empty entry a new
    /// leader appends (etcd-io/raft `becomeLeader`: `r.appendEntry(pb.Entry{Data: nil})`)
    /// and [`RaftNode::propose`].
    pub fn embedded(id: NodeId, members: usize, config: &RaftConfig) -> Self {
        Self {
            embedded: true,
            ..Self::new(id, members, config)
        }
    }

    /// Whether this node leads now.
    pub fn is_leader(&self) -> bool {
        self.volatile.role == Role::Leader
    }

    /// The leader this node recognises in its term (itself when it leads).
    pub fn leader(&self) -> Option<NodeId> {
        self.volatile.leader_id
    }

    /// The current term.
    pub fn current_term(&self) -> u64 {
        self.durable.current_term
    }

    /// The index of the last log entry.
    pub fn last_index(&self) -> u64 {
        self.durable.log.last_index()
    }

    /// The term of the entry at `index` (0 for index 0; `None` past the end).
    pub fn term_at(&self, index: u64) -> Option<u64> {
        self.durable.log.term_at(index)
    }

    /// The highest index known committed (embedded nodes only; 0 otherwise).
    pub fn commit_index(&self) -> u64 {
        self.commit_index
    }

    /// Whether this node leads and heard from a majority (itself included) within the
    /// minimum election timeout before `local_now` by its own clock.
    pub fn leads_with_recent_quorum(&self, local_now: LocalNanos) -> bool {
        if self.volatile.role != Role::Leader {
            return false;
        }
        let recent_ns = i128::from(self.config.election_timeout_min_ns);
        let heard = self
            .peers()
            .filter(|peer| {
                self.volatile.peers[peer.index()]
                    .last_response_local
                    .is_some_and(|at| i128::from(local_now) - i128::from(at) < recent_ns)
            })
            .count();
        heard + 1 >= self.quorum()
    }

    /// Paper figure 2: writes the durable state to stable storage; what the handler sends
    /// after this leaves once it is on disk. The broken variants skip the fsync:
    /// [`RaftVariant::ForgetsVoteOnRestart`] that of a granted vote,
    /// [`RaftVariant::ForgetsTermOnRestart`] every one.
    pub(crate) fn persist(&self, ctx: &mut RaftCtx<'_>, write: DurableWrite) {
        let skipped = match self.config.variant {
            RaftVariant::Correct => false,
            RaftVariant::ForgetsVoteOnRestart => write == DurableWrite::Vote,
            RaftVariant::ForgetsTermOnRestart => true,
        };
        if !skipped {
            ctx.persist(self.durable.clone());
        }
    }

    /// The votes a decision needs: a majority of all members (paper §5.2).
    pub(crate) fn quorum(&self) -> usize {
        self.members / 2 + 1
    }

    /// Every member but this one, in id order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.members)
            .map(NodeId::from)
            .filter(move |peer| *peer != self.id)
    }

    #[cfg(test)]
    pub(crate) fn role(&self) -> Role {
        self.volatile.role
    }

    pub(crate) fn log_position(&self) -> LogPosition {
        self.durable.log.position()
    }

    /// Whether this node could win an election as far as logs go: its log is at least as
    /// up-to-date as the logs of a majority of the members, itself included, so that a
    /// majority may grant it (paper §5.4.1: a voter refuses a candidate whose log is less
    /// up-to-date than its own). The paper's §9.3 measurements gave the servers logs of
    /// different lengths so that some candidates could not become leader; this is the line
    /// between the two. Without a proposal workload logs never change, so every member's
    /// log is the one the shared configuration gives it; with one, nobody can tell, and no
    /// campaign is marked eligible.
    pub(crate) fn eligible(&self) -> bool {
        let mine = self.log_position();
        let at_or_below = (0..self.members)
            .filter(|&member| {
                let length = self.config.log_lengths.get(member).copied().unwrap_or(0);
                mine.at_least_as_up_to_date_as(RaftLog::uniform(length, 0).position())
            })
            .count();
        at_or_below >= self.quorum()
    }

    /// Whether this node heard from a live leader of its term within the minimum election
    /// timeout, by its own clock (thesis §4.2.3 and §9.6). A leader counts as hearing itself.
    pub(crate) fn leader_heard_recently(&self, local_now: LocalNanos) -> bool {
        if self.volatile.role == Role::Leader {
            return true;
        }
        if self.volatile.leader_id.is_none() {
            return false;
        }
        self.volatile.leader_contact_local.is_some_and(|contact| {
            i128::from(local_now) - i128::from(contact)
                < i128::from(self.config.election_timeout_min_ns)
        })
    }

    /// Paper §5.2: restarts the election countdown with a timeout drawn uniformly from
    /// `[min, max]`: a fresh one each time, or under [`RaftTimeoutDraw::OnRoleChange`] the one
    /// drawn since the last role change (etcd-io/raft).
    pub(crate) fn reset_election_timer(&mut self, ctx: &mut RaftCtx<'_>) {
        let kept = match self.config.timeout_draw {
            RaftTimeoutDraw::EveryRestart => None,
            RaftTimeoutDraw::OnRoleChange => self.volatile.election_timeout_ns,
        };
        let timeout_ns = kept.unwrap_or_else(|| {
            ctx.draw_timeout(
                self.config.election_timeout_min_ns,
                self.config.election_timeout_max_ns,
            )
        });
        if self.config.timeout_draw == RaftTimeoutDraw::OnRoleChange {
            self.volatile.election_timeout_ns = Some(timeout_ns);
        }
        ctx.set_timer(RaftTimer::Election, timeout_ns);
    }

    /// Paper §5.1: on a higher term, adopt it and forget the vote; a leader or candidate
    /// that discovers a current leader or a newer term reverts to follower. `leader` is the
    /// leader this node just heard from (AppendEntries, TimeoutNow), if that is the cause.
    ///
    /// The election timer restarts when the node was leader (it had none armed), when
    /// `leader` is known (paper figure 2: hearing from the current leader), or on any
    /// step-down under [`RaftTimerReset::OnAnyStepDown`] (etcd). Under
    /// [`RaftTimerReset::OnGrantOrLeader`] a (pre-)candidate or follower that only learns of
    /// a higher term keeps its deadline (LogCabin `RaftConsensus::stepDown`); granting a vote
    /// restarts it in `handle_request_vote`.
    pub(crate) fn become_follower(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        term: u64,
        leader: Option<NodeId>,
    ) {
        assert!(
            term >= self.durable.current_term,
            "terms never go backwards"
        );
        if term > self.durable.current_term {
            self.durable.current_term = term;
            self.durable.voted_for = None;
            self.persist(ctx, DurableWrite::Term);
        }
        // Every role but the leader has its election timer armed (start, restart,
        // campaigning and this function arm it; only `become_leader` cancels it).
        let timer_armed = self.volatile.role != Role::Leader;
        let reset_timer = match self.config.timer_reset {
            RaftTimerReset::OnAnyStepDown => true,
            RaftTimerReset::OnGrantOrLeader => !timer_armed || leader.is_some(),
        };
        match self.volatile.role {
            Role::Leader => {
                ctx.stepped_down();
                ctx.cancel_timer(RaftTimer::Heartbeat);
                ctx.cancel_timer(RaftTimer::CheckQuorum);
                if self.config.propose_every_ns.is_some() {
                    ctx.cancel_timer(RaftTimer::Propose);
                }
                if self.volatile.transfer_target.is_some() {
                    ctx.cancel_timer(RaftTimer::Transfer);
                }
            }
            Role::Candidate | Role::PreCandidate => ctx.cancel_timer(RaftTimer::Heartbeat),
            Role::Follower => {}
        }
        self.volatile.reset();
        self.volatile.leader_id = leader;
        self.volatile.leader_contact_local = leader.map(|_| ctx.monotonic_now());
        if reset_timer {
            self.reset_election_timer(ctx);
        }
    }

    /// Thesis §9.6: ask whether an election for term + 1 could be won, without changing
    /// the term, so a node that cannot win never disrupts the cluster.
    pub(crate) fn become_pre_candidate(&mut self, ctx: &mut RaftCtx<'_>) {
        assert!(
            self.volatile.role != Role::Leader,
            "a leader does not campaign"
        );
        // etcd-io/raft's `becomePreCandidate` does not call `reset`: the drawn timeout stays.
        let drawn_ns = self.volatile.election_timeout_ns;
        self.volatile.reset();
        self.volatile.election_timeout_ns = drawn_ns;
        self.volatile.role = Role::PreCandidate;
        self.volatile.votes[self.id.index()] = Some(true);
        let proposed_term = self.durable.current_term + 1;
        ctx.signal(Signal::PreVoteStarted {
            term: proposed_term,
        });
        self.reset_election_timer(ctx);
        self.send_vote_requests(ctx);
        ctx.set_timer(RaftTimer::Heartbeat, self.config.heartbeat_ns);
        if self.granted_votes() >= self.quorum() {
            self.become_candidate(ctx, false);
        }
    }

    /// Paper §5.2: increment the term, vote for itself, reset the election timer and ask
    /// every peer for its vote. `transfer` marks an election asked for by TimeoutNow.
    pub(crate) fn become_candidate(&mut self, ctx: &mut RaftCtx<'_>, transfer: bool) {
        assert!(
            self.volatile.role != Role::Leader,
            "a leader does not campaign"
        );
        self.durable.current_term += 1;
        self.durable.voted_for = Some(self.id);
        self.persist(ctx, DurableWrite::Term);
        self.volatile.reset();
        self.volatile.role = Role::Candidate;
        self.volatile.transfer_campaign = transfer;
        self.volatile.votes[self.id.index()] = Some(true);
        ctx.signal(Signal::ElectionStarted {
            term: self.durable.current_term,
        });
        if self.config.propose_every_ns.is_none() && self.eligible() {
            ctx.signal(Signal::CampaignEligible {
                term: self.durable.current_term,
            });
        }
        self.reset_election_timer(ctx);
        self.send_vote_requests(ctx);
        ctx.set_timer(RaftTimer::Heartbeat, self.config.heartbeat_ns);
        if self.granted_votes() >= self.quorum() {
            self.become_leader(ctx);
        }
    }

    /// Paper §5.2: a candidate with votes from a majority becomes leader and sends
    /// heartbeats at once to establish its authority. Its fencing token is its term.
    pub(crate) fn become_leader(&mut self, ctx: &mut RaftCtx<'_>) {
        assert!(
            self.volatile.role == Role::Candidate,
            "only a candidate wins an election"
        );
        assert!(self.granted_votes() >= self.quorum());
        self.volatile.reset();
        self.volatile.role = Role::Leader;
        self.volatile.leader_id = Some(self.id);
        let term = self.durable.current_term;
        ctx.became_leader(term, term);
        ctx.cancel_timer(RaftTimer::Election);
        // Paper figure 2: next index "initialized to leader last log index + 1".
        let next_index = self.durable.log.last_index().saturating_add(1);
        for progress in &mut self.volatile.peers {
            progress.next_index = next_index;
        }
        if self.embedded {
            // etcd-io/raft `becomeLeader`: "a new leader appends an empty entry" of its term,
            // so that what earlier terms left can commit (paper §5.4.2).
            self.append_own_entry(ctx);
        }
        if let Some(every_ns) = self.config.propose_every_ns {
            ctx.set_timer(RaftTimer::Propose, every_ns);
        }
        self.broadcast_heartbeat(ctx);
        ctx.set_timer(RaftTimer::Heartbeat, self.config.heartbeat_ns);
        if self.config.check_quorum {
            ctx.set_timer(RaftTimer::CheckQuorum, self.config.election_timeout_min_ns);
        }
    }

    /// The heartbeat slot: the leader's heartbeat, a (pre-)candidate's retry.
    fn on_heartbeat_timer(&mut self, ctx: &mut RaftCtx<'_>) {
        match self.volatile.role {
            Role::Leader => self.broadcast_heartbeat(ctx),
            Role::Candidate | Role::PreCandidate => self.send_vote_requests(ctx),
            Role::Follower => return,
        }
        ctx.set_timer(RaftTimer::Heartbeat, self.config.heartbeat_ns);
    }
}

impl Process for RaftNode {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Durable = Durable;

    fn on_start(&mut self, ctx: &mut RaftCtx<'_>) {
        // Paper §5.2: servers start as followers.
        self.reset_election_timer(ctx);
    }

    fn on_message(&mut self, ctx: &mut RaftCtx<'_>, from: NodeId, msg: RaftMsg) {
        match msg {
            RaftMsg::PreVote {
                term,
                last_log_index,
                last_log_term,
            } => {
                self.handle_pre_vote(
                    ctx,
                    from,
                    term,
                    LogPosition {
                        last_term: last_log_term,
                        last_index: last_log_index,
                    },
                );
            }
            RaftMsg::RequestVote {
                term,
                last_log_index,
                last_log_term,
                transfer,
            } => {
                let position = LogPosition {
                    last_term: last_log_term,
                    last_index: last_log_index,
                };
                self.handle_request_vote(ctx, from, term, position, transfer);
            }
            RaftMsg::AppendEntries { term, commit } => {
                self.handle_append_entries(ctx, from, term);
                self.learn_commit(term, commit, commit);
            }
            RaftMsg::TimeoutNow { term } => self.handle_timeout_now(ctx, from, term),
            RaftMsg::Append {
                term,
                prev_log_index,
                prev_log_term,
                entry_term,
                entries,
                commit,
            } => {
                let args = AppendArgs {
                    term,
                    prev_log_index,
                    prev_log_term,
                    entry_term,
                    entries,
                    commit,
                };
                self.handle_append(ctx, from, args);
            }
            RaftMsg::AppendResp {
                term,
                success,
                index,
                last_log_index,
            } => {
                let answer = AppendAnswer {
                    term,
                    success,
                    index,
                    last_log_index,
                };
                self.handle_append_resp(ctx, from, answer);
            }
            RaftMsg::PreVoteResp { term, granted } => {
                self.handle_pre_vote_resp(ctx, from, term, granted)
            }
            RaftMsg::RequestVoteResp { term, granted } => {
                self.handle_request_vote_resp(ctx, from, term, granted);
            }
            RaftMsg::AppendEntriesResp {
                term,
                last_log_index,
                last_log_term,
                ..
            } => {
                let position = LogPosition {
                    last_term: last_log_term,
                    last_index: last_log_index,
                };
                self.handle_append_entries_resp(ctx, from, term, position);
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut RaftCtx<'_>, timer: RaftTimer) {
        match timer {
            RaftTimer::Election => self.on_election_timeout(ctx),
            RaftTimer::Heartbeat => self.on_heartbeat_timer(ctx),
            RaftTimer::CheckQuorum => self.on_check_quorum(ctx),
            RaftTimer::Transfer => self.on_transfer_timeout(ctx),
            RaftTimer::Propose => self.on_propose(ctx),
        }
    }

    fn restore(&mut self, durable: Option<Durable>) {
        // Paper figure 2: current_term, voted_for and the log are what the disk kept (a
        // write the crash cut short, or one a broken variant never made, is lost).
        self.durable = durable.unwrap_or_else(|| Durable::initial(self.id, &self.config));
    }

    fn on_restart(&mut self, ctx: &mut RaftCtx<'_>) {
        self.volatile.reset();
        self.reset_election_timer(ctx);
    }

    fn on_resign(&mut self, ctx: &mut RaftCtx<'_>) {
        self.start_transfer(ctx);
    }

    fn term(&self) -> u64 {
        self.durable.current_term
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        // Thesis §3.10: a leader stops accepting client requests during a transfer.
        let serving = self.volatile.role == Role::Leader && self.volatile.transfer_target.is_none();
        serving.then_some(self.durable.current_term)
    }

    fn known_leader(&self) -> Option<NodeId> {
        self.volatile.leader_id
    }

    fn digest(&self, local_now_ns: LocalNanos) -> Option<u64> {
        self.digest_renamed(local_now_ns, &[])
    }

    /// Every node id a Raft node holds: its vote, the leader it follows, a transfer's
    /// target, and the per-member votes and peer progress (rearranged). Its own id is where
    /// the engine lists it.
    fn digest_renamed(&self, local_now_ns: LocalNanos, names: &[NodeId]) -> Option<u64> {
        use splitbrain_sim::ids::renamed_vec;
        use splitbrain_sim::DurableState;
        use std::hash::{DefaultHasher, Hash, Hasher};
        // Local times enter as ages, so that one state reached at two times is one state.
        let age = |at: Option<LocalNanos>| at.map(|t| local_now_ns - t);
        let rename = |n: Option<NodeId>| n.map(|n| n.renamed(names));
        let mut volatile = self.volatile.clone();
        volatile.leader_contact_local = age(volatile.leader_contact_local);
        for peer in &mut volatile.peers {
            peer.last_response_local = age(peer.last_response_local);
        }
        volatile.leader_id = rename(volatile.leader_id);
        volatile.transfer_target = rename(volatile.transfer_target);
        volatile.votes = renamed_vec(&volatile.votes, names);
        volatile.peers = renamed_vec(&volatile.peers, names);
        let durable = self.durable.renamed(names)?;
        let mut h = DefaultHasher::new();
        format!("{durable:?} {volatile:?} {}", self.commit_index).hash(&mut h);
        Some(h.finish())
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        let v = &self.volatile;
        let shown = |node: Option<NodeId>| node.map_or("none".to_string(), |n| n.to_string());
        let mut fields = vec![
            ("role", format!("{:?}", v.role).to_lowercase()),
            ("voted_for", shown(self.durable.voted_for)),
            ("leader", shown(v.leader_id)),
            ("log_last_index", self.durable.log.last_index().to_string()),
            ("log_last_term", self.durable.log.last_term().to_string()),
        ];
        if let Some(local) = v.leader_contact_local {
            fields.push(("leader_contact_local_ns", local.to_string()));
        }
        if matches!(v.role, Role::Candidate | Role::PreCandidate) {
            let granted = v.votes.iter().filter(|vote| **vote == Some(true)).count();
            fields.push(("votes_granted", format!("{granted} of {}", self.quorum())));
        }
        if let Some(target) = v.transfer_target {
            fields.push(("transfer_target", target.to_string()));
        }
        fields
    }
}
