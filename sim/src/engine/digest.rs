//! A digest of a run's state ([`Sim::digest`]): what a systematic search compares to tell a
//! state it has already explored from one it has not.
//!
//! It covers what decides the rest of the run and its verdict: every process's own state
//! ([`Process::digest`]), the engine's view of each process (status, clocks, armed timers,
//! what is held for it, its disk and waiting output, the position of its random stream),
//! every queued event (messages with their contents, heals, resumes), the network (cuts,
//! loss, its random stream), and what the checker remembers (who claimed which term, each
//! process's highest term, the highest fencing token). Times enter relative to now, so a
//! state reached at two different times (a steady state one heartbeat later) is one state.
//! Measurements (counters, failover books) are left out: they decide no verdict.
//!
//! Built only when asked for, at a checkpoint: never per event.

use super::{EventData, Held, Payload, Sim, Status};
use crate::ids::NodeId;
use crate::process::{DurableState, Effect, Message, Process, Signal, TimerKind};
use std::hash::{DefaultHasher, Hash, Hasher};

impl<P: Process> Sim<'_, P> {
    /// A digest of the run's state now. Two runs of one scenario whose digests are equal at
    /// a point go on alike from there (up to hash collisions, and as far as each process's
    /// [`Process::digest`] covers its state). Deterministic: the same run gives the same
    /// digest, whatever the machine.
    ///
    /// ```
    /// use splitbrain_sim::engine::StopAt;
    /// use splitbrain_sim::storm::{storm_config, StormNode};
    /// use splitbrain_sim::Sim;
    ///
    /// let digest_at = |ns| {
    ///     let (config, info) = storm_config(1, 3);
    ///     let mut sim = Sim::new(config, info, vec![StormNode::default(); 3]);
    ///     sim.run_until(StopAt::Time(ns)).unwrap();
    ///     sim.digest()
    /// };
    /// assert_eq!(digest_at(1_000_000), digest_at(1_000_000));
    /// ```
    pub fn digest(&self) -> u64 {
        self.digest_named(Naming::Exact)
            .expect("an exact digest needs no renaming")
    }

    /// The digest of the state under `naming`: `None` if a part of it holding node ids cannot
    /// be renamed (a process, message or durable state without the renaming hooks).
    pub(super) fn digest_named(&self, naming: Naming<'_>) -> Option<u64> {
        let mut h = DefaultHasher::new();
        for index in naming.order(self.processes.len()) {
            self.digest_node(index, naming, &mut h)?;
        }
        self.digest_queue(naming, &mut h)?;
        self.network.digest(naming.names(), &mut h);
        self.checker.digest(naming.names(), &mut h);
        self.pending_heals.hash(&mut h);
        Some(h.finish())
    }

    fn digest_node(&self, index: usize, naming: Naming<'_>, h: &mut DefaultHasher) -> Option<()> {
        let process = &self.processes[index];
        let state = &self.nodes[index];
        let now = self.now;
        let local_now_ns = state.clocks.timer_reading(now);
        match naming {
            Naming::Exact => match process.digest(local_now_ns) {
                Some(own) => own.hash(h),
                None => process.inspect().hash(h),
            },
            Naming::Renamed(names) => process.digest_renamed(local_now_ns, names)?.hash(h),
        }
        process.known_leader().map(|n| naming.id(n)).hash(h);
        self.digest_node_engine(index, h);
        for held in &state.held {
            match held {
                Held::Message { from, msg, .. } => {
                    (naming.id(*from), describe_message(msg, naming)?).hash(h)
                }
                Held::Disconnected { peer } => ("disconnected", naming.id(*peer)).hash(h),
                timer @ Held::Timer { .. } => format!("{timer:?}").hash(h),
            }
        }
        for effect in &state.deferred {
            describe_effect(effect, naming)?.hash(h);
        }
        state
            .persisted
            .as_ref()
            .map(|d| describe_durable(d, naming))
            .hash(h);
        for (done_ns, durable, term) in &state.writing {
            let durable = describe_durable(durable, naming)?;
            (done_ns.saturating_sub(now), durable, term).hash(h);
        }
        for (leaves_ns, effect) in &state.outgoing {
            (
                leaves_ns.saturating_sub(now),
                describe_effect(effect, naming)?,
            )
                .hash(h);
        }
        Some(())
    }

    /// What the engine keeps of process `index` that holds no node id: its term, status,
    /// clocks, random stream, armed timers and stall. The same whatever the naming, so also
    /// what tells members apart before they are renamed ([`Sim::digest_symmetric`]).
    pub(super) fn digest_node_engine(&self, index: usize, h: &mut DefaultHasher) {
        let process = &self.processes[index];
        let state = &self.nodes[index];
        let now = self.now;
        process.term().hash(h);
        match state.status {
            Status::Up => 0u64.hash(h),
            Status::Crashed => 1u64.hash(h),
            Status::Paused { until_ns } => (2u64, until_ns.saturating_sub(now)).hash(h),
        }
        state.suspended.hash(h);
        let (monotonic, wall) = state.clocks.readings(now);
        (monotonic - now as i64, wall - now as i64).hash(h);
        state.clocks.drift_ppm().hash(h);
        state.rng.position().hash(h);
        for kind in 0..self.slots_per_node {
            let slot = (index * self.slots_per_node + kind) as u32;
            if let Some(due_ns) = self.queue.slot_time(slot) {
                (kind, state.wall_slot[kind], due_ns.saturating_sub(now)).hash(h);
            }
        }
        state.stall_next.map(|(ns, _)| ns).hash(h);
        let counts = (state.held.len(), state.deferred.len(), state.writing.len());
        (counts, state.outgoing.len(), state.persisted.is_some()).hash(h);
    }

    fn digest_queue(&self, naming: Naming<'_>, h: &mut DefaultHasher) -> Option<()> {
        let slots = self.timer_slots;
        let mut entries: Vec<(u64, String)> = Vec::new();
        for entry in self.queue.other_entries() {
            let item = self.slab.items.get((entry.handle - slots) as usize);
            let Some(item) = item.and_then(Option::as_ref) else {
                continue;
            };
            let due = entry.time.saturating_sub(self.now);
            entries.push((due, self.describe_event(item, naming)?));
        }
        entries.sort();
        entries.hash(h);
        Some(())
    }

    /// An event as the digest sees it: its contents under `naming`, without the absolute
    /// times it carries; a heal with the nodes it heals.
    fn describe_event(&self, event: &EventData<P::Msg>, naming: Naming<'_>) -> Option<String> {
        let id = |n: &NodeId| naming.id(*n);
        Some(match event {
            EventData::Deliver {
                from,
                to,
                payload,
                via,
                ..
            } => {
                let payload = match payload {
                    Payload::Algo(msg) => describe_message(msg, naming)?,
                    Payload::Write { token, term } => format!("write {token} {term:?}"),
                };
                let via = via.map(|v| (v.epoch(), v.seq));
                format!("deliver {} {} {payload} {via:?}", id(from), id(to))
            }
            EventData::StreamCutTimeout { a, b, epoch, .. } => {
                let (a, b) = (id(a).min(id(b)), id(a).max(id(b)));
                format!("cut {a} {b} {epoch}")
            }
            EventData::Retransmit { from, to, epoch } => {
                format!("retransmit {} {} {epoch}", id(from), id(to))
            }
            EventData::Disconnected { node, peer } => {
                format!("disconnected {} {}", id(node), id(peer))
            }
            EventData::HealFault(index) => self.describe_heal(*index, naming),
            EventData::Resume { node, generation } => format!("resume {} {generation}", id(node)),
            EventData::Release { node, generation } => {
                format!("release {} {generation}", id(node))
            }
            EventData::ClockCaughtUp { node } => format!("caught up {}", id(node)),
            EventData::Fault(index) => format!("fault {index}"),
            EventData::LivenessDeadline => "liveness deadline".to_string(),
        })
    }

    /// The heal of fault `index`, with the nodes it heals (and the drift it gives back to
    /// each), in id order under `naming`.
    fn describe_heal(&self, index: usize, naming: Naming<'_>) -> String {
        let mut nodes: Vec<NodeId> = self.fault_nodes[index]
            .iter()
            .map(|n| naming.id(*n))
            .collect();
        nodes.sort();
        let mut drifts: Vec<(NodeId, i64)> = self.saved_drift_ppm[index]
            .iter()
            .map(|(n, ppm)| (naming.id(*n), *ppm))
            .collect();
        drifts.sort();
        format!("heal {index} {nodes:?} {drifts:?}")
    }
}

