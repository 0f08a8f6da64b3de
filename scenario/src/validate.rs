//! Raw scenario file -> validated [`Scenario`] in engine terms. Every rule that a scenario
//! must satisfy is checked here, once; downstream code never re-checks it.
//!
//! Each problem carries the path of the offending value (see [`super::locate`]) so that the
//! error can point at it. Validation goes on after a problem, so the caller can report the
//! first problem in the file rather than the first one checked.

use super::error::{
    ErrorKind, MAX_DRIFT_PPM, MAX_DURATION_NS, MAX_EXPECTED_EVENTS, MAX_NEMESIS_FAULTS, MAX_NODES,
    MIN_DRIFT_PPM,
};
use super::raw::{
    DurationRange, RawAction, RawActor, RawClocks, RawDesign, RawDisk, RawExpect, RawFault,
    RawInvariant, RawLatency, RawMemberChange, RawNemesis, RawNemesisKind, RawNetwork,
    RawObjective, RawShape, RawSignal, RawSwarmRanges, RawTarget, RawTransport, RawTrigger,
    RawTriggerEvent, ScenarioFile,
};
use super::{Design, Expect, Objective, Scenario, EVERY_SEED_PPM};
use splitbrain_algorithms::{AlgorithmConfig, AlgorithmError, AlgorithmSettings, Cluster};
use splitbrain_sim::duration::{format_duration_ron, format_signed_duration_ron};
use splitbrain_sim::nemesis::{NemesisConfig, NemesisKind, SwarmRanges};
use splitbrain_sim::{
    Actor, ClockConfig, DiskConfig, FaultAction, FaultSpec, FaultSpread, FixedClock, Invariant,
    Latency, LinkConfig, LinkOverride, MemberChange, NetworkConfig, NodeClock, NodeDisk,
    PartitionShape, SignalKind, SimConfig, StreamConfig, Target, Transport, Trigger, TriggerEvent,
    NANOS_PER_MILLI, NANOS_PER_SEC,
};
use std::collections::BTreeSet;

/// The most values `choices.timeouts` may name: each randomized timeout becomes a choice
/// among them, and a systematic search tries each.
pub const MAX_TIMEOUT_CHOICES: u32 = 16;

pub(crate) const DEFAULT_SEED: u64 = 0;
pub(crate) const DEFAULT_DURATION_NS: u64 = 60 * NANOS_PER_SEC;
pub(crate) const DEFAULT_NODES: u64 = 5;
pub(crate) const DEFAULT_WRITE_EVERY_NS: u64 = 100 * NANOS_PER_MILLI;
pub(crate) const DEFAULT_FENCING: bool = true;

type AlgorithmProblem = splitbrain_algorithms::Problem<AlgorithmError>;

/// One thing wrong with a scenario, and the path of the value it is about.
#[derive(Debug)]
pub(crate) struct Problem {
    pub path: String,
    pub kind: ErrorKind,
}

/// The longest design name: with `failover_cdf_` and `-unfenced.json` (27 bytes) around it,
/// a chart's file name stays within 255 bytes, with room to spare.
pub const MAX_DESIGN_NAME_BYTES: usize = 200;

/// Validates a raw file and lowers it to engine terms; `default_name` names unnamed scenarios.
pub(crate) fn lower(file: ScenarioFile, default_name: &str) -> Result<Scenario, Vec<Problem>> {
    let mut check = Checker {
        problems: Vec::new(),
        nodes: DEFAULT_NODES,
        has_service: false,
        service_processes: 0,
        service_uses: Vec::new(),
    };
    let scenario = check.scenario(file, default_name);
    if check.problems.is_empty() {
        Ok(scenario)
    } else {
        Err(check.problems)
    }
}

struct Checker {
    problems: Vec<Problem>,
    /// The cluster size as written (possibly out of range, which is reported once).
    nodes: u64,
    /// Whether the algorithm runs a coordination service that `Service` can name.
    has_service: bool,
    /// How many processes that service runs as (`ServiceMember(i)` names one).
    service_processes: usize,
    /// Where the scenario names the service (`target \`Service\``, `clocks.service`, ...):
    /// the path and the words for it, checked against every design.
    service_uses: Vec<(String, &'static str)>,
}

impl Checker {
    fn problem(&mut self, path: impl Into<String>, kind: ErrorKind) {
        self.problems.push(Problem {
            path: path.into(),
            kind,
        });
    }

    fn scenario(&mut self, file: ScenarioFile, default_name: &str) -> Scenario {
        let duration_ns = file.duration.map_or(DEFAULT_DURATION_NS, |d| d.0);
        if duration_ns == 0 {
            self.problem("duration", ErrorKind::ZeroDuration);
        }
        self.bounded(duration_ns, "duration");
        self.nodes = file.nodes.unwrap_or(DEFAULT_NODES);
        if !(1..=MAX_NODES).contains(&self.nodes) {
            self.problem("nodes", ErrorKind::NodesOutOfRange { nodes: self.nodes });
        }
        let problems_before_algorithm = self.problems.len();
        let (algorithm, algorithm_name) = self.algorithm(file.algorithm);
        if self.nodes <= MAX_NODES && self.nodes > super::max_members(&algorithm) {
            let kind = ErrorKind::TooManyNodesForBroadcast {
                nodes: self.nodes,
                algorithm: algorithm_name,
            };
            self.problem("nodes", kind);
        }
        // The modeled service is process `nodes`: `Service` names it.
        self.has_service = algorithm.has_service();
        self.service_processes = algorithm.service_processes();
        // Timings the algorithm's own rules refused (a lease longer than a day) are not
        // reported twice.
        if self.problems.len() == problems_before_algorithm {
            for (name, ns) in algorithm.timings() {
                self.bounded(ns, &format!("algorithm.{name}"));
            }
        }
        let transport_explicit = file.network.as_ref().is_some_and(|n| n.transport.is_some());
        let network = self.network(file.network, &algorithm);
        // A design without its own transport runs on the one the file sets for all, else on
        // its algorithm's default.
        let shared_transport = transport_explicit.then_some(network.transport);
        let designs = file
            .designs
            .into_iter()
            .enumerate()
            .map(|(index, design)| self.design(design, index, shared_transport))
            .collect::<Vec<_>>();
        self.distinct_designs(&designs);
        let clocks = self.clocks(file.clocks, algorithm_name);
        let disk = self.disk(file.disk, algorithm_name);
        let processing = file.processing.map(|l| self.latency(l, "processing"));
        let file_write_every_given = file
            .workload
            .as_ref()
            .is_some_and(|w| w.write_every.is_some());
        let write_every_ns = file
            .workload
            .and_then(|w| w.write_every)
            .map_or(DEFAULT_WRITE_EVERY_NS, |d| d.0);
        self.bounded(write_every_ns, "workload.write_every");
        let fencing = file
            .resource
            .and_then(|r| r.fencing)
            .unwrap_or(DEFAULT_FENCING);
        let (timeout_choices, chosen) = file
            .choices
            .map_or((0, Vec::new()), |c| (c.timeouts.unwrap_or(0), c.take));
        if timeout_choices == 1 || timeout_choices > MAX_TIMEOUT_CHOICES {
            self.problem(
                "choices.timeouts",
                ErrorKind::TimeoutChoicesOutOfRange {
                    given: timeout_choices,
                },
            );
        }
        let liveness_bound_ns = file.liveness.and_then(|l| l.bound).map(|d| d.0);
        if liveness_bound_ns == Some(0) {
            self.problem("liveness.bound", ErrorKind::ZeroLivenessBound);
        }
        if let Some(bound_ns) = liveness_bound_ns {
            self.bounded(bound_ns, "liveness.bound");
        }
        let (faults, spreads): (Vec<FaultSpec>, Vec<FaultSpread>) = file
            .faults
            .into_iter()
            .enumerate()
            .map(|(index, fault)| self.fault(fault, index, duration_ns, algorithm_name))
            .unzip();
        self.trigger_messages(&faults, &algorithm, &designs);
        // Empty when every fault is fixed: most scenarios, and every materialised one.
        let fault_spreads = if spreads.iter().all(FaultSpread::is_fixed) {
            Vec::new()
        } else {
            spreads
        };
        self.designs_have_the_service(&designs);
        let expect = self.expect(file.expect, &algorithm.property_names());
        let expect_rate_ppm = file.expect_rate.map_or(EVERY_SEED_PPM, |rate| {
            self.probability(rate, "expect_rate", "expect_rate")
        });
        let nemesis = file.nemesis.map(|raw| {
            // The default kinds are for any algorithm: those that strike nothing here are
            // drawn in vain, but only kinds the author listed are refused.
            let kinds_written = raw.kinds.is_some();
            let config = self.nemesis(raw, duration_ns);
            if kinds_written {
                self.nemesis_strikes(&config, &algorithm, &designs);
            }
            config
        });
        let objective = file.objective.map(|raw| self.objective(raw));
        let startup_delay_ns = objective.as_ref().map_or(0, |o| o.startup_delay_ns);
        let scenario = Scenario {
            name: file.name.unwrap_or_else(|| default_name.to_string()),
            sim: SimConfig {
                seed: file.seed.unwrap_or(DEFAULT_SEED),
                duration_ns,
                members: usize::try_from(self.nodes).unwrap_or(usize::MAX),
                network,
                clocks,
                disk,
                processing,
                write_every_ns,
                fencing,
                startup_delay_ns,
                faults,
                liveness_bound_ns,
                limits: splitbrain_sim::RunLimits::default(),
                timeout_choices,
                chosen,
            },
            algorithm,
            designs,
            transport_explicit,
            expect,
            expect_rate_ppm,
            nemesis,
            objective,
            properties: splitbrain_sim::Properties::new(),
            fault_spreads,
            nemesis_drew: None,
        };
        self.work(&scenario, file_write_every_given);
        scenario
    }

