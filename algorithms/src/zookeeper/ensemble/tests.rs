//! Tests of the ensemble: FastLeaderElection's outcome and timing, sessions surviving a
//! leader's death (re-tracked with their full timeout), expiry only through a quorum
//! commit, clients moving between servers, determinism, and a sweep of server faults.

use super::super::{info, ZkConfig, ZkProcess};
use super::ZkServer;
use splitbrain_sim::Process as _;
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, NodeId, PartitionShape, RunReport, Sim, SimConfig,
    StreamConfig, Target, Transport, NANOS_PER_MILLI,
};

const S: u64 = 1_000_000_000;
const MS: u64 = NANOS_PER_MILLI;

/// tick 200 ms, sessions of 4 s (20 ticks, as the conformance runs' T = 4 s), initLimit 10
/// and syncLimit 5 (1 s).
fn ensemble(servers: u64) -> ZkConfig {
    ZkConfig {
        tick_ns: 200 * MS,
        session_timeout_ns: 4 * S,
        servers,
        ..ZkConfig::default()
    }
}

fn sim_config(seed: u64, members: usize, duration_ns: u64, faults: Vec<FaultSpec>) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, members, duration_ns);
    sim.network.transport = Transport::Stream(StreamConfig::default());
    sim.write_every_ns = 100 * MS;
    sim.fencing = true;
    sim.faults = faults;
    sim
}

/// Runs `members` candidates against `zk`; returns the report and the processes at the end.
fn run(
    seed: u64,
    members: usize,
    zk: &ZkConfig,
    duration_ns: u64,
    faults: Vec<FaultSpec>,
) -> (RunReport, Vec<ZkProcess>) {
    let sim = sim_config(seed, members, duration_ns, faults);
    let mut engine = Sim::new(
        sim,
        info(zk, members),
        crate::zookeeper::processes(members, zk),
    );
    let report = engine.run().expect("within the default limits");
    (report, engine.processes().to_vec())
}

fn servers(processes: &[ZkProcess]) -> Vec<&ZkServer> {
    processes
        .iter()
        .filter_map(|p| p.get::<ZkServer>())
        .collect()
}

fn leading(processes: &[ZkProcess]) -> Vec<usize> {
    processes
        .iter()
        .enumerate()
        .filter(|(_, p)| splitbrain_sim::Process::leads_service(*p))
        .map(|(i, _)| i)
        .collect()
}

fn at(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
        after: None,
    }
}

/// `FastLeaderElection.totalOrderPredicate`: with equal epochs and zxids, the highest server
/// id wins; every server serves once the sync is done.
#[test]
fn an_ensemble_elects_the_highest_id_and_serves_with_its_followers() {
    let (report, processes) = run(1, 3, &ensemble(3), 5 * S, vec![]);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(leading(&processes), vec![5], "servers are 3, 4, 5");
    for s in servers(&processes) {
        assert!(s.serving(), "{:?}", s.inspect());
        assert_eq!(
            s.db().children.len(),
            3,
            "every candidate's node, everywhere"
        );
    }
    assert_eq!(report.leaders.len(), 1);
}

// FastLeaderElection by hand: one server, notifications delivered to it.

use super::super::messages::{ZkMsg, ZkPeerState, ZkTimer};
use splitbrain_sim::{Ctx, Effect, SimRng, StreamId};

type Out = Vec<Effect<ZkMsg, ZkTimer>>;

fn step(
    s: &mut ZkServer,
    now_ms: u64,
    f: impl FnOnce(&mut ZkServer, &mut Ctx<'_, ZkMsg, ZkTimer>),
) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(3));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId(3), 3, (now_ms * MS) as i64, &mut rng, &mut out);
    f(s, &mut ctx);
    out
}

fn notification(round: u64, leader: u32, zxid: u64, epoch: u64) -> ZkMsg {
    ZkMsg::Notification {
        round,
        leader: NodeId(leader),
        zxid,
        epoch,
        state: ZkPeerState::Looking,
    }
}

