"""Device facts are what the drive reports, never the kernel's defaults: found on QEMU's SCSI
and SATA disks under a real kernel (tests/vm), held here on a fake sysfs."""

from __future__ import annotations

import pytest

from iolab import targets

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
    disk = fakesys.disk("sda", MEGASAS, "8:0", {"size": "524288", **_queue(512, 512, 1),
                                                 "device/vendor": "QEMU    ", "device/model": "QEMU HARDDISK   "})
    (disk / "device" / "vpd_pg80").write_bytes(b"\x00\x80\x00\x08IOLABSC1")
    if rate is not None:
        (disk / "device" / "vpd_pgb1").write_bytes(_vpd_b1(rate))
    f = targets.device_facts("/dev/sda")
    assert (f.interface, f.serial, f.rotational) == ("scsi", "IOLABSC1", rotational)


def test_sata_disk_without_a_rotation_rate_is_not_called_rotational(fakesys, runner):
    """ATA IDENTIFY word 217 absent (QEMU's ide-hd, many bridges): hdparm -I gives no rate, the
    kernel's '1' is its default, so the medium is not reported."""
    fakesys.disk("sdc", AHCI, "8:32", {"size": "524288", **_queue(512, 512, 1), "device/vendor": "ATA     ",
                                        "device/model": "QEMU HARDDISK   "})
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_NOT_FROZEN.replace("Nominal Media Rotation Rate", "Unrelated"), "")]
    assert targets.device_facts("/dev/sdc").rotational is None
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_NOT_FROZEN, "")]  # 'Solid State Device'
    assert targets.device_facts("/dev/sdc").rotational is False
