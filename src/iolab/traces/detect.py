"""Which trace format a file is in, from its first bytes (for `iolab trace import` without
--format).

Only unambiguous signs count: a header line, a binary magic, or a first data line whose
shape only one format has. Anything else is refused with the list of formats, never guessed.
Two headerless formats can share a shape (e.g. a DiskSim line and a 5-number whitespace
line of something else); those are the cases where --format must be given.
"""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.safefile import check_regular
from iolab.traces.readers import FORMATS
from iolab.traces.vscsi import vscsi_version

BLK_MAGIC = 0x65617400  # struct blk_io_trace magic, low byte = version
_HEAD_LINES = 20

# First-line headers (lowercase, blanks removed) -> format.
_CSV_HEADERS = (
    ("timestamp,hostname,disknumber,type,offset,size,responsetime", "msr"),
    ("asu,lba,size,opcode,timestamp", "spc"),
    ("device_id,opcode,offset,length,timestamp", "alibaba"),
    ("timestamp,offset,size,iotype,volumeid", "tencent"),
    ("timestamp,response,iotype,lun,offset,size", "systor"),
    ("version,time,op,size,lbn", "cloudphysics"),
)

_NUM = r"\d+(?:\.\d+)?"
# Headerless first data lines -> format (each pattern matches one format's lines only).
_LINE_SHAPES = (
    (re.compile(r"^\s*.*-\d+\s+\[\d+\]\s+.*\d+\.\d+:\s+block_\w+:"), "tracefs"),
    (re.compile(r"^\s*\d+,\d+\s+\d+\s+\d+\s+\d+\.\d+\s+\d+\s+[A-Z]\s+\S+"), "blkparse"),
    (re.compile(r"^\d+,[^,]+,\d+,(?:Read|Write),\d+,\d+,\d+$", re.I), "msr"),
    (re.compile(r"^\d+,\d+,\d+,[rw],\d+(?:\.\d*)?(?:,.*)?$", re.I), "spc"),
    (re.compile(r"^[^,]+,[RW],\d+,\d+,\d+$"), "alibaba"),
    (re.compile(r"^\d+,\d+,\d+,[01],[^,]+$"), "tencent"),
    (re.compile(rf"^{_NUM},(?:{_NUM})?,[RW]?,\d+,\d+,\d+$"), "systor"),
    (re.compile(r"^\d+\s+\d+\s+.+\s+\d+\s+\d+\s+[WR]\s+\d+\s+\d+\s+[0-9a-f]{32}$"), "fiu"),
    (re.compile(rf"^\s*{_NUM}\s+\d+\s+\d+\s+\d+\s+[01]\s*$"), "disksim"),
    (re.compile(rf"^\d+,{_NUM},(?:0x)?[0-9a-f]{{1,2}},\d+,\d+$", re.I), "cloudphysics"),
)


def detect_format(path: str | Path) -> str:
    """The format of trace file `path` (one of readers.FORMATS), or IolabError."""
    p = Path(path)
    check_regular(p, "trace file")  # a FIFO here blocked `trace import` for ever in open()
    try:
        with open(p, "rb") as f:
            head = f.read(1 << 16)
    except OSError as e:
        raise IolabError(f"{p}: cannot read ({e.strerror}).") from None
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(p, "rb") as f:
                head = f.read(1 << 16)
        except (OSError, EOFError, zlib.error) as e:  # a cut or corrupt gzip raises the last two
            raise IolabError(f"{p}: a gzip file that cannot be read ({e}).") from None
    if len(head) >= 4 and any(struct.unpack(e + "I", head[:4])[0] & 0xFFFFFF00 == BLK_MAGIC for e in "<>"):
        return "blktrace"
    if vscsi_version(head) is not None:
        return "vscsi"
    lines = [ln.strip() for ln in head.decode("utf-8", "replace").splitlines()[:_HEAD_LINES] if ln.strip()]
    if not lines:
        raise IolabError(f"{p}: empty file; nothing to import.")
    first = lines[0]
    if first in ("fio version 2 iolog", "fio version 3 iolog"):
        return "fio"
    if first.startswith("# tracer:"):
        return "tracefs"
    if first.split()[:1] == ["TIME(s)"] and "LAT(ms)" in first:
        return "biosnoop"
    compact = re.sub(r"\s+", "", first).lower()
    for header, fmt in _CSV_HEADERS:
        if compact.startswith(header):
            return fmt
    hits = [fmt for rx, fmt in _LINE_SHAPES if rx.match(first)]
    if len(hits) == 1:
        return hits[0]
    found = f"it matches {' and '.join(hits)}" if hits else "no known format starts like this"
    raise IolabError(
        f"{p}:1: cannot tell the trace format from the first line ({found}: {first[:120]!r}). "
        f"Give it with --format (one of {', '.join(FORMATS)})."
    )


__all__ = ["detect_format"]
