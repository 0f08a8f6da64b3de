//! raft-rs 0.3 (crates.io `raft` 0.3.0 or 0.3.1, unchanged) as a splitbrain node: this
//! adapter drives one `raft::RawNode` over the step protocol (docs/protocol.md) with the
//! Rust client `splitbrain-node`. Written once, built at each pin
//! (`pins/0.3.0`, `pins/0.3.1`); `sh clients/rust/node.sh raft-rs-0.3.0 [flags]` runs it.
//!
//! Member i is raft id i+1. One timer, `tick`, calls `RawNode::tick` every `--tick`; a
//! message calls `RawNode::step`; after each, every `Ready` is handled as raft-rs asks:
//! entries and HardState appended to the `MemStorage` and persisted (the `persist` effect,
//! before the sends, so the simulator holds the sends until the write is on disk), the
//! messages sent, committed conf changes applied, `advance`. No threads.
//!
//! **Determinism.** raft-rs 0.3 draws each randomized election timeout from
//! `rand::thread_rng()` (OS-seeded) in `Raft::reset_randomized_election_timeout`, its only
//! use of randomness, which logs `reset election timeout` at debug level every time it
//! runs. The adapter installs a `log` logger that notes these lines (and the `became ...`
//! lines of role changes); after each call into raft-rs that drew a timeout, it replaces the
//! draw with one from the seeded `ctx.rng` through the public
//! `Raft::set_randomized_election_timeout`, uniform in `[election_tick, 2*election_tick)`
//! as raft-rs's own draw. The OS draw is never read: only `tick` reads the timeout, and every
//! call that may draw one is followed by the replacement before the next `tick`. raft-rs's
//! progress maps are `FxHashMap`s (a fixed hash), and each Ready's messages are sorted
//! stably by destination anyway, keeping each destination's messages in raft's order.
//!
//! Logging: raft-rs's warnings and errors go to stderr as `raft WARN: ...`, no timestamps.

use protobuf::Message as _;
use raft::eraftpb::{ConfChange, Entry, EntryType, HardState, Message, MessageType};
use raft::storage::MemStorage;
use raft::{Config, Peer, RawNode, StateRole, Storage};
use serde_json::{json, Value};
use splitbrain_node::{run, Body, Ctx, Error, Handler, Result, Spec};
use std::cell::RefCell;
use std::time::Duration;

/// What raft-rs's log lines say happened during one call into it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Logged {
    /// `reset_randomized_election_timeout` drew a timeout.
    Reset,
    /// `become_*`: the new role, at this term.
    Became(StateRole, u64),
}

thread_local! {
    static LOGGED: RefCell<Vec<Logged>> = const { RefCell::new(Vec::new()) };
}

/// The `log` logger: notes resets and role changes, prints warnings and errors to stderr.
struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target().starts_with("raft")
    }

    fn log(&self, r: &log::Record) {
        if !r.target().starts_with("raft") {
            return;
        }
        let text = r.args().to_string();
        if r.level() <= log::Level::Warn {
            eprintln!("raft {}: {text}", r.level());
        }
        let seen = if text.contains(" reset election timeout ") {
            Some(Logged::Reset)
        } else {
            let term = || text.rsplit(' ').next().and_then(|t| t.parse().ok());
            [
                (" became follower at term ", StateRole::Follower),
                (" became pre-candidate at term ", StateRole::PreCandidate),
                (" became candidate at term ", StateRole::Candidate),
                (" became leader at term ", StateRole::Leader),
            ]
            .into_iter()
            .find(|(s, _)| text.contains(s))
            .and_then(|(_, role)| Some(Logged::Became(role, term()?)))
        };
        if let Some(l) = seen {
            LOGGED.with(|v| v.borrow_mut().push(l));
        }
    }

    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

