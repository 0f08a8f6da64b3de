"""The real etcd side of the conformance suite: one single-member server and etcdctl clients.

`EtcdServer` runs `/usr/bin/etcd` as a single member with its default timing (100 ms
heartbeat, 1 s election timeout), client and peer URLs on free 127.0.0.1 ports and its data
dir in a temp dir, started and stopped by PID through `harness.Proc`. The data dir is on
/dev/shm (tmpfs) when there is one: every write etcd makes (a put, a lock's transaction, the
revoke of an expired lease) waits for an fsync, and on a shared machine whose disk is busy
that adds hundreds of milliseconds of noise unrelated to the lease logic under test
(CONFORMANCE_ETCD_DISK=1 keeps it on disk).

`Etcdctl` runs one `etcdctl` 3.4 command (API v3) whose output lines are timestamped with
`time.monotonic()` as they arrive, by a reader thread. etcdctl writes errors such as
"Error: session expired" to stderr; it is started as `sh -c 'exec "$@" 2>&1'` so that stderr
joins stdout and the PID is etcdctl's own (SIGSTOP and SIGKILL hit etcdctl itself).

Clients are the real Go clientv3: `etcdctl lock` runs `concurrency.NewSession` and
`concurrency.NewMutex(...).Lock` (etcdctl/ctlv3/command/lock_command.go), `etcdctl lease
keep-alive` runs `clientv3.Lease.KeepAlive` (clientv3/lease.go), `etcdctl watch` a watch.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Optional

import harness
from harness import HarnessError, Proc, free_port, make_temp_dir, wait_until

ETCD_BIN = os.environ.get("ETCD", shutil.which("etcd") or "/usr/bin/etcd")
ETCDCTL_BIN = os.environ.get("ETCDCTL", shutil.which("etcdctl") or "/usr/bin/etcdctl")


class EtcdServer:
    """A single-member etcd on 127.0.0.1 with default timing; restartable on its data dir."""

    def __init__(self) -> None:
        self.base_dir = make_temp_dir("etcd")
        self.data_dir = self.base_dir / "data"
        self._tmpfs_dir: Optional[Path] = None
        if os.environ.get("CONFORMANCE_ETCD_DISK") != "1" and os.access("/dev/shm", os.W_OK):
            self._tmpfs_dir = Path(tempfile.mkdtemp(prefix="conformance-etcd-", dir="/dev/shm"))
            self.data_dir = self._tmpfs_dir / "data"
            atexit.register(self.close)
            harness._TEMP_DIRS.append(self._tmpfs_dir)  # removed on SIGINT/SIGTERM too
        self.client_port = free_port()
        self.peer_port = free_port()
        self.proc: Optional[Proc] = None
        self.starts = 0

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    def _argv(self) -> list[str]:
        client_url = f"http://127.0.0.1:{self.client_port}"
        peer_url = f"http://127.0.0.1:{self.peer_port}"
        return [
            ETCD_BIN, "--name", "conf", "--data-dir", str(self.data_dir),
            "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", f"conf={peer_url}",
        ]

    def start(self, timeout_s: float = 30.0) -> float:
        """Start (or start again on the same data dir); returns the monotonic time it was
        healthy (it has a leader: for one member, it has promoted itself)."""
        if self.proc is not None and self.proc.alive():
            raise HarnessError("etcd is already running")
        self.starts += 1
        log = self.base_dir / f"etcd-{self.starts}.log"
        self.proc = Proc("etcd", self._argv(), log)
        try:
            wait_until(self.healthy, timeout_s, poll_s=0.005)
        except TimeoutError:
            tail = log.read_text(errors="replace")[-2000:]
            raise HarnessError(f"etcd did not become healthy in {timeout_s:g}s:\n{tail}")
        return time.monotonic()

    def stop(self) -> None:
        """SIGTERM (then SIGKILL after 5 s) by PID, and wait for it to exit."""
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def close(self) -> None:
        """Stop the server and remove a data dir kept on tmpfs."""
        self.stop()
        if self._tmpfs_dir is not None:
            shutil.rmtree(self._tmpfs_dir, ignore_errors=True)
            self._tmpfs_dir = None

    def healthy(self) -> bool:
        if self.proc is None or not self.proc.alive():
            if self.proc is not None:
                raise HarnessError(f"etcd exited: see {self.proc.log_path}")
            return False
        try:
            with urllib.request.urlopen(f"http://{self.endpoint}/health", timeout=0.5) as r:
                return b'"true"' in r.read()
        except OSError:
            return False

    def metric_sum(self, name: str, **labels: str) -> float:
        """Sum of a Prometheus counter over the series whose labels include `labels`."""
        with urllib.request.urlopen(f"http://{self.endpoint}/metrics", timeout=5) as r:
            text = r.read().decode()
        total = 0.0
        for line in text.splitlines():
            if not line.startswith(name + "{"):
                continue
            series, value = line.rsplit(" ", 1)
            if all(f'{k}="{v}"' in series for k, v in labels.items()):
                total += float(value)
        return total

    def ctl(self, *args: str, timeout_s: float = 10.0) -> str:
        """Run one etcdctl command to completion; its stdout."""
        cmd = Etcdctl(self, *args, name="etcdctl-" + args[0])
        try:
            wait_until(lambda: not cmd.proc.alive(), timeout_s)
        finally:
            cmd.join_reader()
            rc = cmd.proc.popen.poll()
            cmd.stop()
        out = "".join(line + "\n" for _, line in cmd.lines())
        if rc != 0:
            raise HarnessError(f"etcdctl {' '.join(args)} exited {rc}: {out.strip()}")
        return out


class Etcdctl:
    """One etcdctl process; each output line (stdout and stderr) timestamped on arrival."""

    def __init__(self, server: EtcdServer, *args: str, endpoint: Optional[str] = None,
                 name: str = "etcdctl") -> None:
        argv = [ETCDCTL_BIN, "--endpoints", endpoint or server.endpoint,
                "--dial-timeout", "2s", *args]
        env = dict(os.environ, ETCDCTL_API="3")
        log = server.base_dir / "clients" / f"{name}.log"
        self.proc = Proc(name, ["sh", "-c", 'exec "$@" 2>&1', "sh", *argv], log,
                         env=env, pipe_stdout=True)
        self._lines: list[tuple[float, str]] = []
        self._cond = threading.Condition()
        self.exited_at: Optional[float] = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for line in iter(self.proc.stdout.readline, ""):
                now = time.monotonic()
                with self._cond:
                    self._lines.append((now, line.rstrip("\n")))
                    self._cond.notify_all()
        except (OSError, ValueError):
            pass  # the pipe was closed by stop()
        self.proc.popen.wait()
        with self._cond:
            self.exited_at = time.monotonic()
            self._cond.notify_all()

    def lines(self) -> list[tuple[float, str]]:
        with self._cond:
            return list(self._lines)

    def wait_line(self, pattern: str, timeout_s: float, after: int = 0) -> tuple[float, str]:
        """The first line from index `after` on matching the regex; its arrival time."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for t, line in self._lines[after:]:
                    if regex.search(line):
                        return t, line
                left = deadline - time.monotonic()
                if left <= 0 or self.exited_at is not None:
                    seen = " | ".join(l for _, l in self._lines[-5:])
                    state = "exited" if self.exited_at is not None else "timed out"
                    raise TimeoutError(f"{self.proc.name}: no line matching {pattern!r} "
                                       f"({state}; last lines: {seen})")
                self._cond.wait(min(left, 0.1))

    def count(self, pattern: str) -> int:
        regex = re.compile(pattern)
        return sum(1 for _, line in self.lines() if regex.search(line))

    def join_reader(self, timeout_s: float = 2.0) -> None:
        self._reader.join(timeout_s)

    def stop(self) -> None:
        self.proc.stop()


def lease_id(grant_line: str) -> str:
    """The lease id from 'lease 694d... granted with TTL(2s)'."""
    m = re.search(r"lease ([0-9a-f]+) granted with TTL\((\d+)s\)", grant_line)
    if not m:
        raise HarnessError(f"unexpected lease grant output: {grant_line!r}")
    return m.group(1)


def granted_ttl_s(grant_line: str) -> int:
    m = re.search(r"granted with TTL\((\d+)s\)", grant_line)
    if not m:
        raise HarnessError(f"unexpected lease grant output: {grant_line!r}")
    return int(m.group(1))
