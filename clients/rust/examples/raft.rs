//! Raft's leader election (Ongaro and Ousterhout, section 5.2, without the log) as a
//! splitbrain node in Rust: the same node as clients/go/examples/raft (internal/raftnode).
//!
//! Every node starts as a follower with a randomized election timeout of 150-300 ms drawn
//! from `ctx.rng`. A follower whose timeout expires becomes a candidate: it increments its
//! term, votes for itself, persists term and vote, reports `campaign(term)` and asks every
//! peer for its vote. A node grants at most one vote per term and persists the vote before
//! the answer leaves (the persist effect precedes the send, and the simulator holds sends
//! until the write is on disk). A candidate with votes from a majority leads: every 50 ms it
//! declares `lead(term, term)`, writes to the fenced resource with its term as the token and
//! sends heartbeats. Any message with a higher term makes a node adopt that term (persisted)
//! and step down; a stale heartbeat is answered so that a deposed leader learns the new term.
//!
//! Run it under splitbrain: `splitbrain hunt scenarios/external/rust-raft.ron --seeds 500`
//! (clients/rust/node.sh builds it on first use).

use serde_json::{json, Value};
use splitbrain_node::{run, Body, Ctx, Error, Handler, Result, Spec};
use std::collections::BTreeSet;
use std::time::Duration;

/// Timing, as in the paper's example: heartbeats well under the election timeout.
const ELECTION_MIN: Duration = Duration::from_millis(150);
const ELECTION_MAX: Duration = Duration::from_millis(300);
const HEARTBEAT: Duration = Duration::from_millis(50);

