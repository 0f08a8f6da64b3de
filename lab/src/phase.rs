//! The fault-phase rule of `compare` and `sweep`: where in the leader's heartbeat interval
//! a seed's explicit faults strike.
//!
//! A fault written at `30s` strikes at the same point of every cycle in every seed if it is
//! run as written; a leader crash then always lands, say, just after a keep-alive, and the
//! failover times of many seeds measure one phase many times. So both commands shift every
//! explicit fault of seed `seed` by the same offset,
//! `offset = floor(u * heartbeat / 2^64)` with `u` the first draw of
//! `SimRng::stream(seed, StreamId::SETUP ^ 0x5eed)`: uniform in `[0, heartbeat)`, where the
//! heartbeat is the interval at which the leader shows it is alive, as the design sets it
//! ([`splitbrain_algorithms::AlgorithmConfig::heartbeat_ns`]: the heartbeat; for leases the
//! renewal period). The draw depends on the seed only, so every design (and every value of a
//! sweep) sees the same trials: the same phase of its own interval. `run --trial K` runs
//! seed `K` so shifted, which is how each command's replay reproduces a run exactly.
//!
//! The nemesis' faults are drawn per seed already and are not shifted.

use splitbrain_scenario::Scenario;
use splitbrain_sim::{SimRng, StreamId};

/// Seed `seed` of `scenario` as `compare` and `sweep` run it: that seed, every explicit
/// fault shifted by [`offset_ns`] of the scenario's algorithm's heartbeat; not yet
/// materialised ([`Scenario::materialize`] draws the nemesis' faults).
pub fn trial(scenario: &Scenario, seed: u64) -> Scenario {
    let hb = scenario.algorithm.heartbeat_ns();
    let mut s = shifted(scenario, offset_ns(seed, hb));
    s.sim.seed = seed;
    s
}

/// The scenario with every explicit fault shifted by `offset_ns`.
fn shifted(scenario: &Scenario, offset_ns: u64) -> Scenario {
    let mut s = scenario.clone();
    for f in &mut s.sim.faults {
        f.at_ns = f.at_ns.saturating_add(offset_ns);
    }
    s
}

/// The shift of seed `seed`'s faults: uniform in `[0, heartbeat_ns)`, at the same phase of
/// the interval for every design and value.
pub fn offset_ns(seed: u64, heartbeat_ns: u64) -> u64 {
    let u = SimRng::stream(seed, StreamId::SETUP ^ 0x5eed).next_u64();
    ((u128::from(u) * u128::from(heartbeat_ns)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_fall_within_the_heartbeat_and_spread_over_it() {
        let hb_ns = 1_000_000_000;
        let offsets: Vec<u64> = (1..=200).map(|seed| offset_ns(seed, hb_ns)).collect();
        assert!(offsets.iter().all(|&o| o < hb_ns));
        let early = offsets.iter().filter(|&&o| o < hb_ns / 2).count();
        assert!(
            (70..=130).contains(&early),
            "{early} of 200 in the first half"
        );
        // The same seed, the same phase of any interval.
        let phase = |hb: u64| offset_ns(7, hb) as f64 / hb as f64;
        assert!((phase(50_000_000) - phase(3_000_000_000)).abs() < 1e-6);
    }
}
