"""Unit tests of splitbrain_node and of the Raft examples (stdlib unittest).

From the repository root:

    python3 -m unittest discover -s clients/python -p 'test_*.py'
"""

import json
import os
import select
import subprocess
import sys
import tempfile
import textwrap
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "examples"))

import raft  # noqa: E402
from splitbrain_node import Node, ProtocolError  # noqa: E402


def init_event(node=0, members=(0, 1, 2), seed=7, restart=False, durable=None, mono_ns=0):
    return {
        "type": "init",
        "protocol": 1,
        "node": node,
        "members": list(members),
        "service": None,
        "seed": seed,
        "restart": restart,
        "durable": durable,
        "mono_ns": mono_ns,
        "wall_ns": mono_ns + 1_000,
    }


def message(src, body, mono_ns=0):
    return {"type": "message", "from": src, "body": body, "mono_ns": mono_ns, "wall_ns": mono_ns}


def timer(name, mono_ns=0):
    return {"type": "timer", "name": name, "mono_ns": mono_ns, "wall_ns": mono_ns}


def effect_node(action):
    """A node whose "act" timer runs ``action(ctx)``: one effect under test per step."""
    node = Node(messages=["ping", "pong"], timers=["act", "other"])
    node.on_init(lambda ctx, durable: None)
    node.on_timer("act")(action)
    node.step(init_event())
    return node


class Hello(unittest.TestCase):
    def test_hello_is_answered_with_the_declared_messages_and_timers(self):
        node = Node(messages=["vote_request", "vote"], timers=["election", "heartbeat"])
        self.assertEqual(
            node.step_line({"type": "hello", "protocol": 1}),
            '{"type":"hello_ok","protocol":1,"messages":["vote_request","vote"],'
            '"timers":["election","heartbeat"]}',
        )

    def test_the_newest_version_both_speak_is_answered_and_version_2_echoes_steps(self):
        node = Node(messages=["ping"], timers=["act"])
        node.on_init(lambda ctx, durable: None)
        node.on_timer("act")(lambda ctx: None)
        self.assertIn('"protocol":2', node.step_line({"type": "hello", "protocol": 2}))
        self.assertIn('"protocol":1', node.step_line({"type": "hello", "protocol": 1}))
        self.assertEqual(node.step(dict(init_event(), step=1))["step"], 1)
        self.assertEqual(node.step(dict(timer("act"), step=2))["step"], 2)
        self.assertNotIn("step", node.step(timer("act")), "a version-1 event has no step")

    def test_a_name_declared_twice_is_refused(self):
        with self.assertRaises(ValueError):
            Node(messages=["vote", "vote"], timers=[])

    def test_a_string_instead_of_a_list_is_refused(self):
        with self.assertRaises(TypeError):
            Node(messages="vote", timers=[])


class Init(unittest.TestCase):
    def setUp(self):
        self.node = Node(messages=["ping"], timers=["t"], state=dict)
        self.seen = []

        @self.node.on_init
        def init(ctx, durable):
            self.seen.append((ctx.state.get("count"), durable, ctx.restart))
            ctx.state["count"] = 0
            ctx.state["draw"] = ctx.rng.random()

        @self.node.on_message("ping")
        def ping(ctx, src, body):
            ctx.state["count"] += 1
            ctx.state["draw"] = ctx.rng.random()

    def test_init_gives_the_ids_and_settings_of_the_run(self):
        self.node.step(init_event(node=1, members=[0, 1, 2, 3], seed=9))
        ctx = self.node.context
        self.assertEqual(ctx.me, 1)
        self.assertEqual(ctx.members, (0, 1, 2, 3))
        self.assertEqual(ctx.peers, (0, 2, 3))
        self.assertEqual(ctx.majority, 3)
        self.assertIsNone(ctx.service)
        self.assertEqual(ctx.seed, 9)
        self.assertFalse(ctx.restart)

    def test_init_starts_from_fresh_state_and_a_reseeded_rng(self):
        self.node.step(init_event(seed=5))
        first_draw = self.node.context.state["draw"]
        self.node.step(message(1, {"type": "ping"}))
        self.node.step(message(2, {"type": "ping"}))
        self.assertEqual(self.node.context.state["count"], 2)
        self.node.step(init_event(seed=5, restart=True, durable={"term": 3}))
        # The factory made a new dict: nothing of the last run shows through.
        self.assertEqual(self.seen, [(None, None, False), (None, {"term": 3}, True)])
        self.assertEqual(self.node.context.state, {"count": 0, "draw": first_draw})
        self.assertTrue(self.node.context.restart)

    def test_the_same_init_gives_the_same_replies(self):
        node = Node(messages=[], timers=["t"])
        node.on_init(lambda ctx, durable: ctx.set_timer("t", ctx.rng.randint(1, 10**9)))
        first = node.step_line(init_event(seed=11))
        node.step_line(init_event(seed=12))
        self.assertEqual(node.step_line(init_event(seed=11)), first)

    def test_clocks_follow_each_event(self):
        self.node.step(init_event(mono_ns=10))
        self.assertEqual((self.node.context.mono_ns, self.node.context.wall_ns), (10, 1010))
        self.node.step({"type": "message", "from": 1, "body": {"type": "ping"},
                        "mono_ns": 20, "wall_ns": 99})
        self.assertEqual((self.node.context.mono_ns, self.node.context.wall_ns), (20, 99))

    def test_an_event_before_init_is_a_protocol_error(self):
        with self.assertRaises(ProtocolError):
            self.node.step(message(1, {"type": "ping"}))

    def test_a_node_without_an_init_handler_is_refused_at_init(self):
        with self.assertRaises(ProtocolError):
            Node(messages=[], timers=[]).step(init_event())