/// What the node sends and arms.
fn spec() -> Spec {
    Spec::new(
        &["vote_request", "vote", "heartbeat", "heartbeat_reply"],
        &["election", "heartbeat"],
    )
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Role {
    #[default]
    Follower,
    Candidate,
    Leader,
}

/// One Raft election member. Durable: `term`, `voted_for` (persisted before acted on).
#[derive(Debug, Default)]
struct Raft {
    term: u64,
    voted_for: Option<u64>,
    role: Role,
    leader: Option<u64>,
    votes: BTreeSet<u64>,
}

/// Every handler ends by reporting the node's whole state (`digest`), whatever way it left.
impl Handler for Raft {
    fn init(&mut self, ctx: &mut Ctx, durable: Option<&Value>) -> Result {
        self.start(ctx, durable)?;
        self.digest(ctx)
    }

    fn message(&mut self, ctx: &mut Ctx, from: u64, body: &Body) -> Result {
        self.receive(ctx, from, body)?;
        self.digest(ctx)
    }

    fn timer(&mut self, ctx: &mut Ctx, name: &str) -> Result {
        match (name, self.role) {
            ("election", Role::Follower | Role::Candidate) => self.campaign(ctx)?,
            ("heartbeat", Role::Leader) => self.beat(ctx)?,
            _ => {}
        }
        self.digest(ctx)
    }

    fn resign(&mut self, ctx: &mut Ctx) -> Result {
        self.hand_over(ctx)?;
        self.digest(ctx)
    }
}

impl Raft {
    /// Starts or restarts the node from its durable state.
    fn start(&mut self, ctx: &mut Ctx, durable: Option<&Value>) -> Result {
        *self = Raft::default(); // init resets everything
        if let Some(d) = durable {
            self.term = d["term"]
                .as_u64()
                .ok_or_else(|| Error::new(format!("raft: unreadable durable state {d}")))?;
            self.voted_for = d["voted_for"].as_u64();
        }
        ctx.set_term(self.term);
        ctx.clear_leader();
        self.reset_election_timer(ctx)
    }

    fn receive(&mut self, ctx: &mut Ctx, from: u64, body: &Body) -> Result {
        let term = body.value["term"]
            .as_u64()
            .ok_or_else(|| Error::new(format!("raft: no term in {}", body.value)))?;
        if term > self.term {
            self.become_follower(ctx, term)?;
        }
        match body.ty.as_str() {
            "vote_request" => {
                let granted = term == self.term && self.voted_for.is_none_or(|v| v == from);
                if granted {
                    self.voted_for = Some(from);
                    self.persist(ctx)?; // before the vote leaves: the send waits for the write
                    self.reset_election_timer(ctx)?;
                }
                ctx.send(
                    from,
                    &json!({"type": "vote", "term": self.term, "granted": granted}),
                )
            }
            "vote" => {
                if self.role != Role::Candidate
                    || term != self.term
                    || body.value["granted"] != true
                {
                    return Ok(());
                }
                self.votes.insert(from);
                if self.votes.len() >= ctx.quorum() {
                    self.become_leader(ctx)?;
                }
                Ok(())
            }
            "heartbeat" => {
                if term < self.term {
                    return ctx.send(from, &json!({"type": "heartbeat_reply", "term": self.term}));
                }
                if self.role != Role::Follower {
                    self.become_follower(ctx, self.term)?;
                }
                if self.leader != Some(from) {
                    self.leader = Some(from);
                    ctx.set_leader(from)?;
                }
                self.reset_election_timer(ctx)
            }
            // Only a higher term matters, handled above.
            _ => Ok(()),
        }
    }

    /// Hands leadership over: the leader steps down and waits longer than the others before
    /// it campaigns again.
    fn hand_over(&mut self, ctx: &mut Ctx) -> Result {
        if self.role != Role::Leader {
            return Ok(());
        }
        self.role = Role::Follower;
        self.leader = None;
        ctx.step_down();
        ctx.clear_leader();
        ctx.cancel_timer("heartbeat")?;
        let wait = ELECTION_MIN * 2
            + ctx
                .rng
                .duration(Duration::ZERO, ELECTION_MAX - ELECTION_MIN);
        ctx.set_timer("election", wait)
    }

    /// Reports the node's whole state for a systematic search (`ctx.set_digest` adds the
    /// state of `ctx.rng`): no time is kept (the simulator digests the armed timers), and the
    /// votes count only while a candidate (a vote is read in no other role; a campaign
    /// starts them afresh).
    fn digest(&self, ctx: &mut Ctx) -> Result {
        let votes = match self.role {
            Role::Candidate => Some(&self.votes),
            Role::Follower | Role::Leader => None,
        };
        ctx.set_digest(&(
            self.term,
            self.voted_for,
            self.role as u8,
            self.leader,
            votes,
        ))
    }

    fn campaign(&mut self, ctx: &mut Ctx) -> Result {
        if self.role == Role::Candidate {
            ctx.round_failed(self.term); // the last round ended without a winner
        }
        self.term += 1;
        self.voted_for = Some(ctx.me);
        self.role = Role::Candidate;
        self.leader = None;
        self.votes = BTreeSet::from([ctx.me]);
        self.persist(ctx)?;
        ctx.campaign(self.term);
        ctx.set_term(self.term);
        ctx.clear_leader();
        for p in ctx.peers() {
            ctx.send(p, &json!({"type": "vote_request", "term": self.term}))?;
        }
        self.reset_election_timer(ctx)?;
        if self.votes.len() >= ctx.quorum() {
            self.become_leader(ctx)?;
        }
        Ok(())
    }

    fn become_leader(&mut self, ctx: &mut Ctx) -> Result {
        self.role = Role::Leader;
        self.leader = Some(ctx.me);
        ctx.set_leader(ctx.me)?;
        ctx.cancel_timer("election")?;
        self.beat(ctx)
    }

    /// A leader's heartbeat: claim, write, heartbeats, re-arm.
    fn beat(&mut self, ctx: &mut Ctx) -> Result {
        ctx.lead(self.term, self.term);
        ctx.write(self.term);
        for p in ctx.peers() {
            ctx.send(p, &json!({"type": "heartbeat", "term": self.term}))?;
        }
        ctx.set_timer("heartbeat", HEARTBEAT)
    }

    /// Adopts `term` (a new term clears the vote and is persisted) and steps down.
    fn become_follower(&mut self, ctx: &mut Ctx, term: u64) -> Result {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
            self.persist(ctx)?;
            ctx.set_term(term);
        }
        let was_leader = self.role == Role::Leader;
        if self.role != Role::Follower || self.leader.is_some() {
            self.leader = None;
            ctx.clear_leader();
        }
        self.role = Role::Follower;
        if was_leader {
            ctx.step_down();
            ctx.cancel_timer("heartbeat")?;
            self.reset_election_timer(ctx)?;
        }
        Ok(())
    }

    fn persist(&self, ctx: &mut Ctx) -> Result {
        ctx.persist(&json!({"term": self.term, "voted_for": self.voted_for}))
    }

    fn reset_election_timer(&self, ctx: &mut Ctx) -> Result {
        let d = ctx.rng.duration(ELECTION_MIN, ELECTION_MAX);
        ctx.set_timer("election", d)
    }
}

