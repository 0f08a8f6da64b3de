//! Per-process local clocks: `local = offset + (true - base) * (1 + drift)`, with the drift in
//! parts per million and integer arithmetic.
//!
//! Each process has two ([`NodeClocks`]), as real machines do: a *monotonic* clock
//! (`CLOCK_MONOTONIC`, Go's monotonic reading, Java's `nanoTime`: NTP slews its rate, steps never
//! move it, and it stands still while the machine is suspended) and a *wall* clock (the time of
//! day: the same rate, plus steps, and it counts a suspend). Timers are deadlines on the
//! monotonic clock, so a fast clock fires early in true time and a wall-clock step moves no
//! timer, unless the scenario makes a node time with its wall clock ([`TimerClock::Wall`]).

use crate::time::{LocalNanos, Nanos};
use serde::{Deserialize, Serialize};

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
    /// Frozen (a suspended machine's monotonic clock): reads `offset_ns` until thawed.
    frozen: bool,
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
            frozen: false,
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
        if self.frozen {
            return self.offset_ns;
        }
        let elapsed = true_ns - self.base_ns;
        match self.drift_ppm {
            // The common case, read several times per event: no 128-bit arithmetic.
            0 => self.offset_ns.saturating_add_unsigned(elapsed),
            ppm => {
                let scaled = i128::from(elapsed) * (MILLION + i128::from(ppm)) / MILLION;
                clamp_i64(i128::from(self.offset_ns) + scaled)
            }
        }
    }

    /// The first true time at or after `now_ns` when the clock reads at least `local_ns`
    /// (`Nanos::MAX`, never, while the clock is frozen short of it).
    pub fn true_when(&self, local_ns: LocalNanos, now_ns: Nanos) -> Nanos {
        if self.local_at(now_ns) >= local_ns {
            return now_ns;
        }
        if self.frozen {
            return Nanos::MAX;
        }
        if self.drift_ppm == 0 {
            // `local_ns` is above the reading now, so above `offset_ns`: the difference is a
            // positive number of nanoseconds, and the time past `now_ns`.
            let local_elapsed = local_ns.abs_diff(self.offset_ns);
            return self.base_ns.saturating_add(local_elapsed).max(now_ns);
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

    /// Stops the clock at its reading at `now_ns` (a suspend), until [`LocalClock::thaw`].
    pub fn freeze(&mut self, now_ns: Nanos) {
        self.rebase(now_ns);
        self.frozen = true;
    }

    /// Lets a frozen clock run again from the reading it froze at.
    pub fn thaw(&mut self, now_ns: Nanos) {
        if self.frozen {
            self.base_ns = now_ns;
            self.frozen = false;
            self.find_stop();
        }
    }

    fn rebase(&mut self, now_ns: Nanos) {
        self.offset_ns = self.local_at(now_ns);
        self.base_ns = now_ns;
    }
}

/// Which clock a process's timers and elapsed-time checks read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "timer clock"))]
pub enum TimerClock {
    /// The monotonic clock, as real election code does (Go timers and `time.Since`, Java's
    /// `nanoTime`, `CLOCK_MONOTONIC`): wall-clock steps move no timer.
    #[default]
    Monotonic,
    /// The wall clock: code that times intervals with `time.time()` or
    /// `System.currentTimeMillis()`. A backward step delays every timer, a forward one fires
    /// them early: a known bug class, asked for per node.
    Wall,
}

/// A process's two clocks. Both start at the same reading and run at the same rate; a step
/// moves the wall clock only, a suspend stops the monotonic clock only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeClocks {
    monotonic: LocalClock,
    wall: LocalClock,
    timers: TimerClock,
    /// The wall clock reads what the timer clock does: it times the node's timers, or no
    /// step or suspend has yet set the two apart (they share offset and drift until then).
    wall_is_timer_clock: bool,
}

impl NodeClocks {
    /// Clocks reading `offset_ns` at true time zero and gaining `drift_ppm` per million.
    pub fn new(offset_ns: LocalNanos, drift_ppm: i64, timers: TimerClock) -> Self {
        let clock = LocalClock::new(offset_ns, drift_ppm);
        Self {
            monotonic: clock.clone(),
            wall: clock,
            timers,
            wall_is_timer_clock: true,
        }
    }