class Effects(unittest.TestCase):
    def reply(self, action):
        return effect_node(action).step_line(timer("act"))

    def test_send(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.send(2, {"type": "ping", "term": 3, "x": [1, None]})),
            '{"effects":[{"type":"send","to":2,"body":{"type":"ping","term":3,"x":[1,null]}}]}',
        )

    def test_set_timer(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.set_timer("other", 150_000_000)),
            '{"effects":[{"type":"set_timer","name":"other","after_ns":150000000}]}',
        )

    def test_set_wall_timer(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.set_wall_timer("act", 1_700_000_000_000_000_000)),
            '{"effects":[{"type":"set_wall_timer","name":"act","at_wall_ns":1700000000000000000}]}',
        )

    def test_cancel_timer(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.cancel_timer("other")),
            '{"effects":[{"type":"cancel_timer","name":"other"}]}',
        )

    def test_persist(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.persist({"term": 4, "voted_for": None})),
            '{"effects":[{"type":"persist","state":{"term":4,"voted_for":null}}]}',
        )
        self.assertEqual(
            self.reply(lambda ctx: ctx.persist(None)),
            '{"effects":[{"type":"persist","state":null}]}',
        )

    def test_lead(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.lead(5, 17)),
            '{"effects":[{"type":"lead","term":5,"token":17}]}',
        )

    def test_step_down(self):
        self.assertEqual(self.reply(lambda ctx: ctx.step_down()), '{"effects":[{"type":"step_down"}]}')

    def test_write(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.write(17)), '{"effects":[{"type":"write","token":17}]}'
        )

    def test_campaign(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.campaign(6)), '{"effects":[{"type":"campaign","term":6}]}'
        )

    def test_pre_campaign(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.pre_campaign(7)),
            '{"effects":[{"type":"pre_campaign","term":7}]}',
        )

    def test_round_failed(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.round_failed(6)), '{"effects":[{"type":"round_failed","term":6}]}'
        )

    def test_observe(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.observe("caught_up", True)),
            '{"effects":[{"type":"observe","name":"caught_up","value":true}]}',
        )
        self.assertEqual(
            self.reply(lambda ctx: ctx.observe("lag", -3)),
            '{"effects":[{"type":"observe","name":"lag","value":-3}]}',
        )
        self.assertEqual(
            self.reply(lambda ctx: ctx.observe("lag", None)),
            '{"effects":[{"type":"observe","name":"lag","value":null}]}',
        )

    def test_disconnect(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.disconnect(1)),
            '{"effects":[{"type":"disconnect","peer":1}]}',
        )

    def test_effects_keep_their_order(self):
        def act(ctx):
            ctx.persist(1)
            ctx.send(1, {"type": "pong"})
            ctx.step_down()

        self.assertEqual(
            [e["type"] for e in effect_node(act).step(timer("act"))["effects"]],
            ["persist", "send", "step_down"],
        )

    def test_a_step_without_effects_replies_with_an_empty_list(self):
        self.assertEqual(self.reply(lambda ctx: None), '{"effects":[]}')

    def test_effects_of_one_step_do_not_reach_the_next(self):
        node = effect_node(lambda ctx: ctx.write(1))
        node.step(timer("act"))
        self.assertEqual(node.step(timer("act")), {"effects": [{"type": "write", "token": 1}]})

    def test_a_body_changed_after_send_is_sent_as_it_was(self):
        def act(ctx):
            body = {"type": "ping", "term": 1}
            ctx.send(1, body)
            body["term"] = 2
            ctx.send(2, body)

        effects = effect_node(act).step(timer("act"))["effects"]
        self.assertEqual([e["body"]["term"] for e in effects], [1, 2])

    def test_an_undeclared_message_type_is_refused_at_send(self):
        with self.assertRaisesRegex(ValueError, "'vote' was not declared"):
            self.reply(lambda ctx: ctx.send(1, {"type": "vote"}))
        with self.assertRaisesRegex(ValueError, "None was not declared"):
            self.reply(lambda ctx: ctx.send(1, {"term": 1}))

    def test_a_clustered_services_processes_take_its_requests_undeclared(self):
        node = Node(messages=["ping"], timers=["act"])
        node.on_init(lambda ctx, durable: None)
        node.on_timer("act")(lambda ctx: [ctx.send(s, {"type": "Range"}) for s in ctx.services])
        node.step(dict(init_event(), service=3, services=[3, 4, 5]))
        sent = [e["to"] for e in node.step(timer("act"))["effects"]]
        self.assertEqual(sent, [3, 4, 5])
        with self.assertRaisesRegex(ValueError, "nor a service process"):
            node.on_timer("act")(lambda ctx: ctx.send(6, {"type": "Range"}))
            node.step(timer("act"))

    def test_a_single_service_without_services_is_the_one_service_process(self):
        node = Node(messages=[], timers=[])
        seen = []
        node.on_init(lambda ctx, durable: seen.append(ctx.services))
        node.step(dict(init_event(), service=3))
        node.step(init_event())
        self.assertEqual(seen, [(3,), ()])

    def test_an_undeclared_message_type_is_refused_at_registration(self):
        node = Node(messages=["ping"], timers=[])
        with self.assertRaisesRegex(ValueError, "'vote' was not declared"):
            node.on_message("vote")

    def test_an_undeclared_timer_is_refused(self):
        with self.assertRaisesRegex(ValueError, "timer 'election' was not declared"):
            self.reply(lambda ctx: ctx.set_timer("election", 1))
        with self.assertRaisesRegex(ValueError, "timer 'election' was not declared"):
            Node(messages=[], timers=["t"]).on_timer("election")

    def test_bad_arguments_are_refused_at_the_call(self):
        for action in [
            lambda ctx: ctx.send(7, {"type": "ping"}),  # not a member
            lambda ctx: ctx.send(True, {"type": "ping"}),  # a bool is not an id
            lambda ctx: ctx.send(1, ["ping"]),
            lambda ctx: ctx.set_timer("act", -1),
            lambda ctx: ctx.set_timer("act", 1.5),
            lambda ctx: ctx.lead(1, "token"),
            lambda ctx: ctx.write(None),
            lambda ctx: ctx.write(-1),  # tokens, terms and ids are never negative
            lambda ctx: ctx.observe("x", 1.5),
            lambda ctx: ctx.persist(float("nan")),
            lambda ctx: ctx.report(term=-1),
            lambda ctx: ctx.report(leader="me"),
        ]:
            with self.assertRaises((TypeError, ValueError)):
                self.reply(action)