    /// `ns`, reported at `path` when longer than [`MAX_DURATION_NS`].
    fn bounded(&mut self, ns: u64, path: &str) {
        if ns > MAX_DURATION_NS {
            self.problem(path, ErrorKind::DurationTooLong { ns });
        }
    }

    /// A clock offset or jump, reported at `path` when beyond [`MAX_DURATION_NS`] either way.
    fn bounded_step(&mut self, ns: i64, path: &str) {
        if ns.unsigned_abs() > MAX_DURATION_NS {
            self.problem(path, ErrorKind::ClockStepTooLarge { ns });
        }
    }

    /// Refuses a run whose expected work is absurd (see
    /// [`splitbrain_algorithms::expected_events`]), for the algorithm and for each design
    /// (`compare` runs them all); reported at the shortest timing.
    fn work(&mut self, scenario: &Scenario, write_every_given: bool) {
        if scenario.sim.duration_ns == 0 || !self.problems.is_empty() {
            return; // the estimate means nothing for a scenario already refused
        }
        let (sim, nemesis_faults) = sim_for_estimate(scenario);
        let designs = scenario.designs.iter().enumerate().map(|(i, d)| {
            // Each design on its own transport.
            let mut sim = sim.clone();
            sim.network.transport = d.transport;
            (&d.algorithm, sim, format!("designs[{i}].algorithm"))
        });
        let own = (&scenario.algorithm, sim.clone(), "algorithm".to_string());
        for (algorithm, sim, at) in std::iter::once(own).chain(designs) {
            let estimate = (&sim, nemesis_faults);
            if let Some((path, kind)) = work_problem(algorithm, estimate, write_every_given, &at) {
                self.problem(path, kind);
            }
        }
    }

    fn nemesis(&mut self, raw: RawNemesis, duration_ns: u64) -> NemesisConfig {
        let d = NemesisConfig::default();
        let kinds_listed = raw.kinds.is_some();
        let kinds = raw.kinds.map_or(d.kinds.clone(), |kinds| {
            kinds.into_iter().map(nemesis_kind).collect()
        });
        let mean_interval_ns = raw.mean_interval.map_or(d.mean_interval_ns, |t| t.0);
        if mean_interval_ns == 0 {
            self.problem("nemesis.mean_interval", ErrorKind::ZeroMeanInterval);
        }
        let fault_duration_ns = raw
            .fault_duration
            .map_or(d.fault_duration_ns, |(low, high)| (low.0, high.0));
        if fault_duration_ns.0 > fault_duration_ns.1 {
            let (low_ns, high_ns) = fault_duration_ns;
            self.problem(
                "nemesis.fault_duration",
                ErrorKind::FaultDurationRangeBackwards { low_ns, high_ns },
            );
        }
        let start_ns = raw.start.map_or(d.start_ns, |t| t.0);
        let quiet_ns = raw.quiet.map_or(d.quiet_ns, |t| t.0);
        if start_ns.saturating_add(quiet_ns) >= duration_ns {
            self.problem(
                "nemesis",
                ErrorKind::NemesisLeavesNoTime {
                    start_ns,
                    quiet_ns,
                    duration_ns,
                },
            );
        }
        let max_drift_ppm = raw.max_drift_ppm.unwrap_or(d.max_drift_ppm);
        if max_drift_ppm > 999_999 {
            self.problem(
                "nemesis.max_drift_ppm",
                ErrorKind::DriftOutOfRange {
                    drift_ppm: i64::from(max_drift_ppm),
                },
            );
        }
        let max_clock_jump_ns = raw.max_clock_jump.map_or(d.max_clock_jump_ns, |t| t.0);
        let max_fsync_ns = raw.max_fsync.map_or(d.max_fsync_ns, |t| t.0);
        let paths = [
            ("nemesis.mean_interval", mean_interval_ns),
            ("nemesis.fault_duration[0]", fault_duration_ns.0),
            ("nemesis.fault_duration[1]", fault_duration_ns.1),
            ("nemesis.start", start_ns),
            ("nemesis.quiet", quiet_ns),
            ("nemesis.max_clock_jump", max_clock_jump_ns),
            ("nemesis.max_fsync", max_fsync_ns),
        ];
        for (path, ns) in paths {
            self.bounded(ns, path);
        }
        let window_ns = duration_ns.saturating_sub(start_ns.saturating_add(quiet_ns));
        let expected = window_ns.checked_div(mean_interval_ns).unwrap_or(0);
        if expected > MAX_NEMESIS_FAULTS {
            let kind = ErrorKind::TooManyNemesisFaults {
                expected,
                mean_interval_ns,
                window_ns,
            };
            self.problem("nemesis.mean_interval", kind);
        }
        let max_loss_ppm = match raw.max_loss {
            Some(p) => self.probability(p, "the nemesis' max_loss", "nemesis.max_loss"),
            None => d.max_loss_ppm,
        };
        let mut config = NemesisConfig {
            kinds,
            kinds_listed,
            targets: raw.targets.unwrap_or_default(),
            mean_interval_ns,
            fault_duration_ns,
            start_ns,
            quiet_ns,
            max_clock_jump_ns,
            max_drift_ppm,
            max_loss_ppm,
            max_fsync_ns,
            // A scenario with a nemesis hunts in swarm mode unless it says otherwise.
            swarm: raw.swarm.unwrap_or(true),
            swarm_ranges: SwarmRanges::default(),
            // Derived from the algorithm when the schedule is drawn (Scenario::materialize).
            strike_service: false,
            clustered_service: false,
        };
        config.swarm_ranges = self.swarm_ranges(raw.swarm_ranges, &config, window_ns);
        self.nemesis_acts(&config, window_ns);
        config
    }

