//! The Bully node: durable and volatile state, the role transitions (`become_follower`,
//! `start_election`, `become_coordinator`) and the [`Process`] entry points, which dispatch
//! to `election.rs` (asking and answering) and `coordinator.rs` (announcements, heartbeats).

use super::config::BullyConfig;
use super::messages::{BullyMsg, BullyTimer};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};

/// The handler context of a Bully node.
pub(crate) type BullyCtx<'a> = Ctx<'a, BullyMsg, BullyTimer>;

/// What a node is doing (Garcia-Molina 1982 calls these states Normal, Election and
/// Reorganization; Coulouris 15.3.1 describes the same steps with the two timeouts).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Follows a coordinator (or, after a restart, listens for one); its failure detector
    /// is armed.
    Follower,
    /// Has sent ELECTION to the higher ids and waits `answer_timeout` for an OK.
    Candidate,
    /// Got an OK and waits `coordinator_timeout` for the COORDINATOR message.
    AwaitingCoordinator,
    /// Won and leads; sends heartbeats.
    Coordinator,
}

/// A coordinator announcement: `coordinator` leads `epoch`. Announcements are ordered by
/// epoch, then by id, so that every node settles on the same one when two coexist (after a
/// partition heals, both sides may have announced the same epoch).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Announcement {
    pub(crate) epoch: u64,
    pub(crate) coordinator: NodeId,
}

/// What survives a crash: the highest epoch seen, so that the epoch (the node's term) never
/// goes backwards and a restarted node never announces an epoch it has announced before.
#[derive(Clone, Debug, Default)]
pub(crate) struct Durable {
    pub(crate) highest_epoch: u64,
}

/// Everything lost on a crash.
#[derive(Clone, Debug)]
pub(crate) struct Volatile {
    pub(crate) role: Role,
    /// The highest announcement this node has accepted or heard from a lower id; announcements
    /// below it are stale. `None` after a restart, until one arrives.
    pub(crate) followed: Option<Announcement>,
    /// The epoch this node leads, while it believes it is the coordinator. It stays set
    /// while a coordinator runs an election of its own, until an OK or a higher
    /// announcement tells it that someone else takes over.
    pub(crate) leading: Option<u64>,
}

impl Volatile {
    fn fresh() -> Self {
        Self {
            role: Role::Follower,
            followed: None,
            leading: None,
        }
    }
}

/// One Bully election member as a pure state machine. Priority is the node id: the highest
/// live id wins (Garcia-Molina 1982).
#[derive(Clone, Debug)]
pub struct BullyNode {
    pub(crate) id: NodeId,
    pub(crate) members: usize,
    pub(crate) config: BullyConfig,
    pub(crate) durable: Durable,
    pub(crate) volatile: Volatile,
}

impl BullyNode {
    /// Member `id` of a cluster of `members`.
    pub fn new(id: NodeId, members: usize, config: &BullyConfig) -> Self {
        assert!(id.index() < members, "{id} is not one of {members} members");
        assert!(config.heartbeat_ns > 0, "a zero heartbeat would spin");
        assert!(config.failure_timeout_ns > config.heartbeat_ns);
        assert!(config.answer_timeout_ns > 0);
        assert!(config.coordinator_timeout_ns > config.answer_timeout_ns);
        // Local clocks are i64 nanoseconds: a longer timer (valid in a scenario, about 292
        // years) is clamped to the longest one the engine can represent; it never fires.
        let clamp = |ns: u64| ns.min(i64::MAX as u64);
        let config = BullyConfig {
            heartbeat_ns: clamp(config.heartbeat_ns),
            failure_timeout_ns: clamp(config.failure_timeout_ns),
            answer_timeout_ns: clamp(config.answer_timeout_ns),
            coordinator_timeout_ns: clamp(config.coordinator_timeout_ns),
        };
        Self {
            id,
            members,
            config,
            durable: Durable::default(),
            volatile: Volatile::fresh(),
        }
    }

    #[cfg(test)]
    pub(crate) fn role(&self) -> Role {
        self.volatile.role
    }

    /// The fencing token of this node's coordinatorship of `epoch`: unique per (epoch,
    /// coordinator), and higher for a higher epoch whoever the coordinator is.
    pub(crate) fn token(&self, epoch: u64) -> u64 {
        epoch * self.members as u64 + u64::from(self.id.0)
    }

