"""The part of a block device a purge may touch: a device given with a ?size= below its own
size is tested in its first part, so its purge discards [0, size) alone (rounded down to the
device's discard granularity) and no drive erase, which erases the whole drive, is chosen or taken."""

from __future__ import annotations

from iolab.core.errors import IolabError
from iolab.targets.facts import block_dev
from iolab.targets.model import Target

# Methods that erase the whole drive whatever range is asked: never for a part of a device.
WHOLE_DRIVE_METHODS = ("nvme-format", "nvme-sanitize", "ata-secure-erase", "sg-format", "sg-sanitize")


PART_NOTE = "?size= is less than the device, and a drive erase would erase all of it"


def is_partial(target: Target) -> bool:
    """A block device tested in its first part (?size= below the device's size, or a size the
    device did not say): its purge must not touch a byte past ?size=."""
    holds = target.facts.capacity_bytes
    return target.kind == "block" and target.option("size") is not None and (holds is None or target.capacity < holds)


def check_partial_purge(target: Target, method: str) -> None:
    """Refuse, before anything runs, a purge that would erase beyond a device's ?size=: a drive
    erase, or a discard that leaves nothing once rounded to the device's discard granularity."""
    if not is_partial(target):
        return
    if method in WHOLE_DRIVE_METHODS:
        raise IolabError(
            f"purge method {method!r}: {target.spec} tests only the first {target.capacity:,} bytes of "
            f"{target.path} (?size=), but {method} erases the whole drive, every byte beyond ?size= "
            "included, which iolab was not asked to touch. Use --purge auto or blkdiscard (they discard "
            "the tested part alone, no byte past ?size=), or --purge none, or leave ?size= out to test and "
            "erase the whole device. Nothing was run or written."
        )
    if method in ("auto", "blkdiscard"):
        discard_range(target)


def discard_range(target: Target) -> tuple[int, str]:
    """The length from offset 0 that blkdiscard gets for a partial device: ?size= rounded DOWN to
    the discard granularity (and logical sector: blkdiscard refuses an unaligned length), so no
    discard reaches past it; with a note when rounding left bytes out. Refused when nothing is left."""
    step = max(_queue_int(target, "discard_granularity"), _queue_int(target, "logical_block_size"), 512)
    length = target.capacity // step * step
    if length == 0:
        raise IolabError(
            f"target {target.spec}: ?size= ({target.capacity:,} bytes) is less than {target.path}'s discard "
            f"granularity ({step:,} bytes), so no discard fits inside it and a purge would have to erase "
            "beyond ?size=. Give a larger ?size= or --purge none. Nothing was run or written."
        )
    left = target.capacity - length
    note = (
        f"; ?size= rounded down to the discard granularity ({step:,} bytes): the last {left:,} bytes are not discarded"
    )
    return length, note if left else ""


def _queue_int(target: Target, name: str) -> int:
    """A number from the device's sysfs queue directory (the disk's, for a partition); 0 if unread."""
    try:
        text = (block_dev(target.path).disk / "queue" / name).read_text().strip()
    except (IolabError, OSError):
        return 0
    return int(text) if text.isdigit() else 0