    /// The ranges swarm mode draws each seed's rates from: as written, else around the
    /// nemesis' own settings, the mean interval kept where a run has room for its faults.
    fn swarm_ranges(
        &mut self,
        raw: Option<RawSwarmRanges>,
        config: &NemesisConfig,
        window_ns: u64,
    ) -> SwarmRanges {
        let mut ranges = SwarmRanges::around(config);
        let fewest_ns = window_ns.div_ceil(MAX_NEMESIS_FAULTS).max(1);
        let (low, high) = ranges.mean_interval_ns;
        let low = low.max(fewest_ns.min(config.mean_interval_ns));
        ranges.mean_interval_ns = (low, high.min(window_ns.max(config.mean_interval_ns)));
        let Some(raw) = raw else {
            return ranges;
        };
        if !config.swarm {
            self.problem("nemesis.swarm_ranges", ErrorKind::SwarmRangesWithoutSwarm);
        }
        let interval_written = raw.mean_interval.is_some();
        let durations = [
            (
                raw.mean_interval,
                "mean_interval",
                &mut ranges.mean_interval_ns,
            ),
            (
                raw.longest_fault,
                "longest_fault",
                &mut ranges.longest_fault_ns,
            ),
            (
                raw.max_clock_jump,
                "max_clock_jump",
                &mut ranges.max_clock_jump_ns,
            ),
            (raw.max_fsync, "max_fsync", &mut ranges.max_fsync_ns),
        ];
        for (range, setting, into) in durations {
            if let Some((low, high)) = range {
                *into = self.swarm_duration_range((low.0, high.0), setting);
            }
        }
        if let Some((low, high)) = raw.latency {
            ranges.latency_ns = Some(self.swarm_duration_range((low.0, high.0), "latency"));
        }
        if let Some((low, high)) = raw.max_loss {
            let path = "nemesis.swarm_ranges.max_loss";
            let low = self.probability(low, "the swarm range of max_loss", path);
            let high = self.probability(high, "the swarm range of max_loss", path);
            ranges.max_loss_ppm = self.swarm_range((low, high), "max_loss", |ppm| {
                format!("{}", f64::from(ppm) / 1e6)
            });
        }
        if let Some(range) = raw.max_drift_ppm {
            let drift = self.swarm_range(range, "max_drift_ppm", |ppm| ppm.to_string());
            if drift.1 > 999_999 {
                self.problem(
                    "nemesis.swarm_ranges.max_drift_ppm",
                    ErrorKind::DriftOutOfRange {
                        drift_ppm: i64::from(drift.1),
                    },
                );
            }
            ranges.max_drift_ppm = drift;
        }
        if interval_written {
            self.swarm_interval_fits(ranges.mean_interval_ns, window_ns);
        }
        ranges
    }

    /// A range of durations as written, refused if backwards or if an end is beyond
    /// [`MAX_DURATION_NS`] (each end reported at itself).
    fn swarm_duration_range(&mut self, range: (u64, u64), setting: &'static str) -> (u64, u64) {
        for (end, ns) in [range.0, range.1].into_iter().enumerate() {
            self.bounded(ns, &format!("nemesis.swarm_ranges.{setting}[{end}]"));
        }
        self.swarm_range(range, setting, format_duration_ron)
    }

    /// A range as written, refused if backwards.
    fn swarm_range<T: PartialOrd + Copy>(
        &mut self,
        (low, high): (T, T),
        setting: &'static str,
        show: impl Fn(T) -> String,
    ) -> (T, T) {
        if low > high {
            let kind = ErrorKind::SwarmRangeBackwards {
                setting,
                low: show(low),
                high: show(high),
            };
            self.problem(format!("nemesis.swarm_ranges.{setting}"), kind);
        }
        (low, high)
    }

    /// Refuses a mean-interval range no seed can run: zero, too dense to run, or too rare
    /// for one fault per run.
    fn swarm_interval_fits(&mut self, (low_ns, high_ns): (u64, u64), window_ns: u64) {
        let path = "nemesis.swarm_ranges.mean_interval";
        if low_ns == 0 {
            self.problem(path, ErrorKind::ZeroMeanInterval);
            return;
        }
        let expected = window_ns / low_ns;
        if expected > MAX_NEMESIS_FAULTS {
            let kind = ErrorKind::TooManyNemesisFaults {
                expected,
                mean_interval_ns: low_ns,
                window_ns,
            };
            self.problem(path, kind);
        } else if window_ns > 0 && high_ns > window_ns {
            let kind = ErrorKind::NemesisTooRare {
                mean_interval_ns: high_ns,
                window_ns,
            };
            self.problem(path, kind);
        }
    }

    /// Refuses listed nemesis kinds that strike nothing in any algorithm the scenario runs
    /// (its own and its designs'): network faults where no message is ever sent (one member, no
    /// service), `Resign` where no algorithm hands over.
    fn nemesis_strikes(
        &mut self,
        config: &NemesisConfig,
        algorithm: &AlgorithmConfig,
        designs: &[Design],
    ) {
        let algorithms = || std::iter::once(algorithm).chain(designs.iter().map(|d| &d.algorithm));
        if config.kinds.contains(&NemesisKind::Resign) && !algorithms().any(|a| a.entry().resigns) {
            let kind = ErrorKind::NemesisResignWithoutHandover {
                algorithm: algorithm.name(),
            };
            self.problem("nemesis.kinds", kind);
        }
        if config.kinds.contains(&NemesisKind::ConfChange)
            && !algorithms().any(|a| a.entry().changes_membership)
        {
            let kind = ErrorKind::NemesisConfChangeWithoutMembership {
                algorithm: algorithm.name(),
            };
            self.problem("nemesis.kinds", kind);
        }
        let silent = self.nodes == 1 && !algorithms().any(|a| a.has_service());
        if silent {
            self.nemesis_network_kinds(config);
        }
    }

    /// Refuses the network kinds of a nemesis in a run where no message is ever sent.
    fn nemesis_network_kinds(&mut self, config: &NemesisConfig) {
        if let Some(&kind) = config.kinds.iter().find(|k| k.acts_on_messages()) {
            let kind = ErrorKind::NemesisKindWithoutMessages {
                kind: nemesis_kind_name(kind),
            };
            self.problem("nemesis.kinds", kind);
        }
    }

    /// Refuses a nemesis that can inject nothing: no kinds, no room for its shortest fault,
    /// faults too rare to expect one per run, or a kind whose faults have no size.
    fn nemesis_acts(&mut self, config: &NemesisConfig, window_ns: u64) {
        if config.kinds.is_empty() {
            self.problem("nemesis.kinds", ErrorKind::NemesisWithoutKinds);
        }
        // A fault strikes at least 1 ns after `start` and lasts at least 1 ns
        // (splitbrain_sim::nemesis::generate); it must heal before the quiet tail.
        let shortest_ns = config.fault_duration_ns.0.max(1);
        // With no window at all, `NemesisLeavesNoTime` says so already.
        if window_ns > 0 && shortest_ns.saturating_add(1) > window_ns {
            let kind = ErrorKind::NemesisFaultDoesNotFit {
                shortest_ns,
                window_ns,
            };
            self.problem("nemesis.fault_duration[0]", kind);
        } else if window_ns > 0 && config.mean_interval_ns > window_ns {
            let kind = ErrorKind::NemesisTooRare {
                mean_interval_ns: config.mean_interval_ns,
                window_ns,
            };
            self.problem("nemesis.mean_interval", kind);
        }
        let sizes = [
            (
                NemesisKind::ClockJump,
                "max_clock_jump",
                config.max_clock_jump_ns == 0,
            ),
            (
                NemesisKind::ClockDrift,
                "max_drift_ppm",
                config.max_drift_ppm == 0,
            ),
            (NemesisKind::LossBurst, "max_loss", config.max_loss_ppm == 0),
            (NemesisKind::Duplicate, "max_loss", config.max_loss_ppm == 0),
            (NemesisKind::SlowDisk, "max_fsync", config.max_fsync_ns == 0),
        ];
        let drawn = config.kinds_drawn();
        for (kind, setting, zero) in sizes {
            if zero && drawn.contains(&kind) {
                let kind = ErrorKind::NemesisKindWithoutSize {
                    kind: nemesis_kind_name(kind),
                    setting,
                };
                self.problem(format!("nemesis.{setting}"), kind);
            }
        }
    }