fn timers(out: &Out) -> Vec<(ZkTimer, u64)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::SetTimer {
                timer,
                after_local_ns,
            } => Some((*timer, *after_local_ns)),
            _ => None,
        })
        .collect()
}

fn sent_to(out: &Out) -> Vec<(usize, ZkMsg)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send { to, msg } => Some((to.index(), msg.clone())),
            _ => None,
        })
        .collect()
}

/// `FastLeaderElection.totalOrderPredicate` (epoch, then zxid, then id) and `lookForLeader`:
/// a quorum agreeing starts `finalizeWait` (200 ms); a better vote in it moves the vote and
/// the wait starts again; the decision follows the best vote. Without news, the
/// notification timeout doubles from 200 ms.
#[test]
fn the_vote_goes_to_the_highest_epoch_then_zxid_then_id_after_finalize_wait() {
    let mut s = ZkServer::new(NodeId(3), 3, &ensemble(5));
    let out = step(&mut s, 0, |s, ctx| s.on_start(ctx));
    assert_eq!(timers(&out), vec![(ZkTimer::Notify, 200 * MS)]);
    assert_eq!(
        sent_to(&out).len(),
        4,
        "a notification to each other server"
    );
    let out = step(&mut s, 200, |s, ctx| s.on_timer(ctx, ZkTimer::Notify));
    assert_eq!(
        timers(&out),
        vec![(ZkTimer::Notify, 400 * MS)],
        "back-off doubles"
    );
    // Server 7 has the highest id, server 5 a higher zxid: 5's vote wins.
    step(&mut s, 210, |s, ctx| {
        s.on_message(ctx, NodeId(7), notification(1, 7, 0, 0))
    });
    let out = step(&mut s, 220, |s, ctx| {
        s.on_message(ctx, NodeId(5), notification(1, 5, 9, 0))
    });
    let resent = sent_to(&out);
    assert!(resent
        .iter()
        .all(|(_, m)| matches!(m, ZkMsg::Notification { leader, .. } if *leader == NodeId(5))));
    // 5 and 7 (each voting for itself) and 3 (for 5): no quorum of 3 of 5 yet.
    assert!(!timers(&out).iter().any(|t| t.0 == ZkTimer::Finalize));
    let out = step(&mut s, 230, |s, ctx| {
        s.on_message(ctx, NodeId(4), notification(1, 5, 9, 0))
    });
    assert_eq!(
        timers(&out),
        vec![(ZkTimer::Finalize, 200 * MS)],
        "a quorum (3, 4, 5) agrees: finalizeWait"
    );
    // In the wait, 6 proposes itself with a higher epoch: it wins the vote.
    let out = step(&mut s, 300, |s, ctx| {
        s.on_message(ctx, NodeId(6), notification(1, 6, 0, 1))
    });
    assert!(!timers(&out).iter().any(|t| t.0 == ZkTimer::Finalize));
    assert_eq!(s.state(), ZkPeerState::Looking);
    for voter in [4, 5] {
        step(&mut s, 310, |s, ctx| {
            s.on_message(ctx, NodeId(voter), notification(1, 6, 0, 1))
        });
    }
    let out = step(&mut s, 510, |s, ctx| s.on_timer(ctx, ZkTimer::Finalize));
    assert_eq!(s.state(), ZkPeerState::Following);
    assert!(matches!(
        sent_to(&out)[..],
        [(6, ZkMsg::FollowerInfo { .. })]
    ));
}

/// The election, the sync and the first writes of a quiet ensemble take about
/// `finalizeWait` plus a few round trips: the first candidate leads well within a second.
#[test]
fn an_ensemble_serves_within_a_second_of_the_start() {
    let (report, _) = run(1, 3, &ensemble(3), 3 * S, vec![]);
    let first = report.leaders.first().expect("a leader");
    assert!(
        first.at_ns > 200 * MS && first.at_ns < S,
        "first claim at {}",
        first.at_ns
    );
}

