"""The drive's volatile write cache, switched with the drive's own tool."""

from __future__ import annotations

from . import host
from .kinds import kind_of
from .model import Target

_NOT_SETTABLE = {
    "loop": "not settable on loop devices (direct IO bypasses the page cache; the backing file's device "
            "keeps its own setting)",
    "zram": "not settable on zram (RAM-backed, there is no device cache)",
    "nbd": "not settable on NBD devices (the server decides)",
    "virtio": "not settable from inside a virtual machine (the host's disk cache mode decides)",
    "dm": "not settable on device-mapper devices (set it on the underlying disks)",
    "md": "not settable on md RAID devices (set it on the member disks)",
}


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


def block_write_cache(target: Target, enabled: bool) -> str:
    """The drive's own switch, by interface."""
    on = "enabled" if enabled else "disabled"
    iface = target.facts.interface
    dev = target.path
    if iface == "nvme":
        r = host.run_command(["nvme", "set-feature", dev, "-f", "6", "-v", "1" if enabled else "0"], timeout=30)
    elif iface == "sata":
        r = host.run_command(["hdparm", f"-W{1 if enabled else 0}", dev], timeout=30)
    elif iface in ("sas", "scsi", "usb"):
        r = host.run_command(["sdparm", "--set" if enabled else "--clear", "WCE", dev], timeout=30)
        if r.missing:
            # Caching mode page 0x08, byte 2 bit 2 is WCE; the mask leaves every other bit alone.
            r = host.run_command(["sg_wr_mode", "--page=8", f"--contents=0,0,{4 if enabled else 0}", "--mask=0,0,4",
                                  dev], timeout=30)
    else:
        return _NOT_SETTABLE.get(iface or "", f"not settable on {iface or 'this kind of'} devices")
    if r.missing:
        return f"not set: {r.argv[0]} is not installed"
    if not r.ok:
        return f"could not set the write cache {on}: {r.summary()}"
    return f"write cache {on}: {r.summary()}"