    fn objective(&mut self, raw: RawObjective) -> Objective {
        let failover_p99_ns = raw.failover_p99.map(|t| t.0);
        if failover_p99_ns == Some(0) {
            self.problem("objective.failover_p99", ErrorKind::ZeroFailoverObjective);
        }
        if let Some(ns) = failover_p99_ns {
            self.bounded(ns, "objective.failover_p99");
        }
        let startup_delay_ns = raw.startup_delay.map_or(0, |t| t.0);
        self.bounded(startup_delay_ns, "objective.startup_delay");
        Objective {
            failover_p99_ns,
            startup_delay_ns,
        }
    }

    /// The algorithm's own rules (see `splitbrain_algorithms::Algorithm::lower`), each problem
    /// at its field under `algorithm`.
    fn algorithm(&mut self, settings: AlgorithmSettings) -> (AlgorithmConfig, &'static str) {
        let cluster = Cluster { nodes: self.nodes };
        let (config, problems) = settings.lower(&cluster);
        self.setting_problems(problems, "algorithm");
        let name = config.name();
        (config, name)
    }

    /// An algorithm's broken rules, each at its field under `at` (and its item of a list).
    fn setting_problems(&mut self, problems: Vec<AlgorithmProblem>, at: &str) {
        for problem in problems {
            let mut path = match problem.field {
                "" => at.to_string(),
                field => format!("{at}.{field}"),
            };
            if let Some(item) = problem.error.item() {
                path += &format!("[{item}]");
            }
            self.problem(path, ErrorKind::Setting(problem.error));
        }
    }

    /// One design: a name that can label files, and its algorithm checked as the scenario's
    /// own is, each problem at its field under `designs[index].algorithm`.
    fn design(
        &mut self,
        raw: RawDesign,
        index: usize,
        shared_transport: Option<Transport>,
    ) -> Design {
        let path = format!("designs[{index}]");
        let word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
        if raw.name.is_empty() || !raw.name.chars().all(word) {
            let kind = ErrorKind::BadDesignName {
                name: raw.name.clone(),
            };
            self.problem(format!("{path}.name"), kind);
        }
        self.design_name_fits(&raw.name, &path);
        let cluster = Cluster { nodes: self.nodes };
        let (algorithm, problems) = raw.algorithm.lower(&cluster);
        let before = self.problems.len();
        self.setting_problems(problems, &format!("{path}.algorithm"));
        if self.nodes <= MAX_NODES && self.nodes > super::max_members(&algorithm) {
            let kind = ErrorKind::TooManyNodesForBroadcast {
                nodes: self.nodes,
                algorithm: algorithm.name(),
            };
            self.problem("nodes", kind);
        }
        if self.problems.len() == before {
            for (name, ns) in algorithm.timings() {
                self.bounded(ns, &format!("{path}.algorithm.{name}"));
            }
        }
        let transport = match raw.transport {
            Some(raw) => self.transport(raw, &format!("{path}.transport")),
            None => shared_transport.unwrap_or_else(|| super::default_transport(&algorithm)),
        };
        Design {
            name: raw.name,
            algorithm,
            transport,
        }
    }

    /// A design's name short enough for the longest file name made of it,
    /// `failover_cdf_NAME-unfenced.json` (sweep's chart with `--fencing both`), to fit 255 bytes.
    fn design_name_fits(&mut self, name: &str, path: &str) {
        if name.len() > MAX_DESIGN_NAME_BYTES {
            let kind = ErrorKind::DesignNameTooLong {
                name: name.to_string(),
                bytes: name.len(),
                max: MAX_DESIGN_NAME_BYTES,
            };
            self.problem(format!("{path}.name"), kind);
        }
    }

    /// `compare` runs every design under the scenario's faults, clocks and disks: a design
    /// without a service cannot have what names one (the engine would skip it silently).
    fn designs_have_the_service(&mut self, designs: &[Design]) {
        let Some((path, what)) = self.service_uses.first().cloned() else {
            return;
        };
        for design in designs.iter().filter(|d| !d.algorithm.has_service()) {
            let kind = ErrorKind::NoServiceInDesign {
                what,
                design: design.name.clone(),
                algorithm: design.algorithm.name(),
            };
            self.problem(path.clone(), kind);
        }
    }

    /// Each design's name once.
    fn distinct_designs(&mut self, designs: &[Design]) {
        for (index, design) in designs.iter().enumerate() {
            if designs[..index].iter().any(|d| d.name == design.name) {
                let kind = ErrorKind::DuplicateDesign {
                    name: design.name.clone(),
                };
                self.problem(format!("designs[{index}].name"), kind);
            }
        }
    }

    /// The network; without a `transport`, `algorithm`'s default.
    fn network(&mut self, raw: Option<RawNetwork>, algorithm: &AlgorithmConfig) -> NetworkConfig {
        let builtin = NetworkConfig {
            transport: super::default_transport(algorithm),
            ..NetworkConfig::default()
        };
        let Some(raw) = raw else {
            return builtin;
        };
        let transport = match raw.transport {
            Some(raw) => self.transport(raw, "network.transport"),
            None => builtin.transport,
        };
        let default = LinkConfig {
            latency: raw.latency.map_or(builtin.default.latency, |l| {
                self.latency(l, "network.latency")
            }),
            loss_ppm: raw.loss.map_or(builtin.default.loss_ppm, |p| {
                self.probability(p, "loss", "network.loss")
            }),
            duplicate_ppm: raw.duplicate.map_or(builtin.default.duplicate_ppm, |p| {
                self.probability(p, "duplicate", "network.duplicate")
            }),
        };
        let mut seen = BTreeSet::new();
        let mut overrides = Vec::new();
        for (index, link) in raw.links.into_iter().enumerate() {
            let path = format!("network.links[{index}]");
            let from = self.node_index(link.from, &format!("{path}.from"));
            let to = self.node_index(link.to, &format!("{path}.to"));
            if link.from == link.to {
                self.problem(
                    format!("{path}.to"),
                    ErrorKind::LinkToItself { node: link.from },
                );
            } else if !seen.insert((link.from, link.to)) {
                self.problem(
                    path.clone(),
                    ErrorKind::RepeatedLinkOverride {
                        from: link.from,
                        to: link.to,
                    },
                );
            }
            let config = LinkConfig {
                latency: match link.latency {
                    Some(latency) => self.latency(latency, &format!("{path}.latency")),
                    None => default.latency.clone(),
                },
                loss_ppm: link.loss.map_or(default.loss_ppm, |p| {
                    self.probability(p, "loss", &format!("{path}.loss"))
                }),
                duplicate_ppm: link.duplicate.map_or(default.duplicate_ppm, |p| {
                    self.probability(p, "duplicate", &format!("{path}.duplicate"))
                }),
            };
            overrides.push(LinkOverride {
                from,
                to,
                link: config,
            });
        }
        NetworkConfig {
            default,
            overrides,
            transport,
        }
    }

    /// A transport as written at `at` (`network.transport`, `designs[0].transport`).
    fn transport(&mut self, raw: RawTransport, at: &str) -> Transport {
        let RawTransport::Stream {
            min_rto,
            max_rto,
            timeout,
        } = raw
        else {
            return Transport::Datagram;
        };
        let builtin = StreamConfig::default();
        let config = StreamConfig {
            min_rto_ns: min_rto.map_or(builtin.min_rto_ns, |d| d.0),
            max_rto_ns: max_rto.map_or(builtin.max_rto_ns, |d| d.0),
            timeout_ns: timeout.map_or(builtin.timeout_ns, |d| d.0),
        };
        let fields = [
            ("min_rto", config.min_rto_ns),
            ("max_rto", config.max_rto_ns),
            ("timeout", config.timeout_ns),
        ];
        for (what, ns) in fields {
            let path = format!("{at}.{what}");
            if ns == 0 {
                self.problem(path.clone(), ErrorKind::ZeroStreamTiming { what });
            }
            self.bounded(ns, &path);
        }
        if config.min_rto_ns > config.max_rto_ns {
            let kind = ErrorKind::RtoRangeBackwards {
                min_ns: config.min_rto_ns,
                max_ns: config.max_rto_ns,
            };
            self.problem(format!("{at}.min_rto"), kind);
        }
        Transport::Stream(config)
    }

