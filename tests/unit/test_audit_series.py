"""The series-totals invariant on recorded fio output (tests/fixtures/fio): what fio's logs
leave out (the IO after a thread's last row: the rest of its runtime and the IO in flight when
it was up) never fails a correct round, and rows lost, another cell's rows or a total counted
twice still fail (audit_series.py derives the bound).

`iops1m` is the round of `iolab run iops --quick` on a 128 MiB file that failed main's check
(RND 1 MiB 5/95, 4 threads × QD32, 1 s: one row a thread at 1.001-1.023 s, the round ended at
1.047 s with 119 of its 1,748 IOs in no row); `drain4s` a 4 s round of the same cell whose
threads were last sampled at 3.012 s, its rest the tail row fio_parse makes of the totals;
`late1100` a 1.1 s round of it whose rows the tests re-stamp as a loaded loop-device round's were."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iolab.cli.app import app
from iolab.core.results import RoundResult
from iolab.engines.fio_parse import load_round
from iolab.figures.audit_series import Row, Shape, findings
from tests.unit.test_audit import iops_run, planted, results  # noqa: F401 (the good simulated run)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"
MiB = 1024 * 1024


def recorded(tmp_path: Path, tag: str, stamp_ms: int | None = None) -> RoundResult:
    """The recorded round; `stamp_ms`: each iops/bw log row re-stamped at that time."""
    raw = tmp_path / tag / "raw"
    raw.mkdir(parents=True)
    for f in FIXTURES.glob(f"{tag}[._]*"):
        shutil.copy(f, raw / f.name)
        if stamp_ms is not None and ("_iops." in f.name or "_bw." in f.name):
            lines = (raw / f.name).read_text().splitlines()
            (raw / f.name).write_text("".join(f"{stamp_ms},{ln.split(',', 1)[1]}\n" for ln in lines))
    return load_round(raw, tag, require_bins=False)


def rows_of(r: RoundResult) -> list[Row]:
    return [(s.t_s, s.read_iops, s.write_iops, s.mbps, s.lat_max_us) for s in r.series]


def shape_of(r: RoundResult, scale: int = 1) -> Shape:
    ios, io_bytes = r.read.ios + r.write.ios, r.read.io_bytes + r.write.io_bytes
    return Shape(ios * scale, io_bytes * scale, r.runtime_s, 4, 32, MiB)


def failed(rows: list[Row], cell: Shape) -> list[str]:
    return [f.text() for f in findings(rows, cell) if f.short or f.over]


@pytest.mark.parametrize("tag", ["iops1m", "drain4s", "late1100"])
def test_correct_fio_output_passes(tmp_path, tag):
    r = recorded(tmp_path, tag)
    assert failed(rows_of(r), shape_of(r)) == []


def test_the_io_in_flight_after_the_last_row_is_what_main_failed(tmp_path):
    r = recorded(tmp_path, "iops1m")
    rows, cell = rows_of(r), shape_of(r)
    [(t, *_)] = rows
    assert (t, r.runtime_s, cell.ios) == (1.023, 1.047, 1748)  # no tail row: 24 ms left
    [ios, mb] = findings(rows, cell)
    # main's bound: 95 % of the total less one IO a row; 7 % are in no row, within the 4 × QD32
    # in flight and 24 ms at the row's 1,592 IO/s (and 1 IO a thread and interval: the rates are truncated)
    assert ios.rows_sum < ios.total * 0.95 - len(rows)
    assert ios.total - ios.rows_sum == pytest.approx(119.4, abs=0.1)
    assert ios.unlogged_max == pytest.approx(1592 * 0.024 + 128 + 4 * 1.023)
    assert mb.unlogged_max == pytest.approx(
        (841822 + 45043 + 261882 + 16367 + 251652 + 13298 + 196149 + 10058) * 1024 / 1e6 * 0.024
        + 128 * MiB / 1e6
        + 4 * 1.023 * 1024 / 1e6
    )


def test_rows_lost_another_cells_rows_or_a_total_counted_twice_fail(tmp_path):
    short, long = recorded(tmp_path, "iops1m"), recorded(tmp_path, "drain4s")
    assert failed(rows_of(short), shape_of(short, scale=2))  # the total counted twice
    assert failed(rows_of(long), shape_of(long, scale=2))
    assert failed(rows_of(long)[:-2], shape_of(long))  # the last two rows lost: more than fio leaves out
    assert failed(rows_of(short), shape_of(long))  # another cell's rows, either way
    over = failed(rows_of(long), shape_of(short))
    assert over and "more than the cell's total" in over[0]
    doubled = [(t, 2 * r, 2 * w, 2 * mb, mx) for t, r, w, mb, mx in rows_of(long)]
    assert failed(doubled, shape_of(long))  # each row's rate summed twice


def test_rows_stamped_after_their_window_pass_and_inflated_ones_still_fail(tmp_path):
    # the loaded round's shape: one row a thread stamped 1.308 s, each rate over the thread's own
    # ~1.1 s (1.000-1.099 s as recorded): counted from 0 the rows hold 1.308 s of it
    r = recorded(tmp_path / "late", "late1100", stamp_ms=1308)
    rows, cell = rows_of(r), shape_of(r)
    assert [(t, rd + wr) for t, rd, wr, *_ in rows] == [(1.308, 1867)]
    assert (r.runtime_s, cell.ios) == (1.123, 2130)
    [ios, mb] = findings(rows, cell)
    assert ios.rows_sum == pytest.approx(1867 * 1.308)  # 2,442 IOs: over the old bound, 2,237.5
    assert ios.rows_sum > ios.most
    assert ios.rows_least == pytest.approx(1867.0)  # each rate over the one interval it was measured over
    assert failed(rows, cell) == []
    # rows that hold clearly more than fio's totals still fail: the rates doubled, or totals of 80 %
    doubled = [(t, 2 * rd, 2 * wr, 2 * m, mx) for t, rd, wr, m, mx in rows]
    assert any("more than the cell's total" in f for f in failed(doubled, cell))
    low = Shape(int(cell.ios * 0.8), int(cell.io_bytes * 0.8), cell.runtime_s, 4, 32, MiB)
    assert any("at least 1,867.0 IOs" in f for f in failed(rows, low))


def with_cell(run: Path, tmp_path: Path, r: RoundResult, scale: int = 1) -> Path:
    """A copy of the good run whose first measured cell holds this recorded round's totals and rows."""
    (tmp_path / "w").mkdir(parents=True)
    cell = "(SELECT MIN(id) FROM cells WHERE kind='measure')"
    w = {
        "streams": [
            {"access": "rnd", "op": "read", "block_size": MiB, "share": 0.05},
            {"access": "rnd", "op": "write", "block_size": MiB, "share": 0.95},
        ],
        "threads": 4,
        "queue_depth": 32,
    }
    copy = planted(
        run,
        tmp_path / "w",
        f"UPDATE cells SET runtime_s={r.runtime_s}, read_ios={r.read.ios * scale}, write_ios={r.write.ios * scale}, "
        f"io_bytes={(r.read.io_bytes + r.write.io_bytes) * scale}, workload='{json.dumps(w)}' WHERE id={cell}",
        f"DELETE FROM series WHERE cell_id={cell}",
    )
    db = sqlite3.connect(copy / "results.db")
    [(cid,)] = db.execute(cell.strip("()")).fetchall()
    db.executemany(
        "INSERT INTO series (cell_id, t_s, read_iops, write_iops, mbps, lat_mean_us, lat_max_us) VALUES (?,?,?,?,?,?,?)",
        [(cid, s.t_s, s.read_iops, s.write_iops, s.mbps, s.lat_mean_us, s.lat_max_us) for s in r.series],
    )
    db.commit()
    db.close()
    return copy


