"""Device facts from a fake sysfs and recorded tool output; purge and write-cache command
lines for NVMe/ATA/SCSI through a fake command runner (no such hardware on the test machine);
block-device safety checks on a fake sysfs + /proc (LVM on NVMe, which the test kernel lacks)."""

from __future__ import annotations

import errno
import json
import os
import struct
from pathlib import Path

import pytest

from iolab import targets
from iolab.core.errors import IolabError, RefusedError
from iolab.targets import CommandResult, DeviceFacts, Target, host


class FakeRunner:
    """Answers commands by argv prefix; a list of answers is consumed in order, the last one
    repeating. Unknown commands answer 'not installed', like a bare machine."""

    def __init__(self, rules: dict[tuple[str, ...], object] | None = None):
        self.rules = {k: (v if isinstance(v, list) else [v]) for k, v in (rules or {}).items()}
        self.calls: list[tuple[str, ...]] = []
        self.busy: set[str] = set()  # devices someone else holds O_EXCL

    def open_exclusive(self, path):
        if path in self.busy:
            raise OSError(errno.EBUSY, "Device or resource busy", path)
        return os.open(os.devnull, os.O_RDONLY)

    def __call__(self, argv, timeout=60.0):
        argv = tuple(argv)
        self.calls.append(argv)
        for prefix in sorted(self.rules, key=len, reverse=True):
            if argv[: len(prefix)] == prefix:
                answers = self.rules[prefix]
                rc, out, err = answers.pop(0) if len(answers) > 1 else answers[0]
                return CommandResult(argv, rc, out if isinstance(out, bytes) else out.encode(), err)
        return CommandResult(argv, 127, b"", f"{argv[0]}: not installed")


@pytest.fixture
def runner(monkeypatch, tmp_path):
    fake = FakeRunner()
    monkeypatch.setattr(host, "run_command", fake)
    monkeypatch.setattr(host, "open_exclusive", fake.open_exclusive)
    # An empty sysfs unless a test builds one: the host's own disks must not leak in.
    monkeypatch.setattr(host, "SYSFS", tmp_path / "sys")
    monkeypatch.setattr(host, "sleep", lambda s: None)
    return fake


# --- a fake sysfs ----------------------------------------------------------------------------


class FakeSys:
    def __init__(self, root: Path):
        self.root = root

    def disk(self, name: str, devpath: str, dev: str, files: dict[str, str]) -> Path:
        d = self.root / "devices" / devpath / name
        self._files(d, {"dev": dev, **files})
        self._link(name, d, dev)
        return d

    def partition(self, disk: Path, name: str, dev: str, size: int) -> Path:
        d = disk / name
        self._files(d, {"dev": dev, "partition": "1", "size": str(size)})
        self._link(name, d, dev)
        return d

    def _files(self, d: Path, files: dict[str, str]) -> None:
        for rel, text in files.items():
            p = d / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text + "\n")
        for sub in ("holders", "slaves"):
            (d / sub).mkdir(exist_ok=True)

    def _link(self, name: str, d: Path, dev: str) -> None:
        for link in (self.root / "class" / "block" / name, self.root / "dev" / "block" / dev):
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(d)


@pytest.fixture
def fakesys(tmp_path, monkeypatch):
    monkeypatch.setattr(host, "SYSFS", tmp_path / "sys")
    return FakeSys(tmp_path / "sys")


def _queue(logical=512, physical=512, rotational=0, cache="write back"):
    return {
        "queue/logical_block_size": str(logical),
        "queue/physical_block_size": str(physical),
        "queue/rotational": str(rotational),
        "queue/write_cache": cache,
    }


