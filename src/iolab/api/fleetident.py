"""The same drive twice in one fleet, by what the drive is rather than how it is named: before a
fleet starts, each drive's identity is read where it can be, and two drives of one identity are
refused (two runs writing one drive at once would measure neither, and the second is no second
sample of the model).

  a block device of this machine   its WWID, else model + serial (sysfs, nvme-cli, smartctl), else
                                   its major:minor
  a block device of an ssh host    the same, read there with lsblk (engines/hosts.py), else its
                                   major:minor there
  a file of this machine           its filesystem device and inode (a symlink or hard link is caught)
  an NBD export                     the endpoints its URI reaches (host resolved, loopback one, port,
                                   name), through an ssh host as that host reaches them
  a file of an ssh host            the same, read there, compared with that host's other files only
  a simulated drive                its preset, parameters and seed
  a host of this machine           as a drive of this machine (its own fio server writes its path)
  a fio-server-only host           nothing can be read: named in the fleet's notes, not refused

A WWID or a serial is the drive's own, so two hosts (or two paths of one multipath device)
reaching one drive are caught across hosts. The identity is the one a run stores for `iolab
resume` (run/identity.py reads it; a host's, engines/hosts.py), said in one line (drive_key)."""

from __future__ import annotations

from collections.abc import Callable

from iolab.api.fleetfile import Fleet, FleetDrive, drive_target
from iolab.core.errors import IolabError
from iolab.engines.hostlist import Host
from iolab.run.identity import drive_key, identity_key


def identity(d: FleetDrive) -> str | None:
    """The drive's identity (None: none can be read from here). A host's drive is read where that
    host opens it, as `run -t A -t B --hosts-file` reads it (on_host): a host of this machine's
    address as a drive of this machine (its run reads it so: engines/hostcheck.py, ssh first), an
    ssh host's over SSH (a device without WWID or serial by its major:minor on that host, an NBD
    export by its server endpoints as that host reaches them)."""
    if d.host is None:
        return drive_key(drive_target(d.target, None))
    try:
        return on_host(d.target, d.host)
    except IolabError:  # not read: named in the fleet's notes, and its own run says what is wrong
        return None


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


def serial_named(fleet: Fleet, read: Callable[[FleetDrive], dict | None] | None = None) -> Fleet:
    """The fleet with each ssh host's block device the file does not name named by the model and
    serial it reports there (lsblk), as a drive of this machine is when the file is read
    (fleetfile.default_names): the same drive moved to another host or slot keeps its name.
    `read`: a drive's identity record (engines/hosts.read_identity_over_ssh's), None if unread."""
    from dataclasses import replace

    from iolab.api.fleetfile import default_names, named, serial_name

    read = read or _ssh_block_identity
    drives = []
    for d in fleet.drives:
        ident = read(d) if d.defaults and d.host is not None and d.host.ssh else None
        serial = serial_name(ident.get("model"), ident.get("serial")) if ident else None
        drives.append(replace(d, defaults=default_names(d.target, d.host, serial)) if serial else d)
    return replace(fleet, drives=tuple(named(drives)))


def _ssh_block_identity(d: FleetDrive) -> dict | None:
    """What an ssh host's block device says of itself there (None: not a block device, or not read)."""
    from iolab.engines.hosts import read_identity_over_ssh
    from iolab.engines.hosttargets import host_target

    assert d.host is not None
    try:
        t = host_target(d.target, d.host)
        return read_identity_over_ssh(d.host, t.path) if t.kind == "block" else None
    except IolabError:
        return None


def on_host(spec: str, h: Host) -> str | None:
    """The drive `spec` is where host h's fio opens it (its own path or export, a hosts file's
    `target`, else the spec's), read there, as its run reads it: a host of this machine's address
    here; an ssh host over SSH (a device or file as a fleet's, a device without WWID or serial by
    its major:minor there, an export by its server endpoints as that host reaches them); a host
    reached through a fio server alone not at all (None). IolabError when it cannot be read."""
    from iolab.engines.hosts import is_local_address
    from iolab.engines.hosttargets import host_target

    if not h.ssh and not is_local_address(h.address):
        return None
    t = host_target(spec, h)
    if t.kind == "sim":  # each run simulates its own copy
        return None
    if not h.ssh:
        return drive_key(t)
    if t.kind == "nbd":
        from iolab.engines.hostholds import endpoint_view
        from iolab.targets.spec import nbd_endpoints

        ends = nbd_endpoints(t.path, endpoint_view(h, t.path))
        # the host's own servers and sockets are that host's; another address is every host's
        mine = [e + (f" of {h.machine}" if e.startswith(("nbd://localhost:", "nbd+unix:")) else "") for e in ends]
        return f"NBD export {' or '.join(mine)}"
    from iolab.engines.hosts import read_identity_over_ssh, ssh_runner

    ident = read_identity_over_ssh(h, t.path)
    key = identity_key(ident, h.machine)
    if key is not None or ident.get("kind") != "block":
        return key
    r = ssh_runner(h)(["stat", "-L", "-c", "%t:%T", t.path], timeout=30)
    major, _, minor = r.text.strip().partition(":")
    if not r.ok or not major or not minor:
        return None
    return f"block device {int(major, 16)}:{int(minor, 16)} (major:minor) on {h.machine}"
