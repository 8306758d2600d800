"""Time units of DiskSim/MQSim and CloudPhysics traces, the CloudPhysics CSV and vSCSI binary
readers, and import robustness: every bad line (too long, not UTF-8, a number past what
iolab stores) is a bad line with file:line:field that --skip-bad-lines skips and counts."""

from __future__ import annotations

import struct
from pathlib import Path

import duckdb
import numpy as np
import pytest

from iolab.core.errors import IolabError
from iolab.traces import detect_format, import_trace


def _rows(path: Path) -> list[tuple]:
    con = duckdb.connect()
    try:
        return con.execute(
            f"SELECT time_ns, device, op, offset_bytes, size_bytes, latency_us FROM read_parquet('{path}')"
        ).fetchall()
    finally:
        con.close()


def mqsim_lines(n: int = 400, seed: int = 3) -> tuple[list[str], int]:
    """Lines in MQSim's trace format (as its traces/tpcc-small.trace): integer ns arrival,
    device, start sector, size in sectors, 1 = read / 0 = write; gaps of a few hundred µs."""
    rng = np.random.default_rng(seed)
    t = 938_944_000 + np.cumsum(np.round(rng.exponential(300, n)) * 1000).astype(np.int64)
    lines = [
        f"{int(ti)} 13 {int(rng.integers(0, 23_000_000)) * 16} {int(rng.choice([16, 32]))} {int(rng.integers(0, 2))}"
        for ti in t
    ]
    return lines, int(t[-1] - t[0])


def test_mqsim_trace_is_read_in_ns_with_its_true_span(tmp_path):
    lines, span_ns = mqsim_lines()
    p = tmp_path / "tpcc.trace"
    p.write_text("\n".join(lines) + "\n")
    assert detect_format(p) == "disksim"
    t = import_trace(p, "disksim", tmp_path / "t.parquet")
    assert t.duration_s == pytest.approx(span_ns / 1e9)
    assert 0.05 < t.duration_s < 0.5  # ~0.12 s, not the 10^6 × longer ms reading
    note = next(n for n in t.notes if n.startswith("time unit:"))
    assert note.startswith("time unit: ns (guessed") and "Pass --time-unit" in note
    assert "span" in t.summary()
    # The unit can be forced, and is then used as given.
    t = import_trace(p, "disksim", tmp_path / "ms.parquet", time_unit="ms")
    assert t.duration_s == pytest.approx(span_ns / 1e3)
    assert any("given with --time-unit" in n for n in t.notes)


def test_disksim_float_ms_stays_ms(tmp_path):
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.exponential(8.0, 300))  # ms, as DiskSim's manual prints them
    p = tmp_path / "d.trace"
    p.write_text("".join(f"{x:.6f} 0 {i * 8} 8 {i % 2}\n" for i, x in enumerate(t)))
    got = import_trace(p, "disksim", tmp_path / "t.parquet")
    assert got.duration_s == pytest.approx((t[-1] - t[0]) / 1e3, rel=1e-6)
    assert any(n.startswith("time unit: ms") for n in got.notes)


# Gaps far from 1 ms in a unit far from the default are misread (a trace in whole seconds
# with 30 s gaps looks like µs): the guess is printed with the span, and --time-unit exists.
@pytest.mark.parametrize("unit,scale,gap", [("ns", 1e9, 2e-4), ("us", 1e6, 5e-5), ("us", 1e6, 2e-3), ("ms", 1e3, 1e-2)])
def test_unit_guess_from_gaps(unit, scale, gap):
    from iolab.traces.timeunit import detect

    rng = np.random.default_rng(5)
    times = np.round(np.cumsum(rng.exponential(gap, 1000)) * scale)
    got = detect(times, fractional=False, default="us", fmt="x")
    assert got.unit == unit, got.reason


def test_time_unit_refused_for_fixed_unit_formats(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("128166372003061629,hm,0,Read,4096,4096,10\n")
    with pytest.raises(IolabError, match="--time-unit applies to formats whose time unit varies"):
        import_trace(p, "msr", tmp_path / "t.parquet", time_unit="ns")
    with pytest.raises(IolabError, match="not a unit"):
        import_trace(p, "disksim", tmp_path / "t.parquet", time_unit="hours")


def test_cloudphysics_csv(tmp_path):
    p = tmp_path / "cloudPhysicsIO.csv"
    p.write_text(
        "version,time,op,size,lbn\n"
        "1,1000,28,4096,8\n"  # READ(10)
        "1,1500,2a,8192,16\n"  # WRITE(10)
        "1,2100,0x88,512,1\n"  # READ(16)
        "1,2600,8A,65536,1024\n"  # WRITE(16)
        "1,3000,35,0,0\n"  # SYNCHRONIZE CACHE
        "1,3700,12,36,0\n"  # INQUIRY: neither
    )
    assert detect_format(p) == "cloudphysics"
    t = import_trace(p, "cloudphysics", tmp_path / "t.parquet")
    rows = _rows(t.path)
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        (0, "read", 8 * 512, 4096),
        (500_000, "write", 16 * 512, 8192),
        (1_100_000, "read", 512, 512),
        (1_600_000, "write", 1024 * 512, 65536),
        (2_000_000, "flush", 0, 0),
        (2_700_000, "other", 0, 36),
    ]
    assert any(n.startswith("time unit: us") for n in t.notes)
    # Headerless lines are told by their shape too.
    p.write_text("1,1000,28,4096,8\n1,1500,2a,8192,16\n")
    assert detect_format(p) == "cloudphysics"
    p.write_text("version,time,op,size,lbn\n1,1000,28,4096,8\n1,1500,zz,8192,16\n")
    with pytest.raises(IolabError, match=r"cloudPhysicsIO.csv:3: field 3 \(op\): expected a SCSI opcode"):
        import_trace(p, "cloudphysics", tmp_path / "bad.parquet")


