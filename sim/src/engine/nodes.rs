//! Running processes: handler calls, effects, timers, delivery, pauses, stalls, crashes.

use super::{EventData, Held, Payload, Sim, Via};
use crate::fault::MemberChange;
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::liveness::Recognition;
use crate::network::Transit;
use crate::process::{Ctx, Effect, Message, Names, Process, Signal, TimerKind};
use crate::property::{Observation, WriteOutcome};
use crate::refused::{HandlerEvent, HandlerGuard, Handling};
use crate::resource::WriteVerdict;
use crate::time::{LocalNanos, Nanos};
use crate::trace::{EventKind, Name};

/// A process's run state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Running: events are handled as they come due.
    Up,
    /// Handling nothing until `until_ns`; what comes due is held.
    Paused {
        /// True time at which the pause ends.
        until_ns: Nanos,
    },
    /// Down until a restart: events addressed to it are dropped.
    Crashed,
}

/// What a handler call is for.
pub(super) enum Input<M, T> {
    Start,
    Message {
        from: NodeId,
        sent_ns: Nanos,
        msg: M,
    },
    Timer(T),
    Restart,
    Resign,
    ConfChange(MemberChange),
    /// The workload asks the process whether it leads and writes if so.
    Workload,
    /// The `Stream` connection to `peer` broke.
    Disconnected {
        peer: NodeId,
    },
}

/// What the trace event of a handler call, a refused effect and a panic record need of its
/// input, taken before the handler consumes it. Plain data, so that it costs a few
/// registers and carries nothing that needs dropping.
#[derive(Clone, Copy)]
pub(super) enum Call {
    Start,
    Message {
        kind: usize,
        from: NodeId,
        sent_ns: Nanos,
    },
    Timer(usize),
    Restart,
    Resign,
    ConfChange(MemberChange),
    Workload,
    Disconnected(NodeId),
}

impl<'t, P: Process> Sim<'t, P> {
    /// Calls one handler of `node` and applies what it asked for.
    pub(super) fn invoke(&mut self, node: NodeId, input: Input<P::Msg, P::Timer>) {
        let index = node.index();
        let call = Self::call(&input);
        let starting_up = matches!(input, Input::Workload) && self.starting_up(node);
        let stream = self.stream_config().is_some();
        let state = &mut self.nodes[index];
        let (local, wall) = state.clocks.readings(self.now);
        let members = self.config.members;
        let observed = self.collect_observed.then_some(&mut self.observed);
        // Timeouts are a choice only when the scenario makes them one.
        let chooser: Option<&mut dyn crate::Chooser> = match self.chooser.as_mut() {
            _ if self.config.timeout_choices < 2 => None,
            Some(chooser) => Some(&mut **chooser),
            None => Some(&mut self.prescribed),
        };
        let chooser = chooser.map(|c| (c, self.now));
        let mut ctx = Ctx::new(node, members, local, &mut state.rng, &mut self.outbox)
            .with_wall_now(wall)
            .on_stream(stream)
            .observing(observed)
            .with_timeout_choices(self.config.timeout_choices, chooser);
        let process = &mut self.processes[index];
        // Forgotten on return: it drops, and leaves what was handled behind for the catcher
        // (`take_handler_panic`), only when a panic unwinds out of the handler.
        let at_ns = self.now;
        let names = self.names;
        let guard = HandlerGuard {
            handling: || Self::handling(names, node, at_ns, call),
        };
        match input {
            Input::Start => process.on_start(&mut ctx),
            Input::Message { from, msg, .. } => process.on_message(&mut ctx, from, msg),
            Input::Timer(timer) => process.on_timer(&mut ctx, timer),
            Input::Restart => process.on_restart(&mut ctx),
            Input::Resign => process.on_resign(&mut ctx),
            Input::ConfChange(change) => process.on_conf_change(&mut ctx, change),
            Input::Disconnected { peer } => process.on_disconnect(&mut ctx, peer),
            Input::Workload => {
                if let Some(token) = process.write_token(local).filter(|_| !starting_up) {
                    ctx.write(token);
                }
            }
        }
        // Not dropped: a normal return leaves nothing behind.
        let guard = std::mem::ManuallyDrop::new(guard);
        self.after_handler(node, local, &guard.handling);
        if self.tracing() {
            self.trace_node(node, Self::event_of(self.names, call));
        }
    }

