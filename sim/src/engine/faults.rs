//! Applying faults: resolving targets when the fault fires, cutting the network, and undoing
//! each fault at its `heal_after`.

use super::{EventData, Sim, Status};
use crate::failover::Strike;
use crate::fault::{FaultAction, PartitionShape, Target};
use crate::ids::NodeId;
use crate::network::{Cut, UNCUT};
use crate::process::Process;
use crate::report::FaultRecord;
use crate::time::{format_duration, format_signed_duration, Nanos};
use crate::trace::EventKind;

impl<'t, P: Process> Sim<'t, P> {
    pub(super) fn apply_fault(&mut self, index: usize) {
        let spec = self.config.faults[index].clone();
        // Keyed by the fault as written, never by when its trigger made it fire.
        let key = match &spec.after {
            None => format!("{:?}", spec.action),
            Some(trigger) => format!("{:?} after {trigger:?}", spec.action),
        };
        let stream = crate::rng::StreamId::fault(spec.at_ns, &key);
        self.fault_rng = crate::rng::SimRng::stream(self.config.seed, stream);
        let leader = self.leadership.leader();
        let leader_term = leader.and_then(|l| self.leadership.term_of(l));
        let nodes = self.fault_nodes_for(&spec.action);
        let far_end = self.far_end_of_link(&spec.action);
        let description =
            self.describe(&spec.action, &nodes, &far_end, leader) + &self.fired_trigger_note(index);
        self.record_of_fault[index] = self.fault_records.len();
        self.fault_records.push(FaultRecord {
            at_ns: self.now,
            kind: spec.action.kind_name().to_string(),
            description: description.clone(),
            nodes: nodes.clone(),
            healed_at_ns: None,
            skipped: skipped(&spec.action, &nodes),
            safety_violations: 0,
        });
        // A crash heals by restarting only the nodes it took down: a node already down (a
        // crash for good among them) stays down.
        let heals: Vec<NodeId> = match spec.action {
            FaultAction::Crash(_) => nodes
                .iter()
                .copied()
                .filter(|n| self.nodes[n.index()].status != Status::Crashed)
                .collect(),
            _ => nodes.clone(),
        };
        self.do_fault(index, &spec.action, &nodes);
        if let Some(until) = self.disturbance_ends_ns(&spec.action, spec.heal_after_ns) {
            self.disturbed_until(until);
        }
        if let (Some(l), Some(term)) = (leader, leader_term)
            && self.strikes_leader(&spec.action, &nodes, l)
        {
            let closed_before = self.failovers.done.len();
            self.failover_faults.push(self.record_of_fault[index]);
            self.failovers.open(Strike {
                cause: format!("{} of leader {l}", spec.action.kind_name()),
                fault_kind: spec.action.kind_name(),
                at_ns: self.now,
                leader: l,
                term,
                heals_at_ns: self.heals_at(&spec.action, spec.heal_after_ns),
                last_write_before_ns: self.resource.last_accepted_ns,
            });
            self.tell_closed_failovers(closed_before);
            self.tell_failover_opened();
        }
        self.fault_nodes[index] = heals;
        if let Some(after_ns) = spec.heal_after_ns.filter(|_| spec.action.can_heal()) {
            self.pending_heals += 1;
            self.push_event(
                self.now.saturating_add(after_ns),
                EventData::HealFault(index),
            );
        }
        if let Some(d) = spec.action.built_in_duration()
            && matches!(
                spec.action,
                FaultAction::Pause(..) | FaultAction::Suspend(..)
            )
        {
            // A node already frozen for longer stays frozen until then: that is when
            // this freeze is over too.
            let resumes =
                self.fault_nodes[index]
                    .iter()
                    .filter_map(|n| match self.nodes[n.index()].status {
                        Status::Paused { until_ns } => Some(until_ns),
                        _ => None,
                    });
            let healed = resumes.max().unwrap_or(self.now.saturating_add(d));
            self.record_mut(index).healed_at_ns = Some(healed);
        }
        self.faults_fired += 1;
        self.trace_global(EventKind::Fault { description });
        self.check_quiet();
    }

