//! Reproducers that hunts over the multi-range model found, kept as scenarios: each broke a
//! property before its fix and must stay safe.

use crate::common::run_text;

/// Found by `splitbrain hunt benches/multi-raft/nemesis-700-epoch.ron --seeds 1000` (seed
/// 156, shrunk to two bridge partitions): a lease transferred to n3 (expiration-based, as
/// CockroachDB transfers them) was upgraded to an epoch lease while n3's liveness record
/// would expire before the expiration lease. The upgrade record reached the next leader,
/// which found n3's epoch raised and took range 43 while n3 still used the expiration
/// lease: `lease_disjointness` broke at 24.86 s. The upgrade now waits until the record
/// outlasts the lease (`roachpb.Lease.Equivalent`).
#[test]
fn a_transferred_lease_is_upgraded_only_while_the_liveness_record_outlasts_it() {
    let report = run_text(
        r#"Scenario(
    name: "multi-raft-epoch-upgrade-seed156",
    seed: 156,
    duration: "24.9s",
    nodes: 7,
    algorithm: MultiRaft(ranges: 700, lease: Epoch),
    network: (latency: Uniform("5ms", "200ms")),
    faults: [
        (at: "14.3s", do: Partition(Bridge(Random)), heal_after: "2.484728974s"),
        (at: "21.275353367s", do: Partition(Bridge(Random)), heal_after: "2.829867825s"),
    ],
    expect: Safe,
)"#,
    );
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let transfers = report.measures.iter().find(|m| m.name == "lease_transfers");
    assert!(transfers.is_some_and(|m| m.value >= 10.0), "{transfers:?}");
}

/// Found by `splitbrain hunt benches/multi-raft/nemesis-700-epoch.ron --seed-range
/// 1001..4000` (seed 3822, 28 faults; the shrinker kept them all): the liveness range's
/// leaseholder raised n4's epoch in an entry that did not commit (its proposal was given up
/// after an election timeout), then answered another increment request at once from that
/// entry's records ("n4 is at epoch 2"). The entry was lost to the next leader, n4's
/// heartbeat extended epoch 1 and n4 used its epoch lease of range 121 again, while n2,
/// told of the raise, took that range: `lease_disjointness` broke at 44.06 s. Answers now
/// wait for the next entry when the records they read are not committed.
#[test]
fn liveness_answers_never_come_from_an_uncommitted_entry() {
    let text = std::fs::read_to_string(
        crate::common::repo_root().join("tests/fixtures/multi-raft-epoch-seed3822.ron"),
    )
    .expect("the fixture is in the repository");
    let report = run_text(&text);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}
