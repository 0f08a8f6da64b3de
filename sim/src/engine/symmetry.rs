//! A digest of a run's state up to a renaming of interchangeable members
//! ([`Sim::digest_symmetric`]): what a systematic search compares to explore once two states
//! that differ only by the names of members whose settings are the same.
//!
//! The canonical digest is the least digest of the state renamed, over the renamings that
//! list the members in the order of a key that no renaming changes (the engine's view of
//! each: its term, status, clocks, random stream, timers; [`Sim::digest_node_engine`]); only
//! members with equal keys are tried in every order. A state and any renaming of it list
//! their members alike, so they get one digest; two states no renaming relates get two (up
//! to hash collisions). Every part of the state that holds node ids must rename them: if a
//! process, a message or a durable write cannot ([`Process::digest_renamed`],
//! [`Message::renamed`](crate::Message::renamed),
//! [`DurableState::renamed`](crate::DurableState::renamed)), the state is digested exactly.

use super::digest::Naming;
use super::Sim;
use crate::ids::NodeId;
use crate::process::Process;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The most renamings tried for one state: beyond it (more than five members that nothing
/// tells apart) the state is digested exactly.
const MAX_RENAMINGS: usize = 120;

impl<P: Process> Sim<'_, P> {
    /// A digest of the run's state now, up to a renaming of the members of `group`: equal
    /// for two states that differ only by the names of those members (each member's state,
    /// the messages, cuts, disks and heals that name them, renamed alike). Its lowest bit is
    /// 1; when a part of the state cannot be renamed, or nothing in `group` is to rename, it
    /// is [`Sim::digest`] with the lowest bit 0 instead, so an exact digest and a canonical
    /// one never meet. Deterministic. Members outside `group`, the service processes and the
    /// resource keep their names.
    ///
    /// The random streams are not renamed: each member's stream is keyed by its id, so two
    /// states that are renamings of each other may draw differently from there on
    /// (docs/hunting.md, "Symmetry").
    ///
    /// ```
    /// use splitbrain_sim::storm::{storm_config, StormNode};
    /// use splitbrain_sim::{NodeId, Sim};
    ///
    /// let (config, info) = storm_config(1, 3);
    /// let sim = Sim::new(config, info, vec![StormNode::default(); 3]);
    /// let group = [NodeId(0), NodeId(1), NodeId(2)];
    /// // A storm node keeps no renaming hook: its states are compared exactly.
    /// assert_eq!(sim.digest_symmetric(&group), sim.digest() & !1);
    /// ```
    pub fn digest_symmetric(&self, group: &[NodeId]) -> u64 {
        self.digest_symmetric_renamed(group).0
    }

    /// [`Sim::digest_symmetric`], and a fingerprint of the renaming that gave it (0 for an
    /// exact digest): of two states with one symmetric digest, the same fingerprint means
    /// the same state, two fingerprints two renamings of one (up to hash collisions). What
    /// a systematic search counts its points pruned as renamings with, without a second
    /// digest.
    ///
    /// ```
    /// use splitbrain_sim::storm::{storm_config, StormNode};
    /// use splitbrain_sim::{NodeId, Sim};
    ///
    /// let (config, info) = storm_config(1, 3);
    /// let sim = Sim::new(config, info, vec![StormNode::default(); 3]);
    /// let (digest, renaming) = sim.digest_symmetric_renamed(&[NodeId(0), NodeId(1)]);
    /// assert_eq!((digest, renaming), (sim.digest() & !1, 0));
    /// ```
    pub fn digest_symmetric_renamed(&self, group: &[NodeId]) -> (u64, u64) {
        match self.canonical_digest(group) {
            Some((canonical, names)) => {
                let mut h = DefaultHasher::new();
                names.hash(&mut h);
                (canonical | 1, h.finish() | 1)
            }
            None => (self.digest() & !1, 0),
        }
    }

    /// The least renamed digest over the renamings to try, with the renaming that gave it
    /// (the first in their order); `None` when the state is to be digested exactly.
    fn canonical_digest(&self, group: &[NodeId]) -> Option<(u64, Vec<NodeId>)> {
        let mut least: Option<(u64, Vec<NodeId>)> = None;
        for names in self.renamings(group)? {
            let digest = self.digest_named(Naming::Renamed(&names))?;
            if least.as_ref().is_none_or(|(l, _)| digest < *l) {
                least = Some((digest, names));
            }
        }
        least
    }

    /// The renamings to try: the members of `group` take the group's ids in the order of
    /// their keys, each run of equal keys in every order. `None` if the group has fewer
    /// than two members or the ties call for more than [`MAX_RENAMINGS`].
    fn renamings(&self, group: &[NodeId]) -> Option<Vec<Vec<NodeId>>> {
        let mut members: Vec<NodeId> = group
            .iter()
            .copied()
            .filter(|n| n.index() < self.config.members)
            .collect();
        members.sort();
        members.dedup();
        if members.len() < 2 {
            return None;
        }
        let mut keyed: Vec<(u64, NodeId)> =
            members.iter().map(|n| (self.member_key(*n), *n)).collect();
        keyed.sort();
        let mut ties: Vec<Vec<NodeId>> = Vec::new();
        for (at, (key, node)) in keyed.iter().enumerate() {
            match at.checked_sub(1).map(|before| keyed[before].0) {
                Some(previous) if previous == *key => ties.last_mut()?.push(*node),
                _ => ties.push(vec![*node]),
            }
        }
        let count = ties
            .iter()
            .try_fold(1usize, |n, tie| n.checked_mul(factorial(tie.len())?))?;
        if count > MAX_RENAMINGS {
            return None;
        }
        let identity: Vec<NodeId> = (0..self.processes.len()).map(NodeId::from).collect();
        let mut renamings = vec![identity];
        let mut slot = 0;
        for tie in &ties {
            let slots = &members[slot..slot + tie.len()];
            renamings = renamings
                .iter()
                .flat_map(|names| {
                    orders(tie).into_iter().map(move |order| {
                        let mut names = names.clone();
                        for (node, to) in order.iter().zip(slots) {
                            names[node.index()] = *to;
                        }
                        names
                    })
                })
                .collect();
            slot += tie.len();
        }
        assert!(
            renamings.len() == count,
            "one renaming per order of the ties"
        );
        Some(renamings)
    }

    /// What no renaming changes about member `node`: the engine's view of it, whether it
    /// knows of no leader, itself or another, and the highest term the checker saw of it.
    fn member_key(&self, node: NodeId) -> u64 {
        let mut h = DefaultHasher::new();
        self.digest_node_engine(node.index(), &mut h);
        let leader = self.processes[node.index()].known_leader();
        let leader_class = match leader {
            None => 0,
            Some(l) if l == node => 1,
            Some(_) => 2,
        };
        leader_class.hash(&mut h);
        h.finish()
    }
}

/// `n!`, or `None` if it overflows.
fn factorial(n: usize) -> Option<usize> {
    (1..=n).try_fold(1usize, |product, k| product.checked_mul(k))
}

/// Every order of `items`, in a fixed order.
fn orders(items: &[NodeId]) -> Vec<Vec<NodeId>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for (at, first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(at);
        for mut order in orders(&rest) {
            order.insert(0, *first);
            out.push(order);
        }
    }
    out
}
