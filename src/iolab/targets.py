"""Targets: what is tested. Parsing target specs, device facts, safety checks, purge methods.

Target specs:
  /dev/XXX                           a block device (whole disk, partition, loop, zram, ...)
  file:PATH?size=8GiB                a regular file, created and sized when absent
  nbd://HOST[:PORT][/EXPORT]         an NBD export over TCP, reached through fio's nbd engine
  nbd+unix:///EXPORT?socket=PATH     an NBD export over a Unix socket
  sim:PRESET?param=value             the built-in simulated drive

Public functions (the runner, the engines and the CLI call these):
  parse_target(spec)                  -> Target
  device_facts(path)                  -> DeviceFacts     (read-only; safe on any device)
  check_safe_to_write(target, allow)  -> overridden checks, or RefusedError
  prepare_file(target)                -> what was done   (create/extend a file target, marked as iolab's)
  purge(target, method[, progress])   -> PurgeOutcome    (method: one of PURGE_METHODS)
  set_write_cache(target, enabled)    -> what was done, for the manifest

Safety checks on a block device, each named in the refusal: mounted (the device or a partition,
or active swap), partitions, signature (blkid -p, else wipefs -n), holders (dm/md), open (by
another process, from /proc/*/fd), system disk (/, /boot, /boot/efi, /usr, /var or swap live on
it, through partitions and dm/md layers). Drive erases (NVMe format/sanitize, ATA secure
erase, SCSI format/sanitize) are never aimed at a partition, nor at an NVMe namespace whose
controller would erase its other namespaces too; 'auto' then falls back to blkdiscard.

Files iolab creates are marked with the extended attribute `user.iolab` (works on ext4, xfs,
btrfs and tmpfs). On a filesystem without user xattrs (vfat, some NFS) the mark is a sidecar
file `PATH.iolab` holding the marked file's inode number, so a file later replaced under the
same name is not mistaken for ours. A non-empty file without either mark is refused as a
write target: it may be someone's data.

Every external tool (nvme, hdparm, smartctl, sg3-utils, blkid, blkdiscard, ...) is run through
`run_command`, so unit tests substitute a fake and check the exact command lines.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import struct
import subprocess
import time
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal, Sequence

from .errors import IolabError, RefusedError
from .units import human_bytes, parse_size

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
    interface: str | None = None  # nvme, sata, sas, scsi, usb, virtio, loop, nbd, zram, dm, md, mmc, file, sim
    write_cache: str | None = None  # 'enabled', 'disabled', or None if unknown
    sources: tuple[str, ...] = ()  # which tools the facts came from (sysfs, nvme id-ctrl, ...)
    wwid: str | None = None  # world-wide id from sysfs (stable across reboots and hosts)
    backing_device: str | None = None  # file targets: the block device under the filesystem


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
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.path.strip("/"))[-40:] or self.kind


@dataclass(frozen=True)
class PurgeOutcome:
    # The method actually used: 'nvme-format', 'nvme-sanitize', 'ata-secure-erase', 'sg-format',
    # 'sg-sanitize', 'blkdiscard', 'file', 'none', 'sim' ('auto' is resolved to one of these).
    method: str
    ok: bool  # False: the target was NOT returned to FOB; detail says why and what to do
    detail: str  # what was run and what it said (or why it could not be done)
    seconds: float = 0.0


# Module-level so unit tests can point them at a fake tree.
SYSFS = Path("/sys")
PROC = Path("/proc")

_FORMS = (
    "Accepted forms: /dev/NAME (a block device), file:PATH?size=8GiB, nbd://HOST[:PORT][/EXPORT]"
    "[?size=SIZE], nbd+unix:///EXPORT?socket=PATH[&size=SIZE], sim:PRESET[?param=value&...]."
)


# ---------------------------------------------------------------------------------------------
# External commands
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int  # 127: tool not installed, 124: timed out
    stdout: bytes  # bytes because some logs (NVMe sanitize log) are read in binary
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def text(self) -> str:
        return self.stdout.decode(errors="replace")

    @property
    def missing(self) -> bool:
        return self.returncode == 127

    def summary(self, max_chars: int = 400) -> str:
        """'$ cmd -> exit N: output' for PurgeOutcome.detail and error messages."""
        said = " ".join((self.text.strip() + " " + self.stderr.strip()).split())
        if len(said) > max_chars:
            said = said[: max_chars - 3] + "..."
        return f"$ {' '.join(self.argv)} -> exit {self.returncode}" + (f": {said}" if said else "")


def run_command(argv: Sequence[str], timeout: float | None = 60.0) -> CommandResult:
    """Run one external tool; never raises for a missing tool, a failure or a time-out."""
    argv = tuple(argv)
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return CommandResult(argv, 127, b"", f"{argv[0]}: not installed")
    except subprocess.TimeoutExpired:
        return CommandResult(argv, 124, b"", f"timed out after {timeout:g} s")
    return CommandResult(argv, proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"))


# Long-running destructive commands (format, secure erase) must not be cut short by a timeout
# tuned for inspection; 24 h bounds a hung tool without ever interrupting a real erase.
_LONG = 24 * 3600.0


# ---------------------------------------------------------------------------------------------
# Spec parsing
# ---------------------------------------------------------------------------------------------


def parse_target(spec: str) -> Target:
    """Read a target spec (see the module docstring). Bad specs raise IolabError."""
    text = spec.strip()
    if text.startswith("file:"):
        return _parse_file(spec, text[len("file:"):])
    if text.startswith("sim:"):
        return _parse_sim(spec, text[len("sim:"):])
    if text.startswith(("nbd://", "nbd+unix://")):
        return _parse_nbd(spec, text)
    if text.startswith("/dev/"):
        return _parse_block(spec, text)
    hint = ""
    if text.startswith(("nbds://", "nbds+unix://")):
        hint = " NBD over TLS is not supported."
    elif text.startswith("/") or text.startswith("."):
        hint = f" For a regular file write file:{text}."
    raise IolabError(f"target {spec!r}: not a target spec iolab understands.{hint} {_FORMS}")


def _split_query(spec: str, text: str, allowed: set[str] | None) -> tuple[str, tuple[tuple[str, str], ...]]:
    base, sep, query = text.partition("?")
    if not sep:
        return base, ()
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise IolabError(
            f"target {spec!r}: cannot read the options after '?' ({query!r}); write them as key=value "
            f"joined by '&'. {_FORMS}"
        ) from None
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise IolabError(f"target {spec!r}: option {key!r} is given twice; give it once.")
        seen.add(key)
        if allowed is not None and key not in allowed:
            raise IolabError(
                f"target {spec!r}: unknown option {key!r}; this kind of target accepts "
                f"{', '.join(sorted(allowed)) or 'no options'}. {_FORMS}"
            )
    return base, tuple(pairs)


def _parse_block(spec: str, text: str) -> Target:
    if "?" in text:
        raise IolabError(f"target {spec!r}: a block device takes no options (nothing after '?'). {_FORMS}")
    try:
        st = os.stat(text)
    except FileNotFoundError:
        raise IolabError(f"target {spec!r}: no such device {text}. List block devices with `lsblk`.") from None
    except OSError as e:
        raise IolabError(f"target {spec!r}: cannot stat {text}: {e.strerror}.") from None
    if not stat.S_ISBLK(st.st_mode):
        hint = ""
        if re.fullmatch(r"/dev/nvme\d+", text):
            hint = f" {text} is an NVMe controller; test one of its namespaces such as {text}n1."
        raise IolabError(f"target {spec!r}: {text} is not a block device.{hint} {_FORMS}")
    path = os.path.realpath(text)
    facts = device_facts(path)
    if not facts.capacity_bytes:
        raise IolabError(
            f"target {spec!r}: {path} reports a size of 0 bytes (an unattached loop device, an "
            "unconfigured zram or an empty drive bay?). Attach or configure it first."
        )
    return Target(kind="block", spec=spec, path=path, capacity=facts.capacity_bytes, facts=facts)


def _parse_file(spec: str, text: str) -> Target:
    raw, options = _split_query(spec, text, {"size"})
    if not raw:
        raise IolabError(f"target {spec!r}: file: needs a path, e.g. file:/scratch/iolab.img?size=8GiB.")
    path = os.path.abspath(os.path.expanduser(raw))
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise IolabError(f"target {spec!r}: directory {parent} does not exist; create it or pick another path.")
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = _file_type(st.st_mode)
        hint = f" To test the device itself write {path} as the target." if stat.S_ISBLK(st.st_mode) else ""
        raise IolabError(f"target {spec!r}: {path} is {what}, not a regular file.{hint}")
    size = dict(options).get("size")
    if size is not None:
        capacity = parse_size(size, what=f"target {spec!r}: size")
    elif st is not None and st.st_size > 0:
        capacity = st.st_size
    else:
        state = "is empty" if st is not None else "does not exist yet"
        raise IolabError(
            f"target {spec!r}: {path} {state}, so its size must be given, e.g. file:{raw}?size=8GiB."
        )
    return Target(kind="file", spec=spec, path=path, capacity=capacity, facts=device_facts(path), options=options)


def _parse_nbd(spec: str, text: str) -> Target:
    base, options = _split_query(spec, text, {"size", "socket"})
    opts = dict(options)
    try:
        parts = urllib.parse.urlsplit(base)
        port = parts.port
    except ValueError as e:
        raise IolabError(f"target {spec!r}: cannot read the NBD address ({e}). {_FORMS}") from None
    export = parts.path.lstrip("/")
    if parts.scheme == "nbd":
        if not parts.hostname:
            raise IolabError(f"target {spec!r}: nbd:// needs a host, e.g. nbd://localhost:10809/export. {_FORMS}")
        if "socket" in opts:
            raise IolabError(f"target {spec!r}: socket= belongs to nbd+unix:///EXPORT?socket=PATH, not nbd://.")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        uri = f"nbd://{host}:{port or 10809}/{export}"
    else:
        if parts.netloc:
            raise IolabError(f"target {spec!r}: nbd+unix:// takes no host; write nbd+unix:///EXPORT?socket=PATH.")
        if not opts.get("socket"):
            raise IolabError(f"target {spec!r}: nbd+unix:// needs ?socket=PATH (the server's Unix socket).")
        uri = f"nbd+unix:///{export}?socket={opts['socket']}"
    if "size" in opts:
        capacity = parse_size(opts["size"], what=f"target {spec!r}: size")
        facts = DeviceFacts(interface="nbd")
    else:
        capacity = _nbd_size(spec, uri)
        facts = DeviceFacts(interface="nbd", capacity_bytes=capacity, sources=("nbdinfo",))
    return Target(kind="nbd", spec=spec, path=uri, capacity=capacity, facts=facts, options=options)


def _nbd_size(spec: str, uri: str) -> int:
    r = run_command(["nbdinfo", "--size", uri], timeout=30)
    if r.missing:
        raise IolabError(
            f"target {spec!r}: the export's size is needed and nbdinfo (Debian package libnbd-bin) is "
            "not installed to ask the server; install it or give the size, e.g. "
            f"{spec}{'&' if '?' in spec else '?'}size=8GiB."
        )
    if not r.ok or not r.text.strip().isdigit():
        raise IolabError(
            f"target {spec!r}: could not ask the NBD server for the export's size ({r.summary()}). "
            "Check the server is running and the address is right, or give ?size=."
        )
    return int(r.text.strip())


def _parse_sim(spec: str, text: str) -> Target:
    preset, options = _split_query(spec, text, None)
    if not preset:
        raise IolabError(f"target {spec!r}: sim: needs a preset name, e.g. sim:PRESET. {_FORMS}")
    try:
        from .engines.sim import describe_target
    except ImportError as e:
        raise IolabError(
            f"target {spec!r}: the simulated drive is not available in this build ({e}). "
            "Test a block device or a file: target instead, or rebuild iolab with `bash scripts/setup`."
        ) from None
    capacity, facts = describe_target(preset, dict(options))
    return Target(kind="sim", spec=spec, path=preset, capacity=capacity, facts=facts, options=options)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


# ---------------------------------------------------------------------------------------------
# Device facts
# ---------------------------------------------------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return None
    return text or None


def _read_int(path: Path) -> int | None:
    text = _read(path)
    return int(text) if text is not None and text.isdigit() else None


@dataclass(frozen=True)
class _BlockDev:
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


def _block_dev(path: str) -> _BlockDev:
    """Map a device node to its sysfs directory (by major:minor; by name for test trees)."""
    real = os.path.realpath(path)
    name = None
    try:
        st = os.stat(real)
        if stat.S_ISBLK(st.st_mode):
            link = SYSFS / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
            if link.exists():
                name = link.resolve().name
    except OSError:
        pass
    if name is None and (SYSFS / "class" / "block" / os.path.basename(real)).exists():
        name = os.path.basename(real)
    if name is None:
        raise IolabError(f"{path}: not a block device known to the kernel (nothing in {SYSFS}/class/block).")
    return _block_dev_named(name)


def _block_dev_named(name: str) -> _BlockDev:
    sysdir = (SYSFS / "class" / "block" / name).resolve()
    disk = sysdir.parent if (sysdir / "partition").exists() else sysdir
    return _BlockDev(name=name, node=f"/dev/{name}", sysdir=sysdir, disk=disk)


def _sysname(devnum: str) -> str | None:
    """Kernel name of the block device with this major:minor, if there is one."""
    link = SYSFS / "dev" / "block" / devnum
    return link.resolve().name if devnum and link.exists() else None


def _interface(dev: _BlockDev) -> str | None:
    """Where the disk hangs: from its name and the sysfs device path (the bus it sits on)."""
    disk = dev.disk.name
    where = str(dev.disk)
    for prefix, iface in (("loop", "loop"), ("zram", "zram"), ("nbd", "nbd"), ("nvme", "nvme"),
                          ("dm-", "dm"), ("md", "md"), ("mmcblk", "mmc"), ("vd", "virtio"), ("xvd", "xen")):
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
        return _block_facts(_block_dev(real))
    if st is None and real.startswith("/dev/") and (SYSFS / "class" / "block" / os.path.basename(real)).exists():
        return _block_facts(_block_dev(real))
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise IolabError(f"{path} is {_file_type(st.st_mode)}: neither a block device nor a regular file.")
    return _file_facts(real, st)


def _block_facts(dev: _BlockDev) -> DeviceFacts:
    device = dev.disk / "device"
    queue = dev.disk / "queue"
    size = _read_int(dev.sysdir / "size")
    rotational = _read(queue / "rotational")
    interface = _interface(dev)
    vendor = _read(device / "vendor")
    if (interface == "sata" and vendor == "ATA") or interface == "virtio":
        # 'ATA' is the SCSI-ATA translation layer's placeholder and a virtio disk's vendor is
        # the virtio transport's PCI id (0x1af4): neither names the drive's maker.
        vendor = None
    facts = DeviceFacts(
        vendor=vendor,
        model=_read(device / "model"),
        serial=_read(device / "serial") or _read(dev.disk / "serial"),
        firmware=_read(device / "firmware_rev") or _read(device / "rev"),
        capacity_bytes=size * 512 if size is not None else None,  # sysfs counts 512 B units always
        logical_sector=_read_int(queue / "logical_block_size"),
        physical_sector=_read_int(queue / "physical_block_size"),
        rotational={"1": True, "0": False}.get(rotational or ""),
        interface=interface,
        write_cache={"write back": "enabled", "write through": "disabled"}.get(_read(queue / "write_cache") or ""),
        sources=("sysfs",),
        wwid=_read(dev.disk / "wwid") or _read(device / "wwid"),
    )
    node = f"/dev/{dev.disk.name}"  # the tools identify drives, not partitions
    # Least direct first: each later tool's identity strings replace the earlier ones.
    if interface in ("nvme", "sata", "sas", "scsi", "usb"):
        r = run_command(["smartctl", "-i", "-j", node], timeout=30)
        # smartctl's exit status is a bit mask; bits 0-1 mean it could not talk to the device.
        if not r.missing and r.returncode & 0b11 == 0:
            facts = _merge(facts, parse_smartctl_info(r.text), "smartctl")
    if interface == "nvme":
        r = run_command(["nvme", "id-ctrl", node, "-o", "json"], timeout=30)
        if r.ok:
            facts = _merge(facts, parse_nvme_id_ctrl(r.text), "nvme id-ctrl")
    if interface == "sata":
        r = run_command(["hdparm", "-I", node], timeout=30)
        if r.ok:
            facts = _merge(facts, parse_hdparm_identify(r.text), "hdparm -I")
    return facts


_IDENTITY = ("vendor", "model", "serial", "firmware")


def _merge(base: DeviceFacts, extra: DeviceFacts | None, source: str) -> DeviceFacts:
    """Identity strings from a tool win (sysfs truncates ATA models to 16 characters); other
    fields only fill gaps, since sysfs is the kernel's live view."""
    if extra is None:
        return base
    changes: dict[str, object] = {}
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


