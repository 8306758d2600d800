"""Importers: a synthetic trace with known streams survives every format, and bad lines are
reported with file:line and the field (or skipped and counted)."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from iolab.core.errors import IolabError
from iolab.core.workload import Stream
from iolab.traces import detect_format, export_trace, formats, import_trace
from iolab.traces.analysis.streams import analyse
from iolab.traces.analysis.streamstats import SeqRule
from iolab.traces.blktrace import read_records, record_dtype
from iolab.traces.synth import SynthSpec, generate
from iolab.traces.table import CORE_COLUMNS

MIX = (
    Stream("rnd", "read", 4096, 0.5),
    Stream("seq", "write", 65536, 0.3),
    Stream("rnd", "write", 8192, 0.15),
    Stream("seq", "read", 131072, 0.05),
)
# Every writer of every registered format, and the format each reads back as.
EXPORTS = formats.writer_names()
READER = {w: formats.writer(w)[0].name for w in EXPORTS}  # type: ignore[index]
WITH_LATENCY = {f.name for f in formats.all_formats() if f.latency}


# The SEQ 128KiB R stream is 1 read in 11: looking back far enough that it never loses
# track (the default 64 would misfile the odd one that follows more than 64 other reads).
RULE = SeqRule(lookback=256)


def analyse_(table):
    return analyse(table, step_s=0.5, seq=RULE)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    table, truth = generate(SynthSpec(MIX, 4000, iops=2000, latency_us=300, seed=7), d / "t.parquet")
    return table, truth, analyse_(table)


def counts(a):
    return {(s.access, s.op, s.block_size): s.ios for s in a.streams}


@pytest.mark.parametrize("fmt", formats.reader_names())
def test_every_format_is_round_tripped_or_sampled(fmt, tmp_path):
    """A format with a writer is round-tripped below; one without (a writer is optional)
    declares sample lines, which must be detected as it and import."""
    spec = formats.get(fmt)
    assert spec is not None
    if spec.writers:
        assert all(READER[w.name] == fmt for w in spec.writers)
        return
    p = tmp_path / "sample"
    p.write_text("\n".join(spec.sample) + "\n")
    assert detect_format(p) == fmt
    assert import_trace(p, fmt, tmp_path / "t.parquet").rows == len(spec.sample) - spec.sample_head


@pytest.mark.parametrize("fmt", EXPORTS)
def test_round_trip_keeps_streams(fmt, synthetic, tmp_path):
    table, truth, base = synthetic
    path = export_trace(table, fmt, tmp_path / f"trace.{fmt}")
    got = import_trace(path, READER.get(fmt, fmt), tmp_path / "back.parquet")
    assert got.rows == truth.total
    a = analyse_(got)
    # The same streams, IO for IO, as the analysis of the original table...
    assert counts(a) == counts(base)
    # ...which is the generator's truth, except the first IO of each SEQ stream (nothing
    # precedes it, so it is RND by the rule).
    for s, n in truth.counts.items():
        expected = n - 1 if s.access == "seq" else n
        assert counts(a)[(s.access, s.op, s.block_size)] == expected
    assert a.has_latency == (READER[fmt] in WITH_LATENCY)
    if READER[fmt] in WITH_LATENCY:
        mean = sum(s.rt_avg_us * s.ios for s in a.streams) / a.total_ios
        base_mean = sum(s.rt_avg_us * s.ios for s in base.streams) / base.total_ios
        assert mean == pytest.approx(base_mean, abs=1.0)  # tracefs prints µs
        assert a.oio_avg() == pytest.approx(base.oio_avg(), rel=0.01)


def test_msr_filetime_and_units(tmp_path):
    p = tmp_path / "hm_0.csv"
    p.write_text("128166372003061629,hm,0,Read,383496192,32768,41286\n128166372003161629,hm,0,Write,3584,512,1000\n")
    t = import_trace(p, "msr", tmp_path / "t.parquet")
    start = datetime.fromtimestamp(t.start_unix_ns / 1e9, tz=UTC)
    assert start.strftime("%Y-%m-%d %H:%M:%S.%f")[:23] == "2007-02-22 17:00:00.306"
    con_rows = _rows(t.path)
    assert con_rows[0] == (0, "hm_0", "read", 383496192, 32768, None, 4128.6)
    assert con_rows[1][0] == 10_000_000  # 100 000 ticks of 100 ns


def _rows(path: Path):
    import duckdb

    # stored in time order; pid and outstanding are checked in their own tests
    return duckdb.sql(f"SELECT {', '.join(CORE_COLUMNS)} FROM read_parquet('{path}')").fetchall()


def test_spc_units_and_extra_columns(tmp_path):
    p = tmp_path / "Financial1.spc"
    p.write_text("0,303567,3584,w,0.000000\n1,55590,1024,R,0.000001,extra,columns\n")
    t = import_trace(p, "spc", tmp_path / "t.parquet")
    assert _rows(t.path) == [
        (0, "asu0", "write", 303567 * 512, 3584, None, None),
        (1000, "asu1", "read", 55590 * 512, 1024, None, None),
    ]


def test_tencent_sectors_and_whole_seconds_keep_file_order(tmp_path):
    p = tmp_path / "cbs.csv"
    p.write_text("1538323200,800,8,1,1283\n1538323200,0,8,0,1283\n1538323201,8,16,0,1283\n")
    t = import_trace(p, "tencent", tmp_path / "t.parquet")
    assert _rows(t.path) == [
        (0, "1283", "write", 800 * 512, 4096, None, None),
        (0, "1283", "read", 0, 4096, None, None),
        (1_000_000_000, "1283", "read", 4096, 8192, None, None),
    ]
    assert t.start_unix_ns == 1538323200 * 10**9


def test_fiu_process_names_with_spaces(tmp_path):
    p = tmp_path / "homes.blkparse"
    p.write_text(
        "89966527176 4105 syslogd 1024 8 W 8 0 d41d8cd98f00b204e9800998ecf8427e\n"
        "89966527999 4106 my daemon 2048 16 R 8 0 0\n"
    )
    t = import_trace(p, "fiu", tmp_path / "t.parquet")
    assert _rows(t.path) == [
        (0, "8,0", "write", 1024 * 512, 4096, "syslogd", None),
        (823, "8,0", "read", 2048 * 512, 8192, "my daemon", None),
    ]


def test_systor_header_blank_iotype_and_response(tmp_path):
    p = tmp_path / "systor.csv"
    p.write_text(
        "Timestamp,Response,IOType,LUN,Offset,Size\n"
        "1486688402.000164,0.000346,R,1,4096,4096\n"
        "1486688402.000264,,,1,0,4096\n"
    )
    t = import_trace(p, "systor", tmp_path / "t.parquet")
    rows = _rows(t.path)
    assert rows[0][:5] == (0, "lun1", "read", 4096, 4096)
    assert rows[0][6] == pytest.approx(346.0)
    assert rows[1][2] == "other" and rows[1][6] is None


def test_tracefs_with_and_without_ioprio_token(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(
        "# tracer: nop\n"
        "             fio-6862    [000] .....   457.665281: block_rq_issue: 7,0 R 4096 () 31616 + 8 be,0,4 [fio]\n"
        "             fio-6862    [000]   457.665300: block_rq_issue: 7,0 WS 8192 () 100 + 16 [fio]\n"
        "     ksoftirqd/0-14      [000] ..s..   457.665351: block_rq_complete: 7,0 R () 31616 + 8 be,0,4 [0]\n"
        "CPU:1 [LOST 12 EVENTS]\n"
        "          <idle>-0       [001] d.h..   457.665400: block_rq_complete: 7,0 WS () 100 + 16 [0]\n"
        "    kworker/u8:0-12      [000] .....   457.665426: block_bio_queue: 254,0 WS 25117328 + 8 [kworker/u8:0]\n"
    )
    t = import_trace(p, "tracefs", tmp_path / "t.parquet")
    assert _rows(t.path) == [
        (0, "7,0", "read", 31616 * 512, 4096, "fio", 70.0),
        (19000, "7,0", "write", 100 * 512, 8192, "fio", 100.0),
    ]
    assert any("12 lost trace events" in n for n in t.notes)


def test_blkparse_pairs_d_and_c_and_skips_the_rest(tmp_path):
    p = tmp_path / "sdb.txt"
    p.write_text(
        "  8,16   1        1     1.427376394  5529  Q  WS 274432 + 8 [proc]\n"
        "  8,16   1        2     1.427376900  5529  G  WS 274432 + 8 [proc]\n"
        "  8,16   1        3     1.427377000  5529  D  WS 274432 + 8 [proc]\n"
        "  8,16   1        0     1.427377100     0  m   N cfq5529S / insert_request\n"
        "  8,16   0        4     1.427400000     0  C  WS 274432 + 8 [0]\n"
        "  8,16   1        5     1.500000000  5529  D   R 8 + 8 [proc]\n"
        "CPU0 (8,16):\n Reads Queued:           1,        4KiB\n"
        "Total (8,16):\n Writes Queued:           1,        4KiB\n"
    )
    t = import_trace(p, "blkparse", tmp_path / "t.parquet")
    rows = _rows(t.path)
    assert rows[0] == (0, "8,16", "write", 274432 * 512, 4096, "proc", 23.0)
    assert rows[1] == (72_623_000, "8,16", "read", 4096, 4096, "proc", None)
    assert any("no completion" in n for n in t.notes)


def test_fio_v2_time_is_the_sum_of_waits(tmp_path):
    p = tmp_path / "v2.log"
    p.write_text(
        "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n"
        "/dev/sdb wait 1500 0\n/dev/sdb write 4096 4096\n/dev/sdb wait 500 0\n/dev/sdb trim 0 4096\n"
        "/dev/sdb sync\n/dev/sdb close\n"
    )
    t = import_trace(p, "fio", tmp_path / "t.parquet")
    assert [(r[0], r[2], r[3], r[4]) for r in _rows(t.path)] == [
        (0, "read", 0, 4096),
        (1_500_000, "write", 4096, 4096),
        (2_000_000, "trim", 0, 4096),
        (2_000_000, "flush", 0, 0),
    ]


def test_gzip_input(tmp_path):
    p = tmp_path / "hm_0.csv.gz"
    with gzip.open(p, "wt") as f:
        f.write("128166372003061629,hm,0,Read,4096,4096,10\n128166372003061639,hm,0,Write,0,512,10\n")
    assert import_trace(p, "msr", tmp_path / "t.parquet").rows == 2


def test_blktrace_either_byte_order_and_truncation(synthetic, tmp_path):
    table, truth, base = synthetic
    little = export_trace(table, "blktrace", tmp_path / "sdb.blktrace.0")
    recs, names, tail = read_records(little)
    assert names and tail is None
    # The same records as a big-endian machine writes them (payload records dropped).
    big = tmp_path / "big.blktrace.0"
    plain = recs[recs["pdu_len"] == 0]
    big.write_bytes(plain.astype(record_dtype(">")).tobytes())
    t = import_trace(big, "blktrace", tmp_path / "big.parquet")
    assert counts(analyse_(t)) == counts(base)
    # A file cut mid-record: an error naming the record, or skipped and counted.
    cut = tmp_path / "cut.blktrace.0"
    cut.write_bytes(big.read_bytes()[:-20])
    with pytest.raises(IolabError, match=rf"{cut}: record {len(plain)}: truncated record"):
        import_trace(cut, "blktrace", tmp_path / "cut.parquet")
    t = import_trace(cut, "blktrace", tmp_path / "cut.parquet", skip_bad_lines=True)
    # The last record is the last IO's completion: every IO is there, one without latency.
    assert t.skipped_lines == 1 and t.rows == truth.total
    assert "1 issued IOs have no completion" in " ".join(t.notes)
    junk = tmp_path / "junk.blktrace.0"
    junk.write_bytes(np.arange(100, dtype=np.uint32).tobytes())
    with pytest.raises(IolabError, match="not a blktrace binary file"):
        import_trace(junk, "blktrace", tmp_path / "junk.parquet")


def test_a_completion_ends_one_io_the_oldest_in_flight_at_its_sector():
    """events.paired_sql: at a sector with IOs in flight at once, each completion ends the oldest
    (both issues took the first completion, 20 and 10 µs); one with none in flight (its issue
    before the trace began) ends none, and the last issue keeps no response time. A sector with
    one IO at a time is paired as before."""
    import duckdb

    from iolab.traces.events import paired_sql

    rows = [  # (ord, kind, time ns, sector)
        (0, "complete", 5_000, 0),
        (1, "issue", 10_000, 0),
        (2, "issue", 20_000, 0),
        (3, "issue", 21_000, 8),
        (4, "complete", 28_000, 8),
        (5, "complete", 30_000, 0),
        (6, "complete", 40_000, 0),
        (7, "issue", 50_000, 0),
    ]
    values = ", ".join(f"({o}, '{k}', {t}, '8,16', 'flush', {s}, 0, 'p', 1)" for o, k, t, s in rows)
    events = f"SELECT * FROM (VALUES {values}) v(ord, kind, time_ns, device, op, sector, nsect, process, pid)"
    got = duckdb.sql(f"SELECT ord, latency_us FROM ({paired_sql(events)}) ORDER BY ord").fetchall()
    assert got == [(1, 20.0), (2, 20.0), (3, 7.0), (7, None)], got


# A valid line per format, and a broken copy: (format, good line, bad line, what the message must say)
BAD = [
    (
        "msr",
        "128166372003061629,hm,0,Read,4096,4096,10",
        "128166372003061629,hm,0,Wrte,4096,4096,10",
        "field 4 (Type): expected Read or Write, got 'Wrte'",
    ),
    (
        "msr",
        "128166372003061629,hm,0,Read,4096,4096,10",
        "128166372003061629,hm,0,Read,4096",
        "expected 7 comma-separated fields",
    ),
    (
        "spc",
        "0,303567,3584,w,0.000000",
        "0,303567,-3584,w,0.000000",
        "field 3 (Size): expected a whole number ≥ 0, got '-3584'",
    ),
    (
        "alibaba",
        "419,W,8192,4096,1577808000000054",
        "419,X,8192,4096,1577808000000054",
        "field 2 (opcode): expected R or W",
    ),
    ("tencent", "1538323200,800,8,1,1283", "1538323200,800,8,2,1283", "field 4 (IOType): expected 0 or 1, got '2'"),
    (
        "fiu",
        "89966527176 4105 syslogd 1024 8 W 8 0 d41d",
        "89966527176 4105 syslogd 1024 8 Q 8 0 d41d",
        "field 6 (W|R): expected W or R, got 'Q'",
    ),
    (
        "systor",
        "1486688402.000164,0.000346,R,1,4096,4096",
        "1486688402.000164,0.000346,R,1,4096,4k",
        "field 6 (Size): expected a whole number ≥ 0, got '4k'",
    ),
    (
        "blkparse",
        "  8,16   1        3     1.427377000  5529  D  WS 274432 + 8 [proc]",
        "  8,16   1        3     1.427377000  5529  D  WS 274432 - 8 [proc]",
        "expected 'SECTOR + COUNT'",
    ),
    (
        "tracefs",
        "  fio-6862    [000] .....   457.665281: block_rq_issue: 7,0 R 4096 () 31616 + 8 [fio]",
        "  fio-6862    [000] .....   457.665281: block_rq_issue: 7,0 R 4096 31616 + 8 [fio]",
        "block_rq_issue: expected",
    ),
]


@pytest.mark.parametrize("fmt,good,bad,message", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_line_is_reported_with_file_line_and_field(fmt, good, bad, message, tmp_path):
    p = tmp_path / f"trace.{fmt}"
    p.write_text("\n".join([good, good, bad, good, bad]) + "\n")
    with pytest.raises(IolabError) as e:
        import_trace(p, fmt, tmp_path / "t.parquet")
    text = str(e.value)
    assert text.startswith(f"{p}:3: ") and message in text and "1 more bad lines" in text
    assert "--skip-bad-lines" in text
    assert not (tmp_path / "t.parquet").exists()
    t = import_trace(p, fmt, tmp_path / "t.parquet", skip_bad_lines=True)
    assert t.skipped_lines == 2 and [b.line for b in t.skipped_examples] == [3, 5]
    assert t.rows == 3


def test_fio_bad_header_and_bad_action(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("not a log\n")
    with pytest.raises(IolabError, match=r"x.log:1: expected the fio iolog header"):
        import_trace(p, "fio", tmp_path / "t.parquet")
    p.write_text("fio version 3 iolog\n0 /dev/sdb add\n10 /dev/sdb read 0 4096\n20 /dev/sdb wait 100 0\n")
    with pytest.raises(IolabError, match=r"x.log:4: field 3 \(action\): expected one of"):
        import_trace(p, "fio", tmp_path / "t.parquet")


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(IolabError, match="unknown trace format 'csv'"):
        import_trace(tmp_path / "x", "csv", tmp_path / "t.parquet")
    with pytest.raises(IolabError, match="no such trace file"):
        import_trace(tmp_path / "x", "msr", tmp_path / "t.parquet")


def test_disksim_ms_sectors_and_type(tmp_path):
    p = tmp_path / "t.disksim"
    p.write_text("0.000000 0 2048 8 1\n1.500250 3 100 16 0\n")
    t = import_trace(p, "disksim", tmp_path / "t.parquet")
    assert [r[:7] for r in _rows(t.path)] == [
        (0, "0", "read", 2048 * 512, 4096, None, None),
        (1_500_250, "3", "write", 100 * 512, 8192, None, None),
    ]
    with pytest.raises(IolabError, match=r"t.disksim:2: field 5 \(type\): expected 0 or 1"):
        p.write_text("0.0 0 2048 8 1\n1.5 0 100 16 2\n")
        import_trace(p, "disksim", tmp_path / "bad.parquet")


@pytest.mark.parametrize("queued", [False, True])
def test_biosnoop_plain_and_queued_variant(queued, tmp_path):
    head = "TIME(s)     COMM           PID    DISK    T SECTOR     BYTES  " + ("QUE(ms) " if queued else "") + "LAT(ms)"
    q = lambda v: f"{v:>7} " if queued else ""  # noqa: E731
    p = tmp_path / "b.txt"
    p.write_text(
        f"{head}\n"
        f"0.000004    supervise      1950   xvda1   W 13092560   4096   {q('0.01')}   0.74\n"
        f"0.002000    kworker u8:0   12     xvda1   R 100        65536  {q('0.00')}   1.50\n"
    )
    for lines in (p, None):
        if lines is None:  # without the header the variant is told from the field count
            p.write_text("\n".join(p.read_text().splitlines()[1:]) + "\n")
        t = import_trace(p, "biosnoop", tmp_path / "t.parquet")
        rows = [r[:7] for r in _rows(t.path)]
        # biosnoop prints at completion: the write was issued at 4 µs - 0.74 ms, the read at
        # 2 ms - 1.5 ms, so the write comes first, 1.236 ms before the read.
        assert rows[0][:6] == (0, "xvda1", "write", 13092560 * 512, 4096, "supervise")
        assert rows[0][6] == pytest.approx(740.0)
        assert rows[1][:6] == (1_236_000, "xvda1", "read", 100 * 512, 65536, "kworker u8:0")
        assert rows[1][6] == pytest.approx(1500.0)


@pytest.mark.parametrize("fmt", EXPORTS)
def test_format_is_detected_from_the_file(fmt, synthetic, tmp_path):
    path = export_trace(synthetic[0], fmt, tmp_path / f"trace.{fmt}")
    assert detect_format(path) == READER.get(fmt, fmt)


def test_detection_refuses_what_it_cannot_tell(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("hello world\n")
    with pytest.raises(IolabError, match="--format"):
        detect_format(p)


def _pid_oio(path: Path):
    import duckdb

    return duckdb.sql(f"SELECT pid, outstanding FROM read_parquet('{path}')").fetchall()


def test_outstanding_io_at_issue_counts_ios_in_flight(tmp_path):
    from iolab.traces.table import table_from_rows

    # issue ns, latency µs: A [0, 10 µs), B [2, 5 µs), C [5, 25 µs) (B has just completed:
    # not counted), D [10, 11 µs) (A completes at that instant), E at 10.5 µs has no
    # response time and is never in flight itself, F at 10.6 µs sees C and D.
    rows = [
        (0, "d", "read", 0, 512, None, 10.0),
        (2000, "d", "read", 0, 512, None, 3.0),
        (5000, "d", "read", 0, 512, None, 20.0),
        (10000, "d", "read", 0, 512, None, 1.0),
        (10500, "d", "read", 0, 512, None, None),
        (10600, "d", "read", 0, 512, None, 1.0),
    ]
    t = table_from_rows(rows, tmp_path / "t.parquet")
    assert [o for _, o in _pid_oio(t.path)] == [0, 1, 1, 1, 2, 2]
    no_lat = table_from_rows([(0, "d", "read", 0, 512, None, None)], tmp_path / "n.parquet")
    assert _pid_oio(no_lat.path) == [(None, None)]  # unknown, never 0


def test_outstanding_matches_brute_force(synthetic, tmp_path):
    table, _, _ = synthetic
    import duckdb

    got = duckdb.sql(f"SELECT time_ns, latency_us, outstanding FROM read_parquet('{table.path}')").fetchall()
    iss = np.array([r[0] for r in got])
    done = iss + np.round(np.array([r[1] for r in got]) * 1000).astype(np.int64)
    want = [int(((iss[:i] <= iss[i]) & (done[:i] > iss[i])).sum()) for i in range(len(got))]
    assert [r[2] for r in got] == want
    assert max(want) > 1  # the synthetic trace does overlap IOs


def test_pid_from_the_formats_that_have_one(synthetic, tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(
        "             fio-6862    [000] .....   457.665281: block_rq_issue: 7,0 R 4096 () 31616 + 8 [fio]\n"
        "     ksoftirqd/0-14      [000] ..s..   457.665351: block_rq_complete: 7,0 R () 31616 + 8 [0]\n"
    )
    assert _pid_oio(import_trace(p, "tracefs", tmp_path / "a.parquet").path) == [(6862, 0)]
    for fmt in ("blkparse", "blktrace", "fiu", "biosnoop"):
        path = export_trace(synthetic[0], fmt, tmp_path / f"trace.{fmt}")
        pids = {pid for pid, _ in _pid_oio(import_trace(path, fmt, tmp_path / f"{fmt}.parquet").path)}
        assert pids == set(range(1000, 1007)), fmt  # the writers' made-up pids, 1000 + n % 7


def test_tracefs_empty_pre_flush_is_a_flush_and_a_pre_flush_write_with_data_a_write(tmp_path):
    """rwbs as blk_fill_rwbs writes it: a leading F is a pre-flush; with no data the request is a
    cache flush (it was a write of 0 bytes, which the import dropped), with data a write."""
    issue, done = (
        "jbd2/sda1-8-312 [000] ..... {}: block_rq_issue: 8,16 FWS {}",
        "<idle>-0 [000] d.h.. {}: block_rq_complete: 8,16 FWS {}",
    )
    events = [
        issue.format("100.000000", "0 () 0 + 0 [jbd2/sda1-8]"),
        done.format("100.000150", "() 0 + 0 [0]"),
        issue.format("100.000200", "4096 () 100 + 8 [jbd2/sda1-8]"),
        done.format("100.000400", "() 100 + 8 [0]"),
    ]
    p = tmp_path / "t.txt"
    p.write_text("".join(f"{e}\n" for e in events))
    t = import_trace(p, "tracefs", tmp_path / "t.parquet")
    assert _rows(t.path) == [
        (0, "8,16", "flush", 0, 0, "jbd2/sda1-8", 150.0),
        (200000, "8,16", "write", 100 * 512, 4096, "jbd2/sda1-8", 200.0),
    ]
    assert t.zero_length_dropped == 0