    /// The clock that timers and elapsed-time checks read: the monotonic one, or the wall
    /// clock for a node that times with it.
    pub fn timer_clock(&self) -> &LocalClock {
        match self.timers {
            TimerClock::Monotonic => &self.monotonic,
            TimerClock::Wall => &self.wall,
        }
    }

    /// The wall clock (time of day).
    pub fn wall(&self) -> &LocalClock {
        &self.wall
    }

    /// The clock a timer slot runs on: the wall clock for a wall-clock timer, else the
    /// timer clock.
    pub fn slot_clock(&self, wall: bool) -> &LocalClock {
        if wall {
            &self.wall
        } else {
            self.timer_clock()
        }
    }

    /// The reading timers and elapsed-time checks use, at true time `now_ns`.
    pub fn timer_reading(&self, now_ns: Nanos) -> LocalNanos {
        self.timer_clock().local_at(now_ns)
    }

    /// The wall-clock (time of day) reading at true time `now_ns`.
    pub fn wall_reading(&self, now_ns: Nanos) -> LocalNanos {
        self.wall.local_at(now_ns)
    }

    /// Both readings, the timer clock's and the wall clock's, at `now_ns` (every handler call
    /// takes both): one computation while the two clocks agree.
    pub fn readings(&self, now_ns: Nanos) -> (LocalNanos, LocalNanos) {
        let timer = self.timer_reading(now_ns);
        if self.wall_is_timer_clock {
            debug_assert_eq!(timer, self.wall_reading(now_ns));
            return (timer, timer);
        }
        (timer, self.wall_reading(now_ns))
    }

    /// The drift now in force, in parts per million (both clocks share it).
    pub fn drift_ppm(&self) -> i64 {
        self.wall.drift_ppm()
    }

    /// Steps the wall clock by `delta_ns` (the timer clock too, for a node that times with
    /// its wall clock).
    pub fn step_wall(&mut self, now_ns: Nanos, delta_ns: i64) {
        self.wall.jump(now_ns, delta_ns);
        self.wall_is_timer_clock = self.timers == TimerClock::Wall;
    }

    /// Changes the rate of both clocks (NTP slew, a failing oscillator).
    pub fn set_drift(&mut self, now_ns: Nanos, drift_ppm: i64) {
        self.monotonic.set_drift(now_ns, drift_ppm);
        self.wall.set_drift(now_ns, drift_ppm);
    }

    /// The machine is suspended: the monotonic clock stands still until [`Self::resume`]
    /// (`CLOCK_MONOTONIC` excludes suspend); the wall clock runs on, so that at resume it has
    /// counted the suspend, as after an NTP or RTC correction.
    pub fn suspend(&mut self, now_ns: Nanos) {
        self.monotonic.freeze(now_ns);
        self.wall_is_timer_clock = self.timers == TimerClock::Wall;
    }