def _json(text: str) -> dict | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def parse_nvme_id_ctrl(text: str) -> DeviceFacts | None:
    """`nvme id-ctrl -o json`: mn, sn, fr (space-padded ASCII in the spec)."""
    data = _json(text)
    if data is None:
        return None
    return DeviceFacts(model=_clean(data.get("mn")), serial=_clean(data.get("sn")), firmware=_clean(data.get("fr")))


def parse_smartctl_info(text: str) -> DeviceFacts | None:
    """`smartctl -i -j` (smartmontools 7.x; SCSI keys renamed scsi_* in 7.4, both read)."""
    data = _json(text)
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
    dev_stat = st if st is not None else _stat_or_none(os.path.dirname(path))
    # tmpfs, overlay and btrfs subvolumes sit on anonymous devices: then there is no bonus.
    name = _sysname(f"{os.major(dev_stat.st_dev)}:{os.minor(dev_stat.st_dev)}") if dev_stat else None
    backing = _block_dev_named(name) if name else None
    facts = DeviceFacts(interface="file", capacity_bytes=st.st_size if st else None, sources=("stat",))
    if backing is None:
        return facts
    queue = backing.disk / "queue"
    return replace(
        facts,
        logical_sector=_read_int(queue / "logical_block_size"),
        physical_sector=_read_int(queue / "physical_block_size"),
        rotational={"1": True, "0": False}.get(_read(queue / "rotational") or ""),
        backing_device=backing.node,
        sources=("stat", "sysfs"),
    )