class Reporting(unittest.TestCase):
    def reply(self, action):
        return effect_node(action).step_line(timer("act"))

    def test_term_and_leader_are_sent_when_reported(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.report(term=3, leader=1)),
            '{"effects":[],"term":3,"leader":1}',
        )

    def test_a_digest_is_sent_as_json_with_the_generators_position(self):
        line = self.reply(lambda ctx: ctx.report(term=2, digest={"role": "follower", "vote": 1}))
        reply = json.loads(line)
        self.assertEqual(reply["term"], 2)
        self.assertEqual(reply["digest"]["state"], {"role": "follower", "vote": 1})
        self.assertRegex(reply["digest"]["rand"], "^[0-9a-f]{16}$")

    def test_a_draw_changes_the_digest_and_the_same_draws_give_the_same_one(self):
        def act(draws):
            def step(ctx):
                for _ in range(draws):
                    ctx.rng.random()
                ctx.report(digest="same state")
            return json.loads(self.reply(step))["digest"]
        self.assertNotEqual(act(0), act(1))
        self.assertEqual(act(1), act(1))

    def test_no_leader_is_sent_as_null(self):
        self.assertEqual(
            self.reply(lambda ctx: ctx.report(leader=None)), '{"effects":[],"leader":null}'
        )

    def test_only_what_is_reported_is_sent(self):
        self.assertEqual(self.reply(lambda ctx: ctx.report(term=0)), '{"effects":[],"term":0}')
        self.assertEqual(self.reply(lambda ctx: ctx.report()), '{"effects":[]}')

    def test_the_last_report_of_a_step_wins_and_the_next_step_starts_blank(self):
        def act(ctx):
            ctx.report(term=1, leader=2)
            ctx.report(leader=None)
            ctx.report(term=4)

        node = effect_node(act)
        self.assertEqual(node.step_line(timer("act")), '{"effects":[],"term":4,"leader":null}')
        node.on_timer("other")(lambda ctx: None)
        self.assertEqual(node.step_line(timer("other")), '{"effects":[]}')