/// Every message type raft-rs sends to a peer (the others are local: MsgHup, MsgBeat,
/// MsgUnreachable, MsgSnapStatus, MsgCheckQuorum).
const WIRE: [MessageType; 14] = [
    MessageType::MsgPropose,
    MessageType::MsgAppend,
    MessageType::MsgAppendResponse,
    MessageType::MsgRequestVote,
    MessageType::MsgRequestVoteResponse,
    MessageType::MsgSnapshot,
    MessageType::MsgHeartbeat,
    MessageType::MsgHeartbeatResponse,
    MessageType::MsgTransferLeader,
    MessageType::MsgTimeoutNow,
    MessageType::MsgReadIndex,
    MessageType::MsgReadIndexResp,
    MessageType::MsgRequestPreVote,
    MessageType::MsgRequestPreVoteResponse,
];

/// The command line.
#[derive(Debug, Clone)]
struct Flags {
    election_tick: usize,
    heartbeat_tick: usize,
    tick: Duration,
    pre_vote: bool,
    check_quorum: bool,
}

impl Flags {
    /// Defaults: raft-rs 0.3's own example (examples/single_mem_node/main.rs: a 100 ms
    /// tick, election_tick 10, heartbeat_tick 3).
    fn parse(args: impl IntoIterator<Item = String>) -> std::result::Result<Flags, String> {
        let mut f = Flags {
            election_tick: 10,
            heartbeat_tick: 3,
            tick: Duration::from_millis(100),
            pre_vote: false,
            check_quorum: false,
        };
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or(format!("{a} needs a value"));
            match a.as_str() {
                "--election-tick" => {
                    f.election_tick = value()?
                        .parse()
                        .map_err(|e| format!("--election-tick: {e}"))?
                }
                "--heartbeat-tick" => {
                    f.heartbeat_tick = value()?
                        .parse()
                        .map_err(|e| format!("--heartbeat-tick: {e}"))?
                }
                "--tick" => f.tick = parse_duration(&value()?)?,
                "--pre-vote" => f.pre_vote = true,
                "--check-quorum" => f.check_quorum = true,
                _ => return Err(format!("unknown argument {a:?}")),
            }
        }
        if f.heartbeat_tick == 0 || f.election_tick <= f.heartbeat_tick || f.tick.is_zero() {
            return Err("need 0 < --heartbeat-tick < --election-tick and a --tick above 0".into());
        }
        Ok(f)
    }
}

/// `100ms`, `1s`, `250us`, `10ns`.
fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..split]
        .parse()
        .map_err(|_| format!("--tick {s:?}: not a duration like 100ms"))?;
    match &s[split..] {
        "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "us" => Ok(Duration::from_micros(n)),
        "ns" => Ok(Duration::from_nanos(n)),
        _ => Err(format!("--tick {s:?}: not a duration like 100ms")),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return Err(Error::new(format!("raft-rs adapter: not hex: {s:?}")));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|e| Error::new(format!("raft-rs adapter: not hex: {e}")))
        })
        .collect()
}

fn pb_err(e: impl std::fmt::Display) -> Error {
    Error::new(format!("raft-rs adapter: protobuf: {e}"))
}

/// One member: its RawNode, storage and what it last told the simulator.
struct Adapter {
    flags: Flags,
    raw: Option<RawNode<MemStorage>>,
    storage: MemStorage,
    /// The role as the `became ...` log lines left it (checked against raft's state).
    role: StateRole,
    /// Ticks as leader since the last heartbeat: raft's private heartbeat_elapsed, mirrored.
    leader_ticks: usize,
}

impl Adapter {
    fn new(flags: Flags) -> Adapter {
        Adapter {
            flags,
            raw: None,
            storage: MemStorage::new(),
            role: StateRole::Follower,
            leader_ticks: 0,
        }
    }

    fn raw(&mut self) -> &mut RawNode<MemStorage> {
        self.raw.as_mut().expect("init comes first")
    }

