"""`iolab info` of a file target says one capacity, the one a run tests, and what a run does to
the file first, or that a run refuses it and why, in the words `iolab run` refuses it with (the
same check). It printed "capacity 2,147,483,648 B" and then "capacity_bytes 1073741824" (the
file's own size) of a 1 GiB file given ?size=2GiB, and accepted file:/proc/self/mem with a
capacity and exit status 0 where `run` refuses it. A block device that a run refuses (a loop
device with a mounted filesystem) was shown with a capacity and exit status 0 too."""

from __future__ import annotations

import os
import subprocess

from iolab.targets.files import mark_created

from .conftest import iolab


def said(p) -> str:
    return " ".join((p.stdout + p.stderr).split())


def test_info_says_the_capacity_a_run_tests_and_that_it_grows_the_file(scratch):
    img = scratch / "d.img"
    with open(img, "wb") as f:
        f.truncate(1 << 20)
    mark_created(str(img))  # as iolab made it: a run would take it
    p = iolab("info", f"file:{img}?size=2MiB", timeout=120)
    text = said(p)
    assert p.returncode == 0, text
    assert "capacity 2,097,152 B" in text, text
    assert "holds 1,048,576 B now: a run grows it to 2,097,152 B first" in text, text
    assert "capacity_bytes" not in text and "1048576" not in text, text  # no second capacity
    smaller = said(iolab("info", f"file:{img}?size=512KiB", timeout=120))
    assert "capacity 524,288 B" in smaller and "a run tests its first 524,288 B" in smaller, smaller
    absent = said(iolab("info", f"file:{scratch}/new.img?size=1MiB", timeout=120))
    assert "absent: a run creates it, 1,048,576 B" in absent and not os.path.exists(scratch / "new.img"), absent


def test_info_of_a_file_run_refuses_says_why_as_run_does(scratch):
    spec = "file:/proc/self/mem?size=1GiB"
    p = iolab("info", spec, timeout=120)
    text = said(p)
    assert p.returncode == 3 and "Traceback" not in text, text  # a refused write's status, as run's
    assert "a run refuses it" in text and "capacity 1,073,741,824" not in text, text
    run = iolab("run", "latency", "--quick", "-t", spec, "--runs-dir", str(scratch / "runs"), timeout=300)
    refusal = " ".join(run.stderr.split()).removeprefix("iolab: ")
    assert run.returncode == 3 and "pseudo filesystem" in refusal, run.stderr
    assert refusal in text, (refusal, text)  # the same check, the same words


def test_info_of_a_block_device_run_refuses_says_why_and_exits_3(loop_device, scratch):
    clean = iolab("info", loop_device, timeout=120)
    assert clean.returncode == 0 and "capacity 268,435,456 B" in said(clean), said(clean)
    subprocess.run(["mkfs.ext4", "-q", "-F", loop_device], check=True, capture_output=True)
    mnt = scratch / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loop_device, str(mnt)], check=True, capture_output=True)
    p = iolab("info", "sim:enterprise-sas", loop_device, timeout=120)  # the other target is still shown
    text = said(p)
    assert p.returncode == 3 and "Traceback" not in text, text  # as a refused file's, and run's
    assert "sim:enterprise-sas (sim) capacity" in text and f"{loop_device} (block) a run refuses it" in text, text
    assert "capacity_bytes 268435456" in text, text  # the device's facts are still its facts
    run = iolab("run", "latency", "--quick", "-t", loop_device, "--runs-dir", str(scratch / "runs"), timeout=300)
    refusal = " ".join(run.stderr.split()).removeprefix("iolab: ")
    assert run.returncode == 3 and f"mounted: {loop_device} is mounted at {mnt}" in refusal, run.stderr
    assert refusal in text, (refusal, text)  # the same check, the same words


def test_info_of_a_symlink_to_a_block_device_names_the_device_to_write(loop_device, scratch):
    """A symlink outside /dev to a block device was told "For a regular file write file:LINK",
    which `info` and `run` then refuse as a block device: it names the device's node."""
    link = scratch / "disk"
    link.symlink_to(loop_device)
    p = iolab("info", f"{link}?size=16MiB")
    text = said(p)
    assert p.returncode == 2 and "Traceback" not in text, text
    assert f"{link} is the block device {loop_device}: write {loop_device}?size=16MiB as the target." in text, text
    assert "file:" not in text.split("Accepted forms")[0], text
    assert iolab("info", f"{loop_device}?size=16MiB").returncode == 0  # what it says to write is taken
    p = iolab("info", str(scratch / "no-such.img"))  # a path that is no device: a regular file, as before
    assert f"For a regular file write file:{scratch / 'no-such.img'}." in said(p), said(p)
