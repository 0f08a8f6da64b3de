//! splitbrain-sim: a single-threaded discrete-event engine with virtual per-node clocks,
//! a faulty network, crash/restart, pauses and stalls, a fenced resource, and a checker
//! that observes typed events at every step. It knows no algorithm.

#![warn(missing_docs)]

pub mod choice;
pub mod clock;
pub mod config;
pub mod disk;
pub mod downtime;
pub mod duration;
pub mod fault;
pub mod ids;
pub mod invariant;
mod kinds;
pub mod limits;
pub mod nested;
pub mod network_config;
pub mod process;
pub mod property;
pub mod refused;
pub mod rng;
pub mod storm;
pub mod time;

pub use choice::{ChoiceKind, ChoicePoint, Chooser};
pub use clock::TimerClock;
pub use config::{AlgorithmInfo, ClockConfig, FixedClock, NodeClock, SignalSupport, SimConfig};
pub use disk::{DiskConfig, NodeDisk};
pub use fault::{
    Actor, FaultAction, FaultSpec, FaultSpread, MemberChange, PartitionShape, Target, Trigger,
    TriggerEvent,
};
pub use ids::NodeId;
pub use invariant::Invariant;
pub use limits::{Limit, LimitExceeded, RunLimits};
pub use network_config::{
    Latency, LinkConfig, LinkOverride, NetworkConfig, StreamConfig, Transport,
};
pub use process::{
    Ctx, DurableState, Effect, Message, Names, Process, Signal, SignalKind, TimerKind,
};
pub use property::{
    always, Breach, Curve, Measured, Observation, Properties, Property, PropertyFactory,
    UserObservation, Value, WriteOutcome,
};
pub use refused::{take_handler_panic, HandlerEvent, Handling, Refusal, RefusedEffect, RunError};
pub use rng::{SimRng, StreamId, PPM};
pub use time::{format_duration, LocalNanos, Nanos, NANOS_PER_MILLI, NANOS_PER_SEC};

pub mod checker;
pub(crate) mod connections;
pub mod engine;
pub mod failover;
pub mod leadership;
pub mod lease_windows;
pub mod liveness;
pub mod nemesis;
pub mod network;
pub mod queue;
pub mod report;
pub mod resource;
pub mod trace;

pub use checker::Violation;
pub use engine::Sim;
pub use report::{FailoverOutcome, LivenessVerdict, RunReport};
pub use trace::{
    Broken, EventKind, JsonLinesWriter, Milestone, Tee, TraceEvent, TraceHasher, TraceSink,
};
