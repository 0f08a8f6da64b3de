//! Whole runs of a 3-member etcd cluster on the real engine: Raft inside the members,
//! Promote and Demote, leader-only expiry, forwarding, the 3.4/3.5 difference under a
//! leader stuck in fsync, determinism, and a sweep of seeds under faults.

use super::*;
use crate::etcd::{info, EtcdProcess};
use splitbrain_sim::Process as _;
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, PartitionShape, RunReport, Sim, SimConfig, Target,
    Transport, NANOS_PER_MILLI, NANOS_PER_SEC,
};

const S: u64 = NANOS_PER_SEC;
const MS: u64 = NANOS_PER_MILLI;
/// Election members (clients); the etcd members are processes 3, 4 and 5.
const NODES: usize = 3;

fn cluster_config(version: EtcdVersion) -> EtcdConfig {
    EtcdConfig {
        ttl_ns: 2 * S,
        keepalive_ns: 2 * S / 3,
        members: 3,
        version,
        ..EtcdConfig::default()
    }
}

fn sim_config(seed: u64, duration_ns: u64, faults: Vec<FaultSpec>) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, NODES, duration_ns);
    sim.network.transport = Transport::Stream(Default::default());
    sim.faults = faults;
    sim
}

/// Runs the cluster; returns the report and the processes at the end.
fn run(config: &EtcdConfig, sim: SimConfig) -> (RunReport, Vec<EtcdProcess>) {
    let processes = crate::etcd::processes(NODES, config);
    let mut engine = Sim::new(sim, info(config, NODES), processes);
    let report = engine.run().expect("within the default limits");
    (report, engine.processes().to_vec())
}

fn members(processes: &[EtcdProcess]) -> Vec<&EtcdMember> {
    processes
        .iter()
        .filter_map(|p| p.get::<EtcdMember>())
        .collect()
}

fn fault(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
        after: None,
    }
}

#[test]
fn a_three_member_cluster_elects_one_raft_leader_and_serves_the_election() {
    let config = cluster_config(EtcdVersion::V3_4);
    let (report, processes) = run(&config, sim_config(1, 10 * S, Vec::new()));
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let members = members(&processes);
    assert_eq!(members.iter().filter(|m| m.leads()).count(), 1);
    assert_eq!(members.iter().filter(|m| m.primary()).count(), 1);
    assert!(report.final_leader.is_some(), "a client leads");
    for m in &members {
        assert_eq!(m.lease_count(), NODES, "every member applied the 3 grants");
        assert!(m.applied() >= 7, "an empty entry, 3 grants, 3 txns");
    }
    // The service members never claim: only clients appear as leaders.
    assert!(report.leaders.iter().all(|t| t.node.index() < NODES));
    // `run --stop-at` names the Raft leader as an etcd member, not as a client.
    let leader = members.iter().position(|m| m.leads()).expect("one leads");
    for m in &members {
        let shown = m.inspect().into_iter().find(|(name, _)| *name == "leader");
        assert_eq!(shown, Some(("leader", format!("etcd-{leader}"))));
    }
}

/// The member (0, 1 or 2) whose Raft leads at `at_ns` of a quiet run of `seed`.
fn raft_leader_at(config: &EtcdConfig, seed: u64, at_ns: u64) -> usize {
    let (_, processes) = run(config, sim_config(seed, at_ns, Vec::new()));
    members(&processes)
        .iter()
        .position(|m| m.leads())
        .expect("a leader by then")
}

/// The client that leads at the end of a quiet run of `seed` to `at_ns`.
fn holder_at(config: &EtcdConfig, seed: u64, at_ns: u64) -> usize {
    let (report, _) = run(config, sim_config(seed, at_ns, Vec::new()));
    report.final_leader.expect("a holder").index()
}

