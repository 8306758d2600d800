"""Trace import: public trace formats -> the normalised IO table (see table.py).

    import_trace(paths, fmt, out, skip_bad_lines=False, time_unit=None) -> TraceTable

Each format is declared once in traces/formats/ (registry.py says what a declaration holds):
a text format gives the SQL that reads its lines, a binary one its own loader (blktrace.py,
vscsi.py). This module runs a text reader over each input file, applies the shared checks
(textscan.py: lines the scanner rejects, numbers out of range), stops at the first bad line
or skips and counts bad lines with `skip_bad_lines`, guesses or takes the time unit of the
formats whose unit varies (timeunit.py), and writes the table.
"""

from __future__ import annotations

import filecmp
import gzip
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np

from iolab.core.diskfull import is_disk_full
from iolab.core.errors import IolabError
from iolab.core.safefile import check_regular
from iolab.targets.writepolicy import check_file
from iolab.traces import formats, timeunit
from iolab.traces.events import paired_sql
from iolab.traces.registry import TraceFormat
from iolab.traces.table import (
    IMPORT_MEMORY,
    BadLine,
    TraceTable,
    connect,
    first_error_line,
    refuse_bad_input,
    write_table,
)
from iolab.traces.textscan import Parsed, clear_rejects, fix_rejects, lines_sql, range_checked