fn clients(processes: &[ZkProcess]) -> Vec<&super::super::ZkClient> {
    processes
        .iter()
        .filter_map(|p| p.get::<super::super::ZkClient>())
        .collect()
}

fn sessions_of(processes: &[ZkProcess]) -> Vec<u64> {
    clients(processes).iter().map(|c| c.session()).collect()
}

/// Every claim of `report` is the first holder's, with its first term: a holder that
/// stepped down while disconnected (Curator's `SUSPENDED`) claims again on its own node.
fn same_holder(report: &RunReport, quiet: &RunReport) {
    let first = &quiet.leaders[0];
    for claim in &report.leaders {
        assert_eq!(
            (claim.node, claim.term),
            (first.node, first.term),
            "{claim:?}"
        );
    }
    assert_eq!(report.counters.leases_expired_while_leading, 0);
}

/// `docs/conformance-clusters.md`, "A paused leader costs syncLimit x tickTime" and "The
/// rule behind both": the followers drop the paused leader after syncLimit × tick, elect
/// and sync; the new leader tracks every session with its full timeout from then
/// (`LeaderZooKeeperServer.createSessionTracker`, `SessionTrackerImpl`'s constructor). Here
/// syncLimit × tick (5 s) alone is longer than the session timeout (4 s): clients reconnect
/// more than a session timeout after their last touch, and their sessions and nodes
/// survive.
#[test]
fn sessions_survive_a_paused_leader_server_because_the_new_leader_retracks_them() {
    let zk = ZkConfig {
        sync_limit: 25,
        ..ensemble(3)
    };
    let (quiet, before) = run(3, 3, &zk, 3 * S, vec![]);
    assert_eq!(leading(&before), vec![5]);
    // Paused long enough that every client has moved on before it resumes.
    let pause = at(3 * S, FaultAction::Pause(Target::Node(5), 10 * S), None);
    let (report, after) = run(3, 3, &zk, 20 * S, vec![pause]);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(
        sessions_of(&after),
        sessions_of(&before),
        "no session started over"
    );
    same_holder(&report, &quiet);
    let new_leader = leading(&after);
    assert_eq!(new_leader.len(), 1);
    assert_ne!(
        new_leader[0], 5,
        "a follower took over; 5 rejoined as a follower"
    );
    for s in servers(&after) {
        assert!(s.serving());
        assert_eq!(s.db().sessions.len(), 3, "{:?}", s.inspect());
        assert_eq!(s.db().children.len(), 3);
    }
}

/// `docs/conformance-clusters.md`, "A leader crash costs about half a second, and sessions
/// and ephemeral nodes survive": the followers see the socket close at once and elect.
#[test]
fn sessions_and_nodes_survive_a_killed_leader_server() {
    let zk = ensemble(3);
    let (quiet, before) = run(3, 3, &zk, 3 * S, vec![]);
    let kill = at(3 * S, FaultAction::Crash(Target::Node(5)), Some(2 * S));
    let (report, after) = run(3, 3, &zk, 8 * S, vec![kill]);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(sessions_of(&after), sessions_of(&before));
    same_holder(&report, &quiet);
    for s in servers(&after) {
        assert_eq!(s.db().children.len(), 3, "{:?}", s.inspect());
    }
    // The clients of the killed server moved to another one.
    for c in clients(&after) {
        assert_ne!(c.server(), NodeId(5), "{:?}", c.inspect());
    }
}