    /// The machine runs again.
    pub fn resume(&mut self, now_ns: Nanos) {
        self.monotonic.thaw(now_ns);
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

    #[test]
    fn a_frozen_clock_stands_still_and_resumes_from_where_it_stopped() {
        let mut clock = LocalClock::new(0, 0);
        clock.freeze(NANOS_PER_SEC);
        assert_eq!(clock.local_at(5 * NANOS_PER_SEC), NANOS_PER_SEC as i64);
        assert_eq!(
            clock.true_when(2 * NANOS_PER_SEC as i64, 5 * NANOS_PER_SEC),
            Nanos::MAX
        );
        clock.thaw(5 * NANOS_PER_SEC);
        assert_eq!(clock.local_at(6 * NANOS_PER_SEC), 2 * NANOS_PER_SEC as i64);
        assert_eq!(
            clock.true_when(2 * NANOS_PER_SEC as i64, 5 * NANOS_PER_SEC),
            6 * NANOS_PER_SEC
        );
    }

    #[test]
    fn a_wall_step_moves_the_wall_clock_only() {
        let mut clocks = NodeClocks::new(0, 0, TimerClock::Monotonic);
        clocks.step_wall(NANOS_PER_SEC, -(NANOS_PER_SEC as i64));
        assert_eq!(clocks.wall_reading(2 * NANOS_PER_SEC), NANOS_PER_SEC as i64);
        assert_eq!(
            clocks.timer_reading(2 * NANOS_PER_SEC),
            2 * NANOS_PER_SEC as i64
        );
    }

    #[test]
    fn a_node_timing_with_its_wall_clock_sees_the_step() {
        let mut clocks = NodeClocks::new(0, 0, TimerClock::Wall);
        clocks.step_wall(NANOS_PER_SEC, -(NANOS_PER_SEC as i64));
        assert_eq!(
            clocks.timer_reading(2 * NANOS_PER_SEC),
            NANOS_PER_SEC as i64
        );
    }

    #[test]
    fn a_suspend_stops_the_monotonic_clock_and_not_the_wall_clock() {
        let mut clocks = NodeClocks::new(0, 0, TimerClock::Monotonic);
        clocks.suspend(NANOS_PER_SEC);
        clocks.resume(4 * NANOS_PER_SEC);
        assert_eq!(
            clocks.timer_reading(5 * NANOS_PER_SEC),
            2 * NANOS_PER_SEC as i64
        );
        assert_eq!(
            clocks.wall_reading(5 * NANOS_PER_SEC),
            5 * NANOS_PER_SEC as i64
        );
    }

    #[test]
    fn a_drift_change_moves_both_clocks() {
        let mut clocks = NodeClocks::new(0, 0, TimerClock::Monotonic);
        clocks.set_drift(0, 500_000);
        assert_eq!(clocks.timer_reading(NANOS_PER_SEC), 1_500_000_000);
        assert_eq!(clocks.wall_reading(NANOS_PER_SEC), 1_500_000_000);
    }

    /// The readings in 128-bit arithmetic, as the clock computed them before the drift-free
    /// fast path: the fast path must agree everywhere, extremes included.
    fn reference_local_at(offset_ns: i64, base_ns: Nanos, true_ns: Nanos) -> LocalNanos {
        clamp_i64(i128::from(offset_ns) + i128::from(true_ns - base_ns))
    }

    fn reference_true_when(offset_ns: i64, base_ns: Nanos, local_ns: i64, now_ns: Nanos) -> Nanos {
        if reference_local_at(offset_ns, base_ns, now_ns) >= local_ns {
            return now_ns;
        }
        let at = i128::from(base_ns) + i128::from(local_ns) - i128::from(offset_ns);
        at.clamp(i128::from(now_ns), i128::from(u64::MAX)) as Nanos
    }

    proptest::proptest! {
        #[test]
        fn a_drift_free_clock_reads_as_in_128_bit_arithmetic(
            offset_ns in proptest::prop_oneof![
                proptest::prelude::any::<i64>(),
                proptest::prelude::Just(i64::MIN),
                proptest::prelude::Just(i64::MAX),
                -1_000_000i64..1_000_000,
            ],
            jump_at_ns in 0u64..u64::MAX / 4,
            after_ns in proptest::prop_oneof![proptest::prelude::any::<u64>(), 0u64..1_000_000],
            local_ns in proptest::prop_oneof![
                proptest::prelude::any::<i64>(),
                proptest::prelude::Just(i64::MAX),
            ],
        ) {
            // A jump rebases the clock: `base_ns` is then `jump_at_ns`.
            let mut clock = LocalClock::new(0, 0);
            clock.jump(jump_at_ns, 0);
            clock.offset_ns = offset_ns;
            let now_ns = jump_at_ns.saturating_add(after_ns);
            proptest::prop_assert_eq!(
                clock.local_at(now_ns),
                reference_local_at(offset_ns, jump_at_ns, now_ns)
            );
            proptest::prop_assert_eq!(
                clock.true_when(local_ns, now_ns),
                reference_true_when(offset_ns, jump_at_ns, local_ns, now_ns)
            );
        }
    }
}
