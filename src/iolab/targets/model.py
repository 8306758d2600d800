"""The plain data of targets, shared by every module of the package."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The overrides a user can pass, as the CLI spells them (refusals name the first, never the second).
ALLOW_UNSAFE = "--allow-unsafe-target"
ALLOW_SYSTEM_DISK = "--allow-system-disk"


@dataclass(frozen=True)
class DeviceFacts:
    """What the device says about itself. None means 'not reported', never guessed."""

    vendor: str | None = None
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    capacity_bytes: int | None = None
    logical_sector: int | None = None
    physical_sector: int | None = None
    rotational: bool | None = None
    interface: str | None = None  # nvme, sata, sas, scsi, usb, virtio, loop, nbd, zram, dm, md, mmc, file, sim
    write_cache: str | None = None  # 'enabled', 'disabled', or None if unknown
    sources: tuple[str, ...] = ()  # which tools the facts came from (sysfs, nvme id-ctrl, ...)
    wwid: str | None = None  # world-wide id from sysfs (stable across reboots and hosts)
    backing_device: str | None = None  # file targets: the block device under the filesystem
    zoned: str | None = None  # 'host-managed' or 'host-aware' (the kernel's zone model); None: not zoned
    # the flash's rated endurance, for TBW and DWPD: no drive reports it; the simulated presets carry one
    rated_pe_cycles: int | None = None
    warranty_years: float | None = None
    # NVMe power management when the facts were read (nvme get-feature 0x02 and 0x0c, id-ctrl's
    # power state descriptors): the current power state, its rated maximum and whether APST
    # (autonomous power state transitions) is on. None: not NVMe, or nvme-cli did not answer.
    nvme_power_state: int | None = None
    nvme_power_state_max_w: float | None = None
    nvme_apst: str | None = None  # 'enabled' or 'disabled'


@dataclass(frozen=True)
class Elsewhere:
    """Another machine a target spec is read for (a hosts run's host): the spec names what that
    machine reaches (an NBD URI's 127.0.0.1 is its own loopback), so nothing of it is asked on
    this one. `run`: run_command's signature, running a command there (None: nothing can be run
    there). `name` says where in messages; two Elsewheres of one name are one machine."""

    name: str
    run: Callable[..., Any] | None = None


@dataclass(frozen=True)
class EndpointView:
    """How another machine (a hosts run's SSH host) reaches an NBD URI's server, as it answered:
    what the URI's host name resolves to there (empty: not resolved), that machine's own
    interface addresses, and the real path there of a Unix socket (empty: none asked)."""

    addresses: tuple[str, ...] = ()
    own: frozenset[str] = frozenset()
    socket: str = ""


# A registered kind's name (kinds.py): "block", "file", "nbd", "sim" are built in.
TargetKind = str


def drive_bytes(kind: str, capacity: int, device_bytes: int | None) -> int:
    """Target.drive_capacity, from a target's kind, its tested capacity and its device's size
    (a stored run's manifest holds all three)."""
    return device_bytes if kind == "block" and device_bytes and device_bytes > capacity else capacity


def copy_text(target: Mapping[str, Any], named: bool = True) -> str:
    """What a stored run's simulated copy stands for, "a copy of sim:enterprise-sas, a 400.0 GB drive"
    ("a copy of a 400.0 GB drive" not `named`, where the drive's spec is printed beside it: a
    report header's column, whose Target row gives the preset); "" when the run tested the drive itself. The copy's own capacity (0.537 GB) is what every
    capacity line gives, so without this a quick run of a 400 GB and of a 480 GB drive both read
    "536.9 MB" beside the drives' names. A run stored before the drive's size was recorded names
    the drive alone."""
    of = target.get("copy_of")
    if not of:
        return ""
    size = int(target.get("copy_of_capacity") or 0)
    if size and not named:
        return f"a copy of a {size / 1e9:.1f} GB drive"
    return f"a copy of {of}" + (f", a {size / 1e9:.1f} GB drive" if size else "")


def recorded_drive_bytes(target: Mapping[str, Any]) -> int:
    """drive_bytes of a stored run's target (its manifest's `target` record)."""
    facts = target.get("facts") or {}
    return drive_bytes(str(target.get("kind")), int(target.get("capacity") or 0), facts.get("capacity_bytes"))


def hosts_sizes(target: Mapping[str, Any]) -> list[int | None] | None:
    """Each host's size of its target as that host reported it (a file's size, a device's lsblk
    size over ssh; None: the host did not say, as a host reached through fio's server alone
    cannot), for a stored run on other machines; None for any other run. Such a run's `capacity`
    is its ?size=, the size tested, not what any drive holds. A run whose hosts are all this
    machine's (`leg_identities`) read its targets here, as a run without hosts does."""
    ident = target.get("identity")
    if not isinstance(ident, dict) or ident.get("kind") != "hosts" or not isinstance(ident.get("hosts"), dict):
        return None
    if target.get("leg_identities"):
        return None
    return [_size(h) for h in ident["hosts"].values()]


def _size(h: object) -> int | None:
    v = (h.get("size") if h.get("kind") == "file" else h.get("capacity")) if isinstance(h, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def known_drive_bytes(target: Mapping[str, Any]) -> int | None:
    """The drive's capacity as the run knows it (recorded_drive_bytes), or None: a run on other
    hosts knows the size each host reported, one size when every host reported the same."""
    sizes = hosts_sizes(target)
    if sizes is None:
        return recorded_drive_bytes(target) if target.get("capacity") else target.get("capacity")
    return sizes[0] if sizes and None not in sizes and len(set(sizes)) == 1 else None


def hosts_capacity_text(target: Mapping[str, Any], eng: Callable[[float, str], str], why: bool = True) -> str | None:
    """A run on other hosts: its drives' capacity in words ('not known (no host said its target's
    size)', without the reason not `why`; '16.00 GB'; '16.00 GB to 32.00 GB by host'), with `eng`
    the caller's number format; None for any other run (its capacity is recorded_drive_bytes)."""
    sizes = hosts_sizes(target)
    if sizes is None:
        return None
    known = [s for s in sizes if s is not None]
    if not known or len(known) < len(sizes):
        return "not known" + (
            f" ({'no host' if not known else 'not every host'} said its target's size)" if why else ""
        )
    lo, hi = min(known), max(known)
    return eng(lo, "B") if lo == hi else f"{eng(lo, 'B')} to {eng(hi, 'B')} by host"


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    spec: str  # as the user wrote it
    path: str  # device node, file path, NBD URI or preset name
    capacity: int  # bytes addressable by tests
    facts: DeviceFacts = field(default_factory=DeviceFacts)
    options: tuple[tuple[str, str], ...] = ()  # query parameters (size=..., preset params)
    copy_of: str = ""  # a --quick run's copy of a simulated drive: the spec of the drive it copies
    copy_of_capacity: int = 0  # ... and that drive's capacity, bytes (0: not a copy)

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)

    @property
    def drive_capacity(self) -> int:
        """The whole drive's bytes, which a run's share of the drive is measured against: a block
        device's own size where its ?size= tests only its first part (the rest of the drive,
        never written, keeps its flash free, as a --capacity-limit's does), else `capacity`."""
        return drive_bytes(self.kind, self.capacity, self.facts.capacity_bytes)

    @property
    def short_name(self) -> str:
        """A name safe for directory names."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.path.strip("/"))[-40:] or self.kind


@dataclass(frozen=True)
class PurgeOutcome:
    # The method actually used: 'nvme-format', 'nvme-sanitize', 'ata-secure-erase', 'sg-format',
    # 'sg-sanitize', 'blkdiscard', 'file', 'none', 'sim' ('auto' is resolved to one of these).
    method: str
    ok: bool  # False: the target was NOT returned to FOB; detail says why and what to do
    detail: str  # what was run and what it said (or why it could not be done)
    seconds: float = 0.0


@dataclass(frozen=True)
class Problem:
    """One reason not to write to a target.

    `override` is the option that lets a user write anyway: ALLOW_UNSAFE (named in the
    refusal), ALLOW_SYSTEM_DISK (never named: a mounted filesystem or the running system is
    to be unmounted, not overridden in passing), or None (nothing overrides it: read-only).
    """

    check: str  # the check's name as users see it: 'mounted', 'partitions', ...
    evidence: str
    override: str | None = ALLOW_UNSAFE

    def __str__(self) -> str:
        return f"{self.check}: {self.evidence}"
