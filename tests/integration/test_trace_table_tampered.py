"""An IO table (the Parquet file `iolab trace import` writes) changed after iolab wrote it, as
another tool or a hand does: its iolab metadata kept, a column of another type, a value no
reader lets through, rows out of time order. `trace analyze` and `trace export` refuse it in
one paragraph naming the file and the column, exit 2, and write nothing; before, each ended in
a traceback (exit 1), the unordered rows in a panic of the compiled stream walk."""

from __future__ import annotations

import json

import duckdb
import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

T0 = 128166372000000000  # an MSR timestamp: FILETIME, 100 ns ticks
COLUMNS = ("time_ns", "device", "op", "offset_bytes", "size_bytes", "process", "latency_us", "pid", "outstanding")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """An MSR trace of 400 reads and writes 1 ms apart with response times, imported."""
    d = tmp_path_factory.mktemp("tampered")
    src, out = d / "t.csv", d / "t.parquet"
    lines = [
        f"{T0 + i * 10_000},hm,0,{'Read' if i % 3 else 'Write'},{(i * 7919 % 5000) * 4096},4096,500\n"
        for i in range(400)
    ]
    src.write_text("".join(lines))
    p = iolab("trace", "import", str(src), "--out", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    return out


def rewritten(table, out, column: str, expr: str) -> None:
    """The table again with `column` made `expr`, every other column and iolab's metadata as
    they were: what a Parquet tool that keeps the file's key-value metadata writes."""
    con = duckdb.connect()
    ((key, value),) = con.execute("SELECT key, value FROM parquet_kv_metadata(?)", [str(table)]).fetchall()
    cols = ", ".join(f"{expr} AS {c}" if c == column else c for c in COLUMNS)
    meta = value.decode().replace("'", "''")
    con.execute(
        f"COPY (SELECT {cols} FROM read_parquet('{table}')) TO '{out}' "
        f"(FORMAT parquet, KV_METADATA {{{key.decode()}: '{meta}'}})"
    )
    con.close()


@pytest.mark.parametrize(
    ("column", "expr", "says"),
    [
        ("latency_us", "'nan'::DOUBLE", "column latency_us holds nan, which is not a response time in µs"),
        ("latency_us", "CASE WHEN time_ns = 0 THEN 'inf'::DOUBLE ELSE latency_us END", "column latency_us holds inf"),
        ("latency_us", "1e300::DOUBLE", "column latency_us holds 1e+300, which is not a response time"),
        ("offset_bytes", "9223372036854775807::BIGINT", "column offset_bytes holds 9.22337e+18, which is not"),
        ("size_bytes", "-4096::BIGINT", "column size_bytes holds -4,096, which is not a size in bytes"),
        ("size_bytes", "4096.5::DOUBLE", "column size_bytes is of type DOUBLE, not BIGINT"),
        ("time_ns", "'x'", "column time_ns is of type VARCHAR, not BIGINT"),
    ],
)
def test_a_table_holding_what_no_reader_writes_is_refused(table, tmp_path, column, expr, says):
    changed = tmp_path / "changed.parquet"
    rewritten(table, changed, column, expr)
    before = set(tmp_path.iterdir())
    for line in (
        ["trace", "analyze", str(changed), "--step", "10ms", "--out", str(tmp_path / "wl")],
        ["trace", "export", str(changed), "--format", "blkparse", "--out", str(tmp_path / "t.blkparse")],
        ["trace", "export", str(changed), "--format", "vscsi", "--out", str(tmp_path / "t.vscsi")],
    ):
        p = iolab(*line)
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout, (line, p.stdout + p.stderr)
        assert said.startswith(f"iolab: {changed}: {says}") and "iolab trace import" in said, (line, said)
        assert "\n\n" not in p.stderr.strip(), p.stderr
        assert set(tmp_path.iterdir()) == before, sorted(set(tmp_path.iterdir()) - before)


def test_a_table_whose_rows_are_not_in_time_order_is_refused(table, tmp_path):
    """Every time still from 0 on, the last IO's first: the stream walk indexed a step far past
    its tables (PanicException: index out of bounds, exit 1)."""
    changed = tmp_path / "reversed.parquet"
    rewritten(table, changed, "time_ns", f"(SELECT max(time_ns) FROM read_parquet('{table}')) - time_ns")
    out = tmp_path / "wl"
    p = iolab("trace", "analyze", str(changed), "--step", "10ms", "--out", str(out))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout and "panic" not in said.lower(), said
    assert "IO 2 is issued at 398000000 ns, before the IO ahead of it (399000000 ns)" in said, said
    assert "not in time order" in said and "import the trace again" in said, said
    assert not out.exists() or not any(out.iterdir())


def with_metadata(table, out, meta: str) -> None:
    """The table's rows under other iolab metadata (the key-value pair import writes)."""
    con = duckdb.connect()
    text = meta.replace("'", "''")
    con.execute(
        f"COPY (SELECT * FROM read_parquet('{table}')) TO '{out}' (FORMAT parquet, KV_METADATA {{iolab_trace: '{text}'}})"
    )
    con.close()


def test_a_tables_start_time_is_never_sql_text(table, tmp_path):
    """start_unix_ns, a number when iolab writes it, went into the SQL of the exports that write
    wall-clock times: a table whose metadata held SQL there made `trace export` write a file of
    its choosing (exit 0), outside --out and every write policy."""
    victim = tmp_path / "elsewhere" / "PWNED.txt"
    victim.parent.mkdir()
    sql = f"0), '', '', '', 0, 0, 0) AS x FROM range(1)) TO '{victim}' (FORMAT csv); COPY (SELECT printf('%d', (0"
    changed = tmp_path / "crafted.parquet"
    with_metadata(table, changed, json.dumps({"fmt": "msr", "sources": ["t.csv"], "start_unix_ns": sql}))
    for fmt in ("msr", "systor", "tencent"):
        out = tmp_path / f"t.{fmt}"
        p = iolab("trace", "export", str(changed), "--format", fmt, "--out", str(out))
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in p.stderr, (fmt, p.stdout + p.stderr)
        assert f"{changed}: its iolab trace metadata's field 'start_unix_ns' is " in said, said
        assert "not a whole number or null" in said and "iolab trace import" in said, said
        assert not victim.exists() and not out.exists()


@pytest.mark.parametrize(
    ("meta", "says"),
    [
        ("{not json", "its iolab trace metadata is not JSON"),
        ("[]", "its iolab trace metadata's document is [], not an object"),
        ('{"fmt": "msr"}', "its iolab trace metadata's field 'sources' is missing"),
        ('{"fmt": "msr", "sources": ["t.csv"], "skipped_examples": [{"x": 1}]}', "skipped_examples[0] has the fields"),
        ('{"fmt": "msr", "sources": ["t\\u001b[31m"]}', "holds a control character ('\\x1b' at position 2)"),
        ('{"fmt": "msr", "sources": ["t.csv"], "start_unix_ns": 1e40}', "field 'start_unix_ns' is 1e+40, not a whole"),
    ],
)
def test_a_tables_damaged_metadata_is_refused(table, tmp_path, meta, says):
    """Each ended `trace analyze` and `trace export` with a traceback (JSONDecodeError,
    KeyError, TypeError), or printed the escape sequence to the terminal."""
    changed = tmp_path / "changed.parquet"
    with_metadata(table, changed, meta)
    for line in (
        ["trace", "analyze", str(changed), "--step", "10ms", "--out", str(tmp_path / "wl")],
        ["trace", "export", str(changed), "--format", "fio3", "--out", str(tmp_path / "t.iolog")],
    ):
        p = iolab(*line)
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout, (line, p.stdout + p.stderr)
        assert said.startswith(f"iolab: {changed}: ") and says in said, (line, said)
        assert "\x1b" not in p.stdout + p.stderr
