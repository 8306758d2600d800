"""The same drive twice in one fleet, by what the drive is rather than how it is named: before a
fleet starts, each drive's identity is read where it can be, and two drives of one identity are
refused (two runs writing one drive at once would measure neither, and the second is no second
sample of the model).

  a block device of this machine   its WWID, else model + serial (sysfs, nvme-cli, smartctl)
  a block device of an ssh host    the same, read there with lsblk (engines/hosts.py)
  a file of this machine           its filesystem device and inode (a symlink or hard link is caught)
  an NBD export                     its URI (only the server knows which exports are one)
  a file of an ssh host            the same, read there, compared with that host's other files only
  a simulated drive                its preset, parameters and seed
  a fio-server-only host           nothing can be read: named in the fleet's notes, not refused

A WWID or a serial is the drive's own, so two hosts (or two paths of one multipath device)
reaching one drive are caught across hosts."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from iolab.api.fleetfile import Fleet, FleetDrive, sim_key
from iolab.core.errors import IolabError
from iolab.targets import Target, parse_target


def _block_key(wwid: str | None, model: str | None, serial: str | None) -> str | None:
    if wwid:
        return f"wwid {wwid}"
    if serial:
        return f"model {model or '?'} serial {serial}"
    return None


def target_identity(tgt: Target) -> str | None:
    """What a target of this machine is, said so that two names of one drive give one answer
    (None: nothing can be read). Also `iolab run -t A -t B`'s check (api/scaleout.py).
    IolabError: a device node the kernel does not know."""
    from iolab.targets.facts import device_facts

    if tgt.kind == "sim":  # one preset, parameters and seed: one simulated drive (fleetfile checks it too)
        return f"simulated {sim_key(tgt)}"
    if tgt.kind == "nbd":  # only the server knows its exports: one URI is one export
        return f"NBD export {tgt.path}"
    if tgt.kind not in ("block", "file"):
        return None
    try:
        st = os.stat(tgt.path)
    except FileNotFoundError:  # a file not yet made: two names of it lead to one real path
        return f"file to be made on this machine at {os.path.realpath(tgt.path)}"
    except OSError:
        return None
    if stat.S_ISBLK(st.st_mode):
        f = tgt.facts if tgt.facts.capacity_bytes else device_facts(tgt.path)  # parse_target read them
        # a device without a WWID or serial (a loop device) is still one device number here
        return _block_key(f.wwid, f.model, f.serial) or (
            f"block device {os.major(st.st_rdev)}:{os.minor(st.st_rdev)} (major:minor)"
        )
    return f"file on this machine, filesystem device {st.st_dev} inode {st.st_ino}"


def _over_ssh(d: FleetDrive) -> str | None:
    from iolab.engines.hosts import read_identity_over_ssh

    assert d.host is not None
    got = read_identity_over_ssh(d.host, parse_target(d.target).path)
    if got.get("not_read"):
        return None
    if got.get("kind") == "block":
        return _block_key(got.get("wwid"), got.get("model"), got.get("serial"))
    return f"file on {d.host.address}, device {got['dev']} inode {got['inode']}"


def identity(d: FleetDrive) -> str | None:
    """The drive's identity (None: none can be read from here)."""
    if d.host is None:
        return target_identity(parse_target(d.target))
    return _over_ssh(d) if d.host.ssh else None


def refuse_duplicates(fleet: Fleet, read: Callable[[FleetDrive], str | None] = identity) -> list[str]:
    """IolabError when two drives of the fleet are one drive; else the drives whose identity could
    not be read (for the notes)."""
    seen: dict[str, str] = {}
    unread = []
    for d in fleet.drives:
        key = read(d)
        if key is None:
            unread.append(d.name)
            continue
        if key in seen:
            raise IolabError(
                f"fleet file {fleet.path}: drives {seen[key]!r} and {d.name!r} are one drive ({key}); a drive is "
                "tested once per fleet (two runs writing it at once would measure neither). Nothing was run."
            )
        seen[key] = d.name
    return unread
