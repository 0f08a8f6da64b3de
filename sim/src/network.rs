//! The simulated network at run time: per-link behaviour and the active partitions.
//!
//! Partitions are kept as a short list of active cuts, each evaluated per send in O(1), so a
//! healthy network costs nothing and a 1,000-node cluster needs no n x n matrix. The resource
//! (and any process outside the cut's labels) is never cut.

use crate::ids::NodeId;
use crate::network_config::{Latency, LinkConfig, NetworkConfig};
use crate::rng::SimRng;
use crate::time::Nanos;
use std::collections::BTreeMap;

/// A label meaning "not part of this cut": talks to everyone.
pub const UNCUT: u32 = u32::MAX;

/// One active partition, resolved to concrete nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cut {
    /// A group label per process; two processes with different labels (neither `UNCUT`)
    /// cannot talk.
    Groups(Vec<u32>),
    /// Messages from a process in `from` to a process in `to` are lost.
    OneWay {
        /// Per process: whether its messages are cut.
        from: Vec<bool>,
        /// Per process: whether messages to it are cut.
        to: Vec<bool>,
    },
    /// The link between two processes is cut both ways.
    Link(NodeId, NodeId),
}

impl Cut {
    /// Whether this cut drops a message from `from` to `to`.
    #[inline]
    pub fn blocks(&self, from: NodeId, to: NodeId) -> bool {
        let (f, t) = (from.index(), to.index());
        match self {
            Cut::Groups(label) => {
                let (a, b) = (
                    label.get(f).copied().unwrap_or(UNCUT),
                    label.get(t).copied().unwrap_or(UNCUT),
                );
                a != UNCUT && b != UNCUT && a != b
            }
            Cut::OneWay { from: src, to: dst } => {
                src.get(f).copied().unwrap_or(false) && dst.get(t).copied().unwrap_or(false)
            }
            Cut::Link(a, b) => (from == *a && to == *b) || (from == *b && to == *a),
        }
    }
}

impl Cut {
    /// The same cut with every node renamed by `names` ([`NodeId::renamed`]), in a form
    /// that says only what it blocks: groups labelled in the order they first appear, a
    /// link's ends in id order.
    fn renamed(&self, names: &[NodeId]) -> Cut {
        match self {
            Cut::Groups(labels) => {
                let mut first_seen: Vec<u32> = Vec::new();
                let relabelled = crate::ids::renamed_vec(labels, names)
                    .into_iter()
                    .map(|label| match label {
                        UNCUT => UNCUT,
                        label => match first_seen.iter().position(|l| *l == label) {
                            Some(at) => at as u32,
                            None => {
                                first_seen.push(label);
                                first_seen.len() as u32 - 1
                            }
                        },
                    })
                    .collect();
                Cut::Groups(relabelled)
            }
            Cut::OneWay { from, to } => Cut::OneWay {
                from: crate::ids::renamed_vec(from, names),
                to: crate::ids::renamed_vec(to, names),
            },
            Cut::Link(a, b) => {
                let (a, b) = (a.renamed(names), b.renamed(names));
                Cut::Link(a.min(b), a.max(b))
            }
        }
    }
}

/// What happened to a message handed to the network.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Transit {
    /// Arrives after the latency; `duplicate_after` is the second copy's latency, if any.
    Deliver {
        /// True time from the send to the arrival.
        latency_ns: Nanos,
        /// True time from the send to the duplicate's arrival, if the link duplicated it.
        duplicate_after_ns: Option<Nanos>,
    },
    /// Dropped at the send: an active cut separates sender and receiver.
    LostToPartition,
    /// Dropped by the link's random loss.
    LostToLoss,
}

/// Live network state.
#[derive(Debug)]
pub struct Network {
    config: NetworkConfig,
    /// The default link, with loss and duplication as changed by faults.
    current: LinkConfig,
    overrides: BTreeMap<(u32, u32), LinkConfig>,
    /// Active cuts, keyed by the id of the fault that made them.
    cuts: Vec<(usize, Cut)>,
    rng: SimRng,
}

impl Network {
    pub(crate) fn new(config: NetworkConfig, rng: SimRng) -> Self {
        let overrides = config
            .overrides
            .iter()
            .map(|o| ((o.from, o.to), o.link.clone()))
            .collect();
        Self {
            current: config.default.clone(),
            config,
            overrides,
            cuts: Vec::new(),
            rng,
        }
    }

    /// Feeds what decides the fate of messages from now on to a state digest: the links as
    /// faults changed them, the cuts in force (with every node renamed by `names`, see
    /// [`NodeId::renamed`]; empty: as they are) and the position of the random stream.
    pub(crate) fn digest(&self, names: &[NodeId], h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        format!("{:?} {:?}", self.current, self.overrides).hash(h);
        let cuts: Vec<String> = self
            .cuts
            .iter()
            .map(|(_, cut)| format!("{:?}", cut.renamed(names)))
            .collect();
        cuts.hash(h);
        self.rng.position().hash(h);
    }

