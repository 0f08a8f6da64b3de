//! An election member that is an OS process: each engine event becomes one protocol line,
//! and the node's one reply line becomes effects (`docs/protocol.md`).

use super::pipe::{self, Launch, NodeProc};
use super::wire::{NodeMsg, Wire};
use crate::text::{shorten, shorten_to};
use crate::transcript;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use splitbrain_sim::{Ctx, MemberChange, Message, Names, NodeId, Signal, TimerKind};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// The context a node's handlers act through.
type NodeCtx<'a, M> = Ctx<'a, Wire<M>, ExternalTimer, DurableText>;

/// A timer slot: its index in the run's timer names (the node's, then a service's).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExternalTimer(pub u16);

impl TimerKind for ExternalTimer {
    /// The names are the node's own, known at run time ([`Names`]).
    const NAMES: &'static [&'static str] = &[];
    fn index(self) -> usize {
        usize::from(self.0)
    }

    fn from_index(index: usize) -> Self {
        ExternalTimer(u16::try_from(index).expect("at most 65,536 timer names"))
    }
}

/// What a node persisted: its `persist` effect's `state`, as the JSON text it wrote.
pub type DurableText = Arc<str>;

/// How a node runs: its process, the deadline per event, and whether a restart starts a new
/// process.
#[derive(Clone, Debug)]
pub(crate) struct NodeSetup {
    pub launch: Launch,
    pub deadline: Duration,
    pub fresh_process: bool,
    /// How many members the run has (ids `0..members`).
    pub members: usize,
    /// The service processes a client may send requests to, in id order: the one service
    /// process, each member of a clustered etcd or ZooKeeper, the API servers in front of
    /// the Kubernetes Lease's etcd. Empty without a service.
    pub services: Vec<NodeId>,
    /// The message types a client may send them (the service's requests, by name); any
    /// other (an answer, the members' own traffic) is refused at the send.
    pub requests: &'static [&'static str],
    /// The run's names: the node's declared ones first, then the service's.
    pub names: Names,
    /// How many of `names.messages` (and `.timers`) are the node's own.
    pub own_messages: usize,
    /// How many of `names.timers` are the node's own.
    pub own_timers: usize,
}

/// One election member run as an OS process over the step protocol.
pub struct ExternalNode {
    me: NodeId,
    members: usize,
    setup: NodeSetup,
    proc: Option<NodeProc>,
    /// Events sent in this run (the step an error names).
    steps: u64,
    /// The term and leader the node last reported.
    term: u64,
    leader: Option<NodeId>,
    /// The digest of its whole state it last reported (the reply's optional `digest`), as
    /// written; `None` until it reports one, and again after each `init`.
    digest: Option<String>,
    /// What the disk gave back at the last restart.
    restored: Option<DurableText>,
    /// The service process it sent a request to last in this life (the member its client
    /// uses, for the `ServiceOfLeader` fault target).
    last_service: Option<NodeId>,
    /// Set once the node failed: it handles nothing more (the run is ending).
    failed: bool,
    /// The event line being written (kept to reuse its allocation).
    line: String,
}

impl std::fmt::Debug for ExternalNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalNode")
            .field("me", &self.me)
            .field("command", &self.setup.launch.command)
            .field("steps", &self.steps)
            .field("term", &self.term)
            .finish_non_exhaustive()
    }
}

impl Drop for ExternalNode {
    /// The process goes back to this thread's pool for the next run, unless it failed.
    fn drop(&mut self) {
        if let Some(proc) = self.proc.take()
            && !self.failed
        {
            pipe::give_back(self.setup.launch.clone(), proc);
        }
    }
}

/// One reply line, borrowed from the bytes read.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply<'a> {
    #[serde(default, borrow)]
    effects: Vec<EffectLine<'a>>,
    #[serde(default)]
    term: Option<u64>,
    #[serde(default, borrow, deserialize_with = "present")]
    leader: Option<Option<&'a RawValue>>,
    /// The event's step, echoed (protocol version 2).
    #[serde(default)]
    step: Option<u64>,
    /// A digest of the node's whole state after the step, any JSON value (optional).
    #[serde(default, borrow, deserialize_with = "any_json")]
    digest: Option<&'a RawValue>,
}

/// `"leader": null` is `Some(None)`; a missing `leader` is `None` (unchanged).
fn present<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<&'a RawValue>>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// Any JSON value, `null` included, as written: `Some` whenever the field is there.
fn any_json<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'a RawValue>, D::Error> {
    <&RawValue as serde::Deserialize>::deserialize(d).map(Some)
}

