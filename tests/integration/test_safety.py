"""Safety checks and device facts on real loop devices (root, util-linux, e2fsprogs)."""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from iolab import targets
from iolab.errors import IolabError, RefusedError
from iolab.targets import parse_target

pytestmark = [
    pytest.mark.integration,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup"),
]


@contextlib.contextmanager
def attached_loop(backing: Path, size: int = 64 << 20, sector_size: int | None = None):
    """A loop device over a fresh sparse file, always detached afterwards (partitions too).
    conftest's loop_device has one fixed size and sector size; these tests vary both."""
    with open(backing, "wb") as f:
        f.truncate(size)
    argv = ["losetup", "-f", "--show", "--direct-io=on"]
    if sector_size:
        argv += ["--sector-size", str(sector_size)]
    dev = subprocess.run(argv + [str(backing)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["partx", "-d", dev], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


@pytest.fixture
def loop(scratch):
    with attached_loop(scratch / "backing.img") as dev:
        yield dev


def _refusal(dev: str) -> str:
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(parse_target(dev), False)
    msg = str(e.value)
    assert f"Pass --allow-unsafe-target to override (this destroys data on {dev})" in msg
    assert "\n" not in msg
    return msg


def test_clean_loop_device_is_accepted(loop):
    assert targets.check_safe_to_write(parse_target(loop), False) == []


def test_mounted_device_is_refused_naming_the_mount_point(loop, scratch):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    mnt = scratch / "mnt point"  # a space: mountinfo escapes it, the message must not
    mnt.mkdir()
    subprocess.run(["mount", loop, str(mnt)], check=True, capture_output=True)
    try:
        msg = _refusal(loop)
        assert f"mounted: {loop} is mounted at {mnt}" in msg
        assert "signature" in msg and "ext4" in msg
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_unmounted_filesystem_signature_is_refused(loop):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    msg = _refusal(loop)
    assert f"signature: {loop} carries ext4 (filesystem) (found by blkid -p)" in msg
    assert "mounted" not in msg


def test_partition_table_is_refused(loop):
    # One-partition MBR, written by hand so the test needs no fdisk. The test kernel may parse
    # no partition tables at all, so the partition is also registered with partx.
    mbr = bytearray(512)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), 2048, 65536)
    mbr[510:512] = b"\x55\xaa"
    with open(loop, "r+b") as f:
        f.write(mbr)
    name = os.path.basename(loop)
    if not Path(f"/sys/class/block/{name}p1").exists():
        subprocess.run(["partx", "-a", loop], check=True, capture_output=True)
    msg = _refusal(loop)
    assert f"partitions: {loop} holds partitions {name}p1" in msg
    assert "dos (partition table)" in msg


def test_device_held_open_by_another_process_is_refused_naming_it(loop):
    with open(loop, "rb") as dev:
        holder = subprocess.Popen(["sleep", "300"], stdin=dev)
    try:
        msg = _refusal(loop)
        assert f"open: open by pid {holder.pid} (sleep)" in msg
    finally:
        holder.kill()
        holder.wait()
    # Our own open file descriptors are not a reason to refuse.
    with open(loop, "rb"):
        assert targets.check_safe_to_write(parse_target(loop), False) == []


def test_active_swap_is_refused(loop):
    subprocess.run(["mkswap", loop], check=True, capture_output=True)
    if subprocess.run(["swapon", loop], capture_output=True).returncode != 0:
        pytest.skip("swapon not permitted here")
    try:
        msg = _refusal(loop)
        assert f"{loop} is active swap" in msg
    finally:
        subprocess.run(["swapoff", loop], check=True)


def test_override_accepts_and_lists_the_failed_checks(loop):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    with open(loop, "rb") as dev:
        holder = subprocess.Popen(["sleep", "300"], stdin=dev)
    try:
        overridden = targets.check_safe_to_write(parse_target(loop), True)
    finally:
        holder.kill()
        holder.wait()
    assert [o.split(":")[0] for o in overridden] == ["signature", "open"]
    assert f"pid {holder.pid} (sleep)" in overridden[1]


def test_system_disk_is_refused():
    st = os.stat("/")
    link = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not link.exists():
        pytest.skip("/ is not on a block device here (overlay, tmpfs)")
    dev = f"/dev/{link.resolve().name}"
    if not os.path.exists(dev):
        pytest.skip(f"{dev} has no device node here")
    msg = _refusal(dev)  # read-only: the check only inspects
    assert "system disk: / lives on" in msg


@pytest.mark.parametrize("sector_size", [512, 4096])
def test_loop_device_facts(scratch, sector_size):
    with attached_loop(scratch / "b.img", 48 << 20, sector_size) as dev:
        t = parse_target(dev)
        f = t.facts
        name = os.path.basename(dev)
        assert t.kind == "block" and t.path == dev
        assert t.capacity == f.capacity_bytes == 48 << 20
        assert f.interface == "loop"
        assert f.logical_sector == sector_size
        assert f.physical_sector == int(Path(f"/sys/block/{name}/queue/physical_block_size").read_text())
        assert f.physical_sector >= f.logical_sector
        assert f.rotational is (Path(f"/sys/block/{name}/queue/rotational").read_text().strip() == "1")
        assert f.sources == ("sysfs",)


def test_unattached_loop_device_has_no_capacity():
    free = subprocess.run(["losetup", "-f"], capture_output=True, text=True).stdout.strip()
    if not free or not os.path.exists(free):
        pytest.skip("no free loop device node")
    try:
        parse_target(free)
    except IolabError as e:
        assert "size of 0 bytes" in str(e)
    else:  # someone attached it between the two calls: nothing to assert
        pytest.skip(f"{free} was attached concurrently")


@pytest.mark.skipif(not (shutil.which("nbdkit") and shutil.which("nbdinfo")), reason="needs nbdkit and nbdinfo")
def test_nbd_export_size_is_asked_from_the_server(tmp_path):
    sock = tmp_path / "nbd.sock"
    server = subprocess.Popen(["nbdkit", "--foreground", "--unix", str(sock), "memory", "48M"])
    try:
        for _ in range(200):
            if sock.exists():
                break
            time.sleep(0.05)
        t = parse_target(f"nbd+unix:///?socket={sock}")
        assert (t.kind, t.capacity, t.facts.sources) == ("nbd", 48 << 20, ("nbdinfo",))
        assert targets.check_safe_to_write(t, False) == []  # the export's owner decides what it serves
    finally:
        server.terminate()
        server.wait()
