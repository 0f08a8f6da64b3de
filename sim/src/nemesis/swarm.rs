//! Swarm mode's per-seed rates, and what one seed's nemesis drew.

use super::{NemesisConfig, NemesisKind};
use crate::fault::FaultSpec;
use crate::network_config::Latency;
use crate::rng::{SimRng, StreamId};
use crate::time::Nanos;
use serde::{Deserialize, Serialize};

/// The inclusive ranges swarm mode draws each seed's [`Rates`] from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SwarmRanges {
    /// The seed's mean gap between faults.
    pub mean_interval_ns: (Nanos, Nanos),
    /// The seed's longest fault: its faults last between the low end of
    /// [`NemesisConfig::fault_duration_ns`] and this.
    pub longest_fault_ns: (Nanos, Nanos),
    /// The seed's highest loss rate of a burst, and (drawn apart) of duplication, in ppm.
    pub max_loss_ppm: (u32, u32),
    /// The seed's largest clock jump, either way.
    pub max_clock_jump_ns: (Nanos, Nanos),
    /// The seed's largest drift, either way, in ppm.
    pub max_drift_ppm: (u32, u32),
    /// The seed's longest fsync of a slow disk.
    pub max_fsync_ns: (Nanos, Nanos),
    /// The seed's longest one-way message latency: its links' default latency becomes uniform
    /// between the low end of this range and the drawn value. `None`: the scenario's
    /// network as written.
    pub latency_ns: Option<(Nanos, Nanos)>,
}

impl SwarmRanges {
    /// The ranges a scenario gets when it gives none: around its scalar settings. Half to
    /// twice the mean interval; the longest fault anywhere in `fault_duration`; a tenth of
    /// each maximum up to it (loss, clock jump, drift, fsync); the latency as written.
    pub fn around(config: &NemesisConfig) -> Self {
        let tenth_up_to = |max: Nanos| ((max / 10).max(1).min(max), max);
        let tenth_up_to_ppm = |max: u32| ((max / 10).max(1).min(max), max);
        let (low, high) = config.fault_duration_ns;
        Self {
            mean_interval_ns: (
                (config.mean_interval_ns / 2).max(1),
                config.mean_interval_ns.saturating_mul(2),
            ),
            longest_fault_ns: (low.min(high), high.max(low)),
            max_loss_ppm: tenth_up_to_ppm(config.max_loss_ppm),
            max_clock_jump_ns: tenth_up_to(config.max_clock_jump_ns),
            max_drift_ppm: tenth_up_to_ppm(config.max_drift_ppm),
            max_fsync_ns: tenth_up_to(config.max_fsync_ns),
            latency_ns: None,
        }
    }

    /// Draws one seed's rates, from that seed's own [`StreamId::SWARM`] stream: the same
    /// eight draws in the same order whatever the kinds, so the rates never move the faults'
    /// draws nor each other.
    pub fn draw(&self, seed: u64) -> Rates {
        let mut rng = SimRng::stream(seed, StreamId::SWARM);
        let mut within = |(low, high): (u64, u64)| rng.between(low.min(high), high.max(low));
        let mean_interval_ns = within(self.mean_interval_ns).max(1);
        let longest_fault_ns = within(self.longest_fault_ns);
        let ppm = |(low, high): (u32, u32)| (u64::from(low), u64::from(high));
        let max_loss_ppm = within(ppm(self.max_loss_ppm)) as u32;
        let max_duplicate_ppm = within(ppm(self.max_loss_ppm)) as u32;
        let max_clock_jump_ns = within(self.max_clock_jump_ns);
        let max_drift_ppm = within(ppm(self.max_drift_ppm)) as u32;
        let max_fsync_ns = within(self.max_fsync_ns);
        let latency = within(self.latency_ns.unwrap_or((0, 0)));
        Rates {
            mean_interval_ns,
            longest_fault_ns,
            max_loss_ppm,
            max_duplicate_ppm,
            max_clock_jump_ns,
            max_drift_ppm,
            max_fsync_ns,
            latency_max_ns: self.latency_ns.map(|_| latency),
        }
    }
}