    /// The nodes a fault acts on: its first target resolved now (for a one-way cut the
    /// senders, for a cut link one end; the shape resolves any second target itself).
    fn fault_nodes_for(&mut self, action: &FaultAction) -> Vec<NodeId> {
        match action.targets().first() {
            Some(target) => self.resolve(target),
            None => Vec::new(),
        }
    }

    fn do_fault(&mut self, index: usize, action: &FaultAction, nodes: &[NodeId]) {
        match action {
            FaultAction::Crash(_) => nodes.iter().for_each(|n| self.crash(*n)),
            FaultAction::Restart(_) => nodes.iter().for_each(|n| self.restart(*n)),
            FaultAction::Pause(_, d) => nodes.iter().for_each(|n| self.pause(*n, *d)),
            FaultAction::Suspend(_, d) => nodes.iter().for_each(|n| self.suspend(*n, *d)),
            FaultAction::Stall(_, d) => nodes.iter().for_each(|n| self.arm_stall(*n, *d, index)),
            FaultAction::Partition(shape) => {
                if let Some(cut) = self.cut_for(shape, nodes) {
                    self.network.add_cut(index, cut);
                    self.recheck_stream_cuts();
                    self.failover_reach_changed();
                }
            }
            FaultAction::Heal => {
                self.network.heal_all();
                self.recheck_stream_cuts();
            }
            FaultAction::ClockJump(_, delta) => {
                for node in nodes {
                    let before = self.nodes[node.index()].clocks.wall_reading(self.now);
                    // Wall-clock timers move with the step; the others stay (re-keyed in place).
                    self.nodes[node.index()].clocks.step_wall(self.now, *delta);
                    self.rekey_timers(*node);
                    if *delta < 0 {
                        self.await_catch_up(*node, before);
                    }
                }
            }
            FaultAction::ClockDrift(_, ppm) => {
                for node in nodes {
                    let old = self.nodes[node.index()].clocks.drift_ppm();
                    self.saved_drift_ppm[index].push((*node, old));
                    self.nodes[node.index()].clocks.set_drift(self.now, *ppm);
                    self.rekey_timers(*node);
                }
            }
            FaultAction::Resign(_) => nodes.iter().for_each(|n| self.resign(*n)),
            FaultAction::ConfChange(_, change) => {
                nodes.iter().for_each(|n| self.conf_change(*n, *change))
            }
            FaultAction::Loss(ppm) => self.network.set_loss_ppm(*ppm),
            FaultAction::Duplicate(ppm) => self.network.set_duplicate_ppm(*ppm),
            FaultAction::SlowDisk(_, d) => {
                // An fsync is slow if it begins before the heal (strace's `delay_enter`
                // delays a syscall as it enters): one queued behind the slow ones and begun
                // after the heal runs at the disk's own speed.
                let heal_after = self.config.faults[index].heal_after_ns;
                let until_ns = heal_after.map_or(Nanos::MAX, |h| self.now.saturating_add(h));
                for node in nodes {
                    let disk = &mut self.nodes[node.index()].disk;
                    disk.slow_ns = Some(*d);
                    disk.slow_until_ns = until_ns;
                }
            }
        }
    }

    /// A backward wall-clock step has a lasting effect: until `node`'s wall clock reads again
    /// what it read before the step (`local_before`), whatever the node times by the time of
    /// day (a database row's expiry, a Redis key's, every timer of a node that times with its
    /// wall clock) runs late by up to the step. The liveness watch waits for that moment like
    /// for a heal, so a correct algorithm is not blamed for the time the clock takes to catch
    /// up (docs/engine.md, "Checker and measurements").
    fn await_catch_up(&mut self, node: NodeId, local_before: crate::time::LocalNanos) {
        let clock = self.nodes[node.index()].clocks.wall();
        if clock.stopped_at(self.now) {
            return;
        }
        let caught_up_ns = clock.true_when(local_before, self.now);
        if caught_up_ns > self.now {
            self.pending_heals += 1;
            self.push_event(caught_up_ns, EventData::ClockCaughtUp { node });
        }
    }

