"""CloudPhysics vSCSI binary traces (the `.vscsi` files libCacheSim reads) -> the IO table.

A file is fixed-size records in the tracing machine's byte order (little-endian: x86).
libCacheSim's reader (traceReader/customizedReader/vscsi.h) gives two layouts:

    version 1, 32 B:  u32 sn   u32 len   u32 nSG   u16 cmd   u16 ver   u64 lbn   u64 ts
    version 2, 40 B:  u16 cmd  u16 ver   u32 sn    u32 len   u32 nSG   u64 lbn   u64 ts   u64 rt

`ver >> 8` is the version (libCacheSim tells the layout by the first two records); `cmd`
is the SCSI opcode (0x28/0x88 read, 0x2a/0x8a write); `len` is bytes; `lbn` is 512 B
sectors; `ts` is µs (libCacheSim divides it by 10^6 for seconds). `rt`, the response time of
version 2, has no documented unit: it is read in the same unit as `ts` (a note says so).
The time unit can be overridden like the CSV form's (`--time-unit`).

Records are fixed-size, so a bad record (wrong version byte, value out of range) can be
skipped with `skip_bad_lines`, unlike blktrace's variable-length stream.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iolab.core.errors import IolabError
from iolab.traces import timeunit
from iolab.traces.formats.delimited import scsi_op_sql
from iolab.traces.registry import UnitRule
from iolab.traces.table import IMPORT_MEMORY, BadLine, TraceTable, connect, refuse_bad_input, write_table
from iolab.traces.textscan import MAX_BYTES, MAX_LATENCY_US, MAX_SECTORS, MAX_TIME_NS

V1 = np.dtype(
    [("sn", "<u4"), ("len", "<u4"), ("nsg", "<u4"), ("cmd", "<u2"), ("ver", "<u2"), ("lbn", "<u8"), ("ts", "<u8")]
)
V2 = np.dtype(
    [
        ("cmd", "<u2"),
        ("ver", "<u2"),
        ("sn", "<u4"),
        ("len", "<u4"),
        ("nsg", "<u4"),
        ("lbn", "<u8"),
        ("ts", "<u8"),
        ("rt", "<u8"),
    ]
)
LAYOUTS = {1: V1, 2: V2}
_PROBE = 2  # records checked to tell the version, as libCacheSim does


def vscsi_version(head: bytes) -> int | None:
    """1 or 2 when the first records of `head` carry that version byte, else None."""
    for version in (2, 1):
        dt = LAYOUTS[version]
        if len(head) < dt.itemsize * _PROBE:
            continue
        recs = np.frombuffer(head[: dt.itemsize * _PROBE], dtype=dt)
        if ((recs["ver"] >> 8) == version).all():
            return version
    return None


def read_vscsi(path: Path) -> tuple[np.ndarray, int, list[BadLine], int]:
    """Good records, the version, examples of bad records, and how many were bad."""
    data = path.read_bytes()
    version = vscsi_version(data)
    if version is None:
        raise IolabError(
            f"{path}: record 1: field ver: expected version byte 1 or 2 in the first {_PROBE} records "
            "(libCacheSim's vSCSI layouts); this is not a vSCSI binary trace."
        )
    dt = LAYOUTS[version]
    n = len(data) // dt.itemsize
    recs = np.frombuffer(data[: n * dt.itemsize], dtype=dt)
    checks = [
        ((recs["ver"] >> 8) != version, f"field ver: expected version {version} like the first records"),
        (recs["ts"] > MAX_TIME_NS // 1000, "field ts: out of range (more than 126 years once in ns)"),
        (recs["lbn"] > MAX_SECTORS, "field lbn: out of range (0 to 1 EiB once in bytes)"),
        (recs["len"] > MAX_BYTES, "field len: out of range"),
    ]
    if version == 2:
        checks.append((recs["rt"] > MAX_LATENCY_US, "field rt: out of range (0 to 31 years)"))
    bad = np.zeros(n, dtype=bool)
    why = np.full(n, -1)
    for k, (mask, _) in enumerate(checks):
        why[mask & ~bad] = k
        bad |= mask
    examples = [BadLine(str(path), int(i) + 1, checks[int(why[i])][1], "") for i in np.flatnonzero(bad)[:5]]
    n_bad = int(bad.sum())
    tail = len(data) - n * dt.itemsize
    if tail:
        examples.append(
            BadLine(str(path), n + 1, f"truncated record: {tail} bytes left, a record needs {dt.itemsize}", "")
        )
        n_bad += 1
    return recs[~bad], version, examples, n_bad


def _time_unit(files: list[Path], recs: list[np.ndarray], time_unit: str | None, unit: UnitRule) -> timeunit.TimeUnit:
    """The unit given, or recorded by iolab's export, or else guessed from the first records'
    times and sizes."""
    if time_unit:
        return timeunit.given(time_unit, "vscsi")
    found = timeunit.recorded(files, "vscsi")
    if found is not None:
        return found
    ts = np.concatenate([r["ts"][:200_000] for r in recs]).astype(float)
    sizes = np.concatenate([r["len"][:200_000] for r in recs]).astype(float)
    return timeunit.detect(ts, False, unit.default, "vscsi", sizes=sizes, whole=unit.whole)


def import_vscsi(
    files: list[Path],
    out: str | Path,
    skip_bad_lines: bool = False,
    notes: tuple[str, ...] = (),
    time_unit: str | None = None,
    unit: UnitRule = UnitRule("us"),
) -> TraceTable:
    """Import vSCSI files; `unit` is the format's time-unit rule (formats/vscsi.py)."""
    loaded = [(f, *read_vscsi(f)) for f in files]
    skipped = 0
    examples: list[BadLine] = []
    for _f, _, _, bad, n_bad in loaded:
        if n_bad and not skip_bad_lines:
            raise refuse_bad_input(
                bad[0],
                n_bad,
                ". Pass --skip-bad-lines to drop bad records (they are counted and reported).",
                "more bad records",
                record=True,
            )
        skipped += n_bad
        examples += bad[: max(0, 5 - len(examples))]
    tu = _time_unit(files, [r for _, r, *_ in loaded], time_unit, unit)
    notes = notes + (f"time unit: {tu.unit} ({tu.reason}).",)
    if any(v == 2 for _, _, v, *_ in loaded):
        notes += ("vSCSI rt (response time) read in the unit of ts (its unit is not documented).",)
    con = connect(memory_limit=IMPORT_MEMORY)
    try:
        parts = []
        for i, (_f, r, version, _, _) in enumerate(loaded):
            if not len(r):
                continue
            # Python ints: ts × unit can pass 2^63 before the range check below.
            cols = {
                "ord": np.arange(len(r), dtype=np.int64) + i * 10_000_000_000_000,
                "ts": r["ts"].astype(np.int64),
                "cmd": (r["cmd"] & 0xFF).astype(np.int64),
                "lbn": r["lbn"].astype(np.int64),
                "len": r["len"].astype(np.int64),
            }
            if version == 2:
                cols["rt"] = r["rt"].astype(np.float64)
            con.register(f"v{i}", cols)
            lat = f"rt * {tu.ns} / 1000.0" if version == 2 else "CAST(NULL AS DOUBLE)"
            parts.append(
                f"SELECT CAST(ts AS HUGEINT) * {tu.ns} AS time_ns, 'vscsi' AS device, {scsi_op_sql('cmd')} AS op,"
                f" lbn * 512 AS offset_bytes, len AS size_bytes, CAST(NULL AS VARCHAR) AS process, {lat} AS latency_us,"
                f" ord FROM v{i}"
            )
        if not parts:
            raise IolabError(f"{', '.join(map(str, files))}: no IOs found in this vscsi trace; nothing to import.")
        union = " UNION ALL ".join(f"({p})" for p in parts)
        too_far = con.execute(
            f"SELECT count(*) FROM ({union}) WHERE time_ns > {MAX_TIME_NS} OR latency_us > {MAX_LATENCY_US}"
        ).fetchall()[0][0]
        if too_far:
            raise IolabError(
                f"{files[0]}: {too_far:,} records have ts beyond 126 years or rt beyond 31 years once "
                f"read as {tu.unit}; check --time-unit."
            )
        union = f"SELECT * REPLACE (CAST(time_ns AS BIGINT) AS time_ns) FROM ({union})"
        return write_table(
            con,
            union,
            out,
            fmt="vscsi",
            sources=tuple(str(f) for f in files),
            skipped_lines=skipped,
            skipped_examples=tuple(examples),
            notes=notes,
        )
    finally:
        con.close()


