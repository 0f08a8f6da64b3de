//! raft-rs as a scenario writes it (`algorithm: RaftRs(election_tick: 10, heartbeat_tick: 3,
//! tick: "15ms", pre_vote: true, check_quorum: true)`): the settings, their rules (raft-rs'
//! own, `RaftRsConfig::validate`), writing them back, and the knob `sweep` varies.

use super::{info, RaftRsConfig, RaftRsConfigError, RaftRsNode};
use crate::algorithm::{
    lower_checked, run_members, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{at_most_a_day, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// tikv's raft-rs driven through the engine; see the module doc of [`super`].
pub struct RaftRs;

/// raft-rs' settings as written; every field left out takes [`RaftRsConfig::default`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RaftRsSettings {
    /// raft-rs `Config::election_tick`, in ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_tick: Option<usize>,
    /// raft-rs `Config::heartbeat_tick`, in ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_tick: Option<usize>,
    /// The local time of one tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<DurationText>,
    /// raft-rs `Config::pre_vote`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_vote: Option<bool>,
    /// raft-rs `Config::check_quorum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_quorum: Option<bool>,
}

/// A rule raft-rs' settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RaftRsError {
    /// A rule several algorithms share.
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// A rule of raft-rs' own `Config::validate`, or of the adapter.
    #[error("{0}")]
    Config(RaftRsConfigError),
}

impl std::error::Error for RaftRsConfigError {}

impl SettingError for RaftRsError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            RaftRsError::Common(rule) => return rule.hint(),
            RaftRsError::Config(RaftRsConfigError::ZeroHeartbeatTick) => {
                "raft-rs refuses a heartbeat of zero ticks (`Config::validate`)"
            }
            RaftRsError::Config(RaftRsConfigError::ElectionTickNotAboveHeartbeatTick {
                ..
            }) => {
                "raft-rs refuses an election tick at or below the heartbeat tick \
                 (`Config::validate`); its default is 20 election ticks to 2 heartbeat ticks"
            }
            RaftRsError::Config(RaftRsConfigError::ZeroTick) => {
                "every raft-rs timeout is counted in ticks; give the tick a length, like \"50ms\""
            }
            RaftRsError::Config(RaftRsConfigError::TooManyTicks { .. }) => {
                "raft-rs counts its timeouts in ticks (its defaults: election_tick 20, \
                 heartbeat_tick 2); for longer timeouts, lengthen `tick` instead"
            }
            RaftRsError::Config(RaftRsConfigError::ElectionTimeoutTooLong { .. }) => {
                "lower election_tick or the tick: election timeouts run up to twice \
                 election_tick ticks"
            }
        };
        Some(hint.to_string())
    }
}

/// Which settings the author wrote: a rule about two of them is reported at one that was
/// written (a field left out cannot be the one to change).
struct Written {
    election_tick: bool,
    heartbeat_tick: bool,
    tick: bool,
}

impl Written {
    fn blame(&self, error: &RaftRsConfigError) -> &'static str {
        match error {
            RaftRsConfigError::ElectionTickNotAboveHeartbeatTick { .. }
                if self.heartbeat_tick && !self.election_tick =>
            {
                "heartbeat_tick"
            }
            RaftRsConfigError::ElectionTimeoutTooLong { .. } => self.election_tick_or_tick(),
            other => other.field(),
        }
    }

    /// `election_tick` if written, else `tick` if written, else the algorithm as a whole.
    fn election_tick_or_tick(&self) -> &'static str {
        match (self.election_tick, self.tick) {
            (true, _) => "election_tick",
            (false, true) => "tick",
            (false, false) => "",
        }
    }

    /// `tick` if written, else `election_tick` if written, else the algorithm as a whole.
    fn tick_or_election_tick(&self) -> &'static str {
        match (self.tick, self.election_tick) {
            (true, _) => "tick",
            (false, true) => "election_tick",
            (false, false) => "",
        }
    }
}

