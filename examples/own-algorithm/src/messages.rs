//! What the members and the lock server say to each other, and their timer slots.

use splitbrain_sim::{LocalNanos, NodeId};

/// A request to the lock server (member -> server) or its answer (server -> member).
///
/// Requests carry the member's monotonic clock at the send (`sent_at`) and answers echo it:
/// the member counts its lease from the send time of the request the server answered, which
/// is no later than when the server handled it, so the member's view ends first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseMsg {
    /// Grant me the lease if nobody holds it.
    Acquire {
        /// The member's clock at the send.
        sent_at: LocalNanos,
        /// The member's campaign number: an answer for an abandoned campaign is released.
        campaign: u64,
    },
    /// The lease is the asker's, with this fencing token.
    Granted {
        /// The fencing token: one more than the last grant's, never reused.
        token: u64,
        /// The request's `sent_at`, echoed.
        sent_at: LocalNanos,
        /// The request's `campaign`, echoed.
        campaign: u64,
    },
    /// Somebody else holds the lease, or the server is waiting out its restart grace.
    Busy {
        /// The holder, if there is one.
        holder: Option<NodeId>,
        /// The last token the server granted.
        token: u64,
    },
    /// Extend my lease `token` by a TTL from now.
    Renew {
        /// The lease to renew.
        token: u64,
        /// The member's clock at the send.
        sent_at: LocalNanos,
    },
    /// The lease was extended.
    Renewed {
        /// The lease renewed.
        token: u64,
        /// The request's `sent_at`, echoed.
        sent_at: LocalNanos,
    },
    /// The lease named is not the sender's any more (expired, released, or the server
    /// restarted).
    Refused {
        /// The lease the request named.
        token: u64,
    },
    /// I give lease `token` up.
    Release {
        /// The lease to give up.
        token: u64,
    },
}

splitbrain_sim::message_kinds! {
    impl Message for LeaseMsg {
        kinds {
            Acquire => "Acquire",
            Granted => "Granted",
            Busy => "Busy",
            Renew => "Renew",
            Renewed => "Renewed",
            Refused => "Refused",
            Release => "Release",
        }

        fn term(&self) -> u64 {
            match *self {
                LeaseMsg::Granted { token, .. }
                | LeaseMsg::Busy { token, .. }
                | LeaseMsg::Renew { token, .. }
                | LeaseMsg::Renewed { token, .. }
                | LeaseMsg::Refused { token }
                | LeaseMsg::Release { token } => token,
                LeaseMsg::Acquire { .. } => 0,
            }
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// Timer slots. Members use all but `Expiry`; the server only `Expiry`.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum LeaseTimer {
        /// A waiter asks for the lease again; a holder renews.
        Renew => "renew",
        /// The member's own end of its lease, on its clock.
        Deadline => "deadline",
        /// The holder's application loop: check the lease, write.
        Work => "work",
        /// The late variants: the write decided `act_delay` ago.
        Act => "act",
        /// The server's lease expiry, on its clock.
        Expiry => "expiry",
    }
}
