"""Read and write figures of the characterisation mixes (mixed matrix, entropy's 70/30) through
`iolab show` and the report's tables, and the IO consistency comparison's spread figures and
its one linear scale: each checked against what the run stored."""

from __future__ import annotations

import json

import pytest

from iolab.core.units import NONE, num
from iolab.pages.compare_pages.characterise import common_scale, per_drive_axes
from iolab.pages.report import model, plots
from iolab.pages.report.char_series import consistency_figures, consistency_series
from iolab.pages.report.characterise import entropy_pages, mixed_pages
from iolab.pages.report.rundata import RunData

from .conftest import iolab
from .test_cli_characterise import sim_run

pytestmark = pytest.mark.integration


def direction_text(r, op: str) -> str:
    """How `iolab show` prints one direction of a cell, from the stored read_/write_ columns."""
    g = lambda f: getattr(r, f"{op}_{f}")  # noqa: E731
    return f"{num(g('iops'))}, {num(g('mbps'))} ({num(g('lat_mean_us'))} / {num(g('lat_max_us'))})"


def section(text: str, title: str) -> list[str]:
    """The lines of one printed table, from its title to the next blank-separated title."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if title in ln)
    out = []
    for ln in lines[start + 1 :]:
        if ":" in ln and ("IOPS" in ln or "MB/s" in ln) and out:
            break  # the next table's title
        out.append(ln)
    return out


def row_of(lines: list[str], label: str) -> str:
    return next(ln for ln in lines if ln.strip().startswith(label + " "))


def test_mixed_matrix_shows_read_and_write_per_cell(scratch):
    s = sim_run(scratch, "mixed-matrix", "sim:enterprise-sas?user_gb=4", "--cell-time", "200ms")
    rows = {r.cell_key: r for r in s.cells("mixed")}
    assert set(rows) == {f"{w}% W QD{q}" for w in (0, 30, 70, 100) for q in (1, 32)}
    mixed = rows["30% W QD32"]
    assert mixed.read_ios > 0 and mixed.write_ios > 0 and mixed.read_lat_mean_us != mixed.write_lat_mean_us

    p = iolab("show", str(s.dir))
    assert p.returncode == 0, p.stderr
    for op in ("read", "write"):
        table = section(p.stdout, f"mixed: {op} IOPS")
        for w in (30, 70):
            line = row_of(table, f"{w}% W")
            for q in (1, 32):
                assert direction_text(rows[f"{w}% W QD{q}"], op) in line, (op, w, q, line)
    # a direction the cell does not run is not measured: no 0 IOPS, no latency
    assert row_of(section(p.stdout, "mixed: write IOPS"), "0% W").split()[2:] == [NONE, NONE]
    assert row_of(section(p.stdout, "mixed: read IOPS"), "100% W").split()[2:] == [NONE, NONE]

    # the report's tables: each per-direction figure per cell, as stored
    run = RunData.load(s.dir, scratch)
    tables = {t.caption: t for pg in mixed_pages(run) for t in pg.blocks if isinstance(t, model.Table)}
    for op in ("read", "write"):
        for name, col in (
            (f"{op} IOPS", "iops"),
            (f"{op} MB/s", "mbps"),
            (f"{op} average latency (µs)", "lat_mean_us"),
            (f"{op} maximum latency (µs)", "lat_max_us"),
        ):
            t = tables[f"mixed: {name} by queue depth"]
            assert t.columns == ("", "QD 1", "QD 32")
            for lab, *vals in t.rows:
                w = int(lab.split("%")[0])
                ran = w < 100 if op == "read" else w > 0
                want = [num(getattr(rows[f"{lab} QD{q}"], f"{op}_{col}")) if ran else NONE for q in (1, 32)]
                assert vals == want, (name, lab)
    # and a plot of each direction
    figures = [b.caption for pg in mixed_pages(run) for b in pg.blocks if isinstance(b, model.Figure)]
    assert {
        "mixed: read IOPS vs queue depth, one line per series",
        "mixed: write average latency vs queue depth, one line per series",
    } <= set(figures)


def test_entropy_splits_its_mixed_phase_only(scratch):
    s = sim_run(scratch, "entropy", "sim:enterprise-sas?user_gb=4", "--cell-time", "200ms")
    rows = {r.cell_key: r for r in s.cells("70/30")}
    p = iolab("show", str(s.dir))
    assert p.returncode == 0, p.stderr
    line = row_of(section(p.stdout, "70/30: write IOPS"), "50% entropy")
    assert direction_text(rows["50% entropy QD32"], "write") in line
    assert "write: read IOPS" not in p.stdout  # an all-write phase has no read part to show
    titles = {getattr(b, "caption", "") for pg in entropy_pages(RunData.load(s.dir, scratch)) for b in pg.blocks}
    assert "70/30: read average latency (µs) by queue depth" in titles
    assert "write: read average latency (µs) by queue depth" not in titles


def test_consistency_comparison_ranks_the_spread_on_one_linear_scale(scratch):
    stores = [
        sim_run(scratch, "consistency", f"sim:{p}?user_gb=4", "--cell-time", "200ms", "--set", "duration=12s")
        for p in ("enterprise-sas", "entry-sata-compress")
    ]
    c = iolab("compare", *(str(s.dir) for s in stores), "--out", str(scratch / "cmp"), "--json")
    assert c.returncode == 0, c.stderr
    figures = {f["name"]: f for f in json.loads(c.stdout)["ranking"]["figures"]}
    runs = [RunData.load(s.dir, scratch) for s in stores]
    spreads = [consistency_figures(r)[0] for r in runs]
    cv = figures["steady-part coefficient of variation"]
    mm = figures["steady-part minimum ÷ maximum"]
    assert cv["direction"] == "lower-is-better" and mm["direction"] == "higher-is-better"
    assert cv["values"] == pytest.approx([100 * sp.cv for sp in spreads])
    assert mm["values"] == pytest.approx([100 * sp.min_over_max for sp in spreads])
    for f, lower in ((cv, True), (mm, False)):
        a, b = (num(v) for v in f["values"])  # ranked as printed
        if a == b:
            assert f["ranks"] == [1, 1]
        else:
            first = (f["values"][0] < f["values"][1]) == lower
            assert f["ranks"] == ([1, 2] if first else [2, 1]), f

    # the per-drive panels: one linear axis from 0 to the common maximum of every drive's seconds
    series = [plots.Series(lab, *map(tuple, consistency_series(r)[:2])) for lab, r in zip("ab", runs)]
    top = max(y for s in series for y in s.y)
    axes = per_drive_axes(series)
    assert len(axes) == 2
    for ax in axes:
        assert not ax.ylog
        assert ax.ylim == (0, common_scale(series))
    assert top < common_scale(series) <= 1.06 * top
