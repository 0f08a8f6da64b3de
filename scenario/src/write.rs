//! A scenario back to RON: canonical text with every field written out, so that
//! `parse(&to_ron(s), ..) == Ok(s)` for every valid scenario (this is how minimal reproducers
//! are saved). Durations are exact, probabilities are exact decimals of their ppm.

use super::{Expect, Scenario, EVERY_SEED_PPM};
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_sim::duration::{format_duration_ron, format_signed_duration_ron};
use splitbrain_sim::{
    Actor, ClockConfig, DiskConfig, FaultAction, FaultSpec, FaultSpread, Latency, LinkConfig,
    MemberChange, NetworkConfig, PartitionShape, Target, TimerClock, Transport, Trigger,
    TriggerEvent,
};

/// The canonical RON text of a scenario.
pub fn to_ron(scenario: &Scenario) -> String {
    let sim = &scenario.sim;
    let mut out = String::from("Scenario(\n");
    if let Some(drew) = &scenario.nemesis_drew {
        // What the seed's nemesis drew, for people: the faults below are what it drew them
        // into, and a drawn latency is in `network`.
        out.push_str(&format!(
            "    // seed {}'s nemesis drew ({})\n",
            sim.seed,
            drew.describe()
        ));
    }
    let mut field = |name: &str, value: String| {
        out.push_str(&format!("    {name}: {value},\n"));
    };
    field("name", string(&scenario.name));
    field("seed", sim.seed.to_string());
    field("duration", duration(sim.duration_ns));
    field("nodes", sim.members.to_string());
    field("algorithm", algorithm(&scenario.algorithm));
    if !scenario.designs.is_empty() {
        let designs = scenario.designs.iter().map(|d| {
            let settings = algorithm(&d.algorithm).replace("\n", "\n        ");
            let on = transport(&d.transport);
            format!(
                "(name: {}, algorithm: {settings}, transport: {on})",
                string(&d.name)
            )
        });
        field("designs", list(designs.collect()));
    }
    field(
        "network",
        network(&sim.network, scenario.transport_explicit),
    );
    field("clocks", clocks(&sim.clocks));
    if sim.disk != DiskConfig::default() {
        field("disk", disk(&sim.disk));
    }
    if let Some(processing) = &sim.processing {
        field("processing", latency(processing));
    }
    field(
        "workload",
        format!("(write_every: {})", duration(sim.write_every_ns)),
    );
    field("resource", format!("(fencing: {})", sim.fencing));
    if let Some(bound) = sim.liveness_bound_ns {
        field("liveness", format!("(bound: {})", duration(bound)));
    }
    if sim.timeout_choices > 0 || !sim.chosen.is_empty() {
        let mut parts = Vec::new();
        if sim.timeout_choices > 0 {
            parts.push(format!("timeouts: {}", sim.timeout_choices));
        }
        if !sim.chosen.is_empty() {
            let taken: Vec<String> = sim
                .chosen
                .iter()
                .map(|c| format!("(index: {}, option: {})", c.index, c.option))
                .collect();
            parts.push(format!("take: [{}]", taken.join(", ")));
        }
        field("choices", format!("({})", parts.join(", ")));
    }
    let spreads =
        (scenario.fault_spreads.iter().copied()).chain(std::iter::repeat(FaultSpread::FIXED));
    let faults = sim.faults.iter().zip(spreads);
    field(
        "faults",
        list(faults.map(|(f, spread)| fault(f, spread)).collect()),
    );
    if let Some(n) = &scenario.nemesis {
        field("nemesis", nemesis(n));
    }
    if let Some(o) = &scenario.objective {
        let mut parts = Vec::new();
        if let Some(p99) = o.failover_p99_ns {
            parts.push(format!("failover_p99: {}", duration(p99)));
        }
        parts.push(format!("startup_delay: {}", duration(o.startup_delay_ns)));
        field("objective", format!("({})", parts.join(", ")));
    }
    field("expect", expect(&scenario.expect));
    if scenario.expect_rate_ppm != EVERY_SEED_PPM {
        field("expect_rate", probability(scenario.expect_rate_ppm));
    }
    out.push_str(")\n");
    out
}