def _stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------
# Safety checks
# ---------------------------------------------------------------------------------------------


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
    return _read(sysdir / "dev")


def _rdev_of(path: str) -> str | None:
    """major:minor of a device node, or None when it is not one (mount sources like 'tmpfs')."""
    st = _stat_or_none(path) if path.startswith("/") else None
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
    for line in (PROC / "self" / "mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if len(f) < 5 or not r:
            continue
        out.append(_Mount(f[2], _unescape(f[4]), r[0], _unescape(r[1]) if len(r) > 1 else ""))
    return out


def _swaps() -> list[tuple[str, str]]:
    """(filename, type) of active swap areas."""
    try:
        lines = (PROC / "swaps").read_text().splitlines()[1:]
    except OSError:
        return []
    return [(_unescape(p[0]), p[1]) for p in (line.split() for line in lines) if len(p) >= 2]


def _lower_chain(name: str) -> list[list[str]]:
    """Every path from a device down to the disks it lives on: through dm/md slaves and from a
    partition to its disk. ['dm-0', 'nvme0n1p3', 'nvme0n1'] for / on LVM on NVMe."""
    sysdir = (SYSFS / "class" / "block" / name).resolve()
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
    dev = _block_dev(path)
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
    r = run_command(["blkid", "-p", "-o", "export", node], timeout=30)
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
        w = run_command(["wipefs", "--no-act", "--json", node], timeout=30)
        if w.ok:
            data = _json(w.text) or {}
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
        for entry in PROC.iterdir():
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
                    comm = _read(entry / "comm") or "?"
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


def _system_use(dev: _BlockDev, mounts: list[_Mount]) -> list[str]:
    """Does the system (/, /boot, /usr, /var, swap) live on this device or on the disk it is
    part of? Writing there takes the machine down, so it is refused like a mounted device."""
    users: list[tuple[str, str]] = []  # (what, device name)
    for m in mounts:
        if m.mountpoint in _SYSTEM_MOUNTS:
            name = _sysname(m.devnum) or _sysname(_rdev_of(m.source) or "")
            if name:
                users.append((m.mountpoint, name))
    for filename, kind in _swaps():
        if kind == "partition":
            name = _sysname(_rdev_of(filename) or "")
        else:
            st = _stat_or_none(filename)
            name = _sysname(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}") if st else None
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


# --- files -----------------------------------------------------------------------------------

MARK_XATTR = "user.iolab"
_MARK_VALUE = b"created by iolab"


def _sidecar(path: str) -> str:
    return path + ".iolab"


def mark_created(path: str) -> None:
    """Mark a file as made by iolab (xattr, or a sidecar where the filesystem has no xattrs)."""
    try:
        os.setxattr(path, MARK_XATTR, _MARK_VALUE)
        return
    except OSError as e:
        if e.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            raise IolabError(f"{path}: cannot mark the file as iolab's: {e.strerror}.") from None
    Path(_sidecar(path)).write_text(f"iolab target file, inode {os.stat(path).st_ino}\n")


def created_by_iolab(path: str) -> bool:
    try:
        if os.getxattr(path, MARK_XATTR) == _MARK_VALUE:
            return True
    except OSError:
        pass
    side = _read(Path(_sidecar(path)))
    st = _stat_or_none(path)
    return bool(side and st and side == f"iolab target file, inode {st.st_ino}")


def _file_problems(path: str) -> list[_Problem]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return []  # iolab will create it
    if not stat.S_ISREG(st.st_mode):
        return [_Problem("not a regular file", f"{path} is {_file_type(st.st_mode)}")]
    if st.st_size > 0 and not created_by_iolab(path):
        return [_Problem(
            "not created by iolab",
            f"{path} holds {human_bytes(st.st_size)} and carries no iolab mark (xattr {MARK_XATTR} or "
            f"sidecar {os.path.basename(_sidecar(path))}), so it may be someone's data",
        )]
    return []


def prepare_file(target: Target) -> str:
    """Create the file target (marked as iolab's) or extend it to the target's capacity, with
    space allocated now so a full filesystem fails here and not in the middle of a test.
    Idempotent; call check_safe_to_write first. Returns what was done."""
    path, size = target.path, target.capacity
    created = False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        created = True
    except FileExistsError:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        raise IolabError(f"target {target.spec!r}: cannot create {path}: {e.strerror}.") from None
    try:
        if created:
            mark_created(path)
        before = os.fstat(fd).st_size
        _allocate(fd, path, size, target.spec)
    except BaseException:
        os.close(fd)
        if created:
            _remove_ours(path)
        raise
    os.close(fd)
    if created:
        return f"created {path} ({human_bytes(size)}, space allocated)"
    return f"extended {path} from {before} to {size} bytes" if before < size else f"{path} already {before} bytes"


def _allocate(fd: int, path: str, size: int, spec: str) -> None:
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            free = os.statvfs(path)
            raise IolabError(
                f"target {spec!r}: not enough space for {path}: it needs {human_bytes(size)}, the "
                f"filesystem has {human_bytes(free.f_bavail * free.f_frsize)} free. Give a smaller size= "
                "or another directory."
            ) from None
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise IolabError(f"target {spec!r}: cannot allocate {path}: {e.strerror}.") from None
        if os.fstat(fd).st_size < size:
            os.ftruncate(fd, size)  # a filesystem without fallocate: a sparse file at least has the size


def _remove_ours(path: str) -> None:
    for p in (path, _sidecar(path)):
        try:
            os.unlink(p)
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------
# Purge
# ---------------------------------------------------------------------------------------------

PURGE_METHODS = ("auto", "nvme-format", "nvme-sanitize", "ata-secure-erase", "sg-format", "sg-sanitize",
                 "blkdiscard", "file", "none")

# 'auto' picks the drive's own erase by interface; everything else gets a generic TRIM.
_AUTO_BY_INTERFACE = {"nvme": "nvme-format", "sata": "ata-secure-erase", "sas": "sg-format", "scsi": "sg-format"}

_SANITIZE_POLL_SECONDS = 5.0
_sleep = time.sleep  # unit tests replace it to poll without waiting

ProgressFn = Callable[[float], None]


class _NotPossible(Exception):
    """Raised before anything was written: the method cannot run on this drive (unsupported,
    frozen, tool missing). 'auto' falls back to blkdiscard; an explicit method reports it."""


def purge(target: Target, method: str, progress: ProgressFn | None = None) -> PurgeOutcome:
    """Return the target to fresh-out-of-box. Call check_safe_to_write first: this destroys data.

    `progress` (optional) gets the fraction done for methods that report it (NVMe sanitize).
    A method the drive cannot do gives ok=False and says why; a method that makes no sense for
    the target kind (or an unknown name) raises IolabError.
    """
    if method not in PURGE_METHODS:
        raise IolabError(f"purge method {method!r} is unknown; use one of {', '.join(PURGE_METHODS)}.")
    start = time.monotonic()
    outcome = _purge(target, method, progress)
    return replace(outcome, seconds=time.monotonic() - start)


def _purge(target: Target, method: str, progress: ProgressFn | None) -> PurgeOutcome:
    if method == "none":
        return PurgeOutcome("none", True, "no purge (--purge none): the run does not start from FOB "
                                          "(fresh-out-of-box); results depend on what the drive went through before.")
    if target.kind == "sim":
        raise IolabError("simulated drives are purged by the sim engine, not by iolab.targets.purge.")
    if target.kind == "nbd":
        return PurgeOutcome(method, False, f"iolab has no purge method for NBD exports ({target.path}); purge the "
                                           "storage behind the server yourself and pass --purge none.")
    if target.kind == "file":
        if method not in ("auto", "file"):
            raise IolabError(f"purge method {method!r} applies to block devices; a file target takes 'file' or 'none'.")
        return _purge_file(target)
    if method == "file":
        raise IolabError(f"purge method 'file' applies to file: targets; {target.path} is a block device.")

    iface = target.facts.interface
    if method == "auto":
        chosen = _AUTO_BY_INTERFACE.get(iface or "", "blkdiscard")
        if chosen == "blkdiscard":
            outcome = _purge_blkdiscard(target)
            return replace(outcome, detail=f"auto: {iface or 'unknown'} interface -> blkdiscard. {outcome.detail}")
        try:
            _whole_drive_only(target)
            return _BLOCK_METHODS[chosen](target, progress)
        except _NotPossible as why:
            outcome = _purge_blkdiscard(target)
            return replace(outcome, detail=f"auto: {chosen} not possible: {why} Fell back to blkdiscard (generic "
                                           f"TRIM; the declared fallback, weaker than a drive erase). {outcome.detail}")
    required = _METHOD_INTERFACES.get(method)
    if required and iface and iface not in required:
        raise IolabError(f"purge method {method!r} needs a {' or '.join(required)} drive; {target.path} is {iface}. "
                         "Use --purge auto or blkdiscard.")
    try:
        if method != "blkdiscard":
            _whole_drive_only(target)
        return _BLOCK_METHODS[method](target, progress)
    except _NotPossible as why:
        return PurgeOutcome(method, False, f"{method} not possible: {why}")


def _whole_drive_only(target: Target) -> None:
    """Drive erases act on the whole disk, so they are never aimed at a partition."""
    try:
        dev = _block_dev(target.path)
    except IolabError:
        return  # unknown to sysfs: the erase tool will fail on it and say so
    if dev.is_partition:
        raise _NotPossible(f"{target.path} is a partition of /dev/{dev.disk.name}; a drive erase would wipe the "
                           "whole disk, other partitions included.")


def _other_namespaces(target: Target) -> list[str]:
    """Namespaces of the same NVMe controller other than the target (sanitize erases them all,
    and so does format when the controller formats namespaces together)."""
    m = re.fullmatch(r"/dev/(nvme(\d+)n\d+)", target.path)
    if not m:
        return []
    blocks = SYSFS / "class" / "block"
    names = [p.name for p in blocks.iterdir()] if blocks.is_dir() else []
    return sorted(n for n in names if re.fullmatch(rf"nvme{m.group(2)}n\d+", n) and n != m.group(1))


def _purge_blkdiscard(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    # -f: blkdiscard refuses devices with signatures; check_safe_to_write already decided that.
    r = run_command(["blkdiscard", "-f", target.path], timeout=_LONG)
    if r.missing:
        return PurgeOutcome("blkdiscard", False, "blkdiscard (util-linux) is not installed.")
    if not r.ok:
        return PurgeOutcome("blkdiscard", False, f"{r.summary()} (the device may not support discard).")
    return PurgeOutcome("blkdiscard", True, f"{r.summary()}: whole device discarded ({human_bytes(target.capacity)}).")


def _nvme_id_ctrl(target: Target) -> dict | None:
    r = run_command(["nvme", "id-ctrl", target.path, "-o", "json"], timeout=30)
    if r.missing:
        raise _NotPossible("nvme-cli is not installed.")
    return _json(r.text) if r.ok else None


def _purge_nvme_format(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    ctrl = _nvme_id_ctrl(target)
    if ctrl is not None and not int(ctrl.get("oacs", 0)) & 0x2:  # OACS bit 1: Format NVM supported
        raise _NotPossible("the controller does not support Format NVM (id-ctrl OACS bit 1 is 0).")
    others = _other_namespaces(target)
    # FNA bits 0-1: format / secure erase apply to all namespaces of the controller at once.
    if others and (ctrl is None or int(ctrl.get("fna", 0)) & 0x3):
        raise _NotPossible(f"this controller formats all its namespaces together and {', '.join(others)} would be "
                           "erased too (only the target was safety-checked).")
    # --ses=1: user data erase. nvme-cli keeps the current LBA format when --lbaf is not given.
    r = run_command(["nvme", "format", target.path, "--ses=1", "--force"], timeout=_LONG)
    return PurgeOutcome("nvme-format", r.ok, r.summary())


# NVMe sanitize actions, most preferred first: (SANICAP bit, SANACT value, name).
_SANITIZE_ACTIONS = ((1, 2, "block erase"), (0, 4, "crypto erase"), (2, 3, "overwrite"))


def _purge_nvme_sanitize(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    ctrl = _nvme_id_ctrl(target)
    if ctrl is None:
        raise _NotPossible("`nvme id-ctrl` did not answer, so the supported sanitize actions are unknown.")
    others = _other_namespaces(target)
    if others:
        raise _NotPossible(f"sanitize erases every namespace of the controller, and {', '.join(others)} would be "
                           "erased too (only the target was safety-checked).")
    sanicap = int(ctrl.get("sanicap", 0))
    action = next(((act, name) for bit, act, name in _SANITIZE_ACTIONS if sanicap >> bit & 1), None)
    if action is None:
        raise _NotPossible("the controller supports no sanitize action (id-ctrl SANICAP is 0).")
    sanact, name = action
    start = run_command(["nvme", "sanitize", target.path, f"--sanact={sanact}"], timeout=120)
    lines = [start.summary()]
    if not start.ok:
        return PurgeOutcome("nvme-sanitize", False, " ".join(lines))
    # Sanitize runs in the background; the sanitize log (log page 0x81) says how far it is.
    failures, idle = 0, 0
    while True:
        log = run_command(["nvme", "sanitize-log", target.path, "-o", "binary"], timeout=60)
        state = parse_sanitize_log(log.stdout) if log.ok else None
        if state is None:
            failures += 1
            if failures >= 3:
                lines.append(f"cannot read the sanitize log: {log.summary()}")
                return PurgeOutcome("nvme-sanitize", False, " ".join(lines))
        else:
            failures = 0
            fraction, status = state
            if status == 2:
                if progress:
                    progress(fraction)
            elif status in (1, 4):
                if progress:
                    progress(1.0)
                lines.append(f"sanitize ({name}) completed" + (" without deallocation" if status == 4 else ""))
                return PurgeOutcome("nvme-sanitize", True, "; ".join(lines))
            elif status == 3:
                lines.append(f"sanitize ({name}) FAILED (sanitize log status 3); the drive may need "
                             "`nvme sanitize --sanact=1` (exit failure mode) before it accepts IO")
                return PurgeOutcome("nvme-sanitize", False, "; ".join(lines))
            else:  # 0: not started (yet); a drive that never starts it is reported, not waited on forever
                idle += 1
                if idle >= 5:
                    lines.append("the sanitize log still says 'never sanitized' after the command was accepted")
                    return PurgeOutcome("nvme-sanitize", False, "; ".join(lines))
        _sleep(_SANITIZE_POLL_SECONDS)


def parse_sanitize_log(raw: bytes) -> tuple[float, int] | None:
    """NVMe sanitize status log: SPROG (u16, progress/65536) then SSTAT (u16, bits 2:0 status:
    0 never, 1 done, 2 in progress, 3 failed, 4 done without deallocation)."""
    if len(raw) < 4:
        return None
    sprog, sstat = struct.unpack_from("<HH", raw, 0)
    return sprog / 65536, sstat & 0x7


@dataclass(frozen=True)
class AtaSecurity:
    """The 'Security:' block of `hdparm -I`."""

    supported: bool
    enabled: bool
    locked: bool
    frozen: bool
    expired: bool
    enhanced_erase: bool
    erase_minutes: int | None  # the drive's own estimate
    enhanced_minutes: int | None


def parse_ata_security(text: str) -> AtaSecurity | None:
    m = re.search(r"^Security:\s*\n((?:[ \t].*\n?)*)", text, re.M)
    if not m:
        return None
    flags: dict[str, bool] = {}
    for line in m.group(1).splitlines():
        words = line.split()
        if not words:
            continue
        negated = words[0] == "not"
        word = words[1] if negated and len(words) > 1 else words[0]
        word = word.rstrip(":")
        if word in ("supported", "enabled", "locked", "frozen", "expired") and word not in flags:
            if word == "supported" and "enhanced" in line:
                continue
            flags[word] = not negated
    erase = re.search(r"(\d+)min for SECURITY ERASE UNIT", m.group(1))
    enhanced = re.search(r"(\d+)min for ENHANCED SECURITY ERASE UNIT", m.group(1))
    return AtaSecurity(
        supported=flags.get("supported", False),
        enabled=flags.get("enabled", False),
        locked=flags.get("locked", False),
        frozen=flags.get("frozen", False),
        expired=flags.get("expired", False),
        enhanced_erase=bool(re.search(r"supported:\s*enhanced erase", m.group(1))) and not re.search(
            r"not\s+supported:\s*enhanced erase", m.group(1)),
        erase_minutes=int(erase.group(1)) if erase else None,
        enhanced_minutes=int(enhanced.group(1)) if enhanced else None,
    )


# A fixed password: it only exists between set-pass and the erase, which clears it again.
_ATA_PASSWORD = "iolab"


def _purge_ata(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    dev = target.path
    ident = run_command(["hdparm", "-I", dev], timeout=30)
    if ident.missing:
        raise _NotPossible("hdparm is not installed.")
    if not ident.ok:
        raise _NotPossible(f"`hdparm -I` failed: {ident.summary()}")
    sec = parse_ata_security(ident.text)
    if sec is None or not sec.supported:
        raise _NotPossible(f"{dev} does not support the ATA Security feature set.")
    if sec.frozen:
        raise _NotPossible(
            f"{dev}'s security state is frozen (the firmware or BIOS froze it at power-on). Remedy: suspend "
            "and resume the machine (`systemctl suspend`, then wake it) or hot-unplug and replug the drive, "
            f"then check that `hdparm -I {dev}` says 'not frozen'.")
    if sec.enabled or sec.locked:
        state = "enabled, locked" if sec.locked else "enabled"
        raise _NotPossible(f"{dev} already has a security password set (security {state}); iolab will not guess "
                           "it. Disable it with hdparm --security-disable first.")
    if sec.expired:
        raise _NotPossible(f"{dev}'s security attempt counter has expired; power-cycle the drive.")
    lines = []
    setpass = run_command(["hdparm", "--user-master", "u", "--security-set-pass", _ATA_PASSWORD, dev], timeout=60)
    lines.append(setpass.summary())
    if not setpass.ok:
        raise _NotPossible("setting the temporary password failed: " + " ".join(lines))
    verb = "--security-erase-enhanced" if sec.enhanced_erase else "--security-erase"
    erase = run_command(["hdparm", "--user-master", "u", verb, _ATA_PASSWORD, dev], timeout=_LONG)
    lines.append(erase.summary())
    if erase.ok:
        return PurgeOutcome("ata-secure-erase", True, "; ".join(lines))
    # Leave no password behind on a failed erase, or the drive locks at the next power cycle.
    undo = run_command(["hdparm", "--user-master", "u", "--security-disable", _ATA_PASSWORD, dev], timeout=60)
    lines.append(undo.summary())
    if not undo.ok:
        lines.append(f"WARNING: the user password '{_ATA_PASSWORD}' may still be set on {dev}; remove it with "
                     f"`hdparm --user-master u --security-disable {_ATA_PASSWORD} {dev}`")
    return PurgeOutcome("ata-secure-erase", False, "; ".join(lines))


def _purge_sg_format(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    # --quick: no 15 s "reconsider" pause; sg_format polls until the format is done.
    r = run_command(["sg_format", "--format", "--quick", target.path], timeout=_LONG)
    if r.missing:
        raise _NotPossible("sg_format (sg3-utils) is not installed.")
    return PurgeOutcome("sg-format", r.ok, r.summary())


# sg3-utils exit statuses meaning the drive does not support the request.
_SG_UNSUPPORTED = (5, 9)


def _purge_sg_sanitize(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    lines = []
    for action in (["--block"], ["--crypto"], ["--overwrite", "--zero"]):
        r = run_command(["sg_sanitize", "--quick", *action, target.path], timeout=_LONG)
        if r.missing:
            raise _NotPossible("sg_sanitize (sg3-utils) is not installed.")
        lines.append(r.summary())
        if r.ok:
            return PurgeOutcome("sg-sanitize", True, "; ".join(lines))
        if r.returncode not in _SG_UNSUPPORTED:
            return PurgeOutcome("sg-sanitize", False, "; ".join(lines))
    raise _NotPossible("the drive supports no SANITIZE action: " + "; ".join(lines))


_BLOCK_METHODS: dict[str, Callable[[Target, ProgressFn | None], PurgeOutcome]] = {
    "nvme-format": _purge_nvme_format,
    "nvme-sanitize": _purge_nvme_sanitize,
    "ata-secure-erase": _purge_ata,
    "sg-format": _purge_sg_format,
    "sg-sanitize": _purge_sg_sanitize,
    "blkdiscard": _purge_blkdiscard,
}

_METHOD_INTERFACES = {
    "nvme-format": ("nvme",),
    "nvme-sanitize": ("nvme",),
    "ata-secure-erase": ("sata",),
    "sg-format": ("sas", "scsi"),
    "sg-sanitize": ("sas", "scsi"),
}


def _purge_file(target: Target) -> PurgeOutcome:
    """A file's FOB: every block deallocated (like TRIM), then space allocated again as
    unwritten extents, so reads return zeros and a full filesystem cannot surprise a test."""
    path = target.path
    if not os.path.exists(path):
        return PurgeOutcome("file", True, prepare_file(target) + " (a new file is already fresh)")
    length = max(os.path.getsize(path), target.capacity)
    punch = run_command(["fallocate", "--punch-hole", "--offset", "0", "--length", str(length), path], timeout=_LONG)
    if punch.ok:
        how = f"{punch.summary()}: every block deallocated"
    else:
        # No hole punching here (or no fallocate tool): empty the file, same end state.
        os.truncate(path, 0)
        how = f"{punch.summary()}; punching holes is not possible, so the file was truncated to 0 bytes"
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            _allocate(fd, path, target.capacity, target.spec)
        finally:
            os.close(fd)
    except IolabError as e:
        return PurgeOutcome("file", False, f"{how}; re-allocating failed: {e}")
    return PurgeOutcome("file", True, f"{how}; {human_bytes(target.capacity)} allocated again (reads return zeros)")


# ---------------------------------------------------------------------------------------------
# Write cache
# ---------------------------------------------------------------------------------------------

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
    """Switch the drive's volatile write cache. Returns what was done (or why nothing was),
    for the manifest; 'not supported' is an answer, never an exception."""
    on = "enabled" if enabled else "disabled"
    if target.kind == "file":
        return "not settable on files (the filesystem and page cache decide; fio uses direct IO)"
    if target.kind == "nbd":
        return "not settable on NBD exports (the server decides)"
    if target.kind == "sim":
        return "not settable on simulated drives through iolab's write-cache switch (set by the preset)"
    iface = target.facts.interface
    dev = target.path
    if iface == "nvme":
        r = run_command(["nvme", "set-feature", dev, "-f", "6", "-v", "1" if enabled else "0"], timeout=30)
    elif iface == "sata":
        r = run_command(["hdparm", f"-W{1 if enabled else 0}", dev], timeout=30)
    elif iface in ("sas", "scsi", "usb"):
        r = run_command(["sdparm", "--set" if enabled else "--clear", "WCE", dev], timeout=30)
        if r.missing:
            # Caching mode page 0x08, byte 2 bit 2 is WCE; the mask leaves every other bit alone.
            r = run_command(["sg_wr_mode", "--page=8", f"--contents=0,0,{4 if enabled else 0}", "--mask=0,0,4", dev],
                            timeout=30)
    else:
        return _NOT_SETTABLE.get(iface or "", f"not settable on {iface or 'this kind of'} devices")
    if r.missing:
        return f"not set: {r.argv[0]} is not installed"
    if not r.ok:
        return f"could not set the write cache {on}: {r.summary()}"
    return f"write cache {on}: {r.summary()}"
