"""Device facts: what a block device (sysfs, nvme-cli, smartctl, hdparm) or a file says about
itself. Read-only; safe on any device."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab.core.errors import IolabError
from iolab.targets import host
from iolab.targets.model import DeviceFacts, Problem, Target


@dataclass(frozen=True)
class BlockDev:
    """A block device as sysfs sees it. `disk` is the whole disk (itself unless a partition)."""

    name: str
    node: str  # /dev/NAME
    sysdir: Path
    disk: Path

    @property
    def is_partition(self) -> bool:
        return self.sysdir != self.disk

    def partitions(self) -> list[str]:
        if self.is_partition:
            return []
        return sorted(p.name for p in self.sysdir.iterdir() if (p / "partition").exists())


def block_dev(path: str) -> BlockDev:
    """Map a device node to its sysfs directory (by major:minor; by name for test trees)."""
    real = os.path.realpath(path)
    name = None
    try:
        st = os.stat(real)
        if stat.S_ISBLK(st.st_mode):
            link = host.SYSFS / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
            if link.exists():
                name = link.resolve().name
    except OSError:
        pass
    if name is None and (host.SYSFS / "class" / "block" / os.path.basename(real)).exists():
        name = os.path.basename(real)
    if name is None:
        raise IolabError(f"{path}: not a block device known to the kernel (nothing in {host.SYSFS}/class/block).")
    return block_dev_named(name)


def block_dev_named(name: str) -> BlockDev:
    sysdir = (host.SYSFS / "class" / "block" / name).resolve()
    disk = sysdir.parent if (sysdir / "partition").exists() else sysdir
    return BlockDev(name=name, node=f"/dev/{name}", sysdir=sysdir, disk=disk)


def sysname(devnum: str) -> str | None:
    """Kernel name of the block device with this major:minor, if there is one."""
    link = host.SYSFS / "dev" / "block" / devnum
    return link.resolve().name if devnum and link.exists() else None


SOFTWARE_DEVICES = ("loop", "nbd", "zram")  # block devices the kernel makes in software


def _interface(dev: BlockDev) -> str | None:
    """Where the disk hangs: from its name and the sysfs device path (the bus it sits on)."""
    disk = dev.disk.name
    where = str(dev.disk)
    for prefix, iface in (
        ("loop", "loop"),
        ("zram", "zram"),
        ("nbd", "nbd"),
        ("nvme", "nvme"),
        ("dm-", "dm"),
        ("md", "md"),
        ("mmcblk", "mmc"),
        ("vd", "virtio"),
        ("xvd", "xen"),
    ):
        if disk.startswith(prefix):
            return iface
    if "/nvme/" in where:
        return "nvme"
    if re.match(r"s[dr][a-z]", disk) or "/host" in where:
        if "/usb" in where:
            return "usb"
        if re.search(r"/ata\d+/", where):
            return "sata"
        if (dev.disk / "device" / "sas_address").exists() or re.search(r"/(end_device|expander)-", where):
            return "sas"
        return "scsi"
    if "/virtio" in where:
        return "virtio"
    return None


def device_facts(path: str) -> DeviceFacts:
    """Facts about a block device (sysfs, then nvme-cli / smartctl / hdparm where they answer)
    or a file (its size and the block device under its filesystem). Read-only."""
    real = os.path.realpath(path)
    try:
        st: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise IolabError(f"{path}: cannot stat it: {e.strerror}.") from None
    if st is not None and stat.S_ISBLK(st.st_mode):
        return _block_facts(block_dev(real))
    if st is None and real.startswith("/dev/") and (host.SYSFS / "class" / "block" / os.path.basename(real)).exists():
        return _block_facts(block_dev(real))
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise IolabError(f"{path} is {file_type(st.st_mode)}: neither a block device nor a regular file.")
    return _file_facts(real, st)


def _block_facts(dev: BlockDev) -> DeviceFacts:
    device = dev.disk / "device"
    queue = dev.disk / "queue"
    size = host.read_int(dev.sysdir / "size")
    rotational = host.read(queue / "rotational")
    interface = _interface(dev)
    vendor = host.read(device / "vendor")
    if (interface == "sata" and vendor == "ATA") or interface == "virtio":
        # 'ATA' is the SCSI-ATA translation layer's placeholder and a virtio disk's vendor is
        # the virtio transport's PCI id (0x1af4): neither names the drive's maker.
        vendor = None
    facts = DeviceFacts(
        vendor=vendor,
        model=host.read(device / "model"),
        serial=host.read(device / "serial") or host.read(dev.disk / "serial") or vpd_serial(device),
        firmware=host.read(device / "firmware_rev") or host.read(device / "rev"),
        capacity_bytes=size * 512 if size is not None else None,  # sysfs counts 512 B units always
        logical_sector=host.read_int(queue / "logical_block_size"),
        physical_sector=host.read_int(queue / "physical_block_size"),
        rotational=_rotational(interface, rotational, device),
        interface=interface,
        write_cache={"write back": "enabled", "write through": "disabled"}.get(host.read(queue / "write_cache") or ""),
        sources=("sysfs",),
        wwid=host.read(dev.disk / "wwid") or host.read(device / "wwid"),
        zoned=host.read(queue / "zoned") if host.read(queue / "zoned") in ("host-managed", "host-aware") else None,
    )
    node = f"/dev/{dev.disk.name}"  # the tools identify drives, not partitions
    # Least direct first: each later tool's identity strings replace the earlier ones.
    if interface in ("nvme", "sata", "sas", "scsi", "usb"):
        r = host.run_command(["smartctl", "-i", "-j", node], timeout=30)
        # smartctl's exit status is a bit mask; bits 0-1 mean it could not talk to the device.
        if not r.missing and r.returncode & 0b11 == 0:
            facts = _merge(facts, parse_smartctl_info(r.text), "smartctl")
    if interface == "nvme":
        r = host.run_command(["nvme", "id-ctrl", node, "-o", "json"], timeout=30)
        if r.ok:
            facts = _merge(facts, parse_nvme_id_ctrl(r.text), "nvme id-ctrl")
        facts = _nvme_power(facts, node, r.text if r.ok else "")
    if interface == "sata":
        r = host.run_command(["hdparm", "-I", node], timeout=30)
        if r.ok:
            facts = _merge(facts, parse_hdparm_identify(r.text), "hdparm -I")
    return facts


# Disks behind the SCSI layer: the kernel clears their rotational flag only when the drive says
# it does not rotate (ATA IDENTIFY word 217 = 1, SCSI VPD page B1h rate 1); 1 is its default.
_SCSI_LAYER = ("sata", "sas", "scsi", "usb")


def _rotational(interface: str | None, flag: str | None, device: Path) -> bool | None:
    """What the medium is as the drive reports it: the kernel's flag where it is a fact (NVMe,
    virtio), SCSI VPD page B1h for SCSI and SAS disks; the kernel's default '1' is not a fact
    (an emulated or bridged disk that reports no rate gets it), so it stays None for the tools
    (hdparm, smartctl) to fill in. A loop or NBD device's flag is not about any medium."""
    if interface in SOFTWARE_DEVICES:
        return None
    if interface in _SCSI_LAYER:
        rate = vpd_rotation_rate(device)
        if rate is not None:
            return rate > 1
        return False if flag == "0" else None
    return {"1": True, "0": False}.get(flag or "")


