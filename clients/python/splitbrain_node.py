"""Write a splitbrain election node in Python: the step protocol (version 2), spoken for you.

splitbrain's ``External(command: [...])`` algorithm runs each election member as an OS
process and drives it over stdin/stdout, one JSON object per line (docs/protocol.md). This
module is that protocol: declare the message types and timers the node uses, register a
handler per event, call :meth:`Node.run`. Handlers act through a :class:`Context`
(``ctx.send(...)``, ``ctx.set_timer(...)``, ``ctx.lead(...)``, ...); the library turns what
they did into exactly one reply line per event.

Standard library only, Python 3.9 or later. Copy this one file next to your node, or put
its directory on ``PYTHONPATH``.

A minimal node::

    from splitbrain_node import Node

    node = Node(messages=["ping"], timers=["tick"], state=dict)

    @node.on_init
    def init(ctx, durable):
        ctx.state["pings"] = 0
        ctx.set_timer("tick", ctx.rng.randint(100_000_000, 200_000_000))

    @node.on_timer("tick")
    def tick(ctx):
        for peer in ctx.peers:
            ctx.send(peer, {"type": "ping"})

    @node.on_message("ping")
    def ping(ctx, src, body):
        ctx.state["pings"] += 1

    if __name__ == "__main__":
        node.run()

Determinism (protocol rule 3): a node's only clocks are ``ctx.mono_ns`` and ``ctx.wall_ns``,
its only randomness ``ctx.rng``. Do not read ``time``, ``random``'s global generator,
``os.urandom``, the environment, files or the network, and do not iterate over sets or
dicts of strings whose order depends on ``PYTHONHASHSEED``.

Resetting (protocol rule 4): the same process serves many runs (the seeds of a hunt) and
every restart of its member. At each ``init`` the library builds a new :class:`Context`,
with a new ``ctx.state`` from the ``state`` factory and a new ``ctx.rng``, so state kept
there cannot leak from one run into the next. State kept in globals or closures can: don't.
"""

import hashlib
import json
import os
import random
import sys
import traceback

__all__ = ["Context", "Node", "ProtocolError", "PROTOCOL_VERSION"]

#: The protocol version this library speaks (docs/protocol.md).
PROTOCOL_VERSION = 2

_UNSET = object()

_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode


class ProtocolError(Exception):
    """The simulator sent something this library cannot act on (an event before ``init``,
    an event without a field it needs), or a node was declared inconsistently."""


