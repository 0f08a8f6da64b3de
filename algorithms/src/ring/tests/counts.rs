//! Message counts of one ring election, checked against the textbook formulas and against a
//! naive oracle.
//!
//! What is counted: every ring message sent by the start of the run's election (every node
//! starts at once: Chang & Roberts' setting) until the ring has settled. `Election` (or
//! `Token`) counts the election lap(s), the winner's full lap included; `Elected` (or
//! `Coordinator`) the announcement lap; `Ack` one per ring message received. Heartbeats are
//! not election traffic and are left out. Nobody fails, so nothing is skipped. Latency is
//! one millisecond a hop, so that no announcement overtakes a candidacy still travelling
//! (with random latency it can, and the late candidacy is then dropped early: the counts can
//! only be lower, never higher).

use super::{config, ring_of};
use crate::ring::{RingInitiators, RingVariant};
use crate::testing::{counts_of, MS};

const KINDS: [&str; 5] = ["Election", "Elected", "Token", "Coordinator", "Ack"];

/// `[Election, Elected, Token, Coordinator, Ack]` sent by a ring with this order (ids in
/// ring order) from its start until it has settled.
fn first_election(order: &[u32], variant: RingVariant, initiators: RingInitiators) -> [u64; 5] {
    let mut cluster = ring_of(order, &config(variant, initiators), order.len() as u64);
    cluster.latency_ns = (MS, MS);
    cluster.start();
    cluster.run_for(40 * order.len() as u64 * MS);
    let top = order.len() - 1;
    assert_eq!(cluster.leaders(), vec![top], "{order:?}");
    assert!(cluster.all_recognise(top), "{order:?}");
    let counts = counts_of(&cluster.sent_since(0), &KINDS);
    [counts[0], counts[1], counts[2], counts[3], counts[4]]
}

/// The naive oracle for "every node initiates": each id travels until it meets a greater
/// one (the maximum goes all the way round, n hops). Walks the ring one hop at a time.
fn hops_until_greater(order: &[u32]) -> u64 {
    let n = order.len();
    let mut total = 0;
    for start in 0..n {
        let mut hops = 0;
        loop {
            hops += 1;
            let at = order[(start + hops) % n];
            if at > order[start] || hops == n {
                break;
            }
        }
        total += hops as u64;
    }
    total
}

