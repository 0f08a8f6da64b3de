//! The algorithm as a scenario writes it (`algorithm: OwnLease(ttl: "2s", ...)`): the
//! settings, their rules, writing them back, and the knobs `sweep` may vary.

use crate::config::{OwnLeaseConfig, Variant};
use crate::{info, processes};
use serde::{Deserialize, Serialize};
use splitbrain_algorithms::algorithm::{lower_checked, run_processes, Lowered};
use splitbrain_algorithms::{
    Algorithm, Cluster, CommonRule, Knob, KnobShape, KnobValue, Problem, RunOptions, SettingError,
    MAX_TIMING_NS,
};
use splitbrain_sim::duration::{format_duration_ron, DurationText};
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// The registry's handle for the lock-server lease election; see the crate doc.
pub struct OwnLease;

/// The settings as a scenario writes them; every field may be left out. Left out: the TTL,
/// the write interval, the act delay and the variant take [`OwnLeaseConfig::default`]; the
/// renewal interval and the margin are a quarter of the TTL.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OwnLeaseSettings {
    /// [`OwnLeaseConfig::ttl_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<DurationText>,
    /// [`OwnLeaseConfig::renew_every_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_every: Option<DurationText>,
    /// [`OwnLeaseConfig::margin_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<DurationText>,
    /// [`OwnLeaseConfig::work_every_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_every: Option<DurationText>,
    /// [`OwnLeaseConfig::act_delay_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_delay: Option<DurationText>,
    /// [`OwnLeaseConfig::variant`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
}

fn dur(ns: &u64) -> String {
    format_duration_ron(*ns)
}

/// A rule the settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum OwnLeaseError {
    /// A rule shared with splitbrain's own algorithms (a day at most, an unknown knob).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// A timer of zero would fire again at the same instant for ever.
    #[error("`{field}` must be longer than zero")]
    Zero {
        /// The setting.
        field: &'static str,
    },
    /// The holder must renew well within the TTL, or its lease lapses between renewals.
    #[error("the renewal interval {} must be below the TTL {}", dur(.renew_every_ns), dur(.ttl_ns))]
    RenewNotBelowTtl {
        /// The renewal interval.
        renew_every_ns: u64,
        /// The TTL.
        ttl_ns: u64,
    },
    /// The member believes its lease for `ttl - margin` after each renewal: a renewal must
    /// be due before that, or the holder stops believing between two renewals.
    #[error(
        "the renewal interval {} plus the margin {} must be below the TTL {}",
        dur(.renew_every_ns),
        dur(.margin_ns),
        dur(.ttl_ns)
    )]
    NoTimeToRenew {
        /// The renewal interval.
        renew_every_ns: u64,
        /// The margin.
        margin_ns: u64,
        /// The TTL.
        ttl_ns: u64,
    },
}

impl SettingError for OwnLeaseError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            OwnLeaseError::Common(rule) => return rule.hint(),
            OwnLeaseError::Zero { .. } => "give a duration like \"100ms\", or leave it out",
            OwnLeaseError::RenewNotBelowTtl { .. } => {
                "renew a few times per TTL; leave `renew_every` out for a quarter of it"
            }
            OwnLeaseError::NoTimeToRenew { .. } => {
                "the margin covers clock drift (a quarter of the TTL covers 10% either way); \
                 shorten `renew_every` or the margin"
            }
        };
        Some(hint.to_string())
    }
}

