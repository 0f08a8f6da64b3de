//! Which seeds a hunt runs: `--seeds N`, `--seed-range A..B`, and the slice `--shard I/N`.
//!
//! Ranges are inclusive internally, so that every `u64` (u64::MAX included, as `run --seed`
//! accepts it) can be a seed, and a range never silently loses its last seed to overflow.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;
use thiserror::Error;

/// Seeds, shard, time budget or jobs that a hunt cannot run with.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PlanError {
    /// `--shard` is not `I/N` with `0 <= I < N`.
    #[error("invalid shard {text:?}\n  hint: write I/N with 0 <= I < N, like 0/4 (Kubernetes: $JOB_COMPLETION_INDEX/N)")]
    InvalidShard {
        /// The text as given.
        text: String,
    },
    /// `--seeds 0`.
    #[error("--seeds 0 runs nothing\n  hint: give at least one seed, like --seeds 1000")]
    NoSeeds,
    /// `--seed-range` is not `A..B` or `A..=B`.
    #[error("invalid seed range {text:?}\n  hint: write A..B (B excluded) or A..=B, like 1..1001 or 1..=1000; seeds are 0 to 18446744073709551615")]
    InvalidRange {
        /// The text as given.
        text: String,
    },
    /// `--seed-range` holds no seed.
    #[error(
        "the seed range {text:?} is empty\n  hint: A..B excludes B: write A..=B to include it"
    )]
    EmptyRange {
        /// The text as given.
        text: String,
    },
    /// Both `--seeds` and `--seed-range`.
    #[error("give either --seeds or --seed-range, not both")]
    SeedsAndRange,
    /// More shards than seeds: this one has none.
    #[error("shard {shard} of seeds {range} has no seeds: there are more shards than seeds\n  hint: use at most {count} shards for {count} seeds", count = range.count())]
    EmptyShard {
        /// The shard.
        shard: Shard,
        /// The whole hunt's seeds.
        range: SeedSpan,
    },
    /// `--time-budget` of zero.
    #[error("--time-budget {text:?} allows no time\n  hint: give a duration longer than zero, like 10m, or leave it out")]
    NoTime {
        /// The text as given.
        text: String,
    },
    /// `--time-budget` is not a duration.
    #[error("--time-budget {text:?}: {error}")]
    TimeBudget {
        /// The text as given.
        text: String,
        /// Why it is not a duration.
        error: splitbrain_scenario::DurationError,
    },
    /// `--jobs` out of range.
    #[error("--jobs {jobs}: must be 1 to {MAX_JOBS}\n  hint: leave it out to use every core")]
    Jobs {
        /// The number asked for.
        jobs: usize,
    },
}

/// The most worker threads `--jobs` may ask for.
pub const MAX_JOBS: usize = 1024;

/// Which seeds a hunt runs, on how many threads, for how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HuntPlan {
    /// The whole hunt's seeds (every shard together).
    pub range: SeedSpan,
    /// The slice this process runs, if the hunt is sharded.
    pub shard: Option<Shard>,
    /// The seeds this process runs.
    pub seeds: SeedSpan,
    /// Start no seed after this long.
    pub time_budget: Option<Duration>,
    /// Worker threads.
    pub threads: usize,
}

impl HuntPlan {
    /// The plan of `--seeds N` (or `--seed-range A..B`; 1000 seeds without either), `--shard
    /// I/N`, `--time-budget D` and `--jobs N` (every one of `cores` without it).
    pub fn new(
        seeds: Option<u64>,
        seed_range: Option<&str>,
        shard: Option<&str>,
        time_budget: Option<&str>,
        jobs: Option<usize>,
        cores: usize,
    ) -> Result<HuntPlan, PlanError> {
        let range = match (seeds, seed_range) {
            (Some(n), None) => first_n(n)?,
            (None, Some(text)) => parse_range(text)?,
            (None, None) => first_n(1000)?,
            (Some(_), Some(_)) => return Err(PlanError::SeedsAndRange),
        };
        let shard = shard.map(Shard::parse).transpose()?;
        let seeds = match shard {
            Some(s) => s
                .slice(&range)
                .ok_or(PlanError::EmptyShard { shard: s, range })?,
            None => range,
        };
        let time_budget = time_budget.map(parse_time_budget).transpose()?;
        let threads = worker_threads(jobs, cores)?;
        Ok(HuntPlan {
            range,
            shard,
            seeds,
            time_budget,
            // A batch runs at most BATCH_SEEDS seeds at once: more threads would only sit idle.
            threads: threads.min(super::BATCH_SEEDS as usize),
        })
    }
}