def _v1(cmd, ts, lbn, length, sn=0):
    # libCacheSim trace_v1_record_t: u32 sn, u32 len, u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts
    return struct.pack("<IIIHHQQ", sn, length, 1, cmd, 1 << 8, lbn, ts)


def _v2(cmd, ts, lbn, length, rt, sn=0):
    # trace_v2_record_t: u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts, u64 rt
    return struct.pack("<HHIIIQQQ", cmd, 2 << 8, sn, length, 1, lbn, ts, rt)


def test_vscsi_binary_v1_and_v2(tmp_path):
    v1 = tmp_path / "w01.vscsi"
    v1.write_bytes(_v1(0x28, 10_000, 8, 4096) + _v1(0x2A, 10_400, 64, 8192) + _v1(0x28, 11_000, 9, 512))
    assert detect_format(v1) == "vscsi"
    t = import_trace(v1, "vscsi", tmp_path / "v1.parquet")
    assert [r[:5] for r in _rows(t.path)] == [
        (0, "vscsi", "read", 4096, 4096),
        (400_000, "vscsi", "write", 64 * 512, 8192),
        (1_000_000, "vscsi", "read", 9 * 512, 512),
    ]
    assert not t.has_latency
    v2 = tmp_path / "w02.vscsi"
    v2.write_bytes(_v2(0x2A, 5_000, 1, 4096, 120) + _v2(0x28, 5_300, 2, 4096, 80) + _v2(0x88, 6_000, 3, 4096, 95))
    assert detect_format(v2) == "vscsi"
    t = import_trace(v2, "vscsi", tmp_path / "v2.parquet")
    assert [(r[0], r[2], r[5]) for r in _rows(t.path)] == [
        (0, "write", 120.0),
        (300_000, "read", 80.0),
        (1_000_000, "read", 95.0),
    ]
    # A cut last record: named, or skipped and counted.
    v2.write_bytes(v2.read_bytes()[:-7])
    with pytest.raises(IolabError, match=r"w02.vscsi: record 3: truncated record"):
        import_trace(v2, "vscsi", tmp_path / "cut.parquet")
    t = import_trace(v2, "vscsi", tmp_path / "cut.parquet", skip_bad_lines=True)
    assert t.rows == 2 and t.skipped_lines == 1


# ---------------------------------------------------------------------------------------
# Robustness: lines DuckDB's scanner rejects, and numbers past what iolab stores

MSR_GOOD = "128166372003061629,hm,0,Read,4096,4096,10"


def _import_both(p: Path, fmt: str, tmp_path: Path, line: int, message: str, good: int):
    with pytest.raises(IolabError) as e:
        import_trace(p, fmt, tmp_path / "t.parquet")
    assert str(e.value).startswith(f"{p}:{line}: ") and message in str(e.value), str(e.value)
    t = import_trace(p, fmt, tmp_path / "t.parquet", skip_bad_lines=True)
    assert t.skipped_lines >= 1 and t.skipped_examples[0].line == line and t.rows == good
    return t


def test_long_line_and_invalid_utf8_are_bad_lines_with_true_numbers(tmp_path):
    p = tmp_path / "m.csv"
    p.write_bytes(
        (MSR_GOOD + "\n").encode()
        + b"x" * (2 << 20)
        + b"\n"
        + (MSR_GOOD + "\n").encode()
        + b"12816637200306\xff\xfe,hm,0,Read,4096,4096,10\n"
        + b"128166372003061629,hm,0,Wrte,4096,4096,10\n"
        + (MSR_GOOD + "\n").encode()
    )
    t = _import_both(p, "msr", tmp_path, 2, "line longer than 1024 KiB", good=3)
    # Every later line keeps its true number: 4 (not UTF-8) and 5 (a bad field).
    assert [(b.line, b.problem.split(" (")[0]) for b in t.skipped_examples] == [
        (2, "line longer than 1024 KiB"),
        (4, "not UTF-8 text"),
        (5, "field 4"),
    ]


