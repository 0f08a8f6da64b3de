//! [`Scenario`]: a validated scenario, what it expects ([`Expect`], [`Objective`]), its
//! designs ([`Design`]), and what it derives for a run (a seed's faults, fewer members, a
//! chosen algorithm).

use crate::error::{ErrorKind, MAX_BROADCAST_NODES, MAX_NODES};
use crate::validate;
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_sim::duration::format_duration_ron;
use splitbrain_sim::{nemesis, FaultSpec, Invariant, SimConfig, StreamConfig, Transport};
use std::collections::BTreeSet;

/// `expect_rate` left out: the outcome matches `expect` on every seed.
pub const EVERY_SEED_PPM: u32 = 1_000_000;

/// A validated scenario: what to run, with which algorithm, and what the run should show.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The scenario's `name`, else its file's stem.
    pub name: String,
    /// Seed, duration, members, network, clocks, workload, fencing, faults, liveness bound.
    pub sim: SimConfig,
    /// The algorithm and its settings.
    pub algorithm: AlgorithmConfig,
    /// Named designs for `compare` (empty when the scenario lists none).
    pub designs: Vec<Design>,
    /// Whether the file sets `network.transport`. Then `sim.network.transport` is that
    /// transport, and every design that does not set its own, and every algorithm named on
    /// the command line, runs on it; else each runs on its own algorithm's default
    /// ([`default_transport`]), and `sim.network.transport` is the scenario's algorithm's.
    pub transport_explicit: bool,
    /// The safety outcome the scenario expects.
    pub expect: Expect,
    /// The share of seeds, in parts per million, on which the outcome matches `expect`, as
    /// the file states it (`expect_rate`): [`EVERY_SEED_PPM`] unless the scenario shows its
    /// point on some seeds only (a hunt's scenario, whose failing seeds are the point).
    pub expect_rate_ppm: u32,
    /// Random faults drawn per seed; `None` when the scenario has only explicit faults.
    pub nemesis: Option<splitbrain_sim::nemesis::NemesisConfig>,
    /// A recovery-time objective (its start-up delay is also in `sim.startup_delay_ns`).
    pub objective: Option<Objective>,
    /// Safety properties of the caller's own, checked in every run of this scenario besides
    /// the built-in invariants and the algorithm's own ([`Algorithm::properties`]). A scenario
    /// file cannot state code: empty when read, set from Rust (`harness::Hunt::property`).
    ///
    /// [`Algorithm::properties`]: splitbrain_algorithms::Algorithm::properties
    pub properties: splitbrain_sim::Properties,
    /// The ranges of the explicit faults' times and lengths (`at: "20s..40s"`): empty when
    /// every fault is fixed, else one per fault of `sim.faults`, in the same order, each
    /// quantity there at the low end of its range. [`Scenario::materialize`] draws them.
    pub fault_spreads: Vec<splitbrain_sim::FaultSpread>,
    /// What the nemesis drew for this seed (its kinds, weights and rates), once
    /// [`Scenario::materialize`] drew it; `None` before, and without a nemesis. Written as a
    /// comment in the scenario's RON (a reproducer says what its seed drew), never read back.
    pub nemesis_drew: Option<nemesis::Drawn>,
}

impl Scenario {
    /// The scenario as one seed runs it: that seed, its nemesis drawn into explicit faults.
    /// Every command that runs a seed (`run`, `hunt`, `compare`, `sweep`) runs this.
    pub fn materialize(&self, seed: u64) -> Scenario {
        self.materialize_with(seed, None)
    }