    /// Runs `f` on the RawNode, then replaces any election timeout it drew and turns its role
    /// changes into effects.
    fn call<T>(
        &mut self,
        ctx: &mut Ctx,
        f: impl FnOnce(&mut RawNode<MemStorage>) -> T,
    ) -> Result<T> {
        LOGGED.with(|v| v.borrow_mut().clear());
        let out = f(self.raw());
        self.settle(ctx)?;
        Ok(out)
    }

    /// What raft-rs logged since LOGGED was cleared: a drawn timeout replaced, role changes
    /// turned into effects.
    fn settle(&mut self, ctx: &mut Ctx) -> Result {
        let logged: Vec<Logged> = LOGGED.with(|v| v.borrow_mut().drain(..).collect());
        if logged.contains(&Logged::Reset) {
            let (lo, hi) = (
                self.flags.election_tick as u64,
                2 * self.flags.election_tick as u64 - 1,
            );
            let t = ctx.rng.range(lo, hi) as usize;
            self.raw().raft.set_randomized_election_timeout(t);
        }
        for l in logged {
            if let Logged::Became(role, term) = l {
                self.became(ctx, role, term);
            }
        }
        let state = self.raw().raft.state;
        if state != self.role {
            return Err(Error::new(format!(
                "raft-rs adapter: raft is {state:?} but its log said {:?}: the log lines it parses changed",
                self.role
            )));
        }
        Ok(())
    }

    fn became(&mut self, ctx: &mut Ctx, role: StateRole, term: u64) {
        let was = self.role;
        self.role = role;
        if was == StateRole::Leader && role != StateRole::Leader {
            ctx.step_down();
        }
        match role {
            StateRole::PreCandidate => {
                if was == StateRole::Candidate {
                    ctx.round_failed(term);
                }
                ctx.pre_campaign(term + 1);
            }
            StateRole::Candidate => {
                if was == StateRole::Candidate {
                    ctx.round_failed(term - 1);
                }
                ctx.campaign(term);
            }
            StateRole::Leader => {
                ctx.lead(term, term);
                ctx.write(term);
                self.leader_ticks = 0;
            }
            StateRole::Follower => {}
        }
    }

    /// Handles every Ready: persist, send, apply conf changes, advance.
    fn ready(&mut self, ctx: &mut Ctx) -> Result {
        while self.raw().has_ready() {
            let mut rd = self.call(ctx, |raw| raw.ready())?;
            if !raft::is_empty_snap(&rd.snapshot) {
                // Never compacted, so never sent one: a snapshot here is a bug of ours.
                return Err(Error::new(
                    "raft-rs adapter: a snapshot to apply, but the log is never compacted",
                ));
            }
            let mut changed = false;
            if !rd.entries.is_empty() {
                self.storage.wl().append(&rd.entries).map_err(pb_err)?;
                changed = true;
            }
            if let Some(hs) = &rd.hs {
                self.storage.wl().set_hardstate(hs.clone());
                changed = true;
            }
            if changed {
                self.persist(ctx)?;
            }
            let mut msgs = std::mem::take(&mut rd.messages);
            msgs.sort_by_key(|m| m.get_to()); // stable: each peer's messages in raft's order
            for m in msgs {
                let body = json!({
                    "type": format!("{:?}", m.get_msg_type()),
                    "term": m.get_term(),
                    "pb": hex(&m.write_to_bytes().map_err(pb_err)?),
                });
                ctx.send(m.get_to() - 1, &body)?;
            }
            for e in rd.committed_entries.take().unwrap_or_default() {
                if e.get_entry_type() == EntryType::EntryConfChange {
                    let cc: ConfChange =
                        protobuf::parse_from_bytes(e.get_data()).map_err(pb_err)?;
                    self.call(ctx, |raw| raw.apply_conf_change(&cc))?;
                }
            }
            self.call(ctx, |raw| raw.advance(rd))?;
        }
        Ok(())
    }

