//! Memory charged per run (docs/engine.md, "Memory charged per run"): the bytes a run holds
//! are counted as they grow and checked against `--max-memory` and `--max-node-in-flight`
//! each time, so a run outgrows them at the same event whatever else the process holds.

use super::{config, fault, info, isolate_node_0, limit_of, stream_config, Tick};
use crate::engine::StopAt;
use crate::fault::{FaultAction, Target};
use crate::ids::NodeId;
use crate::limits::{Limit, LimitExceeded, RunLimits};
use crate::network_config::Latency;
use crate::process::{Ctx, Message, Process};
use crate::time::{LocalNanos, NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};
use crate::trace::{TraceEvent, TraceSink};
use crate::{Sim, SimConfig};

/// A message with a body of its own.
#[derive(Clone, Debug)]
struct Blob(Vec<u8>);

impl Message for Blob {
    const KINDS: &'static [&'static str] = &["blob"];
    fn kind(&self) -> usize {
        0
    }
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.0.len()
    }
}

/// Every `every_ns`: sends a blob of `blob_bytes` to every peer, persists `persist_bytes`
/// (if any), and writes to the resource (token 1) when `writes`.
#[derive(Clone, Debug, Default)]
struct Sender {
    every_ns: Option<u64>,
    blob_bytes: usize,
    persist_bytes: usize,
    writes: bool,
    ticks: u64,
}

impl Sender {
    fn every(every_ns: u64, blob_bytes: usize) -> Self {
        Sender {
            every_ns: Some(every_ns),
            blob_bytes,
            ..Sender::default()
        }
    }
}

type SenderCtx<'a> = Ctx<'a, Blob, Tick, Vec<u8>>;

impl Process for Sender {
    type Msg = Blob;
    type Timer = Tick;
    type Durable = Vec<u8>;

    fn on_start(&mut self, ctx: &mut SenderCtx<'_>) {
        if let Some(every) = self.every_ns {
            ctx.set_timer(Tick, every);
        }
    }

