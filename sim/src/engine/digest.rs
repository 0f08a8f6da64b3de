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
use crate::process::Process;
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
        let mut h = DefaultHasher::new();
        for index in 0..self.processes.len() {
            self.digest_node(index, &mut h);
        }
        self.digest_queue(&mut h);
        self.network.digest(&mut h);
        self.checker.digest(&mut h);
        self.pending_heals.hash(&mut h);
        h.finish()
    }

    fn digest_node(&self, index: usize, h: &mut DefaultHasher) {
        let process = &self.processes[index];
        let state = &self.nodes[index];
        let now = self.now;
        match process.digest(state.clocks.timer_reading(now)) {
            Some(own) => own.hash(h),
            None => process.inspect().hash(h),
        }
        process.term().hash(h);
        process.known_leader().hash(h);
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
        for held in &state.held {
            match held {
                Held::Message { from, msg, .. } => (from, format!("{msg:?}")).hash(h),
                other => format!("{other:?}").hash(h),
            }
        }
        state.stall_next.map(|(ns, _)| ns).hash(h);
        format!("{:?}", state.deferred).hash(h);
        format!("{:?}", state.persisted).hash(h);
        for (done_ns, durable, term) in &state.writing {
            (done_ns.saturating_sub(now), format!("{durable:?}"), term).hash(h);
        }
        for (leaves_ns, effect) in &state.outgoing {
            (leaves_ns.saturating_sub(now), format!("{effect:?}")).hash(h);
        }
    }

    fn digest_queue(&self, h: &mut DefaultHasher) {
        let slots = self.timer_slots;
        let mut entries: Vec<(u64, String)> = self
            .queue
            .other_entries()
            .iter()
            .filter_map(|entry| {
                let item = self
                    .slab
                    .items
                    .get((entry.handle - slots) as usize)?
                    .as_ref()?;
                let due = entry.time.saturating_sub(self.now);
                Some((due, describe_event(item)))
            })
            .collect();
        entries.sort();
        entries.hash(h);
    }
}

/// An event as the digest sees it: its contents without the absolute times it carries.
fn describe_event<M: std::fmt::Debug>(event: &EventData<M>) -> String {
    match event {
        EventData::Deliver {
            from,
            to,
            payload,
            via,
            ..
        } => {
            let payload = match payload {
                Payload::Algo(msg) => format!("{msg:?}"),
                Payload::Write { token, term } => format!("write {token} {term:?}"),
            };
            format!(
                "deliver {from} {to} {payload} {:?}",
                via.map(|v| (v.epoch(), v.seq))
            )
        }
        EventData::StreamCutTimeout { a, b, epoch, .. } => format!("cut {a} {b} {epoch}"),
        other => format!("{other:?}"),
    }
}