    /// [`Scenario::materialize`] with `nemesis_faults` in place of the faults the nemesis
    /// draws for `seed` (a guided hunt's mutant); everything else the seed draws (ranged
    /// faults, a swarm seed's latency and the draw itself) stays as `materialize` has it.
    /// `None` runs the seed's own faults: exactly `materialize`.
    pub fn materialize_with(&self, seed: u64, nemesis_faults: Option<&[FaultSpec]>) -> Scenario {
        let mut s = self.clone();
        s.sim.seed = seed;
        // One seed matches or not: a reproducer written from it states no share of seeds.
        s.expect_rate_ppm = EVERY_SEED_PPM;
        // Ranged faults first, while `sim.faults` still lines up with `fault_spreads`: each
        // drawn from its own stream, the same for every algorithm at this seed.
        for (index, spread) in std::mem::take(&mut s.fault_spreads).iter().enumerate() {
            if let Some(fault) = s.sim.faults.get_mut(index) {
                *fault = spread.draw(fault, seed, index);
            }
        }
        if let Some(mut config) = s.nemesis.take() {
            // Derived here, the one place every run's schedule is drawn: whatever algorithm
            // the scenario runs now (compare swaps it), a service is struck only if it has one.
            config.strike_service = s.algorithm.has_service();
            config.clustered_service = s.algorithm.service_processes() > 1;
            let schedule = nemesis::generate(&config, seed, s.sim.members, s.sim.duration_ns);
            // A latency swarm mode drew is the run's own network setting: written out with
            // it, a reproducer runs it without the nemesis.
            if let Some(latency) = schedule.latency(&config) {
                s.sim.network.default.latency = latency;
            }
            s.nemesis_drew = Some(schedule.drawn(config.swarm));
            match nemesis_faults {
                Some(faults) => s.sim.faults.extend_from_slice(faults),
                None => s.sim.faults.extend(schedule.faults),
            }
        } else if let Some(faults) = nemesis_faults {
            s.sim.faults.extend_from_slice(faults);
        }
        // Stable: faults at the same time keep their order, so the run is unchanged.
        s.sim.faults.sort_by_key(|f| f.at_ns);
        s
    }

    /// What the modeled systems do to the settings as written (a negotiated session, a
    /// raised TTL), for the algorithm and then each design (`design NAME: ...`). Every command
    /// shows them: the settings a user wrote are never silently not the ones that run.
    pub fn adjustments(&self) -> Vec<String> {
        let designs = self.designs.iter().flat_map(|d| {
            d.algorithm
                .adjustments()
                .into_iter()
                .map(move |a| format!("design {}: {a}", d.name))
        });
        self.algorithm
            .adjustments()
            .into_iter()
            .chain(designs)
            .collect()
    }

    /// The programs the scenario starts (the external nodes' commands), its algorithm's and
    /// then its designs', each once ([`programs_of`]).
    pub fn programs(&self) -> Vec<Vec<String>> {
        let designs = self.designs.iter().map(|d| &d.algorithm);
        programs_of(std::iter::once(&self.algorithm).chain(designs))
    }

    /// What in the scenario names the coordination service, in words (`the fault at 30s`,
    /// `` `clocks.service` ``), if anything does. An algorithm without a
    /// service cannot run such a scenario as written: the engine would skip what names it.
    pub fn service_use(&self) -> Option<String> {
        let strikes =
            |f: &&splitbrain_sim::FaultSpec| f.action.targets().iter().any(|t| t.is_service());
        let fault = self.sim.faults.iter().find(strikes);
        if let Some(fault) = fault {
            return Some(format!("the fault at {}", format_duration_ron(fault.at_ns)));
        }
        if self.sim.clocks.service.is_some() {
            return Some("`clocks.service`".to_string());
        }
        self.sim
            .disk
            .service
            .is_some()
            .then(|| "`disk.service`".to_string())
    }