    /// `node`'s clock reads again what it read before a backward jump.
    pub(super) fn on_clock_caught_up(&mut self, node: NodeId) {
        self.pending_heals -= 1;
        self.trace_node(node, EventKind::ClockCaughtUp);
        self.check_quiet();
    }

    pub(super) fn heal_fault(&mut self, index: usize) {
        self.pending_heals -= 1;
        self.record_mut(index).healed_at_ns = Some(self.now);
        let nodes = self.fault_nodes[index].clone();
        match &self.config.faults[index].action {
            FaultAction::Crash(_) => nodes.iter().for_each(|n| self.restart(*n)),
            FaultAction::Partition(_) => {
                self.network.remove_cut(index);
                self.recheck_stream_cuts();
            }
            FaultAction::ClockDrift(..) => {
                for (node, ppm) in std::mem::take(&mut self.saved_drift_ppm[index]) {
                    self.nodes[node.index()].clocks.set_drift(self.now, ppm);
                    self.rekey_timers(node);
                }
            }
            FaultAction::Loss(_) => self.network.restore_loss(),
            FaultAction::Duplicate(_) => self.network.restore_duplicate(),
            FaultAction::SlowDisk(..) => {
                for node in &nodes {
                    self.nodes[node.index()].disk.slow_ns = None;
                }
            }
            other => unreachable!("{} cannot heal", other.kind_name()),
        }
        if self.tracing() {
            let description = self.record_mut(index).description.clone();
            self.trace_global(EventKind::Heal { description });
        }
        self.check_quiet();
    }

    /// The processes after the members that are members of the coordination service, live
    /// or crashed (its gateways left out: they are not members of its quorum).
    fn service_members(&self) -> Vec<NodeId> {
        (self.config.members..self.processes.len())
            .map(NodeId::from)
            .filter(|n| !self.processes[n.index()].is_service_gateway())
            .collect()
    }

    /// The live members of the coordination service ([`Sim::service_members`]).
    fn live_service_members(&self) -> Vec<NodeId> {
        self.service_members()
            .into_iter()
            .filter(|n| self.nodes[n.index()].status != Status::Crashed)
            .collect()
    }

    /// The live service members but its leader (all of them while none leads).
    fn service_followers(&self) -> Vec<NodeId> {
        let leader = self.service_leader();
        self.live_service_members()
            .into_iter()
            .filter(|n| Some(*n) != leader)
            .collect()
    }

    /// The service process the election leader's client talks to, if someone leads and
    /// talks to one ([`Process::service_member_used`]).
    fn service_of_leader(&self) -> Option<NodeId> {
        let leader = self.leadership.leader()?;
        let used = self.processes[leader.index()].service_member_used()?;
        (self.config.members..self.processes.len())
            .contains(&used.index())
            .then_some(used)
    }

    /// The live service member that says it leads its service, the one with the highest
    /// term if several do (a deposed leader that has not heard of its successor), the
    /// lowest id among equals. A single-process service leads itself.
    fn service_leader(&self) -> Option<NodeId> {
        let live = self.live_service_members();
        if self.processes.len() - self.config.members == 1 {
            return live.first().copied();
        }
        live.into_iter()
            .filter(|n| self.processes[n.index()].leads_service())
            .max_by_key(|n| (self.processes[n.index()].term(), std::cmp::Reverse(*n)))
    }

    fn live_members(&self) -> Vec<NodeId> {
        (0..self.config.members)
            .map(NodeId::from)
            .filter(|n| self.nodes[n.index()].status != Status::Crashed)
            .collect()
    }