/// One effect as written: every field any effect has, checked per type afterwards.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EffectLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    to: Option<&'a RawValue>,
    #[serde(default, borrow)]
    body: Option<&'a RawValue>,
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    after_ns: Option<u64>,
    #[serde(default)]
    at_wall_ns: Option<i64>,
    #[serde(default, borrow, deserialize_with = "any_json")]
    state: Option<&'a RawValue>,
    #[serde(default)]
    term: Option<u64>,
    #[serde(default)]
    token: Option<u64>,
    #[serde(default, borrow, deserialize_with = "any_json")]
    value: Option<&'a RawValue>,
    #[serde(default, borrow)]
    peer: Option<&'a RawValue>,
}

/// The `type` (and `term`, for the trace) of a message body.
#[derive(serde::Deserialize)]
struct BodyHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    term: Option<u64>,
}

/// One effect, checked, before any is handed to the engine.
enum Act<M> {
    Send(NodeId, Wire<M>),
    SetTimer(ExternalTimer, u64),
    SetWallTimer(ExternalTimer, i64),
    CancelTimer(ExternalTimer),
    Persist(DurableText),
    Lead(u64, u64),
    StepDown,
    Write(u64),
    Campaign(u64),
    PreCampaign(u64),
    RoundFailed(u64),
    Observe(&'static str, splitbrain_sim::property::Value),
    Disconnect(NodeId),
}

/// The effect types, as `docs/protocol.md` lists them.
const EFFECT_TYPES: &str = "send, set_timer, set_wall_timer, cancel_timer, persist, lead, \
                            step_down, write, campaign, pre_campaign, round_failed, observe, \
                            disconnect";

impl ExternalNode {
    pub(crate) fn new(me: NodeId, members: usize, setup: NodeSetup, proc: NodeProc) -> Self {
        Self {
            me,
            members,
            setup,
            proc: Some(proc),
            steps: 0,
            term: 0,
            leader: None,
            digest: None,
            restored: None,
            last_service: None,
            failed: false,
            line: String::with_capacity(256),
        }
    }

    /// The protocol version agreed with the node's process.
    fn protocol(&self) -> u32 {
        self.proc.as_ref().map_or(1, |p| p.declared.protocol)
    }

    /// The node's current term, as it last reported it.
    pub fn term(&self) -> u64 {
        self.term
    }

    /// What the node last reported, and how many events it was sent (for `run --stop-at`).
    pub fn inspect(&self) -> Vec<(&'static str, String)> {
        let leader = self.leader.map_or("none".to_string(), |n| n.to_string());
        vec![
            ("reported_term", self.term.to_string()),
            ("reported_leader", leader),
            ("steps", self.steps.to_string()),
        ]
    }

    /// A digest of the node's state for a systematic search: the `digest` it last reported,
    /// with its term and leader; `None` if it reports none (the engine then digests
    /// [`ExternalNode::inspect`], whose step count makes every state new: nothing is pruned).
    pub fn digest(&self) -> Option<u64> {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let reported = self.digest.as_ref()?;
        let mut h = DefaultHasher::new();
        (reported, self.term, self.leader).hash(&mut h);
        Some(h.finish())
    }

    /// The leader the node last reported.
    pub fn known_leader(&self) -> Option<NodeId> {
        self.leader
    }

    /// The service process it sent a request to last since it started or restarted.
    pub fn service_member_used(&self) -> Option<NodeId> {
        self.last_service
    }

    /// `init`, at the start (`restart` false) or after a crash.
    pub(crate) fn on_init<M>(&mut self, ctx: &mut NodeCtx<'_, M>, restart: bool)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        if restart && self.setup.fresh_process && !self.failed {
            self.proc = None;
            match pipe::NodeProc::spawn(&self.setup.launch, self.setup.deadline) {
                Ok(proc) => self.proc = Some(proc),
                Err(reason) => return self.fail(ctx, format!("restarting it: {reason}")),
            }
        }
        if !restart {
            // A new run. After a crash, the term stays what the node last reported until it
            // reports another (a term is durable); whom it follows is not.
            self.steps = 0;
            self.term = 0;
        }
        self.leader = None;
        self.digest = None;
        let seed = ctx.rng().next_u64() & ((1 << 53) - 1);
        let protocol = self.protocol();
        let line = &mut self.line;
        line.clear();
        let _ = write!(
            line,
            "{{\"type\":\"init\",\"protocol\":{},\"node\":{},\"members\":[",
            protocol, self.me.0
        );
        for i in 0..self.members {
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(line, "{comma}{i}");
        }
        self.last_service = None;
        let service = self
            .setup
            .services
            .first()
            .map_or("null".to_string(), |s| s.0.to_string());
        let services: Vec<String> = self
            .setup
            .services
            .iter()
            .map(|s| s.0.to_string())
            .collect();
        let durable = if restart {
            self.restored.as_deref()
        } else {
            None
        };
        let _ = write!(
            line,
            "],\"service\":{service},\"services\":[{}],\"seed\":{seed},\"restart\":{restart},\"durable\":{}",
            services.join(","),
            durable.unwrap_or("null")
        );
        self.exchange(ctx);
    }

