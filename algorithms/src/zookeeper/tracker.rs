//! ZooKeeper's session tracker (`server/SessionTrackerImpl.java` with its `ExpiryQueue`):
//! each session expires at the first tick multiple after its last touch plus its timeout
//! (`roundToNextInterval`), and expiries are grouped by that bucket. The single server and
//! an ensemble's leader both run one.

use splitbrain_sim::LocalNanos;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
struct Tracked {
    timeout_ns: u64,
    /// The expiry bucket: a multiple of the tick.
    expires_at: LocalNanos,
}

/// The sessions a server expires, each with its timeout and expiry bucket.
#[derive(Clone, Debug)]
pub struct SessionTracker {
    tick_ns: u64,
    sessions: BTreeMap<u64, Tracked>,
    /// How many sessions expire at each time: the earliest, for the expiry timer, without a
    /// scan of every session after every request (10,000 clients made each request cost
    /// 10,000 steps).
    expiries: BTreeMap<LocalNanos, u32>,
}

impl SessionTracker {
    /// A tracker with no session, grouping expiries by `tick_ns`.
    pub fn new(tick_ns: u64) -> Self {
        Self {
            tick_ns: tick_ns.max(1),
            sessions: BTreeMap::new(),
            expiries: BTreeMap::new(),
        }
    }

    /// ZooKeeper's `roundToNextInterval`: the first tick multiple after `time`.
    fn bucket(&self, time: LocalNanos) -> LocalNanos {
        let tick = self.tick_ns as i64;
        // Saturating: a server clock stopped at its largest reading must not overflow.
        time.div_euclid(tick).saturating_add(1).saturating_mul(tick)
    }

    /// Starts tracking `session` with a full timeout from `now` (`trackSession`).
    pub fn track(&mut self, now: LocalNanos, session: u64, timeout_ns: u64) {
        let before = self.sessions.insert(
            session,
            Tracked {
                timeout_ns,
                expires_at: 0,
            },
        );
        if let Some(old) = before {
            forget_expiry(&mut self.expiries, old.expires_at);
        }
        *self.expiries.entry(0).or_default() += 1;
        self.touch(now, session);
    }

    /// Renews `session` from `now` (`touchSession`); false if it is not tracked.
    pub fn touch(&mut self, now: LocalNanos, session: u64) -> bool {
        let Some(timeout) = self.sessions.get(&session).map(|s| s.timeout_ns) else {
            return false;
        };
        let at = self.bucket(now.saturating_add(timeout as i64));
        if let Some(s) = self.sessions.get_mut(&session) {
            let before = std::mem::replace(&mut s.expires_at, at);
            forget_expiry(&mut self.expiries, before);
            *self.expiries.entry(at).or_default() += 1;
        }
        true
    }

    /// Stops tracking `session`; false if it was not tracked.
    pub fn remove(&mut self, session: u64) -> bool {
        let Some(s) = self.sessions.remove(&session) else {
            return false;
        };
        forget_expiry(&mut self.expiries, s.expires_at);
        true
    }

    /// How many sessions are tracked.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is tracked.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Whether `session` is tracked.
    pub fn contains(&self, session: u64) -> bool {
        self.sessions.contains_key(&session)
    }

    /// The sessions whose bucket `now` has reached, in id order.
    pub fn due(&self, now: LocalNanos) -> Vec<u64> {
        // Most calls find nothing due: the index says so without a scan.
        if self.expiries.keys().next().is_none_or(|&at| at > now) {
            return Vec::new();
        }
        self.sessions
            .iter()
            .filter(|(_, s)| s.expires_at <= now)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The earliest expiry bucket, if any session is tracked.
    pub fn next_expiry(&self) -> Option<LocalNanos> {
        debug_assert_eq!(
            self.expiries.keys().next().copied(),
            self.sessions.values().map(|s| s.expires_at).min(),
            "the expiry index agrees with the sessions"
        );
        self.expiries.keys().next().copied()
    }
}

/// Takes one session expiring at `at` out of `expiries`.
fn forget_expiry(expiries: &mut BTreeMap<LocalNanos, u32>, at: LocalNanos) {
    if let Some(count) = expiries.get_mut(&at) {
        *count -= 1;
        if *count == 0 {
            expiries.remove(&at);
        }
    }
}
