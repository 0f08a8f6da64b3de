//! Digests up to a renaming of members ([`Sim::digest_symmetric`]), tested with a gossip
//! whose members are alike but for their names: each tells every peer, every 100 ms, who
//! it heard from last, and counts what it hears per peer.

use super::tests::Tick;
use crate::config::{AlgorithmInfo, SimConfig};
use crate::engine::StopAt;
use crate::fault::{FaultAction, FaultSpec, Target};
use crate::ids::{renamed_vec, NodeId};
use crate::network_config::Latency;
use crate::process::{Ctx, Message, Process};
use crate::time::{LocalNanos, NANOS_PER_MILLI as MS};
use crate::Sim;
use std::hash::{DefaultHasher, Hash, Hasher};

#[derive(Clone, Debug)]
struct Heard {
    last: Option<NodeId>,
}

impl Message for Heard {
    const KINDS: &'static [&'static str] = &["heard"];
    fn kind(&self) -> usize {
        0
    }
    fn renamed(&self, names: &[NodeId]) -> Option<Self> {
        Some(Heard {
            last: self.last.map(|n| n.renamed(names)),
        })
    }
}

#[derive(Clone, Debug)]
struct Gossip {
    /// Whether it renames its state (else it keeps the default hook: no symmetry).
    renames: bool,
    /// Tells `last` as this node, whatever it heard: a liar breaks the symmetry.
    lie: Option<NodeId>,
    last: Option<NodeId>,
    heard: Vec<u64>,
}

impl Gossip {
    fn new(renames: bool) -> Self {
        Self {
            renames,
            lie: None,
            last: None,
            heard: vec![0; 3],
        }
    }
}

impl Process for Gossip {
    type Msg = Heard;
    type Timer = Tick;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Heard, Tick>) {
        ctx.set_timer(Tick, 100 * MS);
    }

    fn on_message(&mut self, _: &mut Ctx<'_, Heard, Tick>, from: NodeId, _: Heard) {
        self.last = Some(from);
        self.heard[from.index()] += 1;
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Heard, Tick>, _: Tick) {
        let last = self.lie.or(self.last);
        let peers: Vec<NodeId> = ctx.peers().collect();
        for peer in peers {
            ctx.send(peer, Heard { last });
        }
        ctx.set_timer(Tick, 100 * MS);
    }

    fn on_restart(&mut self, ctx: &mut Ctx<'_, Heard, Tick>) {
        ctx.set_timer(Tick, 100 * MS);
    }

    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }

    fn digest(&self, _: LocalNanos) -> Option<u64> {
        let mut h = DefaultHasher::new();
        (self.last, &self.heard).hash(&mut h);
        Some(h.finish())
    }

    fn digest_renamed(&self, _: LocalNanos, names: &[NodeId]) -> Option<u64> {
        if !self.renames {
            return None;
        }
        let mut h = DefaultHasher::new();
        let last = self.last.map(|n| n.renamed(names));
        (last, renamed_vec(&self.heard, names)).hash(&mut h);
        Some(h.finish())
    }
}

const EVERYONE: [NodeId; 3] = [NodeId(0), NodeId(1), NodeId(2)];

fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "gossip".into(),
        failure_detection_ns: u64::MAX / 64,
        min_group_for_progress: 1,
        signals: crate::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// Three gossips whose member `crashed` crashes at 150 ms for 200 ms, and the run at
/// `at_ns`.
fn gossip_at(crashed: u32, at_ns: u64, nodes: Vec<Gossip>) -> Sim<'static, Gossip> {
    let mut config = SimConfig::quiet(1, 3, 2_000 * MS);
    config.network.default.latency = Latency::Constant(5 * MS);
    config.faults = vec![FaultSpec {
        at_ns: 150 * MS,
        action: FaultAction::Crash(Target::Node(crashed)),
        heal_after_ns: Some(200 * MS),
        after: None,
    }];
    let mut sim = Sim::new(config, info(), nodes);
    sim.run_until(StopAt::Time(at_ns)).expect("the run goes on");
    sim
}

fn gossips() -> Vec<Gossip> {
    vec![Gossip::new(true); 3]
}

#[test]
fn renamings_of_one_state_have_one_symmetric_digest_and_two_exact_ones() {
    // Crashed, and after the restart: the heal pending, then messages naming the restarted.
    for at_ns in [250 * MS, 420 * MS] {
        let one = gossip_at(1, at_ns, gossips());
        let two = gossip_at(2, at_ns, gossips());
        assert_ne!(one.digest(), two.digest(), "at {at_ns}");
        assert_eq!(
            one.digest_symmetric(&EVERYONE),
            two.digest_symmetric(&EVERYONE),
            "at {at_ns}"
        );
        assert_eq!(one.digest_symmetric(&EVERYONE) & 1, 1, "a canonical digest");
    }
}

#[test]
fn a_member_outside_the_group_keeps_its_name() {
    let one = gossip_at(1, 250 * MS, gossips());
    let two = gossip_at(2, 250 * MS, gossips());
    let group = [NodeId(0), NodeId(1)];
    assert_ne!(one.digest_symmetric(&group), two.digest_symmetric(&group));
}

/// The run at 101 ms, n0's first messages in flight (sent at 100 ms, delivered at 105 ms),
/// naming `told` as the member n0 heard from last.
fn telling(told: u32) -> Sim<'static, Gossip> {
    let mut nodes = gossips();
    nodes[0].lie = Some(NodeId(told));
    gossip_at(1, 101 * MS, nodes)
}

#[test]
fn states_no_renaming_relates_have_different_symmetric_digests() {
    // Only the messages in flight differ. Naming n1 or n2 is one state up to a renaming;
    // naming itself is another: no renaming makes a sender name someone else.
    let (itself, one, two) = (telling(0), telling(1), telling(2));
    assert_ne!(one.digest(), two.digest());
    assert_eq!(
        one.digest_symmetric(&EVERYONE),
        two.digest_symmetric(&EVERYONE)
    );
    assert_ne!(
        itself.digest_symmetric(&EVERYONE),
        one.digest_symmetric(&EVERYONE)
    );
    // With n2 keeping its name, naming n1 or n2 differs again.
    let group = [NodeId(0), NodeId(1)];
    assert_ne!(one.digest_symmetric(&group), two.digest_symmetric(&group));
}

#[test]
fn a_process_that_does_not_rename_falls_back_to_the_exact_digest() {
    let mut nodes = gossips();
    nodes[2].renames = false;
    let sim = gossip_at(1, 250 * MS, nodes);
    assert_eq!(sim.digest_symmetric(&EVERYONE), sim.digest() & !1);
    let alone = gossip_at(1, 250 * MS, gossips());
    assert_eq!(
        alone.digest_symmetric(&[NodeId(2)]),
        alone.digest() & !1,
        "one member has no one to trade names with"
    );
}