def _vpd(device: Path, page: str) -> bytes | None:
    """A VPD page as the kernel read it from the drive (sysfs device/vpd_pgXX), or None."""
    try:
        raw = (device / f"vpd_pg{page}").read_bytes()
    except OSError:
        return None
    return raw if len(raw) >= 4 else None


def vpd_serial(device: Path) -> str | None:
    """The Unit Serial Number page (80h): SCSI and SAS disks give their serial only here."""
    raw = _vpd(device, "80")
    return _clean(raw[4 : 4 + int.from_bytes(raw[2:4], "big")].decode("ascii", "replace").strip("\0")) if raw else None


def vpd_rotation_rate(device: Path) -> int | None:
    """Medium rotation rate from the Block Device Characteristics page (B1h): 1 means solid
    state, above 1 rpm; None when the page is absent or says 'not reported' (0)."""
    raw = _vpd(device, "b1")
    rate = int.from_bytes(raw[4:6], "big") if raw and len(raw) >= 6 else 0
    return rate or None


def zoned_problems(target: Target) -> list[Problem]:
    """A host-managed zoned device (ZNS namespace, SMR disk) takes writes only at each zone's
    write pointer, in order; every iolab test writes at random offsets or over the whole
    range, which such a device rejects. Nothing overrides that. Host-aware devices take
    random writes (with their own penalties) and are tested like any other."""
    if target.facts.zoned != "host-managed":
        return []
    return [
        Problem(
            "zoned",
            f"{target.path} is a host-managed zoned device (the kernel's queue/zoned); it takes "
            "writes only sequentially at each zone's write pointer and rejects the random and "
            "whole-range writes of every iolab test (and its purge), so iolab does not test it. "
            "Test a conventional namespace of the drive instead",
            None,
        )
    ]


