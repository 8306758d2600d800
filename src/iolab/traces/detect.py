"""Which trace format a file is in, from its first bytes (for `iolab trace import` without
--format).

Only unambiguous signs count: a header line, a binary magic, or a first data line whose
shape only one format has. Anything else is refused with the list of formats, never guessed.
Two headerless formats can share a shape (e.g. a DiskSim line and a 5-number whitespace
line of something else); those are the cases where --format must be given.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.safefile import check_regular
from iolab.traces import formats

_HEAD_LINES = 20


def detect_format(path: str | Path) -> str:
    """The format of trace file `path` (a registered format's name), or IolabError. Each
    format declares its own signs (registry.TraceFormat: magic, header, shape)."""
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
    for fm in formats.all_formats():
        if fm.magic is not None and fm.magic(head):
            return fm.name
    # the readers skip a byte-order mark (a CSV saved by a spreadsheet); so does the guess, which
    # read it as part of the first field and named no format
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = [ln.strip() for ln in text.splitlines()[:_HEAD_LINES] if ln.strip()]
    if not lines:
        raise IolabError(f"{p}: empty file; nothing to import.")
    first = lines[0]
    for fm in formats.all_formats():
        if fm.header is not None and fm.header(first):
            return fm.name
    hits = [fm.name for fm in formats.all_formats() if fm.shape is not None and fm.shape.match(first)]
    if len(hits) == 1:
        return hits[0]
    found = f"it matches {' and '.join(hits)}" if hits else "no known format starts like this"
    raise IolabError(
        f"{p}:1: cannot tell the trace format from the first line ({found}: {first[:120]!r}). "
        f"Give it with --format (one of {', '.join(formats.reader_names())})."
    )


__all__ = ["detect_format"]