    /// `node` handling the event of `call` at `at_ns`, with the algorithm's names.
    pub(super) fn handling(names: Names, node: NodeId, at_ns: Nanos, call: Call) -> Handling {
        let event = match call {
            Call::Start => HandlerEvent::Start,
            Call::Message {
                kind,
                from,
                sent_ns,
            } => HandlerEvent::Message {
                // A kind past the names is what the refusal check looks for; not here.
                message: names.messages.get(kind).copied().unwrap_or("?"),
                from,
                sent_ns,
            },
            Call::Timer(index) => HandlerEvent::Timer {
                timer: names.timers.get(index).copied().unwrap_or("?"),
            },
            Call::Restart => HandlerEvent::Restart,
            Call::Resign => HandlerEvent::Resign,
            Call::ConfChange(change) => HandlerEvent::ConfChange { change },
            Call::Workload => HandlerEvent::Workload,
            Call::Disconnected(peer) => HandlerEvent::Disconnect { peer },
        };
        Handling { node, at_ns, event }
    }

    /// Whether `node` leads but is still within its start-up delay (and so does not serve).
    fn starting_up(&self, node: NodeId) -> bool {
        let delay = self.config.startup_delay_ns;
        delay > 0
            && self
                .leadership
                .since(node)
                .is_some_and(|since| self.now < since.saturating_add(delay))
    }

    fn call(input: &Input<P::Msg, P::Timer>) -> Call {
        match input {
            Input::Start => Call::Start,
            Input::Message { from, msg, sent_ns } => Call::Message {
                kind: msg.kind(),
                from: *from,
                sent_ns: *sent_ns,
            },
            Input::Timer(timer) => Call::Timer(timer.index()),
            Input::Restart => Call::Restart,
            Input::Resign => Call::Resign,
            Input::ConfChange(change) => Call::ConfChange(*change),
            Input::Workload => Call::Workload,
            Input::Disconnected { peer } => Call::Disconnected(*peer),
        }
    }

    /// The trace event of a handler call.
    fn event_of(names: Names, call: Call) -> EventKind {
        match call {
            Call::Start => EventKind::Start,
            Call::Message {
                kind,
                from,
                sent_ns,
            } => EventKind::Deliver {
                message: Name::Borrowed(names.messages[kind]),
                from,
                sent_ns,
            },
            Call::Timer(index) => EventKind::Timer {
                timer: Name::Borrowed(names.timers[index]),
            },
            Call::Restart => EventKind::Restart,
            Call::Resign => EventKind::Resign,
            Call::ConfChange(change) => EventKind::ConfChange { change },
            Call::Workload => EventKind::Workload,
            Call::Disconnected(peer) => EventKind::Disconnect { peer },
        }
    }

    /// Applies the outbox (or holds its outgoing part back if a stall strikes now), then
    /// shows the checker and the liveness monitor the process's state.
    fn after_handler(&mut self, node: NodeId, local: LocalNanos, handling: &impl Fn() -> Handling) {
        let index = node.index();
        let mut effects = std::mem::take(&mut self.outbox);
        if self.triggers_wait() {
            self.match_triggers(node, &effects);
        }
        if let Some((stall_ns, fault)) = self.nodes[index].stall_next.take() {
            for effect in effects.drain(..) {
                if self.refused(&effect) {
                    self.refuse(handling(), effect);
                } else if effect.is_deferrable() {
                    self.charge_effect(node, &effect);
                    self.nodes[index].deferred.push(effect);
                } else {
                    self.apply(node, local, effect);
                }
            }
            self.pause(node, stall_ns);
            // A stall strikes when its node next handles something, maybe long after the
            // fault fired (behind a pause): it slows elections down until it ends.
            self.disturbed_until(self.now.saturating_add(stall_ns));
            // The stall's own pending heal is replaced by the pause's resume.
            self.pending_heals -= 1;
            self.record_mut(fault).healed_at_ns = Some(self.now.saturating_add(stall_ns));
        } else {
            self.settle(node, local, &mut effects, handling);
        }
        self.outbox = effects;
        self.observe_handler(node);
        let term = self.processes[index].term();
        if self.checker.term_went_back(self.now, node, term) {
            self.flag(Some(Invariant::TermMonotonic));
        }
        let process = &self.processes[index];
        if index < self.config.members {
            // A member names itself only while it believes it leads: one that lost its
            // lease still reads its own name in the record it saw last, and nobody can use
            // it as a leader until it claims again.
            let believes = self.leadership.believes(node);
            let seen = if process.learns_leader_on_demand() {
                Recognition::OnDemand
            } else {
                Recognition::Names(process.known_leader().filter(|&l| l != node || believes))
            };
            self.liveness.observe(self.now, node, seen);
        } else {
            // A coordination service process (after the members): whom it would name.
            let (answer, leads) = (process.known_leader(), process.leads_service());
            self.service_answered(node, answer);
            self.service_role(node, leads);
        }
    }

