"""A round's fio client hands a server its job and the order to run it together.

fio's server (3.33) looks at a connection between waits of 1 s while it runs no job, so an
order to run that comes after its first look waits up to a second: it did at every cell when
the client connected straight to the server (the client sends its job as it starts and RUN only
after calibrating its clock, at least 64 ms of busy waiting later). A fake server here takes the
server's first look 50 ms after the connection: RUN must be there by then."""

from __future__ import annotations

import socket
import struct
import threading

from iolab.engines.fio_client import run_clients

HEADER = struct.Struct("<HHIQIHH")  # fio's net command header (server.h)
RUN = 16


def opcodes(data: bytes) -> list[int]:
    out, off = [], 0
    while len(data) - off >= HEADER.size:
        _, op, _, _, pdu_len, _, _ = HEADER.unpack_from(data, off)
        if len(data) - off < HEADER.size + pdu_len:
            break
        out.append(op)
        off += HEADER.size + pdu_len
    return out


def test_the_server_finds_the_job_and_its_run_order_on_its_first_look(tmp_path):
    ls = socket.create_server(("127.0.0.1", 0))
    seen: dict = {}

    def server():
        c, _ = ls.accept()
        with c:
            threading.Event().wait(0.05)  # the server's first look, 50 ms after the connection
            first = b""
            while True:
                try:
                    data = c.recv(1 << 20, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                if not data:
                    break
                first += data
            seen["ops"] = opcodes(first)  # then it hangs up: the client fails, as it should

    t = threading.Thread(target=server, daemon=True)
    t.start()
    job = "[r1.p0]\nioengine=null\nsize=4k\n"
    code = run_clients([("r1.p0", ls.getsockname()[:2], job)], tmp_path, "r1", 30)
    t.join(timeout=30)
    ls.close()
    assert code != 0  # the fake server answered nothing
    assert 3 in seen["ops"] and RUN in seen["ops"], seen