def test_fio_iolog_utf16_and_long_first_line(tmp_path):
    p = tmp_path / "x.log"
    p.write_bytes("fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdb read 0 4096\n".encode("utf-16"))
    with pytest.raises(IolabError, match=r"x.log:1: this looks like UTF-16 text"):
        import_trace(p, "fio", tmp_path / "t.parquet")
    p.write_bytes(b"a" * (2 << 20) + b"\nfio version 3 iolog\n")
    with pytest.raises(
        IolabError, match=r"x.log:1: (expected the fio iolog header .* got '<)?line longer than 1024 KiB"
    ):
        import_trace(p, "fio", tmp_path / "t.parquet")


@pytest.mark.parametrize(
    "fmt,good,bad,line_msg",
    [
        ("msr", MSR_GOOD, "18446744073709551615,hm,0,Read,4096,4096,10", "field 1 (Timestamp): out of range"),
        (
            "msr",
            MSR_GOOD,
            "128166372003061629,hm,0,Read,18446744073709551615,4096,10",
            "field 5 (Offset): out of range",
        ),
        ("spc", "0,303567,3584,w,0.000000", "0,36028797018963968,3584,w,0.1", "field 2 (LBA): out of range"),
        (
            "alibaba",
            "419,W,8192,4096,1577808000000054",
            "419,W,8192,4096,18446744073709551615",
            "field 5 (timestamp): out of range",
        ),
        (
            "tencent",
            "1538323200,800,8,1,1283",
            "1538323200,18446744073709551615,8,1,1283",
            "field 2 (Offset): out of range",
        ),
        ("disksim", "0.5 0 2048 8 1", "1e300 0 2048 8 1", "field 1 (time): out of range"),
        (
            "systor",
            "1486688402.000164,0.000346,R,1,4096,4096",
            "1486688402.000164,1e300,R,1,4096,4096",
            "field 2 (Response): out of range",
        ),
        (
            "blkparse",
            "  8,16   1        3     1.427377000  5529  D  WS 274432 + 8 [proc]",
            "  8,16   1        4     99999999999999999999.427377000  5529  D  WS 274432 + 8 [proc]",
            "field sec.nsec: out of range",
        ),
        (
            "blkparse",
            "  8,16   1        3     1.427377000  5529  D  WS 274432 + 8 [proc]",
            "  8,16   1        4     1.427378000  5529  D  WS 18446744073709551615 + 8 [proc]",
            "field sector: out of range",
        ),
        ("fio", None, "1 /dev/sdb read 18446744073709551615 4096", "field 4 (offset): out of range"),
    ],
)
def test_huge_numbers_are_bad_lines_not_overflows(fmt, good, bad, line_msg, tmp_path):
    p = tmp_path / f"t.{fmt}"
    if fmt == "fio":
        lines = ["fio version 3 iolog", "0 /dev/sdb add", "1 /dev/sdb read 0 4096", bad, "2 /dev/sdb write 4096 4096"]
        expect_line, good_ios = 4, 2
    else:
        lines = [good, bad, good]
        expect_line, good_ios = 2, 2
    p.write_text("\n".join(lines) + "\n")
    _import_both(p, fmt, tmp_path, expect_line, line_msg, good_ios)


def test_truncated_blktrace_with_skip_bad_lines_imports(tmp_path):
    from iolab.traces import export_trace
    from iolab.traces.table import table_from_rows

    t = table_from_rows(
        [(i * 1000, "8,16", "read", i * 4096, 4096, "p", 50.0) for i in range(20)], tmp_path / "s.parquet"
    )
    path = export_trace(t, "blktrace", tmp_path / "sdb.blktrace.0")
    path.write_bytes(path.read_bytes()[:-5])
    got = import_trace(path, "blktrace", tmp_path / "back.parquet", skip_bad_lines=True)
    assert got.skipped_lines == 1 and got.rows == 20


def test_cli_import_prints_unit_reason_and_span(tmp_path):
    from typer.testing import CliRunner

    from iolab.cli.app import app

    lines, span_ns = mqsim_lines()
    p = tmp_path / "tpcc.trace"
    p.write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(app, ["trace", "import", str(p), "--out", str(tmp_path / "t.parquet")])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "format: disksim (detected" in out
    assert "time unit: ns (guessed, likely: ns, MQSim's and SSDsim's unit for whole-number times" in out
    assert f"span: {span_ns / 1e6:,.3g} ms" in out
    r = CliRunner().invoke(app, ["trace", "import", str(p), "--time-unit", "us", "--out", str(tmp_path / "u.parquet")])
    from iolab.traces.table import human_span

    assert r.exit_code == 0 and f"span: {human_span(span_ns / 1e6)}" in " ".join(r.output.split())
