"""Targets: what is tested. Parsing target specs, device facts, safety checks, purge methods.

Target specs:
  /dev/XXX                   a block device
  file:PATH?size=8GiB        a regular file, created and sized when absent
  nbd://HOST[:PORT][/EXPORT] an NBD export, reached through fio's nbd engine
  sim:PRESET?param=value     the built-in simulated drive
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TargetKind = Literal["block", "file", "nbd", "sim"]


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
    interface: str | None = None  # nvme, sata, sas, scsi, virtio, loop, nbd, file, sim
    write_cache: str | None = None  # 'enabled', 'disabled', or None if unknown
    sources: tuple[str, ...] = ()  # which tools the facts came from (sysfs, nvme id-ctrl, ...)


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    spec: str  # as the user wrote it
    path: str  # device node, file path, NBD URI or preset name
    capacity: int  # bytes addressable by tests
    facts: DeviceFacts = field(default_factory=DeviceFacts)
    options: tuple[tuple[str, str], ...] = ()  # query parameters (size=..., preset params)

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)

    @property
    def short_name(self) -> str:
        """A name safe for directory names."""
        import re

        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.path.strip("/"))[-40:] or self.kind


@dataclass(frozen=True)
class PurgeOutcome:
    method: str  # 'nvme-format', 'nvme-sanitize', 'ata-secure-erase', 'sg-format', 'blkdiscard', 'file-recreate', 'none', 'sim'
    ok: bool
    detail: str  # what was run and what it said (or why it could not be done)
    seconds: float = 0.0