    /// Service process `node` would now answer `answer` to a client asking who leads. The
    /// service's answer, as the liveness check reads it, is what every process that names a
    /// leader names (none if they disagree: a client could be told either); for a
    /// single-process service, its own answer.
    pub(super) fn service_answered(&mut self, node: NodeId, answer: Option<NodeId>) {
        let slot = node.index() - self.config.members;
        self.service_answers[slot] = answer;
        let mut named = self.service_answers.iter().flatten();
        let first = named.next().copied();
        let agreed = first.filter(|leader| named.all(|other| other == leader));
        self.liveness.observe_answer(self.now, agreed);
    }

    /// Service process `node` leads its service (`leads`) after its handler or crash;
    /// traced when that changed.
    fn service_role(&mut self, node: NodeId, leads: bool) {
        let slot = node.index() - self.config.members;
        if std::mem::replace(&mut self.service_leads[slot], leads) != leads {
            let kind = if leads {
                EventKind::ServiceLeads
            } else {
                EventKind::ServiceFollows
            };
            self.trace_node(node, kind);
        }
    }

    pub(super) fn apply(
        &mut self,
        node: NodeId,
        local: LocalNanos,
        effect: Effect<P::Msg, P::Timer, P::Durable>,
    ) {
        match effect {
            Effect::Persist(durable) => {
                // A stalled handler's write: the disk takes it at once, the output waits.
                let done_ns = self.write_durable(node, self.now, durable);
                let free_ns = &mut self.nodes[node.index()].output_free_ns;
                *free_ns = (*free_ns).max(done_ns);
            }
            Effect::Send { to, msg } | Effect::SendUnordered { to, msg } => {
                self.send(node, to, Payload::Algo(msg))
            }
            Effect::Disconnect { peer } => {
                if self.stream_config().is_some() {
                    self.break_connection(crate::connections::pair(node, peer), Some(node));
                }
            }
            Effect::Write { token } => {
                self.writes.attempted += 1;
                let term = self.leadership.term_of(node);
                self.send(node, self.resource_id, Payload::Write { token, term });
            }
            Effect::SetTimer {
                timer,
                after_local_ns,
            } => {
                self.arm_after(node, timer.index(), local, after_local_ns);
            }
            Effect::SetWallTimer { timer, at_wall_ns } => {
                self.arm_on(node, timer.index(), at_wall_ns, true);
            }
            Effect::CancelTimer { timer } => self.disarm(node, timer.index()),
            Effect::BecameLeader { term, token } => {
                self.note_campaign(node, None);
                self.close_election(Some((node, term)));
                self.leadership.claim(self.now, node, term, token);
                let broken = self.checker.on_claim(self.now, node, term);
                self.flag(broken);
                self.failover_claim(node, term);
                self.observe(Observation::Claim { node, term, token });
            }
            Effect::SteppedDown => {
                self.note_campaign(node, None);
                self.leadership.end(self.now, node);
                self.observe(Observation::StepDown { node });
            }
            Effect::Signal(signal) => {
                self.note_campaign(node, Some(signal));
                self.count_signal(node, signal);
            }
            Effect::Log { text } => {
                if self.tracing() {
                    self.trace_node(node, EventKind::Log { text });
                }
            }
            // Refused before it gets here (`Sim::refused`): the run ends with it.
            Effect::Fail { .. } => {}
        }
    }