/// `docs/service-clusters.md`, "ephemerals go when the leader expires the session": the
/// close is a proposal and needs a quorum. The election's leader dies with two of three
/// servers down: nothing expires while the quorum is lost, however long; once it is back,
/// the new leader gives the dead leader's session a full timeout, then it expires and the
/// next candidate leads.
#[test]
fn a_dead_clients_session_expires_only_through_a_quorum_commit() {
    let zk = ensemble(3);
    let (quiet, _) = run(3, 3, &zk, 2 * S, vec![]);
    let holder = quiet.leaders[0].node;
    let faults = |heal: Option<u64>| {
        vec![
            at(2 * S, FaultAction::Crash(Target::Node(holder.0)), None),
            at(2 * S, FaultAction::Crash(Target::Node(3)), heal),
            at(2 * S, FaultAction::Crash(Target::Node(4)), heal),
        ]
    };
    // Never healed: 20 s (five session timeouts) later, the dead holder's node is still there.
    let (lost, processes) = run(3, 3, &zk, 22 * S, faults(None));
    assert_eq!(lost.leaders.len(), 1, "no second leader");
    let last = servers(&processes)[2];
    assert!(
        !last.serving(),
        "no quorum, no service: {:?}",
        last.inspect()
    );
    assert_eq!(last.db().leader(), Some(holder));
    // Healed after 6 s: the session expires a full timeout (and a tick) after service is back.
    let (healed, _) = run(3, 3, &zk, 22 * S, faults(Some(6 * S)));
    assert!(healed.violations.is_empty(), "{:?}", healed.violations);
    assert_eq!(healed.leaders.len(), 2);
    let next = healed.leaders[1].at_ns;
    assert!(
        next > 8 * S + zk.session_timeout_ns,
        "next leader at {next}"
    );
    assert!(
        next < 8 * S + 2 * zk.session_timeout_ns,
        "next leader at {next}"
    );
}

/// `ClientCnxn`: a client that loses its server pauses up to a second and tries the next
/// in its shuffled list; a session the leader still has resumes there.
#[test]
fn a_client_moves_to_another_server_and_keeps_its_session() {
    let zk = ensemble(3);
    let (_, before) = run(5, 3, &zk, 2 * S, vec![]);
    let client = clients(&before)[0];
    let (server, session) = (client.server(), client.session());
    assert_ne!(session, 0);
    let kill = at(2 * S, FaultAction::Crash(Target::Node(server.0)), None);
    let (report, after) = run(5, 3, &zk, 6 * S, vec![kill]);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let moved = clients(&after)[0];
    assert_ne!(moved.server(), server);
    assert_eq!(moved.session(), session);
}

fn trace_hash(seed: u64, zk: &ZkConfig, faults: Vec<FaultSpec>) -> (u64, u64) {
    let sim = sim_config(seed, 3, 10 * S, faults);
    let mut hasher = splitbrain_sim::TraceHasher::default();
    Sim::new(sim, info(zk, 3), crate::zookeeper::processes(3, zk))
        .with_trace(&mut hasher)
        .run()
        .expect("within the default limits");
    (hasher.hash(), hasher.lines())
}

/// The clients' server lists, the election and every pause come from the run's seed.
#[test]
fn the_same_seed_gives_the_same_trace() {
    let zk = ensemble(3);
    let faults = || vec![at(3 * S, FaultAction::Crash(Target::Node(5)), Some(2 * S))];
    let here = trace_hash(7, &zk, faults());
    assert!(here.1 > 1_000, "a trace of {} lines", here.1);
    assert_eq!(trace_hash(7, &zk, faults()), here);
    assert_ne!(
        trace_hash(8, &zk, faults()).0,
        here.0,
        "another seed, another trace"
    );
}

