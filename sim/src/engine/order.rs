//! The order of events due at one instant, as a choice point ([`crate::choice`]): only with
//! a chooser ([`Sim::with_chooser`]); without one the run never comes here.
//!
//! Events for different processes commute, so only events that touch one process (or that
//! touch every process: a fault, a heal) are ordered: the first event in queue order that
//! conflicts with another, and those it conflicts with, are the options. One that conflicts
//! with none goes first without a choice; the next instant's take sees the rest.

use super::{EventData, Sim};
use crate::choice::{ChoiceKind, ChoicePoint};
use crate::ids::NodeId;
use crate::process::Process;
use crate::queue::Entry;
use crate::Chooser;

impl<P: Process> Sim<'_, P> {
    /// The event to handle of those due at `first`'s instant (`first` was taken first): the
    /// chooser's pick among conflicting ones; the rest go back in their places.
    pub(super) fn choose_order(&mut self, first: Entry) -> Entry {
        if self.queue.peek_time() != Some(first.time) {
            return first;
        }
        let mut tied = vec![first];
        while self.queue.peek_time() == Some(first.time) {
            tied.push(self.queue.take_min().expect("an event was peeked"));
        }
        let touches: Vec<Option<NodeId>> = tied.iter().map(|e| self.touches(e)).collect();
        let conflict = |a: Option<NodeId>, b: Option<NodeId>| a.is_none() || b.is_none() || a == b;
        let options: Vec<usize> = (0..tied.len())
            .filter(|&i| i == 0 || conflict(touches[0], touches[i]))
            .collect();
        let point = ChoicePoint {
            kind: ChoiceKind::Order,
            at_ns: first.time,
            node: touches[0].unwrap_or(NodeId(0)),
            options: options.len() as u32,
            default: 0,
        };
        let pick = match self.chooser.as_mut() {
            _ if options.len() < 2 => 0,
            Some(chooser) => chooser.choose(&point),
            None => self.prescribed.choose(&point),
        };
        let chosen = tied.remove(options[(pick as usize).min(options.len() - 1)]);
        for entry in tied {
            self.queue.requeue(entry);
        }
        chosen
    }

    /// The process an event acts on, or `None` for one that acts on the run as a whole.
    fn touches(&self, entry: &Entry) -> Option<NodeId> {
        let slots = self.timer_slots;
        if entry.handle < slots {
            return Some(NodeId::from(entry.handle as usize / self.slots_per_node));
        }
        match self
            .slab
            .items
            .get((entry.handle - slots) as usize)?
            .as_ref()?
        {
            EventData::Deliver { to, .. } | EventData::Retransmit { to, .. } => Some(*to),
            EventData::Disconnected { node, .. }
            | EventData::Resume { node, .. }
            | EventData::ClockCaughtUp { node }
            | EventData::Release { node, .. } => Some(*node),
            _ => None,
        }
    }
}
