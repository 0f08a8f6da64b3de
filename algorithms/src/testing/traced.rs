//! Whole runs on the real engine with every trace event kept, for tests that time what a
//! modeled service saw (deliveries at process `members`).

use splitbrain_sim::report::Failover;
use splitbrain_sim::{
    AlgorithmInfo, EventKind, FaultAction, FaultSpec, NodeId, Process, RunReport, Sim, SimConfig,
    Target, TraceEvent, TraceSink, Transport, NANOS_PER_MILLI, NANOS_PER_SEC,
};

/// Keeps every trace event.
#[derive(Default)]
pub(crate) struct Events(pub Vec<TraceEvent>);

impl TraceSink for Events {
    fn record(&mut self, event: &TraceEvent) {
        self.0.push(event.clone());
    }
}

/// 15 s of seed 7 with writes every 100 ms and `faults`, traced.
pub(crate) fn run_traced<P: Process>(
    members: usize,
    info: AlgorithmInfo,
    processes: Vec<P>,
    faults: Vec<FaultSpec>,
) -> (RunReport, Events) {
    run_traced_on(Transport::Datagram, members, info, processes, faults)
}

/// [`run_traced`] with the messages on `transport`.
pub(crate) fn run_traced_on<P: Process>(
    transport: Transport,
    members: usize,
    info: AlgorithmInfo,
    processes: Vec<P>,
    faults: Vec<FaultSpec>,
) -> (RunReport, Events) {
    let mut sim = SimConfig::quiet(7, members, 15 * NANOS_PER_SEC);
    sim.write_every_ns = 100 * NANOS_PER_MILLI;
    sim.faults = faults;
    sim.network.transport = transport;
    let mut events = Events::default();
    let report = Sim::new(sim, info, processes)
        .with_trace(&mut events)
        .run()
        .expect("within the default limits");
    (report, events)
}

/// The true times at which process `to` took delivery of a message from `from` before
/// `until_ns`: of one of `kinds`, or of any kind when `kinds` is empty.
pub(crate) fn deliveries(
    events: &Events,
    to: usize,
    from: NodeId,
    kinds: &[&str],
    until_ns: u64,
) -> Vec<u64> {
    let at = Some(NodeId::from(to));
    events
        .0
        .iter()
        .filter(|e| e.node == at)
        .filter(|e| match &e.kind {
            EventKind::Deliver {
                message, from: f, ..
            } => *f == from && (kinds.is_empty() || kinds.contains(&message.as_ref())),
            _ => false,
        })
        .map(|e| e.t_ns)
        .filter(|t| *t < until_ns)
        .collect()
}

/// The leader crashes at `at_s` seconds and restarts `down_s` seconds later.
pub(crate) fn crash_leader(at_s: u64, down_s: u64) -> FaultSpec {
    FaultSpec {
        at_ns: at_s * NANOS_PER_SEC,
        action: FaultAction::Crash(Target::Leader),
        heal_after_ns: Some(down_s * NANOS_PER_SEC),
        after: None,
    }
}

/// The leader resigns at `at_s` seconds.
pub(crate) fn resign_leader(at_s: u64) -> FaultSpec {
    FaultSpec {
        at_ns: at_s * NANOS_PER_SEC,
        action: FaultAction::Resign(Target::Leader),
        heal_after_ns: None,
        after: None,
    }
}

/// A run without faults: one election, started before the one claim and decided by it.
pub(crate) fn assert_one_election_and_none_left_open(report: &RunReport, label: &str) {
    assert_eq!(report.leaders.len(), 1, "{label}");
    assert_eq!(
        report.elections.len(),
        1,
        "{label}: {:#?}",
        report.elections
    );
    let initial = &report.elections[0];
    assert_eq!(initial.decided_ns, Some(report.leaders[0].at_ns));
    assert!(initial.started_ns < report.leaders[0].at_ns);
    assert_eq!(report.counters.elections_started, 1);
    assert_eq!(report.counters.dueling_candidate_terms, 0);
}

/// Two crashes of the leader after the initial election: each failover is one election,
/// starting when the service ended the dead leader's lease (`expiry_of` the failover) and
/// decided by the next claim.
pub(crate) fn assert_one_election_per_failover(
    report: &RunReport,
    expiry_of: impl Fn(&Failover) -> u64,
) {
    assert_eq!(report.elections.len(), 3, "{:#?}", report.elections);
    assert_eq!(report.failovers.len(), 2);
    assert_eq!(report.counters.elections_started, 3);
    assert_eq!(report.leaders.len(), 3);
    for (i, failover) in report.failovers.iter().enumerate() {
        let election = &report.elections[i + 1];
        let expiry = expiry_of(failover);
        assert_eq!(election.started_ns, expiry, "failover {i}");
        assert_eq!(failover.detection_ns, Some(expiry - failover.at_ns));
        let next = &report.leaders[i + 1];
        assert_eq!(election.decided_ns, Some(next.at_ns));
        assert_eq!(election.winner, Some(next.node));
        assert_eq!(election.term, Some(next.term));
        assert_eq!(election.campaigns, 1);
        assert_eq!(failover.rounds, 1);
    }
}

/// A resignation at 5 s: the second election starts one message latency (at most 10 ms)
/// after it, when the service ends the lease, and the next claim decides it.
pub(crate) fn assert_handover_election_starts_at_the_service(report: &RunReport) {
    assert_eq!(report.elections.len(), 2, "{:#?}", report.elections);
    let handover = &report.elections[1];
    let resigned = 5 * NANOS_PER_SEC;
    assert!(
        handover.started_ns > resigned && handover.started_ns <= resigned + 10 * NANOS_PER_MILLI
    );
    assert_eq!(handover.decided_ns, Some(report.leaders[1].at_ns));
}