    /// The durable state: HardState and the whole log (never compacted; one entry per
    /// term won, plus the members' conf changes).
    fn persist(&self, ctx: &mut Ctx) -> Result {
        let hs = self.storage.initial_state().map_err(pb_err)?.hard_state;
        let (first, last) = (
            self.storage.first_index().map_err(pb_err)?,
            self.storage.last_index().map_err(pb_err)?,
        );
        let entries = if last >= first {
            self.storage
                .entries(first, last + 1, u64::MAX)
                .map_err(pb_err)?
        } else {
            Vec::new()
        };
        let mut hexed = Vec::with_capacity(entries.len());
        for e in &entries {
            hexed.push(hex(&e.write_to_bytes().map_err(pb_err)?));
        }
        ctx.persist(&json!({
            "hs": {"term": hs.get_term(), "vote": hs.get_vote(), "commit": hs.get_commit()},
            "entries": hexed,
        }))
    }

    /// The reply's term and leader, every step.
    fn report(&mut self, ctx: &mut Ctx) -> Result {
        let (term, leader) = (self.raw().raft.term, self.raw().raft.leader_id);
        ctx.set_term(term);
        if leader == raft::INVALID_ID {
            ctx.clear_leader();
            Ok(())
        } else {
            ctx.set_leader(leader - 1)
        }
    }
}

impl Handler for Adapter {
    fn init(&mut self, ctx: &mut Ctx, durable: Option<&Value>) -> Result {
        *self = Adapter::new(self.flags.clone()); // init resets everything
        let cfg = Config {
            id: ctx.me + 1,
            election_tick: self.flags.election_tick,
            heartbeat_tick: self.flags.heartbeat_tick,
            max_size_per_msg: 1 << 20,
            max_inflight_msgs: 256,
            pre_vote: self.flags.pre_vote,
            check_quorum: self.flags.check_quorum,
            tag: format!("{}", ctx.me + 1),
            ..Config::default()
        };
        let mut peers = Vec::new();
        if let Some(d) = durable {
            // A restart: the log and HardState back into storage; the members come back as
            // the committed conf changes are applied again (the first Ready below).
            let bad = || Error::new(format!("raft-rs adapter: unreadable durable state {d}"));
            let hs = &d["hs"];
            let mut h = HardState::new();
            h.set_term(hs["term"].as_u64().ok_or_else(bad)?);
            h.set_vote(hs["vote"].as_u64().ok_or_else(bad)?);
            h.set_commit(hs["commit"].as_u64().ok_or_else(bad)?);
            let mut entries = Vec::new();
            for e in d["entries"].as_array().ok_or_else(bad)? {
                let e: Entry = protobuf::parse_from_bytes(&unhex(e.as_str().ok_or_else(bad)?)?)
                    .map_err(pb_err)?;
                entries.push(e);
            }
            self.storage.wl().set_hardstate(h);
            self.storage.wl().append(&entries).map_err(pb_err)?;
        } else {
            // A new cluster: RawNode::new writes the members' conf changes as entries 1..n.
            peers = ctx
                .members
                .iter()
                .map(|&m| Peer {
                    id: m + 1,
                    context: None,
                })
                .collect();
        }
        LOGGED.with(|v| v.borrow_mut().clear());
        let raw = RawNode::new(&cfg, self.storage.clone(), peers).map_err(pb_err)?;
        self.raw = Some(raw);
        self.settle(ctx)?; // the timeout raft-rs drew while starting
        self.ready(ctx)?;
        // Processes do not start in lockstep: the first tick at a random point of a tick.
        let first = ctx.rng.duration(Duration::from_nanos(1), self.flags.tick);
        ctx.set_timer("tick", first)?;
        self.report(ctx)
    }