#[test]
fn a_lease_outlives_a_leader_kill_by_ttl_plus_the_election_timeout_from_the_new_leader() {
    // The etcd leader and the election's holder die together at 5 s. The holder's lease was
    // last renewed before 5 s, so without Promote it would expire by 7 s (TTL 2 s). The new
    // leader (elected 1 to 1.9 s after its followers last heard the old one, plus its own
    // round) promotes its lessor at its first entry: the lease lives TTL + 1 s from then, so
    // the next holder cannot lead before 5 + 1 + 3 = 9 s; and it leads within the failover,
    // the 3 s, a sweep and the watch.
    let config = cluster_config(EtcdVersion::V3_4);
    for seed in 1..=5 {
        let leader = raft_leader_at(&config, seed, 5 * S);
        let holder = holder_at(&config, seed, 5 * S);
        let faults = vec![
            fault(
                5 * S,
                FaultAction::Crash(Target::Node((NODES + leader) as u32)),
                None,
            ),
            fault(5 * S, FaultAction::Crash(Target::Node(holder as u32)), None),
        ];
        let (report, processes) = run(&config, sim_config(seed, 20 * S, faults));
        let next = report
            .leaders
            .iter()
            .find(|t| t.at_ns > 5 * S)
            .unwrap_or_else(|| panic!("seed {seed}: a new holder"));
        assert_ne!(next.node.index(), holder);
        assert!(
            next.at_ns >= 9 * S,
            "seed {seed}: the new holder led at {} ns, before TTL + 1 s from any new leader",
            next.at_ns
        );
        assert!(next.at_ns <= 14 * S, "seed {seed}: {} ns", next.at_ns);
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        let survivors = members(&processes)
            .into_iter()
            .enumerate()
            .filter(|(i, m)| *i != leader && m.leads())
            .count();
        assert_eq!(survivors, 1, "seed {seed}: one of the two survivors leads");
    }
}

#[test]
fn only_the_leaders_lessor_sweeps_and_its_revoke_reaches_every_member() {
    // The holder dies at 5 s and stays dead: its lease expires on the leader's lessor alone;
    // every member applies the revoke.
    let config = cluster_config(EtcdVersion::V3_4);
    let holder = holder_at(&config, 2, 5 * S);
    let faults = vec![fault(
        5 * S,
        FaultAction::Crash(Target::Node(holder as u32)),
        None,
    )];
    let (report, processes) = run(&config, sim_config(2, 15 * S, faults));
    let members = members(&processes);
    assert_eq!(members.iter().filter(|m| m.primary()).count(), 1);
    for m in &members {
        assert_eq!(
            m.lease_count(),
            NODES - 1,
            "the dead holder's lease is revoked"
        );
    }
    assert!(report
        .leaders
        .iter()
        .any(|t| t.at_ns > 5 * S && t.node.index() != holder));
}

/// How many messages of `kind` were delivered in a run.
fn delivered(report: &RunReport, kind: &str) -> u64 {
    report
        .messages
        .iter()
        .filter(|m| m.kind == kind)
        .map(|m| m.delivered)
        .sum()
}

