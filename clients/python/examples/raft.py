"""Raft's leader election (Raft paper, sections 5.1, 5.2 and figure 2) as a splitbrain node.

Run by a scenario with::

    algorithm: External(command: ["python3", "clients/python/examples/raft.py"]),

What it does:

- Every node starts as a follower with an election timeout drawn from ``ctx.rng`` in
  150-300 ms. A follower that hears no leader before it fires becomes a candidate: it takes
  the next term, votes for itself, persists ``{"term", "voted_for"}``, and asks every peer
  for its vote (retrying the silent ones every heartbeat).
- A node grants at most one vote per term, first come first served, and persists the vote
  **before** the answer leaves (figure 2: "updated on stable storage before responding to
  RPCs"); a restarted node reads its term and vote back from ``durable``.
- A candidate with a majority leads: ``lead(term, token=term)``, then a heartbeat to every
  peer and a ``write(term)`` to the fenced resource every 50 ms.
- Any message with a higher term makes a node adopt it and follow (a leader steps down); a
  heartbeat from an older term is answered with ``heartbeat_reject`` carrying ours, so that
  a stale leader learns of the newer term.

Log replication is left out: every log is empty, so the up-to-date-log rule of section 5.4.1
grants every candidate. ``raft_forgets_vote.py`` runs this same code with the vote kept in
memory only.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from splitbrain_node import Node  # noqa: E402

ELECTION_TIMEOUT_MIN_NS = 150_000_000
ELECTION_TIMEOUT_MAX_NS = 300_000_000
HEARTBEAT_NS = 50_000_000

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"


class Raft:
    """One node's state, created afresh at every init (start or restart)."""

    def __init__(self):
        # Figure 2, persistent state: on disk before any answer that depends on it.
        self.term = 0
        self.voted_for = None
        # Volatile state: lost in a crash.
        self.role = FOLLOWER
        self.leader = None
        self.granted = set()  # candidate: the peers that granted their vote (ints)
        self.answered = set()  # candidate: the peers that answered this round


