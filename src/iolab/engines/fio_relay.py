"""A relay between fio's client and its servers that hands a server the job and the order to
run it together, so the server starts the job at once instead of up to a second later.

Why: fio's client connects and sends its job file as it starts, then calibrates its clock
(0.2 s alone, a second or more on a loaded machine) and only then sends RUN. A fio server's
connection handler (fio 3.33, server.c handle_connection) looks at its socket only between
waits of 1 s while it runs no job, so RUN waited there until the next second: measured 0.8-1.0 s
of every cell's fio run on an idle machine, a 1 s job taking 2.3-2.5 s through the client.

So each server is reached through a socket on this machine's loopback: what the client sends is
held, command by command (fio's 24-byte command header gives each one's length), until its RUN
command; then the relay connects to the server and sends everything at once, so the handler finds
the job and RUN together on its first look. After that bytes pass both ways unchanged until
either side closes. Nothing fio measures passes through iolab's clock: the jobs run and are
timed on the server as before. fio's output names the relay's address (127.0.0.1 and its port)
as the client's host; `RelaySet.names` maps it back, and each round keeps that map beside its
output (TAG.relay)."""

from __future__ import annotations

import selectors
import socket
import struct
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

# fio's net command header (server.h struct fio_net_cmd): version, opcode, flags, tag,
# pdu_len, cmd_crc16, pdu_crc16; little endian
HEADER = struct.Struct("<HHIQIHH")
OP_RUN = 16  # FIO_NET_CMD_RUN
HOLD_MAX = 16 << 20  # bytes held at most: past this (not a fio client?) everything passes at once
CONNECT_TIMEOUT_S = 5.0
LOOPBACK = "127.0.0.1"


def holds_run(data: bytes) -> bool:
    """True when `data`, fio commands from its first byte, holds a whole RUN command."""
    off = 0
    while len(data) - off >= HEADER.size:
        _, opcode, _, _, pdu_len, _, _ = HEADER.unpack_from(data, off)
        if len(data) - off < HEADER.size + pdu_len:
            return False
        if opcode == OP_RUN:
            return True
        off += HEADER.size + pdu_len
    return False


@dataclass
class _Pair:
    client: socket.socket
    server_at: tuple[str, int]
    held: bytearray = field(default_factory=bytearray)
    server: socket.socket | None = None
    ended: set = field(default_factory=set)  # the sockets that said end of file


class RelaySet:
    """One loopback listener per fio server endpoint, served by one thread until `close`."""

    def __init__(self, endpoints: list[tuple[str, int]]):
        self._sel = selectors.DefaultSelector()
        self._listeners: list[socket.socket] = []
        self.local: dict[tuple[str, int], tuple[str, int]] = {}  # server endpoint -> relay endpoint
        self._pairs: list[_Pair] = []
        self._stop = threading.Event()
        self._wake, self._waker = socket.socketpair()  # close() wakes the thread at once
        self._sel.register(self._wake, selectors.EVENT_READ, None)
        try:
            for ep in dict.fromkeys(endpoints):
                ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self._listeners.append(ls)
                ls.bind((LOOPBACK, 0))
                ls.listen(8)
                ls.setblocking(False)
                self.local[ep] = ls.getsockname()[:2]
                self._sel.register(ls, selectors.EVENT_READ, ep)
        except OSError:
            self.close()
            raise
        self._thread = threading.Thread(target=self._serve, name="fio-relay", daemon=True)
        self._thread.start()

    def client_arg(self, server_at: tuple[str, int]) -> str:
        """fio's --client argument that reaches this server through the relay."""
        addr, port = self.local[server_at]
        return f"{addr},{port}"

    @property
    def names(self) -> dict[str, str]:
        """'127.0.0.1:PORT' (how fio's output names the client's host) -> 'ADDRESS:PORT' of the server."""
        return {f"{la}:{lp}": f"{a}:{p}" for (a, p), (la, lp) in self.local.items()}

    def _serve(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select():
                if key.data is None:
                    return
                try:
                    if isinstance(key.data, _Pair):
                        self._move(key.data, key.fileobj)  # type: ignore[arg-type]
                    else:
                        self._accept(key.fileobj, key.data)  # type: ignore[arg-type]
                except OSError:
                    if isinstance(key.data, _Pair):
                        self._drop(key.data)

    def _accept(self, ls: socket.socket, server_at: tuple[str, int]) -> None:
        c, _ = ls.accept()
        c.setblocking(False)
        pair = _Pair(c, server_at)
        self._pairs.append(pair)
        self._sel.register(c, selectors.EVENT_READ, pair)

    def _move(self, pair: _Pair, src: socket.socket) -> None:
        data = src.recv(1 << 16)
        if not data:
            self._ended(pair, src)
            return
        if pair.server is not None:
            dst = pair.server if src is pair.client else pair.client
            dst.setblocking(True)  # a short wait on a full buffer keeps the bytes in order
            dst.sendall(data)
            dst.setblocking(False)
            return
        pair.held += data
        if holds_run(bytes(pair.held)) or len(pair.held) > HOLD_MAX:
            s = socket.create_connection(pair.server_at, timeout=CONNECT_TIMEOUT_S)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(bytes(pair.held))
            s.setblocking(False)
            pair.server, pair.held = s, bytearray()
            self._sel.register(s, selectors.EVENT_READ, pair)

    def _ended(self, pair: _Pair, src: socket.socket) -> None:
        """One side's end of file is passed on as the end of what the other receives (not a
        close, whose reset could drop what that side has not read yet); both ended: closed."""
        dst = pair.server if src is pair.client else pair.client
        if dst is None:  # the client left before it ran a job: the server never saw it
            self._drop(pair)
            return
        pair.ended.add(src)
        self._sel.unregister(src)
        dst.shutdown(socket.SHUT_WR)
        if len(pair.ended) == 2:
            self._drop(pair)

    def _drop(self, pair: _Pair) -> None:
        for s in (pair.client, pair.server):
            if s is None:
                continue
            if s not in pair.ended:
                try:
                    self._sel.unregister(s)
                except (KeyError, ValueError):
                    pass
            s.close()
        if pair in self._pairs:
            self._pairs.remove(pair)

    def close(self) -> None:
        self._stop.set()
        self._waker.send(b"x")
        if getattr(self, "_thread", None) is not None:
            self._thread.join(timeout=5)
        for pair in list(self._pairs):
            self._drop(pair)
        for s in (*self._listeners, self._wake, self._waker):
            s.close()
        self._sel.close()


@contextmanager
def relayed(endpoints: list[tuple[str, int]], keep: Path | None = None):
    """A RelaySet for these server endpoints while the block runs; `keep`: a file to write the
    relay's map to (how fio's output names each server), kept with the round's output."""
    relays = RelaySet(endpoints)
    try:
        if keep is not None:
            keep.write_text(
                "".join(f"{local} -> {server}\n" for local, server in relays.names.items()),
            )
        yield relays
    finally:
        relays.close()


def _endpoint(text: str) -> tuple[str, int]:
    addr, port = text.strip().rsplit(":", 1)
    return addr, int(port)


def read_relay_map(path: Path) -> dict[tuple[str, int], tuple[str, int]]:
    """A round's relay map (TAG.relay): server endpoint -> how fio's output names it; {} for a
    round run without the relay (fio's output then names each server itself)."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        local, _, server = line.partition(" -> ")
        try:
            out[_endpoint(server)] = _endpoint(local)
        except ValueError:
            continue
    return out
