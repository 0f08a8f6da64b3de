//! The fenced resource (the sink the leader writes to). It records every write's verdict
//! and, with fencing on, rejects a token lower than the highest it has accepted.

use crate::time::Nanos;

/// What the resource did with one write.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WriteVerdict {
    /// Accepted: fencing is off, or the token is at least the highest accepted.
    Accepted,
    /// Rejected by fencing: the token was lower than `highest`.
    RejectedStale {
        /// The highest token accepted so far.
        highest: u64,
    },
}

/// The resource's state.
#[derive(Debug)]
pub struct Resource {
    fencing: bool,
    highest_token: Option<u64>,
    pub(crate) accepted: u64,
    pub(crate) rejected_stale: u64,
    /// Writes accepted with a token below the highest accepted (fencing off).
    pub(crate) accepted_stale: u64,
    pub(crate) last_accepted_ns: Option<Nanos>,
}

impl Resource {
    pub(crate) fn new(fencing: bool) -> Self {
        Self {
            fencing,
            highest_token: None,
            accepted: 0,
            rejected_stale: 0,
            accepted_stale: 0,
            last_accepted_ns: None,
        }
    }

    /// The highest token accepted so far.
    pub fn highest_token(&self) -> Option<u64> {
        self.highest_token
    }

    /// Handles a write carrying `token` at true time `now`.
    pub fn write(&mut self, now: Nanos, token: u64) -> WriteVerdict {
        if let Some(highest) = self.highest_token.filter(|&h| token < h) {
            if self.fencing {
                self.rejected_stale += 1;
                return WriteVerdict::RejectedStale { highest };
            }
            self.accepted_stale += 1;
        }
        self.highest_token = Some(self.highest_token.map_or(token, |h| h.max(token)));
        self.accepted += 1;
        self.last_accepted_ns = Some(now);
        WriteVerdict::Accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fencing_rejects_a_lower_token_and_accepts_an_equal_one() {
        let mut resource = Resource::new(true);
        assert_eq!(resource.write(1, 5), WriteVerdict::Accepted);
        assert_eq!(
            resource.write(2, 4),
            WriteVerdict::RejectedStale { highest: 5 }
        );
        assert_eq!(resource.write(3, 5), WriteVerdict::Accepted);
        assert_eq!((resource.accepted, resource.rejected_stale), (2, 1));
    }

    #[test]
    fn without_fencing_every_write_is_accepted() {
        let mut resource = Resource::new(false);
        resource.write(1, 5);
        assert_eq!(resource.write(2, 1), WriteVerdict::Accepted);
        assert_eq!(resource.write(3, 5), WriteVerdict::Accepted);
        assert_eq!((resource.accepted, resource.accepted_stale), (3, 1));
    }
}
