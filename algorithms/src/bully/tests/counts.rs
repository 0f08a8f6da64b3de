//! Message counts of one election, checked against the textbook formulas and against a
//! naive oracle that replays the cascade by brute force.
//!
//! What is counted: every ELECTION, OK and COORDINATOR message sent from the moment the
//! detector starts its election until the cluster has settled, including the messages sent
//! to crashed nodes (they are sent, and lost). Heartbeats are not election traffic and are
//! left out. The setting is the textbook one: the coordinator (the highest id) has crashed,
//! and exactly one node, the detector, notices; the others join only when an ELECTION
//! reaches them (their own failure detectors are disarmed).

use super::settled;
use crate::bully::{BullyNode, BullyTimer};
use crate::testing::{counts_of, Cluster, MS};
use proptest::prelude::*;

const KINDS: [&str; 3] = ["Election", "Ok", "Coordinator"];

/// Crashes the nodes in `dead` (the coordinator, the highest id, among them), lets
/// `detector` alone notice, and returns `[ELECTION, OK, COORDINATOR]` sent until the cluster
/// settles, and the new coordinator.
fn one_election(members: usize, dead: &[usize], detector: usize, seed: u64) -> ([u64; 3], usize) {
    assert!(dead.contains(&(members - 1)));
    let mut cluster: Cluster<BullyNode> = settled(members, seed);
    for &node in dead {
        cluster.crash(node);
    }
    for node in 0..members {
        if cluster.is_up(node) {
            cluster.disarm(node, BullyTimer::Failure);
        }
    }
    let mark = cluster.mark();
    cluster.fire(detector, BullyTimer::Failure);
    let leader = cluster.run_until_leader(1_000 * MS);
    cluster.run_for(300 * MS);
    assert_eq!(
        cluster.leaders(),
        vec![leader],
        "the election settled on one leader"
    );
    assert!(cluster.all_recognise(leader));
    let counts = counts_of(&cluster.sent_since(mark), &KINDS);
    ([counts[0], counts[1], counts[2]], leader)
}

/// The naive oracle: replays the cascade one node at a time. Every live node from the
/// detector up starts an election and sends ELECTION to every higher id, dead or alive;
/// every live receiver answers each ELECTION with one OK; the highest live id sends
/// COORDINATOR to every lower id, dead or alive.
fn oracle(members: usize, dead: &[usize], detector: usize) -> ([u64; 3], usize) {
    let alive = |node: usize| !dead.contains(&node);
    let winner = (0..members)
        .rev()
        .find(|n| alive(*n))
        .expect("someone is alive");
    let mut election = 0;
    let mut ok = 0;
    for candidate in (detector..members).filter(|n| alive(*n)) {
        for higher in candidate + 1..members {
            election += 1;
            if alive(higher) {
                ok += 1;
            }
        }
    }
    let coordinator = winner as u64;
    ([election, ok, coordinator], winner)
}

#[test]
fn best_case_the_second_highest_detects_and_sends_n_minus_2_coordinator_messages() {
    // Coulouris et al. 15.3.1: "the process with the second-highest identifier notices the
    // coordinator's failure. Then it can immediately elect itself and send n - 2
    // coordinator messages." Here the detector only suspects the coordinator (a heartbeat
    // timeout is not knowledge), so it first sends the one ELECTION that gets no answer:
    // n - 2 COORDINATOR + 1 ELECTION = n - 1 messages, no OK.
    for n in 2..=9usize {
        let (counts, leader) = one_election(n, &[n - 1], n - 2, n as u64);
        let n = n as u64;
        assert_eq!(counts, [1, 0, n - 2], "n = {n}");
        assert_eq!(counts.iter().sum::<u64>(), n - 1);
        assert_eq!(leader as u64, n - 2);
    }
}

