"""Unit tests of the ZooKeeper recipe example (examples/zk_recipe.py), driven step by step
against hand-written answers, and three members against a dumb in-test ZooKeeper.

From the repository root:

    python3 -m unittest discover -s clients/python -p 'test_*.py'
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "examples"))

import zk_recipe  # noqa: E402

MEMBERS = (0, 1, 2)
SERVERS = (3, 4, 5)
T = 2_000_000_000  # the session timeout asked for and granted


def init_event(node=0, seed=7, restart=False, durable=None, mono_ns=0, services=SERVERS):
    return {
        "type": "init",
        "protocol": 2,
        "node": node,
        "members": list(MEMBERS),
        "service": services[0],
        "services": list(services),
        "seed": seed,
        "restart": restart,
        "durable": durable,
        "mono_ns": mono_ns,
        "wall_ns": mono_ns,
    }


def message(src, body, mono_ns):
    return {"type": "message", "from": src, "body": body, "mono_ns": mono_ns, "wall_ns": mono_ns}


def timer(name, mono_ns):
    return {"type": "timer", "name": name, "mono_ns": mono_ns, "wall_ns": mono_ns}


def sends(reply):
    """The (to, body) of every send of a reply."""
    return [(e["to"], e["body"]) for e in reply["effects"] if e["type"] == "send"]


def kinds(reply):
    return [e["type"] for e in reply["effects"]]


class Member:
    """One recipe node, stepped by hand; ``server`` is the server it talks to now."""

    def __init__(self, token="czxid", node=0, services=SERVERS):
        self.node = zk_recipe.build(token=token)
        self.now = 0
        self.last = self.node.step(init_event(node=node, services=services))
        self.server = sends(self.last)[0][0]

    def answer(self, body, src=None, after_ns=1_000_000):
        self.now += after_ns
        self.last = self.node.step(message(self.server if src is None else src, body, self.now))
        return self.last

    def fire(self, name, at_ns):
        self.now = at_ns
        self.last = self.node.step(timer(name, self.now))
        return self.last

    def disconnect(self, peer, after_ns=1_000_000):
        self.now += after_ns
        self.last = self.node.step(
            {"type": "disconnect", "peer": peer, "mono_ns": self.now, "wall_ns": self.now}
        )
        return self.last

    def waiting_with(self, seq, czxid, children, session=5):
        """Connected, child created, and the given view of the children answered."""
        self.answer({"type": "ConnectResp", "session": session, "timeout_ns": T})
        self.answer({"type": "CreateResp", "seq": seq, "czxid": czxid})
        return self.answer({"type": "Children", "zxid": czxid, "children": children})


class Recipe(unittest.TestCase):
    def test_init_connects_to_a_server_of_the_shuffled_list_with_a_connect_timeout_of_t_over_n(self):
        m = Member()
        self.assertEqual(sends(m.last), [(m.server, {"type": "Connect", "timeout_ns": T})])
        self.assertIn(m.server, SERVERS)
        self.assertIn({"type": "set_timer", "name": "disconnect", "after_ns": T // 3}, m.last["effects"])
        self.assertEqual(m.last["leader"], None)
        self.assertEqual(m.last["term"], 0)

    def test_the_server_list_is_drawn_from_the_seed(self):
        firsts = {sends(zk_recipe.build().step(init_event(seed=s)))[0][0] for s in range(20)}
        self.assertEqual(firsts, set(SERVERS))

    def test_a_session_leads_to_the_create_and_pings_every_third_of_the_timeout(self):
        m = Member()
        reply = m.answer({"type": "ConnectResp", "session": 5, "timeout_ns": T})
        self.assertEqual(sends(reply), [(m.server, {"type": "Create", "session": 5})])
        self.assertIn({"type": "set_timer", "name": "ping", "after_ns": T // 3}, reply["effects"])
        reply = m.answer({"type": "CreateResp", "seq": 0, "czxid": 9})
        self.assertEqual(sends(reply), [(m.server, {"type": "GetChildren", "session": 5, "watch": False})])
        self.assertEqual(reply["term"], 9)
        self.assertEqual(m.fire("ping", T // 3)["effects"][0]["body"], {"type": "Ping", "session": 5})

    def test_the_lowest_child_leads_with_its_czxid_as_term_and_token(self):
        m = Member()
        reply = m.waiting_with(0, 9, [[0, 9, 0], [1, 10, 2]])
        self.assertIn({"type": "lead", "term": 9, "token": 9}, reply["effects"])
        self.assertIn({"type": "write", "token": 9}, reply["effects"])
        self.assertEqual(reply["leader"], 0)
        self.assertEqual(kinds(m.fire("write", m.now + 100_000_000)), ["write", "set_timer"])

    def test_the_broken_variant_fences_with_its_session_id(self):
        m = Member(token="session")
        reply = m.waiting_with(0, 9, [[0, 9, 0], [1, 10, 2]], session=2)
        self.assertIn({"type": "lead", "term": 9, "token": 2}, reply["effects"])
        self.assertIn({"type": "write", "token": 2}, reply["effects"])

    def test_a_waiter_watches_its_predecessor_and_the_leader_and_names_the_leader(self):
        m = Member()
        reply = m.waiting_with(2, 12, [[0, 9, 1], [1, 10, 2], [2, 12, 0]])
        self.assertEqual(
            sends(reply),
            [
                (m.server, {"type": "Exists", "session": 5, "seq": 1}),
                (m.server, {"type": "Exists", "session": 5, "seq": 0}),
            ],
        )
        self.assertNotIn("lead", kinds(reply))
        self.assertEqual(reply["leader"], 1)

    def test_a_deleted_predecessor_is_not_taken_for_leadership_the_children_are_read_again(self):
        m = Member()
        m.waiting_with(2, 12, [[0, 9, 1], [1, 10, 2], [2, 12, 0]])
        # The predecessor (a waiter) went, the leader did not.
        reply = m.answer({"type": "NodeDeleted", "seq": 1, "zxid": 13})
        self.assertEqual(sends(reply), [(m.server, {"type": "GetChildren", "session": 5, "watch": False})])
        self.assertNotIn("lead", kinds(reply))
        reply = m.answer({"type": "Children", "zxid": 13, "children": [[0, 9, 1], [2, 12, 0]]})
        self.assertNotIn("lead", kinds(reply))
        # The leader is the predecessor now: no second watch on it.
        self.assertEqual(sends(reply), [(m.server, {"type": "Exists", "session": 5, "seq": 0})])
        reply = m.answer({"type": "NodeDeleted", "seq": 0, "zxid": 14})
        reply = m.answer({"type": "Children", "zxid": 14, "children": [[2, 12, 0]]})
        self.assertIn({"type": "lead", "term": 12, "token": 12}, reply["effects"])

    def test_a_predecessor_gone_before_the_watch_is_answered_exists_false(self):
        m = Member()
        m.waiting_with(1, 10, [[0, 9, 1], [1, 10, 0]])
        reply = m.answer({"type": "ExistsResp", "seq": 0, "exists": False})
        self.assertEqual(sends(reply), [(m.server, {"type": "GetChildren", "session": 5, "watch": False})])

    def test_a_view_without_the_own_child_starts_over_with_a_new_session(self):
        m = Member()
        m.waiting_with(0, 9, [[0, 9, 0]])
        reply = m.answer({"type": "Children", "zxid": 15, "children": [[1, 10, 2]]})
        self.assertIn("step_down", kinds(reply))
        self.assertIn((m.server, {"type": "Connect", "timeout_ns": T}), sends(reply))
        self.assertEqual(reply["leader"], None)

    def test_an_expired_session_steps_the_leader_down_and_starts_over(self):
        m = Member()
        m.waiting_with(0, 9, [[0, 9, 0]])
        reply = m.answer({"type": "Pong", "session": 5, "expired": True})
        self.assertIn("step_down", kinds(reply))
        self.assertIn((m.server, {"type": "Connect", "timeout_ns": T}), sends(reply))

    def test_a_silent_server_makes_the_leader_step_down_at_two_thirds_of_the_timeout(self):
        m = Member()
        m.waiting_with(0, 9, [[0, 9, 0]])
        heard = m.now
        reply = m.fire("write", heard + 2 * T // 3 - 1)
        self.assertEqual(kinds(reply), ["write", "set_timer"])
        reply = m.fire("disconnect", heard + 2 * T // 3)
        self.assertEqual(kinds(reply)[:3], ["step_down", "cancel_timer", "disconnect"])
        self.assertEqual(reply["leader"], None)
        # The write timer was cancelled with the leadership; no claim until a fresh view.
        self.assertIn({"type": "cancel_timer", "name": "write"}, reply["effects"])

    def test_a_lost_server_is_left_for_the_next_after_a_pause_carrying_the_session(self):
        m = Member()
        m.waiting_with(0, 9, [[0, 9, 0]])
        old = m.server
        reply = m.disconnect(old)
        self.assertIn("step_down", kinds(reply))
        pause = [e for e in reply["effects"] if e.get("name") == "reconnect"][0]["after_ns"]
        self.assertLess(pause, 1_000_000_000)
        # In the pause, and from the server it left, nothing counts.
        self.assertEqual(m.answer({"type": "Children", "zxid": 9, "children": [[0, 9, 0]]}, src=old)["effects"], [])
        reply = m.fire("reconnect", m.now + pause)
        (new, body), = sends(reply)
        self.assertNotEqual(new, old)
        self.assertEqual(body, {"type": "Ping", "session": 5})
        m.server = new
        # The first answer re-reads the children; only a fresh view puts it back in the lead.
        reply = m.answer({"type": "Pong", "session": 5, "expired": False})
        self.assertEqual(sends(reply), [(new, {"type": "GetChildren", "session": 5, "watch": False})])
        self.assertNotIn("lead", kinds(reply))
        reply = m.answer({"type": "Children", "zxid": 9, "children": [[0, 9, 0], [1, 10, 1]]})
        self.assertIn({"type": "lead", "term": 9, "token": 9}, reply["effects"])
        # A late answer from the old server changes nothing.
        self.assertEqual(m.answer({"type": "Pong", "session": 5, "expired": True}, src=old)["effects"], [])

    def test_an_unanswered_connect_moves_on_after_t_over_n(self):
        m = Member()
        reply = m.fire("disconnect", T // 3)
        self.assertEqual(kinds(reply), ["disconnect", "cancel_timer", "set_timer"])
        self.assertEqual(reply["effects"][0]["peer"], m.server)

    def test_a_single_server_is_reconnected_at_once(self):
        m = Member(services=(3,))
        m.waiting_with(0, 9, [[0, 9, 0]])
        reply = m.disconnect(3)
        self.assertEqual(sends(reply), [(3, {"type": "Ping", "session": 5})])

    def test_a_resigning_leader_closes_its_session_and_starts_over(self):
        m = Member()
        m.waiting_with(0, 9, [[0, 9, 0]])
        m.now += 1
        reply = m.node.step({"type": "resign", "mono_ns": m.now, "wall_ns": m.now})
        self.assertEqual(
            sends(reply),
            [(m.server, {"type": "CloseSession", "session": 5}), (m.server, {"type": "Connect", "timeout_ns": T})],
        )
        self.assertIn("step_down", kinds(reply))

    def test_the_term_is_persisted_and_never_goes_back_across_a_restart(self):
        m = Member()
        m.answer({"type": "ConnectResp", "session": 5, "timeout_ns": T})
        reply = m.answer({"type": "CreateResp", "seq": 0, "czxid": 9})
        self.assertEqual(reply["effects"][-1], {"type": "persist", "state": {"zxid": 9}})
        reply = m.answer({"type": "Children", "zxid": 11, "children": [[0, 9, 0]]})
        self.assertEqual(reply["effects"][-1], {"type": "persist", "state": {"zxid": 11}})
        self.assertEqual(reply["term"], 11)
        node = zk_recipe.build()
        reply = node.step(init_event(restart=True, durable={"zxid": 9}))
        self.assertEqual(reply["term"], 9)
        self.assertNotIn("persist", kinds(reply))  # what it read back is on disk already


class FakeZooKeeper:
    """A dumb ZooKeeper: one database behind every server id, no expiry, answers at once."""

    def __init__(self):
        self.zxid = 0
        self.next_session = 1
        self.next_seq = 0
        self.children = []  # [seq, czxid, node]
        self.owner = {}  # session -> seq
        self.watches = {}  # seq -> [(member, server)]

    def handle(self, member, server, body):
        kind = body["type"]
        out = []
        if kind == "Connect":
            self.zxid += 1
            out.append({"type": "ConnectResp", "session": self.next_session, "timeout_ns": body["timeout_ns"]})
            self.next_session += 1
        elif kind == "Create":
            if body["session"] not in self.owner:
                self.zxid += 1
                self.children.append([self.next_seq, self.zxid, member])
                self.owner[body["session"]] = self.next_seq
                self.next_seq += 1
            seq = self.owner[body["session"]]
            czxid = [c[1] for c in self.children if c[0] == seq][0]
            out.append({"type": "CreateResp", "seq": seq, "czxid": czxid})
        elif kind == "GetChildren":
            out.append({"type": "Children", "zxid": self.zxid, "children": [list(c) for c in self.children]})
        elif kind == "Exists":
            exists = any(c[0] == body["seq"] for c in self.children)
            if exists:
                self.watches.setdefault(body["seq"], []).append((member, server))
            out.append({"type": "ExistsResp", "seq": body["seq"], "exists": exists})
        elif kind == "Ping":
            out.append({"type": "Pong", "session": body["session"], "expired": False})
        elif kind == "CloseSession":
            seq = self.owner.pop(body["session"], None)
            if seq is not None:
                self.zxid += 1
                self.children = [c for c in self.children if c[0] != seq]
                return [(m, s, {"type": "NodeDeleted", "seq": seq, "zxid": self.zxid})
                        for m, s in self.watches.pop(seq, [])]
        return [(member, server, b) for b in out]


class ThreeMembers(unittest.TestCase):
    def test_three_members_elect_the_lowest_child_and_its_successor_takes_over_on_resign(self):
        zk = FakeZooKeeper()
        nodes = [zk_recipe.build() for _ in MEMBERS]
        timers = {}  # (member, name) -> due
        inbox = []  # (due, sequence, member, server, body): answers
        requests = []  # (due, sequence, member, server, body)
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
                    requests.append((now + 1_000_000, sequence, i, effect["to"], effect["body"]))
                elif effect["type"] == "lead":
                    leads.append((now, i, effect["term"], effect["token"]))
                elif effect["type"] == "step_down":
                    leads.append((now, i, None, None))

        for i in MEMBERS:
            apply(i, nodes[i].step(init_event(node=i, seed=100 + i)))
        resigned = False
        while now < 3_000_000_000:
            if not resigned and now >= 1_000_000_000:
                resigned = True
                leader = [l for l in leads if l[2] is not None][-1][1]
                apply(leader, nodes[leader].step({"type": "resign", "mono_ns": now, "wall_ns": now}))
                continue
            due = [(r[0], 0, r) for r in requests] + [(a[0], 1, a) for a in inbox]
            due += [(t, 2, key) for key, t in timers.items()]
            when, what, item = min(due, key=lambda d: (d[0], d[1], str(d[2])))
            now = when
            if what == 0:
                requests.remove(item)
                for member, server, body in zk.handle(item[2], item[3], item[4]):
                    sequence += 1
                    inbox.append((now + 1_000_000, sequence, member, server, body))
            elif what == 1:
                inbox.remove(item)
                apply(item[2], nodes[item[2]].step(message(item[3], item[4], now)))
            else:
                del timers[item]
                apply(item[0], nodes[item[0]].step(timer(item[1], now)))
        claims = [l for l in leads if l[2] is not None]
        self.assertEqual(len(claims), 2, leads)
        (_, first, term1, token1), (_, second, term2, token2) = claims
        self.assertNotEqual(first, second)
        self.assertEqual((term1, term2), (token1, token2))
        self.assertLess(term1, term2)
        # Whom every member names at the end: the second leader.
        for node in nodes:
            st = node.context.state
            named = node.context.me if st.phase == zk_recipe.LEADING and st.claimed else st.leader_seen
            self.assertEqual(named, second)


if __name__ == "__main__":
    unittest.main()
