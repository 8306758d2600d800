"""The trace format registry: one descriptor per format, and everything that lists formats
(detection, import, export, fuzz cases) derived from it. A new CSV format registered here,
without a writer, is detected, imported, refused on bad lines and fuzzed like a built-in."""

from __future__ import annotations

import pkgutil
import random
from pathlib import Path

import pytest

from iolab.core.errors import IolabError
from iolab.traces import detect_format, export_trace, formats, fuzz, import_trace
from iolab.traces.formats.delimited import delimited, labels
from iolab.traces.registry import TraceFormat, UnitRule, Writer, csv_header
from iolab.traces.sqltext import Parsed, one_of, uint
from iolab.traces.table import table_from_rows


def _read_toy(path: str) -> Parsed:
    fields = [uint("t_us"), one_of("op", ("R", "W")), uint("offset"), uint("size")]
    values = {
        "time_ns": "TRY_CAST(f[1] AS HUGEINT) * 1000",
        "device": "'toy'",
        "op": "CASE lower(trim(f[2])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[3] AS HUGEINT)",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT)",
    }
    return Parsed(
        delimited(path, fields, values, header="t_us"),
        labels=labels(fields, time_ns=1, offset_bytes=3, size_bytes=4),
    )


TOY = TraceFormat(
    name="toycsv",
    title="a toy CSV (tests only)",
    sql=_read_toy,
    header=csv_header("t_us,op,offset,size"),
    sample=("t_us,op,offset,size", "100,R,4096,512", "250,W,0,4096", "300,R,8192,8192"),
    sample_head=1,
)


@pytest.fixture
def toy():
    formats.register(TOY)
    fuzz.seeds.cache_clear()
    try:
        yield TOY
    finally:
        formats.unregister(TOY.name)
        fuzz.seeds.cache_clear()


def _rows(path: Path) -> list[tuple]:
    import duckdb

    return duckdb.sql(f"SELECT time_ns, device, op, offset_bytes, size_bytes FROM read_parquet('{path}')").fetchall()


def test_a_new_csv_format_without_a_writer_is_detected_imported_and_refused_on_bad_lines(toy, tmp_path):
    assert "toycsv" in formats.reader_names() and "toycsv" not in formats.writer_names()
    p = tmp_path / "trace.csv"
    p.write_text("\n".join(toy.sample) + "\n")
    assert detect_format(p) == "toycsv"
    t = import_trace(p, "toycsv", tmp_path / "t.parquet")
    assert _rows(t.path) == [
        (0, "toy", "read", 4096, 512),
        (150_000, "toy", "write", 0, 4096),
        (200_000, "toy", "read", 8192, 8192),
    ]
    p.write_text("\n".join(toy.sample) + "\n400,X,0,512\n")
    with pytest.raises(IolabError, match=r"trace\.csv:5: field 2 \(op\): expected R or W, got 'X'.*toycsv"):
        import_trace(p, "toycsv", tmp_path / "bad.parquet")
    assert import_trace(p, "toycsv", tmp_path / "skip.parquet", skip_bad_lines=True).skipped_lines == 1
    # No writer: export refuses it by name, listing the formats that have one.
    with pytest.raises(IolabError, match=r"cannot export to 'toycsv'; formats: msr, .*vscsi"):
        export_trace(t, "toycsv", tmp_path / "out.csv")
    # Detection lists it among the formats to choose from when it cannot tell.
    q = tmp_path / "x.txt"
    q.write_text("hello world\n")
    with pytest.raises(IolabError, match=r"one of msr, .*vscsi, toycsv\)"):
        detect_format(q)


def test_a_new_format_without_a_writer_is_fuzzed_from_its_sample(toy, tmp_path):
    assert fuzz.reader("toycsv") == "toycsv" and "toycsv" in fuzz.text_cases()
    head, body = fuzz.seeds("toycsv")
    assert head == b"t_us,op,offset,size\n" and body == (b"100,R,4096,512\n", b"250,W,0,4096\n", b"300,R,8192,8192\n")
    for seed in range(4):
        rng = random.Random(seed)
        data, _ = fuzz.case_file(rng, "toycsv", 60)
        path = tmp_path / f"case{seed}.csv"
        path.write_bytes(fuzz.file_level(rng, data))
        assert fuzz.run(path, "toycsv", tmp_path / "out.parquet") is None


def test_the_lists_follow_the_registry():
    names = formats.reader_names()
    assert names == tuple(f.name for f in formats.all_formats())
    # Every writer reads back as its own format; fuzz cases are the writers (and the
    # formats without one), text first.
    assert set(fuzz.cases()) == set(formats.writer_names())
    assert {fuzz.reader(w) for w in formats.writer_names()} == set(names)
    assert list(fuzz.cases())[-2:] == ["blktrace", "vscsi"]
    with pytest.raises(IolabError, match=f"iolab reads: {', '.join(names)}\\."):
        import_trace(Path("nowhere"), "nope", Path("t.parquet"))


def test_every_format_module_is_registered():
    """A module in traces/formats/ with a FORMAT that is not registered would be dead code."""
    import importlib

    import iolab.traces.formats as package

    for m in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"iolab.traces.formats.{m.name}")
        fmt = getattr(module, "FORMAT", None)
        if fmt is not None:
            assert formats.get(fmt.name) is fmt, m.name


def test_register_refuses_a_taken_name_no_reader_or_a_writerless_format_without_sample():
    with pytest.raises(ValueError, match="taken"):
        formats.register(TraceFormat("msr", "again", sql=_read_toy, sample=("x",)))
    with pytest.raises(ValueError, match="taken"):
        formats.register(TraceFormat("newfio", "x", sql=_read_toy, writers=(Writer("fio3", lambda job: None),)))
    with pytest.raises(ValueError, match="exactly one reader"):
        formats.register(TraceFormat("none", "x", sample=("x",)))
    with pytest.raises(ValueError, match="time fields"):
        formats.register(TraceFormat("nofields", "x", sql=_read_toy, sample=("x",), time_unit=UnitRule("us")))
    with pytest.raises(ValueError, match="sample lines"):
        formats.register(TraceFormat("nosample", "x", sql=_read_toy))
    assert {"newfio", "none", "nofields", "nosample"}.isdisjoint(formats.reader_names())


def test_writers_are_optional_but_a_writer_round_trips(tmp_path):
    """A registered format with a writer is exported by name like the built-ins."""
    from iolab.traces.registry import ExportJob

    def write(job: ExportJob) -> None:
        job.lines(
            f"SELECT printf('%d,%s,%d,%d', time_ns // 1000, upper(op[1]), offset_bytes, size_bytes) FROM {job.src} ORDER BY n",
            header="t_us,op,offset,size",
        )

    fmt = TraceFormat(
        "toycsv2",
        "toy with a writer",
        sql=_read_toy,
        writers=(Writer("toycsv2", write, head_lines=1),),
        header=csv_header("t_us,op,offset,size"),
    )
    formats.register(fmt)
    try:
        t = table_from_rows(
            [(0, "d", "read", 512, 4096, None, None), (7000, "d", "write", 0, 512, None, None)], tmp_path / "t.parquet"
        )
        out = export_trace(t, "toycsv2", tmp_path / "t.csv")
        assert out.read_text() == "t_us,op,offset,size\n0,R,512,4096\n7,W,0,512\n"
        assert detect_format(out) == "toycsv2"
        assert _rows(import_trace(out, "toycsv2", tmp_path / "back.parquet").path) == [
            (0, "toy", "read", 512, 4096),
            (7000, "toy", "write", 0, 512),
        ]
    finally:
        formats.unregister("toycsv2")