def build(persist_vote=True):
    """The Raft node. ``persist_vote=False`` is the classic bug: a granted vote is kept in
    memory only, so a node that crashes and comes back can vote twice in one term."""
    node = Node(
        messages=["vote_request", "vote", "heartbeat", "heartbeat_reject"],
        timers=["election", "heartbeat"],
        state=Raft,
    )

    def persist(ctx):
        st = ctx.state
        ctx.persist({"term": st.term, "voted_for": st.voted_for})

    def reset_election_timer(ctx):
        ctx.set_timer("election", ctx.rng.randint(ELECTION_TIMEOUT_MIN_NS, ELECTION_TIMEOUT_MAX_NS))

    def become_follower(ctx, term, leader):
        """Section 5.1: adopt a higher term (forgetting the vote) and follow ``leader``
        (``None``: not known yet)."""
        st = ctx.state
        if term > st.term:
            st.term = term
            st.voted_for = None
            persist(ctx)
        was = st.role
        st.role = FOLLOWER
        st.leader = leader
        ctx.report(term=st.term, leader=leader)
        if was == LEADER:
            ctx.step_down()
        if was != FOLLOWER:
            ctx.cancel_timer("heartbeat")  # no more heartbeats or vote-request retries
        # A leader had no election timer armed; figure 2: hearing from the current leader
        # restarts it. A higher term alone keeps the deadline (LogCabin's stepDown).
        if was == LEADER or leader is not None:
            reset_election_timer(ctx)

    def become_candidate(ctx):
        """Section 5.2: next term, vote for itself, ask everyone."""
        st = ctx.state
        st.term += 1
        st.voted_for = ctx.me
        persist(ctx)
        st.role = CANDIDATE
        st.leader = None
        st.granted = {ctx.me}
        st.answered = {ctx.me}
        ctx.campaign(st.term)
        ctx.report(term=st.term, leader=None)
        reset_election_timer(ctx)
        if len(st.granted) >= ctx.majority:  # a cluster of one
            become_leader(ctx)
            return
        send_vote_requests(ctx)
        ctx.set_timer("heartbeat", HEARTBEAT_NS)

    def send_vote_requests(ctx):
        st = ctx.state
        for peer in ctx.peers:
            if peer not in st.answered:
                ctx.send(peer, {"type": "vote_request", "term": st.term})

    def become_leader(ctx):
        st = ctx.state
        st.role = LEADER
        st.leader = ctx.me
        ctx.lead(st.term, st.term)  # the fencing token is the term
        ctx.report(leader=ctx.me)
        ctx.cancel_timer("election")
        heartbeat(ctx)

    def heartbeat(ctx):
        st = ctx.state
        for peer in ctx.peers:
            ctx.send(peer, {"type": "heartbeat", "term": st.term})
        ctx.write(st.term)
        ctx.set_timer("heartbeat", HEARTBEAT_NS)

    @node.on_init
    def init(ctx, durable):
        st = ctx.state
        if durable is not None:
            st.term = durable["term"]
            st.voted_for = durable["voted_for"]
        ctx.report(term=st.term, leader=None)
        reset_election_timer(ctx)

    @node.on_timer("election")
    def election_timeout(ctx):
        if ctx.state.role == CANDIDATE:  # this round ended without a winner
            ctx.round_failed(ctx.state.term)
        if ctx.state.role != LEADER:
            become_candidate(ctx)

    @node.on_timer("heartbeat")
    def heartbeat_timer(ctx):
        role = ctx.state.role
        if role == LEADER:
            heartbeat(ctx)
        elif role == CANDIDATE:
            # Section 5.1: retry the requests that got no answer.
            send_vote_requests(ctx)
            ctx.set_timer("heartbeat", HEARTBEAT_NS)

    @node.on_message("vote_request")
    def vote_request(ctx, src, body):
        st = ctx.state
        term = body["term"]
        if term < st.term:
            ctx.send(src, {"type": "vote", "term": st.term, "granted": False})
            return
        if term > st.term:
            become_follower(ctx, term, None)
        granted = st.voted_for is None or st.voted_for == src
        if granted:
            st.voted_for = src
            # Figure 2: the vote is on disk before the answer leaves. THE BUG: without this
            # write a restarted node reads back voted_for = None and votes again.
            if persist_vote:
                persist(ctx)
            reset_election_timer(ctx)
        ctx.send(src, {"type": "vote", "term": term, "granted": granted})

    @node.on_message("vote")
    def vote(ctx, src, body):
        st = ctx.state
        term = body["term"]
        if term > st.term:
            become_follower(ctx, term, None)
            return
        if st.role != CANDIDATE or term != st.term:
            return  # late, duplicated, or for an earlier round
        st.answered.add(src)
        if body["granted"]:
            st.granted.add(src)
            if len(st.granted) >= ctx.majority:
                become_leader(ctx)

    @node.on_message("heartbeat")
    def heartbeat_message(ctx, src, body):
        st = ctx.state
        term = body["term"]
        if term < st.term:
            ctx.send(src, {"type": "heartbeat_reject", "term": st.term})
            return
        if st.role == LEADER and term == st.term:
            # Two leaders of one term: impossible unless votes were lost (the broken
            # variant). Keep the claim so the checker sees the violation.
            return
        if st.role == FOLLOWER and term == st.term and st.leader == src:
            reset_election_timer(ctx)
        else:
            become_follower(ctx, term, src)

    @node.on_message("heartbeat_reject")
    def heartbeat_reject(ctx, src, body):
        if body["term"] > ctx.state.term:
            become_follower(ctx, body["term"], None)

    @node.on_resign
    def resign(ctx):
        # No leadership transfer: stop leading, stay in the term, and let the others elect
        # a new leader once its heartbeats stop.
        st = ctx.state
        if st.role == LEADER:
            st.role = FOLLOWER
            st.leader = None
            ctx.step_down()
            ctx.report(leader=None)
            ctx.cancel_timer("heartbeat")
            reset_election_timer(ctx)

    return node


if __name__ == "__main__":
    build(persist_vote=True).run()