    /// A message delivered from `from`.
    pub(crate) fn on_message<M>(&mut self, ctx: &mut NodeCtx<'_, M>, from: NodeId, msg: Wire<M>)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        self.line.clear();
        let _ = write!(
            self.line,
            "{{\"type\":\"message\",\"from\":{},\"body\":",
            from.0
        );
        match &msg {
            Wire::Node(m) => self.line.push_str(&m.body),
            Wire::Service { msg, .. } => {
                let body = serde_json::to_string(msg).expect("service messages serialize");
                self.line.push_str(&body);
            }
        }
        self.exchange(ctx);
    }

    /// The armed timer `timer` fired.
    pub(crate) fn on_timer<M>(&mut self, ctx: &mut NodeCtx<'_, M>, timer: ExternalTimer)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        let name = self
            .setup
            .names
            .timers
            .get(timer.index())
            .copied()
            .unwrap_or("?");
        self.line.clear();
        let _ = write!(self.line, "{{\"type\":\"timer\",\"name\":\"{name}\"");
        self.exchange(ctx);
    }

    /// The scenario asked the leader to hand over.
    pub(crate) fn on_resign<M>(&mut self, ctx: &mut NodeCtx<'_, M>)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        self.line.clear();
        self.line.push_str("{\"type\":\"resign\"");
        self.exchange(ctx);
    }

    /// The scenario asked the node to propose a membership change (docs/protocol.md,
    /// `conf_change`).
    pub(crate) fn on_conf_change<M>(&mut self, ctx: &mut NodeCtx<'_, M>, change: MemberChange)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        self.line.clear();
        let _ = write!(
            self.line,
            "{{\"type\":\"conf_change\",\"op\":\"{}\",\"node\":{}",
            change.op(),
            change.member()
        );
        self.exchange(ctx);
    }

    /// The `Stream` connection to `peer` broke.
    pub(crate) fn on_disconnect<M>(&mut self, ctx: &mut NodeCtx<'_, M>, peer: NodeId)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        self.line.clear();
        let _ = write!(self.line, "{{\"type\":\"disconnect\",\"peer\":{}", peer.0);
        self.exchange(ctx);
    }

    /// What the disk gave back at a restart.
    pub(crate) fn restore(&mut self, durable: Option<DurableText>) {
        self.restored = durable;
    }

