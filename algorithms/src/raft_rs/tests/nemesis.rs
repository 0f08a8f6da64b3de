//! Random fault schedules from the engine's nemesis (`splitbrain_sim::nemesis`, every fault
//! kind), drawn per seed as `splitbrain hunt` draws them: raft-rs must stay safe on every
//! seed, and elect a leader again once the faults heal, whichever of pre-vote and
//! check-quorum is on.

use super::{run, settings, MS, SEC};
use splitbrain_sim::nemesis::{generate, NemesisConfig};
use splitbrain_sim::{LivenessVerdict, SimConfig};

const SEEDS: u64 = 200;

/// `hunt`'s materialisation: the schedule of `seed` joins the run's faults, in time order.
fn with_nemesis(seed: u64, members: usize, duration_ns: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, members, duration_ns);
    sim.write_every_ns = 100 * MS;
    let schedule = generate(&NemesisConfig::default(), seed, members, duration_ns);
    sim.faults.extend(schedule.faults);
    sim.faults.sort_by_key(|f| f.at_ns);
    sim
}

#[test]
fn raft_rs_stays_safe_under_two_hundred_random_fault_schedules() {
    let (mut faults, mut leader_changes, mut fenced) = (0, 0, 0);
    for seed in 0..SEEDS {
        let (pre_vote, check_quorum) = (seed % 2 == 1, seed % 4 >= 2);
        let sim = with_nemesis(seed, 5, 40 * SEC);
        faults += sim.faults.len();
        let report = run(sim, &settings(pre_vote, check_quorum)).report;
        leader_changes += report.counters.leader_changes;
        fenced += report.writes.rejected_stale;
        let case = format!("seed {seed}, pre_vote {pre_vote}, check_quorum {check_quorum}");
        assert!(
            report.violated_safety().is_empty(),
            "{case}: {:?}",
            report.violations
        );
        assert!(
            !matches!(report.liveness, LivenessVerdict::Missed { .. }),
            "{case}: {:?}",
            report.liveness
        );
    }
    // The schedules bite: leadership moves, and deposed leaders write and are fenced off.
    assert!(
        faults as u64 > 3 * SEEDS,
        "{faults} faults in {SEEDS} seeds"
    );
    assert!(leader_changes > SEEDS, "{leader_changes} leader changes");
    assert!(fenced > 0, "no stale write reached the resource");
}
