//! The time axis of the sequence diagram: true time to pixels, quiet stretches cut short.

use splitbrain_sim::Nanos;

/// A quiet stretch never takes more than this many pixels; a longer one is shown as a break.
const MAX_GAP_PX: f64 = 48.0;
/// The most the time axis zooms in: 6 px per millisecond. Few messages spread out no more.
const MAX_PX_PER_NS: f64 = 6e-6;

/// True time to pixels: linear (one scale for the whole window) except that quiet stretches
/// are capped at [`MAX_GAP_PX`], so bursts of messages get the room and long silences do not.
pub(super) struct TimeAxis {
    /// `(time, y)` at every time something is drawn, increasing in both.
    pub knots: Vec<(Nanos, f64)>,
    /// Compressed quiet stretches: `(from, to)` times.
    pub breaks: Vec<(Nanos, Nanos)>,
    top: f64,
}

impl TimeAxis {
    /// Lays out `times` (any order, duplicates allowed) between `top` and `bottom` pixels.
    pub fn new(mut times: Vec<Nanos>, top: f64, bottom: f64) -> Self {
        times.sort_unstable();
        times.dedup();
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let height = bottom - top;
        let total_ns: f64 = gaps.iter().sum();
        let fill = |scale: f64| -> f64 { gaps.iter().map(|g| (g * scale).min(MAX_GAP_PX)).sum() };
        // The scale at which the capped gaps fill the height, zooming in at most to
        // MAX_PX_PER_NS (bisection: `fill` grows with the scale); then stretch to fill.
        let (mut lo, mut hi) = (height / total_ns.max(1.0), MAX_PX_PER_NS);
        if fill(hi) <= height {
            lo = hi;
        }
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if fill(mid) < height {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let scale = hi;
        let used = fill(scale);
        let stretch = if used > 0.0 && used < height {
            height / used
        } else {
            1.0
        };
        let mut knots = Vec::with_capacity(times.len());
        let mut breaks = Vec::new();
        let mut y = top;
        for (i, &t) in times.iter().enumerate() {
            if i > 0 {
                let natural = gaps[i - 1] * scale;
                if natural > MAX_GAP_PX * 2.0 {
                    breaks.push((times[i - 1], t));
                }
                y += natural.min(MAX_GAP_PX) * stretch;
            }
            knots.push((t, y));
        }
        Self { knots, breaks, top }
    }

    /// The pixel row of `t`, interpolated between the times laid out.
    pub fn y(&self, t: Nanos) -> i32 {
        let i = self.knots.partition_point(|&(k, _)| k < t);
        let y = match (i.checked_sub(1).map(|j| self.knots[j]), self.knots.get(i)) {
            (_, Some(&(k, y))) if k == t => y,
            (Some((t0, y0)), Some(&(t1, y1))) => {
                y0 + (y1 - y0) * (t - t0) as f64 / (t1 - t0) as f64
            }
            (Some((_, y0)), None) => y0,
            (None, Some(&(_, y1))) => y1,
            (None, None) => self.top,
        };
        y.round() as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn later_times_are_always_lower_on_the_page() {
        let times = vec![0, 5 * MS, 5 * MS, 6 * MS, 400 * MS, 401 * MS, 900 * MS];
        let axis = TimeAxis::new(times.clone(), 100.0, 1000.0);
        let ys: Vec<i32> = times.iter().map(|&t| axis.y(t)).collect();
        assert!(ys.windows(2).all(|w| w[0] <= w[1]), "{ys:?}");
        assert_eq!(axis.y(0), 100);
        assert_eq!(axis.y(900 * MS), 1000);
    }

    #[test]
    fn a_long_silence_is_cut_short_and_reported_as_a_break() {
        let axis = TimeAxis::new(vec![0, 10 * MS, 20 * MS, 900 * MS, 910 * MS], 0.0, 900.0);
        assert_eq!(axis.breaks, vec![(20 * MS, 900 * MS)]);
        let silence = axis.y(900 * MS) - axis.y(20 * MS);
        let burst = axis.y(10 * MS) - axis.y(0);
        assert!(silence < 4 * burst, "silence {silence}px, burst {burst}px");
    }

    #[test]
    fn evenly_spread_times_stay_linear() {
        let times: Vec<u64> = (0..=10).map(|i| i * 10 * MS).collect();
        let axis = TimeAxis::new(times, 0.0, 1000.0);
        assert!(axis.breaks.is_empty());
        assert_eq!(axis.y(50 * MS), 500);
        assert_eq!(axis.y(55 * MS), 550, "interpolated between laid-out times");
    }

    #[test]
    fn one_time_or_none_does_not_divide_by_zero() {
        assert_eq!(TimeAxis::new(vec![], 10.0, 100.0).y(5), 10);
        assert_eq!(TimeAxis::new(vec![7, 7], 10.0, 100.0).y(7), 10);
    }
}