def _is_int(value):
    """Whether ``value`` is a JSON integer (``bool`` is an ``int`` in Python but not in JSON)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _require_int(what, value, minimum=None):
    if not _is_int(value):
        raise TypeError("%s must be an int, not %r" % (what, value))
    if minimum is not None and value < minimum:
        raise ValueError("%s must be at least %d, not %d" % (what, minimum, value))


def _shown(line):
    """An event line as an error shows it."""
    return line.decode("utf-8", "replace").rstrip("\n")


class Context:
    """What a handler sees of its node, and how it acts.

    A new context is built at every ``init`` (the start of a run, or a restart after a
    crash) and serves every event of that run. Its attributes:

    ``me``
        this node's id (``init``'s ``node``).
    ``members``
        every member's id, this one included, ascending (a tuple).
    ``peers``
        every member's id but this one, ascending (a tuple).
    ``majority``
        the smallest majority of ``members`` (``len(members) // 2 + 1``).
    ``service``
        the modeled coordination service's id, or ``None``: its first process, when it runs
        as several (``services``).
    ``services``
        every service process a client may send requests to, ascending (a tuple): the one
        service process, each member of a clustered etcd or ZooKeeper, the API servers of a
        Kubernetes Lease on etcd (docs/protocol-services.md, "Clusters"); empty without one.
    ``seed``
        this node's random seed for this run.
    ``restart``
        ``False`` at the start of a run, ``True`` when the node comes back after a crash.
    ``rng``
        a ``random.Random(seed)``, created at each ``init``: the node's only randomness.
    ``state``
        what the node's ``state`` factory returned at this ``init`` (``None`` without one).
    ``mono_ns``, ``wall_ns``
        the node's monotonic and wall clocks at the event being handled (nanoseconds).
    ``event``
        the event being handled, as the simulator sent it (a dict).

    The effect methods below append to the current step's reply, in call order; they check
    their arguments and raise ``TypeError``/``ValueError`` at the faulty call.
    """

    def __init__(self, node, event):
        """Builds the context of one run from its ``init`` event (done by :class:`Node`)."""
        self._messages = node._message_set
        self._timers = node._timer_set
        self.me = event["node"]
        self.members = tuple(event["members"])
        self.peers = tuple(m for m in self.members if m != self.me)
        self.majority = len(self.members) // 2 + 1
        self.service = event.get("service")
        services = event.get("services")
        if services is None:  # a simulator from before clustered services
            services = [] if self.service is None else [self.service]
        self.services = tuple(services)
        self.seed = event["seed"]
        self.restart = bool(event.get("restart", False))
        self.rng = random.Random(self.seed)
        self.event = event
        self.mono_ns = event.get("mono_ns")
        self.wall_ns = event.get("wall_ns")
        self._destinations = frozenset(self.members) | frozenset(self.services)
        self._effects = []
        self._term = _UNSET
        self._leader = _UNSET
        self._digest = _UNSET
        self.state = node._state_factory() if node._state_factory is not None else None

    # -- reporting -------------------------------------------------------------------------

    def report(self, term=_UNSET, leader=_UNSET, digest=_UNSET):
        """Reports this node's current ``term`` (an int, checked for ``term_monotonic``)
        and/or the ``leader`` it recognises (an id, itself included, or ``None`` for none),
        and/or a ``digest`` of its whole state (any JSON value: equal digests must mean the
        node goes on alike; a systematic search skips states it has explored, see
        docs/protocol.md). The digest is serialised now, and sent as
        ``{"state": digest, "rand": ...}``: the position of ``ctx.rng`` as the step ends is
        added, since it decides what the node draws next (as the Go and Rust clients do).

        Only what is given is sent, in this step's reply; what is not reported stays as the
        simulator last heard it. Reporting twice in one step keeps the last value.
        """
        if term is not _UNSET:
            _require_int("term", term, 0)
            self._term = term
        if leader is not _UNSET:
            if leader is not None:
                _require_int("leader", leader, 0)
            self._leader = leader
        if digest is not _UNSET:
            self._digest = json.dumps(digest, separators=(",", ":"), sort_keys=True)

    # -- effects ---------------------------------------------------------------------------

    def send(self, to, body):
        """Sends ``body``, a JSON object (dict) whose ``"type"`` is one of the node's declared
        ``messages``, to member ``to`` over the simulated network; to a service process (one
        of ``services``), one of the service's requests (docs/protocol-services.md), which the
        simulator checks and which need not be declared. The body is serialised now: changing
        the dict afterwards does not change what was sent."""
        _require_int("send: to", to)
        if to not in self._destinations:
            raise ValueError(
                "send: %r is neither a member %r nor a service process %r"
                % (to, list(self.members), list(self.services))
            )
        if not isinstance(body, dict):
            raise TypeError("send: body must be a dict with a \"type\", not %r" % (body,))
        kind = body.get("type")
        if kind not in self._messages and to not in self.services:
            raise ValueError(
                "send: message type %r was not declared in Node(messages=%r)"
                % (kind, sorted(self._messages))
            )
        self._effects.append('{"type":"send","to":%d,"body":%s}' % (to, _dumps(body)))

    def set_timer(self, name, after_ns):
        """Arms (or re-arms) timer ``name`` to fire after ``after_ns`` nanoseconds of the
        monotonic clock. Each name is one slot."""
        self._check_timer("set_timer", name)
        _require_int("set_timer: after_ns", after_ns, 0)
        self._effects.append(
            '{"type":"set_timer","name":%s,"after_ns":%d}' % (_dumps(name), after_ns)
        )

    def set_wall_timer(self, name, at_wall_ns):
        """Arms timer ``name`` to fire when the wall clock reads ``at_wall_ns``."""
        self._check_timer("set_wall_timer", name)
        _require_int("set_wall_timer: at_wall_ns", at_wall_ns)
        self._effects.append(
            '{"type":"set_wall_timer","name":%s,"at_wall_ns":%d}' % (_dumps(name), at_wall_ns)
        )

    def cancel_timer(self, name):
        """Disarms timer ``name`` (nothing happens if it is not armed)."""
        self._check_timer("cancel_timer", name)
        self._effects.append('{"type":"cancel_timer","name":%s}' % _dumps(name))

    def persist(self, state):
        """Writes ``state`` (any JSON value) to this node's disk and fsyncs. Sends after it
        leave once the write completed; a crash before that loses it; ``init``'s ``durable``
        gives back the last completed one. Serialised now, like :meth:`send`."""
        self._effects.append('{"type":"persist","state":%s}' % _dumps(state))

    def lead(self, term, token):
        """Declares that this node now believes it leads ``term``, fencing its writes with
        ``token`` (checked: at most one leader per term)."""
        _require_int("lead: term", term, 0)
        _require_int("lead: token", token, 0)
        self._effects.append('{"type":"lead","term":%d,"token":%d}' % (term, token))

    def step_down(self):
        """Declares that this node no longer believes it leads."""
        self._effects.append('{"type":"step_down"}')

    def write(self, token):
        """Writes to the fenced resource with ``token`` (checked: fencing at the resource)."""
        _require_int("write: token", token, 0)
        self._effects.append('{"type":"write","token":%d}' % token)

    def campaign(self, term):
        """Declares that this node started an election for ``term`` (counted as one)."""
        _require_int("campaign: term", term, 0)
        self._effects.append('{"type":"campaign","term":%d}' % term)

    def pre_campaign(self, term):
        """Declares that this node started a pre-vote for ``term`` (Raft's PreVote: a probe
        that does not raise its term): counted as a pre-vote, not as an election."""
        _require_int("pre_campaign: term", term, 0)
        self._effects.append('{"type":"pre_campaign","term":%d}' % term)

    def round_failed(self, term):
        """Declares that this node's election for ``term`` ended without a winner (a split
        vote, a timeout while a candidate): counted as a failed round."""
        _require_int("round_failed: term", term, 0)
        self._effects.append('{"type":"round_failed","term":%d}' % term)

    def observe(self, name, value):
        """Records an observation for a property of your own: ``name`` a string, ``value``
        a bool, an int or ``None``."""
        if not isinstance(name, str):
            raise TypeError("observe: name must be a str, not %r" % (name,))
        if value is not None and not isinstance(value, int):
            raise TypeError("observe: value must be a bool, an int or None, not %r" % (value,))
        self._effects.append(
            '{"type":"observe","name":%s,"value":%s}' % (_dumps(name), _dumps(value))
        )

    def disconnect(self, peer):
        """Closes the ``Stream`` connection to ``peer``."""
        _require_int("disconnect: peer", peer, 0)
        self._effects.append('{"type":"disconnect","peer":%d}' % peer)

    # -- internals -------------------------------------------------------------------------

    def _check_timer(self, what, name):
        if name not in self._timers:
            raise ValueError(
                "%s: timer %r was not declared in Node(timers=%r)"
                % (what, name, sorted(self._timers))
            )

    def _begin(self, event):
        self.event = event
        self.mono_ns = event.get("mono_ns")
        self.wall_ns = event.get("wall_ns")
        self._effects = []
        self._term = _UNSET
        self._leader = _UNSET
        self._digest = _UNSET

    def _rng_digest(self):
        """A digest of ``rng``'s position: what it will draw next."""
        return hashlib.sha256(repr(self.rng.getstate()).encode()).hexdigest()[:16]

    def _reply_line(self):
        parts = ['{"effects":[', ",".join(self._effects), "]"]
        if self._term is not _UNSET:
            parts.append(',"term":%d' % self._term)
        if self._leader is not _UNSET:
            parts.append(',"leader":null' if self._leader is None else ',"leader":%d' % self._leader)
        if self._digest is not _UNSET:
            parts.append(',"digest":{"state":%s,"rand":"%s"}' % (self._digest, self._rng_digest()))
        step = self.event.get("step") if self.event else None
        if isinstance(step, int):
            # Protocol version 2: the reply names its event, so a stray line cannot pass.
            parts.append(',"step":%d' % step)
        parts.append("}")
        self._effects = []
        return "".join(parts)