    fn count_signal(&mut self, node: NodeId, signal: Signal) {
        // A pre-vote is an attempt too: with pre-vote on, a cut-off node never gets further.
        let attempt = matches!(
            signal,
            Signal::ElectionStarted { .. } | Signal::PreVoteStarted { .. }
        );
        // A service declaring a vacancy is no candidate on a minority side.
        let member = node.index() < self.config.members;
        if attempt && member && self.network.is_partitioned() && !self.reaches_majority(node) {
            self.counters.minority_elections += 1;
        }
        let campaign_term = match signal {
            Signal::ElectionStarted { term } | Signal::PreVoteStarted { term } => Some(term),
            _ => None,
        };
        // A campaign for a term someone already claimed (a candidate acting on a stale view)
        // opens no election of its own where such a campaign cannot win.
        let late = self.info.late_campaigns_lose
            && campaign_term.is_some_and(|term| self.leadership.decided(term));
        // A member cut off from what it needs to win campaigns in vain: no election record
        // covers it; its campaign traffic is counted apart (see `send`).
        let futile = campaign_term.is_some() && member && !self.could_win(node);
        if futile {
            self.counters.futile_campaigns += 1;
            if !self.futile[node.index()] {
                self.futile[node.index()] = true;
                self.futile_nodes += 1;
            }
        } else if late {
            if let Some(open) = self.open_election.as_mut() {
                open.campaigns += 1;
            }
        } else if campaign_term.is_some() {
            let kinds = self.message_stats.len();
            let now = self.now;
            let opened = self.open_election.is_none();
            let members = self.config.members;
            let open = self
                .open_election
                .get_or_insert_with(|| super::OpenElection {
                    started_ns: now,
                    campaigns: 0,
                    sent_by_kind: vec![0; kinds],
                    campaigning: vec![false; members],
                });
            open.campaigns += 1;
            if let Some(c) = open.campaigning.get_mut(node.index()) {
                *c = true;
            }
            if opened {
                self.tell_election_opened();
            }
        }
        if let Signal::LeaderHeard { .. } = signal {
            self.campaigner_follows(node);
        }
        let c = &mut self.counters;
        match signal {
            Signal::ElectionStarted { term } => {
                c.elections_started += 1;
                let c = &mut self.counters;
                let first = self.candidates.entry(term).or_insert((node, false));
                if first.0 != node && !first.1 {
                    first.1 = true;
                    c.dueling_candidate_terms += 1;
                }
            }
            Signal::PreVoteStarted { .. } => c.pre_votes_started += 1,
            Signal::ElectionRoundFailed { .. } => c.failed_rounds += 1,
            Signal::LeaderSuspected => c.leader_suspicions += 1,
            Signal::DisruptionPrevented => c.disruptions_prevented += 1,
            Signal::LeaseExpired { holder } => {
                if self.leadership.believes(holder) {
                    c.leases_expired_while_leading += 1;
                }
            }
            Signal::LeaseHeld { holder } => self.lease_windows.held(self.now, holder),
            Signal::LeaseEnded { holder } => self.lease_windows.ended(self.now, holder),
            Signal::CampaignEligible { .. } | Signal::LeaderHeard { .. } => {}
        }
        self.failover_signal(node, signal);
    }

    pub(super) fn kind_of(names: Names, payload: &Payload<P::Msg>) -> usize {
        match payload {
            Payload::Algo(msg) => msg.kind(),
            Payload::Write { .. } => names.messages.len(),
        }
    }

    /// Whether `node` can talk both ways with a majority of the members (itself included).
    fn reaches_majority(&self, node: NodeId) -> bool {
        let members = self.config.members;
        let reachable = (0..members)
            .map(NodeId::from)
            .filter(|other| *other == node || self.network.connected(node, *other))
            .count();
        reachable > members / 2
    }

    /// Whether member `node` could win an election now: where members elect through a
    /// coordination service, it can talk both ways with the service (which is up); else it
    /// can talk both ways with the members the algorithm needs to make progress
    /// ([`AlgorithmInfo::min_group_for_progress`](crate::AlgorithmInfo): a majority for
    /// Raft, one for Bully and Ring, which elect on any side of a partition), itself
    /// included.
    fn could_win(&self, node: NodeId) -> bool {
        if self.has_service() {
            return self.reaches_service(node);
        }
        if !self.network.is_partitioned() {
            return true;
        }
        let members = self.config.members;
        let reachable = (0..members)
            .map(NodeId::from)
            .filter(|other| *other == node || self.network.connected(node, *other))
            .count();
        reachable >= self.info.min_group_for_progress
    }

    /// Clears the futile-campaign flag of every member that could win now (called once no
    /// partition is left: a member that stays silent after the heal is not left flagged).
    pub(super) fn forget_futile_campaigns(&mut self) {
        for index in 0..self.futile.len() {
            if self.futile[index] && self.could_win(NodeId::from(index)) {
                self.futile[index] = false;
                self.futile_nodes -= 1;
            }
        }
    }

    /// Whether a message `from` -> `to` is traffic of a futile campaign: one of the two
    /// campaigned while it could not win and still cannot (one that can again leaves that
    /// state).
    fn futile_traffic(&mut self, from: NodeId, to: NodeId) -> bool {
        let mut futile = false;
        for node in [from, to] {
            if self.futile.get(node.index()).copied().unwrap_or(false) {
                if self.could_win(node) {
                    self.futile[node.index()] = false;
                    self.futile_nodes -= 1;
                } else {
                    futile = true;
                }
            }
        }
        futile
    }