/// `--time-budget`: a duration longer than zero.
pub fn parse_time_budget(text: &str) -> Result<Duration, PlanError> {
    match splitbrain_scenario::parse_duration(text) {
        Ok(0) => Err(PlanError::NoTime {
            text: text.to_string(),
        }),
        Ok(ns) => Ok(Duration::from_nanos(ns)),
        Err(error) => Err(PlanError::TimeBudget {
            text: text.to_string(),
            error,
        }),
    }
}

/// `--jobs`: worker threads, 1 to [`MAX_JOBS`]; every core (`cores`) when not given.
pub fn worker_threads(jobs: Option<usize>, cores: usize) -> Result<usize, PlanError> {
    let threads = match jobs {
        Some(0) | None => cores,
        Some(n) => n,
    };
    if jobs == Some(0) || threads > MAX_JOBS {
        return Err(PlanError::Jobs {
            jobs: jobs.unwrap_or(threads),
        });
    }
    Ok(threads)
}

/// A non-empty inclusive range of seeds, written `first..=last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "[u64; 2]", into = "[u64; 2]")]
pub struct SeedSpan {
    /// The first seed.
    pub first: u64,
    /// The last seed (included).
    pub last: u64,
}

impl From<[u64; 2]> for SeedSpan {
    fn from([first, last]: [u64; 2]) -> Self {
        Self { first, last }
    }
}

impl From<SeedSpan> for [u64; 2] {
    fn from(span: SeedSpan) -> Self {
        [span.first, span.last]
    }
}

impl fmt::Display for SeedSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}..={}", self.first, self.last)
        }
    }
}

impl SeedSpan {
    /// How many seeds (up to 2^64, hence `u128`).
    pub fn count(&self) -> u128 {
        u128::from(self.last - self.first) + 1
    }

    /// Whether `seed` is in the span.
    pub fn contains(&self, seed: u64) -> bool {
        (self.first..=self.last).contains(&seed)
    }

    /// The seeds both spans hold, if any.
    pub fn intersection(&self, other: &SeedSpan) -> Option<SeedSpan> {
        let first = self.first.max(other.first);
        let last = self.last.min(other.last);
        (first <= last).then_some(SeedSpan { first, last })
    }
}

/// A shard: slice `index` (from 0) of `count` equal, contiguous slices of a seed range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    /// Which slice, from 0.
    pub index: u64,
    /// How many slices.
    pub count: u64,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Parses `I/N` with `0 <= I < N`.
    pub fn parse(text: &str) -> Result<Shard, PlanError> {
        let bad = || PlanError::InvalidShard {
            text: text.to_string(),
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// This shard's slice of `all`, or `None` when it is empty (more shards than seeds).
    pub fn slice(&self, all: &SeedSpan) -> Option<SeedSpan> {
        let len = all.count();
        // Slice k starts at floor(len * k / N): u128 holds len * k for any u64 k.
        let cut = |k: u64| len * u128::from(k) / u128::from(self.count);
        let (start, end) = (cut(self.index), cut(self.index + 1));
        (end > start).then(|| SeedSpan {
            first: all.first + start as u64,
            last: all.first + (end - 1) as u64,
        })
    }
}

/// The seeds of `--seeds N` (1..=N); zero seeds is an error, not an empty success.
pub fn first_n(n: u64) -> Result<SeedSpan, PlanError> {
    if n == 0 {
        return Err(PlanError::NoSeeds);
    }
    Ok(SeedSpan { first: 1, last: n })
}

/// Parses `A..B` (B excluded) or `A..=B`.
pub fn parse_range(text: &str) -> Result<SeedSpan, PlanError> {
    let bad = || PlanError::InvalidRange {
        text: text.to_string(),
    };
    let (a, b, inclusive) = if let Some((a, b)) = text.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = text.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad());
    };
    let first: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    let last = if inclusive { Some(b) } else { b.checked_sub(1) };
    match last {
        Some(last) if last >= first => Ok(SeedSpan { first, last }),
        _ => Err(PlanError::EmptyRange {
            text: text.to_string(),
        }),
    }
}

