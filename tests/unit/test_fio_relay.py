"""The relay between fio's client and a server: what the client sends is held until its RUN
command and reaches the server in one piece, then bytes pass both ways unchanged to the end.
Sockets on this machine's loopback stand in for fio's client and server."""

from __future__ import annotations

import resource
import socket
import threading
import time

import pytest

from iolab.engines.fio_relay import HEADER, OP_RUN, holds_run, read_relay_map, relayed

PROBE, JOB = 10, 3


def cmd(opcode: int, pdu: bytes = b"", more: bool = False) -> bytes:
    return HEADER.pack(0x61, opcode, 1 if more else 0, 7, len(pdu), 0, 0) + pdu


def test_a_run_command_is_found_only_whole_and_after_the_commands_before_it():
    job = cmd(JOB, b"j" * 1024, more=True) + cmd(JOB, b"[global]\n")
    run = cmd(OP_RUN)
    assert not holds_run(cmd(PROBE, b"p" * 136) + job)
    assert holds_run(cmd(PROBE, b"p" * 136) + job + run)
    assert not holds_run(job + run[:-1])  # its header not whole yet
    # a RUN opcode's bytes inside a job's text are not a command
    assert not holds_run(cmd(JOB, cmd(OP_RUN) * 3))


def fake_server():
    """A listening socket and a thread that accepts one connection, records what arrives on its
    first read (the server's first look) and everything after, then answers and closes."""
    ls = socket.create_server(("127.0.0.1", 0))
    got: dict = {}

    def serve():
        c, _ = ls.accept()
        with c:
            got["first"] = c.recv(1 << 20)
            rest = b""
            c.sendall(b"answer" * 1000)
            c.shutdown(socket.SHUT_WR)
            while data := c.recv(1 << 16):
                rest += data
            got["rest"] = rest

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return ls, t, got


def test_the_server_gets_everything_up_to_run_at_once_and_then_both_ways_pass(tmp_path):
    ls, t, got = fake_server()
    server_at = ls.getsockname()[:2]
    keep = tmp_path / "r1.relay"
    with relayed([server_at], keep) as relays:
        local = relays.local[server_at]
        assert relays.client_arg(server_at) == f"127.0.0.1,{local[1]}"
        with socket.create_connection(local) as c:
            head = cmd(PROBE, b"p" * 136) + cmd(JOB, b"j" * 1024, more=True) + cmd(JOB, b"[global]\n")
            c.sendall(head)
            c.sendall(cmd(OP_RUN))  # sent later, as fio's client sends it after calibrating its clock
            c.sendall(b"after")
            answer = b""
            while len(answer) < 6000:
                data = c.recv(1 << 16)
                assert data, "the server's answer was cut"
                answer += data
            c.shutdown(socket.SHUT_WR)
            assert c.recv(10) == b""  # the server's end reaches the client as its end
        t.join(timeout=10)
    ls.close()
    # one piece: the server's first read holds the job and the RUN, as its first look needs
    assert got["first"].startswith(head + cmd(OP_RUN)), got["first"][:60]
    assert (got["first"] + got["rest"]).endswith(b"after") and answer == b"answer" * 1000
    assert read_relay_map(keep) == {server_at: local}


def test_a_client_that_leaves_before_run_never_reaches_the_server():
    ls = socket.create_server(("127.0.0.1", 0))
    ls.settimeout(0.5)
    server_at = ls.getsockname()[:2]
    with relayed([server_at]) as relays:
        with socket.create_connection(relays.local[server_at]) as c:
            c.sendall(cmd(PROBE, b"p" * 136))
        try:
            ls.accept()
            reached = True
        except TimeoutError:
            reached = False
    ls.close()
    assert not reached


def test_a_round_without_a_relay_map_names_its_servers_itself(tmp_path):
    assert read_relay_map(tmp_path / "none.relay") == {}
    f = tmp_path / "r.relay"
    f.write_text("127.0.0.1:4001 -> 10.0.0.2:8765\n127.0.0.1:4002 -> fd00::2:8765\nnot a line\n")
    assert read_relay_map(f) == {("10.0.0.2", 8765): ("127.0.0.1", 4001), ("fd00::2", 8765): ("127.0.0.1", 4002)}


def test_the_client_names_its_clock_before_any_client_where_fio_would_pick_it_here(tmp_path, monkeypatch):
    """Before the first --client the option stays with the client (after it, fio sends it to
    that server); named only where fio would choose the CPU clock on this machine itself."""
    from iolab.engines import fio_job
    from iolab.engines.fio_client import run_clients

    args = tmp_path / "args"
    fio = tmp_path / "fio"
    fio.write_text(f'#!/bin/sh\necho "$@" > {args}\nexit 1\n')
    fio.chmod(0o755)
    for clock, expect in (("cpu", ["--clocksource=cpu"]), (None, [])):
        monkeypatch.setattr(fio_job, "local_clocksource", lambda clock=clock: clock)
        run_clients([("r1.p0", ("10.0.0.2", 8765), "[r1.p0]\n")], tmp_path, "r1", 10, str(fio))
        sent = args.read_text().split()
        first_client = next(i for i, a in enumerate(sent) if a.startswith("--client=127.0.0.1,"))
        assert [a for a in sent[:first_client] if a.startswith("--clocksource")] == expect, sent
        (tmp_path / "r1.relay").unlink()


def test_the_client_is_waited_for_without_polling_and_still_stopped_at_its_limit(tmp_path):
    """fio's client runs as long as its round: its exit is waited for without waking up in
    between (Popen.wait with a timeout polled every 50 ms, 20 wake-ups a second for every round
    of every drive of a fleet), and a client past its time limit is still stopped, with an error."""
    from iolab.core.errors import EngineError
    from iolab.engines.fio_client import run_clients

    fio = tmp_path / "fio"
    # a 3 s client: a wait polled every 50 ms wakes 60 times; one that is not wakes a few times
    # for the start (fork, exec, files), more on a busy machine (10 seen, where the client ran 1 s
    # and the bound was 10)
    fio.write_text("#!/bin/sh\nexec sleep 3\n")
    fio.chmod(0o755)
    before = resource.getrusage(resource.RUSAGE_THREAD)  # the relay's own thread is not counted
    assert run_clients([("r1.p0", ("10.0.0.2", 8765), "[r1.p0]\n")], tmp_path, "r1", 30, str(fio)) == 0
    woke = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw - before.ru_nvcsw
    assert woke < 30, f"the wait for a 3 s client woke {woke} times"
    fio.write_text("#!/bin/sh\nexec sleep 30\n")
    t0 = time.monotonic()
    with pytest.raises(EngineError, match="did not finish within 0.5 s"):
        run_clients([("r2.p0", ("10.0.0.2", 8765), "[r2.p0]\n")], tmp_path, "r2", 0.5, str(fio))
    assert time.monotonic() - t0 < 20  # stopped (SIGINT ends the sleep), not waited out
