//! The proposal workload and log replication (paper §5.3), present only with
//! `propose_every`: the leader appends one client entry per interval, sends it, and writes
//! it to its disk; followers check, copy, write and answer. Commitment and state machines
//! are not modeled: what matters to elections is that logs grow and that every append is an
//! fsync on the leader and on each follower.
//!
//! The leader sends before it writes, as etcd's leader does (server/etcdserver/raft.go, in 3.4
//! etcdserver/raft.go, `raftNode.start`: `r.transport.Send(...)` of the leader's messages, then
//! `r.storage.Save`; thesis §10.2.1): its own fsync delays only what it sends afterwards,
//! heartbeats included. A follower answers after its write (paper figure 2).

use super::log::LogPosition;
use super::messages::{RaftMsg, RaftTimer};
use super::node::{DurableWrite, RaftCtx, RaftNode, Role};
use splitbrain_sim::NodeId;

impl RaftNode {
    /// The leader takes a client's proposal: one entry of its term at the end of its log,
    /// sent to every peer, then written to disk. A leader handing over (thesis §3.10)
    /// takes no proposals.
    pub(crate) fn on_propose(&mut self, ctx: &mut RaftCtx<'_>) {
        let Some(every_ns) = self.config.propose_every_ns else {
            return;
        };
        if self.volatile.role != Role::Leader {
            return;
        }
        ctx.set_timer(RaftTimer::Propose, every_ns);
        if self.volatile.transfer_target.is_some() {
            return;
        }
        self.append_own_entry(ctx);
    }

    /// The leader appends one entry of its term, sends it to every peer it is replicating
    /// to, writes it to disk, and returns its index.
    pub(crate) fn append_own_entry(&mut self, ctx: &mut RaftCtx<'_>) -> u64 {
        self.durable.log.append(self.durable.current_term, 1);
        for index in 0..self.members {
            let peer = NodeId::from(index);
            if peer != self.id && !self.volatile.peers[index].probing {
                self.send_append(ctx, peer);
            }
        }
        self.persist(ctx, DurableWrite::Log);
        if self.embedded {
            self.advance_commit();
        }
        self.durable.log.last_index()
    }

    /// An embedding service proposes one entry (etcd's `raftNode.Propose`): appended and
    /// replicated at once on the leader; `None` on any other node or during a leadership
    /// transfer (the caller forwards it or fails it). Its index commits when
    /// [`RaftNode::commit_index`] reaches it with the same term still there.
    pub fn propose(&mut self, ctx: &mut RaftCtx<'_>) -> Option<u64> {
        let serving = self.volatile.role == Role::Leader && self.volatile.transfer_target.is_none();
        serving.then(|| self.append_own_entry(ctx))
    }

    /// Paper §5.3 and §5.4.2: the leader's commit index moves to the highest index stored on
    /// a majority (itself included) whose entry is of the current term.
    pub(crate) fn advance_commit(&mut self) {
        if self.volatile.role != Role::Leader {
            return;
        }
        let matched: Vec<u64> = (0..self.members)
            .map(|index| match index == self.id.index() {
                true => self.durable.log.last_index(),
                false => self.volatile.peers[index].match_index,
            })
            .collect();
        let candidate = majority_index(matched, self.quorum());
        let current = self.durable.log.term_at(candidate) == Some(self.durable.current_term);
        if candidate > self.commit_index && current {
            self.commit_index = candidate;
        }
    }

    /// A follower learns the leader's commit index (paper figure 2: `commitIndex =
    /// min(leaderCommit, index of last new entry)`), from a message of `term` that matched
    /// its log up to `matched`. Ignored unless embedded, and from a stale term.
    pub(crate) fn learn_commit(&mut self, term: u64, commit: u64, matched: u64) {
        if !self.embedded || term != self.durable.current_term || self.is_leader() {
            return;
        }
        let known = commit.min(matched).min(self.durable.log.last_index());
        self.commit_index = self.commit_index.max(known);
    }

