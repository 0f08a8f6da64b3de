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