class Node:
    """One election node: its declared message types and timers, and its event handlers.

    ``messages`` are the ``type``\\ s of the bodies it sends, ``timers`` the names of the
    timers it arms (both announced in ``hello_ok``; the simulator refuses any other).
    ``state`` is an optional zero-argument factory (a class, ``dict``, a function) called
    at every ``init``; its result is ``ctx.state``, so every run starts from fresh state.

    Register handlers with the decorators, then call :meth:`run` (a process) or
    :meth:`step` (a test)::

        @node.on_init                 # def f(ctx, durable): start or restart
        @node.on_message("vote")      # def f(ctx, src, body): a "vote" message arrived
        @node.on_message()            # def f(ctx, src, body): any message without its own handler
        @node.on_timer("election")    # def f(ctx): the timer fired
        @node.on_resign               # def f(ctx): the scenario asks the leader to hand over
        @node.on_conf_change          # def f(ctx, op, member): propose a membership change
        @node.on_disconnect           # def f(ctx, peer): the Stream connection to peer broke

    ``on_init`` is required. A message or timer that arrives with no handler for it is an
    error (``LookupError``); ``resign``, ``conf_change`` and ``disconnect`` without a handler
    do nothing.
    """

    def __init__(self, messages, timers, state=None):
        """Declares the node's message types and timer names; ``state`` is the factory of
        ``ctx.state``."""
        self.messages = self._names("messages", messages)
        self.timers = self._names("timers", timers)
        self._message_set = frozenset(self.messages)
        self._timer_set = frozenset(self.timers)
        if state is not None and not callable(state):
            raise TypeError("state must be a zero-argument factory (a class, dict, a function)")
        self._state_factory = state
        self._init = None
        self._message_handlers = {}
        self._any_message = None
        self._timer_handlers = {}
        self._resign = None
        self._conf_change = None
        self._disconnect = None
        self._ctx = None

    @staticmethod
    def _names(what, names):
        if isinstance(names, str):
            raise TypeError("%s must be a list of names, not the string %r" % (what, names))
        names = list(names)
        for name in names:
            if not isinstance(name, str) or not name:
                raise TypeError("%s: every name must be a non-empty str, not %r" % (what, name))
        if len(set(names)) != len(names):
            raise ValueError("%s: a name is declared twice in %r" % (what, names))
        return names

    # -- registration ----------------------------------------------------------------------

    def on_init(self, handler):
        """Decorator: ``handler(ctx, durable)`` runs at the start of every run and on every
        restart (``ctx.restart``); ``durable`` is the last state persisted before the crash
        that reached the disk, or ``None``. Arm the node's first timers here."""
        self._init = handler
        return handler

    def on_message(self, *types):
        """Decorator: ``handler(ctx, src, body)`` runs when a message of one of ``types``
        arrives from ``src`` (with no types: any message without a handler of its own).
        ``body`` is the dict the sender sent."""
        for kind in types:
            if kind not in self._message_set:
                raise ValueError(
                    "on_message: message type %r was not declared in Node(messages=%r)"
                    % (kind, self.messages)
                )

        def register(handler):
            if types:
                for kind in types:
                    self._message_handlers[kind] = handler
            else:
                self._any_message = handler
            return handler

        return register

    def on_timer(self, *names):
        """Decorator: ``handler(ctx)`` runs when one of the timers ``names`` fires; the name
        is in ``ctx.event["name"]``."""
        if not names:
            raise TypeError("on_timer needs at least one timer name")
        for name in names:
            if name not in self._timer_set:
                raise ValueError(
                    "on_timer: timer %r was not declared in Node(timers=%r)" % (name, self.timers)
                )

        def register(handler):
            for name in names:
                self._timer_handlers[name] = handler
            return handler

        return register

    def on_resign(self, handler):
        """Decorator: ``handler(ctx)`` runs when the scenario asks the leader to hand over."""
        self._resign = handler
        return handler

    def on_conf_change(self, handler):
        """Decorator: ``handler(ctx, op, member)`` runs when the scenario asks this node (its
        leader, as a rule) to propose a membership change: ``op`` is ``"add"``,
        ``"remove"``, ``"add_learner"`` or ``"promote"``, ``member`` a member's id."""
        self._conf_change = handler
        return handler

    def on_disconnect(self, handler):
        """Decorator: ``handler(ctx, peer)`` runs when the ``Stream`` connection to ``peer``
        broke (what was in flight on it is lost)."""
        self._disconnect = handler
        return handler

    # -- driving ---------------------------------------------------------------------------

    @staticmethod
    def _fail(stderr, what):
        """Writes ``what`` and the exception being handled to stderr, and exits with status 1."""
        stderr.write("splitbrain_node: %s\n" % what)
        traceback.print_exc(file=stderr)
        stderr.flush()
        sys.exit(1)

    @property
    def context(self):
        """The context of the current run (``None`` before the first ``init``): for tests,
        to look at ``ctx.state`` between steps."""
        return self._ctx

    def hello_ok(self, spoken=PROTOCOL_VERSION):
        """The answer to ``hello``, as a dict: the newest version both sides speak (a
        simulator that speaks ``spoken``)."""
        return {
            "type": "hello_ok",
            "protocol": min(PROTOCOL_VERSION, spoken),
            "messages": list(self.messages),
            "timers": list(self.timers),
        }

    def step(self, event):
        """Handles one event (a dict, as the simulator sends it) and returns the reply as a
        dict: exactly what :meth:`run` would write for it. Handler exceptions propagate."""
        return json.loads(self.step_line(event))

    def step_line(self, event):
        """Handles one event (a dict) and returns the reply line, without its newline."""
        kind = event.get("type")
        if kind == "hello":
            return _dumps(self.hello_ok(event.get("protocol", 1)))
        if kind == "init":
            if self._init is None:
                raise ProtocolError("no on_init handler: register one with @node.on_init")
            # Protocol rule 4: everything of the previous run is dropped here.
            self._ctx = None
            ctx = Context(self, event)
            self._ctx = ctx
            self._init(ctx, event.get("durable"))
            return ctx._reply_line()
        ctx = self._ctx
        if ctx is None:
            raise ProtocolError("event %r arrived before init" % (kind,))
        ctx._begin(event)
        if kind == "message":
            body = event["body"]
            handler = self._message_handlers.get(body.get("type"), self._any_message)
            if handler is None:
                raise LookupError("no handler for message type %r" % (body.get("type"),))
            handler(ctx, event["from"], body)
        elif kind == "timer":
            handler = self._timer_handlers.get(event["name"])
            if handler is None:
                raise LookupError("no handler for timer %r" % (event["name"],))
            handler(ctx)
        elif kind == "resign":
            if self._resign is not None:
                self._resign(ctx)
        elif kind == "conf_change":
            if self._conf_change is not None:
                self._conf_change(ctx, event["op"], event["node"])
        elif kind == "disconnect":
            if self._disconnect is not None:
                self._disconnect(ctx, event["peer"])
        # Any other event type comes from a later protocol version: a version-1 node has
        # nothing to do for it, and answers with no effects.
        return ctx._reply_line()

    def run(self, stdin=None, stdout=None, stderr=None):
        """Serves the simulator until stdin closes: reads one event line, writes one reply
        line (flushed), repeatedly. Returns normally at end of input, so a script that ends
        with ``node.run()`` exits with status 0.

        A handler exception (or a malformed event) is written to stderr with its traceback
        and the event that caused it, and the process exits with status 1; the simulator
        then reports the failure, located. ``stdin``/``stdout`` are binary streams
        (default: the process's), ``stderr`` a text stream.
        """
        stdin = stdin if stdin is not None else sys.stdin.buffer
        stdout = stdout if stdout is not None else sys.stdout.buffer
        stderr = stderr if stderr is not None else sys.stderr
        readline = stdin.readline
        write = stdout.write
        flush = stdout.flush
        loads = json.loads
        step_line = self.step_line
        # The step the simulator names in its error report: events since the run's first
        # init, that init included (hello is not counted; a restart does not reset it).
        step = 0
        while True:
            line = readline()
            if not line:
                return
            if line.isspace():
                continue
            try:
                event = loads(line)
            except ValueError:
                self._fail(stderr, "could not read the event line " + _shown(line))
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "init" and not event.get("restart"):
                step = 1
            elif kind != "hello":
                step += 1
            try:
                reply = step_line(event)
            except Exception:
                self._fail(stderr, "step %d of the run failed, on the event %s" % (step, _shown(line)))
            try:
                write(reply.encode("utf-8") + b"\n")
                flush()
            except BrokenPipeError:
                # The simulator is gone: nobody is left to answer. Point the process's
                # stdout at nothing so that the interpreter's last flush stays quiet.
                if stdout is getattr(sys.stdout, "buffer", None):
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, sys.stdout.fileno())
                return
