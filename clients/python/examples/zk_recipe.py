"""ZooKeeper's leader-election recipe as a splitbrain node: a client of the modeled ZooKeeper.

Run by a scenario with::

    algorithm: ExternalClient(
        command: ["python3", "clients/python/examples/zk_recipe.py"],
        service: ZooKeeper(tick: "200ms", session_timeout: "2s", servers: 3),
    ),

The recipe (zookeeper-docs recipes.md, "Leader Election"; Curator's ``LeaderLatch``), as the
built-in client runs it (algorithms/src/zookeeper/client.rs; docs/protocol-services.md,
"ZooKeeper" and "Clusters"):

- **Session**: ``Connect`` asking for a 2 s session timeout (``--session-timeout-ms``); the
  server grants T. ``Ping`` every T/3 from then on.
- **Child**: ``Create`` an ephemeral sequential child, then ``GetChildren``. The lowest
  ``seq`` leads: ``lead(term=czxid, token=czxid)``, and the leader writes its czxid to the
  fenced resource every 100 ms while connected. Any other child watches its predecessor (the
  highest ``seq`` below its own) with ``Exists``; on ``NodeDeleted``, or ``exists: false``,
  it re-reads the children and decides again (never "my predecessor went, so I lead": the
  predecessor may have been a waiter whose session expired).
- **Who leads**: a waiter whose predecessor is not the leader also watches the leader's
  child with ``Exists`` (as etcd's ``Election.Observe``), so that it names the new leader
  when the leader's child goes. The built-in client does not: the liveness check counts its
  waiters as asking the server on demand (docs/algorithms/zookeeper.md, "Who leads, for the
  liveness check"), which an external node cannot claim; it has to keep track itself.
- **Lost connection**: any answer shows the connection alive. Nothing heard for 2T/3, or the
  server closing the connection (``disconnect``): a leader steps down at once (Curator's
  ``SUSPENDED``) and claims again only after a fresh ``Children`` on its live session still
  puts it first.
- **Ensemble** (``init``'s ``services``, several servers): the server list shuffled from
  ``ctx.rng`` (``StaticHostProvider``); on a disconnect a random pause below 1 s, then the
  next server, carrying the session (its next ``Ping``, or the phase's request) with a
  connect timeout of T/n (``ClientCnxn``). Answers from a server it left, or that arrive in
  the pause, are ignored. The first answer on the new server re-reads the children and
  re-sets the watches (what ``SetWatches`` gives the Java client).
- **Expired session** (``Pong`` with ``expired: true``, or a view without the own child):
  step down, start over with a new session. **Resign**: ``CloseSession``, start over.

The node reports as its term the highest zxid it has seen, persisted so that it never goes
back across a restart, and as its leader itself while it leads and serves, else the owner of
the lowest child it last saw. It is written for ``Stream`` (ZooKeeper's own transport, the
default): it re-sends nothing on a timer, as the Java client re-sends nothing.

``zk_recipe_broken.py`` runs this same code with one switch flipped: the fencing token.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from splitbrain_node import Node  # noqa: E402

SESSION_TIMEOUT_NS = 2_000_000_000  # asked for; the scenarios' ZooKeeper(session_timeout: "2s")
WRITE_EVERY_NS = 100_000_000  # the leader's writes to the fenced resource
RECONNECT_PAUSE_NS = 1_000_000_000  # ClientCnxn.startConnect: a random sleep below 1 s

CONNECTING, CREATING, WAITING, LEADING = "connecting", "creating", "waiting", "leading"

#: The fencing tokens a node can write with (``build(token=...)``).
TOKENS = ("czxid", "session")


class Recipe:
    """One member's state, created afresh at every init (start or restart)."""

    def __init__(self):
        self.servers = []  # the service processes, in the order this client tries them
        self.current = 0  # index in servers of the one it talks to
        self.paused = False  # in the random pause before the next server
        self.reconnecting = False  # a new connection that has not answered yet
        self.phase = CONNECTING
        self.session = 0  # 0: none
        self.timeout_ns = 0  # T: the granted session timeout (the asked one until granted)
        self.seq = None  # the own child's sequence number
        self.czxid = 0  # the own child's creation zxid: term and fencing token
        self.pred = None  # waiting: the predecessor watched with Exists (None: to be set)
        self.observed = None  # waiting: the leader's child watched, when not the predecessor
        self.last_heard_ns = 0  # mono_ns of the last answer from the current server
        self.claimed = False  # announced lead() and not stepped down since
        self.leader_seen = None  # the owner of the lowest child last seen
        self.seen_zxid = 0  # the highest zxid seen: the reported term
        self.saved_zxid = 0  # what was last persisted