#[test]
fn followers_forward_keepalives_to_the_leader_and_every_lease_stays_alive() {
    // Clients start on members 0, 1 and 2: two of them talk to followers, whose lessors are
    // not primary; their keep-alives are forwarded, and no lease ever lapses.
    let config = cluster_config(EtcdVersion::V3_4);
    let (report, processes) = run(&config, sim_config(3, 30 * S, Vec::new()));
    assert!(
        delivered(&report, "RenewForward") > 20,
        "{:?}",
        report.messages
    );
    assert!(delivered(&report, "RenewForwardResp") > 20);
    assert_eq!(report.leaders.len(), 1, "one holder for the whole run");
    for m in members(&processes) {
        assert_eq!(m.lease_count(), NODES);
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let config = cluster_config(EtcdVersion::V3_5);
    let faults = || {
        vec![fault(
            4 * S,
            FaultAction::Crash(Target::Node(4)),
            Some(3 * S),
        )]
    };
    let (a, _) = run(&config, sim_config(9, 15 * S, faults()));
    let (b, _) = run(&config, sim_config(9, 15 * S, faults()));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let (c, _) = run(&config, sim_config(10, 15 * S, faults()));
    assert_ne!(format!("{a:?}"), format!("{c:?}"), "another seed differs");
}

/// The fsync-stuck leader of etcd issue 15247: every fsync of the etcd leader takes 10 s
/// from 5 s to 15 s (the fsync under way ends at about 15 s; the one queued behind it
/// begins after the heal, at the disk's own speed); a waiter restarts at 5.5 s, so that its new grant gives the
/// leader a write to be stuck in. Writes are unfenced: a second holder shows as a
/// `fencing_safety` violation. `None` when the holder does not talk to the etcd leader.
fn stuck_leader(version: EtcdVersion, seed: u64) -> Option<RunReport> {
    let config = cluster_config(version);
    let leader = raft_leader_at(&config, seed, 5 * S);
    let holder = holder_at(&config, seed, 5 * S);
    if holder % 3 != leader {
        return None;
    }
    let waiter = (holder + 1) % NODES;
    let target = Target::Node((NODES + leader) as u32);
    let faults = vec![
        fault(5 * S, FaultAction::SlowDisk(target, 10 * S), Some(10 * S)),
        fault(
            5 * S + 500 * MS,
            FaultAction::Crash(Target::Node(waiter as u32)),
            Some(500 * MS),
        ),
    ];
    let mut sim = sim_config(seed, 40 * S, faults);
    sim.disk.batch = true;
    sim.write_every_ns = 100 * MS;
    sim.fencing = false;
    Some(run(&config, sim).0)
}

#[test]
fn a_stuck_leader_renews_and_revokes_in_3_4_and_not_in_3_5() {
    // 3.4.23: the stuck member answers no keep-alive (they wait behind its WAL), so the
    // holder's session ends and the waiter leads once the new leader has expired the
    // holder's lease; the stuck member's lessor is still primary (its Demote waits behind
    // the WAL too) and, once its writes complete after 15 s, the revokes its sweep
    // proposed for leases expired in its own view (the new holder's: renewed at the new
    // leader only) reach the new leader and commit (etcd issue 12528): the new holder
    // learns it only at its next keep-alive, while the old one, waiting on its key, leads.
    // 3.5: `ensureLeadership` drops the stale revokes (and refuses the stuck member's
    // renewals: the client moves to a healthy member).
    let (mut seen, mut broken) = (0, 0);
    for seed in 1..=12 {
        let (Some(old), Some(new)) = (
            stuck_leader(EtcdVersion::V3_4, seed),
            stuck_leader(EtcdVersion::V3_5, seed),
        ) else {
            continue;
        };
        seen += 1;
        assert!(
            new.violations.is_empty(),
            "seed {seed}: {:?}",
            new.violations
        );
        assert_eq!(new.overlap_ns, 0, "seed {seed}");
        for violation in &old.violations {
            assert_eq!(violation.invariant, Invariant::FencingSafety, "seed {seed}");
            assert!(
                violation.at_ns > 15 * S,
                "seed {seed}: after the writes complete"
            );
        }
        broken += usize::from(!old.violations.is_empty());
    }
    assert!(seen >= 2, "{seen} seeds had the holder on the etcd leader");
    assert!(broken >= 1, "3.4 broke in {broken} of {seen} seeds");
}

/// `write_every`: other clients' puts keep the leader's WAL busy, so a leader whose disk is
/// stuck has a write to be stuck in, sends nothing behind it, and the others elect a new
/// leader. Without the load (and without a client write at that moment) nothing writes, and
/// the leader with the stuck disk goes on leading.
#[test]
fn a_write_load_is_what_a_stuck_leader_is_stuck_in() {
    for seed in 1..=3 {
        for load in [None, Some(20 * MS)] {
            let config = EtcdConfig {
                write_every_ns: load,
                ..cluster_config(EtcdVersion::V3_4)
            };
            let leader = raft_leader_at(&config, seed, 5 * S);
            let target = Target::Node((NODES + leader) as u32);
            let stuck = fault(5 * S, FaultAction::SlowDisk(target, 10 * S), Some(10 * S));
            let mut sim = sim_config(seed, 12 * S, vec![stuck]);
            sim.disk.batch = true;
            let (_, processes) = run(&config, sim);
            let members = members(&processes);
            let leaders: Vec<usize> = (0..3).filter(|i| members[*i].leads()).collect();
            let expected = if load.is_some() {
                (0..3).filter(|i| *i != leader).collect::<Vec<_>>()
            } else {
                vec![leader]
            };
            assert_eq!(leaders.len(), 1, "seed {seed}, load {load:?}: {leaders:?}");
            assert!(
                expected.contains(&leaders[0]),
                "seed {seed}, load {load:?}: leader {} before, {leaders:?} after",
                leader
            );
        }
    }
}

/// A seed's faults on the etcd members: a crash and restart, a pause longer than the
/// election timeout, an isolation, and message loss, on members the seed picks.
fn member_faults(seed: u64) -> Vec<FaultSpec> {
    let member = |k: u64| Target::Node((NODES as u64 + (seed + k) % 3) as u32);
    vec![
        fault(3 * S, FaultAction::Crash(member(0)), Some(2 * S)),
        fault(8 * S, FaultAction::Pause(member(1), 2500 * MS), None),
        fault(
            12 * S,
            FaultAction::Partition(PartitionShape::Isolate(member(2))),
            Some(3 * S),
        ),
        fault(16 * S, FaultAction::Loss(100_000), Some(2 * S)),
    ]
}

#[test]
fn two_hundred_seeds_of_member_faults_keep_every_safety_invariant() {
    for version in [EtcdVersion::V3_4, EtcdVersion::V3_5] {
        let config = cluster_config(version);
        let mut failovers = 0;
        for seed in 0..200 {
            let mut sim = sim_config(seed, 22 * S, member_faults(seed));
            sim.write_every_ns = 100 * MS;
            let (report, _) = run(&config, sim);
            let broken: Vec<_> = report
                .violations
                .iter()
                .filter(|v| v.invariant != Invariant::Liveness)
                .collect();
            assert!(broken.is_empty(), "{version:?} seed {seed}: {broken:?}");
            assert!(
                !report.leaders.is_empty(),
                "{version:?} seed {seed}: nobody led"
            );
            failovers += report.failovers.len();
        }
        // Faults on the service alone rarely cost the holder its lease (Promote).
        assert!(failovers < 200, "{version:?}: {failovers} failovers");
    }
}

#[test]
fn the_members_and_version_settings_are_checked_at_their_field() {
    use crate::algorithm::{Algorithm, Cluster};
    use crate::etcd::{Etcd, EtcdError, EtcdSettings};
    let cluster = Cluster { nodes: 3 };
    let problems = |settings: EtcdSettings| {
        let (_, problems) = Etcd::lower(settings, &cluster);
        problems
            .into_iter()
            .map(|p| (p.field, p.error))
            .collect::<Vec<_>>()
    };
    for members in [0, 2, 4, 9] {
        let settings = EtcdSettings {
            members: Some(members),
            ..EtcdSettings::default()
        };
        assert_eq!(
            problems(settings),
            [("members", EtcdError::MembersNotOdd { members })]
        );
    }
    let settings = EtcdSettings {
        members: Some(3),
        version: Some("3.6".to_string()),
        ..EtcdSettings::default()
    };
    let version = "3.6".to_string();
    assert_eq!(
        problems(settings),
        [("version", EtcdError::UnknownVersion { version })]
    );
    let settings = EtcdSettings {
        members: Some(3),
        variant: Some(crate::etcd::EtcdVariant::SetNx),
        ..EtcdSettings::default()
    };
    assert_eq!(problems(settings), [("variant", EtcdError::SetNxInCluster)]);
    let settings = EtcdSettings {
        members: Some(5),
        version: Some("3.5".to_string()),
        ..EtcdSettings::default()
    };
    let (config, found) = Etcd::lower(settings, &cluster);
    assert!(found.is_empty());
    assert_eq!((config.members, config.version), (5, EtcdVersion::V3_5));
    // Written back, and left out when they are the single service's defaults.
    let back = Etcd::settings(&config);
    assert_eq!(
        (back.members, back.version.as_deref()),
        (Some(5), Some("3.5"))
    );
    let single = Etcd::settings(&EtcdConfig::default());
    assert_eq!((single.members, single.version), (None, None));
}

/// The single service process runs no Raft: a `version` written for it would be ignored, and
/// is refused at its field instead (issue 43). The etcd behind Kubernetes API servers runs
/// Raft even with one member, and takes a version then.
#[test]
fn a_version_for_the_single_service_process_is_refused() {
    use crate::algorithm::{Algorithm, Cluster, SettingError};
    use crate::etcd::{Etcd, EtcdError, EtcdSettings};
    use crate::k8s_lease::{K8sLease, K8sSettings};
    let cluster = Cluster { nodes: 3 };
    for members in [None, Some(1)] {
        let settings = EtcdSettings {
            members,
            version: Some("3.5".to_string()),
            ..EtcdSettings::default()
        };
        let (_, problems) = Etcd::lower(settings, &cluster);
        let found: Vec<_> = problems.into_iter().map(|p| (p.field, p.error)).collect();
        let error = EtcdError::ClusterOnly { field: "version" };
        assert_eq!(found, [("version", error.clone())], "{members:?}");
        assert_eq!(
            error.to_string(),
            "`version` is a setting of an etcd cluster, and the single service process ignores it"
        );
        assert!(error.hint().unwrap().contains("`members: 3`"));
    }
    // Written back from a single process, no version: the file reads back.
    let single = EtcdConfig {
        version: EtcdVersion::V3_5,
        ..EtcdConfig::default()
    };
    let (_, problems) = Etcd::lower(Etcd::settings(&single), &cluster);
    assert!(problems.is_empty(), "{problems:?}");
    let k8s = K8sSettings {
        etcd_members: Some(1),
        etcd_version: Some("3.5".to_string()),
        ..K8sSettings::default()
    };
    let (config, problems) = K8sLease::lower(k8s, &cluster);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.etcd.map(|e| e.version), Some(EtcdVersion::V3_5));
}