class Dispatch(unittest.TestCase):
    def setUp(self):
        self.calls = []
        node = Node(messages=["a", "b", "c"], timers=["t1", "t2", "t3"])
        node.on_init(lambda ctx, durable: self.calls.append(("init", durable)))
        node.on_message("a", "b")(lambda ctx, src, body: self.calls.append(("ab", src, body)))
        node.on_timer("t1", "t2")(lambda ctx: self.calls.append(("timer", ctx.event["name"])))
        self.node = node
        node.step(init_event(durable=[1]))

    def test_messages_and_timers_reach_their_handlers(self):
        self.node.step(message(2, {"type": "b", "n": 1}))
        self.node.step(timer("t2"))
        self.assertEqual(
            self.calls, [("init", [1]), ("ab", 2, {"type": "b", "n": 1}), ("timer", "t2")]
        )

    def test_a_message_or_timer_without_a_handler_is_an_error(self):
        with self.assertRaisesRegex(LookupError, "message type 'c'"):
            self.node.step(message(1, {"type": "c"}))
        with self.assertRaisesRegex(LookupError, "timer 't3'"):
            self.node.step(timer("t3"))

    def test_a_catch_all_message_handler_takes_the_rest(self):
        self.node.on_message()(lambda ctx, src, body: self.calls.append(("any", body["type"])))
        self.node.step(message(1, {"type": "c"}))
        self.node.step(message(1, {"type": "a"}))
        self.assertEqual(self.calls[1:], [("any", "c"), ("ab", 1, {"type": "a"})])

    def test_resign_and_disconnect_do_nothing_without_a_handler(self):
        self.assertEqual(self.node.step({"type": "resign", "mono_ns": 0, "wall_ns": 0}),
                         {"effects": []})
        self.assertEqual(
            self.node.step({"type": "disconnect", "peer": 1, "mono_ns": 0, "wall_ns": 0}),
            {"effects": []},
        )

    def test_resign_and_disconnect_reach_their_handlers(self):
        self.node.on_resign(lambda ctx: ctx.report(leader=None))
        self.node.on_disconnect(lambda ctx, peer: ctx.report(term=peer))
        self.assertEqual(self.node.step({"type": "resign", "mono_ns": 0, "wall_ns": 0}),
                         {"effects": [], "leader": None})
        self.assertEqual(
            self.node.step({"type": "disconnect", "peer": 2, "mono_ns": 0, "wall_ns": 0}),
            {"effects": [], "term": 2},
        )

    def test_a_conf_change_does_nothing_without_a_handler(self):
        event = {"type": "conf_change", "op": "remove", "node": 2, "mono_ns": 0, "wall_ns": 0}
        self.assertEqual(self.node.step(event), {"effects": []})

    def test_a_conf_change_reaches_its_handler_with_the_operation_and_member(self):
        self.node.on_conf_change(lambda ctx, op, member: self.calls.append(("conf", op, member)))
        for op in ["add", "remove", "add_learner", "promote"]:
            event = {"type": "conf_change", "op": op, "node": 1, "mono_ns": 0, "wall_ns": 0}
            self.assertEqual(self.node.step(event), {"effects": []})
        self.assertEqual(self.calls[1:], [("conf", op, 1) for op in
                                          ["add", "remove", "add_learner", "promote"]])

    def test_an_event_type_of_a_later_protocol_version_gets_an_empty_reply(self):
        self.assertEqual(self.node.step({"type": "future", "mono_ns": 0, "wall_ns": 0}),
                         {"effects": []})