    /// Hands a message to the network.
    fn send(&mut self, from: NodeId, to: NodeId, payload: Payload<P::Msg>) {
        let kind = Self::kind_of(self.names, &payload);
        self.message_stats[kind].sent += 1;
        self.count_steady_send(kind, from.index() >= self.config.members);
        // A leader's own traffic (heartbeats, renewals, writes, and what answers it) is the
        // steady state, not the election another node has opened; the traffic of a node
        // campaigning in vain is its own tally.
        if self.open_election.is_some() || self.futile_nodes > 0 {
            let futile = self.futile_nodes > 0 && self.futile_traffic(from, to);
            let steady = self.leadership.believes(from) || self.leadership.believes(to);
            if !steady {
                if futile {
                    self.futile_sent_by_kind[kind] += 1;
                } else if let Some(open) = self.open_election.as_mut() {
                    open.sent_by_kind[kind] += 1;
                }
            }
        }
        if to != self.resource_id && self.stream_config().is_some() {
            self.stream_send(from, to, payload);
            return;
        }
        match self.network.transmit(from, to) {
            Transit::LostToPartition => {
                self.message_stats[kind].dropped += 1;
                self.drops.partition += 1;
                self.release_message(from, Self::payload_bytes(&payload));
            }
            Transit::LostToLoss => {
                self.message_stats[kind].dropped += 1;
                self.drops.loss += 1;
                self.release_message(from, Self::payload_bytes(&payload));
            }
            Transit::Deliver {
                latency_ns,
                duplicate_after_ns,
            } => {
                let sent_ns = self.now;
                if let Some(dup_ns) = duplicate_after_ns {
                    self.message_stats[kind].duplicated += 1;
                    // A copy is a message of its own until it is taken or lost.
                    self.charge_message(from, to, kind, Self::payload_bytes(&payload));
                    let copy = EventData::Deliver {
                        from,
                        to,
                        sent_ns,
                        payload: payload.clone(),
                        via: None,
                    };
                    self.push_event(self.now.saturating_add(dup_ns), copy);
                }
                self.push_event(
                    self.now.saturating_add(latency_ns),
                    EventData::Deliver {
                        from,
                        to,
                        sent_ns,
                        payload,
                        via: None,
                    },
                );
            }
        }
    }

    pub(super) fn on_deliver(
        &mut self,
        from: NodeId,
        to: NodeId,
        sent_ns: Nanos,
        payload: Payload<P::Msg>,
        via: Option<Via>,
    ) {
        let kind = Self::kind_of(self.names, &payload);
        let payload = match via {
            Some(via) => match self.stream_arrival(from, to, sent_ns, payload, via) {
                Some(payload) => payload,
                None => return,
            },
            None => payload,
        };
        // The receiver takes it now, or it is lost now, unless it is held for a paused
        // receiver (below): then it stays charged to its sender until the resume.
        let bytes = Self::payload_bytes(&payload);
        if to == self.resource_id {
            self.release_message(from, bytes);
            if let Payload::Write { token, term } = payload {
                self.message_stats[kind].delivered += 1;
                self.on_write(from, token, term, sent_ns);
            }
            return;
        }
        let Payload::Algo(msg) = payload else {
            unreachable!("only the resource receives writes")
        };
        let status = self.nodes[to.index()].status;
        let dropped_by = match status {
            Status::Crashed => Some("crashed"),
            _ if self.network.is_cut(from, to) => Some("partition"),
            _ => None,
        };
        if let Some(reason) = dropped_by {
            self.release_message(from, bytes);
            self.message_stats[kind].dropped += 1;
            match reason {
                "crashed" => self.drops.crashed_receiver += 1,
                _ => self.drops.partition += 1,
            }
            let message = Name::Borrowed(self.names.messages[kind]);
            self.trace_node(
                to,
                EventKind::Drop {
                    message,
                    from,
                    sent_ns,
                },
            );
            return;
        }
        if let Status::Paused { .. } = status {
            self.nodes[to.index()]
                .held
                .push_back(Held::Message { from, sent_ns, msg });
            let message = Name::Borrowed(self.names.messages[kind]);
            self.trace_node(
                to,
                EventKind::Held {
                    message,
                    from,
                    sent_ns,
                },
            );
            return;
        }
        self.release_message(from, bytes);
        self.message_stats[kind].delivered += 1;
        self.invoke(to, Input::Message { from, sent_ns, msg });
    }