#[test]
fn etcds_raft_settings_follow_the_version() {
    let old = raft_config(&cluster_config(EtcdVersion::V3_4));
    let new = raft_config(&cluster_config(EtcdVersion::V3_5));
    assert_eq!(
        (old.election_timeout_min_ns, old.election_timeout_max_ns),
        (S, 1900 * MS)
    );
    assert_eq!(old.heartbeat_ns, 100 * MS);
    assert!(old.check_quorum && new.check_quorum);
    assert!(!old.pre_vote && new.pre_vote);
}

/// Delivers `msg` from process `from` to `member` by hand, at time `now_ns`.
fn deliver(member: &mut EtcdMember, now_ns: i64, from: usize, msg: EtcdMsg) {
    let mut rng = splitbrain_sim::SimRng::stream(1, 9);
    let mut out = Vec::new();
    let mut ctx = Ctx::new(member.me(), NODES, now_ns, &mut rng, &mut out);
    member.on_message(&mut ctx, NodeId::from(from), msg);
}

fn txn_proposal(lease: u64) -> Proposal {
    Proposal {
        command: Command::Txn {
            owner: NodeId(0),
            lease,
        },
        origin: None,
        request: lease,
    }
}

#[test]
fn a_refused_append_leaves_the_proposals_of_the_entries_there() {
    let config = cluster_config(EtcdVersion::V3_4);
    let mut member = EtcdMember::new(1, NODES, 3, &config);
    let append = |term, prev_log_index, prev_log_term, entries, proposals| EtcdMsg::Raft {
        msg: crate::raft::RaftMsg::Append {
            term,
            prev_log_index,
            prev_log_term,
            entry_term: term,
            entries,
            commit: 0,
        },
        proposals,
    };
    // Member 0 (process 3), leader of term 1, sends entries 1 and 2.
    let first = vec![(1, txn_proposal(1)), (2, txn_proposal(2))];
    deliver(&mut member, 0, 3, append(1, 0, 0, 2, first));
    assert_eq!(member.proposals.get(&2), Some(&(1, txn_proposal(2))));
    // A leader of term 3 whose entry 1 is of term 2: the check fails, the log stays, and
    // so must the proposal of entry 2.
    deliver(
        &mut member,
        1,
        4,
        append(3, 1, 2, 1, vec![(2, txn_proposal(9))]),
    );
    assert_eq!(member.raft.term_at(2), Some(1));
    assert_eq!(member.proposals.get(&2), Some(&(1, txn_proposal(2))));
}