    /// Embedded only: a heartbeat answer shows `peer`'s log behind the leader's while no
    /// probe is out: probe from just past its last entry, as etcd's leader does on a
    /// `MsgHeartbeatResp` whose sender lags (`pr.Match < r.raftLog.lastIndex()`).
    pub(crate) fn catch_up(&mut self, ctx: &mut RaftCtx<'_>, peer: NodeId, position: LogPosition) {
        let last = self.durable.log.last_index();
        let progress = self.volatile.peers[peer.index()];
        if self.volatile.role != Role::Leader || progress.probing || progress.match_index >= last {
            return;
        }
        if position == self.log_position() {
            // Same last entry, same term: the logs match (paper §5.3, Log Matching).
            let progress = &mut self.volatile.peers[peer.index()];
            progress.match_index = last;
            progress.next_index = last.saturating_add(1);
            self.advance_commit();
            return;
        }
        let progress = &mut self.volatile.peers[peer.index()];
        progress.next_index = position
            .last_index
            .saturating_add(1)
            .min(progress.next_index)
            .max(progress.match_index.saturating_add(1));
        progress.probing = true;
        self.send_append(ctx, peer);
    }

    /// Sends `peer` the entries from its next index to the end of that run of the log, if
    /// it is missing any. While replicating, the next index moves past them at once (etcd's
    /// `StateReplicate`: a lost message shows as a refusal of the next one); while probing
    /// after a refusal it stays, and one probe is resent per heartbeat answer until one is
    /// accepted (etcd's `StateProbe`).
    pub(crate) fn send_append(&mut self, ctx: &mut RaftCtx<'_>, peer: NodeId) {
        let progress = self.volatile.peers[peer.index()];
        let next = progress.next_index;
        let Some((entry_term, entries)) = self.durable.log.run_from(next) else {
            return;
        };
        let prev_log_index = next - 1;
        let prev_log_term = self
            .durable
            .log
            .term_at(prev_log_index)
            .expect("within the log");
        if !progress.probing {
            self.volatile.peers[peer.index()].next_index = next.saturating_add(entries);
        }
        let term = self.durable.current_term;
        let commit = self.commit_index;
        ctx.send(
            peer,
            RaftMsg::Append {
                term,
                prev_log_index,
                prev_log_term,
                entry_term,
                entries,
                commit,
            },
        );
    }

    /// Paper §5.3, the receiver: a stale leader is told the term; otherwise the sender is
    /// followed as for a heartbeat, and its entries are copied if the log matches at the
    /// previous entry, written to disk, and only then acknowledged.
    pub(crate) fn handle_append(&mut self, ctx: &mut RaftCtx<'_>, from: NodeId, msg: AppendArgs) {
        let stale = msg.term < self.durable.current_term;
        if !stale && !self.follow(ctx, from, msg.term) {
            return;
        }
        let matches = self.durable.log.term_at(msg.prev_log_index) == Some(msg.prev_log_term);
        if stale || !matches {
            let refusal = RaftMsg::AppendResp {
                term: self.durable.current_term,
                success: false,
                index: msg.prev_log_index,
                last_log_index: self.durable.log.last_index(),
            };
            ctx.send(from, refusal);
            return;
        }
        let log = &mut self.durable.log;
        if log.put_after(msg.prev_log_index, msg.entry_term, msg.entries) {
            self.persist(ctx, DurableWrite::Log);
        }
        let matched = msg.prev_log_index.saturating_add(msg.entries);
        let answer = RaftMsg::AppendResp {
            term: msg.term,
            success: true,
            index: matched,
            last_log_index: self.durable.log.last_index(),
        };
        ctx.send(from, answer);
        self.learn_commit(msg.term, msg.commit, matched);
    }

