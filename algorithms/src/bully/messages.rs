//! The Bully algorithm's messages and timer kinds, as the engine counts and traces them.

use serde::Serialize;

/// A Bully message. Every message carries an epoch so that a node always knows the highest
/// epoch anyone has announced (the epoch is this simulator's addition: the 1982 algorithm has
/// no term, and without one `election_safety` would have nothing to check).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum BullyMsg {
    /// Garcia-Molina 1982, Coulouris 15.3.1: "I am holding an election", sent to every node
    /// with a higher id.
    Election {
        /// The highest epoch the sender has seen.
        epoch: u64,
    },
    /// The answer to an ELECTION from a lower id: "I am alive and I take over from here".
    Ok {
        /// The highest epoch the sender has seen.
        epoch: u64,
    },
    /// "I am the coordinator of `epoch`": the winner's announcement to every lower id, and a
    /// coordinator's reminder to a node that asked without having heard the announcement.
    Coordinator {
        /// The epoch the sender leads.
        epoch: u64,
    },
    /// The coordinator's periodic "I am alive", to every peer.
    Heartbeat {
        /// The epoch the sender leads.
        epoch: u64,
    },
}

splitbrain_sim::message_kinds! {
    impl Message for BullyMsg {
        kinds {
            Election => "Election",
            Ok => "Ok",
            Coordinator => "Coordinator",
            Heartbeat => "Heartbeat",
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
}

splitbrain_sim::timer_kinds! {
    /// Bully's timer slots, each armed in local time.
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
    pub enum BullyTimer {
        /// The coordinator's heartbeat interval.
        Heartbeat => "heartbeat",
        /// A follower's failure detector: no heartbeat from the coordinator for this long.
        Failure => "failure",
        /// Coulouris' `T`: a candidate's wait for an OK.
        Answer => "answer",
        /// Coulouris' `T'`: the wait for COORDINATOR after an OK.
        Coordinator => "coordinator",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::Message;

    #[test]
    fn every_message_carries_its_epoch_as_its_term() {
        let samples = [
            BullyMsg::Election { epoch: 1 },
            BullyMsg::Ok { epoch: 2 },
            BullyMsg::Coordinator { epoch: 3 },
            BullyMsg::Heartbeat { epoch: 4 },
        ];
        for (expected, msg) in samples.iter().enumerate() {
            assert_eq!(msg.term(), expected as u64 + 1, "{msg:?}");
        }
    }
}
