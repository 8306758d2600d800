"""Decoding tracefs ring-buffer pages (what `capture` records) from hand-built pages.

The layout files in tests/fixtures/tracefs_raw were copied from a Linux 6.18 x86_64
tracefs (events/header_page, header_event, block/block_rq_{issue,complete}/format). The
pages are built here byte by byte as kernel/trace/ring_buffer.c writes them, with each
kind of entry: plain records, a record too long for type_len (type 0), a discarded event
(padding, whose delta counts), a time extend, an absolute time stamp, an empty-rest
padding, and a page that says events were lost before it.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import duckdb
import pytest

from iolab.core.errors import IolabError
from iolab.traces import TraceTable
from iolab.traces.tracefs_raw import import_tracefs_raw, read_layout

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tracefs_raw"
PAGE = 4096
ISSUE, COMPLETE = 2104, 2107  # the IDs in the fixture format files
DEV = (7 << 20) | 3  # "7,3"


def issue(pid: int, sector: int, nsect: int, rwbs: bytes, comm: bytes, cmd: bytes = b"") -> bytes:
    rec = struct.pack(
        "<HBBiIIQIIH10s16sI",
        ISSUE,
        0,
        0,
        pid,
        DEV,
        0,
        sector,
        nsect,
        nsect * 512,
        0,
        rwbs,
        comm,
        (len(cmd) + 1) << 16 | 64,
    )
    return rec + cmd + b"\0"


def complete(sector: int, nsect: int, rwbs: bytes) -> bytes:
    rec = struct.pack("<HBBiIIQIiH10sI", COMPLETE, 0, 0, 0, DEV, 0, sector, nsect, 0, 0, rwbs, 1 << 16 | 48)
    return rec + b"\0"


def event(rec: bytes, delta: int) -> bytes:
    body = rec + b"\0" * (-len(rec) % 4)
    if len(body) <= 112:
        return struct.pack("<I", delta << 5 | len(body) // 4) + body
    return struct.pack("<II", delta << 5, len(body) + 4) + body  # type_len 0: the length comes first


def padding(delta: int, length: int) -> bytes:
    """A discarded event: the next entry starts 4 + length bytes on."""
    return struct.pack("<II", delta << 5 | 29, length) + b"\xee" * (length - 4)


def extend(delta: int) -> bytes:
    return struct.pack("<II", (delta & (1 << 27) - 1) << 5 | 30, delta >> 27)


def absolute(ts: int) -> bytes:
    return struct.pack("<II", (ts & (1 << 27) - 1) << 5 | 31, (ts >> 27) & 0xFFFFFFFF)


def page(ts: int, entries: list[bytes], lost: int | None = None) -> bytes:
    data = b"".join(entries)
    commit = len(data)
    tail = b""
    if lost is not None:
        commit |= 1 << 31 | 1 << 30
        tail = struct.pack("<Q", lost)
    out = struct.pack("<QQ", ts, commit) + data + tail
    return out + b"\0" * (PAGE - len(out))


@pytest.fixture
def raw(tmp_path) -> Path:
    d = tmp_path / "cap.parquet.tracefs"
    shutil.copytree(FIXTURES, d)
    return d


def rows(table: TraceTable) -> list[tuple]:
    return duckdb.sql(
        f"SELECT time_ns, device, op, offset_bytes, size_bytes, process, pid, latency_us FROM {table.scan_sql()} ORDER BY time_ns"
    ).fetchall()


def test_every_kind_of_entry_decodes_to_the_ios(raw, tmp_path):
    cmd = b"12 34 56 " * 8  # a passthrough command: the record outgrows type_len (> 112 bytes)
    big = (1 << 27) + 5  # too large for a 27-bit delta: written as a time extend
    cpu0 = page(
        1_000_000,
        [
            event(issue(100, 8, 8, b"R", b"fio"), 0),  # t = 1.000 ms
            event(complete(8, 8, b"R"), 25_000),  # t = 1.025 ms
            padding(3_000, 68),  # a discarded event at 1.028 ms: its delta counts
            event(issue(100, 64, 16, b"WS", b"fio"), 2_000),  # 1.030 ms
            extend(big),
            event(complete(64, 16, b"WS"), 0),  # 1.030 ms + big
        ],
    ) + page(
        5_000_000_000,
        [
            event(issue(55, 1000, 2048, b"DS", b"fstrim"), 0),  # 5 s
            absolute(5_000_100_000),
            event(complete(1000, 2048, b"DS"), 0),  # 5.0001 s
            event(complete(4096, 8, b"R"), 900),  # 5.0001009 s: completes the issue from cpu1
        ],
        lost=7,
    )
    cpu1 = page(
        2_000_000,
        [
            event(issue(7, 4096, 8, b"R", b"kworker/1:1", cmd), 0),  # 2 ms
            event(issue(7, 9000, 8, b"R", b"kworker/1:1"), 50),  # 2.00005 ms
            event(complete(9000, 8, b"R"), 10_000),
            struct.pack("<II", 29, 40),  # padding with no delta: the rest of the page is empty
        ],
    )
    (raw / "cpu0.raw").write_bytes(cpu0)
    (raw / "cpu1.raw").write_bytes(cpu1 + b"\x01" * 100)  # and a torn partial page

    t = import_tracefs_raw(raw, tmp_path / "t.parquet", clock_unix_ns=1_700_000_000_000_000_000)
    assert rows(t) == [
        (0, "7,3", "read", 8 * 512, 4096, "fio", 100, 25.0),
        (30_000, "7,3", "write", 64 * 512, 8192, "fio", 100, big / 1000),
        (1_000_000, "7,3", "read", 4096 * 512, 4096, "kworker/1:1", 7, (5_000_100_900 - 2_000_000) / 1000),
        (1_000_050, "7,3", "read", 9000 * 512, 4096, "kworker/1:1", 7, 10.0),
        (4_999_000_000, "7,3", "trim", 1000 * 512, 2048 * 512, "fstrim", 55, 100.0),
    ]
    assert t.fmt == "tracefs-raw" and t.start_unix_ns == 1_700_000_000_000_000_000 + 1_000_000
    # The second page says 7 events were overwritten before it: stored, and said loudly.
    assert t.lost_events == 7 and TraceTable.open(t.path).lost_events == 7
    assert t.notes[0].startswith("INCOMPLETE TRACE: the kernel dropped 7 trace events")
    assert any("cpu1.raw: ends with 100 bytes of a partial page" in n for n in t.notes)


def test_capture_count_wins_when_larger_and_a_complete_trace_says_zero(raw, tmp_path):
    (raw / "cpu0.raw").write_bytes(page(10, [event(issue(1, 0, 8, b"R", b"dd"), 0), event(complete(0, 8, b"R"), 10)]))
    assert import_tracefs_raw(raw, tmp_path / "a.parquet").lost_events == 0
    t = import_tracefs_raw(raw, tmp_path / "b.parquet", lost_events=1234)
    assert t.lost_events == 1234 and "dropped 1,234 trace events" in t.notes[0]


def test_page_size_comes_from_header_page(raw, tmp_path):
    """A 64 KiB sub-buffer (buffer_subbuf_size_kb = 64) is one page of 65536 bytes."""
    text = (raw / "header_page").read_text().replace("size:4080", "size:65520")
    (raw / "header_page").write_text(text)
    assert read_layout(raw).page_size == 65536
    p = page(10, [event(issue(1, 0, 8, b"R", b"dd"), 0), event(complete(0, 8, b"R"), 10)])
    (raw / "cpu0.raw").write_bytes(p + b"\0" * (65536 - PAGE))
    assert rows(import_tracefs_raw(raw, tmp_path / "t.parquet")) == [(0, "7,3", "read", 0, 4096, "dd", 1, 0.01)]


def test_bad_pages_and_missing_layout_are_refused(raw, tmp_path):
    bad = struct.pack("<QQ", 0, 5000) + b"\0" * (PAGE - 16)  # commit larger than a page
    (raw / "cpu0.raw").write_bytes(bad)
    with pytest.raises(IolabError, match="commit says 5000 bytes of data, a page holds 4080"):
        import_tracefs_raw(raw, tmp_path / "t.parquet")
    (raw / "block_rq_issue.format").unlink()
    with pytest.raises(IolabError, match="cannot read the trace layout"):
        import_tracefs_raw(raw, tmp_path / "t.parquet")
    assert not (tmp_path / "t.parquet").exists()


def test_rwbs_flags_map_as_the_text_formats_do():
    """The raw pages' rwbs bytes map as events.RWBS_OP_SQL: an empty pre-flush is a flush, a
    pre-flush or FUA write with data a write (an empty pre-flush was a 0-byte write, dropped)."""
    import numpy as np

    from iolab.traces.tracefs_raw import OPS, _rwbs_op

    flags = ["FWS", "FWS", "WFS", "R", "D", "FF", "N"]
    nsect = np.array([0, 8, 8, 8, 8, 0, 0])
    rwbs = np.array([list(f.ljust(8, "\0").encode()) for f in flags], dtype=np.uint8)
    assert [OPS[i] for i in _rwbs_op(rwbs, nsect)] == ["flush", "write", "write", "read", "trim", "flush", "other"]
