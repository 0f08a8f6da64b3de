//! The ring node: durable and volatile state, taking part in an election and leaving it,
//! following or becoming the coordinator, heartbeats, and the [`Process`] entry points. The
//! variants' rules are in `chang_roberts.rs` and `all_ids.rs`, the acknowledged transport
//! along the ring in `transport.rs`.

use super::config::{RingConfig, RingInitiators, RingVariant};
use super::messages::{RingMsg, RingTimer};
use super::topology::RingTopology;
use super::transport::Pending;
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

/// The handler context of a ring node.
pub(crate) type RingCtx<'a> = Ctx<'a, RingMsg, RingTimer>;

/// A coordinator announcement: `coordinator` leads `epoch`, ordered by epoch then id, so
/// that every node settles on the same one when two coexist after a partition.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Announcement {
    pub(crate) epoch: u64,
    pub(crate) coordinator: NodeId,
}

/// What survives a crash: the highest epoch seen (the node's term), and the next sequence
/// number, so that a late acknowledgement of a message sent before the crash never matches
/// a message sent after it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Durable {
    pub(crate) highest_epoch: u64,
    pub(crate) next_seq: u64,
}

/// Everything lost on a crash.
#[derive(Clone, Debug)]
pub(crate) struct Volatile {
    /// The highest announcement accepted; lower ones are stale.
    pub(crate) followed: Option<Announcement>,
    /// The epoch this node leads, while it believes it is the coordinator.
    pub(crate) leading: Option<u64>,
    /// Chang & Roberts' participant flag: taking part in an election under way.
    pub(crate) participant: bool,
    /// Whether this node has put its own candidacy (or its own token) in circulation in the
    /// election under way.
    pub(crate) campaigned: bool,
    /// Candidates (Chang-Roberts) or token initiators (all-ids) already forwarded in this
    /// election: each is forwarded at most once, so the message of a node that died
    /// mid-election stops after one lap instead of circling for ever.
    pub(crate) forwarded: BTreeSet<NodeId>,
    /// The last announcement (Elected or Coordinator) forwarded: a second lap stops here.
    pub(crate) announced: Option<Announcement>,
    /// Successors that did not acknowledge in time, skipped until heard from again or until
    /// the next election.
    pub(crate) skipped: Vec<bool>,
    /// Ring messages sent and not yet acknowledged, oldest first.
    pub(crate) pending: VecDeque<Pending>,
}

impl Volatile {
    fn fresh(members: usize) -> Self {
        Self {
            followed: None,
            leading: None,
            participant: false,
            campaigned: false,
            forwarded: BTreeSet::new(),
            announced: None,
            skipped: vec![false; members],
            pending: VecDeque::new(),
        }
    }
}

/// One ring election member as a pure state machine.
#[derive(Clone, Debug)]
pub struct RingNode {
    pub(crate) id: NodeId,
    pub(crate) members: usize,
    pub(crate) config: RingConfig,
    pub(crate) topology: Arc<RingTopology>,
    pub(crate) durable: Durable,
    pub(crate) volatile: Volatile,
}

impl RingNode {
    /// Member `id` of the ring `topology` (shared by every node of the run).
    pub fn new(id: NodeId, config: &RingConfig, topology: Arc<RingTopology>) -> Self {
        let members = topology.members();
        assert!(id.index() < members, "{id} is not one of {members} members");
        assert!(config.heartbeat_ns > 0, "a zero heartbeat would spin");
        assert!(config.failure_timeout_ns > config.heartbeat_ns);
        assert!(config.ack_timeout_ns > 0);
        // Local clocks are i64 nanoseconds: a longer timer (valid in a scenario, about 292
        // years) is clamped to the longest one the engine can represent; it never fires.
        let clamp = |ns: u64| ns.min(i64::MAX as u64);
        let config = RingConfig {
            heartbeat_ns: clamp(config.heartbeat_ns),
            failure_timeout_ns: clamp(config.failure_timeout_ns),
            ack_timeout_ns: clamp(config.ack_timeout_ns),
            ..config.clone()
        };
        Self {
            id,
            members,
            config,
            topology,
            durable: Durable::default(),
            volatile: Volatile::fresh(members),
        }
    }

    /// The fencing token of this node's coordinatorship of `epoch`.
    pub(crate) fn token(&self, epoch: u64) -> u64 {
        epoch * self.members as u64 + u64::from(self.id.0)
    }

    pub(crate) fn observe_epoch(&mut self, epoch: u64) {
        self.durable.highest_epoch = self.durable.highest_epoch.max(epoch);
    }