    /// A write of `token` reaches the resource; `term` is the term its writer believed it led
    /// when it sent it.
    fn on_write(&mut self, from: NodeId, token: u64, term: Option<u64>, sent_ns: Nanos) {
        let stale = self
            .resource
            .highest_token()
            .is_some_and(|highest| token < highest);
        if stale {
            self.counters.stale_write_attempts += 1;
        }
        let verdict = self.resource.write(self.now, token);
        if self.observing() {
            let verdict = match verdict {
                WriteVerdict::Accepted => WriteOutcome::Accepted { stale },
                WriteVerdict::RejectedStale { highest } => WriteOutcome::Rejected { highest },
            };
            self.observe(Observation::Write {
                from,
                token,
                sent_ns,
                verdict,
            });
        }
        match verdict {
            WriteVerdict::Accepted => {
                let broken = self.checker.on_accepted_write(self.now, from, token, term);
                self.flag(broken);
                let closed_before = self.failovers.done.len();
                self.failovers
                    .on_accepted_write(self.now, sent_ns, from, token);
                self.tell_closed_failovers(closed_before);
                self.trace_write(EventKind::WriteAccepted {
                    token,
                    from,
                    sent_ns,
                });
            }
            WriteVerdict::RejectedStale { .. } => {
                if self.checker.locks_out(term) {
                    self.counters.locked_out_writes += 1;
                }
                let broken = self.checker.on_rejected_write(self.now, from, token, term);
                self.flag(broken);
                self.trace_write(EventKind::WriteRejected {
                    token,
                    from,
                    sent_ns,
                });
            }
        }
    }

    /// `node` accepted a leader: it no longer campaigns. When nobody who campaigned in the
    /// election under way still does, that election ends undecided, abandoned: its
    /// campaigns failed against a sitting leader (a pre-vote a live leader's followers
    /// refused), and the next claim is another election's decision.
    fn campaigner_follows(&mut self, node: NodeId) {
        let Some(open) = self.open_election.as_mut() else {
            return;
        };
        let Some(c) = open.campaigning.get_mut(node.index()) else {
            return;
        };
        if !*c {
            return;
        }
        *c = false;
        if open.campaigning.iter().all(|c| !c) {
            self.end_election(None, true);
        }
    }

    /// Ends the election under way, if any, decided by `winner` (or undecided at the end).
    pub(super) fn close_election(&mut self, winner: Option<(NodeId, u64)>) {
        self.end_election(winner, false);
    }

    /// Ends the election under way, if any: decided by `winner`, abandoned, or undecided at
    /// the end of the run.
    fn end_election(&mut self, winner: Option<(NodeId, u64)>, abandoned: bool) {
        let Some(open) = self.open_election.take() else {
            return;
        };
        let messages = self.named_counts(&open.sent_by_kind);
        self.elections.push(crate::report::ElectionRecord {
            started_ns: open.started_ns,
            decided_ns: winner.map(|_| self.now),
            abandoned_ns: abandoned.then_some(self.now),
            winner: winner.map(|(node, _)| node),
            term: winner.map(|(_, term)| term),
            campaigns: open.campaigns,
            messages,
        });
        if winner.is_some() {
            self.tell_election_decided();
        }
    }

    /// The slot of timer kind `kind` of `node`.
    fn slot(&self, node: NodeId, kind: usize) -> u32 {
        (node.index() * self.slots_per_node + kind) as u32
    }

    fn workload_kind(&self) -> usize {
        self.slots_per_node - 1
    }

    /// Arms a timer slot to fire `after_local_ns` after the local reading `local`. A deadline
    /// the clock cannot represent (past `i64::MAX`, about 292 years) is never reached: the
    /// timer is disarmed, never clamped (a clamped deadline on a clock stopped at its largest
    /// reading would fire again and again at one instant).
    fn arm_after(&mut self, node: NodeId, kind: usize, local: LocalNanos, after_local_ns: Nanos) {
        let deadline = i64::try_from(after_local_ns)
            .ok()
            .and_then(|after| local.checked_add(after));
        match deadline {
            Some(deadline) => self.arm(node, kind, deadline),
            None => self.disarm(node, kind),
        }
    }

    /// Arms a timer slot for the local deadline `deadline`. On a stopped clock (see
    /// [`crate::clock::LocalClock::stopped_at`]) the timer never fires: it is disarmed, so
    /// that every timer fires at a strictly later true time than it was armed, or not at all.
    fn arm(&mut self, node: NodeId, kind: usize, deadline: LocalNanos) {
        self.arm_on(node, kind, deadline, false);
    }

