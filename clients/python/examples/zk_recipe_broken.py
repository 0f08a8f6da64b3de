"""ZooKeeper's election recipe with a classic fencing bug: the session id as the token.

Exactly ``zk_recipe.py``, with one switch flipped: the leader fences its writes with its
session id (the child's ``ephemeralOwner``) instead of its child's ``czxid``. The term it
claims is still the czxid, so the leaderships are the correct recipe's; only the token
differs.

The session id looks like a good token: it is unique per holder, and the model's ids even
grow (ZooKeeper's own embed the id of the server that opened the session in their top byte,
so they do not). But a fencing token must grow with the *leaderships*, and the seat goes in
the order the children were created, not the sessions: a member that connected first and
created its child second, or one that has waited in line with an old session while the
leader restarted or resigned with a newer one, leads after a holder whose token is higher.
The fenced resource has accepted that higher token, so it refuses every write of the
legitimate new leader while the deposed one's still count (``fencing_safety``, "a newer
leadership locked out by an older one": docs/engine.md, "Checker and measurements").
Martin Kleppmann's "How to do distributed locking" (2016) is the classic statement: a
token must be monotonically increasing, ZooKeeper's zxid or the znode version are.

    algorithm: ExternalClient(command: ["python3", "clients/python/examples/zk_recipe_broken.py"], ...),
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import zk_recipe  # noqa: E402

if __name__ == "__main__":
    # The only difference from zk_recipe.py: token="session" fences with the session id.
    zk_recipe.build(token="session", session_timeout_ns=zk_recipe.session_timeout_from(sys.argv[1:])).run()