    fn latency(&mut self, raw: RawLatency, path: &str) -> Latency {
        let latency = self.latency_unbounded(raw, path);
        let ends = match &latency {
            Latency::Constant(d) => vec![("[0]", *d)],
            Latency::Uniform(low, high) => vec![("[0]", *low), ("[1]", *high)],
            Latency::Exponential { mean_ns, min_ns } => {
                vec![(".mean", *mean_ns), (".min", *min_ns)]
            }
        };
        for (suffix, ns) in ends {
            self.bounded(ns, &format!("{path}{suffix}"));
        }
        latency
    }

    fn latency_unbounded(&mut self, raw: RawLatency, path: &str) -> Latency {
        match raw {
            RawLatency::Constant(d) => Latency::Constant(d.0),
            RawLatency::Uniform(low, high) => {
                if low.0 > high.0 {
                    self.problem(
                        path,
                        ErrorKind::LatencyRangeBackwards {
                            low_ns: low.0,
                            high_ns: high.0,
                        },
                    );
                }
                Latency::Uniform(low.0, high.0)
            }
            RawLatency::Exponential { mean, min } => Latency::Exponential {
                mean_ns: mean.0,
                min_ns: min.map_or(0, |d| d.0),
            },
        }
    }

    /// A probability in `[0, 1]`, to parts per million rounded to nearest.
    fn probability(&mut self, value: f64, what: &str, path: &str) -> u32 {
        if !(0.0..=1.0).contains(&value) {
            self.problem(
                path,
                ErrorKind::ProbabilityOutOfRange {
                    what: what.to_string(),
                    value,
                },
            );
            return 0;
        }
        (value * 1_000_000.0).round() as u32
    }

    fn disk(&mut self, raw: Option<RawDisk>, algorithm: &str) -> DiskConfig {
        let Some(raw) = raw else {
            return DiskConfig::default();
        };
        let fsync = raw.fsync.map(|l| self.latency(l, "disk.fsync"));
        let mut seen = BTreeSet::new();
        let mut per_node = Vec::new();
        for (index, disk) in raw.nodes.into_iter().enumerate() {
            let path = format!("disk.nodes[{index}]");
            let node = self.node_index(disk.node, &format!("{path}.node"));
            if !seen.insert(disk.node) {
                let kind = ErrorKind::RepeatedDiskOverride { node: disk.node };
                self.problem(format!("{path}.node"), kind);
            }
            let fsync = self.latency(disk.fsync, &format!("{path}.fsync"));
            per_node.push(NodeDisk { node, fsync });
        }
        let service = raw.service.map(|l| {
            self.service_uses
                .push(("disk.service".to_string(), "`disk.service`"));
            if !self.has_service {
                let algorithm = algorithm.to_string();
                self.problem("disk.service", ErrorKind::NoServiceDisk { algorithm });
            }
            self.latency(l, "disk.service")
        });
        DiskConfig {
            fsync,
            per_node,
            service,
            batch: raw.batch.unwrap_or(false),
        }
    }

    fn clocks(&mut self, raw: Option<RawClocks>, algorithm: &str) -> ClockConfig {
        let Some(raw) = raw else {
            return ClockConfig::default();
        };
        let bound = raw.drift_ppm.unwrap_or(0);
        let max_drift_ppm = match u32::try_from(bound) {
            // The slowest draw, -bound, must stay above -1_000_000 ppm.
            Ok(ppm) if i64::from(ppm) < -MIN_DRIFT_PPM => ppm,
            _ => {
                self.problem(
                    "clocks.drift_ppm",
                    ErrorKind::DriftBoundOutOfRange { drift_ppm: bound },
                );
                0
            }
        };
        let mut seen = BTreeSet::new();
        let mut per_node = Vec::new();
        for (index, clock) in raw.nodes.into_iter().enumerate() {
            let path = format!("clocks.nodes[{index}]");
            let node = self.node_index(clock.node, &format!("{path}.node"));
            if !seen.insert(clock.node) {
                self.problem(
                    format!("{path}.node"),
                    ErrorKind::RepeatedClockOverride { node: clock.node },
                );
            }
            let drift_ppm = clock.drift_ppm.unwrap_or(0);
            self.drift(drift_ppm, &format!("{path}.drift_ppm"));
            let offset_ns = clock.offset.map_or(0, |d| d.0);
            self.bounded_step(offset_ns, &format!("{path}.offset"));
            per_node.push(NodeClock {
                node,
                drift_ppm,
                offset_ns,
                timers: clock.timers.unwrap_or_default(),
            });
        }
        let service = raw.service.map(|clock| {
            self.service_uses
                .push(("clocks.service".to_string(), "`clocks.service`"));
            if !self.has_service {
                let algorithm = algorithm.to_string();
                self.problem("clocks.service", ErrorKind::NoServiceClock { algorithm });
            }
            let drift_ppm = clock.drift_ppm.unwrap_or(0);
            self.drift(drift_ppm, "clocks.service.drift_ppm");
            let offset_ns = clock.offset.map_or(0, |d| d.0);
            self.bounded_step(offset_ns, "clocks.service.offset");
            FixedClock {
                drift_ppm,
                offset_ns,
                timers: clock.timers.unwrap_or_default(),
            }
        });
        let max_offset_ns = raw.offset.map_or(0, |d| d.0);
        self.bounded(max_offset_ns, "clocks.offset");
        ClockConfig {
            max_drift_ppm,
            max_offset_ns,
            per_node,
            service,
        }
    }

    fn drift(&mut self, drift_ppm: i64, path: &str) {
        if drift_ppm <= MIN_DRIFT_PPM || drift_ppm > MAX_DRIFT_PPM {
            self.problem(path, ErrorKind::DriftOutOfRange { drift_ppm });
        }
    }

    /// A member index, reported at `path` when the cluster has no such member.
    fn node_index(&mut self, index: u64, path: &str) -> u32 {
        if index >= self.nodes {
            self.problem(
                path,
                ErrorKind::NodeOutOfRange {
                    node: index,
                    nodes: self.nodes,
                },
            );
        }
        u32::try_from(index).unwrap_or(u32::MAX)
    }

    /// A membership change, its member checked against the scenario's members (a change can
    /// name only a member whose process runs).
    fn member_change(&mut self, raw: RawMemberChange, path: &str) -> MemberChange {
        let (op, member) = match raw {
            RawMemberChange::Add(m) => ("add", m),
            RawMemberChange::Remove(m) => ("remove", m),
            RawMemberChange::AddLearner(m) => ("add_learner", m),
            RawMemberChange::Promote(m) => ("promote", m),
        };
        if member >= self.nodes {
            let kind = ErrorKind::MemberOutOfRange {
                member,
                members: self.nodes,
            };
            self.problem(path, kind);
        }
        let member = u32::try_from(member).unwrap_or(u32::MAX);
        MemberChange::from_op(op, member).expect("every written operation has a protocol name")
    }

