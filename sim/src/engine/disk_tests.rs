//! Disks and processing time (docs/engine.md, "Disks and processing"), tested with a scribe
//! that writes a counter to its disk and then tells its peer.

use super::tests::Tick;
use crate::config::{AlgorithmInfo, SimConfig};
use crate::disk::NodeDisk;
use crate::fault::{FaultAction, FaultSpec, Target};
use crate::ids::NodeId;
use crate::network_config::Latency;
use crate::process::{Ctx, Message, Process};
use crate::time::{LocalNanos, NANOS_PER_MILLI as MS};
use crate::trace::JsonLinesWriter;
use crate::Sim;

#[derive(Clone, Debug)]
enum Note {
    /// Sent before the tick's durable write.
    Early(u64),
    /// Sent after it.
    Written(u64),
}

impl Message for Note {
    const KINDS: &'static [&'static str] = &["early", "written"];
    fn kind(&self) -> usize {
        match self {
            Note::Early(_) => 0,
            Note::Written(_) => 1,
        }
    }
}

/// Every `every_ns` (from the first tick at `every_ns`): counts, sends `Early` if asked,
/// writes the count to disk `writes` times, then sends `Written`.
#[derive(Clone, Debug, Default)]
struct Scribe {
    every_ns: Option<u64>,
    early: bool,
    writes: u32,
    /// Sends `Early` after the writes with `send_unordered` (another thread of the process).
    aside: bool,
    count: u64,
    /// (note, true time in ms) of every note received (clocks are exact here).
    received: Vec<(String, LocalNanos)>,
    /// What each restart got back from the disk.
    restored: Vec<Option<u64>>,
}

type ScribeCtx<'a> = Ctx<'a, Note, Tick, u64>;

impl Scribe {
    fn writer(every_ns: u64, writes: u32) -> Self {
        Scribe {
            every_ns: Some(every_ns),
            writes,
            ..Scribe::default()
        }
    }

    fn arm(&self, ctx: &mut ScribeCtx<'_>) {
        if let Some(every) = self.every_ns {
            ctx.set_timer(Tick, every);
        }
    }
}

impl Process for Scribe {
    type Msg = Note;
    type Timer = Tick;
    type Durable = u64;

    fn on_start(&mut self, ctx: &mut ScribeCtx<'_>) {
        self.arm(ctx);
    }

    fn on_message(&mut self, ctx: &mut ScribeCtx<'_>, _from: NodeId, msg: Note) {
        let at_ms = ctx.monotonic_now() / MS as i64;
        let text = match msg {
            Note::Early(n) => format!("early {n}"),
            Note::Written(n) => format!("written {n}"),
        };
        self.received.push((text, at_ms));
    }

    fn on_timer(&mut self, ctx: &mut ScribeCtx<'_>, _timer: Tick) {
        self.count += 1;
        if self.early {
            ctx.send(NodeId(1), Note::Early(self.count));
        }
        for _ in 0..self.writes {
            ctx.persist(self.count);
        }
        if self.aside {
            ctx.send_unordered(NodeId(1), Note::Early(self.count));
        }
        ctx.send(NodeId(1), Note::Written(self.count));
        self.arm(ctx);
    }

    fn restore(&mut self, durable: Option<u64>) {
        self.restored.push(durable);
        self.count = durable.unwrap_or(0);
    }

    fn on_restart(&mut self, ctx: &mut ScribeCtx<'_>) {
        self.arm(ctx);
    }

    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}

fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "scribe".into(),
        failure_detection_ns: 100 * MS,
        min_group_for_progress: 2,
        signals: crate::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// Two processes, 1 ms links; node 0 is `scribe`.
fn config(duration_ns: u64, fsync: Option<Latency>) -> SimConfig {
    let mut c = SimConfig::quiet(1, 2, duration_ns);
    c.network.default.latency = Latency::Constant(MS);
    c.disk.fsync = fsync;
    c
}

fn fault(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
        after: None,
    }
}

fn run(config: SimConfig, scribe: Scribe) -> Vec<Scribe> {
    let mut sim = Sim::new(config, info(), vec![scribe, Scribe::default()]);
    sim.run().expect("within the default limits");
    sim.processes().to_vec()
}

fn received(procs: &[Scribe]) -> Vec<(&str, LocalNanos)> {
    procs[1]
        .received
        .iter()
        .map(|(text, at)| (text.as_str(), *at))
        .collect()
}

#[test]
fn without_a_disk_a_write_takes_no_time() {
    let procs = run(config(25 * MS, None), Scribe::writer(10 * MS, 1));
    assert_eq!(received(&procs), [("written 1", 11), ("written 2", 21)]);
}