    /// Arms a timer slot for `deadline` on the wall clock (`wall`) or the timer clock.
    fn arm_on(&mut self, node: NodeId, kind: usize, deadline: LocalNanos, wall: bool) {
        let state = &mut self.nodes[node.index()];
        if state.clocks.slot_clock(wall).stopped_at(self.now) {
            self.disarm(node, kind);
            return;
        }
        state.local_deadline[kind] = deadline;
        state.wall_slot[kind] = wall;
        state.timer_generation[kind] = state.timer_generation[kind].wrapping_add(1);
        let at = state.clocks.slot_clock(wall).true_when(deadline, self.now);
        let slot = self.slot(node, kind);
        self.queue.set_slot(slot, at);
    }

    fn disarm(&mut self, node: NodeId, kind: usize) {
        let state = &mut self.nodes[node.index()];
        state.timer_generation[kind] = state.timer_generation[kind].wrapping_add(1);
        let slot = self.slot(node, kind);
        self.queue.cancel_slot(slot);
    }

    /// Re-keys every armed timer of `node` after its clock changed.
    pub(super) fn rekey_timers(&mut self, node: NodeId) {
        for kind in 0..self.slots_per_node {
            let slot = self.slot(node, kind);
            if self.queue.slot_time(slot).is_some() {
                let state = &self.nodes[node.index()];
                let clock = state.clocks.slot_clock(state.wall_slot[kind]);
                let at = clock.true_when(state.local_deadline[kind], self.now);
                self.queue.move_slot(slot, at);
            }
        }
    }

    pub(super) fn arm_workload(&mut self, node: NodeId) {
        if self.config.write_every_ns == 0 || node.index() >= self.config.members {
            return;
        }
        let local = self.nodes[node.index()].clocks.timer_reading(self.now);
        let kind = self.workload_kind();
        self.arm_after(node, kind, local, self.config.write_every_ns);
    }

    pub(super) fn on_timer_slot(&mut self, node: NodeId, kind: usize) {
        let state = &mut self.nodes[node.index()];
        match state.status {
            Status::Crashed => unreachable!("a crash disarms every timer"),
            Status::Paused { .. } => {
                let generation = state.timer_generation[kind];
                state.held.push_back(Held::Timer { kind, generation });
            }
            Status::Up => self.fire_timer(node, kind),
        }
    }

    fn fire_timer(&mut self, node: NodeId, kind: usize) {
        if kind == self.workload_kind() {
            self.arm_workload(node);
            if !self.workload_is_idle(node) {
                self.invoke(node, Input::Workload);
            }
        } else {
            self.invoke(node, Input::Timer(P::Timer::from_index(kind)));
        }
    }

    /// Whether a workload tick of `node` would change nothing, so its handler call can be
    /// skipped: the process does not write (`write_token` reads, never changes, its state),
    /// no trace records the call, no processing time is drawn for it, and no stall waits
    /// to strike inside it. Most ticks are a follower's: in a hunt of the Raft nemesis, one
    /// event in six.
    fn workload_is_idle(&self, node: NodeId) -> bool {
        let state = &self.nodes[node.index()];
        !self.tracing()
            && self.config.processing.is_none()
            && state.stall_next.is_none()
            && self.processes[node.index()]
                .write_token(state.clocks.timer_reading(self.now))
                .is_none()
    }

    /// Freezes `node` for `duration_ns` (extending a pause already under way).
    pub(super) fn pause(&mut self, node: NodeId, duration_ns: Nanos) {
        let state = &mut self.nodes[node.index()];
        let until_ns = match state.status {
            Status::Crashed => return,
            Status::Paused { until_ns } => until_ns.max(self.now.saturating_add(duration_ns)),
            Status::Up => self.now.saturating_add(duration_ns),
        };
        state.status = Status::Paused { until_ns };
        state.pause_generation = state.pause_generation.wrapping_add(1);
        let generation = state.pause_generation;
        self.pending_heals += 1;
        self.push_event(until_ns, EventData::Resume { node, generation });
        self.trace_node(node, EventKind::Freeze { until_ns });
    }

    /// Suspends `node` for `duration_ns` (VM suspend, live migration): a pause during which
    /// its monotonic clock stands still, so its timers and elapsed-time checks resume where
    /// they were while its wall clock has counted the suspend.
    pub(super) fn suspend(&mut self, node: NodeId, duration_ns: Nanos) {
        if self.nodes[node.index()].status == Status::Crashed {
            return;
        }
        self.pause(node, duration_ns);
        let state = &mut self.nodes[node.index()];
        if !state.suspended {
            state.suspended = true;
            state.clocks.suspend(self.now);
            self.rekey_timers(node);
        }
    }

    /// Lets a suspended node's monotonic clock run again (at resume, or when it crashes).
    fn end_suspend(&mut self, node: NodeId) {
        let state = &mut self.nodes[node.index()];
        if state.suspended {
            state.suspended = false;
            state.clocks.resume(self.now);
            self.rekey_timers(node);
        }
    }