    /// One explicit fault, its ranged quantities at their lower bounds, and how far above
    /// them each may be drawn.
    fn fault(
        &mut self,
        raw: RawFault,
        index: usize,
        duration_ns: u64,
        algorithm: &str,
    ) -> (FaultSpec, FaultSpread) {
        let path = format!("faults[{index}]");
        let at = self.range(raw.at, &format!("{path}.at"));
        if at.high >= duration_ns && duration_ns > 0 {
            self.problem(
                format!("{path}.at"),
                ErrorKind::FaultAfterEnd {
                    at_ns: at.high,
                    duration_ns,
                },
            );
        }
        let (action, length_spread_ns) = self.action(raw.action, &format!("{path}.do"), algorithm);
        let heal_after = raw
            .heal_after
            .map(|h| self.range(h, &format!("{path}.heal_after")));
        if let Some(heal_after) = heal_after {
            if !action.can_heal() {
                self.problem(
                    format!("{path}.heal_after"),
                    ErrorKind::HealAfterNotAllowed {
                        kind: variant_name(&action).to_string(),
                    },
                );
            } else if heal_after.low == 0 {
                self.problem(format!("{path}.heal_after"), ErrorKind::ZeroHealAfter);
            }
            self.bounded(heal_after.high, &format!("{path}.heal_after"));
        }
        let after = raw.after.map(|t| self.trigger(t, &format!("{path}.after")));
        let spec = FaultSpec {
            at_ns: at.low,
            action,
            heal_after_ns: heal_after.map(|h| h.low),
            after: after.as_ref().map(|(trigger, _)| trigger.clone()),
        };
        let spread = FaultSpread {
            at_ns: at.high - at.low,
            heal_after_ns: heal_after.map_or(0, |h| h.high - h.low),
            length_ns: length_spread_ns,
            delay_ns: after.map_or(0, |(_, spread_ns)| spread_ns),
        };
        (spec, spread)
    }

    /// A fault's trigger (at `path`), its delay at the lower bound of its range, and the
    /// range's spread.
    fn trigger(&mut self, raw: RawTrigger, path: &str) -> (Trigger, u64) {
        let by = match raw.by.unwrap_or(RawActor::Any) {
            RawActor::Any => Actor::Any,
            RawActor::Node(i) => Actor::Node(self.node_index(i, &format!("{path}.by[0]"))),
            RawActor::Leader => Actor::Leader,
            RawActor::Follower => Actor::Follower,
        };
        let nth = raw.nth.unwrap_or(1);
        if nth == 0 || nth > u64::from(u32::MAX) {
            self.problem(
                format!("{path}.nth"),
                ErrorKind::TriggerNthOutOfRange { nth },
            );
        }
        let delay = (raw.delay).map_or(DurationRange { low: 0, high: 0 }, |d| {
            self.range(d, &format!("{path}.delay"))
        });
        self.bounded(delay.high, &format!("{path}.delay"));
        let event = match raw.event {
            RawTriggerEvent::Sent(kind) => TriggerEvent::Sent(kind),
            RawTriggerEvent::Signal(signal) => TriggerEvent::Signal(signal_kind(signal)),
            RawTriggerEvent::BecameLeader => TriggerEvent::BecameLeader,
            RawTriggerEvent::SteppedDown => TriggerEvent::SteppedDown,
            RawTriggerEvent::Observed(name) => TriggerEvent::Observed(name),
        };
        let trigger = Trigger {
            event,
            by,
            nth: u32::try_from(nth).unwrap_or(u32::MAX).max(1),
            delay_ns: delay.low,
        };
        (trigger, delay.high - delay.low)
    }

    /// Refuses a trigger on a message type the scenario's algorithm, or one of its designs,
    /// never sends (it would never fire); algorithms whose nodes declare their types only
    /// when they start (external nodes) accept any.
    fn trigger_messages(
        &mut self,
        faults: &[FaultSpec],
        algorithm: &AlgorithmConfig,
        designs: &[Design],
    ) {
        let runs = std::iter::once((algorithm, None))
            .chain(designs.iter().map(|d| (&d.algorithm, Some(d.name.clone()))));
        let runs: Vec<(&AlgorithmConfig, Option<String>)> = runs.collect();
        for (index, fault) in faults.iter().enumerate() {
            let Some(Trigger {
                event: TriggerEvent::Sent(kind),
                ..
            }) = &fault.after
            else {
                continue;
            };
            let unknown = runs.iter().find_map(|(algorithm, design)| {
                let names = algorithm.message_names()?;
                (!names.contains(&kind.as_str())).then(|| ErrorKind::UnknownMessageType {
                    found: kind.clone(),
                    algorithm: algorithm.name().to_string(),
                    design: design.clone(),
                    expected: names.iter().map(|n| n.to_string()).collect(),
                })
            });
            if let Some(kind) = unknown {
                self.problem(format!("faults[{index}].after.event[0]"), kind);
            }
        }
    }

    /// A range as written, reported at `path` when its ends are the wrong way round (then
    /// read as the one value `low`).
    fn range(&mut self, raw: DurationRange, path: &str) -> DurationRange {
        if raw.low > raw.high {
            let kind = ErrorKind::FaultRangeBackwards {
                first: format_duration_ron(raw.low),
                second: format_duration_ron(raw.high),
            };
            self.problem(path, kind);
            return DurationRange {
                low: raw.low,
                high: raw.low,
            };
        }
        raw
    }

    /// A fault's action, its length at the lower bound of its range, and the range's spread.
    fn action(&mut self, raw: RawAction, path: &str, algorithm: &str) -> (FaultAction, u64) {
        let arg = |i: usize| format!("{path}[{i}]");
        let kind = raw_variant_name(&raw);
        let mut spread_ns = 0;
        let action = match raw {
            RawAction::Crash(t) => FaultAction::Crash(self.target(&t, &arg(0), kind, algorithm)),
            RawAction::Restart(t) => {
                FaultAction::Restart(self.target(&t, &arg(0), kind, algorithm))
            }
            RawAction::Pause(t, d) | RawAction::Suspend(t, d) | RawAction::Stall(t, d) => {
                let t = self.target(&t, &arg(0), kind, algorithm);
                let d = self.range(d, &arg(1));
                if d.low == 0 {
                    self.problem(
                        arg(1),
                        ErrorKind::ZeroPause {
                            kind: kind.to_string(),
                        },
                    );
                }
                self.bounded(d.high, &arg(1));
                spread_ns = d.high - d.low;
                match kind {
                    "Pause" => FaultAction::Pause(t, d.low),
                    "Suspend" => FaultAction::Suspend(t, d.low),
                    _ => FaultAction::Stall(t, d.low),
                }
            }
            RawAction::Partition(shape) => {
                FaultAction::Partition(self.shape(shape, &arg(0), algorithm))
            }
            RawAction::Heal => FaultAction::Heal,
            RawAction::ClockJump(t, d) => {
                let (low, high) = if d.low > d.high {
                    let kind = ErrorKind::FaultRangeBackwards {
                        first: format_signed_duration_ron(d.low),
                        second: format_signed_duration_ron(d.high),
                    };
                    self.problem(arg(1), kind);
                    (d.low, d.low)
                } else {
                    (d.low, d.high)
                };
                self.bounded_step(low, &arg(1));
                self.bounded_step(high, &arg(1));
                spread_ns = high.abs_diff(low);
                FaultAction::ClockJump(self.target(&t, &arg(0), kind, algorithm), low)
            }
            RawAction::ClockDrift(t, ppm) => {
                let t = self.target(&t, &arg(0), kind, algorithm);
                self.drift(ppm, &arg(1));
                FaultAction::ClockDrift(t, ppm)
            }
            RawAction::Resign(t) => FaultAction::Resign(self.target(&t, &arg(0), kind, algorithm)),
            RawAction::ConfChange(t, change) => {
                let t = self.target(&t, &arg(0), kind, algorithm);
                FaultAction::ConfChange(t, self.member_change(change, &format!("{path}[1][0]")))
            }
            RawAction::Loss(p) => FaultAction::Loss(self.probability(p, "loss", &arg(0))),
            RawAction::Duplicate(p) => {
                FaultAction::Duplicate(self.probability(p, "duplicate", &arg(0)))
            }
            RawAction::SlowDisk(t, d) => {
                let d = self.range(d, &arg(1));
                self.bounded(d.high, &arg(1));
                spread_ns = d.high - d.low;
                FaultAction::SlowDisk(self.target(&t, &arg(0), kind, algorithm), d.low)
            }
        };
        (action, spread_ns)
    }

