"""Purge: return a target to fresh-out-of-box (FOB).

Drive erases (NVMe format/sanitize, ATA secure erase, SCSI format/sanitize) are never aimed at
a partition, nor at an NVMe namespace whose controller would erase its other namespaces too;
'auto' then falls back to blkdiscard. A device given with a ?size= below its own size is purged
by discarding [0, size) alone: a drive erase would erase beyond it, so none is chosen or taken.
A file is purged by punching holes in it.
"""

from __future__ import annotations

import os
import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from iolab.core.errors import IolabError
from iolab.core.units import human_bytes
from iolab.targets import host
from iolab.targets.facts import block_dev
from iolab.targets.files import allocate, prepare_file
from iolab.targets.kinds import ProgressFn, kind_of
from iolab.targets.model import PurgeOutcome, Target
from iolab.targets.purgerange import PART_NOTE, check_partial_purge, discard_range, is_partial

PURGE_METHODS = (
    "auto",
    "nvme-format",
    "nvme-sanitize",
    "ata-secure-erase",
    "sg-format",
    "sg-sanitize",
    "blkdiscard",
    "file",
    "none",
)

# 'auto' picks the drive's own erase by interface; everything else gets a generic TRIM.
_AUTO_BY_INTERFACE = {"nvme": "nvme-format", "sata": "ata-secure-erase", "sas": "sg-format", "scsi": "sg-format"}

_SANITIZE_POLL_SECONDS = 5.0


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


def auto_method(target: Target) -> str:
    """What `--purge auto` will do on this target, said before anything runs (`iolab plan`): the
    method `purge` picks from the target's kind and interface, and its declared fallback."""
    if target.kind == "sim":
        if target.facts.rotational:  # a simulated disk keeps no data: its purge has nothing to do
            return "sim-purge (a simulated HDD keeps no data: nothing to erase)"
        return "sim-purge (the simulator's secure erase: every flash block erased)"
    if target.kind == "file":
        return "file (every block of the file deallocated, then allocated again as unwritten)"
    if target.kind == "nbd":
        return "none possible: iolab has no purge for NBD exports (purge the storage behind it, then --purge none)"
    iface = target.facts.interface
    if is_partial(target):
        length, note = discard_range(target)
        return f"blkdiscard of bytes 0 to {length:,} only ({iface or 'unknown'} interface; {PART_NOTE}{note})"
    chosen = _AUTO_BY_INTERFACE.get(iface or "", "blkdiscard")
    fallback = "" if chosen == "blkdiscard" else "; blkdiscard if the drive cannot"
    return f"{chosen} ({iface or 'unknown'} interface{fallback})"


def _purge(target: Target, method: str, progress: ProgressFn | None) -> PurgeOutcome:
    if method == "none":
        return PurgeOutcome(
            "none",
            True,
            "no purge (--purge none): the run does not start from FOB "
            "(fresh-out-of-box); results depend on what the drive went through before.",
        )
    return kind_of(target).purge(target, method, progress)


def purge_sim(target: Target, method: str, progress: ProgressFn | None = None) -> PurgeOutcome:
    raise IolabError("simulated drives are purged by the sim engine, not by iolab.targets.purge.")


def impossible_purge(target: Target, method: str) -> PurgeOutcome | None:
    """The outcome of a purge known to fail before anything runs (None: it may succeed): what
    `purge` returns for it, so `iolab plan` records the same non-compliance the run will."""
    return purge_nbd(target, method) if method != "none" and target.kind == "nbd" else None


def purge_failed(method: str) -> str:
    """The manifest's non-compliance entry for a purge by `method` that failed."""
    return f"purge failed ({method}): not from FOB"


def purge_nbd(target: Target, method: str, progress: ProgressFn | None = None) -> PurgeOutcome:
    return PurgeOutcome(
        method,
        False,
        f"iolab has no purge method for NBD exports ({target.path}); purge the "
        "storage behind the server yourself and pass --purge none.",
    )