    /// The leader reads a follower's answer: a later term deposes it; a success raises what
    /// it knows matches; a refusal (a lost or reordered message, or a conflicting log)
    /// sends again from where the follower's log may match.
    pub(crate) fn handle_append_resp(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        from: NodeId,
        answer: AppendAnswer,
    ) {
        if answer.term > self.durable.current_term {
            // Paper §5.1: a leader that learns of a later term steps down.
            self.become_follower(ctx, answer.term, None);
            return;
        }
        if self.volatile.role != Role::Leader || answer.term != self.durable.current_term {
            return;
        }
        let local_now = ctx.monotonic_now();
        let progress = &mut self.volatile.peers[from.index()];
        progress.heard_this_round = true;
        progress.last_response_local = Some(local_now);
        if answer.success {
            progress.match_index = progress.match_index.max(answer.index);
            progress.next_index = progress.next_index.max(answer.index.saturating_add(1));
            progress.probing = false;
            if self.embedded {
                self.advance_commit();
            }
            return;
        }
        // A refusal older than what the follower has since matched, or than the probe
        // outstanding, says nothing new (etcd `Progress.MaybeDecrTo`).
        let stale = answer.index < progress.match_index
            || (progress.probing && answer.index.saturating_add(1) != progress.next_index);
        if stale {
            return;
        }
        // Paper §5.3: back off, at once to just past the follower's last entry when that is
        // shorter, never below what is known to match; then probe one message at a time.
        let retry = answer.index.min(answer.last_log_index.saturating_add(1));
        progress.next_index = retry.max(progress.match_index.saturating_add(1));
        progress.probing = true;
        self.send_append(ctx, from);
    }

    /// A heartbeat answer from a follower being probed: the probe may have been lost, so it
    /// goes again (etcd: `MsgHeartbeatResp` resumes a paused probe).
    pub(crate) fn resume_probe(&mut self, ctx: &mut RaftCtx<'_>, from: NodeId) {
        if self.volatile.peers[from.index()].probing {
            self.send_append(ctx, from);
        }
    }
}

/// The fields of a [`RaftMsg::Append`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct AppendArgs {
    pub(crate) term: u64,
    pub(crate) prev_log_index: u64,
    pub(crate) prev_log_term: u64,
    pub(crate) entry_term: u64,
    pub(crate) entries: u64,
    pub(crate) commit: u64,
}

/// The fields of a [`RaftMsg::AppendResp`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct AppendAnswer {
    pub(crate) term: u64,
    pub(crate) success: bool,
    pub(crate) index: u64,
    pub(crate) last_log_index: u64,
}

/// The highest index that at least `quorum` of the `matched` indexes reach (one per member,
/// the leader's own last index among them): the `quorum`-th largest.
pub(crate) fn majority_index(mut matched: Vec<u64>, quorum: usize) -> u64 {
    assert!(
        (1..=matched.len()).contains(&quorum),
        "a quorum of the members"
    );
    matched.sort_unstable_by(|a, b| b.cmp(a));
    matched[quorum - 1]
}

#[cfg(test)]
mod tests {
    use super::majority_index;
    use splitbrain_sim::SimRng;

    /// The dumb oracle: the largest n, counting down, that `quorum` members have reached.
    fn oracle(matched: &[u64], quorum: usize) -> u64 {
        let top = matched.iter().copied().max().unwrap_or(0);
        (0..=top)
            .rev()
            .find(|n| matched.iter().filter(|m| *m >= n).count() >= quorum)
            .unwrap_or(0)
    }

    #[test]
    fn the_majority_index_agrees_with_counting_members_down_from_the_top() {
        let mut rng = SimRng::stream(2026, 79);
        for _ in 0..20_000 {
            let members = 1 + rng.below(7) as usize;
            let matched: Vec<u64> = (0..members).map(|_| rng.below(6)).collect();
            let quorum = members / 2 + 1;
            assert_eq!(
                majority_index(matched.clone(), quorum),
                oracle(&matched, quorum),
                "{matched:?}"
            );
        }
    }
}
