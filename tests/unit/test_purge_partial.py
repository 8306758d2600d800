"""Purge of a block device tested in its first part (?size= below the device's size): only
[0, size) is discarded, and no drive erase (which erases the whole drive) is chosen or taken.
Before, `--purge auto` ran `blkdiscard -f DEV` on the whole device and an NVMe or SATA drive got
its whole-drive format or secure erase."""

from __future__ import annotations

import pytest

from iolab import targets
from iolab.core.errors import IolabError
from iolab.run.runstart import RunOptions, check_purge_method
from iolab.targets import CommandResult, DeviceFacts, Target, host
from iolab.targets.purge import auto_method
from iolab.targets.purgerange import WHOLE_DRIVE_METHODS, check_partial_purge, is_partial

MiB = 1 << 20
DEVICE = 10**12  # the device's own size, as its facts say

# the interface each drive erase needs (purge.py refuses it on another first)
_IFACE = {
    "nvme-format": "nvme",
    "nvme-sanitize": "nvme",
    "ata-secure-erase": "sata",
    "sg-format": "sas",
    "sg-sanitize": "scsi",
}


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """Every command purge runs, each answered with success; a sysfs of one disk, 'sdz', whose
    discard granularity a test sets."""
    got: list[tuple[str, ...]] = []

    def run(argv, **kw):
        got.append(tuple(argv))
        return CommandResult(list(argv), 0, b"", "")

    monkeypatch.setattr(host, "run_command", run)
    monkeypatch.setattr(host, "SYSFS", tmp_path / "sys")
    monkeypatch.setattr(host, "sleep", lambda s: None)
    return got


def _granularity(granule: int, logical: int = 512) -> None:
    queue = host.SYSFS / "class" / "block" / "sdz" / "queue"
    queue.mkdir(parents=True)
    (queue / "discard_granularity").write_text(f"{granule}\n")
    (queue / "logical_block_size").write_text(f"{logical}\n")


def _part(iface: str | None, size: int = 16 * MiB, holds: int | None = DEVICE) -> Target:
    facts = DeviceFacts(interface=iface, capacity_bytes=holds)
    return Target("block", f"/dev/sdz?size={size}", "/dev/sdz", size, facts, options=(("size", str(size)),))


@pytest.mark.parametrize("iface", ["nvme", "sata", "sas", "scsi", "loop", None])
def test_auto_discards_only_the_tested_part_whatever_the_interface(calls, iface):
    _granularity(4096)
    target = _part(iface)
    assert is_partial(target)
    assert auto_method(target).startswith("blkdiscard of bytes 0 to 16,777,216 only")
    out = targets.purge(target, "auto")
    assert calls == [("blkdiscard", "-f", "-o", "0", "-l", str(16 * MiB), "/dev/sdz")]  # no drive erase asked
    assert (out.method, out.ok) == ("blkdiscard", True)
    assert "discarded offset 0, length 16,777,216 bytes" in out.detail
    assert "nothing past byte 16,777,216 touched" in out.detail and "whole device" not in out.detail


@pytest.mark.parametrize("method", WHOLE_DRIVE_METHODS)
def test_an_explicit_drive_erase_of_a_part_is_refused_before_anything_runs(calls, method):
    target = _part(_IFACE[method])
    with pytest.raises(IolabError) as refused:
        check_purge_method(target, RunOptions(purge_method=method))  # a run's and `iolab plan`'s admission
    said = str(refused.value)
    assert f"{method} erases the whole drive, every byte beyond ?size= included" in said
    assert "Nothing was run or written." in said
    with pytest.raises(IolabError, match="erases the whole drive"):
        targets.purge(target, method)  # and the purge itself, for any caller that skipped admission
    assert calls == []


def test_the_length_is_rounded_down_to_the_discard_granularity_and_said(calls):
    _granularity(MiB)
    out = targets.purge(_part("nvme", size=16 * MiB + 4096), "blkdiscard")
    assert calls == [("blkdiscard", "-f", "-o", "0", "-l", str(16 * MiB), "/dev/sdz")]
    assert "length 16,777,216 bytes" in out.detail
    assert "rounded down to the discard granularity (1,048,576 bytes): the last 4,096 bytes are not discarded" in (
        out.detail
    )


def test_a_size_below_one_granule_is_refused(calls):
    _granularity(MiB)
    for method in ("auto", "blkdiscard"):
        with pytest.raises(IolabError, match="no discard fits inside it"):
            check_partial_purge(_part("loop", size=512 * 1024), method)
    check_partial_purge(_part("loop", size=512 * 1024), "none")  # nothing purged: nothing to refuse
    assert calls == []


def test_a_size_of_the_whole_device_purges_as_the_whole_device(calls):
    whole = _part("nvme", size=DEVICE)
    assert not is_partial(whole)
    check_partial_purge(whole, "nvme-format")
    assert not is_partial(Target("block", "/dev/sdz", "/dev/sdz", DEVICE, DeviceFacts(capacity_bytes=DEVICE)))
    # a device whose size is unknown but was given ?size= counts as a part: no drive erase
    assert is_partial(_part("nvme", holds=None))