    fn shape(&mut self, raw: RawShape, path: &str, algorithm: &str) -> PartitionShape {
        let arg = |i: usize| format!("{path}[{i}]");
        let kind = "Partition";
        match raw {
            RawShape::Groups(groups) => {
                let mut seen = BTreeSet::new();
                let mut lowered = Vec::new();
                for (g, group) in groups.into_iter().enumerate() {
                    let group_path = format!("{path}[0][{g}]");
                    if group.is_empty() {
                        self.problem(group_path.clone(), ErrorKind::EmptyPartitionGroup);
                    }
                    let mut members = Vec::new();
                    for (k, node) in group.into_iter().enumerate() {
                        let node_path = format!("{group_path}[{k}]");
                        members.push(self.node_index(node, &node_path));
                        if !seen.insert(node) {
                            self.problem(node_path, ErrorKind::NodeInTwoGroups { node });
                        }
                    }
                    lowered.push(members);
                }
                PartitionShape::Groups(lowered)
            }
            RawShape::Isolate(t) => {
                PartitionShape::Isolate(self.target(&t, &arg(0), kind, algorithm))
            }
            RawShape::MajorityMinority(t) => {
                PartitionShape::MajorityMinority(self.target(&t, &arg(0), kind, algorithm))
            }
            RawShape::OneWay { from, to } => {
                let from = self.target(&from, &format!("{path}.from"), kind, algorithm);
                let to = self.target(&to, &format!("{path}.to"), kind, algorithm);
                self.two_ends(&from, &to, &format!("{path}.to"), "OneWay");
                PartitionShape::OneWay { from, to }
            }
            RawShape::CutLink(a, b) => {
                let a = self.target(&a, &arg(0), kind, algorithm);
                let b = self.target(&b, &arg(1), kind, algorithm);
                self.two_ends(&a, &b, &arg(1), "CutLink");
                PartitionShape::CutLink(a, b)
            }
            RawShape::Bridge(t) => {
                PartitionShape::Bridge(self.target(&t, &arg(0), kind, algorithm))
            }
        }
    }

    /// A link's two ends must be two processes: the same target twice names one process
    /// whenever it names a fixed one (a node, a service member, the leader, the service's
    /// leader, the leader's service process), and a link from a process to itself cuts
    /// nothing. A `CutLink` takes one process of each end, so a fixed set twice
    /// (`ServiceFollowers`) names one process there too.
    fn two_ends(&mut self, a: &Target, b: &Target, path: &str, kind: &str) {
        if a == b && (one_fixed_process(a) || (kind == "CutLink" && fixed_set(a))) {
            self.problem(
                path,
                ErrorKind::CutToItself {
                    kind: kind.to_string(),
                    target: format!("{a:?}"),
                },
            );
        }
    }

    /// Notes a target that names the coordination service; whether the algorithm has one
    /// (reported if not).
    fn service_target(&mut self, path: &str, target: &'static str, algorithm: &str) -> bool {
        let what = match target {
            "Service" => "target `Service`",
            "ServiceMember" => "target `ServiceMember`",
            "ServiceLeader" => "target `ServiceLeader`",
            "ServiceFollowers" => "target `ServiceFollowers`",
            "ServiceQuorum" => "target `ServiceQuorum`",
            "ServiceOfLeader" => "target `ServiceOfLeader`",
            _ => "target `ServiceFollower`",
        };
        self.service_uses.push((path.to_string(), what));
        if !self.has_service {
            let kind = ErrorKind::NoServiceProcess {
                target,
                algorithm: algorithm.to_string(),
            };
            self.problem(path, kind);
        }
        self.has_service
    }

    /// A fault target; `kind` is the fault's RON name (`Crash`, ...), for messages.
    fn target(&mut self, raw: &RawTarget, path: &str, kind: &str, algorithm: &str) -> Target {
        match raw {
            RawTarget::Leader => Target::Leader,
            RawTarget::Follower => Target::Follower,
            RawTarget::Node(index) => Target::Node(self.node_index(*index, path)),
            RawTarget::Random => Target::Random,
            RawTarget::Minority => Target::Minority,
            RawTarget::Service => {
                self.service_target(path, "Service", algorithm);
                Target::Service
            }
            RawTarget::ServiceMember(i) => {
                if self.service_target(path, "ServiceMember", algorithm)
                    && *i >= self.service_processes as u64
                {
                    let kind = ErrorKind::ServiceMemberOutOfRange {
                        member: *i,
                        members: self.service_processes,
                        algorithm: algorithm.to_string(),
                    };
                    self.problem(path, kind);
                }
                Target::ServiceMember(u32::try_from(*i).unwrap_or(u32::MAX))
            }
            RawTarget::ServiceLeader => {
                self.service_target(path, "ServiceLeader", algorithm);
                Target::ServiceLeader
            }
            RawTarget::ServiceFollower => {
                self.service_target(path, "ServiceFollower", algorithm);
                Target::ServiceFollower
            }
            RawTarget::ServiceFollowers => {
                self.service_target(path, "ServiceFollowers", algorithm);
                Target::ServiceFollowers
            }
            RawTarget::ServiceQuorum => {
                self.service_target(path, "ServiceQuorum", algorithm);
                Target::ServiceQuorum
            }
            RawTarget::ServiceOfLeader => {
                self.service_target(path, "ServiceOfLeader", algorithm);
                Target::ServiceOfLeader
            }
            RawTarget::AllCrashed => {
                if kind != "Restart" {
                    self.problem(
                        path,
                        ErrorKind::AllCrashedOutsideRestart {
                            kind: kind.to_string(),
                        },
                    );
                }
                Target::AllCrashed
            }
            RawTarget::All => Target::All,
        }
    }