/// How a digest names the nodes: as they are, or renamed (node `i` called `names[i]`).
#[derive(Copy, Clone, Debug)]
pub(super) enum Naming<'n> {
    /// Every id as it is; parts are digested with the plain hooks.
    Exact,
    /// Every id renamed, with the renaming hooks ([`Process::digest_renamed`],
    /// [`Message::renamed`], [`DurableState::renamed`]).
    Renamed(&'n [NodeId]),
}

impl<'n> Naming<'n> {
    /// What `id` is called.
    fn id(self, id: NodeId) -> NodeId {
        id.renamed(self.names())
    }

    /// The renaming: empty for the exact naming (every id keeps its own).
    fn names(self) -> &'n [NodeId] {
        match self {
            Naming::Exact => &[],
            Naming::Renamed(names) => names,
        }
    }

    /// The processes of `count` in the order the renamed state lists them: the process
    /// called `n0` first.
    fn order(self, count: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&index| self.id(NodeId::from(index)));
        order
    }
}

/// A message as the digest sees it, under `naming`.
fn describe_message<M: Message>(msg: &M, naming: Naming<'_>) -> Option<String> {
    match naming {
        Naming::Exact => Some(format!("{msg:?}")),
        Naming::Renamed(names) => Some(format!("{:?}", msg.renamed(names)?)),
    }
}

