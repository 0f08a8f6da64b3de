//! One range's Raft election on a [`Step`]: ticks, pre-votes, campaigns, votes,
//! heartbeats, CheckQuorum and leadership transfers, as etcd raft (CockroachDB's fork in
//! `pkg/raft/raft.go`) runs them per range, with the de-fortification of a follower whose
//! support for its leader lapsed.

use super::config::MultiRaftVariant;
use super::messages::{Beat, RangeMsg, StoreMsg};
use super::placement;
use super::properties::{CAMPAIGN, LEADER_END, RANGE_LEADER, RANGE_WRITE};
use super::replica::{DeFortify, Replica, Role};
use super::store::{Step, FIRST_RANGE};
use splitbrain_sim::{NodeId, Signal};

impl Step<'_, '_, '_> {
    /// One Raft tick of `r` (etcd raft's `tickElection` / `tickHeartbeat`).
    pub(crate) fn tick(&mut self, r: &mut Replica) {
        if !r.leads() {
            self.maybe_defortify(r);
            self.tick_election(r);
            return;
        }
        r.elapsed_ticks += 1;
        // CheckQuorum (`defaultRaftEnableCheckQuorum`): a leader that has not heard from a
        // quorum within an election timeout steps down.
        if r.elapsed_ticks >= self.config.election_ticks {
            if (r.heard.count_ones() as usize) < self.config.quorum() {
                let term = r.term;
                self.become_follower(r, term, None);
                return;
            }
            self.maybe_transfer_to_leaseholder(r);
            r.elapsed_ticks = 0;
            r.heard = self.bit(self.me, r.range);
        }
        self.tick_lease(r);
    }

    /// A follower's or candidate's tick (`pkg/raft/raft.go`, `tickElection`). While it
    /// supports the leader it fortified, its election countdown stays at zero and it does
    /// not campaign. Once that support lapses it de-fortifies (`deFortify`), which moves
    /// the countdown to the election timeout at once: only the randomized part of its
    /// timeout is left to wait (the failover table's "Raft election timeout jitter (random
    /// 0x-1x timeout)", `pkg/base/config.go`). Without fortification the countdown runs
    /// from the last time it heard its leader, as in etcd raft.
    fn tick_election(&mut self, r: &mut Replica) {
        // Variant EarlyLease: the countdown runs as if nothing were fortified.
        if r.fortified.is_some() && self.config.variant != MultiRaftVariant::EarlyLease {
            if self.fortification_holds(r) {
                return;
            }
            self.de_fortify(r);
        } else {
            r.elapsed_ticks += 1;
        }
        if r.elapsed_ticks >= r.timeout_ticks {
            self.campaign(r, false);
        }
    }

    /// `deFortify`: the follower no longer supports the leader it fortified; its election
    /// countdown moves to the election timeout, so it may vote at once and campaigns once
    /// its randomized timeout is reached.
    pub(crate) fn de_fortify(&mut self, r: &mut Replica) {
        r.fortified = None;
        r.elapsed_ticks = self.config.election_ticks;
    }

    /// A replica whose election timeout passed first asks for pre-votes (etcd raft's
    /// `campaignPreElection`; CockroachDB turns `PreVote` on in `newRaftConfig`): its term
    /// does not move until a quorum says it would vote for it in the next term. A campaign
    /// the leader asked for (`transfer`) skips it.
    fn campaign(&mut self, r: &mut Replica, transfer: bool) {
        if transfer || self.config.quorum() == 1 {
            self.campaign_now(r, transfer);
            return;
        }
        self.start_round(r, true);
        self.ask_votes(r, r.term + 1, false, true);
    }

    /// Paper 5.2: the replica becomes a candidate of the next term, votes for itself and
    /// asks the others. `transfer`: the leader asked for it (`MsgTimeoutNow`), so voters
    /// do not wait out their leader (etcd raft's `campaignTransfer`).
    fn campaign_now(&mut self, r: &mut Replica, transfer: bool) {
        r.term += 1;
        r.vote = Some(self.me);
        self.start_round(r, false);
        self.ctx.observe(CAMPAIGN, (r.range, r.term));
        if r.range == FIRST_RANGE {
            self.ctx.signal(Signal::ElectionStarted { term: r.term });
        }
        if self.config.quorum() == 1 {
            self.become_leader(r);
            return;
        }
        self.ask_votes(r, r.term, transfer, false);
    }

    /// The replica stops following anyone and asks for (pre-)votes with its own counted,
    /// on a fresh randomized countdown.
    fn start_round(&mut self, r: &mut Replica, pre: bool) {
        let votes = self.bit(self.me, r.range);
        r.role = if pre {
            Role::PreCandidate { votes }
        } else {
            Role::Candidate { votes }
        };
        r.fortified = None;
        r.leader = None;
        r.elapsed_ticks = 0;
        r.timeout_ticks = self.draw_timeout_ticks();
    }

    /// Asks the range's other replicas for a (pre-)vote in `term`.
    fn ask_votes(&mut self, r: &Replica, term: u64, transfer: bool, pre: bool) {
        let msg = RangeMsg::Vote {
            range: r.range,
            term,
            last: r.entry.position(),
            transfer,
            pre,
        };
        self.send_to_peers(r.range, msg);
    }

    /// Follows `leader` (if known) in `term`, at least `r`'s current term.
    pub(crate) fn become_follower(&mut self, r: &mut Replica, term: u64, leader: Option<NodeId>) {
        assert!(term >= r.term, "terms never go back");
        if r.leads() {
            self.ctx.observe(LEADER_END, (r.range, r.term));
            self.drop_liveness_requests(r);
            if r.range == FIRST_RANGE {
                self.ctx.stepped_down();
            }
        }
        if r.leads() && self.leader_leases() {
            if r.held.is_some() {
                // A leader lease is its leader's only while it leads.
                self.end_lease(r);
            }
            // Its followers are released once the support it had has run out.
            r.defortify = Some(DeFortify {
                term: r.term,
                after_wall_ns: self.lead_support_until(r),
            });
        }
        if r.fortified
            .is_some_and(|(fortified, _)| Some(fortified) != leader)
        {
            r.fortified = None;
        }
        r.fortifiers = 0;
        r.lease_granted = false;
        r.transfer_to = None;
        if term > r.term {
            r.term = term;
            r.vote = None;
        }
        r.role = Role::Follower;
        r.leader = leader;
        r.pending = None;
        r.heard = 0;
        r.elapsed_ticks = 0;
        r.timeout_ticks = self.draw_timeout_ticks();
    }

    /// Paper 5.2: a candidate with a quorum of votes leads its term. It appends an entry
    /// of its term at once (etcd raft's empty entry on election: here the lease record it
    /// found), which commits every earlier entry with it.
    fn become_leader(&mut self, r: &mut Replica) {
        assert!(
            matches!(r.role, Role::Candidate { .. }),
            "only a candidate wins"
        );
        r.role = Role::Leader;
        r.leader = Some(self.me);
        r.elapsed_ticks = 0;
        r.heard = self.bit(self.me, r.range);
        r.fortifiers = 0;
        r.lease_granted = false;
        self.ctx.observe(RANGE_LEADER, (r.range, r.term));
        if r.range == FIRST_RANGE {
            self.ctx.became_leader(r.term, r.term);
        }
        let lease = r.entry.lease;
        r.first_index_of_term = r.entry.index + 1;
        self.propose(r, lease, false);
    }

    /// A coalesced heartbeat round: for every other store, one message with a beat for
    /// every range this store leads that has a replica there, and its lease count. Every
    /// range it serves (leads and holds the lease of) writes to its resource.
    pub(crate) fn send_heartbeats(&mut self, replicas: &[Replica]) {
        let mut beats: Vec<Vec<Beat>> = vec![Vec::new(); self.stores];
        for r in replicas.iter().filter(|r| r.leads()) {
            if let Some((lease, _)) = r.held {
                self.ctx.observe(RANGE_WRITE, (r.range, lease.seq));
            }
            for peer in placement::replicas(r.range, self.stores, self.config.replication) {
                if peer != self.me {
                    let beat = Beat {
                        range: r.range,
                        term: r.term,
                    };
                    beats[peer.index()].push(beat);
                }
            }
            if r.range == FIRST_RANGE {
                self.gossip_first_range(r.term);
            }
        }
        let counts = self.volatile.known_lease_counts();
        for (to, beats) in beats.into_iter().enumerate() {
            if !beats.is_empty() {
                let counts = counts.clone();
                let msg = StoreMsg::Heartbeats { beats, counts };
                self.ctx.send(NodeId::from(to), msg);
            }
        }
    }

    /// The first range's leader tells the stores without a replica of it.
    fn gossip_first_range(&mut self, term: u64) {
        let (stores, replication) = (self.stores, self.config.replication);
        for store in (0..stores).map(NodeId::from) {
            if !placement::holds(store, FIRST_RANGE, stores, replication) {
                self.ctx.send(store, StoreMsg::FirstRange { term });
            }
        }
    }

    /// A heartbeat of `term` from `from`; returns the term to answer with, and with leader
    /// leases the epoch in which this replica fortifies the sender.
    pub(crate) fn on_beat(
        &mut self,
        r: &mut Replica,
        from: NodeId,
        term: u64,
    ) -> (u64, Option<u64>) {
        if term < r.term {
            return (r.term, None);
        }
        self.hear_leader(r, from, term);
        let fortified = self.fortify(r, from);
        (r.term, fortified)
    }

    /// `from` leads `term` (at least ours): follow it and restart the election countdown.
    fn hear_leader(&mut self, r: &mut Replica, from: NodeId, term: u64) {
        if term > r.term || r.role != Role::Follower || r.leader != Some(from) {
            self.become_follower(r, term, Some(from));
        } else {
            r.elapsed_ticks = 0;
        }
    }

    /// An answer to a heartbeat: a higher term deposes this leader; otherwise `from` is
    /// counted as heard, and as a fortifier if it says so.
    pub(crate) fn on_beat_resp(
        &mut self,
        r: &mut Replica,
        from: NodeId,
        term: u64,
        fortified: Option<u64>,
    ) {
        if term > r.term {
            self.become_follower(r, term, None);
        } else if r.leads() && term == r.term {
            r.heard |= self.bit(from, r.range);
            self.resend_to_transfer_target(r, from);
            if self.leader_leases() {
                self.count_fortifier(r, from, fortified);
            }
        }
    }

    /// A per-range Raft message.
    pub(crate) fn on_range_msg(&mut self, r: &mut Replica, from: NodeId, msg: RangeMsg) {
        match msg {
            RangeMsg::Vote {
                term,
                last,
                transfer,
                pre: false,
                ..
            } => self.on_vote(r, from, term, last, transfer),
            RangeMsg::Vote {
                term,
                last,
                pre: true,
                ..
            } => self.on_pre_vote(r, from, term, last),
            RangeMsg::DeFortify { term, .. } => self.on_defortify(r, from, term),
            RangeMsg::TimeoutNow { term, .. } => {
                // Only from the leader of this replica's term (etcd raft's `MsgTimeoutNow`).
                if term == r.term && !r.leads() && r.leader == Some(from) {
                    self.campaign(r, true);
                }
            }
            RangeMsg::VoteResp {
                term,
                granted,
                pre: false,
                ..
            } => self.on_vote_resp(r, from, term, granted),
            RangeMsg::VoteResp {
                term,
                granted,
                pre: true,
                ..
            } => self.on_pre_vote_resp(r, from, term, granted),
            RangeMsg::Append { term, entry, .. } => self.on_append(r, from, term, entry),
            RangeMsg::AppendResp {
                term,
                accepted,
                index,
                ..
            } => self.on_append_resp(r, from, term, accepted, index),
        }
    }

    /// Paper 5.2 and 5.4.1: one vote per term, for a candidate whose log is at least as
    /// up to date. With CheckQuorum, a replica that heard from its leader within the
    /// election timeout ignores the request (etcd raft's `inLease` in `Step`).
    fn on_vote(
        &mut self,
        r: &mut Replica,
        from: NodeId,
        term: u64,
        last: (u64, u64),
        transfer: bool,
    ) {
        if term > r.term && self.in_lease(r) && !transfer {
            return;
        }
        if term > r.term {
            self.become_follower(r, term, None);
        }
        let free = r.vote.is_none_or(|v| v == from);
        let granted = term == r.term && free && last >= r.entry.position();
        if granted {
            r.vote = Some(from);
            r.elapsed_ticks = 0;
        }
        let answer = RangeMsg::VoteResp {
            range: r.range,
            term: r.term,
            granted,
            pre: false,
        };
        self.send(from, answer);
    }

    /// With CheckQuorum, whether a vote request of a higher term must be ignored: this
    /// replica leads, heard its leader within the election timeout (etcd raft's `inLease`
    /// in `Step`), or supports the leader it fortified. Variant EarlyLease: a follower
    /// votes for whoever asks.
    fn in_lease(&mut self, r: &mut Replica) -> bool {
        if r.fortified.is_some() && !self.fortification_holds(r) {
            // Store liveness withdrew the support already: the replica de-fortifies now,
            // not at its next tick (CockroachDB's supporter calls back its replicas when it
            // withdraws support, `SupportWithdrawnCallback`).
            self.de_fortify(r);
        }
        let in_lease = r.leads()
            || (r.leader.is_some() && r.elapsed_ticks < self.config.election_ticks)
            || self.supporting_fortified_leader(r);
        in_lease && (r.leads() || self.config.variant != MultiRaftVariant::EarlyLease)
    }

    /// A pre-vote for `term` (the asker's next): granted, without any change here, if the
    /// replica would vote for it in that term (a higher term than its own, a log at least
    /// as up to date); ignored like a vote while in lease (etcd raft's `MsgPreVote`).
    fn on_pre_vote(&mut self, r: &mut Replica, from: NodeId, term: u64, last: (u64, u64)) {
        if term > r.term && self.in_lease(r) {
            return;
        }
        let granted = term > r.term && last >= r.entry.position();
        let answer = RangeMsg::VoteResp {
            range: r.range,
            term: if granted { term } else { r.term },
            granted,
            pre: true,
        };
        self.send(from, answer);
    }

    /// A pre-vote answer: a quorum of grants starts the real campaign; a refusal from a
    /// higher term makes the pre-candidate follow that term.
    fn on_pre_vote_resp(&mut self, r: &mut Replica, from: NodeId, term: u64, granted: bool) {
        let Role::PreCandidate { votes } = r.role else {
            return;
        };
        if !granted {
            if term > r.term {
                self.become_follower(r, term, None);
            }
            return;
        }
        if term != r.term + 1 {
            return;
        }
        let votes = votes | self.bit(from, r.range);
        r.role = Role::PreCandidate { votes };
        if votes.count_ones() as usize >= self.config.quorum() {
            self.campaign_now(r, false);
        }
    }

    fn on_vote_resp(&mut self, r: &mut Replica, from: NodeId, term: u64, granted: bool) {
        if term > r.term {
            self.become_follower(r, term, None);
            return;
        }
        let Role::Candidate { votes } = r.role else {
            return;
        };
        if term != r.term || !granted {
            return;
        }
        let votes = votes | self.bit(from, r.range);
        r.role = Role::Candidate { votes };
        if votes.count_ones() as usize >= self.config.quorum() {
            self.become_leader(r);
        }
    }
}
