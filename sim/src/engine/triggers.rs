//! Faults triggered by events (docs/engine.md, "Faults triggered by events"): a fault with a
//! [`Trigger`] fires once, after the `nth` handler call (from its `at` on) in which a process
//! matching `by` did the event, `delay` after that handler; with no delay, right after it,
//! before any other event.
//!
//! Each handler call's effects are matched while a trigger waits; the occurrences are counted,
//! and the faults they trigger fired, once the event's handlers are done (before the next
//! event, or the next held event at a resume), when the leader they may name is known. A run
//! without triggers pays one test per handler call (does a trigger wait?) and one per event
//! (did a handler match?); nothing is built or matched.

use super::{EventData, Sim};
use crate::fault::{ordinal, Actor, FaultSpec, Trigger, TriggerEvent};
use crate::ids::NodeId;
use crate::process::{Effect, Message, Names, Process, SignalKind};
use crate::report::FaultRecord;
use crate::time::{format_duration, Nanos};
use crate::trace::EventKind;

/// The triggered faults of a run and what they have seen.
#[derive(Default)]
pub(super) struct Triggers {
    /// One per triggered fault, in the scenario's order.
    watches: Vec<Watch>,
    /// How many still wait for their trigger: 0 in a run without triggers.
    pub(super) waiting: usize,
    /// Whether a waiting trigger watches user observations (so that the engine collects them).
    pub(super) observes: bool,
    /// Whether handlers matched a trigger (`hits`) or a fault is due: the one test an event
    /// pays for triggers.
    pub(super) pending: bool,
    /// The matches of the handlers run since the last settling, in order: the watch (by its
    /// place) and the process, its actor not yet judged.
    hits: Vec<(usize, NodeId)>,
    /// Faults whose trigger happened with no delay, in order: they fire before the next event.
    due: Vec<usize>,
}

/// One triggered fault.
struct Watch {
    /// Its index among the run's faults.
    fault: usize,
    trigger: Trigger,
    /// The event as the engine matches it.
    matcher: Matcher,
    not_before_ns: Nanos,
    /// Occurrences counted so far.
    seen: u32,
    /// The process and true time of the occurrence that fired it (or will, after its delay).
    happened: Option<(NodeId, Nanos)>,
    fired: bool,
}

/// A [`TriggerEvent`] resolved against the run's names.
enum Matcher {
    /// A message type by index; `None` for a name the processes do not declare (it never
    /// matches).
    Sent(Option<usize>),
    Signal(SignalKind),
    BecameLeader,
    SteppedDown,
    Observed(String),
}

impl Triggers {
    /// The triggers of `faults`, their message types resolved against `names`.
    pub(super) fn new(faults: &[FaultSpec], names: Names) -> Self {
        let watches: Vec<Watch> = (faults.iter().enumerate())
            .filter_map(|(fault, spec)| {
                let trigger = spec.after.clone()?;
                Some(Watch {
                    fault,
                    matcher: Matcher::of(&trigger.event, names),
                    trigger,
                    not_before_ns: spec.at_ns,
                    seen: 0,
                    happened: None,
                    fired: false,
                })
            })
            .collect();
        let mut triggers = Triggers {
            waiting: watches.len(),
            watches,
            ..Triggers::default()
        };
        triggers.observes = triggers.watch_observations();
        triggers
    }

    fn watch_observations(&self) -> bool {
        (self.watches.iter())
            .any(|w| w.happened.is_none() && matches!(w.matcher, Matcher::Observed(_)))
    }

    /// Whether the run has no triggered fault at all.
    pub(super) fn watches_none(&self) -> bool {
        self.watches.is_empty()
    }

    fn watch_of(&self, fault: usize) -> Option<&Watch> {
        self.watches.iter().find(|w| w.fault == fault)
    }
}

impl Matcher {
    fn of(event: &TriggerEvent, names: Names) -> Self {
        match event {
            TriggerEvent::Sent(kind) => {
                Matcher::Sent(names.messages.iter().position(|name| name == kind))
            }
            TriggerEvent::Signal(kind) => Matcher::Signal(*kind),
            TriggerEvent::BecameLeader => Matcher::BecameLeader,
            TriggerEvent::SteppedDown => Matcher::SteppedDown,
            TriggerEvent::Observed(name) => Matcher::Observed(name.clone()),
        }
    }

    fn matches<M: Message, T, D>(&self, effect: &Effect<M, T, D>) -> bool {
        match (self, effect) {
            (
                Matcher::Sent(Some(kind)),
                Effect::Send { msg, .. } | Effect::SendUnordered { msg, .. },
            ) => msg.kind() == *kind,
            (Matcher::Signal(kind), Effect::Signal(signal)) => signal.kind() == *kind,
            (Matcher::BecameLeader, Effect::BecameLeader { .. }) => true,
            (Matcher::SteppedDown, Effect::SteppedDown) => true,
            _ => false,
        }
    }
}

type NodeEffect<P> = Effect<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;