    /// How long a participant waits for its election to end before starting another: the
    /// failure timeout, plus four laps' worth of hops (at most two laps, and every hop
    /// either acknowledged or skipped within an ack timeout).
    fn election_wait_ns(&self) -> u64 {
        let laps = (4 * self.members as u64).saturating_mul(self.config.ack_timeout_ns);
        self.config
            .failure_timeout_ns
            .saturating_add(laps)
            .min(i64::MAX as u64)
    }

    /// How long this follower waits for a heartbeat before it suspects the coordinator.
    /// With `initiators: Detector`, one ack timeout more per ring hop from the coordinator
    /// (from the first node of the ring when none is known): its successor detects first,
    /// and its election reaches each next node before that node's own timeout.
    pub(crate) fn detection_delay_ns(&self) -> u64 {
        let base = self.config.failure_timeout_ns;
        match self.config.initiators {
            RingInitiators::All => base,
            RingInitiators::Detector => {
                let hops = match self.volatile.followed.map(|a| a.coordinator) {
                    Some(c) if c != self.id => self.topology.distance(c, self.id) - 1,
                    _ => self.topology.position(self.id),
                };
                let stagger = (hops as u64).saturating_mul(self.config.ack_timeout_ns);
                base.saturating_add(stagger).min(i64::MAX as u64)
            }
        }
    }

    /// Becomes a participant of a new election (Chang & Roberts' "marks itself as a
    /// participant"): a fresh record of what it forwarded, successors probed anew.
    pub(crate) fn join_election(&mut self, ctx: &mut RingCtx<'_>) {
        assert!(!self.volatile.participant);
        self.volatile.participant = true;
        self.volatile.campaigned = false;
        self.volatile.forwarded.clear();
        self.volatile.skipped.fill(false);
        ctx.cancel_timer(RingTimer::Failure);
        ctx.set_timer(RingTimer::Election, self.election_wait_ns());
    }

    /// Leaves the election (it ended, or is given up).
    pub(crate) fn leave_election(&mut self, ctx: &mut RingCtx<'_>) {
        if self.volatile.participant {
            self.volatile.participant = false;
            self.volatile.campaigned = false;
            self.volatile.forwarded.clear();
            ctx.cancel_timer(RingTimer::Election);
        }
    }

    /// Puts this node's own candidacy in circulation, joining the election if needed.
    pub(crate) fn campaign(&mut self, ctx: &mut RingCtx<'_>) {
        if !self.volatile.participant {
            self.join_election(ctx);
        }
        if self.volatile.campaigned {
            return;
        }
        self.volatile.campaigned = true;
        ctx.signal(Signal::ElectionStarted {
            term: self.durable.highest_epoch + 1,
        });
        match self.config.variant {
            RingVariant::ChangRoberts => self.send_candidacy(ctx),
            RingVariant::AllIds => self.send_token(ctx),
        }
    }

    /// Whether an election message carrying `epoch` (the highest epoch seen along its way)
    /// belongs to an election that ended before the announcement this node follows: it was
    /// sent before that announcement was made, and is dropped (still acknowledged) rather
    /// than let it start the election again. An election started by a node that follows the
    /// current announcement carries at least its epoch.
    pub(crate) fn started_before_the_announcement(&self, epoch: u64) -> bool {
        self.volatile.followed.is_some_and(|f| epoch < f.epoch)
    }

    /// Follows (or, for its own id, takes up) `announcement` unless it is stale; returns
    /// whether it was accepted. Ends this node's part in the election under way.
    pub(crate) fn accept(&mut self, ctx: &mut RingCtx<'_>, announcement: Announcement) -> bool {
        if self.volatile.followed.is_some_and(|f| announcement < f) {
            return false;
        }
        self.observe_epoch(announcement.epoch);
        self.leave_election(ctx);
        self.volatile.followed = Some(announcement);
        if announcement.coordinator == self.id {
            if self.volatile.leading != Some(announcement.epoch) {
                ctx.became_leader(announcement.epoch, self.token(announcement.epoch));
                self.volatile.leading = Some(announcement.epoch);
                ctx.cancel_timer(RingTimer::Failure);
                ctx.set_timer(RingTimer::Heartbeat, self.config.heartbeat_ns);
            }
        } else {
            if self.volatile.leading.take().is_some() {
                ctx.stepped_down();
                ctx.cancel_timer(RingTimer::Heartbeat);
            }
            ctx.set_timer(RingTimer::Failure, self.detection_delay_ns());
        }
        true
    }