/// The seed spans of `all` not covered by `covered` (sorted, disjoint, within `all`).
pub fn gaps(all: &SeedSpan, covered: &[SeedSpan]) -> Vec<SeedSpan> {
    let mut gaps = Vec::new();
    let mut next = Some(all.first);
    for span in covered {
        let Some(from) = next else { break };
        if span.first > from {
            gaps.push(SeedSpan {
                first: from,
                last: span.first - 1,
            });
        }
        next = span.last.checked_add(1).filter(|n| *n <= all.last);
    }
    if let Some(from) = next
        && from <= all.last
    {
        gaps.push(SeedSpan {
            first: from,
            last: all.last,
        });
    }
    gaps
}

/// Lists spans for people: the first `most`, then how many more.
pub fn list(spans: &[SeedSpan], most: usize) -> String {
    let shown: Vec<String> = spans.iter().take(most).map(ToString::to_string).collect();
    let more = spans.len().saturating_sub(most);
    if more == 0 {
        shown.join(", ")
    } else {
        format!("{} and {more} more ranges", shown.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(first: u64, last: u64) -> SeedSpan {
        SeedSpan { first, last }
    }

    #[test]
    fn seed_ranges_read_exclusive_and_inclusive_ends() {
        assert_eq!(parse_range("1..1001").unwrap(), span(1, 1000));
        assert_eq!(parse_range("5..=7").unwrap(), span(5, 7));
        assert!(parse_range("7..7").is_err());
        assert!(parse_range("8..=7").is_err());
        assert!(parse_range("a..b").is_err());
    }

    #[test]
    fn a_seed_range_may_end_at_the_largest_seed() {
        let all = parse_range("18446744073709551610..=18446744073709551615").unwrap();
        assert_eq!(all, span(u64::MAX - 5, u64::MAX));
        assert_eq!(all.count(), 6);
        assert_eq!(first_n(u64::MAX).unwrap(), span(1, u64::MAX));
    }

    #[test]
    fn zero_seeds_is_an_error() {
        assert!(first_n(0).is_err());
    }

    #[test]
    fn shards_cover_the_range_exactly_once_in_order() {
        let all = span(1, 1000);
        let mut next = all.first;
        for i in 0..7 {
            let slice = Shard { index: i, count: 7 }.slice(&all).unwrap();
            assert_eq!(slice.first, next);
            next = slice.last + 1;
        }
        assert_eq!(next, all.last + 1);
        assert!(Shard::parse("7/7").is_err());
        assert!(Shard::parse("0/0").is_err());
    }

    #[test]
    fn shards_of_the_whole_seed_space_cover_it() {
        let all = span(0, u64::MAX);
        let a = Shard { index: 0, count: 2 }.slice(&all).unwrap();
        let b = Shard { index: 1, count: 2 }.slice(&all).unwrap();
        assert_eq!((a.first, a.last + 1, b.last), (0, b.first, u64::MAX));
    }

    #[test]
    fn a_shard_with_no_seeds_is_none() {
        let all = span(1, 3);
        let empty = Shard {
            index: 1,
            count: u64::MAX,
        };
        assert_eq!(empty.slice(&all), None);
    }

    #[test]
    fn gaps_are_what_the_covered_spans_leave_out() {
        let all = span(1, 100);
        assert_eq!(gaps(&all, &[all]), vec![]);
        assert_eq!(
            gaps(&all, &[span(1, 10), span(20, 30)]),
            vec![span(11, 19), span(31, 100)]
        );
        assert_eq!(gaps(&all, &[]), vec![all]);
        let top = span(u64::MAX - 1, u64::MAX);
        assert_eq!(gaps(&top, &[top]), vec![]);
    }
}
