"""Fixtures for integration tests: scratch files on a real filesystem, loop devices, and
running the `iolab` command as a user would."""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import forkserver

IOLAB = [str(Path(sys.executable).parent / "iolab")]


@contextmanager
def _scratch_dir():
    base = os.environ.get("IOLAB_TEST_SCRATCH", "/var/tmp")
    d = Path(tempfile.mkdtemp(prefix="iolab-test-", dir=base))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@contextmanager
def mounted_tmpfs(size: str):
    """A tmpfs of `size` (mount's -o size=), for a results or output disk that fills (root only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    d = Path(tempfile.mkdtemp(prefix="iolab-full-", dir="/var/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)
        d.rmdir()


@pytest.fixture
def small_fs():
    """A 2 MiB tmpfs; the test fills it to the free space it wants."""
    with mounted_tmpfs("2M") as d:
        yield d


def fill(fs: Path) -> Path:
    """Fill the filesystem at `fs` to its last byte (a file written until ENOSPC); the filler."""
    filler = fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (65536, 512, 1):  # whatever a larger write no longer fits
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as e:
                    assert e.errno == errno.ENOSPC, e
                    break
    finally:
        os.close(fd)
    return filler


@pytest.fixture
def scratch() -> Path:
    """A directory on a real (O_DIRECT-capable) filesystem, not tmpfs."""
    with _scratch_dir() as d:
        yield d


@pytest.fixture(scope="session")
def characterise_on_a_file():
    """One quick `iolab run characterise` on a 64 MiB file with real fio, with its reports:
    (runs directory, the finished command). Its runs are read by test_cli_characterise.py (the
    sequence), test_char_demand.py (latency vs demand and maximum IOPS on a file) and
    test_report_geometry.py (the sequence report's pages), one xdist group (tests/conftest.py) so
    the run is made once, and its settings serve all three: easy (1,000, 2,000) and impossible
    (millions of) IOPS demands held for 1 s within 20 %, a QD 1…4 then 1…2 thread search, two
    QoS and max-IOPS rounds, and at most 5 rounds of the entropy test's preconditioning to steady
    state (quick's limit is 10, all of which a file ran without reaching it; 5 fill its window).
    The other tests' plans are their own and say --max-rounds is ignored there."""
    with _scratch_dir() as d:
        runs = d / "runs"
        p = iolab(
            "run",
            "characterise",
            "--target",
            f"file:{d}/c.img?size=64MiB",
            "--quick",
            "--cell-time",
            "200ms",
            "--set",
            "precondition_time=1s",
            "--set",
            "duration=4s",
            "--set",
            "rounds=2",
            "--set",
            "demand=1000,2000,2000000,4000000,8000000",
            "--set",
            "step_time=1s",
            # a shared CI machine can hold a rate within 20 %, not always 2 %
            "--set",
            "tolerance=20%",
            "--set",
            "queue_depths=1,2,4",
            "--set",
            "thread_counts=1,2",
            "--max-rounds",
            "5",
            "--runs-dir",
            str(runs),
        )
        assert p.returncode == 0, p.stderr + p.stdout
        yield runs, p


@pytest.fixture
def loop_device(scratch):
    """A 256 MiB loop device with direct IO on a sparse backing file; always detached."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices")
    backing = scratch / "loop.img"
    with open(backing, "wb") as f:
        f.truncate(256 * 1024 * 1024)
    dev = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(backing)], check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["umount", dev], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


@contextmanager
def small_loop(scratch: Path) -> Iterator[str]:
    """A 32 MiB loop device of this machine (its node), detached after."""
    small = scratch / "small.img"
    small.write_bytes(b"")
    os.truncate(small, 32 << 20)
    node = subprocess.run(["losetup", "-f", "--show", str(small)], check=True, capture_output=True, text=True)
    try:
        yield node.stdout.strip()
    finally:
        subprocess.run(["losetup", "-d", node.stdout.strip()], capture_output=True)


def default_signals() -> None:
    """A child's preexec_fn for a test that stops it with SIGINT or SIGTERM: a suite started in
    the background hands its children SIGINT ignored, which Python then keeps (no
    KeyboardInterrupt), so the child sets both to their defaults itself."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, what: str) -> None:
    """Until the server `proc` started accepts connections on 127.0.0.1:port (10 s at most)."""
    from iolab.engines.hosts import answers

    deadline = time.monotonic() + 10
    while not answers("127.0.0.1", port, timeout=0.2):
        assert proc.poll() is None and time.monotonic() < deadline, f"{what} did not start listening"
        time.sleep(0.05)


@pytest.fixture
def fio_server_process():
    """`fio --server` on 127.0.0.1 and a free port, started as a user starts it (iolab reuses it):
    (its process, its port). A test may stop it (SIGSTOP); it is continued before it is ended."""
    with fio_server() as started:
        yield started


@contextmanager
def fio_server() -> Iterator[tuple[subprocess.Popen, int]]:
    """fio_server_process's server, for a fixture of any scope."""
    port = free_port()
    proc = subprocess.Popen(
        ["fio", f"--server=ip:127.0.0.1,{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=default_signals,
    )
    try:
        wait_listening(proc, port, "fio --server")
        yield proc, port
    finally:
        proc.send_signal(signal.SIGCONT)  # a stopped process takes SIGTERM only once continued
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def fio_server_here(fio_server_process):
    """The port of fio_server_process's server."""
    return fio_server_process[1]


def iolab(*args: str, timeout: float = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    """`iolab ARGS` in a process of its own: forked from one that has imported the command line
    (tests/forkserver.py says why and what a fork cannot stand for), or started afresh as users
    start it where IOLAB_TEST_FRESH is set."""
    e = dict(os.environ, COLUMNS="200", **(env or {}))
    if os.environ.get("IOLAB_TEST_FRESH"):
        return subprocess.run([*IOLAB, *args], capture_output=True, text=True, timeout=timeout, env=e)
    return forkserver.SERVER.run(list(args), e, timeout)


def on_a_terminal(argv: list[str], columns: int) -> str:
    """`argv` (an iolab command line) with its output on a terminal `columns` wide (a
    pseudo-terminal), colours removed; the command must succeed."""
    import fcntl
    import pty
    import re
    import struct
    import termios

    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    e = {k: v for k, v in os.environ.items() if k not in ("IOLAB_RUNS", "TERMINAL_WIDTH")}
    p = subprocess.Popen(argv, stdout=sub, stderr=sub, env={**e, "COLUMNS": str(columns)})
    os.close(sub)
    out = b""
    while True:
        try:
            data = os.read(main, 1 << 16)
        except OSError:  # EIO: the command ended and closed the terminal
            break
        if not data:
            break
        out += data
    os.close(main)
    assert p.wait(timeout=60) == 0, out.decode()
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).replace("\r", "")


SMALL_SIM = "sim:enterprise-sas?user_gb=0.25"


def saved_sim_state(d: Path) -> Path:
    """The state file (save=) of SMALL_SIM after a quick latency run, written in `d` (the run
    stored under d/saved)."""
    state = d / "s.state"
    saved = iolab(
        "run", "latency", "--quick", "--no-report", "-q", "--runs-dir", str(d / "saved"),
        "-t", f"{SMALL_SIM}&save={state}",
    )  # fmt: skip
    assert saved.returncode == 0 and state.is_file(), saved.stderr
    return state


def quick_sim_run(runs: Path, target: str = SMALL_SIM) -> Path:
    """A finished quick latency run on a small simulated drive, without its report (a few
    seconds), stored in `runs`: its directory."""
    before = set(runs.iterdir()) if runs.exists() else set()
    p = iolab("run", "latency", "--quick", "-t", target, "--no-report", "--runs-dir", str(runs), timeout=300)
    assert p.returncode == 0, p.stderr
    (run,) = set(runs.iterdir()) - before
    return run


def fake_fio(scratch: Path, body: str) -> Path:
    """A `fio` that answers `--version` and iolab's io_uring probe as the real one, then
    does `body` for a round. It records its pids in <scratch>/fake.pids."""
    real = shutil.which("fio")
    if not real:
        pytest.skip("fio not installed")
    d = scratch / "fakebin"
    d.mkdir(exist_ok=True)
    fake = d / "fio"
    fake.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --version|--name=probe) exec {real} "$@";; esac\n'
        f"echo $$ >> {scratch}/fake.pids\n" + body + "\n"
    )
    fake.chmod(0o755)
    return fake


def killed_at(args: list[str], runs: Path, point: str, sig: int = signal.SIGKILL) -> None:
    """Run `iolab ARGS` and kill -9 it (or send `sig`: SIGINT is Ctrl-C, handled as a shell
    leaves it) once a file matching `point` (a glob under the runs directory) exists: a run
    stopped mid-way, for `iolab resume`."""
    proc = subprocess.Popen(
        [*IOLAB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=default_signals
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and not any(runs.glob(point)):
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before the kill point"
        proc.send_signal(sig)
    finally:
        proc.wait()


def read_direct(path: str, offset: int, length: int) -> bytes:
    """Read past every cache (O_DIRECT), as the drive would answer a test's reads."""
    buf = mmap.mmap(-1, length)  # page-aligned, as O_DIRECT needs
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        n = os.preadv(fd, [buf], offset)
    finally:
        os.close(fd)
    return bytes(buf[:n])
