"""Device facts are what the drive reports, never the kernel's defaults: found on QEMU's SCSI
and SATA disks under a real kernel (tests/vm), held here on a fake sysfs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from iolab import targets
from iolab.core.errors import RefusedError
from iolab.targets import wear

from .test_targets_tools import HDPARM_NOT_FROZEN, _queue, fakesys, runner  # noqa: F401 (fixtures)

MEGASAS = "pci0000:00/0000:00:10.0/host2/target2:2:0/2:2:0:0/block"  # a disk behind megaraid_sas
AHCI = "pci0000:00/0000:00:0f.0/ata1/host0/target0:0:0/0:0:0:0/block"


def _vpd_b1(rate: int) -> bytes:
    return bytes([0, 0xB1, 0, 0x3C]) + rate.to_bytes(2, "big") + bytes(58)


@pytest.mark.parametrize("rate, rotational", [(None, None), (0, None), (1, False), (7200, True)])
def test_scsi_serial_and_medium_from_the_vpd_pages(fakesys, runner, rate, rotational):
    """The kernel reads a SCSI disk's serial (page 80h) and rotation rate (page B1h) but has
    no 'serial' file for it, and marks it rotational by default: QEMU's scsi-hd (rate not
    reported) was 'rotational True, no serial' in `iolab info`."""
    disk = fakesys.disk(
        "sda",
        MEGASAS,
        "8:0",
        {"size": "524288", **_queue(512, 512, 1), "device/vendor": "QEMU    ", "device/model": "QEMU HARDDISK   "},
    )
    (disk / "device" / "vpd_pg80").write_bytes(b"\x00\x80\x00\x08IOLABSC1")
    if rate is not None:
        (disk / "device" / "vpd_pgb1").write_bytes(_vpd_b1(rate))
    f = targets.device_facts("/dev/sda")
    assert (f.interface, f.serial, f.rotational) == ("scsi", "IOLABSC1", rotational)


def test_sata_disk_without_a_rotation_rate_is_not_called_rotational(fakesys, runner):
    """ATA IDENTIFY word 217 absent (QEMU's ide-hd, many bridges): hdparm -I gives no rate, the
    kernel's '1' is its default, so the medium is not reported."""
    fakesys.disk(
        "sdc",
        AHCI,
        "8:32",
        {"size": "524288", **_queue(512, 512, 1), "device/vendor": "ATA     ", "device/model": "QEMU HARDDISK   "},
    )
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_NOT_FROZEN.replace("Nominal Media Rotation Rate", "Unrelated"), "")]
    assert targets.device_facts("/dev/sdc").rotational is None
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_NOT_FROZEN, "")]  # 'Solid State Device'
    assert targets.device_facts("/dev/sdc").rotational is False


def test_host_managed_zoned_namespace_is_refused_whatever_the_overrides(fakesys, runner):
    """QEMU's zoned NVMe namespace under a real kernel: `iolab run` created its run, then failed
    in fio's first random write. Now `iolab info` says it is zoned and a run is refused before
    anything is written; a host-aware device takes random writes and is not refused for it."""
    fakesys.disk(
        "nvme4n1",
        "pci0000:00/0000:00:0e.0/nvme/nvme4",
        "259:3",
        {"size": "524288", **_queue(), "queue/zoned": "host-managed"},
    )
    runner.rules[("blkid",)] = [(2, "", "")]
    t = targets.Target("block", "/dev/nvme4n1", "/dev/nvme4n1", 268435456, targets.device_facts("/dev/nvme4n1"))
    assert t.facts.zoned == "host-managed"
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(t, allow_unsafe=True, allow_system_disk=True)
    assert "zoned: /dev/nvme4n1 is a host-managed zoned device" in str(e.value)
    assert "Nothing overrides this" in str(e.value)
    aware = replace(t, facts=replace(t.facts, zoned="host-aware"))
    assert targets.check_safe_to_write(aware) == []