/// A durable state as the digest sees it, under `naming`.
fn describe_durable<D: DurableState>(durable: &D, naming: Naming<'_>) -> Option<String> {
    match naming {
        Naming::Exact => Some(format!("{durable:?}")),
        Naming::Renamed(names) => Some(format!("{:?}", durable.renamed(names)?)),
    }
}

/// An effect waiting to leave (or to be applied after a stall) as the digest sees it, under
/// `naming`.
fn describe_effect<M: Message, T: TimerKind, D: DurableState>(
    effect: &Effect<M, T, D>,
    naming: Naming<'_>,
) -> Option<String> {
    let id = |n: &NodeId| naming.id(*n);
    Some(match effect {
        Effect::Send { to, msg } => format!("send {} {}", id(to), describe_message(msg, naming)?),
        Effect::SendUnordered { to, msg } => {
            format!(
                "send unordered {} {}",
                id(to),
                describe_message(msg, naming)?
            )
        }
        Effect::Disconnect { peer } => format!("disconnect {}", id(peer)),
        Effect::Persist(durable) => format!("persist {}", describe_durable(durable, naming)?),
        Effect::Signal(signal) => format!("signal {:?}", renamed_signal(*signal, naming)),
        other => format!("{other:?}"),
    })
}

/// `signal` with the node it names renamed.
fn renamed_signal(signal: Signal, naming: Naming<'_>) -> Signal {
    match signal {
        Signal::LeaderHeard { leader, term } => Signal::LeaderHeard {
            leader: naming.id(leader),
            term,
        },
        Signal::LeaseExpired { holder } => Signal::LeaseExpired {
            holder: naming.id(holder),
        },
        Signal::LeaseHeld { holder } => Signal::LeaseHeld {
            holder: naming.id(holder),
        },
        Signal::LeaseEnded { holder } => Signal::LeaseEnded {
            holder: naming.id(holder),
        },
        other => other,
    }
}
