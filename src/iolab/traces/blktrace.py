"""blktrace binary files (dev.blktrace.N) -> the normalised IO table.

A file is a stream of 48-byte `struct blk_io_trace` records (blktrace_api.h), each followed
by `pdu_len` bytes:

    u32 magic (0x65617400 | version 7)   u32 sequence   u64 time (ns)   u64 sector
    u32 bytes   u32 action   u32 pid   u32 device (dev_t: major << 20 | minor)
    u32 cpu     u16 error    u16 pdu_len

The low 16 bits of `action` say what happened (7 = issue to the driver, 8 = complete), the
high 16 bits are category flags (read, write, discard, notify, pc, ...). Records are in the
tracing machine's byte order; the magic tells which. Issue and complete records are paired
as in events.py; process names come from the 'process' notify records blktrace writes for
every pid it sees.

Records are decoded with numpy, many at a time: a window of records is viewed as an array
and accepted up to the first one with a payload (pdu), whose length says where the next
record starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np

from iolab.core.errors import IolabError
from iolab.traces.events import paired_sql
from iolab.traces.table import IMPORT_MEMORY, BadLine, TraceTable, connect, refuse_bad_input, write_table
from iolab.traces.textscan import MAX_SECTORS, MAX_TIME_NS

MAGIC = 0x65617400
VERSION = 0x07
RECORD = 48

TA_ISSUE, TA_COMPLETE = 7, 8
TC_READ, TC_WRITE, TC_FLUSH, TC_NOTIFY, TC_PC, TC_DISCARD = 1 << 0, 1 << 1, 1 << 2, 1 << 10, 1 << 9, 1 << 13
TN_PROCESS = 0


def record_dtype(order: Literal["<", ">"]) -> np.dtype:
    return np.dtype(
        [
            ("magic", "u4"),
            ("sequence", "u4"),
            ("time", "u8"),
            ("sector", "u8"),
            ("bytes", "u4"),
            ("action", "u4"),
            ("pid", "u4"),
            ("device", "u4"),
            ("cpu", "u4"),
            ("error", "u2"),
            ("pdu_len", "u2"),
        ]
    ).newbyteorder(order)


def read_records(path: Path) -> tuple[np.ndarray, dict[int, str], BadLine | None]:
    """All records of one file, the pid -> process name map, and a truncated tail if any."""
    data = np.fromfile(path, dtype=np.uint8)
    if len(data) < RECORD:
        raise IolabError(f"{path}: {len(data)} bytes is too short for a blktrace file (records are {RECORD} bytes).")
    for order in ("<", ">"):
        dt = record_dtype(order)
        first = np.frombuffer(data[:RECORD].tobytes(), dtype=dt)[0]
        if int(first["magic"]) & 0xFFFFFF00 == MAGIC:
            break
    else:
        raise IolabError(
            f"{path}: record 1 (byte 0): field magic: expected 0x{MAGIC | VERSION:08x} in either byte order, "
            f"got 0x{int.from_bytes(data[:4].tobytes(), 'little'):08x}. This is not a blktrace binary file."
        )
    parts: list[np.ndarray] = []
    names: dict[int, str] = {}
    pos, n_rec, window = 0, 0, 1 << 16
    tail: BadLine | None = None
    buf = data.tobytes()
    while pos < len(buf):
        count = min(window, (len(buf) - pos) // RECORD)
        if count == 0:
            tail = BadLine(
                str(path), int(n_rec) + 1, f"truncated record: {len(buf) - pos} bytes left, a record needs {RECORD}", ""
            )
            break
        recs = np.frombuffer(buf, dtype=dt, count=count, offset=pos)
        magic = recs["magic"]
        bad_magic = np.flatnonzero((magic & 0xFFFFFF00) != MAGIC)
        has_pdu = np.flatnonzero(recs["pdu_len"] != 0)
        stop = min(bad_magic[0] if len(bad_magic) else count, has_pdu[0] if len(has_pdu) else count)
        if len(bad_magic) and bad_magic[0] == stop:
            i = int(stop)
            raise IolabError(
                f"{path}: record {n_rec + i + 1} (byte {pos + i * RECORD}): field magic: expected "
                f"0x{MAGIC | VERSION:08x}, got 0x{int(magic[i]):08x}. The file is corrupt or not a blktrace "
                "file; blktrace binary cannot be resynchronised, so --skip-bad-lines does not apply."
            )
        if stop < count:  # record `stop` carries a payload: take it, then skip the payload
            pdu = int(recs["pdu_len"][stop])
            end = pos + (stop + 1) * RECORD + pdu
            if end > len(buf):
                parts.append(recs[:stop])
                tail = BadLine(str(path), int(n_rec + stop) + 1, f"truncated payload: needs {pdu} bytes", "")
                break
            r = recs[stop]
            if (int(r["action"]) >> 16) & TC_NOTIFY and int(r["action"]) & 0xFFFF == TN_PROCESS:
                raw = buf[pos + (stop + 1) * RECORD : end]
                names[int(r["pid"])] = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
            parts.append(recs[: stop + 1])
            n_rec += stop + 1
            pos = end
            window = max(64, 4 * int(stop))  # payloads are frequent here: look less far ahead
        else:
            parts.append(recs)
            n_rec += count
            pos += count * RECORD
            window = min(window * 2, 1 << 20)
    recs = np.concatenate(parts) if parts else np.empty(0, dtype=dt)
    versions = np.unique(recs["magic"] & 0xFF)
    if len(versions) and (versions != VERSION).any():
        raise IolabError(
            f"{path}: blktrace record version {', '.join(hex(v) for v in versions)}; iolab reads version "
            f"0x{VERSION:02x} (struct blk_io_trace). Re-record with a matching blktrace."
        )
    return recs, names, tail


def import_blktrace(
    files: list[Path],
    out: str | Path,
    skip_bad_lines: bool = False,
    notes: tuple[str, ...] = (),
    lost_events: int | None = None,
) -> TraceTable:
    """Import the per-CPU files of one blktrace run."""
    con = connect(memory_limit=IMPORT_MEMORY)
    try:
        parts = []
        skipped, examples = 0, []
        for i, f in enumerate(files):
            n_bad, bad = _load_events(con, i, f, skip_bad_lines)
            skipped += n_bad
            examples += bad
            parts.append(f"SELECT * FROM e{i}")
        # blktrace writes one file per CPU and a completion often lands on another CPU than
        # its issue, so the events of all files are paired together.
        union = paired_sql(" UNION ALL ".join(parts))
        unpaired = con.execute(f"SELECT count(*) FROM ({union}) WHERE latency_us IS NULL").fetchall()[0][0]
        if unpaired:
            notes = notes + (f"{unpaired:,} issued IOs have no completion in the trace (no response time).",)
        return write_table(
            con,
            union,
            out,
            fmt="blktrace",
            sources=tuple(str(f) for f in files),
            skipped_lines=skipped,
            skipped_examples=tuple(examples),
            notes=notes,
            lost_events=lost_events,
        )
    finally:
        con.close()


def _load_events(con, i: int, f: Path, skip_bad_lines: bool) -> tuple[int, list[BadLine]]:
    """Read file `i` into temp table e{i} (events.EVENT_COLUMNS): its issue and complete
    records with process names. Returns the bad records skipped (a cut last record, values
    out of range) and examples of them; without `skip_bad_lines` the first one is refused."""
    skipped, examples = 0, []
    recs, names, tail = read_records(f)
    if tail is not None:
        if not skip_bad_lines:
            raise refuse_bad_input(
                tail,
                1,
                ". The file ends mid-record (blktrace stopped abruptly?); pass "
                "--skip-bad-lines to drop the incomplete record.",
                record=True,
            )
        skipped += 1
        examples.append(tail)
    what = recs["action"] & 0xFFFF
    cat = recs["action"] >> 16
    keep = ((what == TA_ISSUE) | (what == TA_COMPLETE)) & ((cat & (TC_NOTIFY | TC_PC)) == 0)
    # Out-of-range values would overflow once in ns and bytes: bad records, named.
    wild = keep & ((recs["time"] > MAX_TIME_NS) | (recs["sector"] > MAX_SECTORS))
    if wild.any():
        k = int(np.flatnonzero(wild)[0])
        field = "time" if recs["time"][k] > MAX_TIME_NS else "sector"
        bad = BadLine(str(f), k + 1, f"field {field}: out of range ({int(recs[field][k])})", "")
        if not skip_bad_lines:
            raise refuse_bad_input(
                bad,
                int(wild.sum()),
                "; pass --skip-bad-lines to drop such records (they are counted and reported).",
                record=True,
            )
        skipped += int(wild.sum())
        examples.append(bad)
        keep &= ~wild
    r = recs[keep]
    c = cat[keep]
    # TC_FLUSH is REQ_PREFLUSH: with no data it is a pure cache flush (events.RWBS_OP_SQL)
    flush = ((c & TC_FLUSH) != 0) & (r["bytes"] == 0)
    op = np.select(
        [(c & TC_DISCARD) != 0, flush, (c & TC_WRITE) != 0, ((c & TC_READ) != 0) & (r["bytes"] > 0)], [3, 4, 2, 1], 0
    )
    name_pids = np.array(sorted(names), dtype=np.int64)
    con.register(
        f"b{i}",
        {
            "ord": np.flatnonzero(keep).astype(np.int64) + i * 10_000_000_000_000,
            "issue": (what[keep] == TA_ISSUE),
            "time_ns": r["time"].astype(np.int64),
            "dev": r["device"].astype(np.int64),
            "opc": op.astype(np.int8),
            "sector": r["sector"].astype(np.int64),
            "nsect": (r["bytes"] // 512).astype(np.int64),
            "pid": r["pid"].astype(np.int64),
        },
    )
    con.register(f"n{i}", {"pid": name_pids, "comm": np.array([names[p] for p in name_pids.tolist()], dtype=object)})
    con.execute(
        f"CREATE TEMP TABLE e{i} AS SELECT ord, CASE WHEN issue THEN 'issue' ELSE 'complete' END AS kind,"
        " time_ns, (dev >> 20) || ',' || (dev & 1048575) AS device,"
        " ['other', 'read', 'write', 'trim', 'flush'][opc + 1] AS op, sector, nsect,"
        f" CASE WHEN issue THEN n.comm END AS process, CASE WHEN issue THEN pid END AS pid FROM b{i} LEFT JOIN n{i} n USING (pid)"
    )
    return skipped, examples


def write_blktrace(con, ev: str, out: Path, dev: int) -> None:
    """Issue and complete records (one 'process' notify record per pid first, as blktrace
    writes them) from an export's events `ev` (events.export_events_sql)."""
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