# Recorded outputs (trimmed to the fields read; the layout is the tools' own).
NVME_ID_CTRL = json.dumps(
    {
        "vid": 5197,
        "ssvid": 5197,
        "sn": "S4EWNX0R123456K     ",
        "mn": "Samsung SSD 970 EVO Plus 1TB            ",
        "fr": "2B2QEXM7",
        "oacs": 23,
        "vwc": 7,
        "sanicap": 0,
        "fna": 0,
        # nvme-cli's json of the power state descriptors (970 EVO Plus: PS0-2 in centiwatts, the
        # non-operational PS3/PS4 in 0.0001 W units, max_power_scale 1)
        "npss": 4,
        "psds": [
            {"max_power": 750, "max_power_scale": 0, "non-operational_state": 0},
            {"max_power": 590, "max_power_scale": 0, "non-operational_state": 0},
            {"max_power": 360, "max_power_scale": 0, "non-operational_state": 0},
            {"max_power": 700, "max_power_scale": 1, "non-operational_state": 1},
            {"max_power": 50, "max_power_scale": 1, "non-operational_state": 1},
        ],
    }
)
# `nvme get-feature DEV -f 0x02` and `-f 0x0c` as nvme-cli prints them (its printf
# "get-feature:%#0*x (%s), %s value:%#0*x": a zero value has no 0x); APST's 256-byte table follows
NVME_PM_PS3 = "get-feature:0x02 (Power Management), Current value:0x00000003\n"
NVME_PM_PS0 = "get-feature:0x02 (Power Management), Current value:00000000\n"
NVME_APST_ON = (
    "get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001\n"
    "       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f\n"
    '0000: 18 ba 01 00 00 00 00 00 18 ba 01 00 00 00 00 00 "................"\n'
)
NVME_APST_OFF = "get-feature:0x0c (Autonomous Power State Transition), Current value:00000000\n"
SMARTCTL_SATA = json.dumps(
    {
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 0},
        "device": {"name": "/dev/sda", "info_name": "/dev/sda [SAT]", "type": "sat", "protocol": "ATA"},
        "model_family": "Samsung based SSDs",
        "model_name": "Samsung SSD 860 EVO 500GB",
        "serial_number": "S3Z1NB0K123456A",
        "firmware_version": "RVT04B6Q",
        "user_capacity": {"blocks": 976773168, "bytes": 500107862016},
        "logical_block_size": 512,
        "physical_block_size": 512,
        "rotation_rate": 0,
    }
)
SMARTCTL_SAS = json.dumps(
    {
        "smartctl": {"version": [7, 4], "exit_status": 0},
        "device": {"name": "/dev/sdb", "type": "scsi", "protocol": "SCSI"},
        "scsi_vendor": "SEAGATE",
        "scsi_product": "ST4000NM0025",
        "scsi_model_name": "SEAGATE ST4000NM0025",
        "scsi_revision": "E002",
        "serial_number": "ZC1ABCDE0000R123ABCD",
        "user_capacity": {"blocks": 7814037168, "bytes": 4000787030016},
        "logical_block_size": 512,
        "physical_block_size": 4096,
        "rotation_rate": 7200,
    }
)
HDPARM_I = """
/dev/sda:

ATA device, with non-removable media
\tModel Number:       Samsung SSD 860 EVO 500GB               
\tSerial Number:      S3Z1NB0K123456A     
\tFirmware Revision:  RVT04B6Q
\tTransport:          Serial, ATA8-AST, SATA 1.0a, SATA II Extensions, SATA Rev 2.5, SATA Rev 2.6, SATA Rev 3.0
Standards:
\tUsed: unknown (minor revision code 0x005e) 
\tSupported: 11 8 7 6 5 
Configuration:
\tLogical\t\tmax\tcurrent
\t--
\tLBA    user addressable sectors:   268435455
\tLBA48  user addressable sectors:   976773168
\tLogical  Sector size:                   512 bytes
\tPhysical Sector size:                   512 bytes
\tdevice size with M = 1024*1024:      476940 MBytes
\tdevice size with M = 1000*1000:      500107 MBytes (500 GB)
\tNominal Media Rotation Rate: Solid State Device
Capabilities:
\tLBA, IORDY(can be disabled)
Commands/features:
\tEnabled\tSupported:
\t   *\tSMART feature set
\t    \tSecurity Mode feature set
\t   *\tPower Management feature set
\t    \tWrite cache
\t   *\tLook-ahead
Security: 
\tMaster password revision code = 65534
\t\tsupported
\tnot\tenabled
\tnot\tlocked
\t{frozen}
\tnot\texpired: security count
\t\tsupported: enhanced erase
\t2min for SECURITY ERASE UNIT. 8min for ENHANCED SECURITY ERASE UNIT.
Logical Unit WWN Device Identifier: 5002538e40000000
"""
HDPARM_NOT_FROZEN = HDPARM_I.replace("{frozen}", "not\tfrozen")
HDPARM_FROZEN = HDPARM_I.replace("{frozen}", "\tfrozen")


# --- device facts ----------------------------------------------------------------------------


def test_nvme_facts_from_sysfs_and_nvme_cli(fakesys, runner):
    fakesys.disk(
        "nvme0n1",
        "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0",
        "259:0",
        {
            "size": "1953525168",
            "wwid": "eui.0025385b71b0123",
            **_queue(512, 512, 0),
            "device/model": "Samsung SSD 970 EVO Plus 1TB",
            "device/serial": "S4EWNX0R123456K",
            "device/firmware_rev": "2B2QEXM7",
        },
    )
    runner.rules[("nvme", "id-ctrl")] = [(0, NVME_ID_CTRL, "")]
    f = targets.device_facts("/dev/nvme0n1")
    assert f.interface == "nvme"
    assert f.capacity_bytes == 1953525168 * 512
    assert (f.model, f.serial, f.firmware) == ("Samsung SSD 970 EVO Plus 1TB", "S4EWNX0R123456K", "2B2QEXM7")
    assert (f.logical_sector, f.physical_sector, f.rotational, f.write_cache) == (512, 512, False, "enabled")
    assert f.wwid == "eui.0025385b71b0123"
    assert f.sources == ("sysfs", "nvme id-ctrl")  # smartctl is not installed in the fake
    assert ("nvme", "id-ctrl", "/dev/nvme0n1", "-o", "json") in runner.calls


