//! Engine behaviour, tested with a toy process whose every move is scripted.

use crate::clock::TimerClock;
use crate::config::{AlgorithmInfo, NodeClock, SimConfig};
use crate::fault::{FaultAction, FaultSpec, PartitionShape, Target};
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::limits::LimitExceeded;
use crate::network_config::Latency;
use crate::process::{Ctx, Message, Process, TimerKind};
use crate::report::{FailoverOutcome, LivenessVerdict, RunReport};
use crate::time::{LocalNanos, NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};
use crate::trace::{
    parse_trace, JsonLinesWriter, Milestone, Tee, TraceEvent, TraceHasher, TraceSink,
};
use crate::Sim;

#[derive(Clone, Debug)]
enum ToyMsg {
    Ping(u64),
    Claim(u64),
}

impl Message for ToyMsg {
    const KINDS: &'static [&'static str] = &["ping", "claim"];
    fn kind(&self) -> usize {
        match self {
            ToyMsg::Ping(_) => 0,
            ToyMsg::Claim(_) => 1,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ToyTimer {
    Tick,
    Claim,
    Campaign,
}

impl TimerKind for ToyTimer {
    const NAMES: &'static [&'static str] = &["tick", "claim", "campaign"];
    fn index(self) -> usize {
        self as usize
    }
    fn from_index(index: usize) -> Self {
        [ToyTimer::Tick, ToyTimer::Claim, ToyTimer::Campaign][index]
    }
}

/// A scripted process: claims a term at a local time, pings peers, leads on a lease.
#[derive(Clone, Debug, Default)]
struct Toy {
    claim: Option<(u64, u64)>, // (after_local_ns, term)
    campaign_after_ns: Option<u64>,
    ping_every_ns: Option<u64>,
    lease_ns: u64,
    term: u64,
    leader: Option<NodeId>,
    lease_until: LocalNanos,
    me: Option<NodeId>,
    pings_sent: u64,
    /// (from, ping number, local time) of every ping handled.
    received: Vec<(NodeId, u64, LocalNanos)>,
    ticks_at: Vec<LocalNanos>,
    restarts: u32,
    /// (peer, local time) of every broken connection heard of.
    disconnects: Vec<(NodeId, LocalNanos)>,
    /// Says it learns who leads by asking ([`Process::learns_leader_on_demand`]) while it
    /// does not lead.
    asks: bool,
    /// Says it leads its (clustered) service ([`Process::leads_service`]).
    leads_service: bool,
    /// Says it is a gateway in front of its service ([`Process::is_service_gateway`]).
    gateway: bool,
    /// The service process it says it talks to ([`Process::service_member_used`]).
    uses: Option<NodeId>,
}

type ToyCtx<'a> = Ctx<'a, ToyMsg, ToyTimer>;

impl Toy {
    fn claims(after_ns: u64, term: u64) -> Self {
        Toy {
            claim: Some((after_ns, term)),
            lease_ns: u64::MAX / 4,
            ..Toy::default()
        }
    }
    fn pinger(every_ns: u64) -> Self {
        Toy {
            ping_every_ns: Some(every_ns),
            ..Toy::default()
        }
    }
}

impl Process for Toy {
    type Msg = ToyMsg;
    type Timer = ToyTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut ToyCtx<'_>) {
        self.me = Some(ctx.me());
        if let Some((after, _)) = self.claim {
            ctx.set_timer(ToyTimer::Claim, after);
        }
        if let Some(every) = self.ping_every_ns {
            ctx.set_timer(ToyTimer::Tick, every);
        }
        if let Some(after) = self.campaign_after_ns {
            ctx.set_timer(ToyTimer::Campaign, after);
        }
    }

    fn on_message(&mut self, ctx: &mut ToyCtx<'_>, from: NodeId, msg: ToyMsg) {
        match msg {
            ToyMsg::Ping(n) => self.received.push((from, n, ctx.monotonic_now())),
            ToyMsg::Claim(term) if term > self.term => {
                if self.leader == Some(ctx.me()) {
                    ctx.stepped_down();
                }
                self.term = term;
                self.leader = Some(from);
            }
            ToyMsg::Claim(_) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut ToyCtx<'_>, timer: ToyTimer) {
        match timer {
            ToyTimer::Claim => {
                let (_, term) = self.claim.expect("armed only with a claim");
                self.term = term;
                self.leader = Some(ctx.me());
                self.lease_until = ctx.monotonic_now().saturating_add(self.lease_ns as i64);
                ctx.became_leader(term, term);
                let peers: Vec<NodeId> = ctx.peers().collect();
                peers
                    .into_iter()
                    .for_each(|p| ctx.send(p, ToyMsg::Claim(term)));
            }
            ToyTimer::Campaign => {
                // It campaigns for the term it will claim (1 without a claim).
                let term = self.claim.map_or(1, |(_, term)| term);
                ctx.signal(crate::process::Signal::ElectionStarted { term });
            }
            ToyTimer::Tick => {
                self.ticks_at.push(ctx.monotonic_now());
                self.pings_sent += 1;
                let peers: Vec<NodeId> = ctx.peers().collect();
                peers
                    .into_iter()
                    .for_each(|p| ctx.send(p, ToyMsg::Ping(self.pings_sent)));
                ctx.set_timer(
                    ToyTimer::Tick,
                    self.ping_every_ns.expect("armed only when pinging"),
                );
            }
        }
    }

    fn on_disconnect(&mut self, ctx: &mut ToyCtx<'_>, peer: NodeId) {
        self.disconnects.push((peer, ctx.monotonic_now()));
    }

    fn on_restart(&mut self, ctx: &mut ToyCtx<'_>) {
        self.restarts += 1;
        self.leader = None;
        if let Some(every) = self.ping_every_ns {
            ctx.set_timer(ToyTimer::Tick, every);
        }
    }

    fn term(&self) -> u64 {
        self.term
    }

    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64> {
        (self.leader == self.me && self.me.is_some() && local_now_ns < self.lease_until)
            .then_some(self.term)
    }

    fn known_leader(&self) -> Option<NodeId> {
        self.leader
    }

    fn learns_leader_on_demand(&self) -> bool {
        self.asks && self.leader != self.me
    }

    fn leads_service(&self) -> bool {
        self.leads_service
    }

    fn is_service_gateway(&self) -> bool {
        self.gateway
    }

    fn service_member_used(&self) -> Option<NodeId> {
        self.uses
    }
}

fn info(members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "toy".into(),
        failure_detection_ns: 100 * MS,
        min_group_for_progress: members / 2 + 1,
        signals: crate::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

fn config(members: usize, duration_ns: u64) -> SimConfig {
    let mut c = SimConfig::quiet(1, members, duration_ns);
    c.network.default.latency = Latency::Constant(MS);
    c
}

fn fault(at_ns: u64, action: FaultAction) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns: None,
        after: None,
    }
}