    fn message(&mut self, ctx: &mut Ctx, from: u64, body: &Body) -> Result {
        let pb = body.value["pb"]
            .as_str()
            .ok_or_else(|| Error::new(format!("raft-rs adapter: no pb in {}", body.value)))?;
        let m: Message = protobuf::parse_from_bytes(&unhex(pb)?).map_err(pb_err)?;
        if m.get_from() != from + 1 || m.get_to() != ctx.me + 1 {
            return Err(Error::new(format!(
                "raft-rs adapter: a message from {} to {} delivered from member {from} to member {}",
                m.get_from(),
                m.get_to(),
                ctx.me
            )));
        }
        if let Err(e) = self.call(ctx, |raw| raw.step(m))? {
            eprintln!("raft-rs adapter: step: {e}"); // e.g. a message from a removed peer
        }
        self.ready(ctx)?;
        self.report(ctx)
    }

    fn timer(&mut self, ctx: &mut Ctx, _name: &str) -> Result {
        let was_leader = self.raw().raft.state == StateRole::Leader;
        self.call(ctx, |raw| raw.tick())?;
        let term = self.raw().raft.term;
        if was_leader && self.role == StateRole::Leader {
            // raft's heartbeat_elapsed: a heartbeat every heartbeat_tick ticks as leader.
            self.leader_ticks += 1;
            if self.leader_ticks >= self.flags.heartbeat_tick {
                self.leader_ticks = 0;
                ctx.write(term);
            }
        }
        self.ready(ctx)?;
        ctx.set_timer("tick", self.flags.tick)?;
        self.report(ctx)
    }

    /// Hands leadership to the most up-to-date follower (lowest id on a tie):
    /// `RawNode::transfer_leader`, which sends it MsgTimeoutNow once it has caught up.
    fn resign(&mut self, ctx: &mut Ctx) -> Result {
        if self.raw().raft.state != StateRole::Leader {
            return Ok(());
        }
        let me = ctx.me + 1;
        let mut best: Option<(u64, u64)> = None; // (matched, id)
        for (&id, pr) in self.raw().raft.prs().voters() {
            if id != me && best.is_none_or(|(m, b)| pr.matched > m || (pr.matched == m && id < b)) {
                best = Some((pr.matched, id));
            }
        }
        if let Some((_, id)) = best {
            self.call(ctx, |raw| raw.transfer_leader(id))?;
            self.ready(ctx)?;
        }
        self.report(ctx)
    }
}