/// Faults drawn from `seed` on the servers (crash and restart, pause, isolation, a server
/// and a client cut from the rest) and on the election's leader (crash, with or without a
/// restart), over `servers` servers. No stall of the leader: a stalled holder writes late
/// with or without an ensemble (the recipe's own gap, caught by fencing).
fn drawn_faults(seed: u64, members: usize, servers: u64) -> Vec<FaultSpec> {
    let mut rng = splitbrain_sim::SimRng::stream(seed, 99);
    let count = 2 + rng.below(3);
    (0..count)
        .map(|_| {
            let at_ns = S + rng.below(12 * S);
            let server = Target::Node((members as u64 + rng.below(servers)) as u32);
            let lasting = S + rng.below(7 * S);
            match rng.below(8) {
                0 => at(at_ns, FaultAction::Crash(server), Some(lasting)),
                1 => at(at_ns, FaultAction::Pause(server, lasting), None),
                2 => at(
                    at_ns,
                    FaultAction::Partition(PartitionShape::Isolate(server)),
                    Some(lasting),
                ),
                3 => at(at_ns, FaultAction::Crash(Target::Leader), Some(lasting)),
                4 => at(at_ns, FaultAction::Crash(Target::Leader), None),
                5 | 6 => at(
                    at_ns,
                    minority_cut(&mut rng, members, servers),
                    Some(lasting),
                ),
                _ => at(at_ns, FaultAction::Crash(server), None),
            }
        })
        .collect()
}

/// One server and one client cut off from everyone else (the other servers and clients).
fn minority_cut(rng: &mut splitbrain_sim::SimRng, members: usize, servers: u64) -> FaultAction {
    let client = rng.below(members as u64) as u32;
    let server = members as u32 + rng.below(servers) as u32;
    let rest = (0..members as u32 + servers as u32)
        .filter(|i| *i != client && *i != server)
        .collect();
    FaultAction::Partition(PartitionShape::Groups(vec![vec![client, server], rest]))
}

/// 200 seeds of server and leader faults, 3 and 5 servers, without fencing: no safety
/// violation (two leaders of one term, or a deposed leader's write after its successor's)
/// with the correct recipe. An ensemble that served without a quorum fails it: a server cut
/// off with a client keeps that client's session while the majority expires it.
#[test]
fn a_sweep_of_server_faults_breaks_no_safety_property() {
    let mut failovers = 0;
    for seed in 0..200 {
        let servers = if seed % 4 == 3 { 5 } else { 3 };
        let zk = ensemble(servers);
        let faults = drawn_faults(seed, 3, servers);
        let mut sim = sim_config(seed, 3, 30 * S, faults.clone());
        sim.fencing = false;
        let report = Sim::new(sim, info(&zk, 3), crate::zookeeper::processes(3, &zk))
            .run()
            .expect("within the default limits");
        assert!(
            report.violated_safety().is_empty(),
            "seed {seed}, faults {faults:?}: {:?}",
            report.violations
        );
        assert!(
            !report
                .violated_safety()
                .contains(&Invariant::ElectionSafety),
            "seed {seed}"
        );
        failovers += report.failovers.len();
    }
    assert!(
        failovers > 50,
        "the faults moved leadership {failovers} times"
    );
}

/// `servers`, `init_limit` and `sync_limit` are checked at their field, written back only
/// when not the default (a single-server scenario writes what it wrote before), and
/// `servers` is a sweep knob.
#[test]
fn ensemble_settings_are_checked_written_back_and_swept() {
    use super::super::settings::ZkError;
    use super::super::{ZkSettings, ZooKeeper};
    use crate::algorithm::{Algorithm, Cluster, KnobValue};
    let cluster = Cluster { nodes: 3 };
    let lower = |servers, init_limit, sync_limit| {
        let settings = ZkSettings {
            servers,
            init_limit,
            sync_limit,
            ..ZkSettings::default()
        };
        ZooKeeper::lower(settings, &cluster)
    };
    for bad in [0, 2, 4, 9] {
        let (_, problems) = lower(Some(bad), None, None);
        assert_eq!(problems.len(), 1, "{bad}");
        assert_eq!(problems[0].field, "servers");
        assert!(matches!(problems[0].error, ZkError::ServersNotOdd { .. }));
    }
    let (_, problems) = lower(Some(3), Some(0), Some(0));
    let fields: Vec<_> = problems.iter().map(|p| p.field).collect();
    assert_eq!(fields, vec!["init_limit", "sync_limit"]);
    let (config, problems) = lower(Some(5), None, Some(2));
    assert!(problems.is_empty());
    assert_eq!(
        (config.servers, config.init_limit, config.sync_limit),
        (5, 10, 2)
    );
    assert_eq!(ZooKeeper::service_processes(&config), 5);
    let written = ZooKeeper::settings(&config);
    assert_eq!(
        (written.servers, written.init_limit, written.sync_limit),
        (Some(5), None, Some(2))
    );
    let (single, _) = lower(None, None, None);
    let written = ZooKeeper::settings(&single);
    assert_eq!(
        (written.servers, written.init_limit, written.sync_limit),
        (None, None, None)
    );
    assert_eq!(ZooKeeper::service_processes(&single), 1);
    let three = ZooKeeper::vary(&single, &cluster, "servers", KnobValue::Choice("3"))
        .expect("a knob value");
    assert_eq!(three.servers, 3);
    assert!(
        super::super::info(&three, 3).failure_detection_ns
            > super::super::info(&single, 3).failure_detection_ns
    );
}

