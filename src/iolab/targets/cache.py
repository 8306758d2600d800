"""The drive's volatile write cache, switched with the drive's own tool."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from iolab.targets import host
from iolab.targets.kinds import kind_of
from iolab.targets.model import Target

# The drive's own setting before this process first switched it, by device, so the end of
# a run (complete, failed or interrupted) puts it back: a drive left with its cache off runs
# slow, and one left with it on loses data at power loss where the owner had turned it off.
_BEFORE: dict[str, bool] = {}
# What this process set each device's cache to (the profile's), and a set that failed (its
# answer): a run's results meet the profile's WCD/WCE only if the setting held throughout
# (unheld_write_cache), and a drive may refuse a set, ignore it, or fall back to its default
# when it resets during the run.
_SET: dict[str, bool] = {}
_FAILED: dict[str, str] = {}
# The volatile write cache is a controller feature: nvme-cli given a namespace's node sends
# that namespace's id, which a controller may reject ("Feature Not Namespace Specific", QEMU
# does); the broadcast id addresses the controller.
_ALL_NAMESPACES = ("--namespace-id=0xffffffff",)

_NOT_SETTABLE = {
    "loop": "not settable on loop devices (direct IO bypasses the page cache; the backing file's device "
    "keeps its own setting)",
    "zram": "not settable on zram (RAM-backed, there is no device cache)",
    "nbd": "not settable on NBD devices (the server decides)",
    "virtio": "not settable from inside a virtual machine (the host's disk cache mode decides)",
    "dm": "not settable on device-mapper devices (set it on the underlying disks)",
    "md": "not settable on md RAID devices (set it on the member disks)",
}


def _not_settable(target: Target, iface: str | None) -> str:
    """Why this interface's cache cannot be set; of a loop device, also whether its IO reaches the
    backing file directly: with direct IO off (losetup's default) the loop driver writes into the
    backing file's page cache, and the note said "direct IO bypasses the page cache" of a device
    whose 1024 KiB reads ran at the page cache's 8 GB/s."""
    if iface == "loop":
        dio = host.read(Path("/sys/block") / Path(os.path.realpath(target.path)).name / "loop" / "dio")
        if dio is not None and dio.strip() == "0":
            return (
                "not settable on loop devices, and this one has direct IO off (losetup's default): it reads and "
                "writes its backing file through the page cache, so its figures are the page cache's as much as "
                "the disk's (`losetup --direct-io=on` for the disk's own)"
            )
    return _NOT_SETTABLE.get(iface or "", f"not settable on {iface or 'this kind of'} devices")


# The interfaces whose drives have a switch iolab sets (block_write_cache); any other cannot be set
SETTABLE_INTERFACES = ("nvme", "sata", "sas", "scsi", "usb")


def unsettable(target: Target) -> str:
    """Why no run can set this target's write cache ("" where one may): a file, an NBD export, a
    block device on an interface without a switch. Known before the run, so `iolab plan` names
    the non-compliance the run will have."""
    if target.kind == "file":
        return file_write_cache(target, False)
    if target.kind == "nbd":
        return nbd_write_cache(target, False)
    iface = target.facts.interface
    if target.kind == "block" and iface not in SETTABLE_INTERFACES:
        return _not_settable(target, iface)
    return ""


def set_write_cache(target: Target, enabled: bool) -> str:
    """Switch the target's volatile write cache (its kind's hook). Returns what was done (or
    why nothing was), for the manifest; 'not supported' is an answer, never an exception."""
    return kind_of(target).write_cache(target, enabled)


def file_write_cache(target: Target, enabled: bool) -> str:
    return "not settable on files (the filesystem and page cache decide; fio uses direct IO)"


def nbd_write_cache(target: Target, enabled: bool) -> str:
    return "not settable on NBD exports (the server decides)"


def sim_write_cache(target: Target, enabled: bool) -> str:
    return "not settable through iolab.targets on simulated drives (the sim engine switches its model's cache)"


def restore_write_cache(target: Target) -> str | None:
    """Put the drive's write cache back as it was before the run switched it; None when the run
    did not switch it (or could not read it first)."""
    was = _BEFORE.get(target.path)
    if was is None:
        return None
    said = kind_of(target).write_cache(target, was)
    del _BEFORE[target.path]  # after the switch, which would otherwise note the run's setting as the drive's
    _SET.pop(target.path, None)  # the owner's setting is back: nothing of the run's is left to hold
    _FAILED.pop(target.path, None)
    return "restored at the end of the run: " + said


def unheld_write_cache(target: Target, read_back: bool = True) -> str | None:
    """How the write cache this process set on the target's drive failed the profile (None: it
    held, or was not set by this process), as cache_unmet words it: the set failed, or
    (`read_back`) the drive now reports the other setting, or none."""
    dev = target.path
    if dev in _FAILED:
        return f"not held: setting it failed ({_FAILED[dev]})"
    if not read_back or dev not in _SET:
        return None
    return cache_unmet(_SET[dev], drive_write_cache(target), f"set {_on_off(_SET[dev])} at its start")


def cache_unmet(wanted: bool, now: bool | None, how: str, where: str = "", silent: str = "") -> str | None:
    """The one rule a run's write cache is judged by, a local run's and a hosts run's drives alike:
    the profile's setting (the PTS's WCD/WCE) is a condition of every result, so it is met only when
    the drive reports it at the end of the run. Another setting, or none (a drive whose answer
    cannot be read, a host where nothing can be asked: `silent` says why), leaves the run
    non-compliant, said after "write cache WCD ". `how`: what the run did with the setting; `where`:
    the host whose drive it is."""
    if now is None:
        why = silent or "the drive did not report its setting at the end of the run"
        return f"could not be confirmed{where}: {why} ({how}), and the profile requires it held"
    if now == wanted:
        return None
    return f"not held{where}: the drive reported it {_on_off(now)} at the end of the run ({how})"


def _on_off(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def drive_write_cache(target: Target, run: Callable[..., host.CommandResult] | None = None) -> bool | None:
    """The volatile write cache as the drive reports it (NVMe feature 6, ATA IDENTIFY, SCSI
    caching mode page WCE); None when it cannot be read. `run`: run_command's signature, asking
    the machine the drive is on (a hosts run's SSH host; default this one)."""
    iface, dev = target.facts.interface, target.path
    ask = run or host.run_command
    if iface == "nvme":
        # nvme-cli prints the value with C's %#010x: "0x00000001", but "00000000" for zero
        m = re.search(
            r"Current value:\s*(?:0x)?([0-9a-fA-F]+)",
            ask(["nvme", "get-feature", dev, *_ALL_NAMESPACES, "-f", "6"], timeout=30).text,
        )
        return bool(int(m.group(1), 16) & 1) if m else None
    if iface == "sata":
        m = re.search(r"write-caching\s*=\s*([01])\b", ask(["hdparm", "-W", dev], timeout=30).text)
        return m.group(1) == "1" if m else None
    if iface in ("sas", "scsi", "usb"):
        m = re.search(r"^WCE\s+([01])\b", ask(["sdparm", "--get", "WCE", dev], timeout=30).text, re.M)
        if m:
            return m.group(1) == "1"
        r = ask(["sg_modes", "--page=8", "--raw", dev], timeout=30)
        return parse_caching_page(r.stdout) if r.ok else None
    return None


def write_cache_state(target: Target, run: Callable[..., host.CommandResult] | None = None) -> str:
    """The target's write cache as a run that leaves it as it is records it (a hosts run's host):
    why no run could set it, or the setting its drive reports (reported_write_cache)."""
    if why := unsettable_here(target):
        return why
    on = reported_write_cache(target, run)
    if on is None:
        return "not known: the drive did not say its setting; left as it was"
    return f"{'enabled (WCE)' if on else 'disabled (WCD)'} as the drive reported it; left as it was"


def unsettable_here(target: Target) -> str:
    """unsettable, for a target read on another machine too: a device whose interface was not
    read there is one a drive's tool may still answer for (reported_write_cache)."""
    return unsettable(target) if target.kind != "block" or target.facts.interface else ""


def reported_write_cache(target: Target, run: Callable[..., host.CommandResult] | None = None) -> bool | None:
    """The drive's write cache as it reports it, asked with `run` (drive_write_cache). A device
    whose interface was not read (another machine's) is asked as its name says it is: nvme* by
    nvme-cli, sd* as an ATA drive (hdparm) and else as a SCSI one (sdparm)."""
    name = target.path.rsplit("/", 1)[-1]
    tries = [target.facts.interface] if target.facts.interface else ["nvme"] if name.startswith("nvme") else []
    if not tries and name.startswith("sd"):
        tries = ["sata", "sas"]
    for iface in tries:
        on = drive_write_cache(replace(target, facts=replace(target.facts, interface=iface)), run)
        if on is not None:
            return on
    return None


def parse_caching_page(data: bytes) -> bool | None:
    """WCE from `sg_modes --page=8 --raw` (the MODE SENSE(10) reply as binary: 8-byte header,
    block descriptors, then the caching page, whose byte 2 bit 2 is WCE)."""
    if len(data) < 8:
        return None
    page = 8 + int.from_bytes(data[6:8], "big")
    if len(data) <= page + 2 or data[page] & 0x3F != 0x08:
        return None
    return bool(data[page + 2] & 0x04)


def block_write_cache(target: Target, enabled: bool) -> str:
    """The drive's own switch, by interface."""
    on = "enabled" if enabled else "disabled"
    iface = target.facts.interface
    dev = target.path
    if iface in SETTABLE_INTERFACES and dev not in _BEFORE:
        was = drive_write_cache(target)
        if was is not None:
            _BEFORE[dev] = was
    if iface == "nvme":
        r = host.run_command(
            ["nvme", "set-feature", dev, *_ALL_NAMESPACES, "-f", "6", "-v", "1" if enabled else "0"], timeout=30
        )
    elif iface == "sata":
        r = host.run_command(["hdparm", f"-W{1 if enabled else 0}", dev], timeout=30)
    elif iface in ("sas", "scsi", "usb"):
        r = host.run_command(["sdparm", "--set" if enabled else "--clear", "WCE", dev], timeout=30)
        if r.missing:
            # Caching mode page 0x08, byte 2 bit 2 is WCE; the mask leaves every other bit alone.
            r = host.run_command(
                ["sg_wr_mode", "--page=8", f"--contents=0,0,{4 if enabled else 0}", "--mask=0,0,4", dev], timeout=30
            )
    else:
        return _not_settable(target, iface)
    _SET[dev] = enabled
    _FAILED.pop(dev, None)
    if r.missing:
        said = f"not set: {r.argv[0]} is not installed"
    elif not r.ok:
        said = f"could not set the write cache {on}: {r.summary()}"
    else:
        return f"write cache {on}: {r.summary()}"
    if dev not in _BEFORE or _BEFORE[dev] != enabled:  # a drive already as asked still meets the profile
        _FAILED[dev] = said
    return said