    /// Arms a stall: it strikes inside the node's next handler.
    pub(super) fn arm_stall(&mut self, node: NodeId, duration_ns: Nanos, fault: usize) {
        let state = &mut self.nodes[node.index()];
        if state.status != Status::Crashed {
            if state.stall_next.is_none() {
                self.pending_heals += 1;
            }
            state.stall_next = Some((duration_ns, fault));
        }
    }

    pub(super) fn on_resume(&mut self, node: NodeId, generation: u32) {
        self.pending_heals -= 1;
        let state = &mut self.nodes[node.index()];
        if state.pause_generation != generation || !matches!(state.status, Status::Paused { .. }) {
            self.check_quiet();
            return;
        }
        state.status = Status::Up;
        self.end_suspend(node);
        self.trace_node(node, EventKind::Resume);
        // What was due to leave during the pause leaves, then a stalled handler's sends and
        // timers (behind whatever still waits for the disk), then held events run in order.
        self.release_due(node);
        let deferred = std::mem::take(&mut self.nodes[node.index()].deferred);
        let local = self.nodes[node.index()].clocks.timer_reading(self.now);
        for effect in deferred {
            self.send_or_queue(node, local, effect);
        }
        while self.nodes[node.index()].status == Status::Up {
            let Some(held) = self.nodes[node.index()].held.pop_front() else {
                break;
            };
            match held {
                Held::Message { from, sent_ns, msg } => {
                    self.release_message(from, Self::message_bytes(&msg));
                    self.message_stats[msg.kind()].delivered += 1;
                    self.invoke(node, Input::Message { from, sent_ns, msg });
                }
                Held::Timer { kind, generation } => {
                    if self.nodes[node.index()].timer_generation[kind] == generation {
                        self.fire_timer(node, kind);
                    }
                }
                Held::Disconnected { peer } => self.invoke(node, Input::Disconnected { peer }),
            }
            // A fault triggered by held work fires before the next held event.
            if self.triggers.pending {
                self.settle_triggers();
            }
        }
        self.check_quiet();
    }

    /// Stops `node`: timers die, held work is lost, it no longer believes it leads.
    pub(super) fn crash(&mut self, node: NodeId) {
        if self.nodes[node.index()].status == Status::Crashed {
            return;
        }
        for kind in 0..self.slots_per_node {
            self.disarm(node, kind);
        }
        self.end_suspend(node);
        let state = &mut self.nodes[node.index()];
        state.status = Status::Crashed;
        // Messages held for it while it was paused are lost with it.
        for held in std::mem::take(&mut state.held) {
            if let Held::Message { from, msg, .. } = held {
                self.message_stats[msg.kind()].dropped += 1;
                self.drops.crashed_receiver += 1;
                self.release_message(from, Self::message_bytes(&msg));
            }
        }
        // And so is what a stalled handler of it asked to send.
        for effect in std::mem::take(&mut self.nodes[node.index()].deferred) {
            self.release_effect(node, &effect);
        }
        self.crash_output(node);
        let state = &mut self.nodes[node.index()];
        if state.stall_next.take().is_some() {
            self.pending_heals -= 1;
        }
        self.leadership.end(self.now, node);
        self.note_campaign(node, None);
        if node.index() >= self.config.members {
            self.service_answered(node, None);
        } else {
            self.liveness.forget(self.now, node);
        }
        self.failover_reach_changed();
        self.break_connections_of(node);
        self.observe(Observation::Crash { node });
        self.trace_node(node, EventKind::Crash);
        if node.index() >= self.config.members {
            self.service_role(node, false);
        }
    }

    /// Brings a crashed `node` back with only its durable state.
    pub(super) fn restart(&mut self, node: NodeId) {
        if self.nodes[node.index()].status != Status::Crashed {
            return;
        }
        self.nodes[node.index()].status = Status::Up;
        self.restore_durable(node);
        self.observe(Observation::Restart { node });
        self.invoke(node, Input::Restart);
        self.arm_workload(node);
    }

    /// Asks `node` to hand leadership on.
    pub(super) fn resign(&mut self, node: NodeId) {
        if self.nodes[node.index()].status == Status::Up {
            self.invoke(node, Input::Resign);
        }
    }

    /// Asks `node` to propose a membership change.
    pub(super) fn conf_change(&mut self, node: NodeId, change: MemberChange) {
        if self.nodes[node.index()].status == Status::Up {
            self.invoke(node, Input::ConfChange(change));
        }
    }
}