fn main() {
    let flags = Flags::parse(std::env::args().skip(1)).unwrap_or_else(|e| {
        eprintln!("raft-rs adapter: {e}\nusage: raft-rs-0.3.x [--election-tick N] [--heartbeat-tick N] [--tick 100ms] [--pre-vote] [--check-quorum]");
        std::process::exit(2);
    });
    log::set_logger(&CAPTURE).expect("the only logger");
    log::set_max_level(log::LevelFilter::Debug);
    let messages: Vec<String> = WIRE.iter().map(|t| format!("{t:?}")).collect();
    let spec = Spec {
        messages,
        timers: vec!["tick".into()],
    };
    run(spec, Adapter::new(flags));
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_node::Node;

    fn install_logger() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            log::set_logger(&CAPTURE).unwrap();
            log::set_max_level(log::LevelFilter::Debug);
        });
    }

    fn flags(args: &[&str]) -> std::result::Result<Flags, String> {
        Flags::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn flags_and_their_defaults() {
        let f = flags(&[]).unwrap();
        assert_eq!(
            (f.election_tick, f.heartbeat_tick, f.tick),
            (10, 3, Duration::from_millis(100))
        );
        assert!(!f.pre_vote && !f.check_quorum);
        let f = flags(&[
            "--pre-vote",
            "--check-quorum",
            "--election-tick",
            "3",
            "--heartbeat-tick",
            "1",
            "--tick",
            "50ms",
        ])
        .unwrap();
        assert_eq!(
            (f.election_tick, f.heartbeat_tick, f.tick),
            (3, 1, Duration::from_millis(50))
        );
        assert!(f.pre_vote && f.check_quorum);
        assert!(flags(&["--election-tick", "1", "--heartbeat-tick", "1"]).is_err());
        assert!(flags(&["--tick", "5 minutes"]).is_err());
        assert!(flags(&["--verbose"]).is_err());
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        assert_eq!(unhex("000fff").unwrap(), vec![0, 15, 255]);
        assert!(unhex("0").is_err() && unhex("zz").is_err());
    }

    /// Three adapters driven by hand: node 0 ticks until it pre-campaigns, every message is
    /// delivered at once. Returns every reply, in order.
    fn elect(seed: u64) -> Vec<String> {
        install_logger();
        let f = flags(&["--pre-vote", "--check-quorum"]).unwrap();
        let mut nodes: Vec<Node<Adapter>> = Vec::new();
        let spec = Spec {
            messages: WIRE.iter().map(|t| format!("{t:?}")).collect(),
            timers: vec!["tick".into()],
        };
        let mut replies = Vec::new();
        let mut step = 0;
        let mut ev = |n: &mut Node<Adapter>, fields: String, replies: &mut Vec<String>| -> Value {
            step += 1;
            let r = n
                .step(&format!(
                    r#"{{{fields},"step":{step},"mono_ns":{step},"wall_ns":{step}}}"#
                ))
                .unwrap();
            replies.push(r.clone());
            serde_json::from_str(&r).unwrap()
        };
        for i in 0..3 {
            let mut n = Node::new(spec.clone(), Adapter::new(f.clone())).unwrap();
            let init = format!(
                r#""type":"init","protocol":2,"node":{i},"members":[0,1,2],"service":null,"seed":{},"restart":false,"durable":null"#,
                seed + i
            );
            let r = ev(&mut n, init, &mut replies);
            assert_eq!(
                r["effects"][0]["type"], "persist",
                "the bootstrap entries: {r}"
            );
            assert_eq!(r["term"], 1);
            nodes.push(n);
        }
        let mut queue: Vec<(u64, Value)> = Vec::new();
        for _ in 0..20 {
            let r = ev(
                &mut nodes[0],
                r#""type":"timer","name":"tick""#.into(),
                &mut replies,
            );
            if r["effects"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["type"] == "pre_campaign")
            {
                queue.push((0, r));
                break;
            }
        }
        assert_eq!(queue.len(), 1, "node 0 pre-campaigns within 20 ticks");
        while let Some((from, r)) = queue.pop() {
            for e in r["effects"].as_array().unwrap() {
                if e["type"] == "send" {
                    let to = e["to"].as_u64().unwrap();
                    let fields = format!(r#""type":"message","from":{from},"body":{}"#, e["body"]);
                    let next = ev(&mut nodes[to as usize], fields, &mut replies);
                    queue.insert(0, (to, next));
                }
            }
        }
        replies
    }

    #[test]
    fn pre_vote_then_vote_then_lead() {
        let replies = elect(1);
        let all = replies.join("\n");
        let at = |s: &str| all.find(s).unwrap_or_else(|| panic!("no {s} in\n{all}"));
        assert!(at(r#"{"type":"pre_campaign","term":2}"#) < at(r#"{"type":"campaign","term":2}"#));
        assert!(
            at(r#"{"type":"campaign","term":2}"#) < at(r#"{"type":"lead","term":2,"token":2}"#)
        );
        assert!(all.contains(r#"{"type":"write","token":2}"#));
        // The vote is persisted before the answer leaves.
        let vote = replies
            .iter()
            .find(|r| r.contains(r#""type":"MsgRequestVoteResponse""#))
            .unwrap();
        assert!(
            vote.find("persist") < vote.find("MsgRequestVoteResponse"),
            "{vote}"
        );
        assert!(replies.last().unwrap().contains(r#""leader":0"#));
    }

    /// The same seed gives the same transcript: the election timeouts raft-rs draws from
    /// thread_rng are all replaced (two runs in one process would otherwise differ).
    #[test]
    fn the_seed_decides_the_timeouts() {
        assert_eq!(elect(7), elect(7));
        let ticks = |r: &Vec<String>| r.iter().filter(|l| l.contains("pre_campaign")).count();
        assert_eq!(ticks(&elect(7)), 1);
    }
}
