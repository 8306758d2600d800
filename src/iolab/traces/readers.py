"""Trace import: public trace formats -> the normalised IO table (see table.py).

    import_trace(paths, fmt, out, skip_bad_lines=False, time_unit=None) -> TraceTable

The text formats and their SQL builders are in formats.py (the field lists and units are
there and in docs/trace-formats.md); blktrace.py and vscsi.py read the binary ones. This
module runs a reader over each input file, applies the shared checks (textscan.py: lines the
scanner rejects, numbers out of range), stops at the first bad line or skips and counts bad
lines with `skip_bad_lines`, guesses or takes the time unit of the formats whose unit varies
(timeunit.py), and writes the table.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np

from iolab.core.errors import IolabError
from iolab.core.safefile import check_regular
from iolab.traces import timeunit
from iolab.traces.events import paired_sql
from iolab.traces.formats import FILETIME_UNIX_EPOCH, TEXT_FORMATS, scsi_op_sql
from iolab.traces.table import (
    IMPORT_MEMORY,
    BadLine,
    TraceTable,
    connect,
    first_error_line,
    refuse_bad_input,
    write_table,
)
from iolab.traces.textscan import Parsed, clear_rejects, csv_fields, fix_rejects, lines_sql, range_checked, ws_fields
from iolab.traces.timeunit import VARIABLE_UNIT

EXAMPLES = 5  # bad lines kept as examples with skip_bad_lines
FORMATS = tuple(TEXT_FORMATS) + ("blktrace", "vscsi")
# The time, size (bytes) and device fields of the variable-unit text formats, as SQL over a
# line: what the unit guess needs to tell possible rates from impossible ones.
_UNIT_FIELDS = {
    "disksim": (f"{ws_fields()}[1]", f"TRY_CAST({ws_fields()}[4] AS DOUBLE) * 512", f"{ws_fields()}[2]"),
    "cloudphysics": (f"{csv_fields()}[2]", f"TRY_CAST({csv_fields()}[4] AS DOUBLE)", "''"),
}
_DETECT_LINES = 200_000


# ---------------------------------------------------------------------------------------
# The import driver


def import_trace(
    paths: str | Path | Sequence[str | Path],
    fmt: str,
    out: str | Path,
    skip_bad_lines: bool = False,
    notes: tuple[str, ...] = (),
    clock_unix_ns: int | None = None,
    lost_events: int | None = None,
    time_unit: str | None = None,
) -> TraceTable:
    """Read one trace (or several files of one trace, e.g. the per-CPU files of a blktrace
    or several MSR volumes) in format `fmt` and write the normalised table to `out`.
    `notes` are extra caveats stored with the table (the capture's, for instance);
    `clock_unix_ns` is the wall-clock time of the input's time 0 when the caller knows it
    and the format does not say (the capture knows its monotonic clock's offset);
    `lost_events` is how many trace events a capture dropped (kept in the metadata).
    `time_unit` (ns, us, ms or s) is the unit of the time field for the formats in
    VARIABLE_UNIT; when None it is guessed from the times (timeunit.py) and the guess and
    its reason are stored as a note."""
    files = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    _check_request(files, fmt, time_unit)
    if fmt == "blktrace":
        from iolab.traces.blktrace import import_blktrace

        return import_blktrace(files, out, skip_bad_lines=skip_bad_lines, notes=notes, lost_events=lost_events)
    if fmt == "vscsi":
        from iolab.traces.vscsi import import_vscsi

        return import_vscsi(files, out, skip_bad_lines=skip_bad_lines, notes=notes, time_unit=time_unit)
    for f in files:
        _check_text(f)

    # Parsed lines are kept in DuckDB temp tables: past this much memory they spill to disk.
    con = connect(memory_limit=IMPORT_MEMORY)
    current = files[0]
    try:
        parts: list[str] = []
        origins: list[int] = []
        skipped = 0
        examples: list[BadLine] = []
        said: list[str] = list(notes)
        start: int | None = None
        extra = {}
        if fmt in VARIABLE_UNIT:
            tu = timeunit.given(time_unit, fmt) if time_unit else _detect_unit(con, fmt, files[0])
            extra = {"unit_ns": tu.ns}
            said.append(f"time unit: {tu.unit} ({tu.reason}).")
        for i, f in enumerate(files):
            current = f
            parsed = TEXT_FORMATS[fmt](str(f), **extra)
            start = parsed.start_unix_ns
            said += [n for n in parsed.notes if n not in said]
            n_bad, bad = _parse_file(con, i, f, parsed, fmt, skip_bad_lines, said)
            skipped += n_bad
            examples += bad[: max(0, EXAMPLES - len(examples))]
            first = con.execute(
                f"SELECT min(time_ns) FROM p{i} WHERE err IS NULL AND kind IN ('io', 'issue')"
            ).fetchall()[0][0]
            if first is not None:
                origins.append(int(first))
            parts.append(_io_rows_sql(con, i, f, parsed, said))
        union = " UNION ALL ".join(f"({p})" for p in parts)
        if not origins:
            what = f" ({skipped:,} bad lines skipped)" if skipped else ""
            raise IolabError(
                f"{', '.join(str(f) for f in files)}: no IOs found in this {fmt} trace{what}; nothing to import."
            )
        return write_table(
            con,
            union,
            out,
            fmt=fmt,
            sources=tuple(str(f) for f in files),
            start_unix_ns=start if clock_unix_ns is None else clock_unix_ns,
            origin_ns=min(origins),
            skipped_lines=skipped,
            skipped_examples=tuple(examples),
            notes=tuple(said),
            lost_events=lost_events,
        )
    except duckdb.Error as e:
        raise IolabError(f"{current}: cannot read as {fmt} ({first_error_line(e)}).") from None
    finally:
        con.close()


def _check_request(files: list[Path], fmt: str, time_unit: str | None) -> None:
    """Refuse an unknown format, no input, a time unit the format does not take, a missing file."""
    if fmt not in FORMATS:
        raise IolabError(f"unknown trace format {fmt!r}; iolab reads: {', '.join(FORMATS)}.")
    if not files:
        raise IolabError("trace import: no input files given.")
    if time_unit is not None and fmt not in VARIABLE_UNIT:
        raise IolabError(
            f"--time-unit applies to formats whose time unit varies ({', '.join(VARIABLE_UNIT)}); "
            f"{fmt} traces have a fixed unit, which iolab uses."
        )
    for f in files:
        if not f.exists():
            raise IolabError(f"{f}: no such trace file.")
        check_regular(f, "trace file")  # a FIFO or a device: refused, not read


def _parse_file(
    con: duckdb.DuckDBPyConnection, i: int, f: Path, parsed: Parsed, fmt: str, skip_bad_lines: bool, notes: list[str]
) -> tuple[int, list[BadLine]]:
    """Parse input file `i` once into temp table p{i} and count its bad lines (the first
    stops the import unless `skip_bad_lines`). Adds the kernel's lost-event count to `notes`."""
    clear_rejects(con, str(f))
    if parsed.lost_sql:
        lost = con.execute(parsed.lost_sql).fetchall()[0][0]
        if lost:
            notes.append(f"{f}: the kernel reported {lost:,} lost trace events; some IOs are missing.")
    clear_rejects(con, str(f))
    # Parse once; keep the text of bad lines only (for the error message).
    con.execute(
        f"CREATE TEMP TABLE p{i} AS SELECT * REPLACE (CASE WHEN err IS NOT NULL THEN line END AS line)"
        f" FROM ({range_checked(parsed.sql, parsed.events, parsed.labels)})"
    )
    fix_rejects(con, f"p{i}", str(f))
    n_bad, bad = _bad_lines(con, f"p{i}", str(f))
    if n_bad and not skip_bad_lines:
        raise refuse_bad_input(
            bad[0],
            n_bad,
            f". This does not look like a {fmt} trace line. Fix the file, "
            "check the format name, or pass --skip-bad-lines to drop bad lines (they are "
            "counted and reported).",
            "more bad lines after it",
        )
    return n_bad, bad


def _io_rows_sql(con: duckdb.DuckDBPyConnection, i: int, f: Path, parsed: Parsed, notes: list[str]) -> str:
    """The IOs of parsed file `i` (table p{i}) as table rows; an event format's issues are
    paired with their completions, and the issues left without one are counted in `notes`."""
    if not parsed.events:
        return (
            f"SELECT time_ns, device, op, offset_bytes, size_bytes, process, latency_us, pid,"
            f" ln + {i} * 10000000000000 AS ord FROM p{i} WHERE err IS NULL AND kind = 'io'"
        )
    part = paired_sql(
        f"SELECT ln + {i} * 10000000000000 AS ord, kind, time_ns, device, op, sector, nsect, process, pid "
        f"FROM p{i} WHERE err IS NULL AND kind IN ('issue', 'complete')"
    )
    unpaired = con.execute(f"SELECT count(*) FROM ({part}) WHERE latency_us IS NULL").fetchall()[0][0]
    if unpaired:
        notes.append(f"{f}: {unpaired:,} issued IOs have no completion in the trace (no response time).")
    return part


def _check_text(path: Path) -> None:
    """Refuse text that is not UTF-8/ASCII up front (UTF-16 would fail on every line)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as fh:
                head = fh.read(4096)
    except (OSError, EOFError, zlib.error) as e:  # a cut or corrupt gzip raises the last two
        raise IolabError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e}).") from None
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or (head and head.count(0) > len(head) // 4):
        raise IolabError(
            f"{path}:1: this looks like UTF-16 text (byte-order mark or NUL bytes); iolab reads traces as "
            f"UTF-8/ASCII text. Convert it first, e.g. iconv -f UTF-16 -t UTF-8 {path} > trace.txt"
        )


def _detect_unit(con: duckdb.DuckDBPyConnection, fmt: str, path: Path) -> timeunit.TimeUnit:
    """Guess the time unit of a variable-unit text trace from its first lines."""
    time, size, device = _UNIT_FIELDS[fmt]
    clear_rejects(con, str(path))
    rows = con.execute(
        f"SELECT TRY_CAST(trim(v) AS DOUBLE), contains(v, '.'), coalesce(b, 0), d FROM ("
        f"SELECT {time} AS v, {size} AS b, {device} AS d FROM ({lines_sql(str(path))}) LIMIT {_DETECT_LINES})"
        " WHERE isfinite(TRY_CAST(trim(v) AS DOUBLE))"
    ).fetchall()
    clear_rejects(con, str(path))
    times = np.array([r[0] for r in rows], dtype=float)
    sizes = np.array([r[2] for r in rows], dtype=float)
    return timeunit.detect(
        times, any(r[1] for r in rows), VARIABLE_UNIT[fmt], fmt, sizes=sizes, devices=len({r[3] for r in rows})
    )


def _bad_lines(con, table: str, file: str) -> tuple[int, list[BadLine]]:
    n = con.execute(f"SELECT count(*) FROM {table} WHERE err IS NOT NULL").fetchall()[0][0]
    if not n:
        return 0, []
    rows = con.execute(
        f"SELECT ln, err, line FROM {table} WHERE err IS NOT NULL ORDER BY ln LIMIT {EXAMPLES}"
    ).fetchall()
    return n, [BadLine(file, int(ln), err, line[:200]) for ln, err, line in rows]


__all__ = ["EXAMPLES", "FILETIME_UNIX_EPOCH", "FORMATS", "VARIABLE_UNIT", "import_trace", "scsi_op_sql"]