#[test]
fn worst_case_the_lowest_detects_and_the_cascade_costs_n_squared_minus_n_minus_1() {
    // Coulouris et al. 15.3.1 (after Garcia-Molina 1982): when the lowest id detects the
    // failure, "n - 1 processes altogether begin elections, each sending messages to
    // processes with higher identifiers", O(n^2). Exactly, with the crashed coordinator n-1:
    //   ELECTION    = (n-1) + (n-2) + ... + 1        = n(n-1)/2   (node k sends n-1-k)
    //   OK          = 1 + 2 + ... + (n-2)            = (n-1)(n-2)/2 (node k answers k lower)
    //   COORDINATOR = n - 2                          (node n-2 to every lower id)
    //   total       = (n-1)^2 + n - 2                = n^2 - n - 1
    for n in 2..=9usize {
        let (counts, leader) = one_election(n, &[n - 1], 0, 100 + n as u64);
        let n = n as u64;
        assert_eq!(
            counts,
            [n * (n - 1) / 2, (n - 1) * (n - 2) / 2, n - 2],
            "n = {n}"
        );
        assert_eq!(counts.iter().sum::<u64>(), n * n - n - 1);
        assert_eq!(leader as u64, n - 2);
    }
}

#[test]
fn any_single_detector_costs_what_the_closed_form_says() {
    // Detector k, coordinator n-1 crashed, everyone else alive:
    //   ELECTION = (n-1-k)(n-k)/2, OK = (n-2-k)(n-1-k)/2, COORDINATOR = n-2.
    // Both textbook cases above are the ends of this range.
    let n = 8usize;
    for k in 0..n - 1 {
        let (counts, _) = one_election(n, &[n - 1], k, 200 + k as u64);
        let (n, k) = (n as u64, k as u64);
        let expected = [
            (n - 1 - k) * (n - k) / 2,
            (n - 2 - k) * (n - 1 - k) / 2,
            n - 2,
        ];
        assert_eq!(counts, expected, "detector {k}");
        assert_eq!(counts, oracle(n as usize, &[n as usize - 1], k as usize).0);
    }
}

/// Found by the differential test below (8 members, 5 and 7 down, detector 0: 5 ELECTION and
/// 3 OK above the oracle): a node that got an OK and awaited the COORDINATOR followed the
/// crashed coordinator's last heartbeat again, and the next ELECTION made it start a second
/// election. It ignores a heartbeat of the coordinator it followed, as a candidate does.
#[test]
fn a_heartbeat_of_the_crashed_coordinator_in_flight_does_not_end_the_wait() {
    let mut cluster: Cluster<BullyNode> = settled(3, 1);
    cluster.fire(2, BullyTimer::Heartbeat);
    cluster.crash(2);
    cluster.fire(0, BullyTimer::Failure);
    cluster.deliver(0, 1, "Election");
    cluster.deliver(1, 0, "Ok");
    assert!(cluster.timer_armed(0, BullyTimer::Coordinator));
    cluster.deliver(2, 0, "Heartbeat");
    assert!(
        cluster.timer_armed(0, BullyTimer::Coordinator),
        "n0 still awaits the COORDINATOR (n1 will send it)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Differential test of the priority rule and of the cascade against the oracle: any set
    /// of crashed nodes (the old coordinator among them), any live detector.
    #[test]
    fn the_highest_live_id_wins_and_the_cascade_matches_the_oracle(
        members in 2usize..9,
        dead_bits in any::<u16>(),
        detector_pick in any::<u16>(),
        seed in any::<u64>(),
    ) {
        let mut dead: Vec<usize> = (0..members - 1).filter(|i| dead_bits & (1 << i) != 0).collect();
        dead.push(members - 1);
        let alive: Vec<usize> = (0..members).filter(|i| !dead.contains(i)).collect();
        prop_assume!(!alive.is_empty());
        let detector = alive[detector_pick as usize % alive.len()];
        let (counts, leader) = one_election(members, &dead, detector, seed);
        let (expected, winner) = oracle(members, &dead, detector);
        prop_assert_eq!(leader, winner);
        prop_assert_eq!(counts, expected);
    }
}