def zxid_of(body):
    """The zxid an answer carries (0 if none): the server's progress, the node's term."""
    kind = body["type"]
    if kind == "CreateResp":
        return body["czxid"]
    if kind in ("Children", "NodeDeleted", "ChildrenChanged"):
        return body["zxid"]
    return 0


def predecessor_of(children, seq):
    """The predecessor of ``seq`` (the highest seq below it) in a view, or None."""
    below = [c[0] for c in children if c[0] < seq]
    return max(below) if below else None


def build(token="czxid", session_timeout_ns=SESSION_TIMEOUT_NS):
    """The recipe's node. ``token="session"`` is the deliberately broken variant (see
    zk_recipe_broken.py): it fences its writes with its session id instead of its czxid."""
    if token not in TOKENS:
        raise ValueError("token must be one of %r, not %r" % (TOKENS, token))
    node = Node(messages=[], timers=["ping", "disconnect", "reconnect", "write"], state=Recipe)

    # -- connection to the current server ----------------------------------------------------

    def server(st):
        return st.servers[st.current]

    def ensemble(st):
        return len(st.servers) > 1

    def connected(ctx):
        """ClientCnxn's read timeout: something heard in the last 2T/3."""
        st = ctx.state
        return ctx.mono_ns < st.last_heard_ns + 2 * st.timeout_ns // 3

    def reconnect(ctx):
        """A new connection to the current server (ClientCnxn.SendThread after cleanup()):
        the phase's request carries the session; the first answer re-reads the children."""
        st = ctx.state
        st.reconnecting = True
        if st.phase == CONNECTING:
            ctx.send(server(st), {"type": "Connect", "timeout_ns": session_timeout_ns})
        elif st.phase == CREATING:
            ctx.send(server(st), {"type": "Create", "session": st.session})
        else:
            ctx.send(server(st), {"type": "Ping", "session": st.session})
        # ClientCnxn: connectTimeout = sessionTimeout / hostProvider.size(); with one server
        # the model's client keeps its 2T/3 connection check.
        if ensemble(st):
            ctx.set_timer("disconnect", st.timeout_ns // len(st.servers))
        else:
            ctx.set_timer("disconnect", 2 * st.timeout_ns // 3)

    def move_on(ctx):
        """The connection to the current server is gone: pause below 1 s, then the next."""
        st = ctx.state
        st.paused = True
        st.reconnecting = True
        ctx.cancel_timer("disconnect")
        ctx.set_timer("reconnect", ctx.rng.randrange(RECONNECT_PAUSE_NS))

    def disconnected(ctx):
        """Curator's SUSPENDED: a leader stops acting as one; a waiter keeps waiting."""
        step_down(ctx)

    def lost_connection(ctx):
        """The connection broke or went silent: close it and connect again (the next server
        after a pause, on an ensemble)."""
        st = ctx.state
        disconnected(ctx)
        ctx.disconnect(server(st))
        if ensemble(st):
            move_on(ctx)
        else:
            reconnect(ctx)

    # -- the recipe --------------------------------------------------------------------------

    def step_down(ctx):
        st = ctx.state
        if st.claimed:
            st.claimed = False
            ctx.step_down()
            ctx.cancel_timer("write")

    def start_over(ctx):
        """A new session and a new child (expired session, resignation, restart)."""
        st = ctx.state
        step_down(ctx)
        st.leader_seen = None  # a new session names nobody until it reads the children
        st.phase = CONNECTING
        st.session = 0
        st.seq = None
        st.pred = st.observed = None
        if not st.paused:  # in the pause, the next server gets the Connect
            reconnect(ctx)

    def get_children(ctx):
        st = ctx.state
        ctx.send(server(st), {"type": "GetChildren", "session": st.session, "watch": False})

    def write_token(st):
        # THE BUG (token="session" only): the session id is unique per holder, and taken
        # for increasing across holders. It is not: a member whose session is older than
        # the last leader's (it connected first, its child was created later, or it waited
        # longest in line) leads after it with a lower token, and the resource, which has
        # accepted the higher one, refuses the legitimate leader's writes. The czxid of the
        # child is what orders the leaderships: the seat goes in creation order.
        return st.session if token == "session" else st.czxid

    def evaluate(ctx, children):
        """The recipe's decision on a view of the children, ``[[seq, czxid, node], ...]``."""
        st = ctx.state
        st.leader_seen = children[0][2] if children else None
        if st.seq is None or st.phase not in (WAITING, LEADING):
            return
        if not any(c[0] == st.seq for c in children):
            start_over(ctx)  # the own child is gone: the session expired
            return
        if children[0][0] == st.seq:
            st.phase = LEADING
            st.pred = st.observed = None
            if not st.claimed and connected(ctx):
                st.claimed = True
                ctx.lead(st.czxid, write_token(st))
                ctx.write(write_token(st))
                ctx.set_timer("write", WRITE_EVERY_NS)
            return
        if st.phase == LEADING:
            # A lower child cannot appear after the own one; a view that says so is not to
            # be led on: start over rather than guess.
            start_over(ctx)
            return
        pred = predecessor_of(children, st.seq)
        if pred != st.pred:
            st.pred = pred
            ctx.send(server(st), {"type": "Exists", "session": st.session, "seq": pred})
        first = children[0][0]
        if first != pred and first != st.observed:
            st.observed = first
            ctx.send(server(st), {"type": "Exists", "session": st.session, "seq": first})
        elif first == pred:
            st.observed = None

    def resync(ctx):
        """After a reconnect: read the children again, and watch anew from that view."""
        st = ctx.state
        st.pred = st.observed = None
        get_children(ctx)

    # -- reporting ---------------------------------------------------------------------------

    def report(ctx):
        st = ctx.state
        if st.seen_zxid != st.saved_zxid:
            # After the step's sends: the service, not this disk, holds the election; the
            # term is kept only so that it never goes back across a restart.
            ctx.persist({"zxid": st.seen_zxid})
            st.saved_zxid = st.seen_zxid
        if st.phase == LEADING:
            leader = ctx.me if st.claimed else None
        else:
            leader = st.leader_seen
        ctx.report(term=st.seen_zxid, leader=leader)

    # -- handlers ----------------------------------------------------------------------------

    @node.on_init
    def init(ctx, durable):
        st = ctx.state
        if not ctx.services:
            raise RuntimeError("zk_recipe: no service: run me under ExternalClient(service: ZooKeeper(...))")
        if durable is not None:
            st.seen_zxid = st.saved_zxid = durable["zxid"]
        # StaticHostProvider: Collections.shuffle of the server list (the built-in client's
        # Fisher-Yates, drawn from the node's own generator).
        st.servers = list(ctx.services)
        for i in range(len(st.servers) - 1, 0, -1):
            j = ctx.rng.randrange(i + 1)
            st.servers[i], st.servers[j] = st.servers[j], st.servers[i]
        st.timeout_ns = session_timeout_ns
        st.last_heard_ns = ctx.mono_ns
        start_over(ctx)
        report(ctx)

    @node.on_message()
    def answer(ctx, src, body):
        st = ctx.state
        if src not in ctx.services:
            return  # no member talks to another in this recipe
        if st.paused or src != server(st):
            return  # a late answer on a connection it left
        st.seen_zxid = max(st.seen_zxid, zxid_of(body))
        st.last_heard_ns = ctx.mono_ns
        ctx.set_timer("disconnect", 2 * st.timeout_ns // 3)
        resynced = st.reconnecting and st.seq is not None
        st.reconnecting = False
        if resynced:
            resync(ctx)
        kind = body["type"]
        if kind == "ConnectResp":
            if st.phase == CONNECTING:
                st.session = body["session"]
                st.timeout_ns = body["timeout_ns"]
                st.phase = CREATING
                ctx.set_timer("ping", st.timeout_ns // 3)
                ctx.send(server(st), {"type": "Create", "session": st.session})
        elif kind == "Pong":
            if body["session"] == st.session != 0:
                if body["expired"]:
                    start_over(ctx)
                elif st.phase == LEADING and not st.claimed and not resynced:
                    # Curator's RECONNECTED: check the children before serving again.
                    get_children(ctx)
        elif kind == "CreateResp":
            if st.phase == CREATING:
                st.seq = body["seq"]
                st.czxid = body["czxid"]
                st.phase = WAITING
                st.pred = st.observed = None
                get_children(ctx)
        elif kind == "Children":
            evaluate(ctx, body["children"])
        elif kind in ("ExistsResp", "NodeDeleted"):
            gone = kind == "NodeDeleted" or not body["exists"]
            if gone and st.phase == WAITING and body["seq"] in (st.pred, st.observed):
                if body["seq"] == st.observed:
                    st.observed = None
                get_children(ctx)
        report(ctx)

    @node.on_timer("ping")
    def ping(ctx):
        st = ctx.state
        # No pings without a connection (in the pause, or before the new one answered).
        if st.session != 0 and not (ensemble(st) and st.reconnecting):
            ctx.send(server(st), {"type": "Ping", "session": st.session})
        ctx.set_timer("ping", st.timeout_ns // 3)
        report(ctx)

    @node.on_timer("disconnect")
    def connection_check(ctx):
        st = ctx.state
        if ensemble(st):
            # The connect attempt timed out (T/n), or nothing heard for 2T/3.
            if not st.paused and (st.reconnecting or not connected(ctx)):
                lost_connection(ctx)
        elif not connected(ctx):
            # "Client session timed out, have not heard from server in ...ms".
            lost_connection(ctx)
        report(ctx)

    @node.on_timer("reconnect")
    def next_server(ctx):
        st = ctx.state
        st.paused = False
        st.current = (st.current + 1) % len(st.servers)
        reconnect(ctx)
        report(ctx)

    @node.on_timer("write")
    def write(ctx):
        st = ctx.state
        if st.claimed:
            if connected(ctx):
                ctx.write(write_token(st))
            ctx.set_timer("write", WRITE_EVERY_NS)

    @node.on_disconnect
    def disconnect(ctx, peer):
        st = ctx.state
        if peer != server(st):
            return
        disconnected(ctx)
        if ensemble(st):
            if not st.paused:
                move_on(ctx)
        else:
            reconnect(ctx)
        report(ctx)

    @node.on_resign
    def resign(ctx):
        st = ctx.state
        if st.phase == LEADING:
            ctx.send(server(st), {"type": "CloseSession", "session": st.session})
            start_over(ctx)
            report(ctx)

    return node


def session_timeout_from(argv):
    """``--session-timeout-ms N`` from the command line, or the default (2 s)."""
    if "--session-timeout-ms" in argv:
        return int(argv[argv.index("--session-timeout-ms") + 1]) * 1_000_000
    return SESSION_TIMEOUT_NS


if __name__ == "__main__":
    build(token="czxid", session_timeout_ns=session_timeout_from(sys.argv[1:])).run()