_IDENTITY = ("vendor", "model", "serial", "firmware")


def _merge(base: DeviceFacts, extra: DeviceFacts | None, source: str) -> DeviceFacts:
    """Identity strings from a tool win (sysfs truncates ATA models to 16 characters); other
    fields only fill gaps, since sysfs is the kernel's live view."""
    if extra is None:
        return base
    changes: dict[str, Any] = {}
    for name in DeviceFacts.__dataclass_fields__:
        if name in ("sources", "interface"):
            continue
        new = getattr(extra, name)
        if new is not None and (name in _IDENTITY or getattr(base, name) is None):
            changes[name] = new
    return replace(base, **changes, sources=base.sources + (source,))


def _clean(value: object) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def parse_nvme_id_ctrl(text: str) -> DeviceFacts | None:
    """`nvme id-ctrl -o json`: mn, sn, fr (space-padded ASCII in the spec)."""
    data = host.json_object(text)
    if data is None:
        return None
    return DeviceFacts(model=_clean(data.get("mn")), serial=_clean(data.get("sn")), firmware=_clean(data.get("fr")))


def parse_nvme_feature(text: str) -> int | None:
    """The value of `nvme get-feature DEV -f FID`'s first line, "get-feature:0x02 (Power
    Management), Current value:0x00000003" (nvme-cli 1.x and 2.x; a zero value prints as
    "00000000", without 0x)."""
    m = re.search(r"value:\s*(?:0x)?([0-9a-fA-F]+)", text)
    return int(m.group(1), 16) if m else None


def power_state_max_w(id_ctrl: str, state: int) -> float | None:
    """A power state's rated maximum power from `nvme id-ctrl -o json`'s psds: max_power in
    centiwatts, or in units of 0.0001 W when max_power_scale is 1 (NVMe base spec, MXPS)."""
    data = host.json_object(id_ctrl)
    psds = data.get("psds") if data else None
    if not isinstance(psds, list) or not 0 <= state < len(psds) or not isinstance(psds[state], dict):
        return None
    mp, scale = psds[state].get("max_power"), psds[state].get("max_power_scale", 0)
    if not isinstance(mp, int):
        return None
    return mp * (0.0001 if scale == 1 else 0.01)


def _nvme_power(facts: DeviceFacts, node: str, id_ctrl: str) -> DeviceFacts:
    """The drive's power state (feature 0x02, bits 4:0) and APST enable (feature 0x0c, bit 0)
    now, with the state's rated maximum; whatever nvme-cli does not answer stays None."""
    pm = host.run_command(["nvme", "get-feature", node, "-f", "0x02"], timeout=30)
    state = parse_nvme_feature(pm.text) if pm.ok else None
    apst = host.run_command(["nvme", "get-feature", node, "-f", "0x0c"], timeout=30)
    apste = parse_nvme_feature(apst.text) if apst.ok else None
    if state is None and apste is None:
        return facts
    ps = None if state is None else state & 0x1F
    return replace(
        facts,
        nvme_power_state=ps,
        nvme_power_state_max_w=None if ps is None else power_state_max_w(id_ctrl, ps),
        nvme_apst=None if apste is None else ("enabled" if apste & 1 else "disabled"),
        sources=facts.sources + ("nvme get-feature",),
    )