    /// Ends the event line with the clock readings, sends it, and turns the reply into
    /// effects; any failure ends the run, located.
    fn exchange<M>(&mut self, ctx: &mut NodeCtx<'_, M>)
    where
        M: Message + Serialize + DeserializeOwned,
    {
        if self.failed {
            return;
        }
        self.steps += 1;
        let _ = writeln!(
            self.line,
            ",\"step\":{},\"mono_ns\":{},\"wall_ns\":{}}}",
            self.steps,
            ctx.monotonic_now(),
            ctx.wall_now()
        );
        let Some(proc) = self.proc.as_mut() else {
            return self.fail(ctx, "its process is gone".to_string());
        };
        let range = match proc.exchange(self.line.as_bytes(), self.setup.deadline) {
            Ok(range) => range,
            Err(reason) => return self.fail(ctx, reason),
        };
        let logs = proc.take_log_lines();
        // The reply is parsed where it was read: no copy of it is made.
        let reply = proc.reply(range);
        transcript::record(self.me, &self.line, reply);
        let echoes_steps = proc.declared.echoes_steps();
        let parsed = self
            .setup
            .parse::<M>(reply, self.steps, echoes_steps)
            .map_err(|problem| {
                let text = String::from_utf8_lossy(reply);
                format!(
                    "{}; its line: `{}`",
                    shorten_to(&problem, 1_500),
                    shorten(&text)
                )
            });
        for line in logs {
            ctx.log(line);
        }
        match parsed {
            Ok(parsed) => {
                self.term = parsed.term.unwrap_or(self.term);
                if let Some(leader) = parsed.leader {
                    self.leader = leader;
                }
                if parsed.digest.is_some() {
                    self.digest = parsed.digest;
                }
                let services = &self.setup.services;
                let to_service = parsed.acts.iter().rev().find_map(|act| match act {
                    Act::Send(to, _) if services.contains(to) => Some(*to),
                    _ => None,
                });
                self.last_service = to_service.or(self.last_service);
                Self::act(ctx, parsed.acts);
            }
            Err(problem) => self.fail(ctx, problem),
        }
    }

    /// Ends the run: `reason`, with the step and the event that led to it.
    fn fail<M>(&mut self, ctx: &mut NodeCtx<'_, M>, reason: String) {
        self.failed = true;
        self.proc = None;
        let event = shorten(self.line.trim_end());
        // The node's last stderr lines, if quoted, go last.
        let (reason, stderr) = match reason.split_once(pipe::STDERR_WORDS) {
            Some((reason, lines)) => (reason.to_string(), format!("{}{lines}", pipe::STDERR_WORDS)),
            None => (reason, String::new()),
        };
        ctx.fail(format!(
            "step {} of its process ({}): {reason}; the event was `{event}`{stderr}",
            self.steps,
            shorten(&self.setup.launch.command.join(" "))
        ));
    }

    /// Hands the checked effects to the engine, in order.
    fn act<M>(ctx: &mut NodeCtx<'_, M>, acts: Vec<Act<M>>) {
        for act in acts {
            match act {
                Act::Send(to, msg) => ctx.send(to, msg),
                Act::SetTimer(timer, after_ns) => ctx.set_timer(timer, after_ns),
                Act::SetWallTimer(timer, at) => ctx.set_wall_timer(timer, at),
                Act::CancelTimer(timer) => ctx.cancel_timer(timer),
                Act::Persist(state) => ctx.persist(state),
                Act::Lead(term, token) => ctx.became_leader(term, token),
                Act::StepDown => ctx.stepped_down(),
                Act::Write(token) => ctx.write(token),
                Act::Campaign(term) => ctx.signal(Signal::ElectionStarted { term }),
                Act::PreCampaign(term) => ctx.signal(Signal::PreVoteStarted { term }),
                Act::RoundFailed(term) => ctx.signal(Signal::ElectionRoundFailed { term }),
                Act::Observe(name, value) => ctx.observe(name, value),
                Act::Disconnect(peer) => ctx.disconnect(peer),
            }
        }
    }
}

impl NodeSetup {
    /// The reply's effects, checked, with the term and leader it reports.
    ///
    /// `step` is the event's; a reply that echoes another step (one `echoes_steps` must
    /// echo, under protocol version 2) is a line written out of turn.
    fn parse<M>(&self, reply: &[u8], step: u64, echoes_steps: bool) -> Result<Parsed<M>, String>
    where
        M: Message + DeserializeOwned,
    {
        let text =
            std::str::from_utf8(reply).map_err(|e| format!("the reply is not UTF-8 ({e})"))?;
        let reply: Reply = serde_json::from_str(text)
            .map_err(|e| format!("the reply is not a reply object ({e})"))?;
        check_step(reply.step, step, echoes_steps)?;
        let leader = match reply.leader {
            Some(Some(raw)) => Some(Some(self.node_id(raw, "leader", false)?)),
            Some(None) => Some(None),
            None => None,
        };
        let mut acts = Vec::with_capacity(reply.effects.len());
        for (i, effect) in reply.effects.iter().enumerate() {
            let act = self.effect(effect).map_err(|problem| {
                format!("effect {i} (`{}`): {problem}", shorten(&effect.kind))
            })?;
            acts.push(act);
        }
        Ok(Parsed {
            acts,
            term: reply.term,
            leader,
            digest: reply.digest.map(|raw| raw.get().to_string()),
        })
    }