def purge_file(target: Target, method: str, progress: ProgressFn | None = None) -> PurgeOutcome:
    if method not in ("auto", "file"):
        raise IolabError(f"purge method {method!r} applies to block devices; a file target takes 'file' or 'none'.")
    return _purge_file(target)


def purge_block(target: Target, method: str, progress: ProgressFn | None = None) -> PurgeOutcome:
    if method == "file":
        raise IolabError(f"purge method 'file' applies to file: targets; {target.path} is a block device.")
    iface = target.facts.interface
    check_partial_purge(target, method)  # admission refused these already; here against any other caller
    if method == "auto" and is_partial(target):
        outcome = _purge_blkdiscard(target)
        return replace(outcome, detail=f"auto: {PART_NOTE} -> blkdiscard of [0, ?size=). {outcome.detail}")
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
            return replace(
                outcome,
                detail=f"auto: {chosen} not possible: {why} Fell back to blkdiscard (generic "
                f"TRIM; the declared fallback, weaker than a drive erase). {outcome.detail}",
            )
    required = _METHOD_INTERFACES.get(method)
    if required and iface and iface not in required:
        raise IolabError(
            f"purge method {method!r} needs a {' or '.join(required)} drive; {target.path} is {iface}. "
            "Use --purge auto or blkdiscard."
        )
    try:
        if method != "blkdiscard":
            _whole_drive_only(target)
        return _BLOCK_METHODS[method](target, progress)
    except _NotPossible as why:
        return PurgeOutcome(method, False, f"{method} not possible: {why}")


def _whole_drive_only(target: Target) -> None:
    """Drive erases act on the whole disk, so they are never aimed at a partition."""
    try:
        dev = block_dev(target.path)
    except IolabError:
        return  # unknown to sysfs: the erase tool will fail on it and say so
    if dev.is_partition:
        raise _NotPossible(
            f"{target.path} is a partition of /dev/{dev.disk.name}; a drive erase would wipe the "
            "whole disk, other partitions included."
        )


def _other_namespaces(target: Target) -> list[str]:
    """Namespaces of the same NVMe controller other than the target (sanitize erases them all,
    and so does format when the controller formats namespaces together)."""
    m = re.fullmatch(r"/dev/(nvme(\d+)n\d+)", target.path)
    if not m:
        return []
    blocks = host.SYSFS / "class" / "block"
    names = [p.name for p in blocks.iterdir()] if blocks.is_dir() else []
    return sorted(n for n in names if re.fullmatch(rf"nvme{m.group(2)}n\d+", n) and n != m.group(1))


