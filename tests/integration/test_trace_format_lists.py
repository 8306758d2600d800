"""`iolab trace import/export` as a user runs them: the --format help names every format the
registry holds (export: exactly those with a writer), and every writer works from the
command line."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from iolab.traces import formats

from .conftest import iolab


def _help(*args: str) -> str:
    p = iolab(*args, "--help")
    assert p.returncode == 0, p.stderr
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", p.stdout).split())


def test_format_help_lists_the_registered_formats():
    assert f"--format -f FORMAT {', '.join(formats.writer_names())}." in _help("trace", "export")
    assert f"Trace format: {', '.join(formats.reader_names())} (default" in _help("trace", "import")
    variable = ", ".join(f.name for f in formats.all_formats() if f.time_unit)
    assert f"formats whose unit varies ({variable};" in _help("trace", "import")


def test_a_shells_completion_of_format_gives_the_same_help():
    """The names are read from the registry when the help is shown (cli_typer.later), not at
    every command's start: zsh's completion of an option, which shows its help, too."""
    env = {"_IOLAB_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "iolab trace import --fo"}
    p = iolab(env=env)
    assert p.returncode == 0, p.stderr
    names = ", ".join(formats.reader_names())
    said = " ".join(p.stdout.split())  # zsh's script is wrapped
    assert '"--format":"Trace format' in said and f"{names} (default" in said, said
    assert "later:" not in p.stdout


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("lists")
    src = d / "hm_0.csv"
    # MSR: FILETIME, host, disk, type, offset, size, response time (100 ns ticks). An idle trace,
    # one IO a second: a unit guessed from such gaps came out 1000 times too small (timeunit.py)
    src.write_text(
        "".join(
            f"{128166372000000000 + i * 10**7},hm,0,{'Read' if i % 2 else 'Write'},{i * 8192},4096,{300 + i}\n"
            for i in range(20)
        )
    )
    p = iolab("trace", "import", str(src), "--format", "msr", "--out", str(d / "t.parquet"))
    assert p.returncode == 0, p.stderr
    return d / "t.parquet"


@pytest.mark.parametrize("fmt", formats.writer_names())
def test_every_listed_writer_exports_and_reads_back(fmt, table, tmp_path):
    out = tmp_path / f"t.{fmt}"
    p = iolab("trace", "export", str(table), "--format", fmt, "--out", str(out))
    assert p.returncode == 0, p.stderr
    p = iolab("trace", "import", str(out), "--out", str(tmp_path / "back.parquet"))
    assert p.returncode == 0, p.stderr
    reader = formats.writer(fmt)[0].name  # type: ignore[index]
    assert f"format: {reader} (detected" in p.stdout and "20 IOs" in p.stdout
    # the times come back as they were: DiskSim, CloudPhysics and vSCSI, whose unit varies, read
    # the unit iolab's export recorded, where the guess took the 1 s gaps for 1 ms ones
    back, was = _times(tmp_path / "back.parquet"), _times(table)
    assert max(abs(a - b) for a, b in zip(back, was, strict=True)) <= 1000, (back[:3], was[:3])
    if formats.get(reader).time_unit is not None:  # type: ignore[union-attr]
        assert "recorded on the file by iolab's trace export" in " ".join(p.stdout.split()), p.stdout


def _times(table: Path) -> list[int]:
    import duckdb

    return [t for (t,) in duckdb.sql(f"SELECT time_ns FROM read_parquet('{table}') ORDER BY time_ns").fetchall()]


def test_a_trace_exported_and_copied_without_its_record_says_the_unit_it_guessed(table, tmp_path):
    """A DiskSim file copied where iolab's record did not follow (no xattrs) is guessed again:
    the import says the unit it assumed, why, and how to give it."""
    exported = tmp_path / "t.disksim"
    assert iolab("trace", "export", str(table), "--format", "disksim", "--out", str(exported)).returncode == 0
    copy = tmp_path / "copy.disksim"
    copy.write_bytes(exported.read_bytes())
    p = iolab("trace", "import", str(copy), "--format", "disksim", "--out", str(tmp_path / "back.parquet"))
    said = " ".join(p.stdout.split())
    assert p.returncode == 0 and "time unit: " in said and "(guessed, " in said and "--time-unit" in said, said


def test_export_to_an_unknown_format_is_refused_with_the_list(table, tmp_path):
    p = iolab("trace", "export", str(table), "--format", "nope", "--out", str(tmp_path / "x"))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert f"cannot export to 'nope'; formats: {', '.join(formats.writer_names())}" in " ".join(p.stderr.split())


@pytest.fixture(scope="module")
def linux_table(tmp_path_factory):
    """A table as a Linux capture names its device: `8,16` (blkparse text, 6 IOs with completions)."""
    d = tmp_path_factory.mktemp("linux")
    events = []
    for i in range(6):
        t, rwbs = i * 0.001, "R" if i % 2 else "W"
        events.append(f"  8,16   0  {2 * i + 1}  {t:.9f}  100  D  {rwbs} {i * 8} + 8 [fio]")
        events.append(f"  8,16   0  {2 * i + 2}  {t + 0.0002:.9f}    0  C  {rwbs} {i * 8} + 8 [0]")
    (d / "t.txt").write_text("\n".join(events) + "\n")
    p = iolab("trace", "import", str(d / "t.txt"), "--format", "blkparse", "--out", str(d / "t.parquet"))
    assert p.returncode == 0 and "6 IOs" in p.stdout, p.stderr + p.stdout
    return d / "t.parquet"


@pytest.mark.parametrize("fmt", formats.writer_names())
def test_every_writer_exports_a_device_named_major_comma_minor_so_it_reads_back(fmt, linux_table, tmp_path):
    """msr, alibaba and tencent wrote `8,16` into their comma-separated lines as is: one field
    too many on every line, exit 0, and the file was refused by `iolab trace import` itself."""
    out = tmp_path / f"t.{fmt}"
    p = iolab("trace", "export", str(linux_table), "--format", fmt, "--out", str(out))
    assert p.returncode == 0, p.stderr
    reader = formats.writer(fmt)[0].name  # type: ignore[index]
    p = iolab("trace", "import", str(out), "--format", reader, "--out", str(tmp_path / "back.parquet"))
    assert p.returncode == 0 and "6 IOs" in p.stdout, p.stderr + p.stdout


ZERO_LENGTH_FIRST = (
    "  8,16   0  1  0.000000000  100  D   W 8 + 0 [jbd2]\n"
    "  8,16   0  2  0.000100000    0  C   W 8 + 0 [0]\n"
    "  8,16   0  3  0.000500000  100  D   W 0 + 8 [fio]\n"
    "  8,16   0  4  0.000800000    0  C   W 0 + 8 [0]\n"
    "  8,16   0  5  0.000900000  100  D   R 64 + 0 [fio]\n"
    "  8,16   0  6  0.001000000    0  C   R 64 + 0 [0]\n"
)


def test_zero_length_ios_are_dropped_on_import_and_counted_and_a_trace_of_nothing_else_is_refused(tmp_path):
    """A read or write of 0 bytes was imported as an IO: no IO a drive can replay. Dropped, said
    in one line and kept in the table's metadata; the first IO kept is the table's time 0."""
    import duckdb

    from iolab.traces.table import TraceTable

    (tmp_path / "t.txt").write_text(ZERO_LENGTH_FIRST)
    table = tmp_path / "t.parquet"
    p = iolab("trace", "import", str(tmp_path / "t.txt"), "--out", str(table))
    assert p.returncode == 0, p.stderr
    said = " ".join(p.stdout.split())
    assert "1 IO from blkparse" in said and "dropped 2 zero-length IOs (reads, writes or trims of 0 bytes" in said
    assert TraceTable.open(table).zero_length_dropped == 2
    rows = duckdb.sql(f"SELECT time_ns, op, size_bytes FROM read_parquet('{table}')").fetchall()
    assert rows == [(0, "write", 4096)], rows
    # nothing but zero-length IOs: refused, exit 2, nothing written
    (tmp_path / "z.txt").write_text("".join(ZERO_LENGTH_FIRST.splitlines(keepends=True)[i] for i in (0, 1, 4, 5)))
    p = iolab("trace", "import", str(tmp_path / "z.txt"), "--out", str(tmp_path / "z.parquet"))
    assert p.returncode == 2 and p.stderr.startswith("iolab: ") and "Traceback" not in p.stderr, p.stderr
    assert "every one of its 2 IOs is a read, write or trim of 0 bytes" in " ".join(p.stderr.split()), p.stderr
    assert not (tmp_path / "z.parquet").exists()


# Recorded in blkparse's default format (blkparse_fmt.c): a request with no data prints no
# `+ COUNT` (issue `[comm]`, completion `SECTOR [error]`); older tools wrote `0 + 0`. rwbs: a
# leading F is a pre-flush, a later F is FUA.
FLUSHES = (
    "  8,16   0        1     0.000000000   312  D  FWS [jbd2/sda1-8]\n"
    "  8,16   0        2     0.000150000     0  C  FWS 0 [0]\n"
    "  8,16   0        3     0.000200000   312  D WFS 2048 + 8 [jbd2/sda1-8]\n"
    "  8,16   0        4     0.000400000     0  C WFS 2048 + 8 [0]\n"
    "  8,16   0        5     0.000500000   312  D FWS 4096 + 8 [jbd2/sda1-8]\n"
    "  8,16   0        6     0.000700000     0  C FWS 4096 + 8 [0]\n"
    "  8,16   0        7     0.000800000   100  D  FWS 0 + 0 [kworker/0:1H]\n"
    "  8,16   0        8     0.000900000     0  C  FWS 0 + 0 [0]\n"
    "  8,16   0        9     0.001000000   100  D   R 64 + 8 [fio]\n"
    "  8,16   0       10     0.001100000     0  C   R 64 + 8 [0]\n"
    "CPU0 (8,16):\n"
    " Reads Queued:           0,        0KiB\tWrites Queued:           0,        0KiB\n"
)


def test_an_empty_pre_flush_is_imported_as_a_flush_and_a_pre_flush_or_fua_write_as_a_write(tmp_path):
    """blkparse's empty pre-flush (`FWS [comm]` / `FWS 0 + 0`) is a cache flush: it was a write of
    0 bytes, which the import then dropped (and blkparse's own `C FWS 0 [0]` was refused as a bad
    line). A pre-flush or FUA write with data (`FWS 4096 + 8`, `WFS 2048 + 8`) stays a write."""
    import duckdb

    (tmp_path / "t.txt").write_text(FLUSHES)
    table = tmp_path / "t.parquet"
    p = iolab("trace", "import", str(tmp_path / "t.txt"), "--out", str(table))
    assert p.returncode == 0, p.stderr
    assert "5 IOs from blkparse" in p.stdout and "zero-length" not in p.stdout, p.stdout
    rows = duckdb.sql(
        f"SELECT time_ns, op, offset_bytes, size_bytes, process, latency_us FROM read_parquet('{table}')"
    ).fetchall()
    assert rows == [
        (0, "flush", 0, 0, "jbd2/sda1-8", 150.0),
        (200_000, "write", 2048 * 512, 4096, "jbd2/sda1-8", 200.0),
        (500_000, "write", 4096 * 512, 4096, "jbd2/sda1-8", 200.0),
        (800_000, "flush", 0, 0, "kworker/0:1H", 100.0),
        (1_000_000, "read", 64 * 512, 4096, "fio", 100.0),
    ], rows
    # an export writes reads and writes: the flushes left out are said, not lost without a word
    p = iolab("trace", "export", str(table), "--format", "fio3", "--out", str(tmp_path / "t.fio3"))
    assert p.returncode == 0 and "note: 2 flushes left out (an export writes reads and writes)" in p.stdout, p.stdout


# struct blk_io_trace as the kernel writes it (include/uapi/linux/blktrace_api.h), spelt out here
# rather than taken from iolab's reader, so a wrong constant there is caught: the category bits,
# shifted into the high 16 bits of `action`, over the action in the low 16 bits.
TC = {"R": 1 << 0, "W": 1 << 1, "F": 1 << 2, "S": 1 << 3, "D": 1 << 13, "FUA": 1 << 15}
TC_ISSUE, TC_COMPLETE, TC_NOTIFY, TA_ISSUE, TA_COMPLETE = 1 << 6, 1 << 7, 1 << 10, 7, 8
BLK_DEV = (8 << 20) | 16  # 8,16 as blktrace's dev_t (major << 20 | minor)


def _blk_record(order: str, t_ns: int, action: int, sector: int, nbytes: int, pid: int, pdu: bytes = b"") -> bytes:
    head = struct.pack(f"{order}IIQQIIIIIHH", 0x65617407, 0, t_ns, sector, nbytes, action, pid, BLK_DEV, 0, 0, len(pdu))
    return head + pdu


def _blk_trace(order: str) -> bytes:
    """Eight requests, issue and completion each, as __blk_add_trace categorises them: a pure flush
    (REQ_OP_FLUSH: the read direction, no data, blkparse's `FN`), a FUA write, a pre-flush write
    with data (`FWS 4096 + 8`), an empty pre-flush write (`FWS 0 + 0`), a read, a discard
    (REQ_OP_DISCARD is a write op: `DS`), and two flushes in flight at once (a flush queue per
    hardware queue); each pid named by the 'process' notify record blktrace writes for it."""
    out = b"".join(
        _blk_record(order, 0, TC_NOTIFY << 16, 0, 0, pid, name + b"\0")
        for pid, name in ((312, b"jbd2/sda1-8"), (100, b"kworker/0:1H"), (200, b"fio"))
    )
    requests = (  # (issue µs, done µs, categories, sector, bytes, pid)
        (0, 150, ("R", "F"), 0, 0, 312),
        (200, 400, ("W", "S", "FUA"), 2048, 4096, 312),
        (500, 700, ("W", "F", "S"), 4096, 4096, 312),
        (800, 900, ("W", "F", "S"), 0, 0, 100),
        (1000, 1100, ("R",), 64, 4096, 200),
        (1200, 1500, ("W", "D", "S"), 8192, 1 << 20, 200),
        (1600, 1700, ("R", "F"), 0, 0, 100),
        (1650, 1900, ("R", "F"), 0, 0, 312),
    )
    events = []
    for issue, done, cats, sector, nbytes, pid in requests:
        cat = sum(TC[c] for c in cats)
        events.append(
            (issue, _blk_record(order, issue * 1000, ((cat | TC_ISSUE) << 16) | TA_ISSUE, sector, nbytes, pid))
        )
        events.append(
            (done, _blk_record(order, done * 1000, ((cat | TC_COMPLETE) << 16) | TA_COMPLETE, sector, nbytes, 0))
        )
    return out + b"".join(r for _, r in sorted(events, key=lambda e: e[0]))


def test_a_blktrace_binary_flush_is_a_flush_and_a_pre_flush_or_fua_write_with_data_a_write(tmp_path):
    """blktrace binary's flush mapping, as blkparse's text is read above: a request with the
    FLUSH category and no data is a cache flush, whichever direction bit it carries (a REQ_OP_FLUSH
    request is traced as a read, an empty pre-flush as a write); with data it moves data and stays a
    write; a discard is a trim. In either byte order. Two flushes in flight at once (every flush is
    at sector 0) end in the order they began: both were paired with the first completion (150 µs
    and 50 µs; the second completion unused), as any two IOs at one sector would be."""
    import duckdb

    expected = [
        (0, "flush", 0, 0, "jbd2/sda1-8", 150.0),
        (200_000, "write", 2048 * 512, 4096, "jbd2/sda1-8", 200.0),
        (500_000, "write", 4096 * 512, 4096, "jbd2/sda1-8", 200.0),
        (800_000, "flush", 0, 0, "kworker/0:1H", 100.0),
        (1_000_000, "read", 64 * 512, 4096, "fio", 100.0),
        (1_200_000, "trim", 8192 * 512, 1 << 20, "fio", 300.0),
        (1_600_000, "flush", 0, 0, "kworker/0:1H", 100.0),
        (1_650_000, "flush", 0, 0, "jbd2/sda1-8", 250.0),
    ]
    for order in ("<", ">"):
        trace = tmp_path / f"sdb{order == '>'}.blktrace.0"
        trace.write_bytes(_blk_trace(order))
        table = tmp_path / f"t{order == '>'}.parquet"
        p = iolab("trace", "import", str(trace), "--out", str(table))
        assert p.returncode == 0 and "8 IOs from blktrace" in p.stdout, p.stdout + p.stderr
        rows = duckdb.sql(
            f"SELECT time_ns, op, offset_bytes, size_bytes, process, latency_us FROM read_parquet('{table}') "
            "ORDER BY time_ns"
        ).fetchall()
        assert rows == expected, (order, rows)


@pytest.mark.parametrize("fmt", ["fiu", "disksim", "msr"])
def test_a_zero_length_write_is_left_out_of_an_export(fmt, tmp_path):
    """A 0-byte write in the table (blkparse's empty pre-flush `FWS 0 + 0` was one before it was
    read as a flush; `W 8 + 0` still is until the import drops it): the sector formats wrote it as
    a 512 B write, and the analysis of the file read back counted a RND 0.5KiB W stream the trace
    never had. The import drops it (a table written before keeps it, and the export leaves it out
    and says so)."""
    (tmp_path / "t.txt").write_text(
        "  8,16   0  1  0.000000000  100  D   W 0 + 8 [fio]\n"
        "  8,16   0  2  0.000300000    0  C   W 0 + 8 [0]\n"
        "  8,16   0  3  0.000500000  100  D   W 8 + 0 [jbd2]\n"
        "  8,16   0  4  0.000600000    0  C   W 8 + 0 [0]\n"
    )
    table = tmp_path / "t.parquet"
    assert iolab("trace", "import", str(tmp_path / "t.txt"), "--out", str(table)).returncode == 0
    out = tmp_path / f"t.{fmt}"
    p = iolab("trace", "export", str(table), "--format", fmt, "--out", str(out))
    assert p.returncode == 0, p.stderr
    unit = ["--time-unit", "ms"] if fmt == "disksim" else []  # DiskSim's unit varies: iolab writes ms
    p = iolab("trace", "import", str(out), "--format", fmt, *unit, "--out", str(tmp_path / "back.parquet"))
    assert p.returncode == 0 and "1 IO from" in p.stdout, p.stderr + p.stdout
