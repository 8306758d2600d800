"""A block device of this machine through the `iolab` command: ?size= tests its first part, as a
file's, an NBD export's and a host's device's ?size= does, and one larger than the device is refused."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import iolab

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