def test_nvme_power_state_and_apst_are_facts(fakesys, runner):
    """The current power state (feature 0x02 bits 4:0, above them the workload hint), its rated
    maximum from id-ctrl's descriptor of that state, and APST (feature 0x0c bit 0)."""
    fakesys.disk("nvme0n1", "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0", "259:0", {"size": "1000", **_queue()})
    runner.rules[("nvme", "id-ctrl")] = [(0, NVME_ID_CTRL, "")]
    # workload hint 1 (bits 7:5) on PS3: the state is the low five bits only
    runner.rules[("nvme", "get-feature", "/dev/nvme0n1", "-f", "0x02")] = [
        (0, NVME_PM_PS3.replace("0x00000003", "0x00000023"), "")
    ]
    runner.rules[("nvme", "get-feature", "/dev/nvme0n1", "-f", "0x0c")] = [(0, NVME_APST_ON, "")]
    f = targets.device_facts("/dev/nvme0n1")
    assert (f.nvme_power_state, f.nvme_apst) == (3, "enabled")
    assert f.nvme_power_state_max_w == pytest.approx(0.07)  # 700 x 0.0001 W, not 7 W
    assert f.sources == ("sysfs", "nvme id-ctrl", "nvme get-feature")

    runner.rules[("nvme", "get-feature", "/dev/nvme0n1", "-f", "0x02")] = [(0, NVME_PM_PS0, "")]
    runner.rules[("nvme", "get-feature", "/dev/nvme0n1", "-f", "0x0c")] = [(0, NVME_APST_OFF, "")]
    f = targets.device_facts("/dev/nvme0n1")
    assert (f.nvme_power_state, f.nvme_power_state_max_w, f.nvme_apst) == (0, 7.5, "disabled")

    # a drive that refuses APST (optional feature) still reports its power state
    runner.rules[("nvme", "get-feature", "/dev/nvme0n1", "-f", "0x0c")] = [(1, "", "NVMe status: Invalid Field")]
    f = targets.device_facts("/dev/nvme0n1")
    assert (f.nvme_power_state, f.nvme_apst) == (0, None)


def test_nvme_power_in_the_reports_run_details():
    from iolab.pages.report.sections import nvme_power_rows

    facts = {"nvme_power_state": 3, "nvme_power_state_max_w": 0.07, "nvme_apst": "enabled"}
    assert nvme_power_rows(facts) == [
        ("NVMe power state", "PS3 (rated at most 0.07 W); APST enabled (nvme get-feature 0x02, 0x0c)")
    ]
    assert nvme_power_rows({"interface": "sata"}) == []


def test_sata_facts_tools_replace_truncated_sysfs_model(fakesys, runner):
    fakesys.disk(
        "sda",
        "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block",
        "8:0",
        {
            "size": "976773168",
            **_queue(512, 512, 0, "write through"),
            "device/vendor": "ATA     ",
            "device/model": "Samsung SSD 860 ",
            "device/rev": "4B6Q",
        },
    )
    runner.rules[("smartctl", "-i", "-j")] = [(0, SMARTCTL_SATA, "")]
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_NOT_FROZEN, "")]
    f = targets.device_facts("/dev/sda")
    assert f.interface == "sata"
    assert f.vendor is None  # 'ATA' is the translation layer's placeholder
    assert f.model == "Samsung SSD 860 EVO 500GB"
    assert (f.serial, f.firmware) == ("S3Z1NB0K123456A", "RVT04B6Q")
    assert f.capacity_bytes == 500107862016
    assert f.rotational is False
    assert f.write_cache == "disabled"  # sysfs's live view, hdparm agrees ('Write cache' without '*')
    assert f.sources == ("sysfs", "smartctl", "hdparm -I")


