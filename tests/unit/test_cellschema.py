"""The cells table is declared once (iolab.core.cellschema): the database iolab writes, the INSERT,
CellRow, the exported cells table and the window averages all agree with that declaration,
and the columns on disk are still those every released results.db has, so old runs open."""

from __future__ import annotations

import dataclasses
import sqlite3

from iolab.core import cellschema
from iolab.core.results import Histogram, OpStats, RoundResult, percentile_min_ios
from iolab.core.units import pct_text
from iolab.figures.summary import CellAverage
from iolab.pages import export
from iolab.store.runstore import RunStore

# results.db's cells table as released (the `partial` and `idle_before_s` columns were added
# later, at the end; older files gain them when opened for writing). Changing a column here
# breaks old runs.
RELEASED_CELLS = """CREATE TABLE cells (
    id INTEGER PRIMARY KEY, phase TEXT NOT NULL, round INTEGER NOT NULL, ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL, cell_key TEXT NOT NULL, mix TEXT, block_size INTEGER, workload TEXT NOT NULL,
    started REAL, ended REAL, runtime_s REAL,
    read_iops REAL, write_iops REAL, iops REAL, read_mbps REAL, write_mbps REAL, mbps REAL,
    read_ios INTEGER, write_ios INTEGER, io_bytes INTEGER, write_bytes INTEGER,
    lat_mean_us REAL, lat_max_us REAL,
    read_lat_mean_us REAL, read_lat_max_us REAL, write_lat_mean_us REAL, write_lat_max_us REAL,
    p99 REAL, p99_9 REAL, p99_99 REAL, p99_999 REAL,
    counters TEXT, raw_files TEXT, partial INTEGER, idle_before_s REAL)"""

# `iolab export`'s cells table as published: users' scripts read these names in this order.
PUBLISHED_EXPORT = [
    "run_id:VARCHAR",
    "cell_id:BIGINT",
    "phase:VARCHAR",
    "round:BIGINT",
    "ordinal:BIGINT",
    "kind:VARCHAR",
    "cell_key:VARCHAR",
    "mix:VARCHAR",
    "block_size:BIGINT",
    "started:DOUBLE",
    "ended:DOUBLE",
    "runtime_s:DOUBLE",
    "iops:DOUBLE",
    "read_iops:DOUBLE",
    "write_iops:DOUBLE",
    "mbps:DOUBLE",
    "read_mbps:DOUBLE",
    "write_mbps:DOUBLE",
    "io_bytes:BIGINT",
    "write_bytes:BIGINT",
    "lat_mean_us:DOUBLE",
    "lat_max_us:DOUBLE",
    "read_lat_mean_us:DOUBLE",
    "write_lat_mean_us:DOUBLE",
    "read_ios:BIGINT",
    "write_ios:BIGINT",
    "read_lat_max_us:DOUBLE",
    "write_lat_max_us:DOUBLE",
    "p99_us:DOUBLE",
    "p99_9_us:DOUBLE",
    "p99_99_us:DOUBLE",
    "p99_999_us:DOUBLE",
    "workload:VARCHAR",
    "counters:VARCHAR",
    "raw_files:VARCHAR",
    "partial:BOOLEAN",
    "idle_before_s:DOUBLE",
]


def table_info(con: sqlite3.Connection) -> list[tuple]:
    # (name, type, notnull, default, pk) of every column, in order
    return [tuple(r[1:]) for r in con.execute("PRAGMA table_info(cells)")]


def test_the_database_iolab_writes_has_the_released_cells_columns(tmp_path):
    s = RunStore(tmp_path)
    try:
        written = table_info(s._db)
    finally:
        s.close()
    released = sqlite3.connect(":memory:")
    released.execute(RELEASED_CELLS)
    assert written == table_info(released)
    assert [c[0] for c in written] == [c.name for c in cellschema.CELL_COLUMNS]


def test_cellrow_has_one_field_per_declared_column():
    assert [f.name for f in dataclasses.fields(cellschema.CellRow)] == [c.name for c in cellschema.CELL_COLUMNS]


def test_the_exported_cells_table_is_the_declaration_in_the_published_order():
    assert [f"{c.name}:{c.type}" for c in export.CELL_COLUMNS] == PUBLISHED_EXPORT
    # every declared column is exported exactly once
    assert sorted(cellschema.EXPORT_ORDER) == sorted(c.name for c in cellschema.CELL_COLUMNS)


def test_cellaverage_has_each_averaged_column():
    fields = {f.name for f in dataclasses.fields(CellAverage)}
    averaged = {c.name for c in cellschema.AVERAGED}
    assert averaged and averaged <= fields
    assert averaged == {
        "iops",
        "read_iops",
        "write_iops",
        "mbps",
        "read_mbps",
        "write_mbps",
        "lat_mean_us",
        "lat_max_us",
    }


