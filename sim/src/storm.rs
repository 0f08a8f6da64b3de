//! The "message storm" workload that benchmarks the engine: every node starts with one
//! message to a uniformly random other node; every delivery increments the receiver's
//! counter and sends one new message to a random other node. No timers, no leader.

use crate::config::{AlgorithmInfo, SimConfig};
use crate::ids::NodeId;
use crate::network_config::Latency;
use crate::process::{Ctx, Message, Process, TimerKind};
use crate::time::{LocalNanos, NANOS_PER_MILLI};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The one message of the storm.
#[derive(Copy, Clone, Debug)]
pub struct Hop;

impl Message for Hop {
    const KINDS: &'static [&'static str] = &["hop"];
    fn kind(&self) -> usize {
        0
    }
}

/// The storm has no timers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NoTimer {}

impl TimerKind for NoTimer {
    const NAMES: &'static [&'static str] = &[];
    fn index(self) -> usize {
        match self {}
    }
    fn from_index(_: usize) -> Self {
        unreachable!("the storm arms no timer")
    }
}

/// One storm node: counts what it receives and passes a message on.
#[derive(Clone, Debug, Default)]
pub struct StormNode {
    received: u64,
}

impl StormNode {
    fn send_to_random_other(ctx: &mut Ctx<'_, Hop, NoTimer>) {
        let others = ctx.members() as u64 - 1;
        let pick = ctx.rng().below(others) as u32;
        let to = if pick >= ctx.me().0 { pick + 1 } else { pick };
        ctx.send(NodeId(to), Hop);
    }
}

impl Process for StormNode {
    type Msg = Hop;
    type Timer = NoTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Hop, NoTimer>) {
        Self::send_to_random_other(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Hop, NoTimer>, _from: NodeId, _msg: Hop) {
        self.received += 1;
        Self::send_to_random_other(ctx);
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<'_, Hop, NoTimer>, timer: NoTimer) {
        match timer {}
    }

    fn on_restart(&mut self, _ctx: &mut Ctx<'_, Hop, NoTimer>) {}

    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}

/// The storm's configuration: `nodes` nodes, latency uniform in [1 ms, 10 ms], no faults.
pub fn storm_config(seed: u64, nodes: usize) -> (SimConfig, AlgorithmInfo) {
    assert!(nodes >= 2, "a storm needs two nodes");
    let mut config = SimConfig::quiet(seed, nodes, u64::MAX / 4);
    config.network.default.latency = Latency::Uniform(NANOS_PER_MILLI, 10 * NANOS_PER_MILLI);
    let info = AlgorithmInfo {
        service_names: Vec::new(),
        name: "storm".to_string(),
        // No leader ever appears: keep the liveness deadline beyond any storm.
        failure_detection_ns: u64::MAX / 64,
        min_group_for_progress: 1,
        signals: crate::SignalSupport::NONE,
        late_campaigns_lose: true,
    };
    (config, info)
}

/// What a storm run produced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StormResult {
    /// Messages delivered (the run stops at the number asked for).
    pub deliveries: u64,
    /// The sum of every node's receive counter: equal to `deliveries` when nothing is lost.
    pub counter_sum: u64,
    /// True time of the last event handled.
    pub final_time_ns: u64,
}

/// Runs a storm of `nodes` nodes until `deliveries` messages were delivered.
pub fn run_storm(seed: u64, nodes: usize, deliveries: u64) -> StormResult {
    let (config, info) = storm_config(seed, nodes);
    let processes = vec![StormNode::default(); nodes];
    let mut sim = crate::Sim::new(config, info, processes).with_event_limit(deliveries);
    let report = sim
        .run()
        .expect("a storm stops at its delivery count, far within the guard");
    StormResult {
        deliveries: report.messages[0].delivered,
        counter_sum: sim.processes().iter().map(|p| p.received).sum(),
        final_time_ns: sim.now(),
    }
}

/// The yardstick: the storm written by hand, with nothing but a std `BinaryHeap` of
/// `(time, seq, node)` and one ChaCha8 generator (what the engine's overhead is measured
/// against: docs/performance.md).
pub fn hand_written_storm(seed: u64, nodes: usize, deliveries: u64) -> StormResult {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut below = |bound: u64| ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64;
    let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::with_capacity(nodes * 2);
    let mut counters = vec![0u64; nodes];
    let mut seq = 0u64;
    let mut now = 0u64;
    let mut send =
        |from: usize, now: u64, heap: &mut BinaryHeap<Reverse<(u64, u64, u32)>>, seq: &mut u64| {
            let pick = below(nodes as u64 - 1) as usize;
            let to = if pick >= from { pick + 1 } else { pick };
            let latency = NANOS_PER_MILLI + below(9 * NANOS_PER_MILLI + 1);
            heap.push(Reverse((now + latency, *seq, to as u32)));
            *seq += 1;
        };
    for from in 0..nodes {
        send(from, 0, &mut heap, &mut seq);
    }
    let mut delivered = 0;
    while delivered < deliveries {
        let Reverse((time, _, to)) = heap.pop().expect("the storm never runs dry");
        now = time;
        counters[to as usize] += 1;
        delivered += 1;
        send(to as usize, now, &mut heap, &mut seq);
    }
    StormResult {
        deliveries: delivered,
        counter_sum: counters.iter().sum(),
        final_time_ns: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_storm_delivers_exactly_the_asked_number_of_messages() {
        let result = run_storm(1, 5, 10_000);
        assert_eq!(result.deliveries, 10_000);
        assert_eq!(result.counter_sum, 10_000);
        // Five messages in flight, mean latency 5.5 ms: about 11 s of simulated time.
        assert!(
            (9_000_000_000..13_000_000_000).contains(&result.final_time_ns),
            "{result:?}"
        );
    }

    #[test]
    fn the_storm_is_deterministic() {
        assert_eq!(run_storm(3, 100, 5_000), run_storm(3, 100, 5_000));
    }
}