    /// Resolves a target to nodes now.
    fn resolve(&mut self, target: &Target) -> Vec<NodeId> {
        let members = self.config.members;
        match target {
            Target::Leader => self.leadership.leader().into_iter().collect(),
            Target::Follower => {
                let leader = self.leadership.leader();
                let followers: Vec<NodeId> = self
                    .live_members()
                    .into_iter()
                    .filter(|n| Some(*n) != leader)
                    .collect();
                self.pick(&followers, 1)
            }
            Target::Node(i) => vec![NodeId(*i)],
            Target::Random => {
                let live = self.live_members();
                self.pick(&live, 1)
            }
            Target::Minority => {
                let all: Vec<NodeId> = (0..members).map(NodeId::from).collect();
                self.pick(&all, (members - 1) / 2)
            }
            Target::Service => (members..self.processes.len()).map(NodeId::from).collect(),
            Target::ServiceMember(i) => {
                let index = members.saturating_add(*i as usize);
                (index < self.processes.len())
                    .then_some(NodeId::from(index))
                    .into_iter()
                    .collect()
            }
            Target::ServiceLeader => self.service_leader().into_iter().collect(),
            Target::ServiceFollower => {
                let others = self.service_followers();
                self.pick(&others, 1)
            }
            Target::ServiceFollowers => self.service_followers(),
            Target::ServiceQuorum => {
                let all = self.service_members();
                self.pick(&all, all.len() / 2 + 1)
            }
            Target::ServiceOfLeader => self.service_of_leader().into_iter().collect(),
            Target::AllCrashed => (0..members)
                .map(NodeId::from)
                .filter(|n| self.nodes[n.index()].status == Status::Crashed)
                .collect(),
            Target::All => (0..members).map(NodeId::from).collect(),
        }
    }

    /// Draws `count` distinct nodes from `from`, in id order, from the fault stream.
    fn pick(&mut self, from: &[NodeId], count: usize) -> Vec<NodeId> {
        let mut pool = from.to_vec();
        let count = count.min(pool.len());
        for i in 0..count {
            let j = i + self.fault_rng.index(pool.len() - i);
            pool.swap(i, j);
        }
        pool.truncate(count);
        pool.sort();
        pool
    }

    /// The cut a partition shape makes, with its target(s) already resolved to `nodes`.
    fn cut_for(&mut self, shape: &PartitionShape, nodes: &[NodeId]) -> Option<Cut> {
        let count = self.processes.len();
        let members = self.config.members;
        match shape {
            PartitionShape::Groups(groups) => {
                let mut label = vec![groups.len() as u32; count];
                label[members..].fill(UNCUT);
                for (g, group) in groups.iter().enumerate() {
                    for i in group {
                        label[*i as usize] = g as u32;
                    }
                }
                Some(Cut::Groups(label))
            }
            PartitionShape::Isolate(_) => {
                let first = *nodes.first()?;
                let mut label = vec![0; count];
                nodes.iter().for_each(|n| label[n.index()] = 1);
                debug_assert_eq!(label[first.index()], 1);
                Some(Cut::Groups(label))
            }
            PartitionShape::MajorityMinority(_) => {
                let first = *nodes.first()?;
                let size = ((members - 1) / 2).max(1);
                let mut minority: Vec<usize> = nodes.iter().map(|n| n.index()).take(size).collect();
                let mut next = first.index();
                while minority.len() < size {
                    next = (next + 1) % members;
                    if !minority.contains(&next) {
                        minority.push(next);
                    }
                }
                let mut label = vec![0; count];
                minority.iter().for_each(|i| label[*i] = 1);
                Some(Cut::Groups(label))
            }
            PartitionShape::OneWay { to, .. } => {
                let receivers = self.resolve(to);
                let mut from = vec![false; count];
                let mut dest = vec![false; count];
                nodes.iter().for_each(|n| from[n.index()] = true);
                receivers.iter().for_each(|n| dest[n.index()] = true);
                Some(Cut::OneWay { from, to: dest })
            }
            PartitionShape::CutLink(_, other) => {
                let a = *nodes.first()?;
                let b = *self.resolve(other).first()?;
                (a != b).then_some(Cut::Link(a, b))
            }
            PartitionShape::Bridge(_) => {
                let bridge = *nodes.first()?;
                let others: Vec<usize> = (0..members).filter(|i| *i != bridge.index()).collect();
                let half = others.len() / 2;
                let mut label = vec![UNCUT; count];
                for (k, i) in others.iter().enumerate() {
                    label[*i] = u32::from(k >= half);
                }
                Some(Cut::Groups(label))
            }
        }
    }

