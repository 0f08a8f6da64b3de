//! One range's Raft election on a [`Step`]: ticks, campaigns, votes, heartbeats and
//! CheckQuorum, as etcd raft (CockroachDB's fork in `pkg/raft/raft.go`) runs them per
//! range. Pre-vote is not modeled (docs/algorithms/multi-raft.md says why it cannot change
//! a safety verdict).

use super::config::MultiRaftVariant;
use super::messages::{Beat, RangeMsg, StoreMsg};
use super::placement;
use super::replica::{Replica, Role};
use super::store::{Step, FIRST_RANGE};
use splitbrain_sim::{NodeId, Signal};

impl Step<'_, '_, '_> {
    /// One Raft tick of `r` (etcd raft's `tickElection` / `tickHeartbeat`).
    pub(crate) fn tick(&mut self, r: &mut Replica) {
        r.elapsed_ticks += 1;
        if !r.leads() {
            // A replica supporting the leader it fortified does not campaign
            // (`pkg/raft/raft.go`, `tickElection`); once the support lapses it does at once
            // if its timeout has passed.
            if r.elapsed_ticks >= r.timeout_ticks && !self.supporting_fortified_leader(r) {
                self.campaign(r);
            }
            return;
        }
        // CheckQuorum (`defaultRaftEnableCheckQuorum`): a leader that has not heard from a
        // quorum within an election timeout steps down.
        if r.elapsed_ticks >= self.config.election_ticks {
            if (r.heard.count_ones() as usize) < self.config.quorum() {
                let term = r.term;
                self.become_follower(r, term, None);
                return;
            }
            r.elapsed_ticks = 0;
            r.heard = self.bit(self.me, r.range);
        }
        self.tick_lease(r);
    }

    /// Paper 5.2: a follower that heard nothing for its timeout becomes a candidate of the
    /// next term, votes for itself and asks the others.
    fn campaign(&mut self, r: &mut Replica) {
        r.term += 1;
        r.vote = Some(self.me);
        r.fortified = None;
        r.role = Role::Candidate {
            votes: self.bit(self.me, r.range),
        };
        r.leader = None;
        r.elapsed_ticks = 0;
        r.timeout_ticks = self.draw_timeout_ticks();
        if r.range == FIRST_RANGE {
            self.ctx.signal(Signal::ElectionStarted { term: r.term });
        }
        if self.config.quorum() == 1 {
            self.become_leader(r);
            return;
        }
        let msg = RangeMsg::Vote {
            range: r.range,
            term: r.term,
            last: r.entry.position(),
        };
        self.send_to_peers(r.range, msg);
    }

    /// Follows `leader` (if known) in `term`, at least `r`'s current term.
    pub(crate) fn become_follower(&mut self, r: &mut Replica, term: u64, leader: Option<NodeId>) {
        assert!(term >= r.term, "terms never go back");
        if r.leads() && r.range == FIRST_RANGE {
            self.ctx.stepped_down();
        }
        if r.leads() && self.leader_leases() && r.held.is_some() {
            // A leader lease is its leader's only while it leads.
            self.end_lease(r);
        }
        if r.fortified
            .is_some_and(|(fortified, _)| Some(fortified) != leader)
        {
            r.fortified = None;
        }
        r.fortifiers = 0;
        r.lease_granted = false;
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
        self.ctx.observe("range_leader", (r.range, r.term));
        if r.range == FIRST_RANGE {
            self.ctx.became_leader(r.term, r.term);
        }
        let lease = r.entry.lease;
        self.propose(r, lease, false);
    }

    /// A coalesced heartbeat round: for every other store, one message with a beat for
    /// every range this store leads that has a replica there.
    pub(crate) fn send_heartbeats(&mut self, replicas: &[Replica]) {
        let mut beats: Vec<Vec<Beat>> = vec![Vec::new(); self.stores];
        for r in replicas.iter().filter(|r| r.leads()) {
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
        for (to, beats) in beats.into_iter().enumerate() {
            if !beats.is_empty() {
                self.ctx
                    .send(NodeId::from(to), StoreMsg::Heartbeats { beats });
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
            if self.leader_leases() {
                self.count_fortifier(r, from, fortified);
            }
        }
    }

    /// A per-range Raft message.
    pub(crate) fn on_range_msg(&mut self, r: &mut Replica, from: NodeId, msg: RangeMsg) {
        match msg {
            RangeMsg::Vote { term, last, .. } => self.on_vote(r, from, term, last),
            RangeMsg::VoteResp { term, granted, .. } => self.on_vote_resp(r, from, term, granted),
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
    fn on_vote(&mut self, r: &mut Replica, from: NodeId, term: u64, last: (u64, u64)) {
        let in_lease = r.leads()
            || (r.leader.is_some() && r.elapsed_ticks < self.config.election_ticks)
            || self.supporting_fortified_leader(r);
        // Variant EarlyLease: a follower votes whoever asks, its leader's lease or not.
        let in_lease =
            in_lease && (r.leads() || self.config.variant != MultiRaftVariant::EarlyLease);
        if term > r.term && in_lease {
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
        };
        self.send(from, answer);
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