    /// Refuses to run `algorithm` (chosen with the command-line `flag`, `--algorithm` or
    /// `--algorithms`) on this scenario as `check` would refuse it in the file: when the
    /// scenario names a service the algorithm does not have, has more nodes than the
    /// algorithm may run, or the run would handle absurdly many events. A message and a hint.
    pub fn refuse_algorithm(&self, algorithm: &AlgorithmConfig, flag: &str) -> Result<(), Refused> {
        self.refuse_without_service(algorithm, flag)?;
        self.refuse_unknown_messages(algorithm)?;
        // As `nodes` is checked for the scenario's own algorithm: one whose members send to
        // every other member runs at most `MAX_BROADCAST_NODES` (its tables and messages
        // grow with the square of the cluster).
        let nodes = self.sim.members as u64;
        if nodes > max_members(algorithm) {
            let kind = ErrorKind::TooManyNodesForBroadcast {
                nodes,
                algorithm: algorithm.name(),
            };
            return Err(Refused {
                message: kind.to_string(),
                hint: kind.hint().unwrap_or_default(),
            });
        }
        // On the transport the algorithm would run on here.
        let (sim, nemesis_faults) = validate::sim_for_estimate(&self.with_algorithm(algorithm));
        match validate::work_problem(algorithm, (&sim, nemesis_faults), false, "algorithm") {
            Some((_, kind)) => Err(Refused {
                message: format!("with {}, {kind}", algorithm.name()),
                hint: kind.hint().unwrap_or_default(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses `algorithm` when a fault's trigger waits for a message type it never sends
    /// (the fault would never fire), as validation refuses it for the scenario's own.
    fn refuse_unknown_messages(&self, algorithm: &AlgorithmConfig) -> Result<(), Refused> {
        let Some(names) = algorithm.message_names() else {
            return Ok(());
        };
        for fault in &self.sim.faults {
            let Some(splitbrain_sim::Trigger {
                event: splitbrain_sim::TriggerEvent::Sent(found),
                ..
            }) = &fault.after
            else {
                continue;
            };
            if !names.contains(&found.as_str()) {
                let kind = ErrorKind::UnknownMessageType {
                    found: found.clone(),
                    algorithm: algorithm.name().to_string(),
                    design: None,
                    expected: names.iter().map(|n| n.to_string()).collect(),
                };
                return Err(Refused {
                    message: format!(
                        "the fault at {} waits for a `{found}` message, which {} never sends",
                        format_duration_ron(fault.at_ns),
                        algorithm.name()
                    ),
                    hint: kind.hint().unwrap_or_default(),
                });
            }
        }
        Ok(())
    }

    fn refuse_without_service(
        &self,
        algorithm: &AlgorithmConfig,
        flag: &str,
    ) -> Result<(), Refused> {
        match self.service_use() {
            Some(what) if !algorithm.has_service() => Err(Refused {
                message: format!(
                    "{what} names the coordination service, which {} does not have",
                    algorithm.name()
                ),
                hint: format!(
                    "only {} have a service: name those with {flag}, or make the fault strike a \
                     node instead",
                    algorithms_with_service_cli()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// The transport `algorithm` runs on in this scenario: `network.transport` when the
    /// file sets it, else the algorithm's default ([`default_transport`]).
    pub fn transport_for(&self, algorithm: &AlgorithmConfig) -> Transport {
        if self.transport_explicit {
            self.sim.network.transport
        } else {
            default_transport(algorithm)
        }
    }

    /// The scenario as `design` runs it: the design's algorithm (adapted to the cluster,
    /// [`AlgorithmConfig::for_members`]) in place of the scenario's, on the design's transport.
    /// What `compare`, `sweep` and `run --design` run for a design.
    pub fn with_design(&self, design: &Design) -> Scenario {
        self.with_algorithm_on(&design.algorithm, design.transport)
    }

    /// The scenario with `algorithm` in place of its own, on the transport it runs on here
    /// ([`Scenario::transport_for`]): what `compare --algorithms` and `run --algorithm` run for
    /// an algorithm named on the command line.
    pub fn with_algorithm(&self, algorithm: &AlgorithmConfig) -> Scenario {
        self.with_algorithm_on(algorithm, self.transport_for(algorithm))
    }

    /// The scenario running `algorithm` (adapted to the cluster) on `transport`, which is
    /// then the scenario's own (`transport_explicit`): written out, it reads back the same.
    pub fn with_algorithm_on(&self, algorithm: &AlgorithmConfig, transport: Transport) -> Scenario {
        let mut s = self.clone();
        s.algorithm = algorithm
            .for_members(s.sim.members)
            .unwrap_or_else(|| algorithm.clone());
        s.sim.network.transport = transport;
        s.transport_explicit = true;
        s
    }

    /// The same scenario with `members` nodes: the algorithm adapted
    /// ([`AlgorithmConfig::for_members`]), faults that target a node past the last one (or
    /// whose trigger watches one) dropped,
    /// partition groups trimmed to the nodes that remain, and per-node clock and link settings
    /// past the last node dropped. `None` if the algorithm cannot run with that many.
    pub fn resized(&self, members: usize) -> Option<Scenario> {
        if members as u64 > max_members(&self.algorithm) {
            return None;
        }
        let n = u32::try_from(members).ok()?;
        let mut s = self.clone();
        s.algorithm = s.algorithm.for_members(members)?;
        s.sim.members = members;
        let beyond =
            |t: &splitbrain_sim::Target| matches!(t, splitbrain_sim::Target::Node(i) if *i >= n);
        // A trigger watching a node that is gone would never fire: its fault goes too.
        let watches_beyond = |f: &splitbrain_sim::FaultSpec| matches!(&f.after, Some(t) if matches!(t.by, splitbrain_sim::Actor::Node(i) if i >= n));
        let kept: Vec<bool> = (s.sim.faults.iter())
            .map(|f| !f.action.targets().into_iter().any(beyond) && !watches_beyond(f))
            .collect();
        let mut keep = kept.iter().copied();
        s.sim.faults.retain(|_| keep.next().unwrap_or(true));
        if !s.fault_spreads.is_empty() {
            let mut keep = kept.iter().copied();
            s.fault_spreads.retain(|_| keep.next().unwrap_or(true));
        }
        for fault in &mut s.sim.faults {
            if let splitbrain_sim::FaultAction::Partition(splitbrain_sim::PartitionShape::Groups(
                groups,
            )) = &mut fault.action
            {
                groups.iter_mut().for_each(|g| g.retain(|i| *i < n));
                groups.retain(|g| !g.is_empty());
            }
        }
        s.sim.clocks.per_node.retain(|c| c.node < n);
        s.sim.network.overrides.retain(|o| o.from < n && o.to < n);
        Some(s)
    }
}

/// The largest cluster `algorithm` may run ([`MAX_BROADCAST_NODES`] when its members send to
/// every other member, else [`MAX_NODES`]).
pub fn max_members(algorithm: &AlgorithmConfig) -> u64 {
    if algorithm.sends_to_every_member() {
        MAX_BROADCAST_NODES
    } else {
        MAX_NODES
    }
}

/// The transport `algorithm` runs on unless a scenario says otherwise: `Stream` with the
/// default timings for the algorithms that model a client's connection to a service (etcd,
/// ZooKeeper), else `Datagram`.
pub fn default_transport(algorithm: &AlgorithmConfig) -> Transport {
    if algorithm.stream_by_default() {
        Transport::Stream(StreamConfig::default())
    } else {
        Transport::Datagram
    }
}

/// The command-line names of the algorithms with a coordination service: `etcd, ...`.
fn algorithms_with_service_cli() -> String {
    let names: Vec<&str> = splitbrain_algorithms::algorithms()
        .into_iter()
        .filter(|e| e.has_service && e.runs_with_defaults())
        .map(|e| e.name)
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// A design `compare` runs under the scenario's faults, network and seeds: an algorithm with
/// its own settings, under a name that labels its results.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    /// The label of the design's results (a word of a-z, 0-9, `-` and `_`).
    pub name: String,
    /// The algorithm with the design's settings.
    pub algorithm: AlgorithmConfig,
    /// The transport the design runs on, resolved when the scenario is read: the design's own
    /// `transport`, else the scenario's `network.transport` if the file sets it, else the
    /// algorithm's default ([`default_transport`]).
    pub transport: Transport,
}

/// The programs runs and hunts of `algorithms` may start, as command lines, each once, in
/// the order first met ([`AlgorithmConfig::programs_with_reference`]: a reference too). A scenario that starts programs is code: the
/// commands print these before running one, and reproducers name them.
pub fn programs_of<'a>(
    algorithms: impl IntoIterator<Item = &'a AlgorithmConfig>,
) -> Vec<Vec<String>> {
    let mut programs: Vec<Vec<String>> = Vec::new();
    for program in algorithms
        .into_iter()
        .flat_map(AlgorithmConfig::programs_with_reference)
    {
        if !programs.contains(&program) {
            programs.push(program);
        }
    }
    programs
}

/// A recovery-time objective: how fast a failover must complete, and how long a new leader
/// takes to start serving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Objective {
    /// Every failover (and, over many seeds, the 99th percentile) must recover within this.
    pub failover_p99_ns: Option<u64>,
    /// A new leader's start-up time before it serves.
    pub startup_delay_ns: u64,
}

/// The safety outcome a scenario expects (liveness is judged separately, by exit code 3).
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    /// No safety invariant is violated.
    Safe,
    /// Exactly these safety invariants are violated (a scenario that demonstrates a flaw).
    /// Never empty, never `Liveness`.
    Violates(BTreeSet<Invariant>),
}

/// Why a scenario cannot run an algorithm chosen on the command line (see
/// [`Scenario::refuse_algorithm`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refused {
    /// What is wrong, as one sentence.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}