impl OwnLease {
    /// Every rule `config` breaks, each at the field to change (`renew_field`: the renewal
    /// interval as written, or the TTL it was derived from).
    fn broken_rules(
        config: &OwnLeaseConfig,
        renew_field: &'static str,
    ) -> Vec<Problem<OwnLeaseError>> {
        let mut problems = Vec::new();
        let mut rule = |field, error| problems.push(Problem { field, error });
        let timings = [
            ("ttl", config.ttl_ns),
            ("renew_every", config.renew_every_ns),
            ("work_every", config.work_every_ns),
            ("act_delay", config.act_delay_ns),
        ];
        for (field, ns) in timings {
            if ns == 0 {
                rule(field, OwnLeaseError::Zero { field });
            } else if ns > MAX_TIMING_NS {
                rule(field, CommonRule::TimingTooLong { ns }.into());
            }
        }
        if config.margin_ns > MAX_TIMING_NS {
            let ns = config.margin_ns;
            rule("margin", CommonRule::TimingTooLong { ns }.into());
        }
        let (renew_every_ns, margin_ns, ttl_ns) =
            (config.renew_every_ns, config.margin_ns, config.ttl_ns);
        if ttl_ns > 0 && renew_every_ns >= ttl_ns {
            let error = OwnLeaseError::RenewNotBelowTtl {
                renew_every_ns,
                ttl_ns,
            };
            rule(renew_field, error);
        } else if renew_every_ns.saturating_add(margin_ns) >= ttl_ns && ttl_ns > 0 {
            let error = OwnLeaseError::NoTimeToRenew {
                renew_every_ns,
                margin_ns,
                ttl_ns,
            };
            rule("margin", error);
        }
        problems
    }
}

impl Algorithm for OwnLease {
    const NAME: &'static str = "own-lease";
    const SCENARIO_NAME: &'static str = "OwnLease";
    const SUMMARY: &'static str =
        "a lock server granting one lease with a TTL and a fencing token; members renew it and \
         write while they believe it (examples/own-algorithm); variants CheckThenAct and \
         CheckThenActFenced are unsafe on purpose";
    const HAS_SERVICE: bool = true;
    const SERVICE_NAME: &'static str = "lock server";
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "lease",
            shape: KnobShape::Duration,
            example: "1s,2s",
        },
        Knob {
            name: "variant",
            shape: KnobShape::Choice(Variant::NAMES),
            example: "Correct,CheckThenAct",
        },
    ];

    type Settings = OwnLeaseSettings;
    type Config = OwnLeaseConfig;
    type Error = OwnLeaseError;

    fn lower(
        settings: OwnLeaseSettings,
        _cluster: &Cluster,
    ) -> Lowered<OwnLeaseConfig, OwnLeaseError> {
        let defaults = OwnLeaseConfig::default();
        let ttl_ns = settings.ttl.map_or(defaults.ttl_ns, |d| d.0);
        let config = OwnLeaseConfig {
            ttl_ns,
            renew_every_ns: settings.renew_every.map_or(ttl_ns / 4, |d| d.0),
            margin_ns: settings.margin.map_or(ttl_ns / 4, |d| d.0),
            work_every_ns: settings.work_every.map_or(defaults.work_every_ns, |d| d.0),
            act_delay_ns: settings.act_delay.map_or(defaults.act_delay_ns, |d| d.0),
            variant: settings.variant.unwrap_or_default(),
        };
        let renew_field = if settings.renew_every.is_some() {
            "renew_every"
        } else {
            "ttl"
        };
        let problems = Self::broken_rules(&config, renew_field);
        (config, problems)
    }

    fn settings(config: &OwnLeaseConfig) -> OwnLeaseSettings {
        OwnLeaseSettings {
            ttl: Some(DurationText(config.ttl_ns)),
            renew_every: Some(DurationText(config.renew_every_ns)),
            margin: Some(DurationText(config.margin_ns)),
            work_every: Some(DurationText(config.work_every_ns)),
            act_delay: Some(DurationText(config.act_delay_ns)),
            variant: Some(config.variant),
        }
    }

    fn info(config: &OwnLeaseConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &OwnLeaseConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("ttl", config.ttl_ns),
            ("renew_every", config.renew_every_ns),
            ("margin", config.margin_ns),
            ("work_every", config.work_every_ns),
            ("act_delay", config.act_delay_ns),
        ]
    }

    /// The events estimate counts one act per process per shortest period: the margin and
    /// the act delay are not periods, and only the holder writes.
    fn shortest_timing(config: &OwnLeaseConfig) -> (&'static str, Nanos) {
        let timings = [
            ("renew_every", config.renew_every_ns),
            ("work_every", config.work_every_ns),
        ];
        let (name, ns) = timings
            .into_iter()
            .min_by_key(|(_, ns)| *ns)
            .unwrap_or(("", 1));
        (name, ns.max(1))
    }

    fn heartbeat_ns(config: &OwnLeaseConfig) -> Nanos {
        config.renew_every_ns
    }

    /// `lease` sets the TTL, the renewal interval and the margin keep their ratio to it;
    /// `variant` picks the variant.
    fn vary(
        config: &OwnLeaseConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<OwnLeaseConfig, Problem<OwnLeaseError>> {
        let mut settings = Self::settings(config);
        match (name, value) {
            ("lease", KnobValue::Duration(ttl_ns)) => {
                let keep_ratio = |ns: u64| {
                    let scaled =
                        u128::from(ns) * u128::from(ttl_ns) / u128::from(config.ttl_ns.max(1));
                    DurationText(u64::try_from(scaled).unwrap_or(u64::MAX))
                };
                settings.renew_every = Some(keep_ratio(config.renew_every_ns));
                settings.margin = Some(keep_ratio(config.margin_ns));
                settings.ttl = Some(DurationText(ttl_ns));
            }
            ("variant", KnobValue::Choice(choice)) => match Variant::named(choice) {
                Some(variant) => settings.variant = Some(variant),
                None => return Err(unknown_knob(name)),
            },
            _ => return Err(unknown_knob(name)),
        }
        lower_checked::<Self>(settings, cluster)
    }

    fn properties(_config: &OwnLeaseConfig) -> splitbrain_sim::Properties {
        crate::belief::property()
    }

    fn run(
        config: &OwnLeaseConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        // The members, then the lock server as process `members`.
        let processes = processes(sim.members, config);
        run_processes(sim, info, processes, options)
    }
}

