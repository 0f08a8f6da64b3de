//! The Bully algorithm's messages and timer kinds, as the engine counts and traces them.

use serde::Serialize;
use splitbrain_sim::{Message, TimerKind};

/// A Bully message. Every message carries an epoch so that a node always knows the highest
/// epoch anyone has announced (the epoch is this simulator's addition: the 1982 algorithm has
/// no term, and without one `election_safety` would have nothing to check).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum BullyMsg {
    /// Garcia-Molina 1982, Coulouris 15.3.1: "I am holding an election", sent to every node
    /// with a higher id. `epoch` is the highest epoch the sender has seen.
    Election { epoch: u64 },
    /// The answer to an ELECTION from a lower id: "I am alive and I take over from here".
    /// `epoch` is the highest epoch the sender has seen.
    Ok { epoch: u64 },
    /// "I am the coordinator of `epoch`": the winner's announcement to every lower id, and a
    /// coordinator's reminder to a node that asked without having heard the announcement.
    Coordinator { epoch: u64 },
    /// The coordinator's periodic "I am alive", to every peer; `epoch` is the epoch it leads.
    Heartbeat { epoch: u64 },
}

impl Message for BullyMsg {
    const KINDS: &'static [&'static str] = &["Election", "Ok", "Coordinator", "Heartbeat"];

    fn kind(&self) -> usize {
        match self {
            BullyMsg::Election { .. } => 0,
            BullyMsg::Ok { .. } => 1,
            BullyMsg::Coordinator { .. } => 2,
            BullyMsg::Heartbeat { .. } => 3,
        }
    }

    fn term(&self) -> u64 {
        match *self {
            BullyMsg::Election { epoch }
            | BullyMsg::Ok { epoch }
            | BullyMsg::Coordinator { epoch }
            | BullyMsg::Heartbeat { epoch } => epoch,
        }
    }
}

/// Bully's timer slots, each armed in local time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum BullyTimer {
    /// The coordinator's heartbeat interval.
    Heartbeat,
    /// A follower's failure detector: no heartbeat from the coordinator for this long.
    Failure,
    /// Coulouris' `T`: a candidate's wait for an OK.
    Answer,
    /// Coulouris' `T'`: the wait for COORDINATOR after an OK.
    Coordinator,
}

impl TimerKind for BullyTimer {
    const NAMES: &'static [&'static str] = &["heartbeat", "failure", "answer", "coordinator"];

    fn index(self) -> usize {
        match self {
            BullyTimer::Heartbeat => 0,
            BullyTimer::Failure => 1,
            BullyTimer::Answer => 2,
            BullyTimer::Coordinator => 3,
        }
    }

    fn from_index(index: usize) -> Self {
        match index {
            0 => BullyTimer::Heartbeat,
            1 => BullyTimer::Failure,
            2 => BullyTimer::Answer,
            3 => BullyTimer::Coordinator,
            _ => panic!("bully has no timer kind {index}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_kind_indexes_its_own_name_and_carries_its_epoch() {
        let samples = [
            BullyMsg::Election { epoch: 1 },
            BullyMsg::Ok { epoch: 2 },
            BullyMsg::Coordinator { epoch: 3 },
            BullyMsg::Heartbeat { epoch: 4 },
        ];
        for (expected, msg) in samples.iter().enumerate() {
            assert_eq!(msg.kind(), expected);
            assert_eq!(msg.term(), expected as u64 + 1);
            let name = BullyMsg::KINDS[msg.kind()];
            assert!(format!("{msg:?}").starts_with(name), "{name} vs {msg:?}");
        }
    }

    #[test]
    fn timer_kinds_round_trip_through_their_index() {
        for (index, name) in BullyTimer::NAMES.iter().enumerate() {
            let timer = BullyTimer::from_index(index);
            assert_eq!(timer.index(), index);
            assert_eq!(format!("{timer:?}").to_lowercase(), *name);
        }
    }
}
