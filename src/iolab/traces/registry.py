"""What a trace format is, declared once: the `TraceFormat` descriptor and the registry.

A format module (traces/formats/<name>.py) builds one `TraceFormat`: its name and title, how
a file of it is recognised (a binary magic, a header line, or the shape of a headerless
first data line), how it is read (an SQL builder over the lines for text, a loader for
binary), its writers (none, one, or several: fio writes v2 and v3 logs), the rules of its
time unit when the unit varies, and whether it carries response times. Everything that
used to list format names by hand is derived from the registered descriptors: detection
(detect.py), the import driver (readers.py), the export table (writers.py), the fuzz cases
(fuzz.py), the tests' parametrisations and the CLI's `--format` help.

Nothing here touches a database or numpy, so the CLI can build its help from the registry
without loading them. The built-in formats are registered by `iolab.traces.formats`; a
caller adding its own format calls `register` (and `unregister` to take it away again).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iolab.core.errors import IolabError
from iolab.traces.sqltext import Parsed, sql_str

if TYPE_CHECKING:
    from iolab.traces.table import TraceTable


@dataclass(frozen=True)
class ExportJob:
    """What a writer is handed: the table, an open database connection, `src` (a FROM item
    yielding the table's reads and writes with `n`, their row number, in table order), the
    output path, the wall clock of the first IO (formats with absolute time) and the
    major,minor device number to name the device by (formats that name one so)."""

    table: TraceTable
    con: Any  # duckdb.DuckDBPyConnection (typed loosely: this module loads no database)
    src: str
    out: Path
    base_unix_ns: int
    major: int
    minor: int

    def lines(self, select_line: str, header: str | None = None) -> None:
        """COPY one text column (`select_line`, one row per line) to the output without any
        CSV quoting, after `header` (its own lines) when given."""
        # here, not at the top: the targets package is most of what `iolab --help` would import for this module
        from iolab.targets.writepolicy import check_file

        tmp = check_file(self.out.with_name(self.out.name + ".body"), "trace export's temporary file")
        try:  # removed however the copy ends: a stop left it, and the next export refused it as someone's
            self.con.execute(
                f"COPY ({select_line}) TO {sql_str(str(tmp))} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER chr(1))"
            )
            with open(self.out, "wb") as f:
                if header is not None:
                    f.write(header.encode() + b"\n")
                with open(tmp, "rb") as body:
                    while chunk := body.read(1 << 22):
                        f.write(chunk)
        finally:
            tmp.unlink(missing_ok=True)

    def needs_latency(self, fmt: str, why: str) -> None:
        """Refuse a table without response times for a format that must write them."""
        if not self.table.has_latency:
            raise IolabError(f"{self.table.path}: {fmt} needs {why}; this trace has none.")


@dataclass(frozen=True)
class Writer:
    """One way of writing a format (`iolab trace export --format NAME`).

    `head_lines`: the lines the writer puts before the first IO line (fuzz.py mangles the
    IO lines and keeps these whole); `io_line`: which of the remaining lines are IOs, when
    the writer adds others (blkparse's summary); `record_bytes`: for a binary writer, the
    fixed record size fuzz.py mangles record by record (0: a stream, mangled as a whole).
    `sectors`: what the format writes in 512 B sectors, "offset" or "offset+size" ("": bytes);
    writers.py rounds such IOs outward to whole sectors before the writer sees them.
    `max_size`: the largest IO, in bytes, the format's length field holds (0: no limit); a
    table with a larger one is refused before anything is written (a binary field wraps).
    `unit`: the unit of the times it writes, for a format whose unit varies (its UnitRule):
    recorded on the file (timeunit.record), so iolab's import reads it back in that unit."""

    name: str
    write: Callable[[ExportJob], None]
    head_lines: int = 0
    io_line: Callable[[bytes], bool] | None = None
    record_bytes: int = 0
    sectors: str = ""
    max_size: int = 0
    unit: str = ""


@dataclass(frozen=True)
class UnitRule:
    """The time unit of a format whose unit varies between the tools that write it.

    `default`: the documented unit, used when the times give no evidence; `whole`: (unit,
    whose convention) when whole-number times follow another convention; `fields`: SQL over
    a line for (time, size in bytes, device), what the guess reads from a text file (a
    binary reader guesses from its own records and leaves it None)."""

    default: str
    whole: tuple[str, str] | None = None
    fields: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class TraceFormat:
    """Everything iolab knows about one trace format (see the module doc).

    A text format gives `sql`: (path[, unit_ns]) -> Parsed, the SQL readers.py runs over the
    file's lines (`unit_ns` when it has a `time_unit` rule). A binary format gives `load`:
    (files, out, **opts) -> TraceTable, a reader of its own, where `opts` are import_trace's
    skip_bad_lines, notes, lost_events and time_unit. Detection tries, in
    registry order, every `magic` on the first 64 KiB, then every `header` on the first
    non-blank line (stripped), then every `shape` on that line, which must match one format
    only. `sample` (the lines of a small valid file, `sample_head` of them a header) stands
    in for a writer's output as the fuzz seed of a format without a writer."""

    name: str  # `--format` of `iolab trace import`, and the table's fmt
    title: str  # what users call it ("MSR Cambridge")
    sql: Callable[..., Parsed] | None = None
    load: Callable[..., TraceTable] | None = None
    writers: tuple[Writer, ...] = ()
    magic: Callable[[bytes], bool] | None = None
    header: Callable[[str], bool] | None = None
    shape: re.Pattern[str] | None = None
    time_unit: UnitRule | None = None
    latency: bool = False  # the format carries response times
    sample: tuple[str, ...] = ()
    sample_head: int = 0

    @property
    def binary(self) -> bool:
        return self.load is not None


def csv_header(columns: str) -> Callable[[str], bool]:
    """A header test: the first line, blanks removed and lowercased, starts with `columns`."""
    want = columns.lower()

    def matches(first: str) -> bool:
        return re.sub(r"\s+", "", first).lower().startswith(want)

    return matches


def first_line_in(*lines: str) -> Callable[[str], bool]:
    """A header test: the first line is one of `lines` exactly."""
    return lambda first: first in lines


# The registry: name -> descriptor, in registration order (detection and every list follow it).
_REGISTERED: dict[str, TraceFormat] = {}


def register(fmt: TraceFormat) -> TraceFormat:
    """Add a format. Refused: a name (format or writer) already taken, a format that cannot
    be read (neither `sql` nor `load`, or both), a text format with a variable unit that
    does not say where its times are, a format without a writer and without a `sample`
    (the fuzz tests need valid lines of it)."""
    taken = set(_REGISTERED) | set(writer_names())
    clash = sorted(({fmt.name} | {w.name for w in fmt.writers}) & taken)
    if clash or len({w.name for w in fmt.writers}) < len(fmt.writers):
        raise ValueError(f"trace format {fmt.name!r}: a name is taken twice ({', '.join(clash) or 'its writers'})")
    if (fmt.sql is None) == (fmt.load is None):
        raise ValueError(f"trace format {fmt.name!r}: give exactly one reader, sql (text) or load (binary)")
    if fmt.time_unit is not None and fmt.sql is not None and fmt.time_unit.fields is None:
        raise ValueError(f"trace format {fmt.name!r}: a text format whose unit varies names its time fields")
    if not fmt.writers and (fmt.binary or not fmt.sample):
        # The fuzz tests mangle a writer's output, or else these lines (text only).
        raise ValueError(f"trace format {fmt.name!r}: a format without a writer must be text and give sample lines")
    _REGISTERED[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def all_formats() -> tuple[TraceFormat, ...]:
    return tuple(_REGISTERED.values())


def reader_names() -> tuple[str, ...]:
    return tuple(_REGISTERED)


def writer_names() -> tuple[str, ...]:
    return tuple(w.name for f in _REGISTERED.values() for w in f.writers)


def get(name: str) -> TraceFormat | None:
    return _REGISTERED.get(name)


def writer(name: str) -> tuple[TraceFormat, Writer] | None:
    """The format a writer belongs to, and the writer."""
    for f in _REGISTERED.values():
        for w in f.writers:
            if w.name == name:
                return f, w
    return None


__all__ = [
    "ExportJob",
    "TraceFormat",
    "UnitRule",
    "Writer",
    "all_formats",
    "csv_header",
    "first_line_in",
    "get",
    "reader_names",
    "register",
    "unregister",
    "writer",
    "writer_names",
]