    /// The ids above this one: the only nodes an ELECTION goes to (Garcia-Molina 1982).
    pub(crate) fn higher_ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (self.id.index() + 1..self.members).map(NodeId::from)
    }

    /// The ids below this one: the receivers of the COORDINATOR announcement.
    pub(crate) fn lower_ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.id.index()).map(NodeId::from)
    }

    /// Every peer, in id order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.members)
            .map(NodeId::from)
            .filter(move |peer| *peer != self.id)
    }

    /// Every message carries an epoch; the highest one seen is kept, durably.
    pub(crate) fn observe_epoch(&mut self, epoch: u64) {
        self.durable.highest_epoch = self.durable.highest_epoch.max(epoch);
    }

    /// Stops believing it leads, if it did (a higher node took over).
    fn stop_leading(&mut self, ctx: &mut BullyCtx<'_>) {
        if self.volatile.leading.take().is_some() {
            ctx.stepped_down();
            ctx.cancel_timer(BullyTimer::Heartbeat);
        }
    }

    /// Follows `announcement`: any election of ours is abandoned, a coordinator steps down,
    /// and the failure detector is (re)armed.
    pub(crate) fn become_follower(&mut self, ctx: &mut BullyCtx<'_>, announcement: Announcement) {
        assert!(
            announcement.coordinator > self.id,
            "bully follows only higher ids"
        );
        self.stop_leading(ctx);
        match self.volatile.role {
            Role::Candidate => ctx.cancel_timer(BullyTimer::Answer),
            Role::AwaitingCoordinator => ctx.cancel_timer(BullyTimer::Coordinator),
            Role::Follower | Role::Coordinator => {}
        }
        self.volatile.role = Role::Follower;
        self.volatile.followed = Some(announcement);
        ctx.set_timer(BullyTimer::Failure, self.config.failure_timeout_ns);
    }

    /// Coulouris 15.3.1: a process begins an election by sending ELECTION to every process
    /// with a higher id; with none above it, it is the highest and wins at once. A
    /// coordinator that starts one keeps leading until someone higher answers.
    pub(crate) fn start_election(&mut self, ctx: &mut BullyCtx<'_>) {
        ctx.signal(Signal::ElectionStarted {
            term: self.durable.highest_epoch + 1,
        });
        match self.volatile.role {
            Role::Follower => ctx.cancel_timer(BullyTimer::Failure),
            Role::AwaitingCoordinator => ctx.cancel_timer(BullyTimer::Coordinator),
            Role::Candidate | Role::Coordinator => {}
        }
        self.volatile.role = Role::Candidate;
        if self.id.index() + 1 == self.members {
            self.become_coordinator(ctx);
            return;
        }
        let epoch = self.durable.highest_epoch;
        for higher in self.higher_ids() {
            ctx.send(higher, BullyMsg::Election { epoch });
        }
        ctx.set_timer(BullyTimer::Answer, self.config.answer_timeout_ns);
    }

    /// Coulouris 15.3.1: a candidate that got no answer within `T` is the highest live
    /// process: it sends COORDINATOR to every lower id. The announced epoch is one above the
    /// highest seen; the COORDINATOR messages go out before the claim, so the engine counts
    /// them in this election.
    pub(crate) fn become_coordinator(&mut self, ctx: &mut BullyCtx<'_>) {
        assert_eq!(self.volatile.role, Role::Candidate, "only a candidate wins");
        let epoch = self.durable.highest_epoch + 1;
        self.durable.highest_epoch = epoch;
        self.volatile.role = Role::Coordinator;
        self.volatile.followed = Some(Announcement {
            epoch,
            coordinator: self.id,
        });
        for lower in self.lower_ids() {
            ctx.send(lower, BullyMsg::Coordinator { epoch });
        }
        ctx.became_leader(epoch, self.token(epoch));
        self.volatile.leading = Some(epoch);
        ctx.set_timer(BullyTimer::Heartbeat, self.config.heartbeat_ns);
    }
}

impl Process for BullyNode {
    type Msg = BullyMsg;
    type Timer = BullyTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut BullyCtx<'_>) {
        // Garcia-Molina 1982: a node that comes up holds an election. At the start of the
        // run every epoch is 0, so nobody can have missed an announcement.
        self.start_election(ctx);
    }

    fn on_message(&mut self, ctx: &mut BullyCtx<'_>, from: NodeId, msg: BullyMsg) {
        match msg {
            BullyMsg::Election { epoch } => self.handle_election(ctx, from, epoch),
            BullyMsg::Ok { epoch } => self.handle_ok(ctx, from, epoch),
            BullyMsg::Coordinator { epoch } | BullyMsg::Heartbeat { epoch } => {
                self.handle_announcement(ctx, from, epoch)
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut BullyCtx<'_>, timer: BullyTimer) {
        match timer {
            BullyTimer::Heartbeat => self.on_heartbeat_timer(ctx),
            BullyTimer::Failure => self.on_failure_timeout(ctx),
            BullyTimer::Answer => self.on_answer_timeout(ctx),
            BullyTimer::Coordinator => self.on_coordinator_timeout(ctx),
        }
    }

    fn on_restart(&mut self, ctx: &mut BullyCtx<'_>) {
        // Volatile state is lost, the highest epoch is kept. The node does not announce
        // itself at once: its epoch may be stale (others may have elected coordinators while
        // it was down), and highest + 1 could then repeat an epoch already announced. It
        // listens first: the first heartbeat (or ELECTION) brings the current epoch, and a
        // heartbeat from a lower coordinator makes it take over (coordinator.rs). If nothing
        // arrives within the failure timeout, it suspects and elects like anyone else.
        self.volatile = Volatile::fresh();
        ctx.set_timer(BullyTimer::Failure, self.config.failure_timeout_ns);
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
        match self.volatile.role {
            Role::Follower => self
                .volatile
                .followed
                .map(|a| a.coordinator)
                .filter(|c| *c > self.id),
            _ => None,
        }
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        let v = &self.volatile;
        let mut fields = vec![
            ("role", format!("{:?}", v.role)),
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
        fields
    }
}