fn main() {
    run(spec(), Raft::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_node::Node;

    /// n nodes driven by hand through `Node::step`: no pipes, no simulator.
    struct Cluster {
        nodes: Vec<Node<Raft>>,
        now: i64,
        step: u64,
    }

    impl Cluster {
        fn new(n: u64) -> Cluster {
            let mut c = Cluster {
                nodes: Vec::new(),
                now: 0,
                step: 0,
            };
            let members: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            for i in 0..n {
                c.nodes.push(Node::new(spec(), Raft::default()).unwrap());
                let r = c.event(i, &format!(
                    r#""type":"init","protocol":2,"node":{i},"members":[{}],"service":null,"seed":{},"restart":false,"durable":null"#,
                    members.join(","),
                    i + 1
                ));
                assert_eq!(r["term"], 0);
            }
            c
        }

        /// Sends node i an event (its fields before the clocks) and returns the reply.
        fn event(&mut self, i: u64, fields: &str) -> Value {
            self.now += 1000;
            self.step += 1;
            let line = format!(
                r#"{{{fields},"step":{},"mono_ns":{},"wall_ns":{}}}"#,
                self.step, self.now, self.now
            );
            let out = self.nodes[i as usize]
                .step(&line)
                .unwrap_or_else(|e| panic!("node {i}: {e}"));
            serde_json::from_str(&out).unwrap()
        }

        /// Delivers every send of `reply` (from node `from`), recursively; returns the replies.
        fn deliver(&mut self, from: u64, reply: &Value) -> Vec<Value> {
            let mut all = Vec::new();
            for e in reply["effects"].as_array().unwrap() {
                if e["type"] != "send" {
                    continue;
                }
                let to = e["to"].as_u64().unwrap();
                let next = self.event(
                    to,
                    &format!(r#""type":"message","from":{from},"body":{}"#, e["body"]),
                );
                all.push(next.clone());
                all.extend(self.deliver(to, &next));
            }
            all
        }

        fn timer(&mut self, i: u64, name: &str) -> Value {
            self.event(i, &format!(r#""type":"timer","name":"{name}""#))
        }
    }

    fn effects<'a>(r: &'a Value, ty: &str) -> Vec<&'a Value> {
        r["effects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == ty)
            .collect()
    }

    #[test]
    fn a_timeout_elects_the_candidate() {
        let mut c = Cluster::new(3);
        let r = c.timer(1, "election");
        assert_eq!(r["term"], 1);
        assert_eq!(effects(&r, "campaign")[0]["term"], 1);
        // The vote is persisted before the requests leave.
        let kinds: Vec<&str> = r["effects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(
            kinds.iter().position(|k| *k == "persist") < kinds.iter().position(|k| *k == "send")
        );
        let replies = c.deliver(1, &r);
        let leads: Vec<&Value> = replies.iter().flat_map(|r| effects(r, "lead")).collect();
        assert_eq!(leads[0], &json!({"type": "lead", "term": 1, "token": 1}));
        assert_eq!(c.nodes[1].handler().role, Role::Leader);
        // Heartbeats make the followers recognise the leader.
        assert!(replies.iter().any(|r| r["leader"] == 1));
        assert_eq!(c.nodes[0].handler().leader, Some(1));
    }

    #[test]
    fn one_vote_per_term_even_across_a_restart() {
        let mut c = Cluster::new(3);
        let r = c.timer(0, "election");
        let to2 = c.event(
            2,
            &format!(
                r#""type":"message","from":0,"body":{}"#,
                effects(&r, "send")[1]["body"]
            ),
        );
        let persisted = effects(&to2, "persist").last().unwrap()["state"].clone();
        assert_eq!(persisted, json!({"term": 1, "voted_for": 0}));
        // Node 2 crashes and comes back with its vote.
        let init = c.event(
            2,
            &format!(r#""type":"init","protocol":2,"node":2,"members":[0,1,2],"service":null,"seed":9,"restart":true,"durable":{persisted}"#),
        );
        assert_eq!(init["term"], 1);
        let r = c.event(
            2,
            r#""type":"message","from":1,"body":{"type":"vote_request","term":1}"#,
        );
        assert_eq!(
            effects(&r, "send")[0]["body"],
            json!({"type": "vote", "term": 1, "granted": false})
        );
    }

    #[test]
    fn a_higher_term_deposes_the_leader() {
        let mut c = Cluster::new(3);
        let r = c.timer(0, "election");
        c.deliver(0, &r);
        assert_eq!(c.nodes[0].handler().role, Role::Leader);
        let r = c.event(
            0,
            r#""type":"message","from":2,"body":{"type":"vote_request","term":5}"#,
        );
        assert_eq!(effects(&r, "step_down").len(), 1);
        assert_eq!(r["term"], 5);
        assert_eq!(r["leader"], Value::Null);
        assert_eq!(effects(&r, "send")[0]["body"]["granted"], true);
    }

    #[test]
    fn a_second_timeout_is_a_failed_round() {
        let mut c = Cluster::new(3);
        c.timer(2, "election");
        let r = c.timer(2, "election");
        assert_eq!(effects(&r, "round_failed")[0]["term"], 1);
        assert_eq!(effects(&r, "campaign")[0]["term"], 2);
    }

    #[test]
    fn every_reply_digests_the_state_after_the_step() {
        let mut c = Cluster::new(3);
        let r = c.timer(0, "election");
        assert_eq!(r["digest"]["state"], json!([1, 0, 1, null, [0]]));
        let replies = c.deliver(0, &r);
        // Early returns too: a vote to a leader, a stale heartbeat answered.
        let stale = c.event(
            2,
            r#""type":"message","from":1,"body":{"type":"heartbeat","term":0}"#,
        );
        for reply in replies.iter().chain([&stale]) {
            assert!(reply["digest"]["state"].is_array(), "{reply}");
        }
        let beat = c.timer(0, "heartbeat");
        assert_eq!(beat["digest"]["state"], json!([1, 0, 2, 0, null]));
        // Node 2 heard the leader's heartbeat, then granted its late request: a follower
        // with its vote and its leader, no votes.
        assert_eq!(stale["digest"]["state"], json!([1, 0, 0, 0, null]));
    }

    #[test]
    fn a_single_member_leads_at_once() {
        let mut c = Cluster::new(1);
        let r = c.timer(0, "election");
        assert_eq!(r["leader"], 0);
        assert_eq!(effects(&r, "write")[0]["token"], 1);
    }
}