/// The single server has no followers: `init_limit` or `sync_limit` written for it would be
/// ignored, and is refused at its field instead (issue 43).
#[test]
fn ensemble_limits_written_for_the_single_server_are_refused() {
    use super::super::settings::ZkError;
    use super::super::{ZkSettings, ZooKeeper};
    use crate::algorithm::{Algorithm, Cluster, SettingError};
    let cluster = Cluster { nodes: 3 };
    for servers in [None, Some(1)] {
        let settings = ZkSettings {
            servers,
            init_limit: Some(20),
            sync_limit: Some(0),
            ..ZkSettings::default()
        };
        let (_, problems) = ZooKeeper::lower(settings, &cluster);
        let found: Vec<_> = problems.into_iter().map(|p| (p.field, p.error)).collect();
        assert_eq!(
            found,
            [
                (
                    "init_limit",
                    ZkError::EnsembleOnly {
                        field: "init_limit"
                    }
                ),
                (
                    "sync_limit",
                    ZkError::EnsembleOnly {
                        field: "sync_limit"
                    }
                ),
            ],
            "{servers:?}"
        );
    }
    let error = ZkError::EnsembleOnly {
        field: "init_limit",
    };
    assert_eq!(
        error.to_string(),
        "`init_limit` is a setting of a ZooKeeper ensemble, and the single server ignores it"
    );
    assert!(error.hint().unwrap().contains("`servers: 3`"));
    // A sweep's single-server variant of an ensemble writes back no limit of its own.
    let ensemble = ZkSettings {
        servers: Some(3),
        init_limit: Some(20),
        ..ZkSettings::default()
    };
    let (config, problems) = ZooKeeper::lower(ensemble, &cluster);
    assert!(problems.is_empty());
    let single = super::super::ZkConfig {
        servers: 1,
        ..config
    };
    let (_, problems) = ZooKeeper::lower(ZooKeeper::settings(&single), &cluster);
    assert!(problems.is_empty(), "{problems:?}");
}

/// A follower takes its leader's snapshot once per sync: a duplicated `NewLeader` (on
/// `Datagram` with duplication) arriving after a commit must not take its database back
/// (the nemesis found n5's zxid going back at seed 231 before this rule).
#[test]
fn a_duplicated_new_leader_does_not_take_a_follower_back() {
    use super::super::messages::ZkTxn;
    let mut s = ZkServer::new(NodeId(3), 3, &ensemble(3));
    step(&mut s, 0, |s, ctx| s.on_start(ctx));
    for voter in [4, 5] {
        step(&mut s, 10, |s, ctx| {
            s.on_message(ctx, NodeId(voter), notification(1, 5, 0, 0))
        });
    }
    step(&mut s, 210, |s, ctx| s.on_timer(ctx, ZkTimer::Finalize));
    assert_eq!(s.state(), ZkPeerState::Following);
    let mut snapshot = super::ZkDb::new();
    snapshot.zxid = 1 << 32;
    let new_leader = ZkMsg::NewLeader { epoch: 1, snapshot };
    step(&mut s, 220, |s, ctx| {
        s.on_message(ctx, NodeId(5), new_leader.clone())
    });
    let txn = ZkTxn::CreateSession {
        session: 1,
        owner: NodeId(0),
        timeout_ns: 4 * S,
    };
    let commit = ZkMsg::Commit {
        zxid: (1 << 32) | 1,
        txn,
        origin: None,
    };
    step(&mut s, 230, |s, ctx| s.on_message(ctx, NodeId(5), commit));
    assert_eq!(s.zxid(), (1 << 32) | 1);
    let out = step(&mut s, 240, |s, ctx| {
        s.on_message(ctx, NodeId(5), new_leader)
    });
    assert_eq!(s.zxid(), (1 << 32) | 1, "the duplicate is ignored");
    assert_eq!(s.db().sessions.len(), 1);
    assert!(sent_to(&out).is_empty(), "and not acknowledged again");
}