#[test]
fn a_five_member_cluster_rides_out_two_member_crashes() {
    // Five members tolerate two failures: the leader and one more die at 5 s; the holder's
    // lease (10 s) outlives the failover, and the three survivors elect one leader.
    for version in [EtcdVersion::V3_4, EtcdVersion::V3_5] {
        let config = EtcdConfig {
            ttl_ns: 10 * S,
            keepalive_ns: 10 * S / 3,
            members: 5,
            ..cluster_config(version)
        };
        for seed in 1..=5 {
            let leader = raft_leader_at(&config, seed, 5 * S);
            let other = (leader + 1) % 5;
            let crash = |m: usize| FaultAction::Crash(Target::Node((NODES + m) as u32));
            let faults = vec![
                fault(5 * S, crash(leader), None),
                fault(5 * S, crash(other), None),
            ];
            let (report, processes) = run(&config, sim_config(seed, 20 * S, faults));
            assert!(
                report.violations.is_empty(),
                "{version:?} seed {seed}: {:?}",
                report.violations
            );
            assert_eq!(
                report.leaders.len(),
                1,
                "{version:?} seed {seed}: one holder"
            );
            let survivors_leading = members(&processes)
                .into_iter()
                .enumerate()
                .filter(|(i, m)| *i != leader && *i != other && m.leads())
                .count();
            assert_eq!(survivors_leading, 1, "{version:?} seed {seed}");
        }
    }
}