/// A RON string literal; Rust's escapes (`\"`, `\\`, `\n`, `\u{..}`) are all valid RON.
fn string(text: &str) -> String {
    format!("{text:?}")
}

fn duration(ns: u64) -> String {
    format!("\"{}\"", format_duration_ron(ns))
}

/// Parts per million as an exact decimal probability: 300_000 -> `0.3`.
fn probability(ppm: u32) -> String {
    let (whole, fraction) = (ppm / 1_000_000, ppm % 1_000_000);
    if fraction == 0 {
        return format!("{whole}.0");
    }
    let digits = format!("{fraction:06}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// A list, one item per line when it is not empty.
fn list(items: Vec<String>) -> String {
    if items.is_empty() {
        return "[]".to_string();
    }
    let mut out = String::from("[\n");
    for item in items {
        out.push_str(&format!("        {item},\n"));
    }
    out.push_str("    ]");
    out
}

/// The algorithm's settings on one line, every one written out as a scenario would:
/// `Etcd(ttl: "10s", election_timeout: "1s", ...)`.
pub fn algorithm_line(config: &AlgorithmConfig) -> String {
    let text = algorithm(config);
    let parts: Vec<&str> = text.lines().map(str::trim).collect();
    parts
        .join(" ")
        .replace("( ", "(")
        .replace(", )", ")")
        .replace("[ ", "[")
        .replace(", ]", "]")
}

/// The algorithm's settings, every one written out, as its own module serializes them.
fn algorithm(config: &AlgorithmConfig) -> String {
    let pretty = ron::ser::PrettyConfig::new()
        .struct_names(false)
        .compact_arrays(true)
        .extensions(super::EXTENSIONS)
        .indentor("    ");
    let text = ron::Options::default()
        .to_string_pretty(&config.settings(), pretty)
        // Settings are plain data (durations, numbers, names): nothing fails to serialize.
        .unwrap_or_else(|e| format!("{}() /* {e} */", config.scenario_name()));
    // Drop the `#![enable(..)]` lines the extensions add (`parse` enables them), and indent
    // the fields one level deeper, under `algorithm:`.
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.starts_with("#![enable("))
        .collect();
    lines.join("\n    ")
}

/// The network; its transport only when the scenario sets it (`explicit`): else it is the
/// algorithm's default, and each design's and algorithm's own when read back.
fn network(config: &NetworkConfig, explicit: bool) -> String {
    let links: Vec<String> = config
        .overrides
        .iter()
        .map(|o| format!("(from: {}, to: {}, {})", o.from, o.to, link_fields(&o.link)))
        .collect();
    let links = if links.is_empty() {
        "[]".to_string()
    } else {
        format!(
            "[\n            {},\n        ]",
            links.join(",\n            ")
        )
    };
    let transport = match explicit {
        true => format!("        transport: {},\n", transport(&config.transport)),
        false => String::new(),
    };
    format!(
        "(\n        latency: {},\n        loss: {},\n        duplicate: {},\n        links: {},\n{transport}    )",
        latency(&config.default.latency),
        probability(config.default.loss_ppm),
        probability(config.default.duplicate_ppm),
        links,
    )
}

/// A transport as a scenario writes it, its `Stream` timings only where they are not the
/// defaults: `Datagram`, `Stream`, `Stream(timeout: "2s")`. What every output names as the
/// transport a design ran on.
pub fn transport_line(transport: &Transport) -> String {
    let Transport::Stream(config) = transport else {
        return "Datagram".to_string();
    };
    let builtin = splitbrain_sim::StreamConfig::default();
    let fields = [
        ("min_rto", config.min_rto_ns, builtin.min_rto_ns),
        ("max_rto", config.max_rto_ns, builtin.max_rto_ns),
        ("timeout", config.timeout_ns, builtin.timeout_ns),
    ];
    let set: Vec<String> = fields
        .iter()
        .filter(|(_, ns, default_ns)| ns != default_ns)
        .map(|(name, ns, _)| format!("{name}: {}", duration(*ns)))
        .collect();
    if set.is_empty() {
        "Stream".to_string()
    } else {
        format!("Stream({})", set.join(", "))
    }
}

fn transport(transport: &Transport) -> String {
    match transport {
        Transport::Datagram => "Datagram".to_string(),
        Transport::Stream(config) => format!(
            "Stream(min_rto: {}, max_rto: {}, timeout: {})",
            duration(config.min_rto_ns),
            duration(config.max_rto_ns),
            duration(config.timeout_ns)
        ),
    }
}

fn link_fields(link: &LinkConfig) -> String {
    format!(
        "latency: {}, loss: {}, duplicate: {}",
        latency(&link.latency),
        probability(link.loss_ppm),
        probability(link.duplicate_ppm)
    )
}

fn latency(latency: &Latency) -> String {
    match latency {
        Latency::Constant(d) => format!("Constant({})", duration(*d)),
        Latency::Uniform(low, high) => format!("Uniform({}, {})", duration(*low), duration(*high)),
        Latency::Exponential { mean_ns, min_ns } => {
            format!(
                "Exponential(mean: {}, min: {})",
                duration(*mean_ns),
                duration(*min_ns)
            )
        }
    }
}

/// `, timers: Wall` for a clock whose node times with its wall clock; nothing for the default.
fn timers(clock: TimerClock) -> &'static str {
    match clock {
        TimerClock::Monotonic => "",
        TimerClock::Wall => ", timers: Wall",
    }
}