fn ascending(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

fn descending(n: usize) -> Vec<u32> {
    (0..n as u32).rev().collect()
}

/// Every permutation of `0..n` (Heap's algorithm).
fn permutations(n: usize) -> Vec<Vec<u32>> {
    fn heap(k: usize, items: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if k <= 1 {
            out.push(items.clone());
            return;
        }
        for i in 0..k - 1 {
            heap(k - 1, items, out);
            let j = if k.is_multiple_of(2) { i } else { 0 };
            items.swap(j, k - 1);
        }
        heap(k - 1, items, out);
    }
    let mut out = Vec::new();
    heap(n, &mut (0..n as u32).collect(), &mut out);
    out
}

#[test]
fn chang_roberts_best_case_is_2n_minus_1_election_messages() {
    // Chang & Roberts 1979, every process initiating: when each node's successor has a
    // greater id (ascending in the direction of travel), every id but the maximum dies after
    // one hop and the maximum goes round: (n - 1) + n = 2n - 1 Election messages. Then n
    // Elected (the announcement lap), and one Ack per ring message.
    for n in 2..=9 {
        let counts = first_election(
            &ascending(n),
            RingVariant::ChangRoberts,
            RingInitiators::All,
        );
        let n = n as u64;
        assert_eq!(counts, [2 * n - 1, n, 0, 0, 3 * n - 1], "n = {n}");
    }
}

#[test]
fn chang_roberts_worst_case_is_n_times_n_plus_1_over_2_election_messages() {
    // Chang & Roberts 1979: when ids decrease in the direction of travel, id k travels k + 1
    // hops to the maximum and the maximum n: sum_{k<n-1}(k + 1) + n = n(n + 1)/2.
    for n in 2..=9 {
        let counts = first_election(
            &descending(n),
            RingVariant::ChangRoberts,
            RingInitiators::All,
        );
        let n = n as u64;
        let election = n * (n + 1) / 2;
        assert_eq!(counts, [election, n, 0, 0, election + n], "n = {n}");
    }
}

#[test]
fn chang_roberts_averages_n_times_the_nth_harmonic_number_over_all_ring_orders() {
    // Chang & Roberts 1979: over all arrangements of the ids, the expected number of
    // Election messages (every process initiating) is n * H_n = n * (1 + 1/2 + ... + 1/n).
    // Every one of the n! orders is run; the sum must be exactly n! * n * H_n.
    for n in 3..=6usize {
        let orders = permutations(n);
        assert_eq!(orders.len(), (1..=n).product::<usize>());
        let mut total = 0u64;
        for order in &orders {
            let counts = first_election(order, RingVariant::ChangRoberts, RingInitiators::All);
            assert_eq!(counts[0], hops_until_greater(order), "{order:?}");
            assert_eq!(counts[1], n as u64);
            total += counts[0];
        }
        // n! * n * H_n = n * sum_{k=1..n} n!/k, in integers.
        let factorial: u64 = (1..=n as u64).product();
        let expected: u64 = n as u64 * (1..=n as u64).map(|k| factorial / k).sum::<u64>();
        assert_eq!(total, expected, "n = {n}");
    }
}

#[test]
fn chang_roberts_with_one_initiator_costs_between_2n_and_3n_minus_1() {
    // Coulouris et al. 15.3.1: with a single initiator, the worst case is when its
    // anticlockwise neighbour has the highest id: n - 1 messages to reach it, n for its id to
    // go round, n Elected: 3n - 1. The best case, the initiator is the maximum: n + n = 2n.
    // In between: (hops from the initiator to the maximum) + n + n. With `Detector`
    // initiators, the first node of the ring starts the run's election.
    for n in 2..=9 {
        let worst = first_election(
            &ascending(n),
            RingVariant::ChangRoberts,
            RingInitiators::Detector,
        );
        let best = first_election(
            &descending(n),
            RingVariant::ChangRoberts,
            RingInitiators::Detector,
        );
        let n = n as u64;
        assert_eq!(worst[..2], [2 * n - 1, n], "n = {n}");
        assert_eq!(worst[0] + worst[1], 3 * n - 1);
        assert_eq!(best[..2], [n, n], "n = {n}");
        assert_eq!(best[0] + best[1], 2 * n);
    }
    for order in permutations(5) {
        let counts = first_election(&order, RingVariant::ChangRoberts, RingInitiators::Detector);
        let hops_to_max = order.iter().position(|id| *id == 4).expect("on the ring") as u64;
        assert_eq!(counts[0], hops_to_max + 5, "{order:?}");
        assert_eq!(counts[4], counts[0] + counts[1], "one Ack per ring message");
    }
}

#[test]
fn the_all_ids_ring_with_one_initiator_always_costs_exactly_2n() {
    // Tanenbaum & van Steen 6.5.1: one lap of the token (n), one of the coordinator
    // message (n), whatever the order: 2n, plus one Ack each.
    for n in 1..=9 {
        for order in [ascending(n), descending(n)] {
            let counts = first_election(&order, RingVariant::AllIds, RingInitiators::Detector);
            let n = n as u64;
            let acks = if n == 1 { 0 } else { 2 * n };
            let laps = if n == 1 { 0 } else { n };
            assert_eq!(counts, [0, 0, laps, laps, acks], "n = {n}");
        }
    }
    for order in permutations(5) {
        let counts = first_election(&order, RingVariant::AllIds, RingInitiators::Detector);
        assert_eq!(counts, [0, 0, 5, 5, 10], "{order:?}");
    }
}

#[test]
fn all_ids_with_every_node_initiating_costs_what_chang_roberts_does_plus_one_announcement() {
    // With the extinction rule, a token dies at the first node that initiated its own and
    // has a higher id: the token count is Chang & Roberts' sum, and exactly one
    // Coordinator lap follows.
    for order in permutations(5) {
        let counts = first_election(&order, RingVariant::AllIds, RingInitiators::All);
        let tokens = hops_until_greater(&order);
        assert_eq!(counts, [0, 0, tokens, 5, tokens + 5], "{order:?}");
    }
}

#[test]
fn the_oracle_agrees_with_the_closed_forms() {
    // Guards the oracle itself: 2n - 1 ascending, n(n + 1)/2 descending.
    for n in 1..=12usize {
        let m = n as u64;
        assert_eq!(hops_until_greater(&ascending(n)), 2 * m - 1);
        assert_eq!(hops_until_greater(&descending(n)), m * (m + 1) / 2);
    }
}

#[test]
fn with_random_latency_a_late_candidacy_never_starts_the_finished_election_again() {
    // With 1-5 ms a hop, a candidacy can reach a node after that node has followed the
    // winner's announcement. It carries an epoch older than that announcement and is dropped
    // there: one election, one claim, and never more Election messages than the oracle's.
    // (Without the rule, the late candidacy makes its receiver join a new election.)
    for (seed, order) in permutations(6).iter().enumerate() {
        let cfg = config(RingVariant::ChangRoberts, RingInitiators::All);
        let mut cluster = ring_of(order, &cfg, seed as u64);
        cluster.start();
        cluster.run_for(1_000 * MS);
        assert_eq!(cluster.claims_since(0).len(), 1, "{order:?}");
        assert_eq!(cluster.leader(), 5);
        let election = counts_of(&cluster.sent_since(0), &KINDS)[0];
        assert!(election <= hops_until_greater(order), "{order:?}");
    }
}