def parse_smartctl_info(text: str) -> DeviceFacts | None:
    """`smartctl -i -j` (smartmontools 7.x; SCSI keys renamed scsi_* in 7.4, both read)."""
    data = host.json_object(text)
    if data is None:
        return None
    rate = data.get("rotation_rate")
    capacity = (data.get("user_capacity") or {}).get("bytes")
    return DeviceFacts(
        vendor=_clean(data.get("scsi_vendor") or data.get("vendor")),
        model=_clean(data.get("model_name") or data.get("scsi_model_name") or data.get("product")),
        serial=_clean(data.get("serial_number")),
        firmware=_clean(data.get("firmware_version") or data.get("scsi_revision") or data.get("revision")),
        capacity_bytes=capacity if isinstance(capacity, int) and capacity > 0 else None,
        logical_sector=data.get("logical_block_size"),
        physical_sector=data.get("physical_block_size"),
        # smartctl reports 0 for 'Solid State Device'; absent means the drive did not say.
        rotational=(rate > 0) if isinstance(rate, int) else None,
    )


def parse_hdparm_identify(text: str) -> DeviceFacts | None:
    """`hdparm -I`: ATA IDENTIFY DEVICE as text."""

    def field_(label: str) -> str | None:
        m = re.search(rf"^\s*{label}:\s*(.*?)\s*$", text, re.M)
        return _clean(m.group(1)) if m else None

    if "Model Number:" not in text:
        return None
    logical = re.search(r"Logical\s+Sector size:\s+(\d+) bytes", text)
    physical = re.search(r"Physical\s+Sector size:\s+(\d+) bytes", text)
    sectors = re.search(r"LBA48\s+user addressable sectors:\s+(\d+)", text) or re.search(
        r"LBA\s+user addressable sectors:\s+(\d+)", text
    )
    rate = field_("Nominal Media Rotation Rate")
    cache = re.search(r"^\s*(\*?)\s*Write cache\s*$", text, re.M)
    return DeviceFacts(
        model=field_("Model Number"),
        serial=field_("Serial Number"),
        firmware=field_("Firmware Revision"),
        capacity_bytes=int(sectors.group(1)) * int(logical.group(1)) if sectors and logical else None,
        logical_sector=int(logical.group(1)) if logical else None,
        physical_sector=int(physical.group(1)) if physical else None,
        rotational=None if rate is None else (rate.isdigit() and int(rate) > 1),
        write_cache=None if cache is None else ("enabled" if cache.group(1) else "disabled"),
    )


def _file_facts(path: str, st: os.stat_result | None) -> DeviceFacts:
    """A file's own facts are its size; the block device under its filesystem decides how IO
    behaves, so its sector sizes and rotational flag are reported with its name."""
    dev_stat = st if st is not None else host.stat_or_none(os.path.dirname(path))
    # tmpfs, overlay and btrfs subvolumes sit on anonymous devices: then there is no bonus.
    name = sysname(f"{os.major(dev_stat.st_dev)}:{os.minor(dev_stat.st_dev)}") if dev_stat else None
    backing = block_dev_named(name) if name else None
    facts = DeviceFacts(interface="file", capacity_bytes=st.st_size if st else None, sources=("stat",))
    if backing is None:
        return facts
    queue = backing.disk / "queue"
    return replace(
        facts,
        logical_sector=host.read_int(queue / "logical_block_size"),
        physical_sector=host.read_int(queue / "physical_block_size"),
        rotational={"1": True, "0": False}.get(host.read(queue / "rotational") or ""),
        backing_device=backing.node,
        sources=("stat", "sysfs"),
    )


def file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISREG, "a regular file"),
    ):
        if test(mode):
            return name
    return "not a regular file"