/// `ClientCnxn`: a client that lost its server sleeps a random time below 1 s
/// (`startConnect`), tries the next server of its shuffled list with a connect timeout of
/// T / n (`connectTimeout = sessionTimeout / hostProvider.size()`), and moves on again if that
/// one does not answer in time. Answers from a server it left are ignored.
#[test]
fn a_disconnected_client_pauses_then_tries_the_next_server_with_a_connect_timeout() {
    use super::super::ZkClient;
    let zk = ensemble(3);
    let mut c = ZkClient::new(NodeId(0), 3, &zk);
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut call =
        |c: &mut ZkClient, now_ms: u64, f: &dyn Fn(&mut ZkClient, &mut Ctx<'_, ZkMsg, ZkTimer>)| {
            let mut out = Vec::new();
            let mut ctx =
                Ctx::new(NodeId(0), 3, (now_ms * MS) as i64, &mut rng, &mut out).on_stream(true);
            f(c, &mut ctx);
            out
        };
    let out = call(&mut c, 0, &|c, ctx| c.on_start(ctx));
    let first = c.server();
    assert!((3..6).contains(&first.index()));
    assert!(
        timers(&out).contains(&(ZkTimer::Disconnect, 4 * S / 3)),
        "T/n: {:?}",
        timers(&out)
    );
    let granted = ZkMsg::ConnectResp {
        session: 7,
        timeout_ns: 4 * S,
    };
    call(&mut c, 10, &|c, ctx| {
        c.on_message(ctx, first, granted.clone())
    });
    assert_eq!(c.session(), 7);
    // The server closes the connection: a pause below a second, then the next server.
    let out = call(&mut c, 100, &|c, ctx| c.on_disconnect(ctx, first));
    let pause = timers(&out)
        .into_iter()
        .find(|t| t.0 == ZkTimer::Reconnect)
        .expect("a pause")
        .1;
    assert!(pause < S, "{pause}");
    let out = call(&mut c, 1100, &|c, ctx| c.on_timer(ctx, ZkTimer::Reconnect));
    let second = c.server();
    assert_ne!(second, first);
    assert!(timers(&out).contains(&(ZkTimer::Disconnect, 4 * S / 3)));
    assert!(matches!(
        &sent_to(&out)[..],
        [(to, ZkMsg::Create { session: 7 })] if *to == second.index()
    ));
    // A late answer on the old connection is ignored; no answer in T/n: the next server.
    let late = ZkMsg::Pong {
        session: 7,
        expired: true,
    };
    call(&mut c, 1200, &|c, ctx| {
        c.on_message(ctx, first, late.clone())
    });
    assert_eq!(c.session(), 7, "not expired by a server it left");
    let out = call(&mut c, 2500, &|c, ctx| c.on_timer(ctx, ZkTimer::Disconnect));
    assert!(timers(&out).iter().any(|t| t.0 == ZkTimer::Reconnect));
    call(&mut c, 3000, &|c, ctx| c.on_timer(ctx, ZkTimer::Reconnect));
    let third = c.server();
    assert!(third != second && third != first, "every server in turn");
}
