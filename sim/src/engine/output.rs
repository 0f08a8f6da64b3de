//! What leaves a process, and when: durable writes to its disk (fsync latency, `SlowDisk`),
//! handler processing time, and the ordered output stream that waits for both
//! (docs/engine.md, "Disks and processing").
//!
//! A process's output is one ordered stream, as a server's event loop that blocks on its
//! fsync (etcd's `raftNode` loop, a ZooKeeper server's `SyncRequestProcessor`): a send asked
//! for after a durable write leaves once the write is on disk, and so does everything the
//! process sends after it. Handlers still run when their event comes; only what they send
//! waits. With an instant disk and no processing time nothing waits and nothing is drawn.
//! [`Ctx::send_unordered`](crate::Ctx::send_unordered) is the exception: its message leaves
//! at once, as one sent by another thread of the real process (not behind its WAL).

use super::{EventData, Sim, Status};
use crate::ids::NodeId;
use crate::network::sample;
use crate::process::{DurableState, Effect, Process};
use crate::time::{LocalNanos, Nanos};
use crate::trace::EventKind;

type NodeEffect<P> = Effect<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;
type NodeState<P> =
    super::NodeState<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;

impl<P: Process> Sim<'_, P> {
    /// Applies a handler's effects in order. What leaves the process waits for the
    /// handler's processing time, for the durable writes asked for before it, and for
    /// everything the process queued earlier; the rest takes effect at once.
    ///
    /// A handler's processing time `d` shifts all it asks for: its sends leave `d` later,
    /// its durable writes start `d` later, and its timers count from `d` later (a handler
    /// scheduled late re-arms late: what breaks the lockstep of equal timeouts on real
    /// machines). Its decisions are still taken with the clock readings of its event.
    pub(super) fn settle(
        &mut self,
        node: NodeId,
        local: LocalNanos,
        effects: &mut Vec<NodeEffect<P>>,
        handling: &impl Fn() -> crate::refused::Handling,
    ) {
        let processing_ns = self.processing_ns();
        let start_ns = self.now.saturating_add(processing_ns);
        let timer_local = local.saturating_add(i64::try_from(processing_ns).unwrap_or(i64::MAX));
        let mut ready_ns = start_ns.max(self.nodes[node.index()].output_free_ns);
        for effect in effects.drain(..) {
            if self.refused(&effect) {
                self.refuse(handling(), effect);
                continue;
            }
            self.charge_effect(node, &effect);
            match effect {
                Effect::Persist(durable) => {
                    ready_ns = ready_ns.max(self.write_durable(node, start_ns, durable));
                }
                effect if effect.leaves_process() && ready_ns > self.now => {
                    self.queue_outgoing(node, ready_ns, effect);
                }
                // Another thread of the process: neither the disk nor the queue holds it.
                effect @ Effect::SendUnordered { .. } => self.apply(node, local, effect),
                effect @ Effect::SetTimer { .. } => self.apply(node, timer_local, effect),
                effect => self.apply(node, local, effect),
            }
        }
        self.nodes[node.index()].output_free_ns = ready_ns;
    }

    /// Sends `effect` now, or queues it behind what `node` has waiting to leave.
    pub(super) fn send_or_queue(&mut self, node: NodeId, local: LocalNanos, effect: NodeEffect<P>) {
        let free_ns = self.nodes[node.index()].output_free_ns;
        if effect.leaves_process() && free_ns > self.now {
            self.queue_outgoing(node, free_ns, effect);
        } else {
            self.apply(node, local, effect);
        }
    }

    /// A handler's processing time: a draw of the configured distribution, else 0.
    fn processing_ns(&mut self) -> Nanos {
        match &self.config.processing {
            Some(latency) => sample(latency, &mut self.processing_rng),
            None => 0,
        }
    }

    /// Starts a durable write of `durable` on `node`'s disk, no earlier than `start_ns` and
    /// after the writes before it; returns the true time it completes.
    pub(super) fn write_durable(
        &mut self,
        node: NodeId,
        start_ns: Nanos,
        durable: P::Durable,
    ) -> Nanos {
        self.charge_durable(node, &durable);
        let term = self.processes[node.index()].term();
        let batch = self.config.disk.batch;
        let configured = self.config.disk.fsync_of(node.index(), self.config.members);
        let state = &mut self.nodes[node.index()];
        let done_ns = if batch && state.disk.last_start_ns > start_ns {
            // Group commit: the write waiting for the disk has not begun; this one joins it.
            state.disk.busy_until_ns
        } else {
            let begin_ns = start_ns.max(state.disk.busy_until_ns);
            // Slow only if the fsync begins while the fault lasts (it heals at
            // `slow_until_ns`), as a delay injected at the syscall's entry is.
            let slow = state
                .disk
                .slow_ns
                .filter(|_| begin_ns < state.disk.slow_until_ns);
            let fsync_ns = match (slow, configured) {
                (Some(slow_ns), _) => slow_ns,
                (None, Some(latency)) => sample(latency, &mut self.disk_rng),
                (None, None) => 0,
            };
            state.disk.last_start_ns = begin_ns;
            state.disk.busy_until_ns = begin_ns.saturating_add(fsync_ns);
            state.disk.busy_until_ns
        };
        state.writing.push_back((done_ns, durable, term));
        let replaced = Self::commit_completed(state, self.now);
        self.release_durable(replaced);
        if done_ns > self.now {
            self.trace_node(node, EventKind::Persist { done_ns });
        }
        done_ns
    }

    /// Queues `effect` to leave `node` at `at_ns` (no earlier than what is queued before it).
    fn queue_outgoing(&mut self, node: NodeId, at_ns: Nanos, effect: NodeEffect<P>) {
        let state = &mut self.nodes[node.index()];
        let new_time = state.outgoing.back().is_none_or(|(last, _)| *last != at_ns);
        state.outgoing.push_back((at_ns, effect));
        if new_time {
            let generation = state.output_generation;
            self.push_event(at_ns, EventData::Release { node, generation });
        }
    }

    /// What `node` queued for `now` or earlier leaves (at resume, if it is paused now).
    pub(super) fn on_release(&mut self, node: NodeId, generation: u32) {
        let state = &self.nodes[node.index()];
        if state.output_generation != generation || state.status != Status::Up {
            return;
        }
        self.release_due(node);
    }

    /// Sends everything `node` has queued that is due by now, in order.
    pub(super) fn release_due(&mut self, node: NodeId) {
        let local = self.nodes[node.index()].clocks.timer_reading(self.now);
        loop {
            let state = &mut self.nodes[node.index()];
            match state.outgoing.front() {
                Some((at_ns, _)) if *at_ns <= self.now => {}
                _ => break,
            }
            let (_, effect) = state.outgoing.pop_front().expect("peeked");
            self.apply(node, local, effect);
        }
    }

    /// A crash: writes not yet on disk are lost, and so is everything waiting to leave.
    /// The terms those writes were for were never made durable nor sent (what the handlers
    /// sent after them waited), so the checker's `term_monotonic` forgets them: the process
    /// restarts from the term of its last completed write.
    pub(super) fn crash_output(&mut self, node: NodeId) {
        let now = self.now;
        let state = &mut self.nodes[node.index()];
        let replaced = Self::commit_completed(state, now);
        if !state.writing.is_empty() {
            self.checker.forget_terms_above(node, state.persisted_term);
        }
        let state = &mut self.nodes[node.index()];
        let lost: u64 = (state.writing.drain(..))
            .map(|(_, durable, _)| durable.size_bytes() as u64)
            .sum();
        self.release_durable(replaced + lost);
        for (_, effect) in std::mem::take(&mut self.nodes[node.index()].outgoing) {
            self.release_effect(node, &effect);
        }
        let state = &mut self.nodes[node.index()];
        state.output_generation = state.output_generation.wrapping_add(1);
        state.output_free_ns = now;
        state.disk.busy_until_ns = now;
        state.disk.last_start_ns = now;
    }

    /// Moves the writes on disk by `now` from `writing` to `persisted`; returns the bytes
    /// of the durable state they replaced, no longer held.
    fn commit_completed(state: &mut NodeState<P>, now: Nanos) -> u64 {
        let mut replaced = 0;
        while state
            .writing
            .front()
            .is_some_and(|(done_ns, ..)| *done_ns <= now)
        {
            let (_, durable, term) = state.writing.pop_front().expect("checked");
            if let Some(old) = state.persisted.replace(durable) {
                replaced += old.size_bytes() as u64;
            }
            state.persisted_term = term;
        }
        replaced
    }

    /// Before a restart: the process gets back what its disk kept.
    pub(super) fn restore_durable(&mut self, node: NodeId) {
        let durable = self.nodes[node.index()].persisted.clone();
        self.processes[node.index()].restore(durable);
    }
}