#[test]
fn what_a_handler_sends_after_its_write_leaves_once_the_write_is_on_disk() {
    let fsync = Some(Latency::Constant(4 * MS));
    let scribe = Scribe {
        early: true,
        ..Scribe::writer(10 * MS, 1)
    };
    let procs = run(config(25 * MS, fsync), scribe);
    // Tick at 10 ms: `early` leaves at once (11), `written` after the 4 ms fsync (15).
    assert_eq!(
        received(&procs),
        [
            ("early 1", 11),
            ("written 1", 15),
            ("early 2", 21),
            ("written 2", 25)
        ]
    );
}

#[test]
fn writes_go_to_disk_one_after_another() {
    let procs = run(
        config(25 * MS, Some(Latency::Constant(4 * MS))),
        Scribe::writer(10 * MS, 2),
    );
    assert_eq!(received(&procs), [("written 1", 19)]);
}

#[test]
fn what_a_process_sends_after_a_slow_write_waits_behind_it() {
    // A 15 ms fsync every 10 ms: the disk falls behind, and so does every later send, even
    // the `early` ones of later ticks (one ordered output, as an event loop blocked on fsync).
    let scribe = Scribe {
        early: true,
        ..Scribe::writer(10 * MS, 1)
    };
    let procs = run(config(32 * MS, Some(Latency::Constant(15 * MS))), scribe);
    // Tick 10: written at 25. Tick 20: `early 2` waits behind it; `written 2` at 40.
    assert_eq!(
        received(&procs),
        [("early 1", 11), ("written 1", 26), ("early 2", 26)]
    );
}

#[test]
fn with_group_commit_writes_asked_for_during_an_fsync_share_the_next_one() {
    // A 25 ms fsync every 10 ms. Tick 10 writes over [10, 35]; tick 20 waits for the disk
    // (starts at 35, done at 60); tick 30 asks while that write has not begun: with `batch`
    // it goes down in the same fsync, without it in one of its own (done at 85).
    let mut c = config(65 * MS, Some(Latency::Constant(25 * MS)));
    let alone = received(&run(c.clone(), Scribe::writer(10 * MS, 1))).len();
    c.disk.batch = true;
    let procs = run(c, Scribe::writer(10 * MS, 1));
    assert_eq!(
        received(&procs),
        [("written 1", 36), ("written 2", 61), ("written 3", 61)]
    );
    assert_eq!(
        alone, 2,
        "without group commit tick 30's write is still on disk"
    );
}

#[test]
fn a_crash_before_the_fsync_completes_loses_the_write() {
    // Writes of 1 at 10 ms (done 14), 2 at 20 ms (done 24); the crash at 22 ms loses 2.
    let mut c = config(60 * MS, Some(Latency::Constant(4 * MS)));
    c.faults = vec![fault(
        22 * MS,
        FaultAction::Crash(Target::Node(0)),
        Some(10 * MS),
    )];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    assert_eq!(procs[0].restored, [Some(1)]);
    // `written 2` was waiting for the lost write and is lost with it. After the restart at
    // 32 ms the count goes on from 1: the tick at 42 ms says 2 again.
    let notes: Vec<&str> = received(&procs).iter().map(|(t, _)| *t).collect();
    assert_eq!(notes, ["written 1", "written 2", "written 3"]);
    assert_eq!(received(&procs)[1].1, 42 + 4 + 1);
}

#[test]
fn a_crash_after_the_fsync_keeps_the_write() {
    let mut c = config(40 * MS, Some(Latency::Constant(4 * MS)));
    c.faults = vec![fault(
        25 * MS,
        FaultAction::Crash(Target::Node(0)),
        Some(5 * MS),
    )];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    assert_eq!(procs[0].restored, [Some(2)]);
}

#[test]
fn a_restart_before_any_write_completed_gets_nothing_back() {
    let mut c = config(40 * MS, Some(Latency::Constant(4 * MS)));
    c.faults = vec![fault(
        12 * MS,
        FaultAction::Crash(Target::Node(0)),
        Some(5 * MS),
    )];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    assert_eq!(procs[0].restored, [None]);
}

#[test]
fn a_slow_disk_fault_slows_every_fsync_until_it_heals() {
    let mut c = config(45 * MS, Some(Latency::Constant(MS)));
    c.faults = vec![fault(
        15 * MS,
        FaultAction::SlowDisk(Target::Node(0), 8 * MS),
        Some(10 * MS),
    )];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    // Ticks at 10 (1 ms fsync), 20 (8 ms: slow), 30 and 40 (healed at 25: 1 ms).
    let at: Vec<LocalNanos> = received(&procs).iter().map(|(_, at)| *at).collect();
    assert_eq!(at, [12, 29, 32, 42]);
}

