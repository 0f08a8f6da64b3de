//! How many events a run may handle, estimated before it starts: validation refuses a
//! scenario whose estimate is absurd, and the runtime guard sizes its limits from it.

use crate::registry::AlgorithmConfig;
use splitbrain_sim::{Nanos, SimConfig};

/// An upper estimate of the events a run of `config` handles: every process (members and the
/// service) acting once per the shortest timing of the algorithm and the workload, as often
/// as the fastest clock of the run makes it (a clock drifting `+d` ppm fires its timers
/// `1 + d / 10^6` times as often in true time), plus on `Stream` every connection
/// retransmitting once per `max_rto` and breaking and reopening once per `timeout`. Where
/// members send to every other member and a message can take longer than a member waits
/// before it campaigns (Raft's smallest election timeout, on the fastest clock), nobody hears
/// from the others in time and every act can be a campaign to all of them and their answers
/// (`1 + 2 (n - 1)` events): a storm, counted so. Where one election can cost `n (n - 1)`
/// messages (Bully), every start, fault and heal is counted as such an election. Validation
/// refuses runs whose estimate is absurd; the runtime guard
/// ([`splitbrain_sim::limits::RunLimits`]) ends any run that outgrows its limits anyway.
pub fn expected_events(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    expected_events_with(algorithm, config, 0)
}

/// [`expected_events`] with `nemesis_faults` more faults than `config` lists (what a
/// nemesis may inject in one run).
pub fn expected_events_with(
    algorithm: &AlgorithmConfig,
    config: &SimConfig,
    nemesis_faults: u64,
) -> u128 {
    let mut period_ns = algorithm.shortest_timing().1;
    if config.write_every_ns > 0 {
        period_ns = period_ns.min(config.write_every_ns);
    }
    let processes = algorithm.processes(config.members) as u128;
    let acting = u128::from(config.duration_ns / period_ns) * processes;
    let acting = (acting * clock_rate_ppm(config)).div_ceil(1_000_000);
    let faults = config.faults.len() as u128 + u128::from(nemesis_faults);
    acting * events_per_act(algorithm, config)
        + retransmissions(algorithm, config)
        + quadratic_elections(algorithm, config, faults)
}

/// The events of Bully-like elections (see [`Algorithm::ELECTION_IS_QUADRATIC`]): one at the
/// start and one per fault and heal, each `n (n - 1)` messages plus `2 n` announcements and
/// reminders; 0 for other algorithms.
fn quadratic_elections(algorithm: &AlgorithmConfig, config: &SimConfig, faults: u128) -> u128 {
    if !algorithm.election_is_quadratic() {
        return 0;
    }
    let n = config.members as u128;
    (1 + 2 * faults) * (n * n.saturating_sub(1) + 2 * n)
}

/// The fastest clock's rate in millionths: `10^6` plus its drift in ppm (a clock at
/// 1,500,000 counts 1.5 s per true second).
fn clock_rate_ppm(config: &SimConfig) -> u128 {
    1_000_000 + u128::from(fastest_drift_ppm(config).max(0).unsigned_abs())
}

/// Events per act in [`expected_events`]: `1 + 2 (n - 1)` in a storm (members that send to
/// every member, messages that can take longer than the campaign timeout on the fastest
/// clock), else 1.
pub fn events_per_act(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    let true_wait_ns =
        u128::from(algorithm.campaign_timeout_ns()) * 1_000_000 / clock_rate_ppm(config);
    let storm =
        algorithm.sends_to_every_member() && u128::from(slowest_latency_ns(config)) >= true_wait_ns;
    if storm {
        1 + 2 * (config.members as u128).saturating_sub(1)
    } else {
        1
    }
}

/// The longest latency any link of `config` usually takes (see [`Latency::typical_max_ns`]).
fn slowest_latency_ns(config: &SimConfig) -> Nanos {
    let network = &config.network;
    network
        .overrides
        .iter()
        .map(|o| o.link.latency.typical_max_ns())
        .fold(network.default.latency.typical_max_ns(), Nanos::max)
}

/// The largest drift any clock of `config` may run with, in ppm: the random draw's bound,
/// explicit clocks, and the drift faults set.
pub fn fastest_drift_ppm(config: &SimConfig) -> i64 {
    let clocks = &config.clocks;
    let explicit = clocks.per_node.iter().map(|c| c.drift_ppm);
    let service = clocks.service.iter().map(|c| c.drift_ppm);
    let faults = config.faults.iter().filter_map(|f| match f.action {
        splitbrain_sim::FaultAction::ClockDrift(_, ppm) => Some(ppm),
        _ => None,
    });
    explicit
        .chain(service)
        .chain(faults)
        .fold(i64::from(clocks.max_drift_ppm), i64::max)
}

/// An upper bound on `Stream` retransmissions and reconnections: every connection
/// retransmitting once per `max_rto` and, cut off, breaking (both ends hear it) and being
/// opened again once per `timeout`, for the whole run (0 on `Datagram`). Connections: each way
/// between every two members where members send to every member, each way between every
/// member and the service where there is one, else each way to two neighbours (a ring).
pub fn retransmissions(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    let splitbrain_sim::Transport::Stream(stream) = config.network.transport else {
        return 0;
    };
    let members = config.members as u128;
    let service = algorithm.service_processes() as u128;
    let connections = if algorithm.sends_to_every_member() {
        members * members.saturating_sub(1)
    } else if service > 0 {
        // Members to each service process and back, and between the service's members.
        2 * members * service + service * service.saturating_sub(1)
    } else {
        // Members to a ring's neighbours and back.
        4 * members
    };
    let resends = u128::from(config.duration_ns / stream.max_rto_ns.max(1));
    // A break is heard at both ends and the connection reopened with a send: three events.
    let reconnects = 3 * u128::from(config.duration_ns / stream.timeout_ns.max(1));
    (resends + reconnects) * connections
}