def _result() -> RoundResult:
    # Every figure different, so a column reading the wrong one shows.
    # 1,000,000 IOs: enough to measure 99.999 % (ten IOs beyond it)
    rh = Histogram((10.0, 20.0, 500.0, 700.0, 900.0), (990_000, 8_000, 1_500, 400, 100), 950.0)
    read = OpStats(
        ios=1_000_000,
        io_bytes=409_600,
        iops=1000.0,
        mbps=4.1,
        lat_mean_us=12.0,
        lat_max_us=950.0,
        lat_min_us=9.0,
        histogram=rh,
    )
    write = OpStats(
        ios=300,
        io_bytes=2_457_600,
        iops=3000.0,
        mbps=24.6,
        lat_mean_us=35.0,
        lat_max_us=45.0,
        lat_min_us=29.0,
        histogram=None,
    )
    return RoundResult(read, write, runtime_s=0.1, counters={"waf": 2.5}, raw_files=("raw/a.json", "raw/a.fio"))


def test_a_stored_cell_reads_back_every_figure_from_its_own_source(tmp_path):
    res = _result()
    s = RunStore(tmp_path)
    try:
        cid = s.add_cell(
            "main",
            2,
            7,
            "measure",
            "k",
            "65/35",
            4096,
            {"duration_s": 0.1},
            res,
            5.0,
            5.1,
            partial=True,
            idle_before_s=15.0,
        )
        [row] = s.cells(kind="measure", complete_only=False)
    finally:
        s.close()
    expected = {
        "id": cid,
        "phase": "main",
        "round": 2,
        "ordinal": 7,
        "kind": "measure",
        "cell_key": "k",
        "mix": "65/35",
        "block_size": 4096,
        "workload": {"duration_s": 0.1},
        "started": 5.0,
        "ended": 5.1,
        "runtime_s": 0.1,
        "read_iops": 1000.0,
        "write_iops": 3000.0,
        "iops": 4000.0,
        "read_mbps": 4.1,
        "write_mbps": 24.6,
        "mbps": 4.1 + 24.6,
        "read_ios": 1_000_000,
        "write_ios": 300,
        "io_bytes": 409_600 + 2_457_600,
        "write_bytes": 2_457_600,
        "lat_mean_us": (1_000_000 * 12.0 + 300 * 35.0) / 1_000_300,
        "lat_max_us": 950.0,
        "read_lat_mean_us": 12.0,
        "read_lat_max_us": 950.0,
        "write_lat_mean_us": 35.0,
        "write_lat_max_us": 45.0,
        "p99": 10.0,
        "p99_9": 500.0,
        "p99_99": 700.0,
        "p99_999": 900.0,
        "counters": {"waf": 2.5},
        "raw_files": ["raw/a.json", "raw/a.fio"],
        "partial": True,
        "idle_before_s": 15.0,
    }
    assert dataclasses.asdict(row) == expected


def test_a_percentile_the_ios_cannot_measure_is_shown_nowhere(tmp_path):
    # 20,000 IOs: 99.9 % has 20 IOs beyond it; 99.99 % (2) and 99.999 % (0.2) are not measured
    h = Histogram((10.0, 500.0, 700.0, 900.0), (19_970, 20, 8, 2), 950.0)
    assert [h.measured(p) for p in (99.0, 99.9, 99.99, 99.999)] == [10.0, 500.0, None, None]
    assert h.percentile(99.999) == 900.0  # the bin maths, which no table shows
    assert [percentile_min_ios(p) for p in (99.0, 99.9, 99.99, 99.999)] == [1_000, 10_000, 100_000, 1_000_000]
    read = OpStats(
        ios=20_000,
        io_bytes=81_920_000,
        iops=2000.0,
        mbps=8.2,
        lat_mean_us=12.0,
        lat_max_us=950.0,
        lat_min_us=9.0,
        histogram=h,
    )
    s = RunStore(tmp_path)
    try:
        s.add_cell(
            "main",
            1,
            0,
            "measure",
            "k",
            "100/0",
            4096,
            {"duration_s": 10.0},
            RoundResult(read, OpStats(0, 0, 0.0, 0.0, None, None, None, None), runtime_s=10.0),
            5.0,
            15.0,
        )
        [row] = s.cells(complete_only=False)
    finally:
        s.close()
    # stored as the bins give it (a stop rule reads the same on resume), never shown or exported
    assert (row.p99, row.p99_9, row.p99_99, row.p99_999) == (10.0, 500.0, 700.0, 900.0) and row.ios == 20_000
    assert (
        pct_text(row.p99_999, row.ios, 99.999) == "n/m (20,000 IOs)" and pct_text(row.p99_9, row.ios, 99.9) == "500.0"
    )
    exported = dict(zip((c.name for c in export.CELL_COLUMNS), export._cell_row("r", row)))
    assert (exported["p99_us"], exported["p99_9_us"], exported["p99_99_us"], exported["p99_999_us"]) == (
        10.0,
        500.0,
        None,
        None,
    )