def write_vscsi(con, src: str, out: Path) -> None:
    """Version 2 records (with rt), ts and rt in µs, from an export's rows `src` (writers.py);
    version 1 records (no rt) for a table without response times, which version 2 would give
    as 0 µs each: read back, a trace 'with response times' of IOs that took no time."""
    rows = con.execute(f"SELECT time_ns, op, offset_bytes, size_bytes, latency_us FROM {src} ORDER BY n").fetchnumpy()
    # duckdb gives a column with NULLs as a masked array: a missing response time is masked or NaN
    lat = np.ma.getdata(rows["latency_us"]).astype(float)
    missing = np.ma.getmaskarray(rows["latency_us"]) | np.isnan(lat)
    timed = not missing.all()
    version = 2 if timed else 1
    recs = np.zeros(len(rows["time_ns"]), dtype=LAYOUTS[version])
    recs["cmd"] = np.where(rows["op"] == "read", 0x28, 0x2A)
    recs["ver"] = version << 8
    recs["sn"] = np.arange(len(recs))
    recs["len"] = rows["size_bytes"]
    recs["lbn"] = rows["offset_bytes"] // 512
    recs["ts"] = rows["time_ns"] // 1000
    if timed:
        recs["rt"] = np.where(missing, 0, np.round(np.where(missing, 0, lat)))
    out.write_bytes(recs.tobytes())