fn unknown_knob(name: &str) -> Problem<OwnLeaseError> {
    Problem {
        field: "",
        error: CommonRule::UnknownKnob {
            knob: name.to_string(),
        }
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(text: &str) -> Lowered<OwnLeaseConfig, OwnLeaseError> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let settings: OwnLeaseSettings = options.from_str(text).expect(text);
        OwnLease::lower(settings, &Cluster { nodes: 3 })
    }

    #[test]
    fn empty_settings_lower_to_the_default_configuration() {
        let (config, problems) = lower("()");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(config, OwnLeaseConfig::default());
    }

    #[test]
    fn written_settings_lower_back_to_the_same_configuration() {
        let config = OwnLeaseConfig {
            variant: Variant::CheckThenActFenced,
            ..OwnLeaseConfig::default()
        };
        let (lowered, problems) =
            OwnLease::lower(OwnLease::settings(&config), &Cluster { nodes: 3 });
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(lowered, config);
    }

    #[test]
    fn a_renewal_interval_at_the_ttl_is_refused_at_the_field_written() {
        let (_, problems) = lower(r#"(ttl: "1s", renew_every: "1s")"#);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "renew_every");
        assert_eq!(
            problems[0].error.to_string(),
            "the renewal interval 1s must be below the TTL 1s".replace('"', "")
        );
    }

    #[test]
    fn a_margin_that_leaves_no_time_to_renew_is_refused_with_a_hint() {
        let (_, problems) = lower(r#"(ttl: "1s", renew_every: "500ms", margin: "600ms")"#);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "margin");
        assert!(problems[0].error.hint().unwrap().contains("clock drift"));
    }

    #[test]
    fn zero_timings_are_each_refused() {
        let (_, problems) = lower(r#"(work_every: "0s", act_delay: "0s")"#);
        let fields: Vec<&str> = problems.iter().map(|p| p.field).collect();
        assert_eq!(fields, ["work_every", "act_delay"]);
    }

    #[test]
    fn the_lease_knob_keeps_the_renewal_and_margin_ratios() {
        let config = OwnLeaseConfig::default();
        let varied = OwnLease::vary(
            &config,
            &Cluster { nodes: 3 },
            "lease",
            KnobValue::Duration(4_000_000_000),
        )
        .unwrap();
        assert_eq!(varied.renew_every_ns, 1_000_000_000);
        assert_eq!(varied.margin_ns, 1_000_000_000);
        let unknown = OwnLease::vary(
            &config,
            &Cluster { nodes: 3 },
            "ttl",
            KnobValue::Duration(1),
        );
        assert!(unknown.is_err());
    }
}