    /// Whether the fault takes the leader out of action (starting a failover).
    fn strikes_leader(&self, action: &FaultAction, nodes: &[NodeId], leader: NodeId) -> bool {
        match action {
            FaultAction::Crash(_)
            | FaultAction::Pause(..)
            | FaultAction::Suspend(..)
            | FaultAction::Stall(..)
            | FaultAction::Resign(_) => nodes.contains(&leader),
            FaultAction::Partition(_) => {
                let reachable = (0..self.config.members)
                    .map(NodeId::from)
                    .filter(|n| *n != leader && self.network.connected(leader, *n))
                    .count();
                reachable + 1
                    < self
                        .info
                        .min_group_for_progress
                        .max(2)
                        .min(self.config.members)
            }
            _ => false,
        }
    }

    /// Until when `action` may slow an election down, if it may: every fault but crashes,
    /// restarts, partitions, heals and handovers (which change who can elect, not how fast);
    /// for the rest of the run when it does not heal. Liveness windows wait for it
    /// (`windows.rs`).
    fn disturbance_ends_ns(&self, action: &FaultAction, heal_after_ns: Option<u64>) -> Option<u64> {
        let after = |d: u64| Some(self.now.saturating_add(d));
        match action {
            FaultAction::Crash(_)
            | FaultAction::Restart(_)
            | FaultAction::Partition(_)
            | FaultAction::Heal
            | FaultAction::Resign(_) => None,
            FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => {
                after(*d)
            }
            // A clock stepped back lags as long as the step.
            FaultAction::ClockJump(_, delta) => after(delta.unsigned_abs()),
            _ => heal_after_ns.map_or(Some(u64::MAX), after),
        }
    }

    fn heals_at(&self, action: &FaultAction, heal_after_ns: Option<u64>) -> Option<u64> {
        match action {
            FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => {
                Some(self.now.saturating_add(*d))
            }
            FaultAction::Resign(_) => Some(self.now),
            FaultAction::Partition(_) => heal_after_ns.map(|h| self.now.saturating_add(h)),
            _ => None,
        }
    }

    /// For a cut link: the far end as the cut will resolve it (on a copy of the fault's
    /// random stream, so that the cut draws the same); empty for any other fault.
    fn far_end_of_link(&mut self, action: &FaultAction) -> Vec<NodeId> {
        let FaultAction::Partition(PartitionShape::CutLink(_, other)) = action else {
            return Vec::new();
        };
        let saved = self.fault_rng.clone();
        let far = self.resolve(other);
        self.fault_rng = saved;
        far.into_iter().take(1).collect()
    }

    fn describe(
        &self,
        action: &FaultAction,
        nodes: &[NodeId],
        far_end: &[NodeId],
        leader: Option<NodeId>,
    ) -> String {
        let who = |ns: &[NodeId]| {
            let names: Vec<String> = ns
                .iter()
                .map(|n| {
                    if Some(*n) == leader {
                        format!("{n} (leader)")
                    } else if n.index() >= self.config.members {
                        // The processes past the members are the coordination service.
                        self.service_member_name(*n)
                    } else {
                        n.to_string()
                    }
                })
                .collect();
            names.join(", ")
        };
        if skipped(action, nodes) {
            return format!("{} skipped: its target matched no node", action.kind_name());
        }
        match action {
            FaultAction::Crash(_) => format!("crash {}", who(nodes)),
            FaultAction::Restart(_) => format!("restart {}", who(nodes)),
            FaultAction::Pause(_, d) => format!(
                "pause {} for {}{}",
                who(nodes),
                format_duration(*d),
                self.frozen_note(action, nodes)
            ),
            FaultAction::Suspend(_, d) => format!(
                "suspend {} for {}{}",
                who(nodes),
                format_duration(*d),
                self.frozen_note(action, nodes)
            ),
            FaultAction::Stall(_, d) => format!(
                "stall {} for {}{}",
                who(nodes),
                format_duration(*d),
                self.frozen_note(action, nodes)
            ),
            FaultAction::Partition(PartitionShape::CutLink(..)) => format!(
                "partition: cut the link between {} and {}",
                who(nodes),
                who(far_end)
            ),
            FaultAction::Partition(shape) => {
                format!("partition: {}", describe_shape(shape, &who(nodes)))
            }
            FaultAction::Heal => "heal the network".to_string(),
            FaultAction::ClockJump(_, d) => format!(
                "clock of {} jumps {}",
                who(nodes),
                format_signed_duration(*d)
            ),
            FaultAction::ClockDrift(_, ppm) => format!("clock of {} drifts {ppm} ppm", who(nodes)),
            FaultAction::Resign(_) => format!("{} resigns", who(nodes)),
            FaultAction::ConfChange(_, change) => {
                format!("{} is asked to propose: {change}", who(nodes))
            }
            FaultAction::Loss(ppm) => format!("loss {}%", f64::from(*ppm) / 10_000.0),
            FaultAction::Duplicate(ppm) => format!("duplication {}%", f64::from(*ppm) / 10_000.0),
            FaultAction::SlowDisk(_, d) => {
                format!(
                    "disk of {} slows to {} per fsync",
                    who(nodes),
                    format_duration(*d)
                )
            }
        }
    }
}

