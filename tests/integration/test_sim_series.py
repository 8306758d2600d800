"""A simulated HDD's timed cells through `iolab run` and `iolab export`: the in-flight IOs a
cell drains after its nominal second go into the seconds they complete in (a last, partial
row), so no row is faster than the medium and the rows add up to the cell; and command aging
keeps one queued write from waiting the cell's whole runtime."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs
from iolab.engines.sim import list_presets
from iolab.store.runstore import RunStore

from .conftest import iolab

pytestmark = pytest.mark.integration

PRESET = "sata-7200-hdd"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """The quick throughput test (enterprise profile: write cache disabled, QD32, 1 s cells)."""
    runs = tmp_path_factory.mktemp("series") / "runs"
    p = iolab("run", "throughput", "-t", f"sim:{PRESET}", "--quick", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    [r] = list_runs(runs)
    return Path(r.path)


def _spans(t_s: list[float]) -> list[float]:
    return [t - prev for prev, t in zip([0.0, *t_s], t_s)]


def _media_mbps() -> float:
    [drive] = [p for p in list_presets() if p.name == PRESET]
    return float(next(v for k, v in drive.parameters if k == "outer_mbps").split()[0])


def test_rows_are_seconds_of_virtual_time_that_add_up_to_the_cell(run_dir):
    """Before, every 1 s cell was one row: the 1 MiB reads' 1.2 s at 206.6 MB/s per row (the
    cell read 172 MB/s), the writes' 1.3 s at 154.1 (119 measured)."""
    media = _media_mbps()
    store = RunStore.open(run_dir)
    try:
        cells = store.cells()
        assert cells and any(c.runtime_s > 1.05 for c in cells), "some cell drains past its second"
        for c in cells:
            rows = store.series(c.id)
            spans = _spans([r[0] for r in rows])
            where = (c.cell_key, c.round, c.runtime_s, rows)
            assert rows[-1][0] == pytest.approx(c.runtime_s, abs=1e-6), where
            assert all(s == pytest.approx(1.0) for s in spans[:-1]) and 0 < spans[-1] <= 1.0, where
            ios = sum((r[1] + r[2]) * s for r, s in zip(rows, spans))
            io_bytes = sum(r[3] * 1e6 * s for r, s in zip(rows, spans))
            assert ios == pytest.approx(c.read_ios + c.write_ios, abs=1e-6), where
            assert io_bytes == pytest.approx(c.io_bytes, abs=1.0), where
            for r, s in zip(rows, spans):
                # the medium's rate over the row, and one IO that began before the row started
                assert r[3] * 1e6 * s <= media * 1e6 * s + c.block_size, (r, s, where)
    finally:
        store.close()


def test_no_queued_write_waits_the_whole_cell(run_dir):
    """Shortest positioning time first passed over the first write of each sequential cell to
    the end (max latency = runtime, 1.294952 s of 1.294952 s); aging serves it in time."""
    store = RunStore.open(run_dir)
    try:
        cells = store.cells()
        late = [(c.cell_key, c.round, c.lat_max_us, c.runtime_s) for c in cells if c.lat_max_us > 0.75e6 * c.runtime_s]
        assert not late
    finally:
        store.close()


def test_export_marks_each_rows_length(run_dir, tmp_path):
    out = tmp_path / "export"
    p = iolab("export", str(run_dir), "--out", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    with (out / "series.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_cell: dict[str, list[dict]] = {}
    for r in rows:
        by_cell.setdefault(r["cell_id"], []).append(r)
    partial = 0
    for cell_rows in by_cell.values():
        spans = [float(r["span_s"]) for r in cell_rows]
        assert all(s == pytest.approx(1.0) for s in spans[:-1]), spans
        partial += spans[-1] < 0.98
    assert partial, "the cells that drained past a whole second end with a partial row"
