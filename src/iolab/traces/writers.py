"""Export a normalised IO table in a public trace format (the inverse of readers.py).

    export_trace(table, fmt, out) -> Path

Uses: hand a trace to a tool that reads one of these formats (fio replays an iolog v3 with
read_iolog=...), and round-trip tests: a table with known streams written in every format
must import back to the same streams.

What a format cannot carry is lost on export, and said here: SPC, Alibaba, Tencent, FIU
and fio iologs have no response times; Tencent keeps whole seconds; Alibaba and fio v3
keep µs; blkparse, tracefs and blktrace name devices by major,minor (`devno`, default
"8,16") and need response times to write completions; so does biosnoop (LAT written
to 1 µs; bcc itself prints 10 µs steps). DiskSim has neither response times nor process names. fio v2 writes `wait` lines for the
gaps between IOs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iolab.core.errors import IolabError
from iolab.targets.writepolicy import check_file, mark_written
from iolab.traces.blktrace import MAGIC, TA_COMPLETE, TA_ISSUE, TC_NOTIFY, TC_READ, TC_WRITE, VERSION, record_dtype
from iolab.traces.formats import FILETIME_UNIX_EPOCH
from iolab.traces.table import TraceTable, connect, sql_str

FORMATS = (
    "msr",
    "spc",
    "alibaba",
    "tencent",
    "fiu",
    "systor",
    "blkparse",
    "blktrace",
    "fio2",
    "fio3",
    "tracefs",
    "disksim",
    "biosnoop",
    "cloudphysics",
    "vscsi",
)

_SRC = "(SELECT *, row_number() OVER () AS n FROM read_parquet({path}) WHERE op IN ('read', 'write'))"


def _lines(con, select_line: str, path: str, out: Path, header: str | None = None) -> None:
    """COPY one text column to `out` without any CSV quoting."""
    tmp = check_file(out.with_name(out.name + ".body"), "trace export's temporary file")
    con.execute(
        f"COPY ({select_line}) TO {sql_str(str(tmp))} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER chr(1))"
    )
    with open(out, "wb") as f:
        if header is not None:
            f.write(header.encode() + b"\n")
        with open(tmp, "rb") as body:
            while chunk := body.read(1 << 22):
                f.write(chunk)
    tmp.unlink()


def export_trace(
    table: TraceTable | str | Path, fmt: str, out: str | Path, devno: str = "8,16", base_unix_ns: int | None = None
) -> Path:
    """Write the reads and writes of `table` to `out` in format `fmt` (see FORMATS).

    `base_unix_ns` is the wall clock of the first IO for formats with absolute time
    (MSR, Tencent, SYSTOR); default: the table's own start, else 2020-01-01.
    """
    if not isinstance(table, TraceTable):
        table = TraceTable.open(table)
    if fmt not in FORMATS:
        raise IolabError(f"cannot export to {fmt!r}; formats: {', '.join(FORMATS)}")
    out = check_file(out, "trace file")
    base = base_unix_ns if base_unix_ns is not None else (table.start_unix_ns or 1_577_836_800_000_000_000)
    src = _SRC.format(path=sql_str(str(table.path)))
    maj, mnr = (int(x) for x in devno.split(","))
    con = connect()
    try:
        if fmt == "vscsi":
            _vscsi(con, src, out)
        elif fmt == "biosnoop":
            _biosnoop(con, table, src, out)
        elif fmt in ("fio2", "fio3"):
            _fio(con, src, out, v3=fmt == "fio3")
        elif fmt in ("blkparse", "tracefs", "blktrace"):
            _event_format(con, table, fmt, src, out, maj, mnr)
        else:
            _text(con, fmt, src, out, base, maj, mnr)
    finally:
        con.close()
    mark_written(out)
    return out


def _text(con, fmt: str, src: str, out: Path, base: int, maj: int, mnr: int) -> None:
    """The line-per-IO text formats (one printf per IO, in table order)."""
    if fmt == "msr":
        _lines(
            con,
            f"""SELECT printf('%d,%s,%s,%s,%d,%d,%d',
                ({base} + time_ns) // 100 + {FILETIME_UNIX_EPOCH},
                CASE WHEN contains(device, '_') THEN regexp_extract(device, '^(.*)_([^_]*)$', 1) ELSE device END,
                CASE WHEN contains(device, '_') THEN regexp_extract(device, '^(.*)_([^_]*)$', 2) ELSE '0' END,
                CASE op WHEN 'read' THEN 'Read' ELSE 'Write' END, offset_bytes, size_bytes,
                CAST(round(coalesce(latency_us, 0) * 10) AS BIGINT)) FROM {src} ORDER BY n""",
            "",
            out,
        )
    elif fmt == "spc":
        _lines(
            con,
            f"""SELECT printf('%d,%d,%d,%s,%.9f',
                coalesce(TRY_CAST(regexp_extract(device, '(\\d+)$', 1) AS INTEGER), 0),
                offset_bytes // 512, size_bytes, CASE op WHEN 'read' THEN 'r' ELSE 'w' END, time_ns / 1e9)
                FROM {src} ORDER BY n""",
            "",
            out,
        )
    elif fmt == "alibaba":
        _lines(
            con,
            f"""SELECT printf('%s,%s,%d,%d,%d', device, CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
                offset_bytes, size_bytes, time_ns // 1000) FROM {src} ORDER BY n""",
            "",
            out,
        )
    elif fmt == "tencent":
        _lines(
            con,
            f"""SELECT printf('%d,%d,%d,%d,%s', ({base} + time_ns) // 1000000000, offset_bytes // 512,
                size_bytes // 512, CASE op WHEN 'read' THEN 0 ELSE 1 END, device) FROM {src} ORDER BY n""",
            "",
            out,
        )
    elif fmt == "fiu":
        _lines(
            con,
            f"""SELECT printf('%d %d %s %d %d %s %d %d %s', time_ns, 1000 + n % 7, coalesce(process, 'unknown'),
                offset_bytes // 512, size_bytes // 512, CASE op WHEN 'read' THEN 'R' ELSE 'W' END, {maj}, {mnr},
                md5(CAST(n AS VARCHAR))) FROM {src} ORDER BY n""",
            "",
            out,
        )
    elif fmt == "systor":
        _lines(
            con,
            f"""SELECT printf('%.6f,%s,%s,%d,%d,%d', ({base} + time_ns) / 1e9,
                CASE WHEN latency_us IS NULL THEN '' ELSE printf('%.6f', latency_us / 1e6) END,
                CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
                coalesce(TRY_CAST(regexp_extract(device, '(\\d+)$', 1) AS INTEGER), 0),
                offset_bytes, size_bytes) FROM {src} ORDER BY n""",
            "",
            out,
            header="Timestamp,Response,IOType,LUN,Offset,Size",
        )
    elif fmt == "disksim":
        _lines(
            con,
            f"""SELECT printf('%.6f %d %d %d %d', time_ns / 1e6,
                coalesce(TRY_CAST(regexp_extract(device, '(\\d+)$', 1) AS INTEGER), 0),
                offset_bytes // 512, size_bytes // 512, CASE op WHEN 'read' THEN 1 ELSE 0 END)
                FROM {src} ORDER BY n""",
            "",
            out,
        )
    elif fmt == "cloudphysics":
        # SCSI READ(10)/WRITE(10) opcodes, time in µs (libCacheSim's unit), lbn in 512 B sectors.
        _lines(
            con,
            f"""SELECT printf('1,%d,%s,%d,%d', time_ns // 1000, CASE op WHEN 'read' THEN '28' ELSE '2a' END,
                size_bytes, offset_bytes // 512) FROM {src} ORDER BY n""",
            "",
            out,
            header="version,time,op,size,lbn",
        )


def _biosnoop(con, table: TraceTable, src: str, out: Path) -> None:
    if not table.has_latency:
        raise IolabError(f"{table.path}: biosnoop needs response times (LAT); this trace has none.")
    # As bcc prints it (one line per completion, in completion order) but LAT to 1 µs, not
    # bcc's 10 µs: the issue time is TIME - LAT, and 10 µs steps would reorder close IOs.
    _lines(
        con,
        f"""SELECT printf('%-11.6f %-14.14s %-7d %-9s %1s %-10d %-7d %7.3f',
            (time_ns + latency_us * 1000) / 1e9, coalesce(process, 'unknown'), 1000 + n % 7,
            replace(device, ' ', '_'), CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
            offset_bytes // 512, size_bytes, latency_us / 1000)
            FROM {src} WHERE latency_us IS NOT NULL ORDER BY time_ns + latency_us * 1000, n""",
        "",
        out,
        header="TIME(s)     COMM           PID     DISK      T SECTOR     BYTES   LAT(ms)",
    )


def _event_format(con, table: TraceTable, fmt: str, src: str, out: Path, maj: int, mnr: int) -> None:
    """blkparse, tracefs and blktrace: an issue and a completion event per IO."""
    if not table.has_latency:
        raise IolabError(f"{table.path}: {fmt} needs response times to write completions; this trace has none.")
    ev = _events(src)
    if fmt == "blkparse":
        _lines(
            con,
            f"""SELECT printf('%3d,%-3d %2d %8d %5d.%09d %5d  %s %3s %d + %d [%s]',
                {maj}, {mnr}, k % 2, k, t // 1000000000, t % 1000000000, pid, act, rw, sector, nsect,
                CASE WHEN act = 'C' THEN '0' ELSE comm END) FROM ({ev}) ORDER BY t, k""",
            "",
            out,
        )
        with open(out, "a") as f:  # blkparse's summary, which the reader must skip
            f.write(
                f"CPU0 ({maj},{mnr}):\n Reads Queued:           0,        0KiB\tWrites Queued:           0,        0KiB\n"
                f"Total ({maj},{mnr}):\n Reads Queued:           0,        0KiB\n\nThroughput (R/W): 0KiB/s / 0KiB/s\n"
            )
    elif fmt == "tracefs":
        _lines(
            con,
            f"""SELECT CASE WHEN act = 'D' THEN
                printf('%16s-%-7d [%03d] ..... %6d.%06d: block_rq_issue: %d,%d %s %d () %d + %d be,0,4 [%s]',
                       comm, pid, k % 2, t // 1000000000, (t % 1000000000) // 1000, {maj}, {mnr}, rw, nsect * 512, sector, nsect, comm)
                ELSE printf('%16s-%-7d [%03d] ..s.. %6d.%06d: block_rq_complete: %d,%d %s () %d + %d be,0,4 [0]',
                       '<idle>', 0, k % 2, t // 1000000000, (t % 1000000000) // 1000, {maj}, {mnr}, rw, sector, nsect)
                END FROM ({ev}) ORDER BY t, k""",
            "",
            out,
            header="# tracer: nop",
        )
    else:
        _blktrace(con, ev, out, (maj << 20) | mnr)


def _events(src: str) -> str:
    """Issue (D) and complete (C) events with integer ns times, for the event formats."""
    return f"""
        SELECT 'D' AS act, time_ns AS t, n * 2 AS k, CASE op WHEN 'read' THEN 'R' ELSE 'W' END AS rw,
               offset_bytes // 512 AS sector, size_bytes // 512 AS nsect, coalesce(process, 'unknown') AS comm,
               1000 + n % 7 AS pid FROM {src}
        UNION ALL
        SELECT 'C', time_ns + CAST(round(latency_us * 1000) AS BIGINT), n * 2 + 1, CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
               offset_bytes // 512, size_bytes // 512, coalesce(process, 'unknown'), 1000 + n % 7
        FROM {src} WHERE latency_us IS NOT NULL
    """


def _fio(con, src: str, out: Path, v3: bool) -> None:
    files = [r[0] for r in con.execute(f"SELECT DISTINCT device FROM {src} ORDER BY 1").fetchall()]
    if v3:
        head = "\n".join(["fio version 3 iolog"] + [f"0 {d} add" for d in files] + [f"0 {d} open" for d in files])
        _lines(
            con,
            f"""SELECT printf('%d %s %s %d %d', time_ns // 1000, device, op, offset_bytes, size_bytes)
                FROM {src} ORDER BY n""",
            "",
            out,
            header=head,
        )
    else:
        # v2 has no clock: a `wait` line (µs) before each IO that comes later than the last.
        head = "\n".join(["fio version 2 iolog"] + [f"{d} add" for d in files] + [f"{d} open" for d in files])
        _lines(
            con,
            f"""SELECT CASE WHEN gap > 0 THEN printf('%s wait %d 0', device, gap) || chr(10) ELSE '' END
                || printf('%s %s %d %d', device, op, offset_bytes, size_bytes)
                FROM (SELECT *, time_ns // 1000 - coalesce(lag(time_ns // 1000) OVER (ORDER BY n), 0) AS gap FROM {src})
                ORDER BY n""",
            "",
            out,
            header=head,
        )


def _vscsi(con, src: str, out: Path) -> None:
    """Version 2 records (with rt), ts and rt in µs."""
    from iolab.traces.vscsi import V2

    rows = con.execute(f"SELECT time_ns, op, offset_bytes, size_bytes, latency_us FROM {src} ORDER BY n").fetchnumpy()
    recs = np.zeros(len(rows["time_ns"]), dtype=V2)
    recs["cmd"] = np.where(rows["op"] == "read", 0x28, 0x2A)
    recs["ver"] = 2 << 8
    recs["sn"] = np.arange(len(recs))
    recs["len"] = rows["size_bytes"]
    recs["lbn"] = rows["offset_bytes"] // 512
    recs["ts"] = rows["time_ns"] // 1000
    lat = rows["latency_us"]
    recs["rt"] = np.where(np.isnan(lat), 0, np.round(lat)) if lat.dtype.kind == "f" else 0
    out.write_bytes(recs.tobytes())


def _blktrace(con, ev: str, out: Path, dev: int) -> None:
    rows = con.execute(f"SELECT act, t, rw, sector, nsect, pid, comm FROM ({ev}) ORDER BY t, k").fetchnumpy()
    n = len(rows["t"])
    dt = record_dtype("<")
    recs = np.zeros(n, dtype=dt)
    issue = rows["act"] == "D"
    write = rows["rw"] == "W"
    cat = np.where(write, TC_WRITE, TC_READ) | np.where(issue, 1 << 6, 1 << 7)
    recs["magic"] = MAGIC | VERSION
    recs["sequence"] = np.arange(n)
    recs["time"] = rows["t"]
    recs["sector"] = rows["sector"]
    recs["bytes"] = rows["nsect"] * 512
    recs["action"] = (cat.astype(np.uint32) << 16) | np.where(issue, TA_ISSUE, TA_COMPLETE)
    recs["pid"] = rows["pid"]
    recs["device"] = dev
    # One 'process' notify record (with the name as payload) per pid, up front, as blktrace does.
    with open(out, "wb") as f:
        pids = sorted(set(zip(rows["pid"].tolist(), rows["comm"].tolist())))
        for pid, comm in pids:
            name = comm.encode()[:15] + b"\0"
            note = np.zeros(1, dtype=dt)
            note["magic"] = MAGIC | VERSION
            note["action"] = (TC_NOTIFY << 16) | 0
            note["pid"] = pid
            note["device"] = dev
            note["pdu_len"] = len(name)
            f.write(note.tobytes() + name)
        f.write(recs.tobytes())