impl<P: Process> Sim<'_, P> {
    /// How a fault's description names service process `node`: by its name
    /// ([`AlgorithmInfo::service_names`](crate::AlgorithmInfo::service_names): `etcd-1`,
    /// `apiserver-0`), with `(service leader)` when it leads a clustered service. Without
    /// names, `nN (service)` for a single-process service, and a clustered one's members by
    /// their index among the service's processes.
    fn service_member_name(&self, node: NodeId) -> String {
        let index = node.index() - self.config.members;
        let clustered = self.processes.len() - self.config.members > 1;
        let leads = clustered && self.processes[node.index()].leads_service();
        match (self.info.service_names.get(index), leads) {
            (Some(name), true) => format!("{name} (service leader)"),
            (Some(name), false) => name.clone(),
            (None, _) if !clustered => format!("{node} (service)"),
            (None, true) => format!("{node} (service member {index}, its leader)"),
            (None, false) => format!("{node} (service member {index})"),
        }
    }

    /// For a freeze striking a node already frozen (a pause under way, a stall not yet
    /// struck), what happens to the two: a pause keeps the later end, a stall strikes in the
    /// node's first handler after a pause (one longer freeze), a second pending stall
    /// replaces the first.
    fn frozen_note(&self, action: &FaultAction, nodes: &[NodeId]) -> String {
        let stall = matches!(action, FaultAction::Stall(..));
        let frozen: Vec<String> = nodes
            .iter()
            .filter_map(|n| {
                let state = &self.nodes[n.index()];
                let until = match state.status {
                    Status::Paused { until_ns } => Some(format_duration(until_ns)),
                    _ => None,
                };
                match (until, state.stall_next.is_some(), stall) {
                    (Some(t), _, true) => Some(format!(
                        "{n} already frozen until {t}: the stall strikes after, one longer freeze"
                    )),
                    (Some(t), _, false) => Some(format!(
                        "{n} already frozen until {t}: frozen until the later end"
                    )),
                    (None, true, true) => {
                        Some(format!("{n} had a stall pending: this one replaces it"))
                    }
                    (None, true, false) => Some(format!(
                        "{n} has a stall pending: it strikes after this freeze"
                    )),
                    (None, false, _) => None,
                }
            })
            .collect();
        if frozen.is_empty() {
            return String::new();
        }
        format!(" ({})", frozen.join("; "))
    }
}

/// Whether a fault that needs a target found none when it fired (a crash of the leader when
/// nobody leads): it did nothing.
fn skipped(action: &FaultAction, nodes: &[NodeId]) -> bool {
    let needs_nodes = !matches!(
        action,
        FaultAction::Heal
            | FaultAction::Loss(_)
            | FaultAction::Duplicate(_)
            | FaultAction::Partition(PartitionShape::Groups(_))
    );
    needs_nodes && nodes.is_empty()
}

