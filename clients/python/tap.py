#!/usr/bin/env python3
"""Records what a node is told and answers, for debugging a node or reading the protocol:

    algorithm: External(command: ["python3", "clients/python/tap.py", "tap.log", "--",
                                  "python3", "my_node.py"]),

runs ``my_node.py`` as the node and appends every exchange to ``tap.log``, one line each way,
prefixed with the node's id: ``n1 <- {event}`` and ``n1 -> {reply}``. The simulator runs one
node at a time, so the file is in the order the run made them. Standard library only."""

import subprocess
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.exit("usage: tap.py LOG -- COMMAND [ARGS...]")
    log_path, command = args[0], args[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    node = "n?"
    with open(log_path, "a", buffering=1) as log:
        for event in sys.stdin:
            if '"type":"init"' in event:
                start = event.index('"node":') + len('"node":')
                node = "n" + event[start:].split(",", 1)[0]
            log.write(f"{node} <- {event}")
            child.stdin.write(event)
            child.stdin.flush()
            answer = child.stdout.readline()
            if not answer:
                break
            log.write(f"{node} -> {answer}")
            sys.stdout.write(answer)
            sys.stdout.flush()
    child.stdin.close()
    sys.exit(child.wait())


main()
