#!/usr/bin/env bash
# Regenerates the README's chart gallery (docs/gallery/*.png) from shipped scenarios.
# Every chart is a pure function of scenario and seeds: rerunning gives the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/splitbrain
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" compare scenarios/compare-failover.ron --algorithms raft,bully,ring --seeds 20 --out "$work/compare" >/dev/null
"$bin" sweep scenarios/sweep-election-timeout.ron --param election_timeout=150ms..160ms,150ms..300ms,300ms..600ms --trials 100 --out "$work/sweep" >/dev/null
"$bin" run scenarios/raft-leader-crash.ron --plot "$work/crash" --quiet >/dev/null
"$bin" run scenarios/bully-partition.ron --plot "$work/bully" --quiet >/dev/null
"$bin" compare scenarios/compare-leases.ron --seeds 20 --out "$work/leases" >/dev/null

"$bin" compare scenarios/review-scheduler.ron --seeds 200 --fencing both --sizes 3 --out "$work/scheduler" >/dev/null
"$bin" compare scenarios/review-controller.ron --seeds 200 --fencing both --sizes 3 --out "$work/review" >/dev/null
"$bin" sweep scenarios/review-controller.ron --param stall=2s,5s,8s,10s,12s,15s --fencing both --trials 200 --out "$work/review-stall" >/dev/null
"$bin" run scenarios/review-controller.ron --design etcd-10s --seed 7 --fencing off --plot "$work/review-run" --quiet >/dev/null || true   # exit 1: the stale write it shows

"$bin" compare scenarios/multi-raft-node-crash.ron --seeds 20 --out "$work/multi-raft" >/dev/null
"$bin" compare scenarios/multi-raft-leaseholder-cut.ron --seeds 20 --out "$work/multi-raft-cut" >/dev/null
"$bin" compare scenarios/multi-raft-rolling-restart.ron --seeds 20 --out "$work/multi-raft-rolling" >/dev/null

mkdir -p docs/gallery
cp "$work/compare/failover_cdf.png"             docs/gallery/compare-failover-cdf.png
cp "$work/compare/messages_per_election.png"    docs/gallery/compare-messages-per-election.png
cp "$work/compare/messages_vs_cluster_size.png" docs/gallery/compare-messages-vs-cluster-size.png
cp "$work/sweep/failover_cdf.png"               docs/gallery/sweep-election-timeout-cdf.png
cp "$work/crash/sequence_failover_1.png"        docs/gallery/raft-leader-crash-sequence.png
cp "$work/bully/timeline.png"                   docs/gallery/bully-partition-timeline.png
cp "$work/leases/failover_cdf.png"              docs/gallery/compare-leases-cdf.png
cp "$work/leases/messages_per_election.png"     docs/gallery/compare-leases-messages.png
cp "$work/scheduler/leaderless_cdf.png"        docs/gallery/review-scheduler-leaderless-cdf.png
cp "$work/scheduler/failover_cdf.png"           docs/gallery/review-scheduler-recovery-cdf.png
cp "$work/review/failover_cdf.png"              docs/gallery/review-controller-cdf.png
cp "$work/review-stall/safety_violations.png"   docs/gallery/review-controller-stall-violations.png
cp "$work/review-run/sequence_failover_1.png"  docs/gallery/review-controller-stall-sequence.png
cp "$work/review-run/timeline.png"             docs/gallery/review-controller-stall-timeline.png
cp "$work/multi-raft/curve_ranges_unavailable.png"     docs/gallery/multi-raft-crash-unavailable.png
cp "$work/multi-raft-cut/curve_ranges_unavailable.png" docs/gallery/multi-raft-leaseholder-cut-unavailable.png
cp "$work/multi-raft-rolling/curve_lease_balance.png"  docs/gallery/multi-raft-rolling-lease-balance.png
# The raft-rs differential ships whole (report.md links every chart, CSV and JSON), written
# in place so that its command line names the folder it is in.
rm -rf docs/gallery/raft-vs-raft-rs
"$bin" compare scenarios/compare-raft-rs.ron --seeds 200 --out docs/gallery/raft-vs-raft-rs >/dev/null
echo "docs/gallery updated"
