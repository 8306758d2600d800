"""Who uses a device or a file: mounts, swap, open file descriptors, loop devices, and the disks
the running system lives on. Read-only; everything is read through host.py."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iolab.targets import host
from iolab.targets.facts import BlockDev, block_dev_named, sysname


def rdev_of(path: str) -> str | None:
    """major:minor of a device node, or None when it is not one (mount sources like 'tmpfs')."""
    st = host.stat_or_none(path) if path.startswith("/") else None
    if st is None or not stat.S_ISBLK(st.st_mode):
        return None
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def devnums(dev: BlockDev) -> dict[str, str]:
    """major:minor of a device and of each of its partitions, by kernel name."""
    ours = {dev.name: dev.sysdir} | {p: dev.sysdir / p for p in dev.partitions()}
    return {name: num for name, num in ((n, host.read(d / "dev")) for n, d in ours.items()) if num}


@dataclass(frozen=True)
class Mount:
    devnum: str
    mountpoint: str
    fstype: str
    source: str


def _unescape(text: str) -> str:
    # mountinfo and /proc/swaps write space, tab, newline and backslash as \ooo octal.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def mounts() -> list[Mount]:
    out = []
    for line in (host.PROC / "self" / "mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if len(f) < 5 or not r:
            continue
        out.append(Mount(f[2], _unescape(f[4]), r[0], _unescape(r[1]) if len(r) > 1 else ""))
    return out


def swaps() -> list[tuple[str, str]]:
    """(filename, type) of active swap areas."""
    try:
        lines = (host.PROC / "swaps").read_text().splitlines()[1:]
    except OSError:
        return []
    return [(_unescape(p[0]), p[1]) for p in (line.split() for line in lines) if len(p) >= 2]


def mounted(numset: set[str], mount_list: list[Mount]) -> list[str]:
    """Mounts and swap areas on any of these devices (major:minor)."""
    out = []
    for m in mount_list:
        if m.devnum in numset or (m.source.startswith("/dev/") and rdev_of(m.source) in numset):
            out.append(f"{m.source or m.devnum} is mounted at {m.mountpoint}")
    for name, kind in swaps():
        if kind == "partition" and rdev_of(name) in numset:
            out.append(f"{name} is active swap")
    return out


def swap_file(st: os.stat_result) -> str | None:
    """The active swap file that is this file, if it is one."""
    for name, kind in swaps():
        other = host.stat_or_none(name) if kind == "file" else None
        if other is not None and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return name
    return None


def lower_chain(name: str) -> list[list[str]]:
    """Every path from a device down to the disks it lives on: through dm/md slaves and from a
    partition to its disk. ['dm-0', 'nvme0n1p3', 'nvme0n1'] for / on LVM on NVMe."""
    sysdir = (host.SYSFS / "class" / "block" / name).resolve()
    below: list[str] = []
    if (sysdir / "partition").exists():
        below.append(sysdir.parent.name)
    slaves = sysdir / "slaves"
    if slaves.is_dir():
        below += sorted(p.name for p in slaves.iterdir())
    if not below:
        return [[name]]
    return [[name] + rest for b in below for rest in lower_chain(b)]


def open_by_others(matches: Callable[[os.stat_result], bool]) -> list[str]:
    """Processes holding a matching device or file open, other than us. A process must be seen
    on three scans to count, so a udev probe that happens to be running is not blamed."""

    def scan() -> dict[int, str]:
        found: dict[int, str] = {}
        me = os.getpid()
        for entry in host.PROC.iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                fds = list((entry / "fd").iterdir())
            except OSError:
                continue
            for fd in fds:
                try:
                    if not os.readlink(fd).startswith("/"):
                        continue  # sockets, pipes, anon inodes
                    st = os.stat(fd)
                except OSError:
                    continue
                if matches(st):
                    comm = host.read(entry / "comm") or "?"
                    found[int(entry.name)] = f"pid {entry.name} ({comm})"
        return found

    seen = scan()
    for _ in range(2):
        if not seen:
            break
        time.sleep(0.2)
        now = scan()
        seen = {pid: who for pid, who in seen.items() if pid in now}
    return [seen[pid] for pid in sorted(seen)]


def device_in(numset: set[str]) -> Callable[[os.stat_result], bool]:
    return lambda st: stat.S_ISBLK(st.st_mode) and f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" in numset


def same_file(target: os.stat_result) -> Callable[[os.stat_result], bool]:
    return lambda st: stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino)


def loop_backing(dev: BlockDev) -> str | None:
    """The file a loop device (or a partition of one) reads and writes, if it is one."""
    return host.read(dev.disk / "loop" / "backing_file")


def loop_devices_backed_by(st: os.stat_result) -> list[BlockDev]:
    """Loop devices whose backing file is this file (compared by device and inode, so another
    path to the same file is found too)."""
    out = []
    blocks = host.SYSFS / "block"
    for entry in sorted(blocks.iterdir()) if blocks.is_dir() else []:
        backing = host.read(entry / "loop" / "backing_file")
        if not backing:
            continue
        other = host.stat_or_none(backing.removesuffix(" (deleted)"))
        if other is not None and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            out.append(block_dev_named(entry.name))
    return out


_SYSTEM_MOUNTS = ("/", "/boot", "/boot/efi", "/usr", "/var")


def system_use(dev: BlockDev, mount_list: list[Mount]) -> list[str]:
    """Does the system (/, /boot, /usr, /var, swap) live on this device or on the disk it is
    part of? Writing there takes the machine down, so it is refused like a mounted device."""
    users: list[tuple[str, str]] = []  # (what, device name)
    for m in mount_list:
        if m.mountpoint in _SYSTEM_MOUNTS:
            name = sysname(m.devnum) or sysname(rdev_of(m.source) or "")
            if name:
                users.append((m.mountpoint, name))
    for filename, kind in swaps():
        if kind == "partition":
            name = sysname(rdev_of(filename) or "")
        else:
            st = host.stat_or_none(filename)
            name = sysname(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}") if st else None
        if name:
            users.append((f"swap {filename}", name))

    out = []
    for what, name in users:
        for chain in lower_chain(name):
            if dev.name in chain:
                via = chain[: chain.index(dev.name)]
                out.append(f"{what} lives on {dev.node}" + (f" (through {' -> '.join(via)})" if via else ""))
                break
            if dev.is_partition and dev.disk.name in chain:
                out.append(
                    f"{dev.node} is a partition of {dev.disk.name}, the disk {what} lives on ({' -> '.join(chain)})"
                )
                break
    return list(dict.fromkeys(out))


# Filesystems whose "files" are the kernel's interfaces (sysfs, /proc/sys, tracing, cgroups) or
# its device nodes: nothing iolab writes belongs there.
PSEUDO_FILESYSTEMS = frozenset(
    {
        "proc",
        "sysfs",
        "debugfs",
        "tracefs",
        "cgroup",
        "cgroup2",
        "devtmpfs",
        "devpts",
        "securityfs",
        "pstore",
        "bpf",
        "configfs",
        "efivarfs",
        "fusectl",
        "binfmt_misc",
        "selinuxfs",
        "mqueue",
        "nsfs",
        "rpc_pipefs",
    }
)


def pseudo_filesystem(path: str | Path) -> str | None:
    """The pseudo filesystem (type and mount point) that `path` (symlinks resolved, or where it
    would be created) lives on, or None."""
    real = os.path.realpath(path)
    best = None
    for m in mounts():
        mp = m.mountpoint
        if (real == mp or real.startswith(mp.rstrip("/") + "/")) and (best is None or len(mp) >= len(best.mountpoint)):
            best = m
    if best is not None and best.fstype in PSEUDO_FILESYSTEMS:
        return f"{best.fstype} at {best.mountpoint}"
    return None