    /// Decides the fate of one message from `from` to `to`.
    pub fn transmit(&mut self, from: NodeId, to: NodeId) -> Transit {
        if self.is_cut(from, to) {
            return Transit::LostToPartition;
        }
        let link = if self.overrides.is_empty() {
            &self.current
        } else {
            self.overrides.get(&(from.0, to.0)).unwrap_or(&self.current)
        };
        let (loss_ppm, duplicate_ppm) = (link.loss_ppm, link.duplicate_ppm);
        let latency = link.latency.clone();
        if self.rng.chance_ppm(loss_ppm) {
            return Transit::LostToLoss;
        }
        let latency_ns = sample(&latency, &mut self.rng);
        let duplicate_after_ns = self
            .rng
            .chance_ppm(duplicate_ppm)
            .then(|| sample(&latency, &mut self.rng));
        Transit::Deliver {
            latency_ns,
            duplicate_after_ns,
        }
    }

    /// Whether an active cut drops messages from `from` to `to` now.
    #[inline]
    pub fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        self.cuts.iter().any(|(_, cut)| cut.blocks(from, to))
    }

    /// Whether `a` and `b` can talk both ways now.
    pub fn connected(&self, a: NodeId, b: NodeId) -> bool {
        !self.is_cut(a, b) && !self.is_cut(b, a)
    }

    /// Adds a cut made by fault `fault_id`.
    pub fn add_cut(&mut self, fault_id: usize, cut: Cut) {
        self.cuts.push((fault_id, cut));
    }

    /// Removes the cuts made by fault `fault_id`.
    pub fn remove_cut(&mut self, fault_id: usize) {
        self.cuts.retain(|(id, _)| *id != fault_id);
    }

    /// Whether any partition is active.
    pub fn is_partitioned(&self) -> bool {
        !self.cuts.is_empty()
    }

    /// Sets the loss rate of every link without an override.
    pub fn set_loss_ppm(&mut self, ppm: u32) {
        self.current.loss_ppm = ppm;
    }

    /// Sets the duplication rate of every link without an override.
    pub fn set_duplicate_ppm(&mut self, ppm: u32) {
        self.current.duplicate_ppm = ppm;
    }

    /// Restores the configured loss rate.
    pub fn restore_loss(&mut self) {
        self.current.loss_ppm = self.config.default.loss_ppm;
    }

    /// Restores the configured duplication rate.
    pub fn restore_duplicate(&mut self) {
        self.current.duplicate_ppm = self.config.default.duplicate_ppm;
    }

    /// Removes every cut and restores loss and duplication (the `Heal` fault).
    pub fn heal_all(&mut self) {
        self.cuts.clear();
        self.current = self.config.default.clone();
    }
}

/// Draws one latency.
pub fn sample(latency: &Latency, rng: &mut SimRng) -> Nanos {
    match *latency {
        Latency::Constant(d) => d,
        Latency::Uniform(low, high) => rng.between(low, high),
        Latency::Exponential { mean_ns, min_ns } => min_ns.saturating_add(rng.exponential(mean_ns)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> Network {
        Network::new(NetworkConfig::default(), SimRng::stream(1, 1))
    }

    #[test]
    fn group_cuts_block_across_groups_only() {
        let cut = Cut::Groups(vec![0, 0, 1, UNCUT]);
        assert!(!cut.blocks(NodeId(0), NodeId(1)));
        assert!(cut.blocks(NodeId(0), NodeId(2)));
        assert!(cut.blocks(NodeId(2), NodeId(1)));
        assert!(
            !cut.blocks(NodeId(2), NodeId(3)),
            "an uncut node talks to both sides"
        );
        assert!(
            !cut.blocks(NodeId(0), NodeId(9)),
            "a process outside the labels is never cut"
        );
    }

    #[test]
    fn a_one_way_cut_leaves_the_reverse_direction_open() {
        let cut = Cut::OneWay {
            from: vec![true, false],
            to: vec![false, true],
        };
        assert!(cut.blocks(NodeId(0), NodeId(1)));
        assert!(!cut.blocks(NodeId(1), NodeId(0)));
    }

    #[test]
    fn healing_one_fault_keeps_the_others_cuts() {
        let mut net = net();
        net.add_cut(1, Cut::Link(NodeId(0), NodeId(1)));
        net.add_cut(2, Cut::Link(NodeId(1), NodeId(2)));
        net.remove_cut(1);
        assert!(net.connected(NodeId(0), NodeId(1)));
        assert!(!net.connected(NodeId(2), NodeId(1)));
        net.heal_all();
        assert!(!net.is_partitioned());
    }

    #[test]
    fn full_loss_drops_everything_and_restore_brings_it_back() {
        let mut net = net();
        net.set_loss_ppm(crate::rng::PPM);
        assert_eq!(net.transmit(NodeId(0), NodeId(1)), Transit::LostToLoss);
        net.restore_loss();
        assert!(matches!(
            net.transmit(NodeId(0), NodeId(1)),
            Transit::Deliver { .. }
        ));
    }

    #[test]
    fn uniform_latency_stays_in_its_range() {
        let mut net = net();
        for _ in 0..1000 {
            match net.transmit(NodeId(0), NodeId(1)) {
                Transit::Deliver { latency_ns, .. } => {
                    assert!((1_000_000..=10_000_000).contains(&latency_ns))
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}