#[test]
fn on_datagram_a_client_whose_member_is_dead_moves_on_when_its_grant_times_out() {
    // Member 0 (process 3), client 0's first member, is dead from the start. No stream
    // breaks on Datagram: the unanswered grant's retry goes to the next member.
    let config = cluster_config(EtcdVersion::V3_5);
    let mut sim = sim_config(
        4,
        10 * S,
        vec![fault(0, FaultAction::Crash(Target::Node(3)), None)],
    );
    sim.network.transport = Transport::Datagram;
    let (report, processes) = run(&config, sim);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    for m in members(&processes).into_iter().skip(1) {
        assert_eq!(
            m.lease_count(),
            NODES,
            "client 0 got its lease from another member"
        );
    }
}

/// `write_every` is a cluster's: refused on the single process and at zero, written back as
/// read.
#[test]
fn a_write_load_needs_a_cluster() {
    use crate::algorithm::{Algorithm, Cluster};
    use crate::etcd::{Etcd, EtcdError, EtcdSettings};
    use splitbrain_sim::duration::DurationText;
    let lower = |members: Option<usize>, every_ns: u64| {
        let settings = EtcdSettings {
            members,
            write_every: Some(DurationText(every_ns)),
            ..EtcdSettings::default()
        };
        Etcd::lower(settings, &Cluster { nodes: 3 })
    };
    for (members, every_ns) in [(None, 20 * MS), (Some(3), 0)] {
        let (_, problems) = lower(members, every_ns);
        let found: Vec<_> = problems.iter().map(|p| (p.field, &p.error)).collect();
        assert_eq!(
            found,
            [("write_every", &EtcdError::WriteLoadNotInCluster)],
            "{members:?} {every_ns}"
        );
    }
    let (config, problems) = lower(Some(3), 20 * MS);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.write_every_ns, Some(20 * MS));
    let (again, _) = Etcd::lower(Etcd::settings(&config), &Cluster { nodes: 3 });
    assert_eq!(again, config);
}