    fn expect(&mut self, raw: Option<RawExpect>, properties: &[&'static str]) -> Expect {
        match raw {
            None | Some(RawExpect::Safe) => Expect::Safe,
            Some(RawExpect::Violates(names)) => {
                if names.is_empty() {
                    self.problem("expect", ErrorKind::EmptyViolates);
                }
                let mut invariants = BTreeSet::new();
                for (index, name) in names.into_iter().enumerate() {
                    match name {
                        RawInvariant::ElectionSafety => {
                            invariants.insert(Invariant::ElectionSafety);
                        }
                        RawInvariant::FencingSafety => {
                            invariants.insert(Invariant::FencingSafety);
                        }
                        RawInvariant::TermMonotonic => {
                            invariants.insert(Invariant::TermMonotonic);
                        }
                        RawInvariant::Liveness => {
                            self.problem(format!("expect[0][{index}]"), ErrorKind::LivenessExpected)
                        }
                        RawInvariant::Other(name) => {
                            match properties.iter().find(|p| **p == name) {
                                Some(property) => {
                                    invariants.insert(Invariant::Property(property));
                                }
                                None => {
                                    let expected = Invariant::ALL
                                        .iter()
                                        .map(|i| i.name())
                                        .chain(properties.iter().copied())
                                        .map(str::to_string)
                                        .collect();
                                    let kind = ErrorKind::UnknownVariant {
                                        context: "invariant".into(),
                                        found: name,
                                        expected,
                                    };
                                    self.problem(format!("expect[0][{index}]"), kind);
                                }
                            }
                        }
                    }
                }
                Expect::Violates(invariants)
            }
        }
    }
}

/// The run as the events estimate sees it: the drift faults a nemesis may draw count as the
/// clocks' own bound; and the faults the nemesis injects, twice its mean count (the gaps
/// are exponential).
pub(crate) fn sim_for_estimate(scenario: &Scenario) -> (SimConfig, u64) {
    let mut sim = scenario.sim.clone();
    if let Some(nemesis) = scenario
        .nemesis
        .as_ref()
        .filter(|n| n.kinds_drawn().contains(&NemesisKind::ClockDrift))
    {
        // A swarm seed may draw up to the top of its drift range.
        let drift_ppm = match nemesis.swarm {
            true => nemesis.swarm_ranges.max_drift_ppm.1,
            false => nemesis.max_drift_ppm,
        };
        sim.clocks.max_drift_ppm = sim.clocks.max_drift_ppm.max(drift_ppm);
    }
    let nemesis_faults = scenario.nemesis.as_ref().map_or(0, |n| {
        let window_ns = sim
            .duration_ns
            .saturating_sub(n.start_ns.saturating_add(n.quiet_ns));
        // A swarm seed may draw the densest mean interval of its range.
        let mean_interval_ns = match n.swarm {
            true => n.swarm_ranges.mean_interval_ns.0,
            false => n.mean_interval_ns,
        };
        2 * window_ns.checked_div(mean_interval_ns).unwrap_or(0)
    });
    (sim, nemesis_faults)
}

/// The work `algorithm` would do in `sim` when it is absurd: the path to blame (its shortest
/// timing under `at`, the workload, or the transport) and the error.
pub(crate) fn work_problem(
    algorithm: &AlgorithmConfig,
    (sim, nemesis_faults): (&SimConfig, u64),
    write_every_given: bool,
    at: &str,
) -> Option<(String, ErrorKind)> {
    let expected = splitbrain_algorithms::expected_events_with(algorithm, sim, nemesis_faults);
    if expected <= MAX_EXPECTED_EVENTS {
        return None;
    }
    let (name, timing_ns) = algorithm.shortest_timing();
    let workload = sim.write_every_ns > 0 && sim.write_every_ns < timing_ns;
    let (mut path, period_ns) = match (workload, write_every_given) {
        (true, true) => ("workload.write_every".to_string(), sim.write_every_ns),
        (true, false) => ("duration".to_string(), sim.write_every_ns),
        (false, _) => (format!("{at}.{name}"), timing_ns),
    };
    let processes = algorithm.processes(sim.members) as u64;
    let retransmissions = splitbrain_algorithms::retransmissions(algorithm, sim);
    if retransmissions * 2 > expected {
        path = "network.transport".to_string();
    }
    let kind = ErrorKind::TooManyEvents {
        expected,
        processes,
        period_ns,
        duration_ns: sim.duration_ns,
        fastest_drift_ppm: splitbrain_algorithms::fastest_drift_ppm(sim).max(0),
        per_act: splitbrain_algorithms::events_per_act(algorithm, sim),
        retransmissions,
    };
    Some((path, kind))
}

/// The RON name of a fault kind, for messages.
fn raw_variant_name(raw: &RawAction) -> &'static str {
    match raw {
        RawAction::Crash(_) => "Crash",
        RawAction::Restart(_) => "Restart",
        RawAction::Pause(..) => "Pause",
        RawAction::Suspend(..) => "Suspend",
        RawAction::Stall(..) => "Stall",
        RawAction::Partition(_) => "Partition",
        RawAction::Heal => "Heal",
        RawAction::ClockJump(..) => "ClockJump",
        RawAction::ClockDrift(..) => "ClockDrift",
        RawAction::Resign(_) => "Resign",
        RawAction::ConfChange(..) => "ConfChange",
        RawAction::Loss(_) => "Loss",
        RawAction::Duplicate(_) => "Duplicate",
        RawAction::SlowDisk(..) => "SlowDisk",
    }
}

/// The RON name of a lowered fault kind, for messages.
pub(crate) fn variant_name(action: &FaultAction) -> &'static str {
    match action {
        FaultAction::Crash(_) => "Crash",
        FaultAction::Restart(_) => "Restart",
        FaultAction::Pause(..) => "Pause",
        FaultAction::Suspend(..) => "Suspend",
        FaultAction::Stall(..) => "Stall",
        FaultAction::Partition(_) => "Partition",
        FaultAction::Heal => "Heal",
        FaultAction::ClockJump(..) => "ClockJump",
        FaultAction::ClockDrift(..) => "ClockDrift",
        FaultAction::Resign(_) => "Resign",
        FaultAction::ConfChange(..) => "ConfChange",
        FaultAction::Loss(_) => "Loss",
        FaultAction::Duplicate(_) => "Duplicate",
        FaultAction::SlowDisk(..) => "SlowDisk",
    }
}

/// The RON name of a nemesis kind, for messages.
fn nemesis_kind_name(kind: NemesisKind) -> &'static str {
    match kind {
        NemesisKind::Crash => "Crash",
        NemesisKind::Pause => "Pause",
        NemesisKind::Stall => "Stall",
        NemesisKind::Isolate => "Isolate",
        NemesisKind::MajorityMinority => "MajorityMinority",
        NemesisKind::OneWay => "OneWay",
        NemesisKind::CutLink => "CutLink",
        NemesisKind::Bridge => "Bridge",
        NemesisKind::LossBurst => "LossBurst",
        NemesisKind::Duplicate => "Duplicate",
        NemesisKind::ClockJump => "ClockJump",
        NemesisKind::ClockDrift => "ClockDrift",
        NemesisKind::Resign => "Resign",
        NemesisKind::Suspend => "Suspend",
        NemesisKind::SlowDisk => "SlowDisk",
        NemesisKind::CrashForGood => "CrashForGood",
        NemesisKind::ConfChange => "ConfChange",
    }
}

fn nemesis_kind(raw: RawNemesisKind) -> NemesisKind {
    match raw {
        RawNemesisKind::Crash => NemesisKind::Crash,
        RawNemesisKind::Pause => NemesisKind::Pause,
        RawNemesisKind::Stall => NemesisKind::Stall,
        RawNemesisKind::Isolate => NemesisKind::Isolate,
        RawNemesisKind::MajorityMinority => NemesisKind::MajorityMinority,
        RawNemesisKind::OneWay => NemesisKind::OneWay,
        RawNemesisKind::CutLink => NemesisKind::CutLink,
        RawNemesisKind::Bridge => NemesisKind::Bridge,
        RawNemesisKind::LossBurst => NemesisKind::LossBurst,
        RawNemesisKind::Duplicate => NemesisKind::Duplicate,
        RawNemesisKind::ClockJump => NemesisKind::ClockJump,
        RawNemesisKind::ClockDrift => NemesisKind::ClockDrift,
        RawNemesisKind::Resign => NemesisKind::Resign,
        RawNemesisKind::Suspend => NemesisKind::Suspend,
        RawNemesisKind::SlowDisk => NemesisKind::SlowDisk,
        RawNemesisKind::CrashForGood => NemesisKind::CrashForGood,
        RawNemesisKind::ConfChange => NemesisKind::ConfChange,
    }
}

/// A signal's kind as the engine names it.
fn signal_kind(raw: RawSignal) -> SignalKind {
    match raw {
        RawSignal::ElectionStarted => SignalKind::ElectionStarted,
        RawSignal::PreVoteStarted => SignalKind::PreVoteStarted,
        RawSignal::CampaignEligible => SignalKind::CampaignEligible,
        RawSignal::LeaderHeard => SignalKind::LeaderHeard,
        RawSignal::ElectionRoundFailed => SignalKind::ElectionRoundFailed,
        RawSignal::LeaderSuspected => SignalKind::LeaderSuspected,
        RawSignal::DisruptionPrevented => SignalKind::DisruptionPrevented,
        RawSignal::LeaseExpired => SignalKind::LeaseExpired,
        RawSignal::LeaseHeld => SignalKind::LeaseHeld,
        RawSignal::LeaseEnded => SignalKind::LeaseEnded,
    }
}

/// Whether `target` names one process, the same one wherever it is written in one fault: a
/// node, a service member, the leader, the service's leader, the service process the
/// leader talks to (not a drawn one).
pub(crate) fn one_fixed_process(target: &Target) -> bool {
    matches!(
        target,
        Target::Node(_)
            | Target::ServiceMember(_)
            | Target::Leader
            | Target::ServiceLeader
            | Target::ServiceOfLeader
    )
}

/// Whether `target` names a set of processes, the same set wherever it is written in one
/// fault (not a drawn one): a `CutLink` cuts the link between the first process of each
/// end, so the set twice is a link from its first process to itself. `All` and `Service`,
/// accepted there before the rule, stay so.
pub(crate) fn fixed_set(target: &Target) -> bool {
    matches!(target, Target::ServiceFollowers)
}