fn run(config: SimConfig, processes: Vec<Toy>) -> (RunReport, Vec<Toy>) {
    let members = config.members;
    let mut sim = Sim::new(config, info(members), processes);
    let report = sim.run().expect("within the default limits");
    (report, sim.processes().to_vec())
}

fn run_traced(config: SimConfig, processes: Vec<Toy>) -> (RunReport, String) {
    let members = config.members;
    let mut writer = JsonLinesWriter::new(Vec::new());
    let report = Sim::new(config, info(members), processes)
        .with_trace(&mut writer)
        .run()
        .expect("within the default limits");
    (report, String::from_utf8(writer.into_inner()).unwrap())
}

#[test]
fn messages_arrive_after_their_latency_in_send_order() {
    let (_, procs) = run(
        config(2, 35 * MS),
        vec![Toy::pinger(10 * MS), Toy::default()],
    );
    let got: Vec<(u64, LocalNanos)> = procs[1].received.iter().map(|r| (r.1, r.2)).collect();
    let want: Vec<(u64, LocalNanos)> = vec![
        (1, (11 * MS) as i64),
        (2, (21 * MS) as i64),
        (3, (31 * MS) as i64),
    ];
    assert_eq!(got, want);
}

#[test]
fn a_paused_process_handles_what_came_due_at_resume_in_order() {
    let mut c = config(2, 100 * MS);
    c.faults = vec![fault(15 * MS, FaultAction::Pause(Target::Node(1), 30 * MS))];
    let (_, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let got: Vec<(u64, LocalNanos)> = procs[1]
        .received
        .iter()
        .map(|r| (r.1, r.2 / MS as i64))
        .collect();
    // Pings 2, 3, 4 arrive at 21, 31, 41 ms while node 1 is frozen until 45 ms.
    assert_eq!(&got[..5], &[(1, 11), (2, 45), (3, 45), (4, 45), (5, 51)]);
}

#[test]
fn a_paused_process_fires_its_own_overdue_timers_at_resume() {
    let mut c = config(2, 100 * MS);
    c.faults = vec![fault(15 * MS, FaultAction::Pause(Target::Node(0), 30 * MS))];
    let (_, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let ticks: Vec<i64> = procs[0].ticks_at.iter().map(|t| t / MS as i64).collect();
    assert_eq!(
        &ticks[..4],
        &[10, 45, 55, 65],
        "one overdue tick at resume, then the period again"
    );
}

/// The GC-pause race: a lease holder checks its lease, freezes, then writes.
fn lease_race(action: FaultAction, fencing: bool) -> RunReport {
    let mut c = config(2, 4 * S);
    c.write_every_ns = 100 * MS;
    c.fencing = fencing;
    c.faults = vec![fault(950 * MS, action)];
    let old = Toy {
        lease_ns: S,
        ..Toy::claims(10 * MS, 1)
    }; // lease runs out at ~1.01 s
    let new = Toy {
        lease_ns: 10 * S,
        ..Toy::claims(1_500 * MS, 2)
    };
    run(c, vec![old, new]).0
}

#[test]
fn a_stall_takes_the_decision_on_time_and_lets_the_write_leave_late() {
    let report = lease_race(FaultAction::Stall(Target::Node(0), 2 * S), true);
    assert!(
        report.writes.rejected_stale >= 1,
        "the stalled write with token 1 reaches the resource late"
    );
    assert!(
        report.violations.is_empty(),
        "fencing rejects it: {:?}",
        report.violations
    );
}

#[test]
fn a_stall_without_fencing_breaks_fencing_safety() {
    let report = lease_race(FaultAction::Stall(Target::Node(0), 2 * S), false);
    assert_eq!(report.violated_safety(), vec![Invariant::FencingSafety]);
}

#[test]
fn a_pause_checks_the_lease_after_resuming_so_no_stale_write_leaves() {
    let report = lease_race(FaultAction::Pause(Target::Node(0), 2 * S), false);
    assert_eq!(report.writes.rejected_stale, 0);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

#[test]
fn a_crashed_process_loses_messages_and_restarts_with_on_restart() {
    let mut c = config(2, 100 * MS);
    c.faults = vec![FaultSpec {
        at_ns: 15 * MS,
        action: FaultAction::Crash(Target::Node(1)),
        heal_after_ns: Some(30 * MS),
        after: None,
    }];
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let got: Vec<u64> = procs[1].received.iter().map(|r| r.1).collect();
    assert_eq!(&got[..3], &[1, 5, 6], "pings 2-4 arrived while crashed");
    assert_eq!(procs[1].restarts, 1);
    assert_eq!(report.drops.crashed_receiver, 3);
    assert_eq!(report.faults[0].healed_at_ns, Some(45 * MS));
}

#[test]
fn an_isolated_node_neither_sends_nor_receives_until_healed() {
    let mut c = config(3, 100 * MS);
    c.faults = vec![FaultSpec {
        at_ns: 15 * MS,
        action: FaultAction::Partition(PartitionShape::Isolate(Target::Node(0))),
        heal_after_ns: Some(30 * MS),
        after: None,
    }];
    let (report, procs) = run(
        c,
        vec![Toy::pinger(10 * MS), Toy::default(), Toy::pinger(10 * MS)],
    );
    let at_1: Vec<u64> = procs[1]
        .received
        .iter()
        .filter(|r| r.0 == NodeId(0))
        .map(|r| r.1)
        .collect();
    assert_eq!(&at_1[..3], &[1, 5, 6]);
    let from_2_at_0 = procs[0]
        .received
        .iter()
        .filter(|r| r.0 == NodeId(2))
        .count();
    assert!(from_2_at_0 >= 6);
    assert!(report.drops.partition >= 6);
}

#[test]
fn a_one_way_partition_blocks_only_one_direction() {
    let mut c = config(2, 50 * MS);
    c.faults = vec![fault(
        0,
        FaultAction::Partition(PartitionShape::OneWay {
            from: Target::Node(0),
            to: Target::All,
        }),
    )];
    let (_, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::pinger(10 * MS)]);
    assert!(procs[1].received.is_empty());
    assert!(!procs[0].received.is_empty());
}

#[test]
fn a_fast_clock_fires_its_timers_early_in_true_time() {
    let mut c = config(2, 100 * MS);
    c.clocks.per_node = vec![node_clock(0, 250_000, 0, TimerClock::Monotonic)];
    let (_, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    // Ticks every 10 ms of local time = every 8 ms of true time; arrival 1 ms later.
    let arrivals: Vec<i64> = procs[1].received.iter().take(3).map(|r| r.2).collect();
    assert_eq!(
        arrivals,
        vec![9 * MS as i64, 17 * MS as i64, 25 * MS as i64]
    );
}

fn node_clock(node: u32, drift_ppm: i64, offset_ns: i64, timers: TimerClock) -> NodeClock {
    NodeClock {
        node,
        drift_ppm,
        offset_ns,
        timers,
    }
}

/// The first three ticks of a 10 ms pinger at node 0, by its timer clock, in milliseconds,
/// and the true times (ms) its pings reached node 1 (1 ms on the way).
fn pinger_under(fault_action: FaultAction, timers: TimerClock) -> (Vec<i64>, Vec<i64>) {
    let mut c = config(2, 100 * MS);
    c.clocks.per_node = vec![node_clock(0, 0, 0, timers)];
    c.faults = vec![fault(12 * MS, fault_action)];
    let (_, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let ms = |t: &i64| t / MS as i64;
    let ticks = procs[0].ticks_at.iter().take(3).map(ms).collect();
    let arrivals = procs[1].received.iter().take(3).map(|r| ms(&r.2)).collect();
    (ticks, arrivals)
}

#[test]
fn a_wall_clock_step_moves_no_timer() {
    let jump = FaultAction::ClockJump(Target::Node(0), 50 * MS as i64);
    assert_eq!(
        pinger_under(jump, TimerClock::Monotonic).0,
        vec![10, 20, 30]
    );
    let back = FaultAction::ClockJump(Target::Node(0), -(50 * MS as i64));
    assert_eq!(
        pinger_under(back, TimerClock::Monotonic).0,
        vec![10, 20, 30]
    );
}

#[test]
fn a_node_timing_with_its_wall_clock_fires_pending_timers_at_a_forward_step() {
    let jump = FaultAction::ClockJump(Target::Node(0), 50 * MS as i64);
    assert_eq!(pinger_under(jump, TimerClock::Wall).0, vec![10, 62, 72]);
}

#[test]
fn a_suspend_stops_the_monotonic_clock_so_timers_resume_where_they_were() {
    let suspend = FaultAction::Suspend(Target::Node(0), 50 * MS);
    let (ticks, arrivals) = pinger_under(suspend.clone(), TimerClock::Monotonic);
    // The monotonic clock stood at 12 ms for the 50 ms: the 20 ms tick comes at true 70.
    assert_eq!(ticks, vec![10, 20, 30]);
    assert_eq!(arrivals, vec![11, 71, 81]);
    // A plain pause lets the clock run: the overdue tick fires at the resume (62 ms).
    let pause = FaultAction::Pause(Target::Node(0), 50 * MS);
    assert_eq!(
        pinger_under(pause, TimerClock::Monotonic).1,
        vec![11, 63, 73]
    );
    // Code timing with the wall clock sees the suspend's time as passed, like the pause.
    assert_eq!(pinger_under(suspend, TimerClock::Wall).1, vec![11, 63, 73]);
}

#[test]
fn a_crash_during_a_suspend_thaws_the_clock_for_the_restart() {
    let mut c = config(2, 200 * MS);
    c.faults = vec![
        fault(12 * MS, FaultAction::Suspend(Target::Node(0), 50 * MS)),
        FaultSpec {
            heal_after_ns: Some(10 * MS),
            ..fault(30 * MS, FaultAction::Crash(Target::Node(0)))
        },
    ];
    let (_, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    // Restarted at 40 ms with a running clock: it pings again before the suspend's end.
    let arrivals: Vec<u64> = procs[1].received.iter().map(|r| r.2 as u64 / MS).collect();
    assert!(
        arrivals.iter().any(|t| (41..62).contains(t)),
        "{arrivals:?}"
    );
}

#[test]
fn full_duplication_delivers_every_message_twice() {
    let mut c = config(2, 25 * MS);
    c.network.default.duplicate_ppm = crate::rng::PPM;
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    assert_eq!(procs[1].received.len(), 4);
    assert_eq!(report.messages[0].duplicated, 2);
}

#[test]
fn two_claims_of_one_term_are_reported_as_an_election_safety_violation() {
    let c = config(3, 100 * MS);
    let (report, trace) = run_traced(
        c,
        vec![
            Toy::claims(10 * MS, 1),
            Toy::claims(20 * MS, 1),
            Toy::default(),
        ],
    );
    assert_eq!(report.violated_safety(), vec![Invariant::ElectionSafety]);
    assert!(
        trace.contains("\"check\":\"election_safety\""),
        "the trace marks the event"
    );
    assert_eq!(report.overlap_ns, 80 * MS);
}

#[test]
fn liveness_is_met_when_every_member_recognises_one_leader() {
    let c = config(3, S);
    let (report, _) = run(
        c,
        vec![Toy::claims(10 * MS, 1), Toy::default(), Toy::default()],
    );
    assert!(
        matches!(report.liveness, LivenessVerdict::Met { leader: NodeId(0), at_ns, .. } if at_ns == 11 * MS)
    );
}

#[test]
fn liveness_is_missed_when_nobody_leads_within_the_bound() {
    let c = config(3, 2 * S);
    let (report, _) = run(c, vec![Toy::default(), Toy::default(), Toy::default()]);
    assert!(
        matches!(report.liveness, LivenessVerdict::Missed { .. }),
        "{:?}",
        report.liveness
    );
    assert!(report
        .violations
        .iter()
        .any(|v| v.invariant == Invariant::Liveness));
}

fn asker() -> Toy {
    Toy {
        asks: true,
        ..Toy::default()
    }
}

/// A service process (after the three members) that would name `leader` if asked.
fn service_naming(leader: u32) -> Toy {
    Toy {
        leader: Some(NodeId(leader)),
        ..Toy::default()
    }
}

/// The liveness verdict of n0 claiming at 10 ms, n1 and n2 asking, and `service` (process 3)
/// answering, under `faults`.
fn verdict_with_askers(service: Toy, faults: Vec<FaultSpec>) -> LivenessVerdict {
    let mut c = config(3, 2 * S);
    c.faults = faults;
    let processes = vec![Toy::claims(10 * MS, 1), asker(), asker(), service];
    run(c, processes).0.liveness
}

#[test]
fn members_that_would_ask_recognise_the_leader_the_service_names_at_its_claim() {
    let verdict = verdict_with_askers(service_naming(0), vec![]);
    assert!(
        matches!(verdict, LivenessVerdict::Met { leader: NodeId(0), at_ns, .. } if at_ns == 10 * MS),
        "{verdict:?}"
    );
}

#[test]
fn members_that_would_ask_do_not_recognise_a_leader_the_service_does_not_name() {
    for service in [service_naming(1), Toy::default()] {
        let verdict = verdict_with_askers(service, vec![]);
        assert!(
            matches!(verdict, LivenessVerdict::Missed { .. }),
            "{verdict:?}"
        );
    }
}

/// Members elect through the service: with it down after the last fault nobody can be
/// elected, and the verdict says so instead of judging the members' views.
#[test]
fn a_service_down_after_the_last_fault_makes_liveness_impossible() {
    let crash_service = vec![fault(5 * MS, FaultAction::Crash(Target::Node(3)))];
    let verdict = verdict_with_askers(service_naming(0), crash_service);
    let LivenessVerdict::Impossible { reason, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert!(
        reason.contains("coordination service (n3) is down"),
        "{reason}"
    );
}

/// The group that must agree, for members that elect through a service: those that reach
/// it. n2, cut off from the leader n0 before its claim, never names it. Cut off from the
/// service too, it is not in the group, even while it reaches n1; reaching the service, it
/// is, and liveness is missed.
#[test]
fn members_cut_off_from_the_service_are_not_in_the_group() {
    let cut = |a, b| {
        let shape = PartitionShape::CutLink(Target::Node(a), Target::Node(b));
        fault(5 * MS, FaultAction::Partition(shape))
    };
    for (faults, met) in [(vec![cut(2, 0), cut(2, 3)], true), (vec![cut(2, 0)], false)] {
        let mut c = config(3, 2 * S);
        c.faults = faults;
        let processes = vec![
            Toy::claims(10 * MS, 1),
            asker(),
            Toy::default(),
            service_naming(0),
        ];
        let verdict = run(c, processes).0.liveness;
        let got = matches!(
            verdict,
            LivenessVerdict::Met {
                leader: NodeId(0),
                ..
            }
        );
        assert_eq!(got, met, "{verdict:?}");
    }
}

#[test]
fn liveness_is_impossible_when_too_few_members_survive() {
    let mut c = config(3, 2 * S);
    c.faults = vec![
        fault(0, FaultAction::Crash(Target::Node(1))),
        fault(0, FaultAction::Crash(Target::Node(2))),
    ];
    let (report, _) = run(c, vec![Toy::default(), Toy::default(), Toy::default()]);
    assert!(
        matches!(report.liveness, LivenessVerdict::Impossible { .. }),
        "{:?}",
        report.liveness
    );
}

#[test]
fn a_leader_crash_opens_a_failover_that_the_next_leader_closes() {
    let mut c = config(3, 3 * S);
    c.write_every_ns = 100 * MS;
    c.faults = vec![fault(500 * MS, FaultAction::Crash(Target::Leader))];
    let (report, _) = run(
        c,
        vec![
            Toy::claims(10 * MS, 1),
            Toy::claims(800 * MS, 2),
            Toy::default(),
        ],
    );
    let f = &report.failovers[0];
    assert_eq!(f.old_leader, NodeId(0));
    assert_eq!(f.new_leader, Some(NodeId(1)));
    assert_eq!(f.election_ns, Some(300 * MS));
    assert_eq!(f.outcome, FailoverOutcome::NewLeader);
    assert!(f.recovery_ns.unwrap() > 300 * MS);
}

/// Keeps every event and, as text, every milestone with its time.
#[derive(Default)]
struct Keep {
    events: Vec<TraceEvent>,
    milestones: Vec<(u64, String)>,
}

impl TraceSink for Keep {
    fn record(&mut self, event: &TraceEvent) {
        self.events.push(event.clone());
    }

    fn milestone(&mut self, now_ns: u64, milestone: Milestone<'_>) {
        let text = match milestone {
            Milestone::FailoverOpened => "failover opened".to_string(),
            Milestone::FailoverClosed(f) => format!("failover closed {:?}", f.outcome),
            Milestone::ElectionOpened => "election opened".to_string(),
            Milestone::ElectionDecided(e) => format!("election decided at {:?}", e.decided_ns),
        };
        self.milestones.push((now_ns, text));
    }
}

#[test]
fn a_sink_hears_failovers_and_elections_open_and_close_as_the_report_has_them() {
    let mut c = config(3, 3 * S);
    c.write_every_ns = 100 * MS;
    c.faults = vec![
        fault(500 * MS, FaultAction::Crash(Target::Leader)),
        fault(2 * S, FaultAction::Crash(Target::Leader)),
    ];
    let campaigner = Toy {
        campaign_after_ns: Some(600 * MS),
        ..Toy::claims(800 * MS, 2)
    };
    let procs = vec![Toy::claims(10 * MS, 1), campaigner, Toy::default()];
    let mut keep = Keep::default();
    let report = Sim::new(c, info(3), procs)
        .with_trace(&mut keep)
        .run()
        .expect("within the default limits");
    let [first, second] = &report.failovers[..] else {
        panic!("two failovers: {:#?}", report.failovers);
    };
    let recovered_ns = first.at_ns + first.recovery_ns.expect("node 1 took over and wrote");
    let decided_ns = report.elections[0].decided_ns;
    let expected = vec![
        (500 * MS, "failover opened".to_string()),
        (600 * MS, "election opened".to_string()),
        (800 * MS, format!("election decided at {decided_ns:?}")),
        (recovered_ns, "failover closed NewLeader".to_string()),
        (2 * S, "failover opened".to_string()),
        (3 * S, "failover closed Unresolved".to_string()),
    ];
    assert_eq!(keep.milestones, expected);
    assert_eq!(second.outcome, FailoverOutcome::Unresolved);
    assert_eq!(decided_ns, Some(800 * MS));
}

#[test]
fn the_json_trace_parses_back_to_the_typed_events_the_sink_saw() {
    let mut c = config(3, 2 * S);
    c.write_every_ns = 100 * MS;
    c.network.default.latency = Latency::Uniform(MS, 10 * MS);
    c.faults = vec![
        fault(300 * MS, FaultAction::Pause(Target::Node(1), 50 * MS)),
        fault(500 * MS, FaultAction::Crash(Target::Leader)),
    ];
    let procs = vec![
        Toy::claims(10 * MS, 1),
        Toy::claims(800 * MS, 2),
        Toy::pinger(20 * MS),
    ];
    let (mut keep, mut writer) = (Keep::default(), JsonLinesWriter::new(Vec::new()));
    Sim::new(c, info(3), procs)
        .with_trace(&mut Tee(&mut keep, &mut writer))
        .run()
        .expect("within the default limits");
    let text = String::from_utf8(writer.into_inner()).unwrap();
    let parsed = parse_trace(&text).expect("the engine's trace parses");
    assert_eq!(parsed, keep.events);
    for kind in [
        "deliver",
        "held",
        "crash",
        "fault",
        "write_accepted",
        "quiet",
    ] {
        assert!(
            keep.events.iter().any(|e| e.kind.name() == kind),
            "no {kind} event"
        );
    }
}

#[test]
fn a_fault_aimed_at_a_missing_leader_is_skipped_and_says_so() {
    let mut c = config(2, 100 * MS);
    c.faults = vec![fault(5 * MS, FaultAction::Crash(Target::Leader))];
    let (report, _) = run(c, vec![Toy::default(), Toy::default()]);
    assert!(
        report.faults[0].description.contains("skipped"),
        "{}",
        report.faults[0].description
    );
}

#[test]
fn the_same_seed_gives_the_same_trace_and_another_seed_another() {
    let hash = |seed: u64| {
        let mut c = config(4, 300 * MS);
        c.seed = seed;
        c.network.default.latency = Latency::Uniform(MS, 10 * MS);
        c.network.default.loss_ppm = 100_000;
        c.faults = vec![fault(50 * MS, FaultAction::Crash(Target::Random))];
        let procs = vec![
            Toy::pinger(7 * MS),
            Toy::pinger(11 * MS),
            Toy::claims(5 * MS, 1),
            Toy::default(),
        ];
        let mut hasher = TraceHasher::default();
        Sim::new(c, info(4), procs)
            .with_trace(&mut hasher)
            .run()
            .expect("within the default limits");
        hasher.hash()
    };
    assert_eq!(hash(9), hash(9));
    assert_ne!(hash(9), hash(10));
}

#[test]
fn every_trace_line_is_a_json_object_with_the_documented_columns() {
    let mut c = config(2, 30 * MS);
    c.faults = vec![fault(5 * MS, FaultAction::Pause(Target::Node(1), 10 * MS))];
    let (_, trace) = run_traced(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    for line in trace.lines() {
        for column in [
            "\"t\":",
            "\"node\":",
            "\"local\":",
            "\"ev\":",
            "\"what\":",
            "\"from\":",
            "\"sent\":",
            "\"term\":",
            "\"leader\":",
            "\"check\":",
        ] {
            assert!(line.contains(column), "{line} lacks {column}");
        }
        assert!(line.starts_with('{') && line.ends_with('}'));
    }
    assert!(trace.contains("\"ev\":\"held\""));
    assert!(trace.contains("\"ev\":\"resume\""));
}

#[test]
fn an_election_record_counts_the_messages_sent_between_campaign_and_claim() {
    let claimer = Toy {
        campaign_after_ns: Some(25 * MS),
        ..Toy::claims(45 * MS, 1)
    };
    let (report, _) = run(config(2, 60 * MS), vec![Toy::pinger(10 * MS), claimer]);
    let election = &report.elections[0];
    assert_eq!(election.started_ns, 25 * MS);
    assert_eq!(election.decided_ns, Some(45 * MS));
    assert_eq!(election.winner, Some(NodeId(1)));
    // Pings at 30 and 40 ms fall inside; the claim's own broadcast follows the claim.
    assert_eq!(election.messages_of("ping"), 2);
    assert_eq!(election.total_messages(), 2);
}

#[test]
fn removing_one_fault_does_not_change_whom_another_strikes() {
    let struck = |faults: Vec<FaultSpec>| {
        let mut c = config(7, 3 * S);
        c.faults = faults;
        let (report, _) = run(c, vec![Toy::default(); 7]);
        report
            .faults
            .iter()
            .map(|f| (f.at_ns, f.nodes.clone()))
            .collect::<Vec<_>>()
    };
    let early = fault(100 * MS, FaultAction::Pause(Target::Random, 10 * MS));
    let late = fault(2 * S, FaultAction::Crash(Target::Minority));
    let both = struck(vec![early, late.clone()]);
    let alone = struck(vec![late]);
    assert_eq!(both[1], alone[0]);
}

#[test]
fn coverage_counts_minority_elections_and_stale_write_attempts() {
    let mut c = config(3, 4 * S);
    c.write_every_ns = 100 * MS;
    c.faults = vec![fault(
        0,
        FaultAction::Partition(PartitionShape::Isolate(Target::Node(2))),
    )];
    let isolated_campaigner = Toy {
        campaign_after_ns: Some(50 * MS),
        ..Toy::default()
    };
    let majority_campaigner = Toy {
        campaign_after_ns: Some(60 * MS),
        ..Toy::default()
    };
    let (report, _) = run(
        c.clone(),
        vec![Toy::default(), majority_campaigner, isolated_campaigner],
    );
    assert_eq!(report.counters.elections_started, 2);
    assert_eq!(
        report.counters.minority_elections, 1,
        "only n2 campaigned cut off from a majority"
    );

    let stale = lease_race(FaultAction::Stall(Target::Node(0), 2 * S), true);
    assert_eq!(
        stale.counters.stale_write_attempts,
        stale.writes.rejected_stale
    );
    assert!(stale.counters.stale_write_attempts >= 1);
}

#[test]
fn a_new_leader_writes_nothing_during_its_startup_delay() {
    let mut c = config(3, 3 * S);
    c.write_every_ns = 100 * MS;
    c.startup_delay_ns = 700 * MS;
    c.faults = vec![fault(500 * MS, FaultAction::Crash(Target::Leader))];
    let (report, _) = run(
        c,
        vec![
            Toy::claims(10 * MS, 1),
            Toy::claims(800 * MS, 2),
            Toy::default(),
        ],
    );
    let f = &report.failovers[0];
    assert_eq!(f.election_ns, Some(300 * MS));
    // Claimed at 0.8 s; serves from 1.5 s: the first tick after that, plus the 1 ms latency.
    let recovery = f.recovery_ns.unwrap();
    assert!(
        (1_000 * MS..1_110 * MS).contains(&recovery),
        "recovery {recovery}"
    );
}

#[test]
fn a_timer_too_long_for_the_clock_never_fires_instead_of_wrapping_into_the_past() {
    let (_, procs) = run(
        config(2, 100 * MS),
        vec![Toy::pinger(u64::MAX), Toy::default()],
    );
    assert!(procs[0].ticks_at.is_empty());
}

#[test]
fn faults_listed_out_of_time_order_fire_and_heal_in_time_order() {
    let mut c = config(3, 2 * S);
    let late = FaultSpec {
        at_ns: 900 * MS,
        action: FaultAction::Crash(Target::Node(1)),
        heal_after_ns: Some(100 * MS),
        after: None,
    };
    let early = FaultSpec {
        at_ns: 100 * MS,
        action: FaultAction::Crash(Target::Node(2)),
        heal_after_ns: Some(300 * MS),
        after: None,
    };
    let stall = fault(50 * MS, FaultAction::Stall(Target::Node(0), 10 * MS));
    c.faults = vec![late, early, stall];
    let (report, _) = run(
        c,
        vec![Toy::pinger(10 * MS), Toy::default(), Toy::default()],
    );
    let healed: Vec<(u64, Option<u64>)> = report
        .faults
        .iter()
        .map(|f| (f.at_ns, f.healed_at_ns))
        .collect();
    assert_eq!(healed[1], (100 * MS, Some(400 * MS)));
    assert_eq!(healed[2], (900 * MS, Some(S)));
    assert!(healed[0].1.is_some(), "the stall healed");
}

// Extreme values handed to the engine directly (validation keeps them out of scenarios; the
// engine must not panic or livelock on them anyway).

fn with_event_limit(config: SimConfig, processes: Vec<Toy>) -> RunReport {
    let members = config.members;
    Sim::new(config, info(members), processes)
        .with_event_limit(100_000)
        .run()
        .expect("within the default limits")
}

#[test]
fn durations_near_u64_max_saturate_instead_of_overflowing() {
    let mut c = config(3, S);
    c.network.default.latency = Latency::Constant(u64::MAX);
    c.startup_delay_ns = u64::MAX;
    c.clocks.max_offset_ns = u64::MAX;
    c.faults = vec![
        FaultSpec {
            heal_after_ns: Some(u64::MAX),
            ..fault(10 * MS, FaultAction::Crash(Target::Node(1)))
        },
        FaultSpec {
            heal_after_ns: Some(u64::MAX),
            ..fault(
                20 * MS,
                FaultAction::Partition(PartitionShape::Isolate(Target::Node(2))),
            )
        },
        fault(30 * MS, FaultAction::Pause(Target::Node(0), u64::MAX)),
        fault(40 * MS, FaultAction::Stall(Target::Node(2), u64::MAX)),
    ];
    let report = with_event_limit(c, vec![Toy::pinger(10 * MS); 3]);
    assert!(report.events < 100_000, "{} events", report.events);
}

/// Runs node 0 as a 10 ms pinger (capped at 100,000 events); asserts the run did not
/// livelock; returns the local times at which node 0's timer fired.
fn pinger_ticks_without_livelock(c: SimConfig) -> Vec<LocalNanos> {
    let members = c.members;
    let mut sim = Sim::new(c, info(members), vec![Toy::pinger(10 * MS), Toy::default()])
        .with_event_limit(100_000);
    let report = sim.run().expect("within the default limits");
    assert!(
        report.events < 100_000,
        "{} events: a livelock",
        report.events
    );
    sim.processes()[0].ticks_at.clone()
}

#[test]
fn a_clock_driven_past_its_largest_reading_stops_firing_timers_instead_of_livelocking() {
    let mut c = config(2, S);
    c.faults = vec![
        fault(12 * MS, FaultAction::ClockJump(Target::Node(0), i64::MAX)),
        fault(13 * MS, FaultAction::ClockJump(Target::Node(0), i64::MAX)),
    ];
    c.clocks.per_node = vec![node_clock(0, 0, 0, TimerClock::Wall)];
    let ticks = pinger_ticks_without_livelock(c);
    assert_eq!(
        ticks.len(),
        2,
        "one tick before the jump, one at it: {ticks:?}"
    );
}

#[test]
fn a_clock_offset_at_the_largest_reading_arms_no_timer() {
    let mut c = config(2, S);
    c.clocks.per_node = vec![node_clock(0, 0, i64::MAX, TimerClock::Monotonic)];
    assert!(pinger_ticks_without_livelock(c).is_empty());
}

// ---------------------------------------------------------------------------------------
// The Stream transport

fn stream_config(members: usize, duration_ns: u64, timeout_ns: u64) -> SimConfig {
    let mut c = config(members, duration_ns);
    c.network.transport = crate::Transport::Stream(crate::StreamConfig {
        min_rto_ns: 10 * MS,
        max_rto_ns: 40 * MS,
        timeout_ns,
    });
    c
}

fn pings_from(toy: &Toy, from: u32) -> Vec<u64> {
    toy.received
        .iter()
        .filter(|r| r.0 == NodeId(from))
        .map(|r| r.1)
        .collect()
}

fn isolate_node_0(at_ns: u64, for_ns: u64) -> FaultSpec {
    FaultSpec {
        at_ns,
        action: FaultAction::Partition(PartitionShape::Isolate(Target::Node(0))),
        heal_after_ns: Some(for_ns),
        after: None,
    }
}

#[test]
fn a_stream_delivers_across_a_short_partition_late_and_in_order() {
    let mut c = stream_config(2, 200 * MS, 1_000 * MS);
    c.faults = vec![isolate_node_0(15 * MS, 30 * MS)];
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let got = pings_from(&procs[1], 0);
    let every: Vec<u64> = (1..=got.len() as u64).collect();
    assert_eq!(got, every, "nothing lost, nothing reordered");
    assert!(got.len() >= 19);
    assert_eq!(report.drops.partition + report.drops.broken_connection, 0);
    assert!(report.drops.retransmissions >= 1);
    // Ping 2 (sent at 20 ms, cut) waits for a retransmission after the heal at 45 ms: its
    // retries come 10, 20, 40, 40 ms apart (20+10+20=50 ms is the first after the heal).
    let (_, _, arrived) = procs[1].received[1];
    assert_eq!(arrived, 51 * MS as i64);
    assert!(procs.iter().all(|p| p.disconnects.is_empty()));
}

#[test]
fn a_stream_cut_longer_than_its_timeout_breaks_and_both_ends_hear_of_it() {
    let mut c = stream_config(2, 300 * MS, 50 * MS);
    c.faults = vec![isolate_node_0(15 * MS, 100 * MS)];
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::pinger(10 * MS)]);
    assert_eq!(procs[0].disconnects, vec![(NodeId(1), 65 * MS as i64)]);
    assert_eq!(procs[1].disconnects, vec![(NodeId(0), 65 * MS as i64)]);
    assert!(report.drops.broken_connection >= 8, "{:?}", report.drops);
    assert!(report.drops.connections_broken >= 1);
    // Pings sent after the break open a new connection, which delivers after the heal.
    let got = pings_from(&procs[1], 0);
    assert_eq!(got[0], 1);
    assert!(got.iter().any(|n| *n >= 20));
    assert!(got.windows(2).all(|w| w[0] < w[1]), "in order: {got:?}");
}

#[test]
fn a_lossy_stream_loses_nothing_and_keeps_the_order() {
    let mut c = stream_config(2, 500 * MS, 1_000 * MS);
    c.network.default.loss_ppm = crate::rng::PPM / 2;
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let got = pings_from(&procs[1], 0);
    let every: Vec<u64> = (1..=got.len() as u64).collect();
    assert_eq!(got, every);
    assert!(got.len() >= 40, "late, not lost: {}", got.len());
    assert_eq!(report.drops.loss, 0);
    assert!(report.drops.retransmissions >= 10);
}

#[test]
fn a_crashed_peer_breaks_its_streams_and_later_sends_wait_for_its_restart() {
    let mut c = stream_config(2, 200 * MS, 1_000 * MS);
    c.faults = vec![FaultSpec {
        at_ns: 15 * MS,
        action: FaultAction::Crash(Target::Node(1)),
        heal_after_ns: Some(30 * MS),
        after: None,
    }];
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    assert_eq!(procs[0].disconnects, vec![(NodeId(1), 15 * MS as i64)]);
    assert!(
        procs[1].disconnects.is_empty(),
        "the crashed end hears nothing"
    );
    let got = pings_from(&procs[1], 0);
    assert_eq!(got[0], 1);
    assert!(
        got.contains(&2),
        "sent while it was down, delivered after: {got:?}"
    );
    assert_eq!(report.drops.crashed_receiver, 0);
}

#[test]
fn a_datagram_run_has_no_connections() {
    let mut c = config(2, 100 * MS);
    c.faults = vec![isolate_node_0(15 * MS, 30 * MS)];
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    assert!(report.drops.partition >= 3);
    assert_eq!(
        report.drops.retransmissions + report.drops.connections_broken,
        0
    );
    assert!(procs.iter().all(|p| p.disconnects.is_empty()));
}

#[test]
fn a_freeze_striking_a_frozen_node_says_so_and_the_stall_heals_when_it_really_ends() {
    let mut c = config(3, 30 * S);
    // n0 leads and writes every 100 ms: it has a handler right after the pause.
    c.write_every_ns = 100 * MS;
    c.faults = vec![
        fault(5 * S, FaultAction::Pause(Target::Node(0), 8 * S)),
        fault(6 * S, FaultAction::Stall(Target::Node(0), 9 * S)),
        fault(20 * S, FaultAction::Pause(Target::Node(1), S)),
    ];
    let procs = vec![Toy::claims(10 * MS, 1), Toy::default(), Toy::default()];
    let report = Sim::new(c, info(3), procs)
        .run()
        .expect("within the default limits");
    let [pause, stall, alone] = &report.faults[..] else {
        panic!("three faults: {:#?}", report.faults);
    };
    assert_eq!(pause.description, "pause n0 (leader) for 8s");
    assert_eq!(
        stall.description,
        "stall n0 (leader) for 9s (n0 already frozen until 13s: the stall strikes after, one \
         longer freeze)"
    );
    // The stall strikes in n0's first handler after the pause, and lasts its 9 s from there.
    assert!(stall.healed_at_ns.unwrap() >= 22 * S, "{stall:#?}");
    assert_eq!(alone.description, "pause n1 for 1s");
    assert_eq!(alone.healed_at_ns, Some(21 * S));
}

#[test]
fn a_pause_of_a_node_paused_for_longer_heals_when_the_node_runs_again() {
    let mut c = config(3, 30 * S);
    c.faults = vec![
        fault(5 * S, FaultAction::Pause(Target::Node(0), 8 * S)),
        fault(6 * S, FaultAction::Pause(Target::Node(0), S)),
    ];
    let procs = vec![Toy::default(), Toy::default(), Toy::default()];
    let report = Sim::new(c, info(3), procs)
        .run()
        .expect("within the default limits");
    let second = &report.faults[1];
    assert_eq!(
        second.description,
        "pause n0 for 1s (n0 already frozen until 13s: frozen until the later end)"
    );
    assert_eq!(second.healed_at_ns, Some(13 * S));
}

// The runtime guard (crate::limits): a run that outgrows any limit ends with an error that
// names what grew, never a report of a run cut short.

/// The limit a run outgrew (it refused no effect).
fn limit_of(e: crate::RunError) -> LimitExceeded {
    match e {
        crate::RunError::Limit(e) => e,
        refused => panic!("a limit, not {refused}"),
    }
}

fn guarded(limits: crate::limits::RunLimits, latency_ns: u64) -> Result<RunReport, LimitExceeded> {
    guarded_for(limits, latency_ns, 1_000 * S)
}

/// 3 nodes pinging each other every millisecond for `duration_ns`, under `limits`.
fn guarded_for(
    limits: crate::limits::RunLimits,
    latency_ns: u64,
    duration_ns: u64,
) -> Result<RunReport, LimitExceeded> {
    let mut c = config(3, duration_ns);
    c.network.default.latency = Latency::Constant(latency_ns);
    c.limits = limits;
    Sim::new(c, info(3), vec![Toy::pinger(MS); 3])
        .run()
        .map_err(limit_of)
}

#[test]
fn a_run_past_its_event_limit_ends_with_an_error_naming_the_events() {
    let limits = crate::limits::RunLimits {
        max_events: 1_000,
        ..crate::limits::RunLimits::default()
    };
    let e = guarded(limits, MS).expect_err("1,000 s of 1 ms pings pass 1,000 events");
    assert_eq!(e.limit, crate::limits::Limit::Events);
    assert_eq!((e.allowed, e.reached, e.events), (1_000, 1_000, 1_000));
    assert!(e.at_ns < S, "ended early: {}", e.at_ns);
    let text = e.to_string();
    assert!(text.contains("1,000 events handled"), "{text}");
    assert!(text.contains("most sent"), "{text}");
}

#[test]
fn a_run_that_queues_more_than_its_in_flight_limit_ends_with_the_link_that_holds_them() {
    let limits = crate::limits::RunLimits {
        max_in_flight: 500,
        ..crate::limits::RunLimits::default()
    };
    // Pings every millisecond that take 10 s to arrive: thousands in flight on every link.
    let e = guarded(limits, 10 * S).expect_err("the pings pile up");
    assert_eq!(e.limit, crate::limits::Limit::InFlight);
    assert!(e.reached > 500, "{}", e.reached);
    assert!(e.to_string().contains("most queued"), "{e}");
    // The same run with room to spare is not stopped by the guard.
    let roomy = crate::limits::RunLimits {
        max_in_flight: 1_000_000,
        max_events: 100_000,
        ..crate::limits::RunLimits::default()
    };
    let e = guarded(roomy, 10 * S).expect_err("it passes the event limit instead");
    assert_eq!(e.limit, crate::limits::Limit::Events);
}

#[test]
fn the_default_limits_leave_an_ordinary_run_alone() {
    // 100 s of 1 ms pings among 3 nodes: about 900,000 events, a few hundred in flight (1,000 s
    // took 10 s of the unoptimised test build; the in-flight and memory guards see the same
    // steady state either way, and the event limit is a thousand times further).
    let report =
        guarded_for(crate::limits::RunLimits::default(), MS, 100 * S).expect("within the defaults");
    assert!(report.events > 800_000, "{}", report.events);
}

#[test]
fn messages_held_back_on_a_cut_stream_count_toward_the_in_flight_limit() {
    // Pings every millisecond to a peer cut off for 100 s on a connection that waits that
    // long: they pile up in the connection, not in the event queue (one retransmission).
    let mut c = stream_config(2, 200 * S, 150 * S);
    c.faults = vec![isolate_node_0(S, 100 * S)];
    c.limits = crate::limits::RunLimits {
        max_in_flight: 5_000,
        ..crate::limits::RunLimits::default()
    };
    let members = c.members;
    let e = Sim::new(c, info(members), vec![Toy::pinger(MS), Toy::default()])
        .run()
        .map_err(limit_of)
        .expect_err("five thousand pings wait behind the cut");
    assert_eq!(e.limit, crate::limits::Limit::InFlight);
    assert!(
        e.at_ns < 10 * S,
        "stopped within seconds of the cut: {}",
        e.at_ns
    );
    assert!(
        e.to_string().contains("held back on Stream connections"),
        "{e}"
    );
}

#[test]
fn a_run_of_exactly_its_event_limit_stays_within_it() {
    let with_limit = |max_events| {
        let mut c = config(3, S);
        c.limits = crate::limits::RunLimits {
            max_events,
            ..crate::limits::RunLimits::default()
        };
        Sim::new(c, info(3), vec![Toy::pinger(10 * MS); 3])
            .run()
            .map_err(limit_of)
    };
    let events = with_limit(u64::MAX).expect("unlimited").events;
    assert_eq!(
        with_limit(events).expect("exactly the limit").events,
        events
    );
    let e = with_limit(events - 1).expect_err("one more than the limit");
    assert_eq!(
        (e.limit, e.events),
        (crate::limits::Limit::Events, events - 1)
    );
}

/// The one timer of a test process that needs no other.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Tick;

impl TimerKind for Tick {
    const NAMES: &'static [&'static str] = &["tick"];
    fn index(self) -> usize {
        0
    }
    fn from_index(_: usize) -> Self {
        Tick
    }
}

mod memory;
mod properties;
mod service_cluster;
mod stepping;
mod triggers;

// ---------------------------------------------------------------------------------------
// Message accounting: every copy handed to the network is delivered, dropped or in flight

fn assert_every_row_balances(report: &RunReport) {
    for m in &report.messages {
        assert!(m.balances(), "{m:?} does not add up");
    }
    let dropped: u64 = report.messages.iter().map(|m| m.dropped).sum();
    assert_eq!(dropped, report.drops.total(), "{:?}", report.drops);
}

#[test]
fn messages_held_for_a_paused_node_that_crashes_are_dropped_to_the_crash() {
    let mut c = config(2, 100 * MS);
    // Pings 2-4 arrive (21, 31, 41 ms) while node 1 is frozen, then it crashes at 42 ms.
    c.faults = vec![
        fault(15 * MS, FaultAction::Pause(Target::Node(1), 50 * MS)),
        fault(42 * MS, FaultAction::Crash(Target::Node(1))),
    ];
    let (report, _) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    // Ping 10, sent at 100 ms, is under way when the run ends.
    assert_eq!(report.messages[0].in_flight, 1);
    // Held 2-4, then 5-9 (51..91 ms) arrive at the crashed node.
    assert_eq!(report.drops.crashed_receiver, 3 + 5);
    assert_every_row_balances(&report);
}

#[test]
fn messages_still_travelling_or_held_at_the_end_are_in_flight() {
    // A ping leaves for each peer every 10 ms and takes 5 ms; node 1 freezes at 27 ms and
    // the run ends at 40.5 ms.
    let mut c = config(3, 40 * MS + MS / 2);
    c.network.default.latency = Latency::Constant(5 * MS);
    c.faults = vec![fault(27 * MS, FaultAction::Pause(Target::Node(1), S))];
    let (report, _) = run(
        c,
        vec![Toy::pinger(10 * MS), Toy::default(), Toy::default()],
    );
    let pings = &report.messages[0];
    // Pings of 10, 20 (delivered to both), 30 (held at n1, delivered at n2), 40 (travelling
    // to both): 8 sent; n1 holds 30's ping, 40's two copies travel.
    assert_eq!(pings.sent, 8);
    assert_eq!(pings.in_flight, 3, "{pings:?}");
    assert_every_row_balances(&report);
}

#[test]
fn a_stream_run_ending_with_messages_held_back_still_balances() {
    let mut c = stream_config(2, 100 * MS, 1_000 * MS);
    // Cut until after the end: pings from 20 ms on wait on the connection.
    c.faults = vec![isolate_node_0(15 * MS, 500 * MS)];
    let (report, _) = run(c, vec![Toy::pinger(10 * MS), Toy::default()]);
    let pings = &report.messages[0];
    assert_eq!(pings.delivered, 1);
    assert_eq!(pings.in_flight, pings.sent - 1, "{pings:?}");
    assert_every_row_balances(&report);
}

// ---------------------------------------------------------------------------------------
// Steady state

#[test]
fn steady_state_counts_the_time_and_messages_with_an_old_enough_leader_and_no_fault() {
    // n0 claims at 10 ms and pings n1 every 10 ms; the stability window is twice the 100 ms
    // failure-detection time, so steady from 210 ms; n1 is paused from 505 to 605 ms.
    let mut c = config(2, 1_005 * MS);
    c.faults = vec![fault(
        505 * MS,
        FaultAction::Pause(Target::Node(1), 100 * MS),
    )];
    let leader = Toy {
        ping_every_ns: Some(10 * MS),
        ..Toy::claims(10 * MS, 1)
    };
    let (report, _) = run(c, vec![leader, Toy::default()]);
    let steady = &report.steady_state;
    assert_eq!(steady.duration_ns, (505 - 210 + 1_005 - 605) * MS);
    // Pings at 210..=500 ms (30) and 610..=1000 ms (40); the claim at 10 ms is not steady.
    assert_eq!(steady.messages.len(), 1);
    assert_eq!(
        (steady.messages[0].kind.as_str(), steady.messages[0].count),
        ("ping", 70)
    );
    assert!(steady.service_messages.is_empty());
}

#[test]
fn a_futile_campaigner_that_stays_silent_after_the_heal_does_not_block_the_steady_state() {
    // n0 leads from 10 ms; n2, isolated from 100 to 300 ms, campaigns at 200 ms (it cannot
    // reach a majority), then says nothing.
    let mut c = config(3, 1_000 * MS);
    c.faults = vec![FaultSpec {
        at_ns: 100 * MS,
        action: FaultAction::Partition(PartitionShape::Isolate(Target::Node(2))),
        heal_after_ns: Some(200 * MS),
        after: None,
    }];
    let campaigner = Toy {
        campaign_after_ns: Some(200 * MS),
        ..Toy::default()
    };
    let (report, _) = run(c, vec![Toy::claims(10 * MS, 1), Toy::default(), campaigner]);
    assert_eq!(report.counters.futile_campaigns, 1);
    assert!(report.elections.is_empty(), "{:?}", report.elections);
    assert_eq!(report.steady_state.duration_ns, 700 * MS);
}
