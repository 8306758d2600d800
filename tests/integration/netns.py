"""Several load-generating hosts on one machine: one network namespace per host, joined to
the root namespace by a veth pair on its own /24, each running `fio --server` bound to its
own address. Only addresses created here are used; everything is removed on exit, also on
failure (servers first, then the namespaces, which takes their veth ends along)."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

SERVER_WAIT_S = 10.0
_calls = iter(range(1_000_000))  # names and subnets distinct between calls in one process


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def kill_host(ns: str, sig: int = 9) -> None:
    """What a host crash looks like to the client: every process in the namespace dies (or,
    with SIGSTOP, freezes with its connections open)."""
    pids = _ip("netns", "pids", ns, check=False).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), sig)
        except (ProcessLookupError, ValueError):
            pass


@contextmanager
def fio_hosts(n: int, port: int = 8765):
    """Yields [(namespace, address)] of n hosts, each with a fio server listening."""
    # Deleting a namespace frees its veth end asynchronously, so the next call in the same
    # process must not reuse the names or subnets (CI: "ip link add ilNv1" found it existing).
    call = next(_calls)
    tag = f"{os.getpid() % 100000}c{call % 1000}"  # interface names: 15 characters at most
    base = 100 + os.getpid() % 100  # second octet: distinct between concurrent test processes
    made: list[tuple[str, str]] = []
    links: list[str] = []
    pids = tempfile.TemporaryDirectory(prefix="iolab-netns-")
    try:
        for i in range(1, n + 1):
            ns, host_if, peer_if = f"iolab{tag}h{i}", f"il{tag}v{i}", f"il{tag}p{i}"
            third = (call * 8 + i) % 250 + 1
            addr, gw = f"10.{base}.{third}.2", f"10.{base}.{third}.1"
            _ip("netns", "add", ns)
            made.append((ns, addr))
            _ip("link", "add", host_if, "type", "veth", "peer", "name", peer_if)
            links.append(host_if)
            _ip("link", "set", peer_if, "netns", ns)
            _ip("addr", "add", f"{gw}/24", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", peer_if)
            _ip("-n", ns, "link", "set", peer_if, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            subprocess.run(
                ["ip", "netns", "exec", ns, "fio", f"--server={addr},{port}", f"--daemonize={pids.name}/h{i}.pid"],
                check=True,
                capture_output=True,
                timeout=30,
            )
        for _, addr in made:
            _wait(addr, port)
        yield made
    finally:
        for ns, _ in made:
            kill_host(ns)
        for link in links:  # deleting one end removes the pair now, not when the netns goes
            _ip("link", "del", link, check=False)
        for ns, _ in made:
            _ip("netns", "del", ns, check=False)
        pids.cleanup()


def _wait(addr: str, port: int) -> None:
    deadline = time.monotonic() + SERVER_WAIT_S
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((addr, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"fio server on {addr}:{port} did not answer within {SERVER_WAIT_S:g} s")