fn clocks(config: &ClockConfig) -> String {
    let nodes: Vec<String> = config
        .per_node
        .iter()
        .map(|clock| {
            format!(
                "(node: {}, drift_ppm: {}, offset: \"{}\"{})",
                clock.node,
                clock.drift_ppm,
                format_signed_duration_ron(clock.offset_ns),
                timers(clock.timers)
            )
        })
        .collect();
    let service = config.service.map_or(String::new(), |clock| {
        format!(
            ", service: (drift_ppm: {}, offset: \"{}\"{})",
            clock.drift_ppm,
            format_signed_duration_ron(clock.offset_ns),
            timers(clock.timers)
        )
    });
    format!(
        "(drift_ppm: {}, offset: {}, nodes: [{}]{service})",
        config.max_drift_ppm,
        duration(config.max_offset_ns),
        nodes.join(", ")
    )
}

fn disk(config: &DiskConfig) -> String {
    let mut parts = Vec::new();
    if let Some(fsync) = &config.fsync {
        parts.push(format!("fsync: {}", latency(fsync)));
    }
    let nodes: Vec<String> = config
        .per_node
        .iter()
        .map(|d| format!("(node: {}, fsync: {})", d.node, latency(&d.fsync)))
        .collect();
    parts.push(format!("nodes: [{}]", nodes.join(", ")));
    if let Some(service) = &config.service {
        parts.push(format!("service: {}", latency(service)));
    }
    if config.batch {
        parts.push("batch: true".to_string());
    }
    format!("({})", parts.join(", "))
}

/// Each explicit fault of `scenario` as the file writes it (`(at: "20s..40s", do: ...)`),
/// ranges included: what a report lists as the faults every design met.
pub fn fault_lines(scenario: &Scenario) -> Vec<String> {
    let spreads =
        (scenario.fault_spreads.iter().copied()).chain(std::iter::repeat(FaultSpread::FIXED));
    (scenario.sim.faults.iter().zip(spreads))
        .map(|(f, spread)| fault(f, spread))
        .collect()
}

/// A duration, or the range `low..low + spread` drawn per seed.
fn duration_range(low_ns: u64, spread_ns: u64) -> String {
    if spread_ns == 0 {
        return duration(low_ns);
    }
    let high_ns = low_ns.saturating_add(spread_ns);
    format!(
        "\"{}..{}\"",
        format_duration_ron(low_ns),
        format_duration_ron(high_ns)
    )
}