fn describe_shape(shape: &PartitionShape, who: &str) -> String {
    match shape {
        PartitionShape::Groups(groups) => format!("groups {groups:?}"),
        PartitionShape::Isolate(_) => format!("isolate {who}"),
        PartitionShape::MajorityMinority(_) => format!("{who} in a minority"),
        PartitionShape::OneWay { .. } => format!("one-way: messages from {who} lost"),
        PartitionShape::CutLink(..) => format!("cut a link at {who}"),
        PartitionShape::Bridge(_) => format!("two halves bridged by {who}"),
    }
}

impl<P: Process> Sim<'_, P> {
    /// Credits a safety break now to the faults it is attributed to ([`blamed_faults`]).
    #[cold]
    #[inline(never)]
    pub(super) fn attribute_break(&mut self) {
        let mut actions: Vec<Option<&FaultAction>> = vec![None; self.fault_records.len()];
        for (index, &place) in self.record_of_fault.iter().enumerate() {
            if let Some(slot) = actions.get_mut(place) {
                *slot = Some(&self.config.faults[index].action);
            }
        }
        let spans = effect_spans(&self.fault_records, &actions);
        for place in blamed_faults(&spans, self.now) {
            self.fault_records[place].safety_violations += 1;
        }
    }
}

/// When an applied fault's effect began and ended, in true time, for attributing safety
/// breaks: `None` for a fault that did nothing (skipped); an end of `None` while it is still
/// in effect (not healed yet, or never healing).
type EffectSpan = Option<(Nanos, Option<Nanos>)>;

/// The effect span of each applied fault so far (`records` in firing order, `actions` the
/// action of each). A fault ends at its own heal (`healed_at_ns`: restart, heal, resume); a
/// crash also when later `Restart`s brought back every node it crashed; a partition, loss or
/// duplication also at a later `Heal`; a backward clock step when the clock caught up. A
/// restart, heal, resignation or forward clock step is over the instant it fires.
fn effect_spans(records: &[FaultRecord], actions: &[Option<&FaultAction>]) -> Vec<EffectSpan> {
    (0..records.len())
        .map(|place| {
            let record = &records[place];
            let action = actions.get(place).copied().flatten()?;
            if record.skipped {
                return None;
            }
            let ended = ended_by_itself_or_later(place, action, records, actions);
            let end = match (record.healed_at_ns, ended) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            Some((record.at_ns, end))
        })
        .collect()
}

/// The end of fault `place`'s effect that its own record does not give: see
/// [`effect_spans`].
fn ended_by_itself_or_later(
    place: usize,
    action: &FaultAction,
    records: &[FaultRecord],
    actions: &[Option<&FaultAction>],
) -> Option<Nanos> {
    let record = &records[place];
    let later = || {
        records
            .iter()
            .zip(actions)
            .skip(place + 1)
            .filter(|(r, _)| !r.skipped)
    };
    match action {
        FaultAction::Restart(_)
        | FaultAction::Heal
        | FaultAction::Resign(_)
        | FaultAction::ConfChange(..) => Some(record.at_ns),
        FaultAction::ClockJump(..) => Some(
            record
                .at_ns
                .saturating_add(action.clock_catch_up_ns().unwrap_or(0)),
        ),
        FaultAction::Partition(_) | FaultAction::Loss(_) | FaultAction::Duplicate(_) => later()
            .find(|(_, a)| matches!(a, Some(FaultAction::Heal)))
            .map(|(r, _)| r.at_ns),
        FaultAction::Crash(_) => {
            let mut down = record.nodes.clone();
            for (r, a) in later() {
                if matches!(a, Some(FaultAction::Restart(_))) {
                    down.retain(|n| !r.nodes.contains(n));
                    if down.is_empty() {
                        return Some(r.at_ns);
                    }
                }
            }
            None
        }
        _ => None,
    }
}