def _purge_blkdiscard(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    # -f: blkdiscard refuses devices with signatures; check_safe_to_write already decided that.
    # A partial device gets an explicit range: blkdiscard alone discards the whole device.
    length, note = discard_range(target) if is_partial(target) else (None, "")
    span = [] if length is None else ["-o", "0", "-l", str(length)]
    r = host.run_command(["blkdiscard", "-f", *span, target.path], timeout=host.LONG)
    if r.missing:
        return PurgeOutcome("blkdiscard", False, "blkdiscard (util-linux) is not installed.")
    if not r.ok:
        return PurgeOutcome("blkdiscard", False, f"{r.summary()} (the device may not support discard).")
    if length is None:
        return PurgeOutcome(
            "blkdiscard", True, f"{r.summary()}: whole device discarded ({human_bytes(target.capacity)})."
        )
    return PurgeOutcome(
        "blkdiscard",
        True,
        f"{r.summary()}: discarded offset 0, length {length:,} bytes ({human_bytes(length)}) of "
        f"{target.path}; nothing past byte {length:,} touched{note}.",
    )


def _nvme_id_ctrl(target: Target) -> dict | None:
    r = host.run_command(["nvme", "id-ctrl", target.path, "-o", "json"], timeout=30)
    if r.missing:
        raise _NotPossible("nvme-cli is not installed.")
    return host.json_object(r.text) if r.ok else None


def _purge_nvme_format(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    ctrl = _nvme_id_ctrl(target)
    if ctrl is not None and not int(ctrl.get("oacs", 0)) & 0x2:  # OACS bit 1: Format NVM supported
        raise _NotPossible("the controller does not support Format NVM (id-ctrl OACS bit 1 is 0).")
    others = _other_namespaces(target)
    # FNA bits 0-1: format / secure erase apply to all namespaces of the controller at once.
    if others and (ctrl is None or int(ctrl.get("fna", 0)) & 0x3):
        raise _NotPossible(
            f"this controller formats all its namespaces together and {', '.join(others)} would be "
            "erased too (only the target was safety-checked)."
        )
    # --ses=1: user data erase. nvme-cli keeps the current LBA format when --lbaf is not given.
    r = host.run_command(["nvme", "format", target.path, "--ses=1", "--force"], timeout=host.LONG)
    return PurgeOutcome("nvme-format", r.ok, r.summary())


# NVMe sanitize actions, most preferred first: (SANICAP bit, SANACT value, name).
_SANITIZE_ACTIONS = ((1, 2, "block erase"), (0, 4, "crypto erase"), (2, 3, "overwrite"))


def _purge_nvme_sanitize(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    ctrl = _nvme_id_ctrl(target)
    if ctrl is None:
        raise _NotPossible("`nvme id-ctrl` did not answer, so the supported sanitize actions are unknown.")
    others = _other_namespaces(target)
    if others:
        raise _NotPossible(
            f"sanitize erases every namespace of the controller, and {', '.join(others)} would be "
            "erased too (only the target was safety-checked)."
        )
    sanicap = int(ctrl.get("sanicap", 0))
    action = next(((act, name) for bit, act, name in _SANITIZE_ACTIONS if sanicap >> bit & 1), None)
    if action is None:
        raise _NotPossible("the controller supports no sanitize action (id-ctrl SANICAP is 0).")
    sanact, name = action
    start = host.run_command(["nvme", "sanitize", target.path, f"--sanact={sanact}"], timeout=120)
    lines = [start.summary()]
    if not start.ok:
        return PurgeOutcome("nvme-sanitize", False, " ".join(lines))
    # Sanitize runs in the background; the sanitize log (log page 0x81) says how far it is.
    failures, idle = 0, 0
    while True:
        log = host.run_command(["nvme", "sanitize-log", target.path, "-o", "binary"], timeout=60)
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
                lines.append(
                    f"sanitize ({name}) FAILED (sanitize log status 3); the drive may need "
                    "`nvme sanitize --sanact=1` (exit failure mode) before it accepts IO"
                )
                return PurgeOutcome("nvme-sanitize", False, "; ".join(lines))
            else:  # 0: not started (yet); a drive that never starts it is reported, not waited on forever
                idle += 1
                if idle >= 5:
                    lines.append("the sanitize log still says 'never sanitized' after the command was accepted")
                    return PurgeOutcome("nvme-sanitize", False, "; ".join(lines))
        host.sleep(_SANITIZE_POLL_SECONDS)


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
        enhanced_erase=bool(re.search(r"supported:\s*enhanced erase", m.group(1)))
        and not re.search(r"not\s+supported:\s*enhanced erase", m.group(1)),
        erase_minutes=int(erase.group(1)) if erase else None,
        enhanced_minutes=int(enhanced.group(1)) if enhanced else None,
    )


# A fixed password: it only exists between set-pass and the erase, which clears it again.
_ATA_PASSWORD = "iolab"


def _purge_ata(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    dev = target.path
    ident = host.run_command(["hdparm", "-I", dev], timeout=30)
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
            f"then check that `hdparm -I {dev}` says 'not frozen'."
        )
    if sec.enabled or sec.locked:
        state = "enabled, locked" if sec.locked else "enabled"
        raise _NotPossible(
            f"{dev} already has a security password set (security {state}); iolab will not guess "
            "it. Disable it with hdparm --security-disable first."
        )
    if sec.expired:
        raise _NotPossible(f"{dev}'s security attempt counter has expired; power-cycle the drive.")
    lines = []
    setpass = host.run_command(["hdparm", "--user-master", "u", "--security-set-pass", _ATA_PASSWORD, dev], timeout=60)
    lines.append(setpass.summary())
    if not setpass.ok:
        raise _NotPossible("setting the temporary password failed: " + " ".join(lines))
    verb = "--security-erase-enhanced" if sec.enhanced_erase else "--security-erase"
    erase = host.run_command(["hdparm", "--user-master", "u", verb, _ATA_PASSWORD, dev], timeout=host.LONG)
    lines.append(erase.summary())
    if erase.ok:
        return PurgeOutcome("ata-secure-erase", True, "; ".join(lines))
    # Leave no password behind on a failed erase, or the drive locks at the next power cycle.
    undo = host.run_command(["hdparm", "--user-master", "u", "--security-disable", _ATA_PASSWORD, dev], timeout=60)
    lines.append(undo.summary())
    if not undo.ok:
        lines.append(
            f"WARNING: the user password '{_ATA_PASSWORD}' may still be set on {dev}; remove it with "
            f"`hdparm --user-master u --security-disable {_ATA_PASSWORD} {dev}`"
        )
    return PurgeOutcome("ata-secure-erase", False, "; ".join(lines))


def _purge_sg_format(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    # --quick: no 15 s "reconsider" pause; sg_format polls until the format is done.
    r = host.run_command(["sg_format", "--format", "--quick", target.path], timeout=host.LONG)
    if r.missing:
        raise _NotPossible("sg_format (sg3-utils) is not installed.")
    # sg_format exits 0 once FORMAT UNIT is accepted, even when the drive then reports the
    # format failed (QEMU's scsi-hd: TEST UNIT READY -> Hardware Error, Internal target failure)
    failed = _SENSE_FAILED.search(r.text + "\n" + r.stderr)
    if r.ok and failed:
        return PurgeOutcome(
            "sg-format",
            False,
            f"{r.summary()}. The drive reported '{failed.group(1).strip()}' "
            "after FORMAT UNIT, so the format is not known to be done.",
        )
    return PurgeOutcome("sg-format", r.ok, r.summary())


# A sense key in sg3-utils' output that is not a format's normal course (in progress, parameters changed).
_SENSE_FAILED = re.compile(r"Sense key:\s*(?!No Sense|Recovered Error|Not Ready|Unit Attention)([^\n;]+)")


# sg3-utils exit statuses meaning the drive does not support the request.
_SG_UNSUPPORTED = (5, 9)


def _purge_sg_sanitize(target: Target, progress: ProgressFn | None = None) -> PurgeOutcome:
    lines = []
    for action in (["--block"], ["--crypto"], ["--overwrite", "--zero"]):
        r = host.run_command(["sg_sanitize", "--quick", *action, target.path], timeout=host.LONG)
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
    punch = host.run_command(
        ["fallocate", "--punch-hole", "--offset", "0", "--length", str(length), path], timeout=host.LONG
    )
    if punch.ok:
        how = f"{punch.summary()}: every block deallocated"
    else:
        # No hole punching here (or no fallocate tool): empty the file, same end state.
        os.truncate(path, 0)
        how = f"{punch.summary()}; punching holes is not possible, so the file was truncated to 0 bytes"
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            allocate(fd, path, target.capacity, target.spec)
        finally:
            os.close(fd)
    except IolabError as e:
        return PurgeOutcome("file", False, f"{how}; re-allocating failed: {e}")
    return PurgeOutcome("file", True, f"{how}; {human_bytes(target.capacity)} allocated again (reads return zeros)")