impl Algorithm for RaftRs {
    const NAME: &'static str = "raft-rs";
    const SCENARIO_NAME: &'static str = "RaftRs";
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const ALIASES: &'static [&'static str] = &["raftrs"];
    const SUMMARY: &'static str =
        "tikv's raft-rs 0.7, the production library, driven unchanged (tick timer, step, \
         Ready/advance, MemStorage kept across restarts); election_tick, heartbeat_tick, tick, \
         pre_vote, check_quorum; its randomized timeouts drawn from the node's seeded stream";
    const SENDS_TO_EVERY_MEMBER: bool = true;
    const KNOBS: &'static [Knob] = &[Knob {
        name: "tick",
        shape: KnobShape::Duration,
        example: "15ms,50ms",
    }];

    type Settings = RaftRsSettings;
    type Config = RaftRsConfig;
    type Error = RaftRsError;

    fn lower(settings: RaftRsSettings, _cluster: &Cluster) -> Lowered<RaftRsConfig, RaftRsError> {
        let defaults = RaftRsConfig::default();
        let config = RaftRsConfig {
            election_tick: settings.election_tick.unwrap_or(defaults.election_tick),
            heartbeat_tick: settings.heartbeat_tick.unwrap_or(defaults.heartbeat_tick),
            tick_ns: ns_or(settings.tick, defaults.tick_ns),
            pre_vote: settings.pre_vote.unwrap_or(defaults.pre_vote),
            check_quorum: settings.check_quorum.unwrap_or(defaults.check_quorum),
        };
        let written = Written {
            election_tick: settings.election_tick.is_some(),
            heartbeat_tick: settings.heartbeat_tick.is_some(),
            tick: settings.tick.is_some(),
        };
        let mut problems: Vec<_> = config
            .validate()
            .into_iter()
            .map(|error| Problem {
                field: written.blame(&error),
                error: RaftRsError::Config(error),
            })
            .collect();
        if problems.is_empty() {
            let longest_ns = config.max_election_timeout_ns().unwrap_or(Nanos::MAX);
            let too_long = at_most_a_day(config.tick_ns, written.tick_or_election_tick())
                .or_else(|| at_most_a_day(longest_ns, written.election_tick_or_tick()));
            problems.extend(too_long.map(|p| Problem {
                field: p.field,
                error: p.error.into(),
            }));
        }
        (config, problems)
    }

    fn settings(config: &RaftRsConfig) -> RaftRsSettings {
        RaftRsSettings {
            election_tick: Some(config.election_tick),
            heartbeat_tick: Some(config.heartbeat_tick),
            tick: Some(DurationText(config.tick_ns)),
            pre_vote: Some(config.pre_vote),
            check_quorum: Some(config.check_quorum),
        }
    }

    fn info(config: &RaftRsConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &RaftRsConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("tick", config.tick_ns),
            // The longest election timeout, derived from the ticks: reported at `election_tick`.
            (
                "election_tick",
                config.max_election_timeout_ns().unwrap_or(Nanos::MAX),
            ),
        ]
    }

    fn heartbeat_ns(config: &RaftRsConfig) -> Nanos {
        let ticks = u64::try_from(config.heartbeat_tick).unwrap_or(u64::MAX);
        ticks.saturating_mul(config.tick_ns)
    }

    fn campaign_timeout_ns(config: &RaftRsConfig) -> Nanos {
        let ticks = u64::try_from(config.election_tick).unwrap_or(u64::MAX);
        ticks.saturating_mul(config.tick_ns)
    }

    /// `tick` sets the length of a tick: every timeout, counted in ticks, scales with it.
    fn vary(
        config: &RaftRsConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<RaftRsConfig, Problem<RaftRsError>> {
        let (KnobValue::Duration(tick_ns), "tick") = (value, name) else {
            return Err(unknown_knob(name, RaftRsError::Common));
        };
        let mut settings = Self::settings(config);
        settings.tick = Some(DurationText(tick_ns));
        lower_checked::<Self>(settings, cluster)
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<RaftRsNode>().messages)
    }

    fn run(
        config: &RaftRsConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        run_members(sim, info, options, |id, members| {
            RaftRsNode::new(id, members, config)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(text: &str) -> Vec<(&'static str, String)> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let settings: RaftRsSettings = options.from_str(text).expect(text);
        let (_, problems) = RaftRs::lower(settings, &Cluster { nodes: 3 });
        problems
            .into_iter()
            .map(|p| (p.field, p.error.to_string()))
            .collect()
    }

    #[test]
    fn a_rule_about_two_ticks_is_reported_at_the_one_written() {
        assert_eq!(lowered("(heartbeat_tick: 25)")[0].0, "heartbeat_tick");
        assert_eq!(lowered("(election_tick: 2)")[0].0, "election_tick");
        assert_eq!(
            lowered("(election_tick: 2, heartbeat_tick: 2)")[0].0,
            "election_tick"
        );
        assert_eq!(lowered("(heartbeat_tick: 0)")[0].0, "heartbeat_tick");
        assert_eq!(lowered("(tick: \"0s\")")[0].0, "tick");
    }

    #[test]
    fn a_tick_or_an_election_timeout_longer_than_a_day_is_refused_where_it_was_written() {
        let tick = lowered("(tick: \"25h\")");
        assert_eq!(
            tick,
            [("tick", "the timing 25h is longer than a day".into())]
        );
        let election = lowered("(election_tick: 100000, tick: \"1s\")");
        assert_eq!(election.len(), 1);
        assert_eq!(election[0].0, "election_tick");
        assert!(lowered("(election_tick: 40000, heartbeat_tick: 2, tick: \"1s\")").is_empty());
    }
}
