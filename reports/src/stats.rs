//! Summaries of samples of durations: the distributions that `compare` and `sweep` report.

use serde::Serialize;

/// The summary of a sample of durations in nanoseconds.
///
/// Percentiles are *nearest-rank*: with the `n` samples sorted ascending as `x[1] <= ... <=
/// x[n]`, the p-th percentile (0 < p <= 100) is `x[ceil(p * n / 100)]`. It is always one of
/// the samples (never interpolated), so `p50` of `[10, 20]` is `10` and `p99` of fewer than
/// 100 samples is the maximum. The mean is the arithmetic mean rounded to the nearest
/// nanosecond (halves round up), computed without overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Distribution {
    /// How many samples there are (at least one).
    pub count: usize,
    /// The smallest sample.
    pub min_ns: u64,
    /// The median (nearest-rank 50th percentile).
    pub p50_ns: u64,
    /// The nearest-rank 90th percentile.
    pub p90_ns: u64,
    /// The nearest-rank 99th percentile.
    pub p99_ns: u64,
    /// The 99.9th percentile, the tail the Raft thesis reports (section 9.4).
    pub p999_ns: u64,
    /// The largest sample.
    pub max_ns: u64,
    /// The arithmetic mean, rounded to the nearest nanosecond (halves round up).
    pub mean_ns: u64,
    /// The 95% interval of the median ([`quantile_interval`]).
    pub p50_interval: Interval,
    /// The 95% interval of the 90th percentile.
    pub p90_interval: Interval,
    /// The 95% interval of the 99th percentile.
    pub p99_interval: Interval,
}

/// A 95% confidence interval of a percentile, in nanoseconds, from the order statistics of
/// the sample (distribution-free: [`quantile_interval`]). An end the sample cannot bound is
/// `None`: below its smallest value, or above its largest (too few samples for that
/// percentile).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// The lower end, if the sample bounds it.
    pub low_ns: Option<u64>,
    /// The upper end, if the sample bounds it.
    pub high_ns: Option<u64>,
}

/// Two-sided 95%: each tail at most this much.
const TAIL: f64 = 0.025;

/// The 95% confidence interval of the `permille`-th quantile from `sorted` (ascending,
/// non-empty), from its order statistics: with `B` the number of samples at or below the
/// true quantile (binomial, `n` trials, probability `permille / 1000`), the interval is
/// `[x(l), x(u)]` with `l` the largest rank with `P(B < l) <= 2.5%` and `u` the smallest with
/// `P(B < u) >= 97.5%` (exact binomial sums, no normal approximation), so it covers the
/// quantile with at least 95% probability whatever the distribution. An end no rank
/// reaches is `None`.
///
/// ```
/// use splitbrain_reports::stats::quantile_interval;
///
/// let sorted: Vec<u64> = (1..=200).collect();
/// let p50 = quantile_interval(&sorted, 500);
/// assert_eq!((p50.low_ns, p50.high_ns), (Some(86), Some(115)));
/// // 200 samples bound a p99 from below only: its upper end is past the largest.
/// let p99 = quantile_interval(&sorted, 990);
/// assert_eq!(p99.high_ns, None);
/// assert!(p99.low_ns.is_some());
/// ```
pub fn quantile_interval(sorted: &[u64], permille: u32) -> Interval {
    let (low, high) = interval_ranks(sorted.len(), permille);
    Interval {
        low_ns: low.map(|rank| sorted[rank - 1]),
        high_ns: high.map(|rank| sorted[rank - 1]),
    }
}

/// The ranks (from 1) of [`quantile_interval`]'s ends among `n` sorted samples of any kind:
/// `None` for an end the samples cannot bound.
///
/// ```
/// use splitbrain_reports::stats::interval_ranks;
///
/// assert_eq!(interval_ranks(200, 500), (Some(86), Some(115)));
/// assert_eq!(interval_ranks(200, 990).1, None);
/// ```
pub fn interval_ranks(n: usize, permille: u32) -> (Option<usize>, Option<usize>) {
    let q = f64::from(permille) / 1000.0;
    let (mut low, mut high) = (None, None);
    // ln P(B = k), walked up from k = 0; P(B <= k) summed as it goes.
    let mut ln_pmf = n as f64 * (1.0 - q).ln();
    let ln_odds = q.ln() - (1.0 - q).ln();
    let mut cdf = 0.0;
    for k in 0..n {
        cdf += ln_pmf.exp();
        // cdf = P(B <= k) = P(B < k + 1).
        if cdf <= TAIL {
            low = Some(k + 1);
        }
        if cdf >= 1.0 - TAIL {
            high = Some(k + 1);
            break;
        }
        ln_pmf += ((n - k) as f64 / (k + 1) as f64).ln() + ln_odds;
    }
    (low, high)
}

/// The fewest samples whose 95% interval of the `permille`-th quantile has an upper end
/// (`None` past 100,000): what a note suggests when a percentile is not bounded.
///
/// ```
/// use splitbrain_reports::stats::samples_to_bound;
///
/// assert_eq!(samples_to_bound(990), Some(368)); // a p99 needs 368 samples
/// assert_eq!(samples_to_bound(900), Some(36));
/// ```
pub fn samples_to_bound(permille: u32) -> Option<usize> {
    (1..=100_000).find(|&n| interval_ranks(n, permille).1.is_some())
}

