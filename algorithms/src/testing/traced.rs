//! Whole runs on the real engine with every trace line kept, for tests that time what a
//! modeled service saw (deliveries at process `members`).

use splitbrain_sim::{
    AlgorithmInfo, FaultAction, FaultSpec, NodeId, Process, RunReport, Sim, SimConfig, Target,
    TraceSink, NANOS_PER_MILLI, NANOS_PER_SEC,
};

/// Keeps every trace line.
#[derive(Default)]
pub(crate) struct Lines(pub Vec<String>);

impl TraceSink for Lines {
    fn record(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
}

/// 15 s of seed 7 with writes every 100 ms and `faults`, traced.
pub(crate) fn run_traced<P: Process>(
    members: usize,
    info: AlgorithmInfo,
    processes: Vec<P>,
    faults: Vec<FaultSpec>,
) -> (RunReport, Lines) {
    let mut sim = SimConfig::quiet(7, members, 15 * NANOS_PER_SEC);
    sim.write_every_ns = 100 * NANOS_PER_MILLI;
    sim.faults = faults;
    let mut lines = Lines::default();
    let report = Sim::new(sim, info, processes).with_trace(&mut lines).run();
    (report, lines)
}

/// The true times at which process `to` took delivery of a message from `from` before
/// `until_ns`: of one of `kinds`, or of any kind when `kinds` is empty.
pub(crate) fn deliveries(
    lines: &Lines,
    to: usize,
    from: NodeId,
    kinds: &[&str],
    until_ns: u64,
) -> Vec<u64> {
    let at = format!(",\"node\":{to},");
    let sender = format!(",\"from\":{},", from.index());
    lines
        .0
        .iter()
        .filter(|l| l.contains(&at) && l.contains(&sender) && l.contains("\"ev\":\"deliver\""))
        .filter(|l| {
            kinds.is_empty()
                || kinds
                    .iter()
                    .any(|k| l.contains(&format!("\"ev\":\"deliver\",\"what\":\"{k}\"")))
        })
        .map(|l| {
            let t = &l["{\"t\":".len()..];
            t[..t.find(',').expect("a time")].parse().expect("a number")
        })
        .filter(|t| *t < until_ns)
        .collect()
}

/// The leader crashes at `at_s` seconds and restarts `down_s` seconds later.
pub(crate) fn crash_leader(at_s: u64, down_s: u64) -> FaultSpec {
    FaultSpec {
        at_ns: at_s * NANOS_PER_SEC,
        action: FaultAction::Crash(Target::Leader),
        heal_after_ns: Some(down_s * NANOS_PER_SEC),
    }
}