impl<P: Process> Sim<'_, P> {
    /// Whether a trigger still waits: the one test a handler call pays for triggers.
    #[inline]
    pub(super) fn triggers_wait(&self) -> bool {
        self.triggers.waiting > 0
    }

    /// Notes which waiting triggers `node`'s handler call matched, by its `effects` (before
    /// they are applied) and its user observations; they are counted once the event's
    /// handlers are done ([`Sim::settle_triggers`]).
    #[cold]
    #[inline(never)]
    pub(super) fn match_triggers(&mut self, node: NodeId, effects: &[NodeEffect<P>]) {
        let now = self.now;
        let observed = &self.observed;
        let triggers = &mut self.triggers;
        for (place, watch) in triggers.watches.iter().enumerate() {
            let node_ok = match watch.trigger.by {
                Actor::Node(i) => node == NodeId(i),
                Actor::Any | Actor::Leader | Actor::Follower => true,
            };
            if watch.happened.is_some() || now < watch.not_before_ns || !node_ok {
                continue;
            }
            let hit = match &watch.matcher {
                Matcher::Observed(name) => observed.iter().any(|o| o.name == name.as_str()),
                matcher => effects.iter().any(|e| matcher.matches(e)),
            };
            if hit {
                triggers.hits.push((place, node));
                triggers.pending = true;
            }
        }
        // Collected for the triggers alone: the properties' check would empty it otherwise.
        if !self.observing() {
            self.observed.clear();
        }
    }

    /// Once the event's handlers are done: counts the occurrences they matched (a `Leader`
    /// or `Follower` actor judged now, their claims and step-downs applied), schedules the
    /// faults whose trigger happened after a delay, and fires those due now, in order (and
    /// those their firing triggers in turn), each an event of its own.
    #[cold]
    #[inline(never)]
    pub(super) fn settle_triggers(&mut self) {
        while self.triggers.pending {
            self.triggers.pending = false;
            self.count_hits();
            while !self.triggers.due.is_empty() {
                let fault = self.triggers.due.remove(0);
                self.events += 1;
                self.apply_fault(fault);
                self.watch_during_faults();
            }
        }
    }

    fn count_hits(&mut self) {
        let leader = self.leadership.leader();
        let members = self.config.members;
        let hits = std::mem::take(&mut self.triggers.hits);
        for &(place, node) in &hits {
            let watch = &mut self.triggers.watches[place];
            let actor_ok = match watch.trigger.by {
                Actor::Leader => leader == Some(node),
                Actor::Follower => node.index() < members && leader != Some(node),
                Actor::Any | Actor::Node(_) => true,
            };
            if !actor_ok || watch.happened.is_some() {
                continue;
            }
            watch.seen += 1;
            if watch.seen < watch.trigger.nth {
                continue;
            }
            watch.happened = Some((node, self.now));
            let (fault, delay_ns) = (watch.fault, watch.trigger.delay_ns);
            self.triggers.waiting -= 1;
            match delay_ns {
                0 => self.triggers.due.push(fault),
                d => self.push_event(self.now.saturating_add(d), EventData::Fault(fault)),
            }
        }
        self.triggers.hits = hits;
        self.triggers.hits.clear();
        self.triggers.observes = self.triggers.watch_observations();
        self.collect_observed = self.observing() || self.triggers.observes;
    }

    /// Marks fault `index` fired; for a triggered fault, what triggered it, as its description
    /// ends (`, after n1 sent RequestVoteResp`); empty for a fault fired at its `at`.
    pub(super) fn fired_trigger_note(&mut self, index: usize) -> String {
        let Some(watch) = self.triggers.watches.iter_mut().find(|w| w.fault == index) else {
            return String::new();
        };
        watch.fired = true;
        let Some((node, at_ns)) = watch.happened else {
            return String::new();
        };
        let delay = match watch.trigger.delay_ns {
            0 => String::new(),
            d => format!(" {}", format_duration(d)),
        };
        let nth = match watch.trigger.nth {
            1 => String::new(),
            n => format!(" for the {} time", ordinal(n)),
        };
        let since = match watch.not_before_ns {
            0 => String::new(),
            t => format!(" since {}", format_duration(t)),
        };
        format!(
            ",{delay} after {node} {}{nth}{since} (at {})",
            watch.trigger.event.describe(false),
            format_duration(at_ns)
        )
    }

    /// At the end of the run: each triggered fault that never fired, recorded as skipped and
    /// traced, with why (its trigger never happened, or the run ended within its delay).
    pub(super) fn record_unfired_triggers(&mut self) {
        let unfired: Vec<usize> = (self.triggers.watches.iter())
            .filter(|w| !w.fired)
            .map(|w| w.fault)
            .collect();
        for fault in unfired {
            let description = self.unfired_description(fault);
            self.fault_records.push(FaultRecord {
                at_ns: self.now,
                kind: self.config.faults[fault].action.kind_name().to_string(),
                description: description.clone(),
                nodes: Vec::new(),
                healed_at_ns: None,
                skipped: true,
                safety_violations: 0,
            });
            self.trace_global(EventKind::Fault { description });
        }
    }

    fn unfired_description(&self, fault: usize) -> String {
        let watch = self.triggers.watch_of(fault).expect("a triggered fault");
        let kind = self.config.faults[fault].action.kind_name();
        let since = format_duration(watch.not_before_ns);
        match watch.happened {
            Some((node, at_ns)) => format!(
                "{kind} never fired: its trigger happened at {} ({node}), but the run ended \
                 within its delay of {}",
                format_duration(at_ns),
                format_duration(watch.trigger.delay_ns)
            ),
            None => format!(
                "{kind} never fired: its trigger never happened ({} from {since} on; seen {} \
                 time{}){}",
                watch.trigger.describe(),
                watch.seen,
                if watch.seen == 1 { "" } else { "s" },
                self.unknown_name_note(watch)
            ),
        }
    }

    /// Why a trigger could not match: a message type the processes do not declare.
    fn unknown_name_note(&self, watch: &Watch) -> String {
        match (&watch.matcher, &watch.trigger.event) {
            (Matcher::Sent(None), TriggerEvent::Sent(kind)) => format!(
                "; no process sends `{kind}`: the message types are {}",
                self.names.messages.join(", ")
            ),
            _ => String::new(),
        }
    }
}