def test_sas_facts_and_partition_of_it(fakesys, runner):
    disk = fakesys.disk(
        "sdb",
        "pci0000:00/0000:00:01.0/0000:01:00.0/host0/port-0:0/end_device-0:0/target0:0:0/0:0:0:0/block",
        "8:16",
        {
            "size": "7814037168",
            **_queue(512, 4096, 1),
            "device/vendor": "SEAGATE ",
            "device/model": "ST4000NM0025    ",
            "device/rev": "E002",
            "device/sas_address": "0x5000c500a1b2c3d4",
        },
    )
    fakesys.partition(disk, "sdb1", "8:17", 2048000)
    runner.rules[("smartctl", "-i", "-j")] = [(0, SMARTCTL_SAS, "")]
    f = targets.device_facts("/dev/sdb")
    assert (f.interface, f.vendor, f.model, f.firmware) == ("sas", "SEAGATE", "SEAGATE ST4000NM0025", "E002")
    assert (f.logical_sector, f.physical_sector, f.rotational) == (512, 4096, True)
    p = targets.device_facts("/dev/sdb1")
    assert p.interface == "sas" and p.capacity_bytes == 2048000 * 512  # its own size, the disk's queue
    assert p.physical_sector == 4096
    assert ("hdparm", "-I", "/dev/sdb") not in runner.calls  # hdparm only for SATA


@pytest.mark.parametrize(
    "name, devpath, iface",
    [
        ("sdc", "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block", "usb"),
        ("sdd", "pci0000:00/0000:00:03.0/virtio2/host2/target2:0:0/2:0:0:0/block", "scsi"),
        ("vdb", "pci0000:00/0000:00:05.0/virtio3/block", "virtio"),
        ("loop5", "virtual/block", "loop"),
        ("zram1", "virtual/block", "zram"),
        ("nbd2", "virtual/block", "nbd"),
        ("mmcblk0", "platform/soc/mmc0/mmc0:0001/block", "mmc"),
    ],
)
def test_interface_from_sysfs_path(fakesys, runner, name, devpath, iface):
    fakesys.disk(name, devpath, "250:9", {"size": "2048", **_queue()})
    f = targets.device_facts(f"/dev/{name}")
    assert f.interface == iface
    assert f.sources == ("sysfs",)


@pytest.mark.parametrize("name", ["loop3", "nbd1", "zram2"])
def test_a_software_devices_rotational_flag_is_not_reported_as_a_medium(fakesys, runner, name):
    # the kernel marks loop and NBD devices rotational by default; no medium is behind that
    fakesys.disk(name, "virtual/block", "250:3", {"size": "2048", **_queue(rotational=1)})
    assert targets.device_facts(f"/dev/{name}").rotational is None


def test_virtio_transport_id_is_not_a_vendor(fakesys, runner):
    fakesys.disk(
        "vda",
        "pci0000:00/0000:00:02.0/virtio1/block",
        "254:0",
        {"size": "536870912", "serial": "overlayblk", "device/vendor": "0x1af4", **_queue(512, 4096, 1)},
    )
    f = targets.device_facts("/dev/vda")
    assert (f.interface, f.vendor, f.serial, f.physical_sector) == ("virtio", None, "overlayblk", 4096)
    assert runner.calls == []  # no drive tools for a virtual disk


def test_tool_failures_mean_fewer_facts_not_errors(fakesys, runner):
    fakesys.disk(
        "nvme1n1",
        "pci0000:00/0000:00:1c.0/0000:02:00.0/nvme/nvme1",
        "259:3",
        {"size": "1000", **_queue(4096, 4096, 0), "device/model": "X"},
    )
    runner.rules[("nvme",)] = [(1, "", "NVMe status: Invalid Field")]
    runner.rules[("smartctl",)] = [(2, "{not json", "")]  # bit 1: device open failed
    f = targets.device_facts("/dev/nvme1n1")
    assert (f.model, f.serial, f.sources) == ("X", None, ("sysfs",))


def test_parse_hdparm_identify():
    f = targets.parse_hdparm_identify(HDPARM_NOT_FROZEN)
    assert (f.model, f.serial, f.firmware) == ("Samsung SSD 860 EVO 500GB", "S3Z1NB0K123456A", "RVT04B6Q")
    assert f.capacity_bytes == 976773168 * 512
    assert (f.rotational, f.write_cache) == (False, "disabled")
    hdd = HDPARM_NOT_FROZEN.replace("Solid State Device", "7200").replace("\t    \tWrite cache", "\t   *\tWrite cache")
    f = targets.parse_hdparm_identify(hdd)
    assert (f.rotational, f.write_cache) == (True, "enabled")
    assert targets.parse_hdparm_identify("garbage") is None


def test_parse_ata_security_states():
    s = targets.parse_ata_security(HDPARM_NOT_FROZEN)
    assert (s.supported, s.enabled, s.locked, s.frozen, s.expired) == (True, False, False, False, False)
    assert s.enhanced_erase and (s.erase_minutes, s.enhanced_minutes) == (2, 8)
    assert targets.parse_ata_security(HDPARM_FROZEN).frozen is True
    no_enh = HDPARM_NOT_FROZEN.replace("\t\tsupported: enhanced erase", "\tnot\tsupported: enhanced erase")
    assert targets.parse_ata_security(no_enh).enhanced_erase is False
    assert targets.parse_ata_security(no_enh).supported is True
    assert targets.parse_ata_security("Model Number: x\n") is None