impl Distribution {
    /// Summarises `samples_ns` (in any order); `None` when there are none.
    pub fn from_nanos(samples_ns: &[u64]) -> Option<Self> {
        if samples_ns.is_empty() {
            return None;
        }
        let mut sorted = samples_ns.to_vec();
        sorted.sort_unstable();
        let count = sorted.len();
        let sum: u128 = sorted.iter().map(|&x| u128::from(x)).sum();
        let n = count as u128;
        let mean = (sum + n / 2) / n;
        let distribution = Self {
            count,
            min_ns: sorted[0],
            p50_ns: percentile_sorted(&sorted, 50),
            p90_ns: percentile_sorted(&sorted, 90),
            p99_ns: percentile_sorted(&sorted, 99),
            p999_ns: permille_sorted(&sorted, 999),
            max_ns: sorted[count - 1],
            mean_ns: u64::try_from(mean).expect("the mean of u64 values fits in u64"),
            p50_interval: quantile_interval(&sorted, 500),
            p90_interval: quantile_interval(&sorted, 900),
            p99_interval: quantile_interval(&sorted, 990),
        };
        assert!(distribution.min_ns <= distribution.p50_ns);
        assert!(distribution.p99_ns <= distribution.max_ns);
        Some(distribution)
    }
}

/// The 95% Wilson score interval of `hits` out of `trials` (z = 1.96): the interval
/// statisticians recommend for a proportion, sensible at 0 and at `trials`.
///
/// ```
/// use splitbrain_reports::stats::wilson_interval;
///
/// let (low, high) = wilson_interval(0, 10);
/// assert_eq!(low, 0.0);
/// assert!((high - 0.2775).abs() < 1e-4); // Newcombe (1998), table I
/// ```
pub fn wilson_interval(hits: u64, trials: u64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let (n, p, z) = (trials as f64, hits as f64 / trials as f64, 1.96_f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The nearest-rank `percent`-th percentile of `sorted` (ascending, non-empty):
/// `sorted[ceil(percent * n / 100) - 1]`, the 100th being the maximum.
pub fn percentile_sorted(sorted: &[u64], percent: u32) -> u64 {
    assert!(
        (1..=100).contains(&percent),
        "percent must be in 1..=100, got {percent}"
    );
    permille_sorted(sorted, percent * 10)
}

/// The nearest-rank quantile of `sorted` (ascending, non-empty) at `permille` thousandths:
/// `sorted[ceil(permille * n / 1000) - 1]`, 1000 being the maximum (999: the 99.9th
/// percentile). Any ordered samples: times in nanoseconds, or a measure's values.
pub fn permille_sorted<T: Copy + PartialOrd>(sorted: &[T], permille: u32) -> T {
    assert!(!sorted.is_empty(), "a percentile of no samples");
    assert!(
        (1..=1000).contains(&permille),
        "permille must be in 1..=1000, got {permille}"
    );
    debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "input not sorted");
    let n = sorted.len() as u128;
    let rank = (u128::from(permille) * n).div_ceil(1000);
    let rank = usize::try_from(rank.max(1)).expect("rank fits in usize");
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook definition, written as differently as possible: the smallest sample such
    /// that at least `permille` thousandths of the samples are at or below it.
    fn oracle_permille(samples: &[u64], permille: u32) -> u64 {
        let n = samples.len() as f64;
        let mut candidates: Vec<u64> = samples.to_vec();
        candidates.sort();
        candidates
            .into_iter()
            .find(|&c| {
                let at_or_below = samples.iter().filter(|&&x| x <= c).count() as f64;
                // Integer comparison in disguise: at_or_below / n >= permille / 1000.
                at_or_below * 1000.0 >= f64::from(permille) * n
            })
            .expect("the maximum always qualifies")
    }

    fn oracle_percentile(samples: &[u64], percent: u32) -> u64 {
        oracle_permille(samples, percent * 10)
    }

    /// A small deterministic generator so the test needs no rand dependency.
    fn samples(seed: u64, len: usize, spread: u64) -> Vec<u64> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % spread
            })
            .collect()
    }

    #[test]
    fn quantile_intervals_cover_the_true_quantile_at_least_95_percent_of_the_time() {
        // Samples uniform on [0, 1e9): the true p-th quantile is p * 1e7. Over 2,000 samples
        // of each size, a 95% interval must miss it at most about 5% of the time (it may
        // miss less: order statistics of a discrete sample are conservative).
        for (len, permille) in [(20usize, 500u32), (100, 900), (400, 990), (1000, 990)] {
            let truth = u64::from(permille) * 1_000_000;
            let mut missed = 0;
            for seed in 0..2_000u64 {
                let mut xs = samples(seed * 7919 + len as u64, len, 1_000_000_000);
                xs.sort_unstable();
                let i = quantile_interval(&xs, permille);
                let above = i.low_ns.is_none_or(|low| low <= truth);
                let below = i.high_ns.is_none_or(|high| truth <= high);
                missed += usize::from(!(above && below));
            }
            assert!(
                missed <= 130,
                "{len} samples, permille {permille}: missed {missed} of 2000"
            );
            assert!(missed >= 20, "{len} samples, permille {permille}: an interval that never misses is too wide ({missed})");
        }
    }

    #[test]
    fn an_interval_holds_its_percentile_and_an_end_too_far_out_is_none() {
        let xs: Vec<u64> = (1..=200).collect();
        let d = Distribution::from_nanos(&xs).unwrap();
        for (value, interval) in [(d.p50_ns, d.p50_interval), (d.p90_ns, d.p90_interval)] {
            assert!(interval.low_ns.unwrap() <= value && value <= interval.high_ns.unwrap());
        }
        assert_eq!(d.p99_interval.high_ns, None);
        assert_eq!(samples_to_bound(990), Some(368));
        let bounded: Vec<u64> = (1..=368).collect();
        assert!(quantile_interval(&bounded, 990).high_ns.is_some());
        let short: Vec<u64> = (1..=367).collect();
        assert!(quantile_interval(&short, 990).high_ns.is_none());
    }

    #[test]
    fn no_samples_have_no_distribution() {
        assert_eq!(Distribution::from_nanos(&[]), None);
    }

    #[test]
    fn one_sample_is_every_statistic() {
        let d = Distribution::from_nanos(&[42]).unwrap();
        assert_eq!(
            d,
            Distribution {
                count: 1,
                min_ns: 42,
                p50_ns: 42,
                p90_ns: 42,
                p99_ns: 42,
                p999_ns: 42,
                max_ns: 42,
                mean_ns: 42,
                p50_interval: Interval {
                    low_ns: None,
                    high_ns: None
                },
                p90_interval: Interval {
                    low_ns: None,
                    high_ns: None
                },
                // One sample is below the p99 with 99% probability: a floor, no ceiling.
                p99_interval: Interval {
                    low_ns: Some(42),
                    high_ns: None
                },
            }
        );
    }

    #[test]
    fn nearest_rank_never_interpolates() {
        let d = Distribution::from_nanos(&[20, 10]).unwrap();
        assert_eq!(d.p50_ns, 10);
        assert_eq!(d.p90_ns, 20);
        assert_eq!(d.mean_ns, 15);
    }

    #[test]
    fn one_to_a_hundred_gives_the_percent_itself() {
        let xs: Vec<u64> = (1..=100).rev().collect();
        let d = Distribution::from_nanos(&xs).unwrap();
        assert_eq!((d.p50_ns, d.p90_ns, d.p99_ns), (50, 90, 99));
        assert_eq!((d.min_ns, d.max_ns, d.count), (1, 100, 100));
    }

    #[test]
    fn the_mean_rounds_half_up_and_does_not_overflow() {
        assert_eq!(Distribution::from_nanos(&[1, 2]).unwrap().mean_ns, 2);
        let big = [u64::MAX, u64::MAX, u64::MAX - 1];
        assert_eq!(Distribution::from_nanos(&big).unwrap().mean_ns, u64::MAX);
    }

    #[test]
    fn percentiles_match_the_naive_oracle_on_many_samples() {
        for seed in 0..200u64 {
            let len = 1 + (seed as usize * 7) % 250;
            let spread = [3, 100, 1_000_000_000][seed as usize % 3];
            let xs = samples(seed, len, spread);
            let mut sorted = xs.clone();
            sorted.sort();
            for percent in [1, 10, 25, 50, 75, 90, 95, 99, 100] {
                assert_eq!(
                    percentile_sorted(&sorted, percent),
                    oracle_percentile(&xs, percent),
                    "seed {seed}, len {len}, p{percent}"
                );
            }
            let d = Distribution::from_nanos(&xs).unwrap();
            assert_eq!(d.p50_ns, oracle_percentile(&xs, 50));
            assert_eq!(d.p90_ns, oracle_percentile(&xs, 90));
            assert_eq!(d.p99_ns, oracle_percentile(&xs, 99));
            assert_eq!(d.min_ns, *xs.iter().min().unwrap());
            assert_eq!(d.max_ns, *xs.iter().max().unwrap());
            let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64;
            assert!((d.mean_ns as f64 - mean).abs() <= 0.5 + mean * 1e-12);
        }
    }

    #[test]
    fn the_99_9th_percentile_matches_the_oracle_where_it_differs_from_the_99th() {
        for (seed, len) in [(1u64, 999usize), (2, 1000), (3, 1001), (4, 2500), (5, 7)] {
            let xs = samples(seed, len, 1_000_000_000);
            let d = Distribution::from_nanos(&xs).unwrap();
            assert_eq!(
                d.p999_ns,
                oracle_permille(&xs, 999),
                "seed {seed}, len {len}"
            );
        }
        let xs: Vec<u64> = (1..=2000).collect();
        let d = Distribution::from_nanos(&xs).unwrap();
        assert_eq!((d.p99_ns, d.p999_ns, d.max_ns), (1980, 1998, 2000));
    }
}
