"""A TCP proxy on 127.0.0.1 that can partition its connections without resetting them.

`cut()` is a network partition, not a crash: no socket is closed and no reset is sent.
Every byte (and every close) that arrives during the cut is held by the proxy and delivered
after `heal()`, as TCP retransmission would deliver it once the network is back
(`cut(drop=True)` discards the bytes instead; closes are still held). A connection accepted
during a cut is not connected upstream until the heal, so the client sees a silent peer,
as it would if its SYN packets were lost after the kernel's handshake.

Sockets are closed only by `close()`, or when an endpoint closes while the network is up.

`cut_from(marker)` cuts only the connections whose first bytes towards the server contain
`marker` (and every such connection opened later), until `heal()`: an etcd member's peer
connections carry its id in the `X-Server-From` header of each request (rafthttp), so one
member's connections through another member's proxy can be cut while the rest flow.

`Balancer(target_ports)` is a round-robin TCP load balancer in front of several servers (API
servers behind the `kubernetes` Service or an external load balancer): each new connection
goes to the next server in turn, to the one after when that one refuses it, and stays there;
when its server closes or resets it, the client's side is closed too. `black_hole(i)` cuts
server i off as `cut()` does (its connections, and new ones given to it, stay open and carry
nothing).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Optional

_CHUNK = 65536
_HEAD = 4096  # bytes of a connection's start kept to match `cut_from` markers


class _Link:
    """One client connection and its upstream connection, pumped by two threads."""

    def __init__(self, proxy: "Proxy", client: socket.socket):
        self.proxy = proxy
        self.client = client
        try:
            self.client_port = client.getpeername()[1]
        except OSError:  # the client is already gone
            self.client_port = 0
        self.upstream: Optional[socket.socket] = None
        self.closed = threading.Event()
        self.head = b""  # the first bytes sent towards the server (for `cut_from`)
        self.cut = False  # cut alone (`cut_from`, `Balancer.black_hole`)
        self.backend = proxy._pick()  # the server it goes to (a Balancer's index, else 0)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        if not self.proxy._wait_up():
            return self.close()
        self.upstream = self.proxy._dial(self)
        if self.upstream is None:
            return self.close()
        for src, dst, to_server in ((self.client, self.upstream, True),
                                    (self.upstream, self.client, False)):
            threading.Thread(target=self._pump, args=(src, dst, to_server), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, to_server: bool) -> None:
        while not self.closed.is_set():
            try:
                data = src.recv(_CHUNK)
            except OSError:
                data = b""
            if to_server and len(self.head) < _HEAD:
                self.head += data[:_HEAD - len(self.head)]
                self.proxy._classify(self)
            held = self.proxy._is_cut() or self.cut
            if data and held and self.proxy._drop:
                continue  # dropped on the floor, like packets lost in a partition
            if not self.proxy._wait_up() or not self._wait_link_up():
                return self.close()  # proxy closed
            if not data:
                return self._half_close(dst)
            try:
                dst.sendall(data)
            except OSError:
                return self.close()
            self.proxy._forwarded(to_server)

    def _wait_link_up(self) -> bool:
        """Block while this link alone is cut; False once the proxy is closed."""
        while self.cut:
            if self.proxy._closed:
                return False
            time.sleep(0.01)
        return True

    def _half_close(self, dst: socket.socket) -> None:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for s in (self.client, self.upstream):
            if s is not None:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()


class Proxy:
    """Listens on 127.0.0.1:`.port` and forwards every connection to 127.0.0.1:target_port.

    `last_to_server_s` / `last_to_client_s`: `time.monotonic()` when bytes were last forwarded
    towards the server / the client (None before any), e.g. the last ping the server got.
    CLOCK_MONOTONIC is system-wide, so these compare with other processes' monotonic times.
    """

    def __init__(self, target_port: int):
        self.target_port = target_port
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._drop = False
        self._closed = False
        self._links: list[_Link] = []
        self._lock = threading.Lock()
        self._cut_markers: list[bytes] = []
        self.last_to_server_s: Optional[float] = None
        self.last_to_client_s: Optional[float] = None
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._links = [l for l in self._links if not l.closed.is_set()]
                self._links.append(_Link(self, conn))

    def _pick(self) -> int:
        return 0

    def _dial(self, link: _Link) -> Optional[socket.socket]:
        """The connection to the server for `link`, None if it cannot be made."""
        try:
            return socket.create_connection(("127.0.0.1", self.target_port))
        except OSError:
            return None

    def _forwarded(self, to_server: bool) -> None:
        now = time.monotonic()
        if to_server:
            self.last_to_server_s = now
        else:
            self.last_to_client_s = now

    def _is_cut(self) -> bool:
        return not self._up.is_set()

    def _wait_up(self) -> bool:
        """Block while cut; False once the proxy is closed."""
        while not self._up.wait(0.05):
            if self._closed:
                return False
        return not self._closed

    def cut(self, drop: bool = False) -> None:
        """Stop forwarding in both directions; sockets stay open. Bytes held (or dropped)."""
        self._drop = drop
        self._up.clear()

    def cut_from(self, marker: bytes) -> None:
        """Hold the bytes of every connection (open now or later) whose first bytes towards
        the server contain `marker`, both ways; the others keep flowing. `heal()` ends it."""
        with self._lock:
            self._cut_markers.append(marker)
            links = list(self._links)
        for link in links:
            self._classify(link)

    def _classify(self, link: "_Link") -> None:
        # Under the lock, so that a heal() between the check and the cut cannot be undone.
        with self._lock:
            if any(m in link.head for m in self._cut_markers):
                link.cut = True

    def heal(self) -> None:
        """Resume forwarding; held bytes and closes are delivered."""
        self._drop = False
        with self._lock:
            self._cut_markers = []
            for link in self._links:
                link.cut = False
        self._up.set()

    def connections(self) -> int:
        with self._lock:
            return sum(1 for l in self._links if not l.closed.is_set())

    def close(self) -> None:
        """Close the listener and every connection."""
        self._closed = True
        self._up.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # unblocks accept() on Linux
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            links = list(self._links)
        for link in links:
            link.close()

    def __enter__(self) -> "Proxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Balancer(Proxy):
    """A round-robin TCP load balancer on 127.0.0.1:`.port` in front of `target_ports`.

    Each connection accepted goes to the next server in turn (one counter for all clients,
    as IPVS `rr` or HAProxy's `roundrobin`) and, if that server refuses the connection, to
    the next one (nginx's stream proxy, `proxy_next_upstream on` by default; HAProxy's
    `option redispatch`): a crashed server is passed over for new connections, while its
    open ones end when it resets them (the balancer then closes the client's side). No health
    check removes a server: a black-holed one keeps getting its turn.

    `black_hole(i)`: server i stops carrying bytes both ways, on its open connections and on
    those the balancer gives it later, whose TCP handshake completes (as a stopped process's
    kernel completes it) and then nothing comes; nothing is closed. `heal()` ends it.
    `backends()`: {client port: server index} of every connection accepted so far.
    """

    def __init__(self, target_ports: list[int]):
        if not target_ports:
            raise ValueError("a balancer needs at least one server")
        self.target_ports = list(target_ports)
        self._turn = 0
        self._holes: set[int] = set()
        self._assigned: dict[int, int] = {}
        super().__init__(self.target_ports[0])

    def _pick(self) -> int:
        # Called from the accept loop, one connection at a time.
        i = self._turn % len(self.target_ports)
        self._turn += 1
        return i

    def _dial(self, link: _Link) -> Optional[socket.socket]:
        n = len(self.target_ports)
        for k in range(n):
            i = (link.backend + k) % n
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_ports[i]))
            except ConnectionRefusedError:
                continue  # next upstream
            except OSError:
                return None
            with self._lock:
                link.backend = i
                self._assigned[link.client_port] = i
                if i in self._holes:
                    link.cut = True
            return upstream
        return None

    def black_hole(self, i: int) -> None:
        """Server i carries nothing any more, on its connections old and new."""
        with self._lock:
            self._holes.add(i)
            for link in self._links:
                if link.backend == i:
                    link.cut = True

    def heal(self) -> None:
        with self._lock:
            self._holes.clear()
        super().heal()

    def backends(self) -> dict[int, int]:
        with self._lock:
            return dict(self._assigned)
