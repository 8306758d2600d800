"""Purge for real: blkdiscard on a loop device (root) and hole punching on a file."""

from __future__ import annotations

import os
import shutil

import pytest

from iolab import targets
from iolab.targets import CommandResult, host, parse_target

from .conftest import read_direct

pytestmark = pytest.mark.integration

CHUNK = 1 << 20
PATTERN = bytes(range(256)) * (CHUNK // 256)


def _write_pattern(path: str, offsets: list[int]) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        for off in offsets:
            os.pwrite(fd, PATTERN, off)
        os.fsync(fd)
    finally:
        os.close(fd)


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup")
def test_blkdiscard_on_loop_device_reads_back_zeros(loop_device):
    dev = loop_device  # conftest's 256 MiB loop device
    backing = open(f"/sys/block/{os.path.basename(dev)}/loop/backing_file").read().strip()
    target = parse_target(dev)
    offsets = [0, 77 * CHUNK, 255 * CHUNK]
    _write_pattern(dev, offsets)
    assert all(read_direct(dev, off, CHUNK) == PATTERN for off in offsets)
    allocated_before = os.stat(backing).st_blocks * 512
    assert allocated_before >= 3 * CHUNK

    assert targets.check_safe_to_write(target, False) == []
    out = targets.purge(target, "auto")

    assert (out.method, out.ok) == ("blkdiscard", True), out.detail
    assert f"blkdiscard -f {dev} -> exit 0" in out.detail and "auto: loop interface" in out.detail
    # The loop driver turns discards into holes in the backing file: zeros, no blocks.
    granularity = int(open(f"/sys/block/{os.path.basename(dev)}/queue/discard_granularity").read())
    assert granularity <= CHUNK
    assert all(read_direct(dev, off, CHUNK) == bytes(CHUNK) for off in offsets)
    assert os.stat(backing).st_blocks * 512 < allocated_before


def _file_target(path, size):
    t = parse_target(f"file:{path}?size={size}")
    assert targets.check_safe_to_write(t, False) == []
    targets.prepare_file(t)
    return t


def test_file_purge_punches_every_block(scratch):
    t = _file_target(scratch / "t.img", 8 * CHUNK)
    _write_pattern(t.path, [0, 5 * CHUNK])
    out = targets.purge(t, "auto")
    assert (out.method, out.ok) == ("file", True), out.detail
    assert "fallocate --punch-hole --offset 0 --length 8388608" in out.detail
    with open(t.path, "rb") as f:
        assert f.read() == bytes(8 * CHUNK)
    assert os.path.getsize(t.path) == 8 * CHUNK
    assert targets.created_by_iolab(t.path)  # still ours: the next run accepts it


def test_file_purge_without_hole_punching_empties_and_reallocates(tmp_path, monkeypatch):
    t = _file_target(tmp_path / "t.img", 4 * CHUNK)
    _write_pattern(t.path, [CHUNK])

    def no_punch(argv, timeout=60.0):
        assert argv[0] == "fallocate"
        return CommandResult(tuple(argv), 1, b"", "fallocate: fallocate failed: Operation not supported")

    monkeypatch.setattr(host, "run_command", no_punch)
    out = targets.purge(t, "file")
    assert out.ok and "truncated to 0 bytes" in out.detail and "Operation not supported" in out.detail
    with open(t.path, "rb") as f:
        assert f.read() == bytes(4 * CHUNK)


def test_file_purge_creates_a_missing_file(tmp_path):
    t = parse_target(f"file:{tmp_path}/new.img?size=2MiB")
    out = targets.purge(t, "file")
    assert out.ok and "created" in out.detail
    assert os.path.getsize(t.path) == 2 * CHUNK and targets.created_by_iolab(t.path)