NODE_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, %r)
    from splitbrain_node import Node
    node = Node(messages=["ping"], timers=["t"])

    @node.on_init
    def init(ctx, durable):
        ctx.set_timer("t", 5)

    @node.on_message("ping")
    def ping(ctx, src, body):
        if body.get("boom"):
            raise RuntimeError("boom from the handler")
        ctx.send(src, {"type": "ping", "n": body["n"] + 1})

    node.run()
    print("after run", file=sys.stderr)
    """
    % HERE
)


class Pipes(unittest.TestCase):
    """The library in a real process, over pipes, as the simulator runs it."""

    @classmethod
    def setUpClass(cls):
        # A file rather than `python -c`, so that tracebacks show the source line.
        cls.directory = tempfile.TemporaryDirectory()
        cls.script = os.path.join(cls.directory.name, "node.py")
        with open(cls.script, "w") as f:
            f.write(NODE_SCRIPT)

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def start(self):
        # Buffered stdout, as the simulator starts a node: only the library's flush makes
        # a reply leave before the next event.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        process = subprocess.Popen(
            [sys.executable, self.script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.addCleanup(self.stop, process)
        return process

    @staticmethod
    def stop(process):
        if process.poll() is None:
            process.kill()
        process.wait(10)
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()

    def ask(self, process, event):
        """Writes one event and reads one reply line; fails unless the library answers
        each event with one line, flushed, while the process keeps running."""
        process.stdin.write(json.dumps(event).encode() + b"\n")
        process.stdin.flush()
        readable, _, _ = select.select([process.stdout], [], [], 10)
        if not readable:
            self.fail("no reply line within 10s (not flushed?) to %r" % (event,))
        return process.stdout.readline().decode()

    def test_one_flushed_reply_line_per_event_and_exit_0_at_eof(self):
        process = self.start()
        self.assertEqual(
            self.ask(process, {"type": "hello", "protocol": 1}),
            '{"type":"hello_ok","protocol":1,"messages":["ping"],"timers":["t"]}\n',
        )
        self.assertEqual(
            self.ask(process, init_event()),
            '{"effects":[{"type":"set_timer","name":"t","after_ns":5}]}\n',
        )
        self.assertEqual(
            self.ask(process, message(2, {"type": "ping", "n": 1})),
            '{"effects":[{"type":"send","to":2,"body":{"type":"ping","n":2}}]}\n',
        )
        process.stdin.close()
        self.assertEqual(process.wait(10), 0)
        self.assertEqual(process.stdout.read(), b"")
        self.assertEqual(process.stderr.read().decode(), "after run\n")

    def test_a_handler_exception_exits_1_with_its_traceback_on_stderr(self):
        process = self.start()
        self.ask(process, {"type": "hello", "protocol": 1})
        self.ask(process, init_event())
        self.ask(process, message(1, {"type": "ping", "n": 1}))
        # A new run (the next seed of a hunt) counts its steps from 1, a restart does not.
        self.ask(process, init_event(seed=8))
        self.ask(process, message(1, {"type": "ping", "n": 1}))
        self.ask(process, init_event(seed=8, restart=True))
        event = message(1, {"type": "ping", "boom": True})
        process.stdin.write(json.dumps(event).encode() + b"\n")
        process.stdin.flush()
        self.assertEqual(process.wait(10), 1)
        process.stdin.close()
        self.assertEqual(process.stdout.read(), b"")  # no reply, no partial line
        stderr = process.stderr.read().decode()
        self.assertIn("splitbrain_node: step 4 of the run failed, on the event " + json.dumps(event), stderr)
        self.assertIn("Traceback (most recent call last):", stderr)
        self.assertIn('raise RuntimeError("boom from the handler")', stderr)
        self.assertTrue(stderr.endswith("RuntimeError: boom from the handler\n"), stderr)
        self.assertNotIn("after run", stderr)

    def test_a_line_that_is_not_json_exits_1(self):
        process = self.start()
        process.stdin.write(b"{not json\n")
        process.stdin.close()
        self.assertEqual(process.wait(10), 1)
        stderr = process.stderr.read().decode()
        self.assertIn("splitbrain_node: could not read the event line {not json", stderr)
        self.assertIn("JSONDecodeError", stderr)


class RaftExample(unittest.TestCase):
    """The examples' election code, driven step by step."""

    def grant(self, persist_vote, durable=None):
        node = raft.build(persist_vote=persist_vote)
        node.step(init_event(node=2, durable=durable, restart=durable is not None))
        return node.step(message(0, {"type": "vote_request", "term": 1}))

    def test_a_vote_is_persisted_before_it_is_sent(self):
        self.assertEqual(
            self.grant(persist_vote=True)["effects"],
            [
                {"type": "persist", "state": {"term": 1, "voted_for": None}},
                {"type": "persist", "state": {"term": 1, "voted_for": 0}},
                {"type": "set_timer", "name": "election", "after_ns": unittest.mock.ANY},
                {"type": "send", "to": 0, "body": {"type": "vote", "term": 1, "granted": True}},
            ],
        )

    def test_the_broken_variant_persists_the_term_but_not_the_vote(self):
        self.assertEqual(
            [e["type"] for e in self.grant(persist_vote=False)["effects"]],
            ["persist", "set_timer", "send"],
        )

    def test_a_restarted_node_keeps_its_persisted_vote(self):
        node = raft.build(persist_vote=True)
        node.step(init_event(node=2, restart=True, durable={"term": 1, "voted_for": 0}))
        reply = node.step(message(1, {"type": "vote_request", "term": 1}))
        self.assertEqual(
            reply["effects"],
            [{"type": "send", "to": 1, "body": {"type": "vote", "term": 1, "granted": False}}],
        )

    def second_vote_after_a_crash(self, persist_vote):
        """Node 2 grants term 1 to node 0, crashes, comes back with what it persisted, and is
        asked for term 1 by node 1: the answer it sends."""
        node = raft.build(persist_vote=persist_vote)
        node.step(init_event(node=2))
        effects = node.step(message(0, {"type": "vote_request", "term": 1}))["effects"]
        self.assertEqual(effects[-1]["body"], {"type": "vote", "term": 1, "granted": True})
        durable = [e["state"] for e in effects if e["type"] == "persist"][-1]
        node.step(init_event(node=2, restart=True, durable=durable))
        effects = node.step(message(1, {"type": "vote_request", "term": 1}))["effects"]
        return effects[-1]["body"]

    def test_a_restarted_node_does_not_vote_twice_in_one_term(self):
        self.assertEqual(
            self.second_vote_after_a_crash(persist_vote=True),
            {"type": "vote", "term": 1, "granted": False},
        )

    def test_the_broken_variant_votes_twice_in_one_term_after_a_crash(self):
        self.assertEqual(
            self.second_vote_after_a_crash(persist_vote=False),
            {"type": "vote", "term": 1, "granted": True},
        )

    def test_three_nodes_elect_exactly_one_leader_and_it_writes(self):
        nodes = [raft.build() for _ in range(3)]
        timers = {}  # (node, name) -> due time
        inbox = []  # (due, sequence, to, from, body)
        leads = []
        now = 0
        sequence = 0

        def apply(i, reply):
            nonlocal sequence
            for effect in reply["effects"]:
                if effect["type"] == "set_timer":
                    timers[(i, effect["name"])] = now + effect["after_ns"]
                elif effect["type"] == "cancel_timer":
                    timers.pop((i, effect["name"]), None)
                elif effect["type"] == "send":
                    sequence += 1
                    inbox.append((now + 1_000_000, sequence, effect["to"], i, effect["body"]))
                elif effect["type"] == "lead":
                    leads.append((i, effect["term"], effect["token"]))

        for i, node in enumerate(nodes):
            apply(i, node.step(init_event(node=i, seed=100 + i)))
        writes = 0
        while now < 2_000_000_000:
            due_timer = min(timers.items(), key=lambda kv: (kv[1], kv[0]), default=None)
            due_message = min(inbox, default=None)
            if due_message is not None and (due_timer is None or due_message[0] <= due_timer[1]):
                inbox.remove(due_message)
                now, _, to, src, body = due_message
                apply(to, nodes[to].step(message(src, body, now)))
            else:
                (i, name), now = due_timer
                del timers[(i, name)]
                reply = nodes[i].step(timer(name, now))
                writes += sum(e["type"] == "write" for e in reply["effects"])
                apply(i, reply)
        self.assertEqual(len(leads), 1, leads)
        leader, term, token = leads[0]
        self.assertEqual(token, term)
        self.assertGreater(writes, 30)  # one per 50ms heartbeat for most of 2s
        for node in nodes:
            self.assertEqual(node.context.state.leader, leader)
            self.assertEqual(node.context.state.term, term)


if __name__ == "__main__":
    unittest.main()
