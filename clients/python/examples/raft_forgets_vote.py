"""Raft's leader election with the classic bug: the vote is not persisted.

Exactly ``raft.py``, with one switch flipped: a granted vote stays in memory (the term is
still persisted). A node that grants its vote, crashes and comes back reads back its term
with ``voted_for = None``, and can grant a second vote in the same term, to another
candidate: two leaders of one term (``election_safety``), and the fenced resource accepts
the same token from both (``fencing_safety``).

    algorithm: External(command: ["python3", "clients/python/examples/raft_forgets_vote.py"]),
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import raft  # noqa: E402

if __name__ == "__main__":
    # The only difference from raft.py: persist_vote=False skips the write of a granted vote.
    raft.build(persist_vote=False).run()
