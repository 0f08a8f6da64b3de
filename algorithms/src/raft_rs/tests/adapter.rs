//! Single nodes driven by hand: where randomness comes from, what survives a restart, and
//! the settings' validation against raft-rs' own.

use crate::raft_rs::config::MAX_TICKS;
use crate::raft_rs::messages::raft_id;
use crate::raft_rs::{RaftRsConfig, RaftRsConfigError, RaftRsMsg, RaftRsNode, RaftRsTimer};
use raft::eraftpb::{Message as RaftMessage, MessageType};
use raft::StateRole;
use splitbrain_sim::{Ctx, Effect, NodeId, Process, Signal, SimRng, StreamId};

type Out = Vec<Effect<RaftRsMsg, RaftRsTimer>>;

/// One member of `members` with its own stream, driven by hand.
struct Driver {
    node: RaftRsNode,
    members: usize,
    rng: SimRng,
}

impl Driver {
    fn new(index: usize, members: usize, config: &RaftRsConfig, seed: u64) -> Self {
        Self {
            node: RaftRsNode::new(NodeId::from(index), members, config),
            members,
            rng: SimRng::stream(seed, StreamId::node(index)),
        }
    }

    fn call(
        &mut self,
        f: impl FnOnce(&mut RaftRsNode, &mut Ctx<'_, RaftRsMsg, RaftRsTimer>),
    ) -> Out {
        let mut out = Vec::new();
        let me = self.node.id;
        let mut ctx = Ctx::new(me, self.members, 0, &mut self.rng, &mut out);
        f(&mut self.node, &mut ctx);
        out
    }

    fn timeout_ticks(&self) -> usize {
        self.node.raw.raft.randomized_election_timeout()
    }

    fn deliver(&mut self, from: usize, message: RaftMessage) -> Out {
        self.call(|node, ctx| node.on_message(ctx, NodeId::from(from), RaftRsMsg::new(message)))
    }
}

/// A message of `message_type` and `term` from member `from` to member `to`.
fn message(message_type: MessageType, from: usize, to: usize, term: u64) -> RaftMessage {
    let mut m = RaftMessage::default();
    m.set_msg_type(message_type);
    m.from = raft_id(NodeId::from(from));
    m.to = raft_id(NodeId::from(to));
    m.term = term;
    m
}

/// The vote answers in `out`: (to, granted).
fn vote_answers(out: &Out) -> Vec<(usize, bool)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send { to, msg }
                if msg.raft_message().get_msg_type() == MessageType::MsgRequestVoteResponse =>
            {
                Some((to.index(), !msg.raft_message().reject))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn every_election_timeout_raft_rs_uses_comes_from_the_node_stream_and_spans_its_range() {
    let config = RaftRsConfig::default();
    let mut seen = Vec::new();
    for seed in 0..200 {
        let mut driver = Driver::new(0, 3, &config, seed);
        let mut mirror = driver.rng.clone();
        driver.call(|node, ctx| node.on_start(ctx));
        let _phase = mirror.between(1, config.tick_ns);
        let expected = mirror.between(20, 39) as usize;
        assert_eq!(driver.timeout_ticks(), expected, "seed {seed}");
        // A term change makes raft-rs draw again (`become_follower` -> `reset`): replaced
        // by the stream's next draw.
        driver.deliver(1, message(MessageType::MsgHeartbeat, 1, 0, 3));
        assert_eq!(driver.timeout_ticks(), mirror.between(20, 39) as usize);
        // A heartbeat of the same term does not reset: raft-rs keeps the timeout, and so
        // does the adapter (its stream is not touched).
        driver.deliver(1, message(MessageType::MsgHeartbeat, 1, 0, 3));
        let untouched = mirror.clone().next_u64();
        assert_eq!(driver.rng.clone().next_u64(), untouched, "seed {seed}");
        seen.push(expected);
    }
    assert_eq!(
        seen.iter().min(),
        Some(&20),
        "raft-rs' range starts at election_tick"
    );
    assert_eq!(
        seen.iter().max(),
        Some(&39),
        "and ends before 2 * election_tick"
    );
}

#[test]
fn a_campaign_draws_a_fresh_timeout_from_the_stream_and_signals_the_election() {
    let config = RaftRsConfig::default();
    let mut driver = Driver::new(0, 3, &config, 5);
    driver.call(|node, ctx| node.on_start(ctx));
    let ticks = driver.timeout_ticks();
    for _ in 1..ticks {
        let out = driver.call(|node, ctx| node.on_timer(ctx, RaftRsTimer::Tick));
        assert!(
            !out.iter().any(|e| matches!(e, Effect::Signal(_))),
            "{out:?}"
        );
    }
    let mut mirror = driver.rng.clone();
    let out = driver.call(|node, ctx| node.on_timer(ctx, RaftRsTimer::Tick));
    assert_eq!(driver.node.state(), StateRole::Candidate);
    assert_eq!(driver.timeout_ticks(), mirror.between(20, 39) as usize);
    let signals: Vec<Signal> = out
        .iter()
        .filter_map(|e| match e {
            Effect::Signal(s) => Some(*s),
            _ => None,
        })
        .collect();
    assert_eq!(
        signals,
        [Signal::LeaderSuspected, Signal::ElectionStarted { term: 1 }]
    );
    let requests = out
        .iter()
        .filter(|e| matches!(e, Effect::Send { msg, .. } if msg.raft_message().get_msg_type() == MessageType::MsgRequestVote))
        .count();
    assert_eq!(requests, 2, "one vote request per peer");
}

#[test]
fn term_and_vote_survive_a_restart_so_no_second_vote_is_given_in_that_term() {
    let mut driver = Driver::new(0, 3, &RaftRsConfig::default(), 1);
    driver.call(|node, ctx| node.on_start(ctx));
    let out = driver.deliver(1, message(MessageType::MsgRequestVote, 1, 0, 5));
    assert_eq!(vote_answers(&out), [(1, true)]);

    driver.call(|node, ctx| node.on_restart(ctx));
    assert_eq!(driver.node.term(), 5, "the term came back from storage");
    assert_eq!(driver.node.raw.raft.vote, raft_id(NodeId::from(1usize)));
    assert_eq!(driver.node.state(), StateRole::Follower);
    assert_eq!(driver.node.known_leader(), None, "who leads is volatile");

    let out = driver.deliver(2, message(MessageType::MsgRequestVote, 2, 0, 5));
    assert_eq!(vote_answers(&out), [(2, false)], "one vote per term");
}

#[test]
fn a_lone_member_elects_itself_and_writes_with_its_term_as_token() {
    let mut driver = Driver::new(0, 1, &RaftRsConfig::default(), 3);
    driver.call(|node, ctx| node.on_start(ctx));
    let mut out = Vec::new();
    while driver.node.state() != StateRole::Leader {
        out = driver.call(|node, ctx| node.on_timer(ctx, RaftRsTimer::Tick));
    }
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::BecameLeader { term: 1, token: 1 })));
    assert_eq!(driver.node.write_token(0), Some(1));
    assert_eq!(driver.node.known_leader(), Some(NodeId::from(0usize)));
    // The leader's empty entry is committed and the commit index reaches the storage.
    assert_eq!(driver.node.storage.rl().hard_state().commit, 1);
}

