"""tracefs binary ring-buffer pages (per_cpu/cpuN/trace_pipe_raw) -> block IO events.

    import_tracefs_raw(raw_dir, out, notes=(), clock_unix_ns=None, lost_events=None) -> TraceTable
    snapshot_layout(instance, raw_dir)   copy the page and event layouts next to the pages

What `capture` records: the kernel's own per-CPU buffer pages, copied unparsed (no text is
formatted in the kernel, no line is parsed while tracing), one file per CPU
(`cpuN.raw`), with the layout files the kernel publishes for them (`header_page`,
`header_event`, `<event>.format`), so the pages can be decoded again later.

Page layout (kernel/trace/ring_buffer.c; libtraceevent's kbuffer.c reads it the same way):

  page    = header_page: u64 timestamp, long commit, then the data (page size = data
            offset + data size, 4 KiB unless buffer_subbuf_size_kb was changed)
  commit  = low 27 bits: bytes of data used; bit 31: events were lost (overwritten)
            before this page; bit 30: their count is stored as a long after the data
  event   = u32 header (type_len: low 5 bits, time_delta: high 27 bits), then:
            1..28  a record of type_len*4 bytes
            0      u32 length L, then a record of L-4 bytes (rounded up to 4)
            29     padding (a discarded event): u32 L, next event at +4+L; time_delta
                   counts. time_delta 0: the rest of the page is empty
            30     time extend: u32 x; time += x << 27 | time_delta
            31     absolute time: u32 x; time = x << 27 | time_delta (top 5 bits kept)
  time    = page timestamp + the deltas so far (trace clock: ns on the mono clock)
  record  = as the event's `format` file says (common_type = the event id, common_pid,
            then dev, sector, nr_sector, rwbs, comm, ...)

Decoding is vectorised across pages: every page of a chunk advances one event per numpy
step, so a chunk takes as many steps as its fullest page has events (~60 for 4 KiB
pages), not one Python step per event. Chunks bound memory on long captures.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iolab.core.errors import IolabError
from iolab.core.units import counted
from iolab.traces.events import paired_sql
from iolab.traces.table import TraceTable, connect, write_table

EVENTS = ("block_rq_issue", "block_rq_complete")
LAYOUT_FILES = ("header_page", "header_event", *(f"{ev}.format" for ev in EVENTS))
COMMIT_MASK = (1 << 27) - 1
MISSED_EVENTS, MISSED_STORED = 1 << 31, 1 << 30
TS_MSB = np.uint64(0xF8 << 56)
CHUNK_BYTES = 64 << 20  # pages decoded at once
IMPORT_MEMORY = "1GB"
OPS = ("other", "read", "write", "trim", "flush")

_FIELD = re.compile(r"field:\s*(.*?)\s*;\s*offset:\s*(\d+)\s*;\s*size:\s*(\d+)\s*;")


@dataclass(frozen=True)
class Field:
    offset: int
    size: int


@dataclass(frozen=True)
class Layout:
    page_size: int
    ts: Field  # page header timestamp
    commit: Field
    data: int  # offset of the first event in a page
    ids: dict[str, int]  # event name -> common_type
    fields: dict[str, dict[str, Field]]  # event name -> field name -> place in the record


def _fields(text: str) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for decl, off, size in _FIELD.findall(text):
        name = re.sub(r"\[.*\]$", "", decl.split()[-1])
        out.setdefault(name, Field(int(off), int(size)))
    return out


def read_layout(d: Path) -> Layout:
    """The page and record layout from the files snapshot_layout copied into `d`."""
    try:
        page = _fields((d / "header_page").read_text())
        fields, ids = {}, {}
        for ev in EVENTS:
            text = (d / f"{ev}.format").read_text()
            m = re.search(r"^ID:\s*(\d+)", text, re.M)
            if m is None:
                raise IolabError(f"{d / f'{ev}.format'}: no 'ID:' line; not a tracefs event format file.")
            ids[ev], fields[ev] = int(m.group(1)), _fields(text)
    except OSError as e:
        raise IolabError(
            f"{d}: cannot read the trace layout ({e.strerror}: {e.filename}); a raw tracefs "
            "capture keeps header_page and the event format files beside its cpuN.raw pages."
        ) from None
    need = {"timestamp", "commit", "data"}
    if not need <= page.keys():
        raise IolabError(
            f"{d / 'header_page'}: expected fields {', '.join(sorted(need))}, found {', '.join(page) or 'none'}."
        )
    for ev, want in (
        ("block_rq_issue", ("common_type", "common_pid", "dev", "sector", "nr_sector", "rwbs", "comm")),
        ("block_rq_complete", ("common_type", "dev", "sector", "nr_sector", "rwbs")),
    ):
        missing = [f for f in want if f not in fields[ev]]
        if missing:
            raise IolabError(
                f"{d / f'{ev}.format'}: lacks field(s) {', '.join(missing)}; this kernel's {ev} is not the one iolab reads."
            )
    if page["commit"].size not in (4, 8) or page["timestamp"].size != 8:
        raise IolabError(
            f"{d / 'header_page'}: unexpected timestamp/commit sizes {page['timestamp'].size}/{page['commit'].size}."
        )
    return Layout(
        page["data"].offset + page["data"].size, page["timestamp"], page["commit"], page["data"].offset, ids, fields
    )


def snapshot_layout(instance: Path, raw_dir: Path) -> Layout:
    """Copy the instance's page layout and the block events' formats into `raw_dir`."""
    raw_dir.mkdir(parents=True, exist_ok=True)
    ev = instance / "events"
    shutil.copyfile(ev / "header_page", raw_dir / "header_page")
    shutil.copyfile(ev / "header_event", raw_dir / "header_event")
    for name in EVENTS:
        shutil.copyfile(ev / "block" / name / "format", raw_dir / f"{name}.format")
    return read_layout(raw_dir)


def _gather(buf: np.ndarray, at: np.ndarray, size: int) -> np.ndarray:
    """The little-endian unsigned integers of `size` bytes at byte offsets `at`."""
    b = buf[at[:, None] + np.arange(size)]
    return np.ascontiguousarray(b).view(f"<u{size}").ravel()


@dataclass
class Chunk:
    """The records found in some pages: byte offset of each record in the buffer, its
    time, and the events the kernel said it lost before these pages."""

    at: np.ndarray
    time: np.ndarray
    lost: int
    lost_unknown: int  # pages after a loss whose count was not stored


def decode_pages(buf: np.ndarray, layout: Layout) -> Chunk:
    """Walk every page of `buf` (a whole number of pages, uint8) in lock step."""
    ps = layout.page_size
    n = len(buf) // ps
    base = np.arange(n, dtype=np.int64) * ps
    stamp = _gather(buf, base + layout.ts.offset, 8).astype(np.uint64)
    commit = _gather(buf, base + layout.commit.offset, layout.commit.size).astype(np.uint64)
    size = (commit & np.uint64(COMMIT_MASK)).astype(np.int64)
    if (size > ps - layout.data).any():
        bad = int(np.flatnonzero(size > ps - layout.data)[0])
        raise IolabError(
            f"page {bad} (byte {bad * ps}): commit says {size[bad]} bytes of data, a page holds "
            f"{ps - layout.data}; not tracefs ring-buffer pages of this layout."
        )
    missed = (commit & np.uint64(MISSED_EVENTS)) != 0
    stored = missed & ((commit & np.uint64(MISSED_STORED)) != 0)
    lost = int(_gather(buf, base[stored] + layout.data + size[stored], layout.commit.size).sum()) if stored.any() else 0
    words = buf.view("<u4")
    pos, end, t = base + layout.data, base + layout.data + size, stamp
    live = pos < end
    pos, end, t = pos[live], end[live], t[live]
    at, times = [], []
    while len(pos):
        w = pos >> 2
        h = words[w]
        kind = h & 31
        delta = (h >> 5).astype(np.uint64)
        arg = words[np.minimum(w + 1, len(words) - 1)].astype(np.int64)
        record = (kind >= 1) & (kind <= 28)
        long_record = kind == 0
        pad, extend, absolute = kind == 29, kind == 30, kind == 31
        big = (arg.astype(np.uint64) << np.uint64(27)) | delta
        t = np.where(absolute, big | (t & TS_MSB), t + np.where(extend, big, delta))
        data = record | long_record
        at.append(pos[data] + np.where(long_record[data], 8, 4))
        times.append(t[data])
        step = np.select(
            [record, long_record, pad & (delta == 0), pad],
            [4 + kind.astype(np.int64) * 4, 8 + ((arg - 4 + 3) & ~3), end - pos, 4 + arg],
            8,
        )
        pos = pos + np.maximum(step, 4)  # a corrupt zero length must not loop forever
        live = pos < end
        pos, end, t = pos[live], end[live], t[live]
    return Chunk(
        np.concatenate(at) if at else np.empty(0, np.int64),
        np.concatenate(times) if times else np.empty(0, np.uint64),
        lost,
        int((missed & ~stored).sum()),
    )


def _rwbs_op(rwbs: np.ndarray, nsect: np.ndarray) -> np.ndarray:
    """Index into OPS from the rwbs flag bytes and the request's length (as events.RWBS_OP_SQL:
    D, an empty pre-flush, W, R, leading F)."""
    has = lambda c: (rwbs == ord(c)).any(axis=1)  # noqa: E731
    pre = rwbs[:, 0] == ord("F")
    return np.select([has("D"), pre & (nsect == 0), has("W"), has("R"), pre], [3, 4, 2, 1, 4], 0).astype(np.int8)


class NoIssues(IolabError):
    """The pages hold no block_rq_issue event."""


def import_tracefs_raw(
    raw_dir: str | Path,
    out: str | Path,
    notes: tuple[str, ...] = (),
    clock_unix_ns: int | None = None,
    lost_events: int | None = None,
) -> TraceTable:
    """Decode the per-CPU pages in `raw_dir` and write the IO table to `out`.

    The table's `lost_events` is the larger of `lost_events` (the capture's count from the
    kernel's buffer statistics) and the losses the pages themselves record; a capture that
    lost events says so in a note (the trace is incomplete)."""
    raw_dir = Path(raw_dir)
    layout = read_layout(raw_dir)
    files = sorted(raw_dir.glob("cpu*.raw"), key=lambda f: int(f.stem[3:]) if f.stem[3:].isdigit() else 0)
    if not files:
        raise IolabError(f"{raw_dir}: no cpuN.raw page files; nothing to import.")
    con = connect(memory_limit=IMPORT_MEMORY)
    names: dict[bytes, int] = {}
    lost = lost_unknown = 0
    said = list(notes)
    try:
        con.execute(
            "CREATE TEMP TABLE ev (ord BIGINT, issue BOOLEAN, time_ns BIGINT, dev BIGINT, opc TINYINT,"
            " sector BIGINT, nsect BIGINT, pid BIGINT, comm INTEGER)"
        )
        for cpu, f in enumerate(files):
            n_lost, n_unknown = _load_cpu_file(con, cpu, f, layout, names, said)
            lost += n_lost
            lost_unknown += n_unknown
        first = con.execute("SELECT min(time_ns) FROM ev WHERE issue").fetchall()[0][0]
        if first is None:
            raise NoIssues(f"{raw_dir}: no block_rq_issue events in the pages; nothing to import.")
        by_code = sorted(names, key=names.__getitem__)
        con.register(
            "names",
            {
                "comm": np.arange(len(by_code), dtype=np.int32),
                "process": np.array([k.decode("utf-8", "replace") for k in by_code], dtype=object),
            },
        )
        events = (
            "SELECT ord, CASE WHEN issue THEN 'issue' ELSE 'complete' END AS kind, time_ns,"
            " (dev >> 20) || ',' || (dev & 1048575) AS device,"
            f" [{', '.join(repr(o) for o in OPS)}][opc + 1] AS op, sector, nsect,"
            " CASE WHEN issue THEN nullif(n.process, '') END AS process, CASE WHEN issue THEN pid END AS pid"
            " FROM ev LEFT JOIN names n USING (comm)"
        )
        # Paired once into a table (it spills past the memory limit), then counted and written.
        con.execute(f"CREATE TEMP TABLE ios AS {paired_sql(events)}")
        con.execute("DROP TABLE ev")
        unpaired = con.execute("SELECT count(*) FROM ios WHERE latency_us IS NULL").fetchall()[0][0]
        if unpaired:
            said.append(f"{unpaired:,} issued IOs have no completion in the trace (no response time).")
        lost = max(lost + lost_unknown, lost_events or 0)
        if lost:
            said.insert(
                0,
                f"INCOMPLETE TRACE: the kernel dropped {lost:,} trace events (its buffer overran before they "
                "were read); the IOs they described are missing. Capture again with a larger buffer or a process filter.",
            )
        if lost_unknown:
            said.append(
                f"{counted(lost_unknown, 'page')} after a loss of trace events whose count the kernel did not "
                "store (counted as 1 event each)"
            )
        return write_table(
            con,
            "SELECT * FROM ios",
            out,
            fmt="tracefs-raw",
            sources=(str(raw_dir),),
            origin_ns=int(first),
            start_unix_ns=clock_unix_ns,
            notes=tuple(said),
            lost_events=lost,
        )
    finally:
        con.close()


def _load_cpu_file(
    con, cpu: int, f: Path, layout: Layout, names: dict[bytes, int], notes: list[str]
) -> tuple[int, int]:
    """Decode one CPU's page file, chunk by chunk, into table ev; returns the events its
    pages say were lost (counted, and pages with an uncounted loss)."""
    ps = layout.page_size
    iss, cmp = layout.fields["block_rq_issue"], layout.fields["block_rq_complete"]
    lost = lost_unknown = 0
    total = f.stat().st_size
    if total % ps:
        notes.append(f"{f}: ends with {total % ps} bytes of a partial page (ignored)")
    done, n_ev = 0, 0
    with open(f, "rb") as fh:
        while done + ps <= total:
            want = min(CHUNK_BYTES // ps * ps, (total - done) // ps * ps)
            buf = np.frombuffer(fh.read(want), dtype=np.uint8)
            done += want
            ch = decode_pages(buf, layout)
            lost += ch.lost
            lost_unknown += ch.lost_unknown
            kind = _gather(buf, ch.at + iss["common_type"].offset, 2)
            for ev, fields, is_issue in (("block_rq_issue", iss, True), ("block_rq_complete", cmp, False)):
                sel = kind == layout.ids[ev]
                a = ch.at[sel]
                if not len(a):
                    continue
                cols = {
                    "ord": np.flatnonzero(sel).astype(np.int64) + n_ev + cpu * 10_000_000_000_000,
                    "issue": np.full(len(a), is_issue),
                    "time_ns": ch.time[sel].astype(np.int64),
                    **_event_columns(buf, a, fields, is_issue, names),
                }
                con.register("chunk", cols)
                con.execute("INSERT INTO ev SELECT * FROM chunk")
                con.unregister("chunk")
            n_ev += len(ch.at)
    return lost, lost_unknown


def _event_columns(buf: np.ndarray, a: np.ndarray, fields: dict, is_issue: bool, names: dict[bytes, int]) -> dict:
    """Device, op, sector, length, pid and process code of the events at offsets `a`
    (a completion has no pid or process)."""
    rwbs = buf[a[:, None] + fields["rwbs"].offset + np.arange(fields["rwbs"].size)]
    nsect = _gather(buf, a + fields["nr_sector"].offset, fields["nr_sector"].size).astype(np.int64)
    return {
        "dev": _gather(buf, a + fields["dev"].offset, fields["dev"].size).astype(np.int64),
        "opc": _rwbs_op(rwbs, nsect),
        "sector": _gather(buf, a + fields["sector"].offset, fields["sector"].size).astype(np.int64),
        "nsect": nsect,
        "pid": (
            _gather(buf, a + fields["common_pid"].offset, 4).astype(np.int64)
            if is_issue
            else np.zeros(len(a), np.int64)
        ),
        "comm": _comm_codes(buf, a + fields["comm"].offset, fields["comm"].size, names)
        if is_issue
        else np.zeros(len(a), np.int32),
    }


def _comm_codes(buf: np.ndarray, at: np.ndarray, size: int, names: dict[bytes, int]) -> np.ndarray:
    """A small integer per distinct process name (char[16], NUL padded); `names` grows."""
    raw = np.ascontiguousarray(buf[at[:, None] + np.arange(size)])
    uniq, inverse = np.unique(raw.view(f"V{size}").ravel(), return_inverse=True)
    codes = np.array([names.setdefault(bytes(u).split(b"\0", 1)[0], len(names)) for u in uniq], dtype=np.int32)
    return codes[inverse.ravel()]


__all__ = ["EVENTS", "Layout", "NoIssues", "decode_pages", "import_tracefs_raw", "read_layout", "snapshot_layout"]
