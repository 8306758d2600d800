"""Export a normalised IO table in a public trace format (the inverse of readers.py).

    export_trace(table, fmt, out) -> Path

Uses: hand a trace to a tool that reads one of these formats (fio replays an iolog v3 with
read_iolog=...), and round-trip tests: a table with known streams written in every format
must import back to the same streams.

Each writer is declared with its format (traces/formats/; `Writer` in registry.py); a format
may have none, one or several (fio: fio2, fio3). What a format cannot carry is lost on
export, and said here: SPC, Alibaba, Tencent, FIU and fio iologs have no response times;
Tencent keeps whole seconds; Alibaba and fio v3 keep µs; blkparse, tracefs and blktrace name
devices by major,minor (`devno`, default "8,16") and need response times to write
completions; so does biosnoop (LAT written to 1 µs; bcc itself prints 10 µs steps). DiskSim
has neither response times nor process names. fio v2 writes `wait` lines for the gaps
between IOs. Formats that count in 512 B sectors (Writer.sectors) get each IO rounded outward
to whole sectors, so that it still covers its bytes; the notes say how many IOs were changed.
Zero-length reads and writes (no data) are left out, and counted in the notes. An IO longer than a binary format's length field holds
(blktrace, vSCSI: 32-bit) is refused (Writer.max_size); vSCSI without response times is
written as version 1 records, which have no rt.
"""

from __future__ import annotations

from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.units import counted
from iolab.targets.writepolicy import check_file, output_file
from iolab.traces import formats, timeunit
from iolab.traces.registry import ExportJob
from iolab.traces.table import TraceTable, connect, sql_str

# The reads and writes of a table, numbered in table order (`n`): what every writer reads. A
# zero-length one moves no data (a table written before blkparse's empty pre-flush `FWS 0 + 0`
# was imported as a flush holds it as a write of 0 bytes): the sector formats wrote it as a 512 B write that never happened, which `iolab trace analyze`
# (which leaves zero-length IOs out) then counted as a stream; left out, and said.
_SRC = (
    "(SELECT *, row_number() OVER () AS n FROM read_parquet({path}) WHERE op IN ('read', 'write') AND size_bytes > 0)"
)
_EMPTY = "SELECT count(*) FROM read_parquet({path}) WHERE op IN ('read', 'write') AND size_bytes = 0"
# What no writer writes (flushes, trims): said by kind, so a flush imported from blkparse is not
# lost from an export without a word
_KINDS = {"flush": ("flush", "flushes"), "trim": ("trim", "trims")}
_OTHER = "SELECT op, count(*) FROM read_parquet({path}) WHERE op NOT IN ('read', 'write') GROUP BY op ORDER BY op"


# Each IO rounded outward to whole 512 B sectors (it covers at least the bytes it did), for the
# formats that write offsets, or offsets and sizes, in sectors: truncating them turned a 1 B read
# into a 0-length one.
_OUTWARD = {
    "offset": """(SELECT * REPLACE (offset_bytes // 512 * 512 AS offset_bytes,
        size_bytes + offset_bytes % 512 AS size_bytes) FROM {src})""",
    "offset+size": """(SELECT * REPLACE (offset_bytes // 512 * 512 AS offset_bytes,
        greatest(512, (offset_bytes + size_bytes + 511) // 512 * 512 - offset_bytes // 512 * 512) AS size_bytes)
        FROM {src})""",
}
_UNALIGNED = {
    "offset": "offset_bytes % 512 <> 0",
    "offset+size": "offset_bytes % 512 <> 0 OR size_bytes % 512 <> 0",
}


def export_trace(
    table: TraceTable | str | Path, fmt: str, out: str | Path, devno: str = "8,16", base_unix_ns: int | None = None
) -> Path:
    """Write the reads and writes of `table` to `out` in format `fmt` (a writer's name:
    formats.writer_names()).

    `base_unix_ns` is the wall clock of the first IO for formats with absolute time
    (MSR, Tencent, SYSTOR); default: the table's own start, else 2020-01-01.
    """
    return export_with_notes(table, fmt, out, devno, base_unix_ns)[0]