/// The rates and magnitudes one seed's nemesis runs with: drawn in swarm mode, the scalar
/// settings otherwise ([`NemesisConfig::fixed_rates`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rates {
    /// The mean gap between faults.
    pub mean_interval_ns: Nanos,
    /// The longest a fault lasts.
    pub longest_fault_ns: Nanos,
    /// The highest loss rate of a loss burst, in ppm.
    pub max_loss_ppm: u32,
    /// The highest duplication rate of a duplication burst, in ppm.
    pub max_duplicate_ppm: u32,
    /// The largest clock jump, either way.
    pub max_clock_jump_ns: Nanos,
    /// The largest drift, either way, in ppm.
    pub max_drift_ppm: u32,
    /// The longest fsync of a slow disk.
    pub max_fsync_ns: Nanos,
    /// The longest one-way latency of the run's links, when swarm mode varies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_max_ns: Option<Nanos>,
}

/// What one seed's nemesis will do: the kinds it enabled with their weights, its rates, and
/// the faults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// The kinds this seed enabled, each with its weight (1 without swarm mode).
    pub enabled: Vec<(NemesisKind, u32)>,
    /// The rates and magnitudes the faults were drawn with.
    pub rates: Rates,
    /// The faults drawn, in time order, each healing before the quiet tail.
    pub faults: Vec<FaultSpec>,
}

impl Schedule {
    /// The links' default latency of this seed's run, when swarm mode drew one: uniform
    /// between the low end of the range and the drawn maximum.
    pub fn latency(&self, config: &NemesisConfig) -> Option<Latency> {
        let (low, _) = config.swarm_ranges.latency_ns?;
        let high = self.rates.latency_max_ns?;
        Some(Latency::Uniform(low.min(high), high))
    }
}

impl Schedule {
    /// What the seed drew, without its faults: what a hunt's record, a reproducer and a
    /// summary show of it.
    pub fn drawn(&self, swarm: bool) -> Drawn {
        Drawn {
            swarm,
            enabled: self.enabled.clone(),
            rates: self.rates.clone(),
        }
    }
}

/// What one seed's nemesis drew: the kinds it enabled with their weights and its rates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawn {
    /// Whether swarm mode drew them (else they are the scenario's settings).
    pub swarm: bool,
    /// The kinds enabled, each with its weight.
    pub enabled: Vec<(NemesisKind, u32)>,
    /// The rates and magnitudes.
    pub rates: Rates,
}

impl Drawn {
    /// One line for people: `swarm: Crash x3, Stall x1; a fault every 3.2s on average,
    /// lasting up to 1.1s`, then the magnitudes of the kinds that are on.
    pub fn describe(&self) -> String {
        let kinds: Vec<String> = self
            .enabled
            .iter()
            .map(|(kind, weight)| format!("{kind:?} x{weight}"))
            .collect();
        let r = &self.rates;
        let on = |kind: NemesisKind| self.enabled.iter().any(|(k, _)| *k == kind);
        let pct = |ppm: u32| format!("{:.1}%", f64::from(ppm) / 10_000.0);
        let time = crate::time::format_duration;
        let mut parts = vec![format!(
            "a fault every {} on average, lasting up to {}",
            time(r.mean_interval_ns),
            time(r.longest_fault_ns)
        )];
        let magnitudes = [
            (
                NemesisKind::LossBurst,
                format!("loss up to {}", pct(r.max_loss_ppm)),
            ),
            (
                NemesisKind::Duplicate,
                format!("duplication up to {}", pct(r.max_duplicate_ppm)),
            ),
            (
                NemesisKind::ClockJump,
                format!("clock jumps up to {}", time(r.max_clock_jump_ns)),
            ),
            (
                NemesisKind::ClockDrift,
                format!("drift up to {} ppm", r.max_drift_ppm),
            ),
            (
                NemesisKind::SlowDisk,
                format!("fsync up to {}", time(r.max_fsync_ns)),
            ),
        ];
        parts.extend(
            magnitudes
                .into_iter()
                .filter(|(kind, _)| on(*kind))
                .map(|(_, part)| part),
        );
        if let Some(latency) = r.latency_max_ns {
            parts.push(format!("latency up to {}", time(latency)));
        }
        format!(
            "{}: {}; {}",
            if self.swarm { "swarm" } else { "fixed" },
            kinds.join(", "),
            parts.join(", ")
        )
    }
}