/// An fsync is slow if it begins before the heal (a delay injected at the syscall's entry):
/// the write queued behind a slow one begins after the heal and takes the disk's own time.
#[test]
fn a_write_queued_behind_a_slow_fsync_is_fast_if_it_begins_after_the_heal() {
    // Slow (20 ms) from 5 to 25 ms. Tick 10 writes over [10, 30]; tick 20 asks during the
    // fault, waits for the disk and begins at 30, after the heal: 1 ms, done at 31 (slow,
    // it would be done at 50). Tick 30's write follows it: done at 32.
    let mut c = config(45 * MS, Some(Latency::Constant(MS)));
    c.disk.batch = true;
    c.faults = vec![fault(
        5 * MS,
        FaultAction::SlowDisk(Target::Node(0), 20 * MS),
        Some(20 * MS),
    )];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    let at: Vec<LocalNanos> = received(&procs).iter().map(|(_, at)| *at).collect();
    assert_eq!(at, [31, 32, 33, 42]);
}

#[test]
fn a_per_node_disk_overrides_the_default() {
    let mut c = config(15 * MS, Some(Latency::Constant(MS)));
    c.disk.per_node = vec![NodeDisk {
        node: 0,
        fsync: Latency::Constant(3 * MS),
    }];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    assert_eq!(received(&procs), [("written 1", 14)]);
}

#[test]
fn processing_time_delays_what_every_handler_sends_and_the_timers_it_arms() {
    let mut c = config(30 * MS, None);
    c.processing = Some(Latency::Constant(2 * MS));
    let procs = run(c, Scribe::writer(10 * MS, 0));
    // Start takes 2 ms: the first tick comes at 12 ms and its note leaves at 14; that tick
    // re-arms from 14 ms, so the next comes at 24 and its note leaves at 26.
    assert_eq!(received(&procs), [("written 1", 15), ("written 2", 27)]);
}

#[test]
fn an_unordered_send_leaves_at_once_behind_a_slow_disk() {
    // The disk falls behind as in the test above, but the `early` notes go with
    // `send_unordered` after each write: neither that write nor the earlier ones hold them.
    let scribe = Scribe {
        aside: true,
        ..Scribe::writer(10 * MS, 1)
    };
    let procs = run(config(32 * MS, Some(Latency::Constant(15 * MS))), scribe);
    assert_eq!(
        received(&procs),
        [
            ("early 1", 11),
            ("early 2", 21),
            ("written 1", 26),
            ("early 3", 31)
        ]
    );
}

#[test]
fn an_unordered_send_still_waits_out_a_stall() {
    let mut c = config(25 * MS, None);
    c.faults = vec![fault(
        5 * MS,
        FaultAction::Stall(Target::Node(0), 8 * MS),
        None,
    )];
    let scribe = Scribe {
        aside: true,
        ..Scribe::writer(10 * MS, 1)
    };
    let procs = run(c, scribe);
    // The stall strikes in the handler of 10 ms and holds everything it sends until 18 ms.
    assert_eq!(received(&procs)[0], ("early 1", 19));
}

#[test]
fn a_write_completing_during_a_pause_is_sent_at_resume() {
    let mut c = config(25 * MS, Some(Latency::Constant(2 * MS)));
    c.faults = vec![fault(
        11 * MS,
        FaultAction::Pause(Target::Node(0), 5 * MS),
        None,
    )];
    let procs = run(c, Scribe::writer(10 * MS, 1));
    // The write of 10 ms is on disk at 12 ms, but node 0 is frozen until 16 ms.
    assert_eq!(received(&procs)[0], ("written 1", 17));
}

#[test]
fn a_write_that_takes_time_is_traced_with_its_completion() {
    let c = config(15 * MS, Some(Latency::Constant(4 * MS)));
    let mut writer = JsonLinesWriter::new(Vec::new());
    Sim::new(
        c,
        info(),
        vec![Scribe::writer(10 * MS, 1), Scribe::default()],
    )
    .with_trace(&mut writer)
    .run()
    .expect("within the default limits");
    let trace = String::from_utf8(writer.into_inner()).unwrap();
    assert!(
        trace.contains(r#""ev":"persist","what":"14000000""#),
        "{trace}"
    );
}

#[test]
fn the_same_seed_draws_the_same_fsync_latencies() {
    let c = config(200 * MS, Some(Latency::Uniform(MS, 9 * MS)));
    let first = run(c.clone(), Scribe::writer(10 * MS, 1));
    let second = run(c, Scribe::writer(10 * MS, 1));
    assert_eq!(received(&first), received(&second));
    let distinct: std::collections::BTreeSet<LocalNanos> = received(&first)
        .windows(2)
        .map(|w| w[1].1 - w[0].1)
        .collect();
    assert!(distinct.len() > 1, "the latencies vary: {distinct:?}");
}