def test_parse_sanitize_log():
    assert targets.parse_sanitize_log(struct.pack("<HH", 32768, 0x0102) + bytes(508)) == (0.5, 2)
    assert targets.parse_sanitize_log(b"\x00") is None


# --- purge command lines ---------------------------------------------------------------------


def _block(iface: str, path: str = "/dev/x") -> Target:
    return Target("block", path, path, 10**12, DeviceFacts(interface=iface))


def test_nvme_format(runner):
    runner.rules[("nvme", "id-ctrl")] = [(0, NVME_ID_CTRL, "")]
    runner.rules[("nvme", "format")] = [(0, "Success formatting namespace:1", "")]
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "auto")
    assert runner.calls[-1] == ("nvme", "format", "/dev/nvme0n1", "--ses=1", "--force")
    assert (out.method, out.ok) == ("nvme-format", True)
    assert "Success formatting" in out.detail and out.seconds >= 0


def test_nvme_format_unsupported_auto_falls_back_to_blkdiscard(runner):
    runner.rules[("nvme", "id-ctrl")] = [(0, json.dumps({"oacs": 0}), "")]
    runner.rules[("blkdiscard",)] = [(0, "", "")]
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "auto")
    assert (out.method, out.ok) == ("blkdiscard", True)
    assert "nvme-format not possible" in out.detail and "Format NVM" in out.detail
    assert runner.calls[-1] == ("blkdiscard", "-f", "/dev/nvme0n1")
    assert not any(c[:2] == ("nvme", "format") for c in runner.calls)


def test_nvme_sanitize_polls_until_done(runner):
    def log(prog, status):
        return (0, struct.pack("<HH", prog, status) + bytes(508), "")

    runner.rules[("nvme", "id-ctrl")] = [(0, json.dumps({"sanicap": 0b011}), "")]
    runner.rules[("nvme", "sanitize", "/dev/nvme0n1")] = [(0, "", "")]
    runner.rules[("nvme", "sanitize-log")] = [log(0, 2), log(16384, 2), log(49152, 2), log(65535, 1)]
    seen = []
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "nvme-sanitize", progress=seen.append)
    assert out.ok and out.method == "nvme-sanitize"
    assert ("nvme", "sanitize", "/dev/nvme0n1", "--sanact=2") in runner.calls  # block erase preferred
    assert runner.calls.count(("nvme", "sanitize-log", "/dev/nvme0n1", "-o", "binary")) == 4
    assert seen == [0.0, 0.25, 0.75, 1.0]
    assert "block erase" in out.detail


def test_nvme_sanitize_crypto_only_and_failure(runner):
    runner.rules[("nvme", "id-ctrl")] = [(0, json.dumps({"sanicap": 0b001}), "")]
    runner.rules[("nvme", "sanitize", "/dev/nvme0n1")] = [(0, "", "")]
    runner.rules[("nvme", "sanitize-log")] = [(0, struct.pack("<HH", 0, 3) + bytes(508), "")]
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "nvme-sanitize")
    assert ("nvme", "sanitize", "/dev/nvme0n1", "--sanact=4") in runner.calls
    assert not out.ok and "FAILED" in out.detail


def test_nvme_sanitize_unsupported_is_reported_not_raised(runner):
    runner.rules[("nvme", "id-ctrl")] = [(0, json.dumps({"sanicap": 0}), "")]
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "nvme-sanitize")
    assert not out.ok and "SANICAP" in out.detail
    assert not any(c[:2] == ("nvme", "sanitize") for c in runner.calls)


def test_ata_secure_erase_command_lines(runner):
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_NOT_FROZEN, "")]
    runner.rules[("hdparm", "--user-master")] = [(0, "", "")]
    out = targets.purge(_block("sata", "/dev/sda"), "ata-secure-erase")
    assert runner.calls == [
        ("hdparm", "-I", "/dev/sda"),
        ("hdparm", "--user-master", "u", "--security-set-pass", "iolab", "/dev/sda"),
        ("hdparm", "--user-master", "u", "--security-erase-enhanced", "iolab", "/dev/sda"),
    ]
    assert (out.method, out.ok) == ("ata-secure-erase", True)


def test_ata_frozen_explicit_says_remedy(runner):
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_FROZEN, "")]
    out = targets.purge(_block("sata", "/dev/sda"), "ata-secure-erase")
    assert not out.ok
    assert "frozen" in out.detail and "suspend" in out.detail and "hot-unplug" in out.detail
    assert runner.calls == [("hdparm", "-I", "/dev/sda")]  # nothing destructive was tried


