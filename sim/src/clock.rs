//! Per-process local clocks: `local = offset + (true - base) * (1 + drift)`, with the drift in
//! parts per million and integer arithmetic. Timers are deadlines on the local clock, so a
//! fast clock fires early in true time and a clock jump moves every pending deadline.

use crate::time::{LocalNanos, Nanos};

const MILLION: i128 = 1_000_000;

/// One process's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalClock {
    /// The local reading at true time `base_ns`.
    offset_ns: LocalNanos,
    base_ns: Nanos,
    drift_ppm: i64,
    /// The first true time at which the clock reads its largest value (it then stands
    /// still); kept so that [`LocalClock::stopped_at`], asked at every timer, costs a
    /// comparison, not a 128-bit division.
    stops_at_ns: Nanos,
}

impl LocalClock {
    /// A clock that reads `offset_ns` at true time zero and gains `drift_ppm` per million.
    pub fn new(offset_ns: LocalNanos, drift_ppm: i64) -> Self {
        assert!(drift_ppm > -1_000_000, "a clock must move forwards");
        let mut clock = Self {
            offset_ns,
            base_ns: 0,
            drift_ppm,
            stops_at_ns: 0,
        };
        clock.find_stop();
        clock
    }

    /// The drift now in force, in parts per million.
    pub fn drift_ppm(&self) -> i64 {
        self.drift_ppm
    }

    /// The local reading at true time `true_ns`.
    pub fn local_at(&self, true_ns: Nanos) -> LocalNanos {
        assert!(true_ns >= self.base_ns, "clocks are read forwards in time");
        let elapsed = i128::from(true_ns - self.base_ns);
        let scaled = elapsed * (MILLION + i128::from(self.drift_ppm)) / MILLION;
        clamp_i64(i128::from(self.offset_ns) + scaled)
    }

    /// The first true time at or after `now_ns` when the clock reads at least `local_ns`.
    pub fn true_when(&self, local_ns: LocalNanos, now_ns: Nanos) -> Nanos {
        if self.local_at(now_ns) >= local_ns {
            return now_ns;
        }
        let rate = MILLION + i128::from(self.drift_ppm);
        let local_elapsed = i128::from(local_ns) - i128::from(self.offset_ns);
        // Ceiling division: the timer must not fire before its local deadline.
        let true_elapsed = (local_elapsed * MILLION + rate - 1) / rate;
        let at = i128::from(self.base_ns) + true_elapsed;
        at.clamp(i128::from(now_ns), i128::from(u64::MAX)) as Nanos
    }

    /// Whether the clock has reached its largest reading (`i64::MAX` ns, about 292 years after
    /// its epoch) at true time `now_ns` and so stands still: no local deadline set from now on
    /// can be reached. (A clock far below zero still moves forwards: its offset is an `i64`.)
    pub fn stopped_at(&self, now_ns: Nanos) -> bool {
        now_ns >= self.stops_at_ns && self.local_at(now_ns) == LocalNanos::MAX
    }

    fn find_stop(&mut self) {
        self.stops_at_ns = self.true_when(LocalNanos::MAX, self.base_ns);
    }

    /// Steps the clock by `delta_ns` at true time `now_ns` (NTP step, VM migration, operator).
    pub fn jump(&mut self, now_ns: Nanos, delta_ns: i64) {
        self.rebase(now_ns);
        self.offset_ns = self.offset_ns.saturating_add(delta_ns);
        self.find_stop();
    }

    /// Changes the drift from true time `now_ns` on; earlier readings stay as they were.
    pub fn set_drift(&mut self, now_ns: Nanos, drift_ppm: i64) {
        assert!(drift_ppm > -1_000_000, "a clock must move forwards");
        self.rebase(now_ns);
        self.drift_ppm = drift_ppm;
        self.find_stop();
    }

    fn rebase(&mut self, now_ns: Nanos) {
        self.offset_ns = self.local_at(now_ns);
        self.base_ns = now_ns;
    }
}

fn clamp_i64(value: i128) -> i64 {
    value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC;

    #[test]
    fn a_perfect_clock_reads_true_time_plus_its_offset() {
        let clock = LocalClock::new(5, 0);
        assert_eq!(clock.local_at(100), 105);
        assert_eq!(clock.true_when(205, 0), 200);
    }

    #[test]
    fn a_fast_clock_fires_local_timers_early_in_true_time() {
        let clock = LocalClock::new(0, 100_000); // 10% fast
        assert_eq!(clock.local_at(NANOS_PER_SEC), 1_100_000_000);
        let fire = clock.true_when(1_100_000_000, 0);
        assert_eq!(fire, NANOS_PER_SEC);
        assert!(clock.local_at(fire) >= 1_100_000_000);
    }

    #[test]
    fn a_slow_clock_never_fires_before_its_local_deadline() {
        let clock = LocalClock::new(0, -333);
        for deadline in [1i64, 7, 999, 1_000_003, 123_456_789] {
            let fire = clock.true_when(deadline, 0);
            assert!(clock.local_at(fire) >= deadline);
            assert!(fire == 0 || clock.local_at(fire - 1) < deadline);
        }
    }

    #[test]
    fn a_jump_moves_the_reading_but_not_the_past() {
        let mut clock = LocalClock::new(0, 0);
        clock.jump(10 * NANOS_PER_SEC, -3 * NANOS_PER_SEC as i64);
        assert_eq!(clock.local_at(10 * NANOS_PER_SEC), 7 * NANOS_PER_SEC as i64);
        assert_eq!(clock.local_at(11 * NANOS_PER_SEC), 8 * NANOS_PER_SEC as i64);
    }

    #[test]
    fn a_drift_change_is_continuous() {
        let mut clock = LocalClock::new(0, 0);
        clock.set_drift(NANOS_PER_SEC, 500_000);
        assert_eq!(clock.local_at(NANOS_PER_SEC), NANOS_PER_SEC as i64);
        assert_eq!(clock.local_at(2 * NANOS_PER_SEC), 2_500_000_000);
    }

    #[test]
    fn a_deadline_already_passed_fires_now() {
        let mut clock = LocalClock::new(0, 0);
        clock.jump(5, 1_000);
        assert_eq!(clock.true_when(500, 5), 5);
    }
}