    fn on_message(&mut self, _: &mut SenderCtx<'_>, _: NodeId, _: Blob) {}

    fn on_timer(&mut self, ctx: &mut SenderCtx<'_>, _: Tick) {
        self.ticks += 1;
        if self.persist_bytes > 0 {
            // Different lengths, so that a write replaced by another of another size shows.
            let bytes = self.persist_bytes + (self.ticks % 3) as usize;
            ctx.persist(vec![0; bytes]);
        }
        let peers: Vec<NodeId> = ctx.peers().collect();
        for peer in peers {
            ctx.send(peer, Blob(vec![0; self.blob_bytes]));
        }
        if self.writes {
            ctx.write(1);
        }
        ctx.set_timer(Tick, self.every_ns.expect("armed only when sending"));
    }

    fn on_restart(&mut self, ctx: &mut SenderCtx<'_>) {
        self.on_start(ctx);
    }

    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}

fn run_with(c: SimConfig, senders: Vec<Sender>) -> Result<crate::RunReport, LimitExceeded> {
    let members = c.members;
    Sim::new(c, info(members), senders).run().map_err(limit_of)
}

/// A KiB blob every millisecond to a peer 10 s away: the queue grows by a KiB a millisecond.
fn piling_up(max_memory_bytes: u64) -> Result<crate::RunReport, LimitExceeded> {
    let mut c = config(2, 20 * S);
    c.network.default.latency = Latency::Constant(10 * S);
    c.limits = RunLimits {
        max_memory_bytes,
        ..RunLimits::default()
    };
    run_with(c, vec![Sender::every(MS, 1024), Sender::default()])
}

#[test]
fn a_queue_that_grows_past_the_byte_limit_ends_the_run_at_the_same_event_every_time() {
    let limit = 256 << 10;
    let first = piling_up(limit).expect_err("a KiB a millisecond passes 256 KiB");
    assert_eq!(first.limit, Limit::Memory);
    assert_eq!(first.node, Some(NodeId(0)));
    // It ends at the first message past the limit, not at a later sample.
    let blob = Sim::<Sender>::message_bytes(&Blob(vec![0; 1024]));
    assert!(first.reached > limit, "{}", first.reached);
    assert!(
        first.reached <= limit + blob,
        "{} > {limit} + {blob}",
        first.reached
    );
    assert_eq!(first.events, limit / blob + 1, "one tick per blob");
    let text = first.to_string();
    assert!(text.contains("256 KiB held by the run"), "{text}");
    assert!(
        text.contains("what passed it: a message of type `blob`, 1.1 KiB, from n0 to n1"),
        "{text}"
    );
    // Again, and again while the process holds 64 MiB more (a neighbour's run, in a hunt):
    // the same event, the same count.
    assert_eq!(piling_up(limit).expect_err("again"), first);
    let neighbour = vec![1u8; 64 << 20];
    assert_eq!(piling_up(limit).expect_err("beside a big neighbour"), first);
    drop(neighbour);
    // With room for the whole run, the same run is not stopped.
    assert!(piling_up(64 << 20).is_ok());
}

#[test]
fn a_node_that_sends_to_a_paused_peer_is_named_with_the_message_type_and_size() {
    // A MiB every 10 ms to a peer paused for the whole run: held for it, never taken.
    let mut c = config(2, 10 * S);
    c.faults = vec![fault(0, FaultAction::Pause(Target::Node(1), 100 * S))];
    c.limits = RunLimits {
        max_node_in_flight_bytes: 8 << 20,
        ..RunLimits::default()
    };
    let e = run_with(c, vec![Sender::every(10 * MS, 1 << 20), Sender::default()])
        .expect_err("8 MiB pass in 80 ms");
    assert_eq!(e.limit, Limit::NodeInFlight);
    assert_eq!(e.node, Some(NodeId(0)));
    assert_eq!(
        e.at_ns,
        80 * MS,
        "the eighth MiB, with the engine's slots, passes 8 MiB"
    );
    let text = e.to_string();
    assert!(
        text.contains("outgrew its limit of 8 MiB of messages in flight from one process"),
        "{text}"
    );
    let reached = crate::limits::group_thousands(e.reached);
    assert!(
        text.contains(&format!("(reached {reached} bytes)")),
        "{text}"
    );
    assert!(
        text.contains("n0 has 8.0 MiB of messages in flight"),
        "{text}"
    );
    assert!(
        text.contains("the last: a message of type `blob`, 1.0 MiB, to n1"),
        "{text}"
    );
}

#[test]
fn durable_writes_are_charged_until_a_later_write_replaces_them() {
    // A disk that takes 50 ms per write, a 100 KiB write every millisecond: the writes
    // under way pile up (nothing is sent: no peer).
    let mut c = config(1, 10 * S);
    c.disk.fsync = Some(Latency::Constant(50 * MS));
    c.limits = RunLimits {
        max_memory_bytes: 1 << 20,
        ..RunLimits::default()
    };
    let scribe = Sender {
        every_ns: Some(MS),
        persist_bytes: 100 << 10,
        ..Sender::default()
    };
    let e = run_with(c.clone(), vec![scribe.clone()]).expect_err("1 MiB of writes queue up");
    assert_eq!(e.limit, Limit::Memory);
    assert_eq!(e.node, Some(NodeId(0)));
    assert!(
        e.to_string()
            .contains("what passed it: a durable write of 100.0 KiB by n0"),
        "{e}"
    );
    // On a disk that keeps up, each write replaces the last: one is held at a time.
    c.disk.fsync = None;
    run_with(c, vec![scribe]).expect("one write held at a time");
}

/// A sink that keeps a hundred bytes per event it records.
#[derive(Default)]
struct Hoarder {
    events: u64,
}

impl TraceSink for Hoarder {
    fn record(&mut self, _: &TraceEvent) {
        self.events += 1;
    }
    fn held_bytes(&self) -> u64 {
        self.events * 100
    }
}

#[test]
fn a_trace_kept_in_memory_is_charged_to_the_run() {
    let mut c = config(2, 10 * S);
    c.limits = RunLimits {
        max_memory_bytes: 100_000,
        ..RunLimits::default()
    };
    let mut hoarder = Hoarder::default();
    let e = Sim::new(c, info(2), vec![Sender::every(MS, 10), Sender::default()])
        .with_trace(&mut hoarder)
        .run()
        .map_err(limit_of)
        .expect_err("a thousand events kept");
    assert_eq!(e.limit, Limit::Memory);
    assert!(
        e.to_string()
            .contains("what passed it: the trace kept in memory"),
        "{e}"
    );
    assert!(
        hoarder.events <= 1_001,
        "stopped at once: {}",
        hoarder.events
    );
}

/// Runs `c` to its end, stopping every 7 ms to check the books against a walk over
/// everything the run holds; returns the most the run held.
fn books_balance(c: SimConfig, senders: Vec<Sender>) -> u64 {
    let members = c.members;
    let duration_ns = c.duration_ns;
    let mut sim = Sim::new(c, info(members), senders);
    let mut most = 0;
    let mut at_ns = 0;
    while at_ns < duration_ns {
        at_ns += 7 * MS;
        sim.run_until(StopAt::Time(at_ns))
            .expect("within the limits");
        let (booked, recounted) = (sim.booked_bytes(), sim.recounted_bytes());
        assert_eq!(booked, recounted, "at {at_ns} ns");
        most = most.max(booked.0);
    }
    let _ = sim.finish_here();
    assert_eq!(sim.booked_bytes(), sim.recounted_bytes(), "at the end");
    most
}

#[test]
fn the_books_match_a_walk_over_everything_the_run_holds() {
    let senders = || {
        vec![
            Sender {
                persist_bytes: 40,
                writes: true,
                ..Sender::every(3 * MS, 100)
            },
            Sender::every(5 * MS, 7),
            Sender::every(11 * MS, 3000),
        ]
    };
    let faults = || {
        vec![
            fault(20 * MS, FaultAction::Pause(Target::Node(1), 30 * MS)),
            fault(60 * MS, FaultAction::Stall(Target::Node(0), 25 * MS)),
            // Inside the stall: what its handler asked to send is lost.
            fault(75 * MS, FaultAction::Crash(Target::Node(0))),
            fault(80 * MS, FaultAction::Restart(Target::Node(0))),
            fault(100 * MS, FaultAction::Crash(Target::Node(1))),
            fault(130 * MS, FaultAction::Restart(Target::Node(1))),
            fault(140 * MS, FaultAction::Pause(Target::Node(2), 20 * MS)),
            fault(150 * MS, FaultAction::Crash(Target::Node(2))),
            fault(170 * MS, FaultAction::Restart(Target::Node(2))),
            fault(175 * MS, FaultAction::Crash(Target::Node(0))),
            fault(190 * MS, FaultAction::Restart(Target::Node(0))),
        ]
    };
    // Datagrams: loss, duplicates, a partition, a slow disk and processing time.
    let mut c = config(3, 300 * MS);
    c.network.default.latency = Latency::Uniform(MS, 20 * MS);
    c.network.default.loss_ppm = 100_000;
    c.network.default.duplicate_ppm = 200_000;
    c.disk.fsync = Some(Latency::Uniform(MS, 9 * MS));
    c.processing = Some(Latency::Uniform(0, 2 * MS));
    c.faults = faults();
    c.faults.push(isolate_node_0(200 * MS, 40 * MS));
    assert!(books_balance(c, senders()) > 0);
    // Streams: held back behind a cut, broken by a crash or a long cut.
    let mut c = stream_config(3, 300 * MS, 30 * MS);
    c.network.default.latency = Latency::Uniform(MS, 20 * MS);
    c.network.default.loss_ppm = 100_000;
    c.disk.fsync = Some(Latency::Constant(4 * MS));
    c.disk.batch = true;
    c.faults = faults();
    c.faults.push(isolate_node_0(200 * MS, 40 * MS));
    c.faults.push(isolate_node_0(250 * MS, 10 * MS));
    assert!(books_balance(c, senders()) > 0);
}
