"""A block device of this machine through the `iolab` command: ?size= tests its first part, as a
file's, an NBD export's and a host's device's ?size= does, and one larger than the device is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .conftest import iolab, read_direct

MiB = 1 << 20
QUICK = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--purge", "none")


def test_a_local_devices_size_tests_its_first_part_and_none_larger_is_taken(scratch, loop_device):
    # ?size= was refused on a device of this machine ("a block device takes no options") while a
    # host's device took it: a local run could not test part of a drive
    p = iolab("run", "latency", *QUICK, "-t", f"{loop_device}?size=16MiB", "--json", "--runs-dir", str(scratch / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    assert run["target"]["tested_capacity_bytes"] == 16 * MiB
    manifest = json.loads((Path(run["path"]) / "manifest.json").read_text())
    assert manifest["target"]["facts"]["capacity_bytes"] == 256 * MiB  # the device's own size, as sysfs says
    p = iolab("plan", "latency", "--quick", "-t", f"{loop_device}?size=512MiB")
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert f"?size=512MiB ({512 * MiB:,} bytes) is larger than {loop_device}, which holds {256 * MiB:,} bytes" in said
    assert f"Give ?size= of at most {256 * MiB:,} bytes, or leave it out to test the whole device." in said, said


def test_a_file_target_naming_a_link_to_a_device_suggests_the_device_s_own_name(scratch, loop_device):
    """Before: `file:/tmp/ll` (a link to /dev/loopN) said "write /tmp/ll as the target", which
    is no target spec iolab takes: a device target is named by its /dev path."""
    link = scratch / "ll"
    link.symlink_to(loop_device)
    p = iolab("plan", "latency", "--quick", "-t", f"file:{link}")
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert f"To test the device itself write {loop_device} as the target." in said, said
    p = iolab("plan", "latency", "--quick", "-t", loop_device)
    assert p.returncode == 0, p.stdout + p.stderr  # the suggestion is taken as it is written


def test_a_local_devices_size_purge_leaves_every_byte_past_it(scratch, loop_device):
    # `--purge auto` on DEV?size= ran `blkdiscard -f DEV`: the whole device was discarded (a
    # marker at 300 MiB of a 512 MiB loop device read back as zeros) and the record said "whole
    # device discarded (67.11 MB)", the tested size, not what was discarded
    marker = b"KEEPME!!" * 8192
    fd = os.open(loop_device, os.O_RDWR)
    try:
        for at in (16 * MiB, 200 * MiB):  # the first byte past ?size=, and far past it
            os.pwrite(fd, marker, at)
        os.fsync(fd)
    finally:
        os.close(fd)
    p = iolab(
        "run", "latency", *QUICK[:-2], "--purge", "auto", "-t", f"{loop_device}?size=16MiB",
        "--json", "--runs-dir", str(scratch / "r"),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    for at in (16 * MiB, 200 * MiB):
        assert read_direct(loop_device, at, len(marker)) == marker, f"the marker at {at:,} was erased"
    (run,) = json.loads(p.stdout)["runs"]
    (purge,) = json.loads((Path(run["path"]) / "manifest.json").read_text())["purges"]
    assert (purge["method"], purge["ok"]) == ("blkdiscard", True), purge
    assert f"blkdiscard -f -o 0 -l {16 * MiB} {loop_device}" in purge["detail"], purge
    assert f"discarded offset 0, length {16 * MiB:,} bytes" in purge["detail"], purge
    assert "whole device" not in purge["detail"], purge
    # a drive erase of the device would erase past ?size=: refused before anything runs
    p = iolab("plan", "latency", "--quick", "--purge", "nvme-format", "-t", f"{loop_device}?size=16MiB")
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "nvme-format erases the whole drive, every byte beyond ?size= included" in said, said
