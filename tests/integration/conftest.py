"""Fixtures for integration tests: scratch files on a real filesystem, loop devices, and
running the `iolab` command as a user would."""

from __future__ import annotations

import mmap
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

IOLAB = [str(Path(sys.executable).parent / "iolab")]


@pytest.fixture
def scratch() -> Path:
    """A directory on a real (O_DIRECT-capable) filesystem, not tmpfs."""
    base = os.environ.get("IOLAB_TEST_SCRATCH", "/var/tmp")
    d = Path(tempfile.mkdtemp(prefix="iolab-test-", dir=base))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def loop_device(scratch):
    """A 256 MiB loop device with direct IO on a sparse backing file; always detached."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices")
    backing = scratch / "loop.img"
    with open(backing, "wb") as f:
        f.truncate(256 * 1024 * 1024)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", str(backing)],
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["umount", dev], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def iolab(*args: str, timeout: float = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ, COLUMNS="200", **(env or {}))
    return subprocess.run([*IOLAB, *args], capture_output=True, text=True, timeout=timeout, env=e)


def read_direct(path: str, offset: int, length: int) -> bytes:
    """Read past every cache (O_DIRECT), as the drive would answer a test's reads."""
    buf = mmap.mmap(-1, length)  # page-aligned, as O_DIRECT needs
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        n = os.preadv(fd, [buf], offset)
    finally:
        os.close(fd)
    return bytes(buf[:n])