    /// One effect, checked: its type known, its fields those of its type.
    fn effect<M>(&self, e: &EffectLine<'_>) -> Result<Act<M>, String>
    where
        M: Message + DeserializeOwned,
    {
        let fields: &[&str] = match &*e.kind {
            "send" => &["to", "body"],
            "set_timer" => &["name", "after_ns"],
            "set_wall_timer" => &["name", "at_wall_ns"],
            "cancel_timer" => &["name"],
            "persist" => &["state"],
            "lead" => &["term", "token"],
            "step_down" => &[],
            "write" => &["token"],
            "campaign" => &["term"],
            "pre_campaign" => &["term"],
            "round_failed" => &["term"],
            "observe" => &["name", "value"],
            "disconnect" => &["peer"],
            other => {
                return Err(format!(
                    "unknown effect type `{}` (known: {EFFECT_TYPES})",
                    shorten(other)
                ))
            }
        };
        check_fields(e, fields)?;
        let need = |field: &str| format!("missing field `{field}`");
        let act = match &*e.kind {
            "send" => {
                let to = self.node_id(e.to.ok_or_else(|| need("to"))?, "to", true)?;
                self.send(to, e.body.ok_or_else(|| need("body"))?)?
            }
            "set_timer" => Act::SetTimer(
                self.timer(e.name.as_deref())?,
                e.after_ns.ok_or_else(|| need("after_ns"))?,
            ),
            "set_wall_timer" => Act::SetWallTimer(
                self.timer(e.name.as_deref())?,
                e.at_wall_ns.ok_or_else(|| need("at_wall_ns"))?,
            ),
            "cancel_timer" => Act::CancelTimer(self.timer(e.name.as_deref())?),
            "persist" => Act::Persist(Arc::from(e.state.ok_or_else(|| need("state"))?.get())),
            "lead" => Act::Lead(
                e.term.ok_or_else(|| need("term"))?,
                e.token.ok_or_else(|| need("token"))?,
            ),
            "step_down" => Act::StepDown,
            "write" => Act::Write(e.token.ok_or_else(|| need("token"))?),
            "campaign" => Act::Campaign(e.term.ok_or_else(|| need("term"))?),
            "pre_campaign" => Act::PreCampaign(e.term.ok_or_else(|| need("term"))?),
            "round_failed" => Act::RoundFailed(e.term.ok_or_else(|| need("term"))?),
            "observe" => {
                let name = e.name.as_deref().ok_or_else(|| need("name"))?;
                Act::Observe(
                    observation_name(name)?,
                    value(e.value.ok_or_else(|| need("value"))?)?,
                )
            }
            _ => {
                Act::Disconnect(self.node_id(e.peer.ok_or_else(|| need("peer"))?, "peer", true)?)
            }
        };
        Ok(act)
    }

    /// A send to `to`: to the modeled service, its request form; to a member, the body as
    /// written, of a declared type.
    fn send<M>(&self, to: NodeId, body: &RawValue) -> Result<Act<M>, String>
    where
        M: Message + DeserializeOwned,
    {
        let raw = body.get();
        if self.services.contains(&to) {
            let msg: M = serde_json::from_str(raw)
                .map_err(|e| format!("the body is not a request the service knows ({e}); see docs/protocol-services.md"))?;
            let name = M::KINDS[msg.kind()];
            if !self.requests.contains(&name) {
                return Err(format!(
                    "`{name}` is not a request a client sends this service (its requests: {}); \
                     see docs/protocol-services.md",
                    self.requests.join(", ")
                ));
            }
            let kind = self.own_messages + msg.kind();
            return Ok(Act::Send(
                to,
                Wire::Service {
                    kind: to_u16(kind),
                    msg,
                },
            ));
        }
        if !raw.starts_with('{') {
            return Err("the body must be a JSON object with a `type`".to_string());
        }
        let head: BodyHead = serde_json::from_str(raw).map_err(|e| {
            format!("the body needs a string `type` (and an integer `term`, if any): {e}")
        })?;
        let own = &self.names.messages[..self.own_messages];
        let kind = own.iter().position(|k| *k == head.kind).ok_or_else(|| {
            format!(
                "message type `{}` was not declared in `hello_ok` (declared: {})",
                shorten(&head.kind),
                shorten(&own.join(", "))
            )
        })?;
        Ok(Act::Send(
            to,
            Wire::Node(NodeMsg {
                kind: to_u16(kind),
                term: head.term.unwrap_or(0),
                body: Arc::from(raw),
            }),
        ))
    }

    /// The node `raw` names in `field`: a member, or (if `service_ok`) a service process a
    /// client may use ([`NodeSetup::services`]).
    fn node_id(&self, raw: &RawValue, field: &str, service_ok: bool) -> Result<NodeId, String> {
        let services: &[NodeId] = if service_ok { &self.services } else { &[] };
        let among = match services {
            [] => format!("members are 0 to {}", self.members - 1),
            [one] => format!(
                "members are 0 to {}, the service is {}",
                self.members - 1,
                one.0
            ),
            [first, .., last] => format!(
                "members are 0 to {}, the service's are {} to {}",
                self.members - 1,
                first.0,
                last.0
            ),
        };
        let id: u64 = serde_json::from_str(raw.get()).map_err(|_| {
            format!(
                "`{field}` must be a node id, an integer ({among}), not `{}`",
                shorten(raw.get())
            )
        })?;
        let node = u32::try_from(id).map(NodeId).ok();
        match node {
            Some(node) if node.index() < self.members || services.contains(&node) => Ok(node),
            _ => Err(format!(
                "`{field}` is {id}, which is no node of this run ({among})"
            )),
        }
    }

    /// The slot of the timer `name`, one the node declared.
    fn timer(&self, name: Option<&str>) -> Result<ExternalTimer, String> {
        let name = name.ok_or("missing field `name`")?;
        let own = &self.names.timers[..self.own_timers];
        let index = own.iter().position(|t| *t == name).ok_or_else(|| {
            format!(
                "timer `{}` was not declared in `hello_ok` (declared: {})",
                shorten(name),
                shorten(&own.join(", "))
            )
        })?;
        Ok(ExternalTimer(to_u16(index)))
    }
}

/// A reply, checked: its effects, and the term and leader it reports.
struct Parsed<M> {
    acts: Vec<Act<M>>,
    term: Option<u64>,
    leader: Option<Option<NodeId>>,
    digest: Option<String>,
}

/// Refuses a reply that echoes a step other than the event's, or (under protocol version
/// 2) none: a line written out of turn would shift every later reply onto the next event.
fn check_step(echoed: Option<u64>, step: u64, echoes_steps: bool) -> Result<(), String> {
    match echoed {
        Some(echoed) if echoed != step => Err(format!(
            "the reply is for step {echoed}, but this event is step {step}: the node wrote a \
             line out of turn (a print to stdout? print debugging goes to stderr)"
        )),
        None if echoes_steps => Err(format!(
            "missing field `step`: a node that speaks protocol version 2 echoes each event's \
             `step` in its reply (this event is step {step})"
        )),
        _ => Ok(()),
    }
}

/// Refuses a field the effect's type does not have.
fn check_fields(e: &EffectLine<'_>, allowed: &[&str]) -> Result<(), String> {
    let present = [
        ("to", e.to.is_some()),
        ("body", e.body.is_some()),
        ("name", e.name.is_some()),
        ("after_ns", e.after_ns.is_some()),
        ("at_wall_ns", e.at_wall_ns.is_some()),
        ("state", e.state.is_some()),
        ("term", e.term.is_some()),
        ("token", e.token.is_some()),
        ("value", e.value.is_some()),
        ("peer", e.peer.is_some()),
    ];
    match present
        .iter()
        .find(|(field, set)| *set && !allowed.contains(field))
    {
        Some((field, _)) => Err(format!(
            "field `{field}` does not belong to this effect type"
        )),
        None => Ok(()),
    }
}

/// An `observe` effect's value: `null`, a bool, an integer, or a pair of integers.
fn value(raw: &RawValue) -> Result<splitbrain_sim::property::Value, String> {
    use splitbrain_sim::property::Value;
    let parsed: serde_json::Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
    let value = match parsed {
        serde_json::Value::Null => Value::Unit,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Value::U64(u),
            (None, Some(i)) => Value::I64(i),
            _ => return Err(format!("`{n}` is not an integer")),
        },
        serde_json::Value::Array(pair) => match pair.as_slice() {
            [a, b] => match (a.as_u64(), b.as_u64()) {
                (Some(a), Some(b)) => Value::Pair(a, b),
                _ => return Err("a pair must be two non-negative integers".to_string()),
            },
            _ => return Err("an array value must be a pair of integers".to_string()),
        },
        other => {
            return Err(format!(
            "`{other}` is not a value an observation takes (null, a bool, an integer or a pair)"
        ))
        }
    };
    Ok(value)
}

/// An observation's name, made `'static` once per distinct name (as property names are).
fn observation_name(name: &str) -> Result<&'static str, String> {
    super::names::check_name(name)?;
    Ok(super::names::intern_one(name))
}

fn to_u16(index: usize) -> u16 {
    u16::try_from(index).expect("at most 65,536 names")
}