    /// A heartbeat: the coordinator it follows is alive; a higher announcement is followed
    /// (after a partition heals, the coordinator with the highest epoch, then id, stays).
    fn handle_heartbeat(&mut self, ctx: &mut RingCtx<'_>, from: NodeId, epoch: u64) {
        self.volatile.skipped[from.index()] = false;
        let heard = Announcement {
            epoch,
            coordinator: from,
        };
        match self.volatile.followed {
            Some(followed) if heard == followed => {
                if !self.volatile.participant && self.volatile.leading.is_none() {
                    ctx.set_timer(RingTimer::Failure, self.detection_delay_ns());
                }
            }
            Some(followed) if heard < followed => {}
            None if epoch < self.durable.highest_epoch => {}
            _ => {
                self.accept(ctx, heard);
            }
        }
    }

    fn on_heartbeat_timer(&mut self, ctx: &mut RingCtx<'_>) {
        let Some(epoch) = self.volatile.leading else {
            return;
        };
        for peer in (0..self.members).map(NodeId::from) {
            if peer != self.id {
                ctx.send(peer, RingMsg::Heartbeat { epoch });
            }
        }
        ctx.set_timer(RingTimer::Heartbeat, self.config.heartbeat_ns);
    }

    /// The failure detector fired: the node suspects its coordinator and starts an election.
    fn on_failure_timeout(&mut self, ctx: &mut RingCtx<'_>) {
        if self.volatile.participant || self.volatile.leading.is_some() {
            return;
        }
        ctx.signal(Signal::LeaderSuspected);
        self.campaign(ctx);
    }

    /// The election under way did not end in time (its winner died, say): start anew.
    fn on_election_timeout(&mut self, ctx: &mut RingCtx<'_>) {
        if !self.volatile.participant {
            return;
        }
        ctx.signal(Signal::ElectionRoundFailed {
            term: self.durable.highest_epoch + 1,
        });
        self.leave_election(ctx);
        self.campaign(ctx);
    }
}

impl Process for RingNode {
    type Msg = RingMsg;
    type Timer = RingTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut RingCtx<'_>) {
        let first = self.topology.order()[0] == self.id;
        match self.config.initiators {
            RingInitiators::All => self.campaign(ctx),
            RingInitiators::Detector if first => self.campaign(ctx),
            RingInitiators::Detector => {
                ctx.set_timer(RingTimer::Failure, self.detection_delay_ns());
            }
        }
    }

    fn on_message(&mut self, ctx: &mut RingCtx<'_>, from: NodeId, msg: RingMsg) {
        match msg {
            RingMsg::Ack { seq } => self.handle_ack(ctx, from, seq),
            RingMsg::Heartbeat { epoch } => self.handle_heartbeat(ctx, from, epoch),
            ring => self.receive_ring(ctx, from, ring),
        }
    }

    fn on_timer(&mut self, ctx: &mut RingCtx<'_>, timer: RingTimer) {
        match timer {
            RingTimer::Heartbeat => self.on_heartbeat_timer(ctx),
            RingTimer::Failure => self.on_failure_timeout(ctx),
            RingTimer::Ack => self.on_ack_timeout(ctx),
            RingTimer::Election => self.on_election_timeout(ctx),
        }
    }

    fn on_restart(&mut self, ctx: &mut RingCtx<'_>) {
        // Volatile state is lost; the epoch and the sequence counter are kept. A restarted
        // node does not take over (ring algorithms have no takeover): it listens for the
        // coordinator's heartbeat and suspects only if none comes. Its epoch may be stale,
        // but an election lap collects the highest epoch of every node it passes.
        self.volatile = Volatile::fresh(self.members);
        ctx.set_timer(RingTimer::Failure, self.detection_delay_ns());
    }

    fn term(&self) -> u64 {
        self.durable.highest_epoch
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        self.volatile.leading.map(|epoch| self.token(epoch))
    }

    fn known_leader(&self) -> Option<NodeId> {
        if self.volatile.leading.is_some() {
            return Some(self.id);
        }
        if self.volatile.participant {
            return None;
        }
        self.volatile.followed.map(|a| a.coordinator)
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        let v = &self.volatile;
        let mut fields = vec![
            ("participant", v.participant.to_string()),
            ("highest_epoch", self.durable.highest_epoch.to_string()),
        ];
        if let Some(a) = v.followed {
            fields.push((
                "followed",
                format!("{} in epoch {}", a.coordinator, a.epoch),
            ));
        }
        if let Some(epoch) = v.leading {
            fields.push(("leading_epoch", epoch.to_string()));
        }
        fields.push(("unacknowledged", v.pending.len().to_string()));
        fields
    }
}