fn fault(spec: &FaultSpec, spread: FaultSpread) -> String {
    let heal = match spec.heal_after_ns {
        Some(ns) => format!(", heal_after: {}", duration_range(ns, spread.heal_after_ns)),
        None => String::new(),
    };
    let after = match &spec.after {
        Some(t) => format!(", after: {}", trigger(t, spread.delay_ns)),
        None => String::new(),
    };
    format!(
        "(at: {}{after}, do: {}{heal})",
        duration_range(spec.at_ns, spread.at_ns),
        action(&spec.action, spread.length_ns)
    )
}

/// A fault's trigger, every field written out; its delay the range `delay..delay + spread_ns`.
fn trigger(trigger: &Trigger, spread_ns: u64) -> String {
    let event = match &trigger.event {
        TriggerEvent::Sent(kind) => format!("Sent({})", string(kind)),
        TriggerEvent::Signal(kind) => format!("Signal({kind:?})"),
        TriggerEvent::BecameLeader => "BecameLeader".to_string(),
        TriggerEvent::SteppedDown => "SteppedDown".to_string(),
        TriggerEvent::Observed(name) => format!("Observed({})", string(name)),
    };
    let by = match trigger.by {
        Actor::Any => "Any".to_string(),
        Actor::Node(i) => format!("Node({i})"),
        Actor::Leader => "Leader".to_string(),
        Actor::Follower => "Follower".to_string(),
    };
    format!(
        "(event: {event}, by: {by}, nth: {}, delay: {})",
        trigger.nth,
        duration_range(trigger.delay_ns, spread_ns)
    )
}

/// A fault's action; its length (if it has one) the range `length..length + spread_ns`.
fn action(action: &FaultAction, spread_ns: u64) -> String {
    let length = |d: u64| duration_range(d, spread_ns);
    match action {
        FaultAction::Crash(t) => format!("Crash({})", target(t)),
        FaultAction::Restart(t) => format!("Restart({})", target(t)),
        FaultAction::Pause(t, d) => format!("Pause({}, {})", target(t), length(*d)),
        FaultAction::Suspend(t, d) => format!("Suspend({}, {})", target(t), length(*d)),
        FaultAction::Stall(t, d) => format!("Stall({}, {})", target(t), length(*d)),
        FaultAction::Partition(shape) => format!("Partition({})", partition(shape)),
        FaultAction::Heal => "Heal".to_string(),
        FaultAction::ClockJump(t, d) if spread_ns > 0 => {
            let high = d.saturating_add(i64::try_from(spread_ns).unwrap_or(i64::MAX));
            format!(
                "ClockJump({}, \"{}..{}\")",
                target(t),
                format_signed_duration_ron(*d),
                format_signed_duration_ron(high)
            )
        }
        FaultAction::ClockJump(t, d) => {
            format!(
                "ClockJump({}, \"{}\")",
                target(t),
                format_signed_duration_ron(*d)
            )
        }
        FaultAction::ClockDrift(t, ppm) => format!("ClockDrift({}, {ppm})", target(t)),
        FaultAction::Resign(t) => format!("Resign({})", target(t)),
        FaultAction::ConfChange(t, change) => {
            format!("ConfChange({}, {})", target(t), member_change(change))
        }
        FaultAction::SlowDisk(t, d) => format!("SlowDisk({}, {})", target(t), length(*d)),
        FaultAction::Loss(ppm) => format!("Loss({})", probability(*ppm)),
        FaultAction::Duplicate(ppm) => format!("Duplicate({})", probability(*ppm)),
    }
}

fn partition(shape: &PartitionShape) -> String {
    match shape {
        PartitionShape::Groups(groups) => {
            let groups: Vec<String> = groups
                .iter()
                .map(|group| {
                    let members: Vec<String> = group.iter().map(u32::to_string).collect();
                    format!("[{}]", members.join(", "))
                })
                .collect();
            format!("Groups([{}])", groups.join(", "))
        }
        PartitionShape::Isolate(t) => format!("Isolate({})", target(t)),
        PartitionShape::MajorityMinority(t) => format!("MajorityMinority({})", target(t)),
        PartitionShape::OneWay { from, to } => {
            format!("OneWay(from: {}, to: {})", target(from), target(to))
        }
        PartitionShape::CutLink(a, b) => format!("CutLink({}, {})", target(a), target(b)),
        PartitionShape::Bridge(t) => format!("Bridge({})", target(t)),
    }
}

