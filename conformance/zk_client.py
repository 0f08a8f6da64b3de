#!/usr/bin/env python3
"""One ZooKeeper client process (kazoo) for the conformance experiments.

It opens `--count` sessions (each its own KazooClient, so its own TCP connection and
session) and, per session, does what the flags ask:

  --create PATH         create an ephemeral node at PATH (a lock holder)
  --watch PATH          set an exists() watch on PATH and report when it fires
  --elect DIR           run the leader-election recipe under DIR: create an ephemeral
                        sequential child; the lowest leads; a waiter watches its predecessor
                        with exists() (--recipe predecessor) or every waiter watches the
                        children of DIR (--recipe herd)

Every event is one JSON line on stdout: {"t": time.monotonic(), "i": session index,
"ev": ...}. CLOCK_MONOTONIC is system-wide, so the parent compares these times with its
own. A waiter sends nothing but pings while it waits: it never polls.

SIGTERM closes every session (deleting its ephemeral nodes at once) and exits; SIGSTOP and
SIGKILL from the parent act as a GC pause and a crash.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

_OUT_LOCK = threading.Lock()


def emit(ev: str, i: int = -1, **fields) -> None:
    line = json.dumps({"t": time.monotonic(), "i": i, "ev": ev, **fields})
    with _OUT_LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def state_listener(i: int):
    def listener(state) -> None:
        # Called on kazoo's connection thread as the state changes: SUSPENDED when the
        # connection drops, LOST when the session expired, CONNECTED when (re)connected.
        emit("state", i, state=str(state))
    return listener


def connect(i: int, hosts: str, timeout_s: float) -> KazooClient:
    zk = KazooClient(hosts=hosts, timeout=timeout_s, connection_retry={"max_tries": -1,
                     "delay": 0.05, "max_delay": 0.2})
    zk.add_listener(state_listener(i))
    zk.start(timeout=15)
    session_id = zk.client_id[0]
    emit("connected", i, session=f"0x{session_id:x}")
    return zk


def watch_node(i: int, zk: KazooClient, path: str) -> None:
    def on_event(event) -> None:
        emit("watch", i, type=event.type, path=event.path)
    stat = zk.exists(path, watch=on_event)
    emit("watching", i, path=path, exists=stat is not None)


class Candidate:
    """One session running the election recipe under `base`."""

    def __init__(self, i: int, zk: KazooClient, base: str, recipe: str):
        self.i, self.zk, self.base, self.recipe = i, zk, base, recipe
        self.name = ""
        self.lock = threading.Lock()
        self.leading = False

    def join(self) -> None:
        self.zk.ensure_path(self.base)
        path = self.zk.create(self.base + "/n_", ephemeral=True, sequence=True)
        self.name = path.rsplit("/", 1)[1]
        emit("created", self.i, node=path)
        self.check()

    def on_notify(self, event) -> None:
        emit("notified", self.i, type=event.type, path=event.path)
        # Re-check off kazoo's callback thread, so that one slow check delays no event.
        threading.Thread(target=self.check, daemon=True).start()

    def check(self) -> None:
        with self.lock:
            if self.leading:
                return
            watch = self.on_notify if self.recipe == "herd" else None
            children = sorted(self.zk.get_children(self.base, watch=watch))
            if self.name not in children:
                emit("lost_node", self.i)
                return
            if children[0] == self.name:
                self.leading = True
                emit("leader", self.i, node=self.name)
                return
            if self.recipe == "herd":
                emit("waiting", self.i, on=children[0])
                return
            pred = max(c for c in children if c < self.name)
            if self.zk.exists(f"{self.base}/{pred}", watch=self.on_notify) is None:
                threading.Thread(target=self.check, daemon=True).start()
                return
            emit("waiting", self.i, on=pred)


def session(i: int, args: argparse.Namespace) -> KazooClient:
    zk = connect(i, args.hosts, args.timeout_s)
    if args.create:
        zk.ensure_path(args.create.rsplit("/", 1)[0] or "/")
        try:
            zk.create(args.create, ephemeral=True)
        except NodeExistsError:
            emit("error", i, what=f"{args.create} exists")
            raise
        emit("created", i, node=args.create)
    if args.watch:
        watch_node(i, zk, args.watch)
    if args.elect:
        Candidate(i, zk, args.elect, args.recipe).join()
    return zk


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", required=True, help="host:port")
    ap.add_argument("--timeout-s", type=float, default=10.0,
                    help="session timeout to ask for, seconds")
    ap.add_argument("--count", type=int, default=1, help="sessions in this process")
    ap.add_argument("--create")
    ap.add_argument("--watch")
    ap.add_argument("--elect")
    ap.add_argument("--recipe", choices=("predecessor", "herd"), default="predecessor")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    clients: list[KazooClient] = []
    done = threading.Event()

    def on_term(_signum, _frame) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_term)
    for i in range(args.count):
        clients.append(session(i, args))
    emit("ready", count=len(clients))
    while not done.wait(0.2):
        pass
    for zk in clients:  # closes each session: the server deletes its ephemeral nodes now
        try:
            zk.stop()
            zk.close()
        except Exception:
            pass
    emit("closed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