def test_ata_frozen_auto_falls_back_to_blkdiscard_and_says_so(runner):
    runner.rules[("hdparm", "-I")] = [(0, HDPARM_FROZEN, "")]
    runner.rules[("blkdiscard",)] = [(0, "", "")]
    out = targets.purge(_block("sata", "/dev/sda"), "auto")
    assert (out.method, out.ok) == ("blkdiscard", True)
    assert "ata-secure-erase not possible" in out.detail and "frozen" in out.detail
    assert "Fell back to blkdiscard" in out.detail


def test_ata_erase_failure_removes_the_password(runner):
    runner.rules[("hdparm", "-I")] = [
        (0, HDPARM_NOT_FROZEN.replace("\t\tsupported: enhanced erase", "\tnot\tsupported: enhanced erase"), "")
    ]
    runner.rules[("hdparm", "--user-master", "u", "--security-set-pass")] = [(0, "", "")]
    runner.rules[("hdparm", "--user-master", "u", "--security-erase")] = [(5, "", "SG_IO: bad/missing sense data")]
    runner.rules[("hdparm", "--user-master", "u", "--security-disable")] = [(0, "", "")]
    out = targets.purge(_block("sata", "/dev/sda"), "ata-secure-erase")
    assert not out.ok
    assert runner.calls[-2] == ("hdparm", "--user-master", "u", "--security-erase", "iolab", "/dev/sda")
    assert runner.calls[-1] == ("hdparm", "--user-master", "u", "--security-disable", "iolab", "/dev/sda")
    assert "bad/missing sense data" in out.detail


def test_sg_format_and_sanitize_command_lines(runner):
    runner.rules[("sg_format",)] = [(0, "FORMAT UNIT Complete", "")]
    out = targets.purge(_block("sas", "/dev/sdb"), "auto")
    assert runner.calls == [("sg_format", "--format", "--quick", "/dev/sdb")]
    assert (out.method, out.ok) == ("sg-format", True)

    runner.calls.clear()
    runner.rules[("sg_sanitize", "--quick", "--block")] = [(5, "", "Illegal request")]
    runner.rules[("sg_sanitize", "--quick", "--crypto")] = [(0, "", "")]
    out = targets.purge(_block("scsi", "/dev/sdb"), "sg-sanitize")
    assert runner.calls == [
        ("sg_sanitize", "--quick", "--block", "/dev/sdb"),
        ("sg_sanitize", "--quick", "--crypto", "/dev/sdb"),
    ]
    assert (out.method, out.ok) == ("sg-sanitize", True)


@pytest.mark.parametrize("iface", ["loop", "virtio", "zram", None])
def test_auto_is_blkdiscard_for_generic_devices(runner, iface):
    runner.rules[("blkdiscard",)] = [(1, "", "blkdiscard: BLKDISCARD ioctl failed: Operation not supported")]
    out = targets.purge(_block(iface, "/dev/loop9"), "auto")
    assert runner.calls == [("blkdiscard", "-f", "/dev/loop9")]
    assert (out.method, out.ok) == ("blkdiscard", False)
    assert "Operation not supported" in out.detail


def test_none_and_nbd_and_bad_methods(runner):
    out = targets.purge(_block("nvme"), "none")
    assert (out.method, out.ok) == ("none", True) and "not start from FOB" in out.detail
    nbd = Target("nbd", "nbd://h/e", "nbd://h:10809/e", 1, DeviceFacts(interface="nbd"))
    out = targets.purge(nbd, "auto")
    assert not out.ok and "--purge none" in out.detail
    with pytest.raises(IolabError, match="unknown"):
        targets.purge(_block("nvme"), "magic")
    with pytest.raises(IolabError, match="needs a nvme drive"):
        targets.purge(_block("sata"), "nvme-format")
    with pytest.raises(IolabError, match="applies to file: targets"):
        targets.purge(_block("loop"), "file")
    with pytest.raises(IolabError, match="takes 'file' or 'none'"):
        targets.purge(Target("file", "file:/x", "/x", 1), "blkdiscard")
    assert runner.calls == []


# --- write cache -----------------------------------------------------------------------------


def test_write_cache_command_lines(runner):
    runner.rules[("nvme", "set-feature")] = [(0, "set-feature:0x06 (Volatile Write Cache), value:0x00000000", "")]
    runner.rules[("hdparm",)] = [(0, "setting drive write-caching to 1 (on)", "")]
    runner.rules[("sg_wr_mode",)] = [(0, "", "")]
    said = targets.set_write_cache(_block("nvme", "/dev/nvme0n1"), False)
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
    assert said.startswith("write cache disabled") and "Volatile Write Cache" in said
    said = targets.set_write_cache(_block("sata", "/dev/sda"), True)
    assert runner.calls[-1] == ("hdparm", "-W1", "/dev/sda") and "write-caching to 1" in said
    said = targets.set_write_cache(_block("sas", "/dev/sdb"), True)
    assert runner.calls[-2:] == [
        ("sdparm", "--set", "WCE", "/dev/sdb"),  # not installed in the fake
        ("sg_wr_mode", "--page=8", "--contents=0,0,4", "--mask=0,0,4", "/dev/sdb"),
    ]
    assert said.startswith("write cache enabled")