EXAMPLES = 5  # bad lines kept as examples with skip_bad_lines
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
    `time_unit` (ns, us, ms or s) is the unit of the time field for the formats whose unit
    varies (a `time_unit` rule in their descriptor); when None it is guessed from the times (timeunit.py) and the guess and
    its reason are stored as a note."""
    files = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    spec = _check_request(files, fmt, time_unit)
    # for the library's callers (iolab.traces.import_trace; the CLI checked before detecting the
    # format): refused before the trace is parsed, an output that is one of the inputs first
    check_file(out, "IO table", reads=files)
    if spec.load is not None:
        return spec.load(
            files, out, skip_bad_lines=skip_bad_lines, notes=notes, lost_events=lost_events, time_unit=time_unit
        )
    for f in files:
        _check_text(f)
    # Parsed lines are kept in DuckDB temp tables: past this much memory they spill to disk.
    con = connect(memory_limit=IMPORT_MEMORY)
    run = _TextImport(spec, files, skip_bad_lines, list(notes))
    try:
        if spec.time_unit is not None:
            tu = (
                timeunit.given(time_unit, fmt)
                if time_unit
                else timeunit.recorded(files, fmt) or _detect_unit(con, spec, files[0])
            )
            run.extra = {"unit_ns": tu.ns}
            run.said.append(f"time unit: {tu.unit} ({tu.reason}).")
        for i, f in enumerate(files):
            run.current = f
            run.read_file(con, i, f)
        if not run.origins:
            what = f" ({run.skipped:,} bad lines skipped)" if run.skipped else ""
            raise IolabError(
                f"{', '.join(str(f) for f in files)}: no IOs found in this {fmt} trace{what}; nothing to import."
            )
        return write_table(
            con,
            " UNION ALL ".join(f"({p})" for p in run.parts),
            out,
            fmt=fmt,
            sources=tuple(str(f) for f in files),
            start_unix_ns=run.start if clock_unix_ns is None else clock_unix_ns,
            origin_ns=min(run.origins),
            skipped_lines=run.skipped,
            skipped_examples=tuple(run.examples),
            notes=tuple(run.said),
            lost_events=lost_events,
        )
    except duckdb.Error as e:
        if is_disk_full(e):  # the output's disk, not the input: the caller says so (durable.room_for)
            raise
        raise IolabError(f"{run.current}: cannot read as {fmt} ({first_error_line(e)}).") from None
    finally:
        con.close()


@dataclass
class _TextImport:
    """The state of one text import over its files: the rows of each file (SQL over its
    parsed temp table), the earliest IO time of each, bad lines skipped, notes said."""

    spec: TraceFormat
    files: list[Path]
    skip_bad_lines: bool
    said: list[str]
    extra: dict[str, int] = field(default_factory=dict)
    current: Path | None = None
    parts: list[str] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    skipped: int = 0
    examples: list[BadLine] = field(default_factory=list)
    start: int | None = None

    def __post_init__(self) -> None:
        self.current = self.files[0]

    def read_file(self, con: duckdb.DuckDBPyConnection, i: int, f: Path) -> None:
        assert self.spec.sql is not None
        parsed = self.spec.sql(str(f), **self.extra)
        self.start = parsed.start_unix_ns
        self.said += [n for n in parsed.notes if n not in self.said]
        n_bad, bad = _parse_file(con, i, f, parsed, self.spec.name, self.skip_bad_lines, self.said)
        self.skipped += n_bad
        self.examples += bad[: max(0, EXAMPLES - len(self.examples))]
        first = con.execute(f"SELECT min(time_ns) FROM p{i} WHERE err IS NULL AND kind IN ('io', 'issue')").fetchall()[
            0
        ][0]
        if first is not None:
            self.origins.append(int(first))
        self.parts.append(_io_rows_sql(con, i, f, parsed, self.said))


def _check_request(files: list[Path], fmt: str, time_unit: str | None) -> TraceFormat:
    """The format's descriptor; refused: an unknown format, no input, a time unit the format
    does not take, a missing file."""
    spec = formats.get(fmt)
    if spec is None:
        raise IolabError(f"unknown trace format {fmt!r}; iolab reads: {', '.join(formats.reader_names())}.")
    if not files:
        raise IolabError("trace import: no input files given.")
    if time_unit is not None and spec.time_unit is None:
        variable = [f.name for f in formats.all_formats() if f.time_unit is not None]
        raise IolabError(
            f"--time-unit applies to formats whose time unit varies ({', '.join(variable)}); "
            f"{fmt} traces have a fixed unit, which iolab uses."
        )
    for f in files:
        if not f.exists():
            raise IolabError(f"{f}: no such trace file.")
        check_regular(f, "trace file")  # a FIFO or a device: refused, not read
    _refuse_twice(files)
    return spec


def _refuse_twice(files: list[Path]) -> None:
    """One trace's files are different files: the same one given twice (a shell glob that
    overlaps a named file, a copy under another name) doubled every IO, and with it every
    IOPS, MB/s and outstanding-IO figure of the analysis, without a word."""
    seen: dict[tuple[int, int], Path] = {}
    for f in files:
        st = f.stat()
        if (first := seen.setdefault((st.st_dev, st.st_ino), f)) is not f:
            raise IolabError(
                f"{f}: the same file as {first}, given twice; its IOs would be counted twice. "
                "Give each file of the trace once. Nothing was written."
            )
    for i, a in enumerate(files):
        for b in files[i + 1 :]:
            # sizes first: only files of one size are read to compare; empty ones (a blktrace
            # file of an idle CPU) add no IO however often they come
            size = a.stat().st_size
            if size and size == b.stat().st_size and filecmp.cmp(a, b, shallow=False):
                raise IolabError(
                    f"{b}: the same contents as {a}, so its IOs would be counted twice (a copy of one "
                    "file, not another part of the trace). Give each file of the trace once; should they "
                    "really be two traces that happen to be identical, import each on its own "
                    "(`iolab trace import FILE -o TABLE`). Nothing was written."
                )


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


def _detect_unit(con: duckdb.DuckDBPyConnection, spec: TraceFormat, path: Path) -> timeunit.TimeUnit:
    """Guess the time unit of a variable-unit text trace from its first lines."""
    rule = spec.time_unit
    assert rule is not None and rule.fields is not None, (
        f"{spec.name}: a text format with a variable unit names its fields"
    )
    time, size, device = rule.fields
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
        times,
        any(r[1] for r in rows),
        rule.default,
        spec.name,
        sizes=sizes,
        devices=len({r[3] for r in rows}),
        whole=rule.whole,
    )


def _bad_lines(con, table: str, file: str) -> tuple[int, list[BadLine]]:
    n = con.execute(f"SELECT count(*) FROM {table} WHERE err IS NOT NULL").fetchall()[0][0]
    if not n:
        return 0, []
    rows = con.execute(
        f"SELECT ln, err, line FROM {table} WHERE err IS NOT NULL ORDER BY ln LIMIT {EXAMPLES}"
    ).fetchall()
    return n, [BadLine(file, int(ln), err, line[:200]) for ln, err, line in rows]


__all__ = ["EXAMPLES", "import_trace"]