def export_with_notes(
    table: TraceTable | str | Path, fmt: str, out: str | Path, devno: str = "8,16", base_unix_ns: int | None = None
) -> tuple[Path, list[str]]:
    """export_trace, and what the export changed (IOs rounded to whole sectors), to be said."""
    if not isinstance(table, TraceTable):
        table = TraceTable.open(table)
    found = formats.writer(fmt)
    if found is None:
        raise IolabError(f"cannot export to {fmt!r}; formats: {', '.join(formats.writer_names())}")
    # for the library's callers (iolab.traces.export_trace; the CLI checked before opening the
    # table): output_file checks the policy again as it writes, but not against the input
    check_file(out, "trace file", reads=[table.path])
    # int(): the base is written into the writers' SQL as a number, never as text it could end
    base = int(base_unix_ns if base_unix_ns is not None else (table.start_unix_ns or 1_577_836_800_000_000_000))
    maj, mnr = (int(x) for x in devno.split(","))
    src, notes = _SRC.format(path=sql_str(str(table.path))), []
    con = connect()
    try:
        # written aside and put in place whole (output_file, which checks the policy first): a stop
        # or a full disk midway left a half trace under the name, which the next export refused
        [(empty,)] = con.execute(_EMPTY.format(path=sql_str(str(table.path)))).fetchall()
        if empty:
            notes.append(
                f"{counted(empty, 'zero-length read or write', 'zero-length reads and writes')} left out (no data)"
            )
        other = con.execute(_OTHER.format(path=sql_str(str(table.path)))).fetchall()
        if other:
            kinds = ", ".join(counted(n, *_KINDS.get(op, (f"{op} IO", f"{op} IOs"))) for op, n in other)
            notes.append(f"{kinds} left out (an export writes reads and writes)")
        with output_file(out, "trace file") as part:
            sectors = found[1].sectors
            if sectors:
                [(changed,)] = con.execute(f"SELECT count(*) FROM {src} WHERE {_UNALIGNED[sectors]}").fetchall()
                src = _OUTWARD[sectors].format(src=src)
                if changed:
                    what = "offsets" if sectors == "offset" else "offsets and sizes"
                    notes.append(
                        f"{counted(changed, 'IO')} rounded outward to whole 512 B sectors ({fmt} writes {what} "
                        "in sectors): each covers at least its bytes"
                    )
            _check_sizes(con, src, fmt, found[1].max_size)
            found[1].write(ExportJob(table, con, src, part, base, maj, mnr))
            if found[1].unit:
                timeunit.record(part, found[1].unit)
    finally:
        con.close()
    return Path(out), notes


def _check_sizes(con, src: str, fmt: str, max_size: int) -> None:
    """Refuse IOs longer than the format's length field holds (blktrace's and vSCSI's are 32-bit):
    numpy stores such a size modulo 2^32, so an 8 GiB IO was written as 0 bytes, exit 0."""
    if not max_size:
        return
    [(n, largest, at)] = con.execute(
        f"SELECT count(*), max(size_bytes), arg_max(time_ns, size_bytes) FROM {src} WHERE size_bytes > {int(max_size)}"
    ).fetchall()
    if n:
        carry = ", ".join(w.name for f in formats.all_formats() for w in f.writers if not w.max_size)
        raise IolabError(
            f"{counted(n, 'IO')} {'is' if n == 1 else 'are'} longer than {fmt}'s length field holds "
            f"({max_size:,} B): the longest is {largest:,} B, at {at:,} ns. Nothing was written; export to a "
            f"format that writes sizes as text ({carry}), or drop those IOs from the table first."
        )


__all__ = ["export_trace", "export_with_notes"]