def test_write_cache_failure_is_reported_not_raised(runner):
    runner.rules[("nvme", "set-feature")] = [(1, "", "NVMe status: Invalid Field in Command")]
    said = targets.set_write_cache(_block("nvme", "/dev/nvme0n1"), True)
    assert said.startswith("could not set the write cache enabled") and "Invalid Field" in said
    said = targets.set_write_cache(_block("sata", "/dev/sda"), True)  # hdparm not installed
    assert said == "not set: hdparm is not installed"


# --- block safety on a fake system: / on LVM on an NVMe partition ----------------------------


@pytest.fixture
def lvm_system(fakesys, tmp_path, monkeypatch):
    disk = fakesys.disk(
        "nvme0n1", "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0", "259:0", {"size": "2000000", **_queue()}
    )
    fakesys.partition(disk, "nvme0n1p1", "259:1", 1000)
    p3 = fakesys.partition(disk, "nvme0n1p3", "259:3", 1990000)
    dm = fakesys.disk("dm-0", "virtual/block", "253:0", {"size": "1980000", **_queue()})
    (p3 / "holders" / "dm-0").symlink_to(dm)
    (dm / "slaves" / "nvme0n1p3").symlink_to(p3)
    fakesys.disk("nvme1n1", "pci0000:00/0000:00:1c.0/0000:02:00.0/nvme/nvme1", "259:4", {"size": "2000000", **_queue()})
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(
        "27 1 253:0 / / rw,relatime - ext4 /dev/mapper/vg-root rw\n"
        "30 27 259:1 / /boot\\040efi rw,relatime - vfat /dev/nvme0n1p1 rw\n"
        "31 27 0:25 / /tmp rw - tmpfs tmpfs rw\n"
    )
    (proc / "swaps").write_text("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n")
    monkeypatch.setattr(host, "PROC", proc)
    return fakesys


def test_system_disk_through_lvm_is_refused_with_every_reason(lvm_system, runner):
    runner.rules[("blkid",)] = [(0, "DEVNAME=/dev/nvme0n1\nPTUUID=1234\nPTTYPE=gpt\n", "")]
    t = Target("block", "/dev/nvme0n1", "/dev/nvme0n1", 10**9, DeviceFacts(interface="nvme"))
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(t, False)
    msg = str(e.value)
    assert "mounted: /dev/nvme0n1p1 is mounted at /boot efi" in msg
    assert "partitions: /dev/nvme0n1 holds partitions nvme0n1p1, nvme0n1p3" in msg
    assert "signature: /dev/nvme0n1 carries gpt (partition table) (found by blkid -p)" in msg
    assert "holders: in use by the kernel through dm-0 (on nvme0n1p3)" in msg
    assert "/ lives on /dev/nvme0n1 (through dm-0 -> nvme0n1p3)" in msg
    # The system disk is unmounted, not overridden in passing: no override is named.
    assert "--allow-unsafe-target" not in msg and "--allow-system-disk" not in msg
    assert msg.endswith("unmount it (swapoff) first, or choose another target.")
    assert runner.calls == [("blkid", "-p", "-o", "export", "/dev/nvme0n1")]


def test_system_disk_needs_its_own_override(lvm_system, runner):
    runner.rules[("blkid",)] = [(0, "PTTYPE=gpt\n", "")]
    t = Target("block", "/dev/nvme0n1", "/dev/nvme0n1", 10**9, DeviceFacts(interface="nvme"))
    with pytest.raises(RefusedError) as e:  # --allow-unsafe-target alone does not reach the system disk
        targets.check_safe_to_write(t, allow_unsafe=True)
    msg = str(e.value)
    assert "mounted:" in msg and "system disk:" in msg and "partitions:" not in msg
    assert "--allow" not in msg
    with pytest.raises(RefusedError) as e:  # nor the other way round
        targets.check_safe_to_write(t, allow_system_disk=True)
    msg = str(e.value)
    assert "partitions:" in msg and "system disk:" not in msg
    assert "Pass --allow-unsafe-target to override" in msg and "--allow-system-disk" not in msg
    overridden = targets.check_safe_to_write(t, allow_unsafe=True, allow_system_disk=True)
    assert [o.split(":")[0] for o in overridden] == ["mounted", "partitions", "signature", "holders", "system disk"]
    assert overridden[0].endswith("(overridden by --allow-system-disk)")
    assert overridden[1].endswith("(overridden by --allow-unsafe-target)")


