//! `timeout_draw`: whether every restart of the election timer draws a new length (paper,
//! LogCabin) or only a role change does (etcd-io/raft's `reset`).

use super::harness::{config, started, MS};
use crate::raft::{RaftConfig, RaftTimeoutDraw, RaftTimer};

fn drawing(rule: RaftTimeoutDraw) -> RaftConfig {
    RaftConfig {
        timeout_draw: rule,
        ..config(false, false)
    }
}

/// The lengths of a follower's election countdowns, as set by the first `heartbeats` of a
/// steady leader: deadline minus the time it was armed, just after each heartbeat.
fn countdown_lengths(rule: RaftTimeoutDraw, seed: u64, heartbeats: usize) -> Vec<u64> {
    let mut cluster = started(3, &drawing(rule), seed);
    let leader = cluster.run_until_leader(2_000 * MS);
    let follower = (leader + 1) % 3;
    let mut lengths = Vec::new();
    // The countdown under way when the leader is found was armed earlier: not a sample.
    let mut last_deadline = cluster.timer_deadline(follower, RaftTimer::Election);
    while lengths.len() < heartbeats {
        cluster.run_for(MS);
        let deadline = cluster
            .timer_deadline(follower, RaftTimer::Election)
            .expect("a follower's election timer is armed");
        if last_deadline != Some(deadline) {
            // Re-armed by a heartbeat within the last millisecond.
            lengths.push(deadline - cluster.now());
            last_deadline = Some(deadline);
        }
    }
    lengths
}

/// Countdown lengths seen just after re-arming are within a millisecond of the drawn
/// length; equal lengths mean "within 1 ms of the first".
fn all_within_a_ms(lengths: &[u64]) -> bool {
    lengths.iter().all(|l| l.abs_diff(lengths[0]) <= MS)
}

#[test]
fn on_role_change_a_follower_keeps_one_timeout_while_it_follows() {
    for seed in 1..=10 {
        let lengths = countdown_lengths(RaftTimeoutDraw::OnRoleChange, seed, 8);
        assert!(all_within_a_ms(&lengths), "seed {seed}: {lengths:?}");
    }
}

#[test]
fn every_restart_draws_a_new_timeout_at_each_heartbeat() {
    for seed in 1..=10 {
        let lengths = countdown_lengths(RaftTimeoutDraw::EveryRestart, seed, 8);
        assert!(!all_within_a_ms(&lengths), "seed {seed}: {lengths:?}");
    }
}

#[test]
fn on_role_change_a_new_term_draws_a_new_timeout() {
    // Each new leader makes the followers `becomeFollower` again: over many terms, the
    // timeouts they keep differ.
    let kept: Vec<u64> = (1..=10)
        .map(|seed| countdown_lengths(RaftTimeoutDraw::OnRoleChange, seed, 1)[0])
        .collect();
    assert!(!all_within_a_ms(&kept), "{kept:?}");
}