/// The faults (places in firing order) a safety break at `now` is attributed to: every fault
/// in effect at `now` (begun, not yet ended), and the fault or faults whose effect ended last
/// at or before `now`, unless a fault in effect began after that end. So a break during a
/// fault goes to that fault, a break after it (a stale write arriving after a pause) to the
/// fault that healed last, and a fault in effect throughout (a loss rate, a crash never
/// restarted) shares every break with the fault that struck last.
fn blamed_faults(spans: &[EffectSpan], now: Nanos) -> Vec<usize> {
    let begun = || {
        spans
            .iter()
            .enumerate()
            .filter_map(|(place, span)| span.map(|s| (place, s)))
            .filter(|(_, (at, _))| *at <= now)
    };
    let in_effect: Vec<(usize, Nanos)> = begun()
        .filter(|(_, (_, end))| end.is_none_or(|e| e > now))
        .map(|(place, (at, _))| (place, at))
        .collect();
    let last_end = begun()
        .filter_map(|(_, (_, end))| end)
        .filter(|e| *e <= now)
        .max();
    let mut blamed: Vec<usize> = in_effect.iter().map(|(place, _)| *place).collect();
    if let Some(last) = last_end
        && in_effect.iter().all(|(_, at)| *at <= last)
    {
        blamed.extend(
            begun()
                .filter(|(_, (_, end))| *end == Some(last))
                .map(|(p, _)| p),
        );
        blamed.sort_unstable();
    }
    blamed
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn record(at_s: u64, kind: &str, nodes: &[u32], healed_s: Option<u64>) -> FaultRecord {
        FaultRecord {
            at_ns: at_s * S,
            kind: kind.to_string(),
            description: String::new(),
            nodes: nodes.iter().map(|n| NodeId(*n)).collect(),
            healed_at_ns: healed_s.map(|h| h * S),
            skipped: false,
            safety_violations: 0,
        }
    }

    #[test]
    fn a_break_goes_to_the_faults_in_effect_else_to_the_one_that_healed_last() {
        // A suspend from 5 s to 9 s, a stall from 20 s to 22 s.
        let spans = vec![Some((5 * S, Some(9 * S))), Some((20 * S, Some(22 * S)))];
        assert_eq!(blamed_faults(&spans, 6 * S), [0], "during the suspend");
        assert_eq!(
            blamed_faults(&spans, 12 * S),
            [0],
            "after it, before the stall"
        );
        assert_eq!(blamed_faults(&spans, 21 * S), [1], "during the stall");
        assert_eq!(blamed_faults(&spans, 23 * S), [1], "after the stall");
        assert_eq!(
            blamed_faults(&spans, 4 * S),
            Vec::<usize>::new(),
            "before any"
        );
    }

    #[test]
    fn a_fault_in_effect_throughout_shares_a_break_with_the_last_heal_after_it() {
        // Loss from 0 s on; a stall from 20 s to 22 s; a skipped fault.
        let spans = vec![Some((0, None)), Some((20 * S, Some(22 * S))), None];
        assert_eq!(blamed_faults(&spans, 23 * S), [0, 1]);
        assert_eq!(blamed_faults(&spans, 10 * S), [0]);
    }

    #[test]
    fn a_restart_ends_a_crash_and_a_heal_ends_a_partition() {
        let crash = FaultAction::Crash(Target::Leader);
        let restart = FaultAction::Restart(Target::AllCrashed);
        let partition = FaultAction::Partition(PartitionShape::Isolate(Target::Leader));
        let records = [
            record(10, "crash", &[1, 2], None),
            record(20, "restart", &[1], None),
            record(25, "partition", &[0], None),
            record(30, "restart", &[2], None),
            record(40, "heal", &[], None),
        ];
        let actions = [
            Some(&crash),
            Some(&restart),
            Some(&partition),
            Some(&restart),
            Some(&FaultAction::Heal),
        ];
        let spans = effect_spans(&records, &actions);
        assert_eq!(
            spans[0],
            Some((10 * S, Some(30 * S))),
            "both nodes back at 30 s"
        );
        assert_eq!(
            spans[1],
            Some((20 * S, Some(20 * S))),
            "a restart is an instant"
        );
        assert_eq!(spans[2], Some((25 * S, Some(40 * S))), "healed by the heal");
        assert_eq!(
            blamed_faults(&spans, 45 * S),
            [2, 4],
            "the partition and its heal ended last"
        );
    }
}