def test_other_disk_on_the_same_system_is_clean(lvm_system, runner):
    runner.rules[("blkid",)] = [(2, "", "")]
    t = Target("block", "/dev/nvme1n1", "/dev/nvme1n1", 10**9, DeviceFacts(interface="nvme"))
    assert targets.check_safe_to_write(t, False) == []


def test_signature_probe_falls_back_to_wipefs_then_refuses_blind(lvm_system, runner):
    t = Target("block", "/dev/nvme1n1", "/dev/nvme1n1", 10**9, DeviceFacts(interface="nvme"))
    runner.rules[("wipefs",)] = [(0, json.dumps({"signatures": [{"device": "nvme1n1", "type": "LVM2_member"}]}), "")]
    assert targets.check_safe_to_write(t, True) == [
        "signature: /dev/nvme1n1 carries LVM2_member (found by wipefs -n) (overridden by --allow-unsafe-target)"
    ]
    del runner.rules[("wipefs",)]
    with pytest.raises(RefusedError, match="neither blkid nor wipefs"):
        targets.check_safe_to_write(t, False)


def test_device_held_exclusively_by_someone_else_is_refused(lvm_system, runner):
    runner.rules[("blkid",)] = [(2, "", "")]
    runner.busy.add("/dev/nvme1n1")
    t = Target("block", "/dev/nvme1n1", "/dev/nvme1n1", 10**9, DeviceFacts(interface="nvme"))
    with pytest.raises(RefusedError, match="exclusive: the kernel or another program holds /dev/nvme1n1 exclusively"):
        targets.check_safe_to_write(t, False)


def test_read_only_device_is_refused_whatever_the_overrides(lvm_system, runner):
    runner.rules[("blkid",)] = [(2, "", "")]
    (lvm_system.root / "class" / "block" / "nvme1n1" / "ro").write_text("1\n")
    t = Target("block", "/dev/nvme1n1", "/dev/nvme1n1", 10**9, DeviceFacts(interface="nvme"))
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(t, allow_unsafe=True, allow_system_disk=True)
    msg = str(e.value)
    assert "read-only: /dev/nvme1n1 is read-only" in msg and "Nothing overrides this" in msg
    assert "--allow" not in msg


# --- drive erases never reach beyond the target ----------------------------------------------


@pytest.fixture
def two_namespaces(fakesys):
    for ns, dev in (("nvme0n1", "259:0"), ("nvme0n2", "259:1")):
        fakesys.disk(ns, "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0", dev, {"size": "1000", **_queue()})
    fakesys.disk("nvme1n1", "pci0000:00/0000:00:1c.0/0000:02:00.0/nvme/nvme1", "259:2", {"size": "1000", **_queue()})


def test_sanitize_refused_when_the_controller_has_other_namespaces(two_namespaces, runner):
    runner.rules[("nvme", "id-ctrl")] = [(0, json.dumps({"sanicap": 2}), "")]
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "nvme-sanitize")
    assert not out.ok and "nvme0n2 would be erased too" in out.detail
    assert not any(c[:2] == ("nvme", "sanitize") for c in runner.calls)


@pytest.mark.parametrize("fna, formats", [(0, True), (1, False), (2, False)])
def test_format_with_other_namespaces_depends_on_fna(two_namespaces, runner, fna, formats):
    runner.rules[("nvme", "id-ctrl")] = [(0, json.dumps({"oacs": 2, "fna": fna}), "")]
    runner.rules[("nvme", "format")] = [(0, "Success formatting namespace:1", "")]
    runner.rules[("blkdiscard",)] = [(0, "", "")]
    out = targets.purge(_block("nvme", "/dev/nvme0n1"), "auto")
    assert out.method == ("nvme-format" if formats else "blkdiscard") and out.ok
    assert any(c[:2] == ("nvme", "format") for c in runner.calls) is formats


def test_drive_erase_is_never_aimed_at_a_partition(fakesys, runner):
    disk = fakesys.disk(
        "sda", "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block", "8:0", {"size": "976773168", **_queue()}
    )
    fakesys.partition(disk, "sda2", "8:2", 1000000)
    runner.rules[("blkdiscard",)] = [(0, "", "")]
    out = targets.purge(_block("sata", "/dev/sda2"), "ata-secure-erase")
    assert not out.ok and "partition of /dev/sda" in out.detail
    out = targets.purge(_block("sata", "/dev/sda2"), "auto")
    assert (out.method, out.ok) == ("blkdiscard", True) and "partition of /dev/sda" in out.detail
    assert runner.calls == [("blkdiscard", "-f", "/dev/sda2")]  # no hdparm at all
