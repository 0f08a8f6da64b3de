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

/// How messages between two processes travel (docs/engine.md, "Transports").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Transport {
    /// Each message on its own: a lost or cut one is gone, nobody is told, order is not kept.
    /// What peer protocols over UDP-like links (and most papers' models) assume.
    Datagram,
    /// A TCP-like connection per pair of processes, opened at the first send.
    Stream(StreamConfig),
}

/// A `Stream` connection's timings. The defaults are Linux's and etcdctl's; see the
/// constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StreamConfig {
    /// The first retransmission comes this long after a lost send; each further one waits
    /// twice as long as the one before.
    pub min_rto_ns: Nanos,
    /// The longest wait between two retransmissions.
    pub max_rto_ns: Nanos,
    /// A connection breaks when the peers have been cut apart this long, or when a message
    /// has waited this long for its retransmission to get through.
    pub timeout_ns: Nanos,
}

/// Linux's smallest retransmission timeout (`TCP_RTO_MIN`, include/net/tcp.h: HZ / 5).
pub const LINUX_RTO_MIN_NS: Nanos = 200_000_000;
/// Linux's largest retransmission timeout (`TCP_RTO_MAX`, include/net/tcp.h: 120 * HZ).
pub const LINUX_RTO_MAX_NS: Nanos = 120_000_000_000;
/// How long a silent peer keeps a connection up: gRPC keep-alive as etcdctl sets it
/// (etcdctl/ctlv3/ctl.go: `--keepalive-time` 2 s, then `--keepalive-timeout` 6 s for the
/// ping's answer). Services whose clients time out on their own (ZooKeeper's read timeout,
/// client-go's renew deadline) close the connection themselves before this.
pub const DEFAULT_STREAM_TIMEOUT_NS: Nanos = 8_000_000_000;

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            min_rto_ns: LINUX_RTO_MIN_NS,
            max_rto_ns: LINUX_RTO_MAX_NS,
            timeout_ns: DEFAULT_STREAM_TIMEOUT_NS,
        }
    }
}

impl StreamConfig {
    /// The wait before retransmission number `attempt` (0 for the first): the minimum
    /// doubled per earlier attempt, at most the maximum (RFC 6298 section 5.5).
    pub fn rto_ns(&self, attempt: u32) -> Nanos {
        let mut rto_ns = self.min_rto_ns.max(1);
        for _ in 0..attempt {
            if rto_ns >= self.max_rto_ns {
                break;
            }
            rto_ns = rto_ns.saturating_mul(2);
        }
        rto_ns.min(self.max_rto_ns.max(1))
    }
}

/// The whole network's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NetworkConfig {
    /// Every link without an override.
    pub default: LinkConfig,
    /// Directed links that behave differently (a later override of one link wins).
    pub overrides: Vec<LinkOverride>,
    /// How messages between members (and services) travel; writes to the resource always
    /// travel as datagrams.
    pub transport: Transport,
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
            transport: Transport::Datagram,
        }
    }
}
