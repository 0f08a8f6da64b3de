//! What the network is like: latency, loss and duplication, by default and per link.

use crate::time::Nanos;
use serde::Serialize;

/// A one-way latency distribution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Latency {
    /// Always this long.
    Constant(Nanos),
    /// Uniform in the inclusive range.
    Uniform(Nanos, Nanos),
    /// `min` plus an exponential draw with the given mean (a long tail).
    Exponential {
        /// The mean of the exponential part, added to `min_ns`.
        mean_ns: Nanos,
        /// The shortest latency.
        min_ns: Nanos,
    },
}

impl Latency {
    /// The largest latency the distribution usually produces (the exponential's p99.9).
    pub fn typical_max_ns(&self) -> Nanos {
        match self {
            Latency::Constant(d) => *d,
            Latency::Uniform(_, high) => *high,
            Latency::Exponential { mean_ns, min_ns } => {
                min_ns.saturating_add(mean_ns.saturating_mul(7))
            }
        }
    }
}

/// The behaviour of one directed link, or of all links by default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkConfig {
    /// How long a message takes.
    pub latency: Latency,
    /// Probability that a message is lost, in parts per million.
    pub loss_ppm: u32,
    /// Probability that a delivered message arrives twice, in parts per million.
    pub duplicate_ppm: u32,
}

/// An override for the directed link `from -> to` (member indices).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkOverride {
    /// The sending member.
    pub from: u32,
    /// The receiving member.
    pub to: u32,
    /// The link's behaviour in that direction, in place of the default.
    pub link: LinkConfig,
}

/// The whole network's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NetworkConfig {
    /// Every link without an override.
    pub default: LinkConfig,
    /// Directed links that behave differently (a later override of one link wins).
    pub overrides: Vec<LinkOverride>,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            default: LinkConfig {
                latency: Latency::Uniform(1_000_000, 10_000_000),
                loss_ppm: 0,
                duplicate_ppm: 0,
            },
            overrides: Vec::new(),
        }
    }
}