def test_write_cache_is_put_back_as_the_drive_had_it(runner):
    """The run switches the cache for its profile and puts the drive's own setting back at
    the end (found on QEMU's NVMe controller: left disabled after every enterprise run)."""
    nvme = targets.Target("block", "/dev/nvme0n1", "/dev/nvme0n1", 10**9, targets.DeviceFacts(interface="nvme"))
    runner.rules[("nvme", "get-feature")] = [
        (0, "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001", "")
    ]
    runner.rules[("nvme", "set-feature")] = [(0, "set-feature:0x06 (Volatile Write Cache), value:0x00000000", "")]
    targets.set_write_cache(nvme, False)
    assert runner.calls[-1] == (
        "nvme",
        "set-feature",
        "/dev/nvme0n1",
        "--namespace-id=0xffffffff",
        "-f",
        "6",
        "-v",
        "0",
    )
    said = targets.restore_write_cache(nvme)
    assert runner.calls[-1] == (
        "nvme",
        "set-feature",
        "/dev/nvme0n1",
        "--namespace-id=0xffffffff",
        "-f",
        "6",
        "-v",
        "1",
    )
    assert said.startswith("restored at the end of the run: write cache enabled")
    assert targets.restore_write_cache(nvme) is None  # put back once
    sata = targets.Target("block", "/dev/sdc", "/dev/sdc", 10**9, targets.DeviceFacts(interface="sata"))
    runner.rules[("hdparm", "-W")] = [(0, "\n/dev/sdc:\n write-caching =  0 (off)\n", "")]
    runner.rules[("hdparm", "-W1")] = [(0, "setting drive write-caching to 1 (on)", "")]
    runner.rules[("hdparm", "-W0")] = [(0, "setting drive write-caching to 0 (off)", "")]
    targets.set_write_cache(sata, True)
    assert targets.restore_write_cache(sata).endswith("write-caching to 0 (off)")
    assert runner.calls[-1] == ("hdparm", "-W0", "/dev/sdc")


def test_nvme_cli_2_counters_as_strings_are_read():
    """nvme-cli 2.3 (Debian 12) prints the SMART log's 128-bit counters as JSON strings: QEMU's
    NVMe controller said "data_units_written":"1099" and no phase's writes were recorded."""
    c = wear.parse_nvme_smart_log(json.dumps({"data_units_written": "1099", "host_write_commands": "9822"}))
    assert c is not None and c.host_bytes == 1099 * 512_000
    assert wear.parse_nvme_smart_log(json.dumps({"data_units_written": "a lot"})) is None
    assert wear.parse_nvme_smart_log(json.dumps({"data_units_written": True})) is None


def test_scsi_write_cache_read_from_the_caching_page_and_put_back(runner):
    """Without sdparm, the SCSI caching page is read with `sg_modes --raw`, whose reply is
    binary (QEMU's scsi-hd: its WCE bit), and the setting put back after the run."""
    page = bytes([0x08, 0x12, 0x04]) + bytes(17)  # caching page, WCE set
    reply = bytes([0, 6 + len(page), 0, 0, 0, 0, 0, 0]) + page  # MODE SENSE(10) header, no block descriptors
    runner.rules[("sg_modes",)] = [(0, reply, "")]
    runner.rules[("sg_wr_mode",)] = [(0, "", "")]
    scsi = targets.Target("block", "/dev/sda", "/dev/sda", 10**9, targets.DeviceFacts(interface="scsi"))
    targets.set_write_cache(scsi, False)
    assert runner.calls[-1] == ("sg_wr_mode", "--page=8", "--contents=0,0,0", "--mask=0,0,4", "/dev/sda")
    assert targets.restore_write_cache(scsi).startswith("restored at the end of the run: write cache enabled")
    assert runner.calls[-1] == ("sg_wr_mode", "--page=8", "--contents=0,0,4", "--mask=0,0,4", "/dev/sda")


def test_nvme_write_cache_off_is_read_and_put_back(runner):
    """nvme-cli prints a zero feature value as "00000000" (C's %#x adds no 0x to zero): a drive
    whose cache was off was not known to be, and a client run left it on."""
    nvme = targets.Target("block", "/dev/nvme0n1", "/dev/nvme0n1", 10**9, targets.DeviceFacts(interface="nvme"))
    runner.rules[("nvme", "get-feature")] = [(0, "get-feature:0x06 (Volatile Write Cache), Current value:00000000", "")]
    runner.rules[("nvme", "set-feature")] = [(0, "set-feature:0x06 (Volatile Write Cache), value:0x00000001", "")]
    targets.set_write_cache(nvme, True)
    assert targets.restore_write_cache(nvme) is not None
    assert runner.calls[-1] == (
        "nvme",
        "set-feature",
        "/dev/nvme0n1",
        "--namespace-id=0xffffffff",
        "-f",
        "6",
        "-v",
        "0",
    )


SG_FORMAT_QEMU = (
    "QEMU      QEMU HARDDISK     2.5+\n      peripheral_type: disk [0x0]\n      Unit serial number: IOLABSC1\n"
    "Format unit has started\nFORMAT UNIT Complete\n"
)
SG_FORMAT_QEMU_ERR = (
    "test unit ready:  Fixed format, current;  Sense key: Hardware Error\n Additional sense: Internal target failure\n"
)