fn member_change(change: &MemberChange) -> String {
    match change {
        MemberChange::Add(m) => format!("Add({m})"),
        MemberChange::Remove(m) => format!("Remove({m})"),
        MemberChange::AddLearner(m) => format!("AddLearner({m})"),
        MemberChange::Promote(m) => format!("Promote({m})"),
    }
}

fn target(target: &Target) -> String {
    match target {
        Target::Leader => "Leader".to_string(),
        Target::Follower => "Follower".to_string(),
        Target::Node(index) => format!("Node({index})"),
        Target::Random => "Random".to_string(),
        Target::Minority => "Minority".to_string(),
        Target::Service => "Service".to_string(),
        Target::ServiceMember(index) => format!("ServiceMember({index})"),
        Target::ServiceLeader => "ServiceLeader".to_string(),
        Target::ServiceFollower => "ServiceFollower".to_string(),
        Target::ServiceFollowers => "ServiceFollowers".to_string(),
        Target::ServiceQuorum => "ServiceQuorum".to_string(),
        Target::ServiceOfLeader => "ServiceOfLeader".to_string(),
        Target::AllCrashed => "AllCrashed".to_string(),
        Target::All => "All".to_string(),
    }
}

fn expect(expect: &Expect) -> String {
    match expect {
        Expect::Safe => "Safe".to_string(),
        Expect::Violates(invariants) => {
            let names: Vec<&str> = invariants.iter().map(|inv| inv.name()).collect();
            format!("Violates([{}])", names.join(", "))
        }
    }
}

fn nemesis(n: &splitbrain_sim::nemesis::NemesisConfig) -> String {
    let mut parts = Vec::new();
    if n.kinds_listed {
        let kinds: Vec<String> = n.kinds.iter().map(|k| format!("{k:?}")).collect();
        parts.push(format!("kinds: [{}]", kinds.join(", ")));
    }
    if n.targets != splitbrain_sim::nemesis::NemesisTargets::Any {
        parts.push(format!("targets: {:?}", n.targets));
    }
    parts.push(format!(
        "mean_interval: {}, fault_duration: ({}, {}), start: {}, quiet: {}, max_clock_jump: {}, max_drift_ppm: {}, max_loss: {}, max_fsync: {}, swarm: {}",
        duration(n.mean_interval_ns),
        duration(n.fault_duration_ns.0),
        duration(n.fault_duration_ns.1),
        duration(n.start_ns),
        duration(n.quiet_ns),
        duration(n.max_clock_jump_ns),
        n.max_drift_ppm,
        probability(n.max_loss_ppm),
        duration(n.max_fsync_ns),
        n.swarm
    ));
    // Without swarm mode the ranges are never drawn from, and a scenario may not give them.
    if n.swarm {
        parts.push(format!("swarm_ranges: {}", swarm_ranges(&n.swarm_ranges)));
    }
    format!("({})", parts.join(", "))
}

fn swarm_ranges(r: &splitbrain_sim::nemesis::SwarmRanges) -> String {
    let durations = |(low, high): (u64, u64)| format!("({}, {})", duration(low), duration(high));
    let mut out = format!(
        "(mean_interval: {}, longest_fault: {}, max_loss: ({}, {}), max_clock_jump: {}, max_drift_ppm: ({}, {}), max_fsync: {}",
        durations(r.mean_interval_ns),
        durations(r.longest_fault_ns),
        probability(r.max_loss_ppm.0),
        probability(r.max_loss_ppm.1),
        durations(r.max_clock_jump_ns),
        r.max_drift_ppm.0,
        r.max_drift_ppm.1,
        durations(r.max_fsync_ns),
    );
    if let Some(latency) = r.latency_ns {
        out.push_str(&format!(", latency: {}", durations(latency)));
    }
    out.push(')');
    out
}