def test_the_audit_passes_a_stored_fio_cell_and_fails_it_counted_twice(iops_run, tmp_path):  # noqa: F811
    r = recorded(tmp_path, "iops1m")
    assert results(with_cell(iops_run, tmp_path / "good", r))["series-totals"] == "pass"
    assert results(with_cell(iops_run, tmp_path / "bad", r, scale=2))["series-totals"] == "fail"


def test_the_audit_passes_a_cell_whose_rows_are_stamped_late(iops_run, tmp_path):  # noqa: F811
    r = recorded(tmp_path, "late1100", stamp_ms=1308)
    assert results(with_cell(iops_run, tmp_path / "good", r))["series-totals"] == "pass"
    assert results(with_cell(iops_run, tmp_path / "bad", r, scale=2))["series-totals"] == "fail"


def audited(run: Path) -> tuple[int, str]:
    got = CliRunner().invoke(app, ["audit", str(run)], env={"COLUMNS": "400"})
    return got.exit_code, got.output


def test_a_preconditioning_cell_whose_rows_hold_too_few_ios_fails_the_audit(iops_run, tmp_path):  # noqa: F811
    """Before: series-totals checked the measurements' rows only, and its line counted those; a
    real WIPC cell whose rows held 2,976 of its 8,192 IOs passed `iolab audit`. Now every shown
    cell with per-second rows is checked, preconditioning too, and the line counts them all."""
    db = sqlite3.connect(iops_run / "results.db")
    [(pre, name)] = db.execute(
        "SELECT id, phase || ' round ' || round || ' ' || cell_key FROM cells WHERE kind='precondition'"
    )
    [(with_rows,)] = db.execute(
        "SELECT COUNT(*) FROM cells c LEFT JOIN rounds r ON r.phase=c.phase AND r.round=c.round WHERE c.runtime_s > 0"
        " AND (c.kind='precondition' OR (c.kind='measure' AND r.complete=1)) AND c.id IN (SELECT cell_id FROM series)"
    ).fetchall()
    db.close()
    code, said = audited(iops_run)
    assert code == 0 and f"ok   series-totals: {with_rows} cells with per-second rows checked" in said, said
    # the preconditioning cell's rows cut to 30 % of its IOs: 70 % of them in no row
    cut = planted(
        iops_run,
        tmp_path,
        f"UPDATE series SET read_iops=read_iops*0.3, write_iops=write_iops*0.3, mbps=mbps*0.3 WHERE cell_id={pre}",
    )
    code, said = audited(cut)
    assert code == 8 and f"FAIL series-totals: {name}: the per-second rows add up to" in said, said