def test_sg_format_that_the_drive_reports_failed_is_not_a_purge(runner):
    """QEMU's scsi-hd under a real kernel: sg_format exited 0 while the drive answered its
    readiness poll with a Hardware Error; the purge was recorded as ok."""
    runner.rules[("sg_format",)] = [(0, SG_FORMAT_QEMU, SG_FORMAT_QEMU_ERR)]
    scsi = targets.Target("block", "/dev/sda", "/dev/sda", 10**9, targets.DeviceFacts(interface="scsi"))
    out = targets.purge(scsi, "sg-format")
    assert not out.ok and out.method == "sg-format"
    assert "'Hardware Error' after FORMAT UNIT" in out.detail
    runner.rules[("sg_format",)] = [(0, SG_FORMAT_QEMU, "")]
    assert targets.purge(scsi, "sg-format").ok


def test_a_write_cache_setting_that_did_not_hold_is_named(runner, monkeypatch):
    """The enterprise profile's WCD, set at the run's start: a drive that reports its cache on
    again at the end (reset during the run, or a set it ignored) did not run as the profile
    asks, and says why; a set that failed on a drive not already off says so at once; a drive
    still off, or one already off when the set failed, held it."""
    from iolab.targets import cache

    for name in ("_BEFORE", "_SET", "_FAILED"):
        monkeypatch.setattr(cache, name, {})  # this test's drive only
    nvme = targets.Target("block", "/dev/nvme0n1", "/dev/nvme0n1", 10**9, targets.DeviceFacts(interface="nvme"))
    on = (0, "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001", "")
    off = (0, "get-feature:0x06 (Volatile Write Cache), Current value:00000000", "")
    runner.rules[("nvme", "set-feature")] = [(0, "set-feature:0x06 (Volatile Write Cache), value:00000000", "")]
    runner.rules[("nvme", "get-feature")] = [on, off]  # before the set, then at the end: held
    targets.set_write_cache(nvme, False)
    assert targets.unheld_write_cache(nvme, read_back=False) is None
    assert targets.unheld_write_cache(nvme) is None
    runner.rules[("nvme", "get-feature")] = [on]  # at the end: on again
    assert targets.unheld_write_cache(nvme) == (
        "not held: the drive reported it enabled at the end of the run (set disabled at its start)"
    )
    targets.restore_write_cache(nvme)
    assert targets.unheld_write_cache(nvme) is None  # nothing of the run's is left to hold
    # the set refused (nvme-cli's answer for a controller without a volatile write cache)
    runner.rules[("nvme", "set-feature")] = [(1, "", "NVMe status: Invalid Field in Command(0x2)")]
    runner.rules[("nvme", "get-feature")] = [on]
    said = targets.set_write_cache(nvme, False)
    assert targets.unheld_write_cache(nvme, read_back=False) == f"not held: setting it failed ({said})"
    targets.restore_write_cache(nvme)
    runner.rules[("nvme", "get-feature")] = [off]  # already off: the profile's setting holds anyway
    targets.set_write_cache(nvme, False)
    assert targets.unheld_write_cache(nvme) is None


def test_a_hosts_runs_write_cache_is_read_where_each_host_has_it(runner, monkeypatch):
    """A hosts run leaves each host's cache as it is and records each one's: asked over SSH on
    the host (nvme-cli's answer, recorded), not known on a host reached through fio alone, and
    why no run sets it on a file; nothing is asked on this machine for another's drive."""
    from iolab.engines import hosttargets
    from iolab.engines.hostlist import Host

    asked = []

    def over_ssh(argv, timeout=60.0):
        asked.append(tuple(argv))
        return targets.CommandResult(
            tuple(argv), 0, b"get-feature:0x06 (Volatile Write Cache), Current value:00000000", ""
        )

    monkeypatch.setattr(hosttargets, "ssh_runner", lambda h: over_ssh)
    there = targets.Target("block", "/dev/nvme1n1", "/dev/nvme1n1", 10**9, targets.DeviceFacts())  # not read here
    said = hosttargets.leg_write_cache(Host("10.9.9.9", ssh="root@10.9.9.9"), there)
    assert said == "disabled (WCD) as the drive reported it; left as it was"
    assert asked == [("nvme", "get-feature", "/dev/nvme1n1", "--namespace-id=0xffffffff", "-f", "6")]
    assert hosttargets.leg_write_cache(Host("10.9.9.9"), there) == (
        "not known: host 10.9.9.9:8765 is reached through fio's server alone, where nothing can be asked"
    )
    a_file = targets.Target("file", "file:/x.img", "/x.img", 10**6, targets.DeviceFacts(interface="file"))
    assert hosttargets.leg_write_cache(Host("10.9.9.9"), a_file).startswith("not settable on files")
    assert runner.calls == []  # nothing of it asked on this machine