#[test]
fn settings_are_refused_exactly_when_raft_rs_refuses_them() {
    for election_tick in 0..6 {
        for heartbeat_tick in 0..4 {
            let config = RaftRsConfig {
                election_tick,
                heartbeat_tick,
                ..RaftRsConfig::default()
            };
            let ours = config.validate().is_empty();
            let raft_rs = config.raft_config(1).validate().is_ok();
            assert_eq!(
                ours, raft_rs,
                "election {election_tick}, heartbeat {heartbeat_tick}"
            );
        }
    }
}

#[test]
fn the_defaults_are_raft_rs_own_tick_counts() {
    let ours = RaftRsConfig::default();
    let raft_rs = raft::Config::default();
    assert_eq!(ours.election_tick, raft_rs.election_tick);
    assert_eq!(ours.heartbeat_tick, raft_rs.heartbeat_tick);
    assert_eq!(ours.pre_vote, raft_rs.pre_vote);
    assert_eq!(ours.check_quorum, raft_rs.check_quorum);
    assert!(ours.validate().is_empty());
}

#[test]
fn each_refusal_names_its_field() {
    let cases = [
        (
            RaftRsConfig {
                heartbeat_tick: 0,
                ..RaftRsConfig::default()
            },
            vec![RaftRsConfigError::ZeroHeartbeatTick],
        ),
        (
            RaftRsConfig {
                election_tick: 2,
                ..RaftRsConfig::default()
            },
            vec![RaftRsConfigError::ElectionTickNotAboveHeartbeatTick {
                election_tick: 2,
                heartbeat_tick: 2,
            }],
        ),
        (
            RaftRsConfig {
                tick_ns: 0,
                ..RaftRsConfig::default()
            },
            vec![RaftRsConfigError::ZeroTick],
        ),
        (
            RaftRsConfig {
                election_tick: MAX_TICKS,
                tick_ns: u64::MAX / MAX_TICKS as u64,
                ..RaftRsConfig::default()
            },
            vec![RaftRsConfigError::ElectionTimeoutTooLong {
                election_tick: MAX_TICKS,
                tick_ns: u64::MAX / MAX_TICKS as u64,
            }],
        ),
        (
            RaftRsConfig {
                election_tick: usize::MAX,
                ..RaftRsConfig::default()
            },
            vec![
                RaftRsConfigError::TooManyTicks {
                    field: "election_tick",
                    ticks: usize::MAX,
                },
                RaftRsConfigError::ElectionTimeoutTooLong {
                    election_tick: usize::MAX,
                    tick_ns: RaftRsConfig::default().tick_ns,
                },
            ],
        ),
        (
            RaftRsConfig {
                election_tick: MAX_TICKS + 2,
                heartbeat_tick: MAX_TICKS + 1,
                ..RaftRsConfig::default()
            },
            vec![
                RaftRsConfigError::TooManyTicks {
                    field: "election_tick",
                    ticks: MAX_TICKS + 2,
                },
                RaftRsConfigError::TooManyTicks {
                    field: "heartbeat_tick",
                    ticks: MAX_TICKS + 1,
                },
            ],
        ),
    ];
    for (config, expected) in cases {
        let problems = config.validate();
        assert_eq!(problems, expected);
        let field = problems[0].field();
        assert!(
            ["heartbeat_tick", "election_tick", "tick"].contains(&field),
            "{field}"
        );
        let text = problems[0].to_string();
        assert!(text.starts_with(char::is_lowercase), "{text}");
    }
}
