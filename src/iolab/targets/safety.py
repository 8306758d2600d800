"""Write safety: refuse a target that holds or may hold someone's data.

Checks on a block device, each named in the refusal: mounted (the device or a partition, or
active swap), partitions, signature (blkid -p, else wipefs -n), holders (dm/md), open (by
another process, from /proc/*/fd), system disk (/, /boot, /boot/efi, /usr, /var or swap live
on it, through partitions and dm/md layers). A file is refused when it is non-empty and
carries no iolab mark (see files.py).
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import RefusedError
from ..units import human_bytes
from . import host
from .facts import BlockDev, block_dev, file_type, sysname
from .files import MARK_XATTR, created_by_iolab, sidecar
from .spec import Target


@dataclass(frozen=True)
class _Problem:
    check: str  # the check's name as users see it: 'mounted', 'partitions', ...
    evidence: str

    def __str__(self) -> str:
        return f"{self.check}: {self.evidence}"


def check_safe_to_write(target: Target, allow_unsafe: bool) -> list[str]:
    """Refuse (RefusedError) to write to a target that holds or may hold someone's data.

    Returns the checks that failed but were overridden by allow_unsafe, for the manifest, or
    [] when every check passed. NBD exports and simulated drives have nothing to check here:
    the export's owner decides what it serves, and the simulator holds no data.
    """
    if target.kind == "block":
        problems = _block_problems(target.path)
        victim = f"on {target.path}"
    elif target.kind == "file":
        problems = _file_problems(target.path)
        victim = f"in {target.path}"
    else:
        return []
    if problems and not allow_unsafe:
        found = "; ".join(str(p) for p in problems)
        raise RefusedError(
            f"Refusing to write to target {target.spec!r} ({target.path}): {found}. These checks protect "
            "data that may be in use. Pass --allow-unsafe-target to override (this destroys data "
            f"{victim})."
        )
    return [str(p) for p in problems]


def _devnum(sysdir: Path) -> str | None:
    return host.read(sysdir / "dev")


def _rdev_of(path: str) -> str | None:
    """major:minor of a device node, or None when it is not one (mount sources like 'tmpfs')."""
    st = host.stat_or_none(path) if path.startswith("/") else None
    if st is None or not stat.S_ISBLK(st.st_mode):
        return None
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


@dataclass(frozen=True)
class _Mount:
    devnum: str
    mountpoint: str
    fstype: str
    source: str


def _unescape(text: str) -> str:
    # mountinfo and /proc/swaps write space, tab, newline and backslash as \ooo octal.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mounts() -> list[_Mount]:
    out = []
    for line in (host.PROC / "self" / "mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if len(f) < 5 or not r:
            continue
        out.append(_Mount(f[2], _unescape(f[4]), r[0], _unescape(r[1]) if len(r) > 1 else ""))
    return out


def _swaps() -> list[tuple[str, str]]:
    """(filename, type) of active swap areas."""
    try:
        lines = (host.PROC / "swaps").read_text().splitlines()[1:]
    except OSError:
        return []
    return [(_unescape(p[0]), p[1]) for p in (line.split() for line in lines) if len(p) >= 2]


def _lower_chain(name: str) -> list[list[str]]:
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
    return [[name] + rest for b in below for rest in _lower_chain(b)]


def _block_problems(path: str) -> list[_Problem]:
    dev = block_dev(path)
    parts = dev.partitions()
    ours = {dev.name: dev.sysdir} | {p: dev.sysdir / p for p in parts}
    devnums = {n: d for n, d in ((name, _devnum(sysdir)) for name, sysdir in ours.items()) if d}
    numset = set(devnums.values())
    problems: list[_Problem] = []

    mounts = _mounts()
    mounted = []
    for m in mounts:
        if m.devnum in numset or (m.source.startswith("/dev/") and _rdev_of(m.source) in numset):
            mounted.append(f"{m.source or m.devnum} is mounted at {m.mountpoint}")
    for name, kind in _swaps():
        if kind == "partition" and _rdev_of(name) in numset:
            mounted.append(f"{name} is active swap")
    if mounted:
        problems.append(_Problem("mounted", ", ".join(mounted)))

    if parts:
        problems.append(_Problem("partitions", f"{dev.node} holds partitions {', '.join(parts)}"))

    sig = _signature(dev.node)
    if sig:
        problems.append(_Problem("signature", sig))

    holders = []
    for name, sysdir in ours.items():
        h = sysdir / "holders"
        if h.is_dir():
            holders += [f"{p.name} (on {name})" for p in sorted(h.iterdir())]
    if holders:
        problems.append(_Problem("holders", f"in use by the kernel through {', '.join(holders)} (device-mapper/RAID)"))

    users = _open_by_others(numset)
    if users:
        problems.append(_Problem("open", "open by " + ", ".join(users)))

    system = _system_use(dev, mounts)
    if system:
        problems.append(_Problem("system disk", "; ".join(system)))
    return problems


def _signature(node: str) -> str | None:
    """What blkid (or wipefs) finds on the device: a filesystem, RAID/LVM member, partition table."""
    r = host.run_command(["blkid", "-p", "-o", "export", node], timeout=30)
    if r.returncode == 2:  # blkid: nothing found
        return None
    if r.ok:
        kv = dict(line.split("=", 1) for line in r.text.splitlines() if "=" in line)
        found = []
        if "TYPE" in kv:
            found.append(f"{kv['TYPE']} ({kv.get('USAGE', 'unknown use')})")
        if "PTTYPE" in kv:
            found.append(f"{kv['PTTYPE']} (partition table)")
        return f"{node} carries {', '.join(found) or 'an unnamed signature'} (found by blkid -p)"
    if r.returncode == 8:  # ambivalent: several signatures at once
        return f"{node} carries several conflicting signatures (blkid -p: {r.stderr.strip() or 'ambivalent'})"
    if r.missing:
        w = host.run_command(["wipefs", "--no-act", "--json", node], timeout=30)
        if w.ok:
            data = host.json_object(w.text) or {}
            types = [s.get("type", "?") for s in data.get("signatures", [])]
            return f"{node} carries {', '.join(types)} (found by wipefs -n)" if types else None
        if w.missing:
            return "cannot probe for signatures: neither blkid nor wipefs (util-linux) is installed"
        return f"cannot probe for signatures ({w.summary()})"
    return f"cannot probe for signatures ({r.summary()})"


def _open_by_others(devnums: set[str]) -> list[str]:
    """Processes holding the device (or a partition) open, other than us. A process must be
    seen on three scans to count, so a udev probe that happens to be running is not blamed."""
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
                if stat.S_ISBLK(st.st_mode) and f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" in devnums:
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


_SYSTEM_MOUNTS = ("/", "/boot", "/boot/efi", "/usr", "/var")


def _system_use(dev: BlockDev, mounts: list[_Mount]) -> list[str]:
    """Does the system (/, /boot, /usr, /var, swap) live on this device or on the disk it is
    part of? Writing there takes the machine down, so it is refused like a mounted device."""
    users: list[tuple[str, str]] = []  # (what, device name)
    for m in mounts:
        if m.mountpoint in _SYSTEM_MOUNTS:
            name = sysname(m.devnum) or sysname(_rdev_of(m.source) or "")
            if name:
                users.append((m.mountpoint, name))
    for filename, kind in _swaps():
        if kind == "partition":
            name = sysname(_rdev_of(filename) or "")
        else:
            st = host.stat_or_none(filename)
            name = sysname(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}") if st else None
        if name:
            users.append((f"swap {filename}", name))

    out = []
    for what, name in users:
        for chain in _lower_chain(name):
            if dev.name in chain:
                via = chain[: chain.index(dev.name)]
                out.append(f"{what} lives on {dev.node}" + (f" (through {' -> '.join(via)})" if via else ""))
                break
            if dev.is_partition and dev.disk.name in chain:
                out.append(f"{dev.node} is a partition of {dev.disk.name}, the disk {what} lives on "
                           f"({' -> '.join(chain)})")
                break
    return list(dict.fromkeys(out))


def _file_problems(path: str) -> list[_Problem]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return []  # iolab will create it
    if not stat.S_ISREG(st.st_mode):
        return [_Problem("not a regular file", f"{path} is {file_type(st.st_mode)}")]
    if st.st_size > 0 and not created_by_iolab(path):
        return [_Problem(
            "not created by iolab",
            f"{path} holds {human_bytes(st.st_size)} and carries no iolab mark (xattr {MARK_XATTR} or "
            f"sidecar {os.path.basename(sidecar(path))}), so it may be someone's data",
        )]
    return []
