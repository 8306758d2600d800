"""Stream-analysis plots (pages/report/stream_plots.py), vector Drawings: drawing cost does not
grow with the number of steps, binned values are the true IOPS, averages and maxima of the
steps they group, the stacked map's top is each bin's IOPS, a bin with nothing known is a gap,
each plot keeps the geometry rules, and `write_all` writes them as SVG files."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iolab.pages.report import stream_plots as plots
from iolab.pages.report.geometry import plot_violations
from iolab.pages.report.vector import Clip, Drawing, Line
from iolab.traces.analysis.streamstats import SeqRule, StepStat, StreamAnalysis, StreamStat


def _analysis(n_steps: int, step_s: float = 1.0) -> StreamAnalysis:
    rng = np.random.default_rng(2)
    streams = (
        StreamStat(
            access="rnd",
            op="read",
            block_size=4096,
            ios=0,
            pct=60.0,
            io_bytes=0,
            dominant=True,
            rt_avg_us=100.0,
            rt_max_us=900.0,
        ),
        StreamStat(
            access="seq",
            op="write",
            block_size=65536,
            ios=0,
            pct=35.0,
            io_bytes=0,
            dominant=True,
            rt_avg_us=100.0,
            rt_max_us=900.0,
        ),
        StreamStat(
            access="rnd",
            op="write",
            block_size=512,
            ios=0,
            pct=5.0,
            io_bytes=0,
            dominant=False,
            rt_avg_us=100.0,
            rt_max_us=900.0,
        ),
    )
    steps = []
    for k in range(n_steps):
        c = rng.integers(0, 50, 3)
        steps.append(
            StepStat(
                index=k,
                start_s=k * step_s,
                duration_s=step_s,
                ios=int(c.sum()),
                read_ios=int(c[0]),
                io_bytes=0,
                iops=c.sum() / step_s,
                mbps=0.0,
                read_pct=None,
                oio_avg=float(k % 7),
                oio_max=int(k % 11),
                rt_avg_us=float(100 + k % 5),
                rt_max_us=float(1000 + k % 13),
                streams=tuple((i, int(n)) for i, n in enumerate(c) if n),
            )
        )
    return StreamAnalysis(
        source="x.parquet",
        fmt="synthetic",
        step_s=step_s,
        threshold=0.03,
        seq=SeqRule(),
        devices=(),
        process=None,
        total_ios=sum(s.ios for s in steps),
        excluded_ios=0,
        duration_s=n_steps * step_s,
        has_latency=True,
        streams=streams,
        steps=tuple(steps),
    )


LONG = "/captures/" + "web_frontend_tier_capture_" * 5 + ".parquet"


def _lines(d: Drawing) -> list[Line]:
    """Every polyline and polygon drawn, in the order drawn, inside the axes' clip or not."""
    return [ln for s in d.shapes for ln in (s.shapes if isinstance(s, Clip) else (s,)) if isinstance(ln, Line)]


def _data(d: Drawing, colors: set[str]) -> list[Line]:
    """The series' shapes: lines stroked, or polygons filled, in one of `colors`."""
    return [ln for ln in _lines(d) if (ln.fill or ln.stroke) in colors and len(ln.points) > 2]


def test_drawing_does_not_grow_with_steps():
    a = _analysis(30_000)
    ds = plots.drawings(a)
    # 3 series (2 dominant + other) on at most MAX_BINS bins: a few points per bin, not per step
    fills = _data(ds["stream_map"], {*plots.TAB20, plots.OTHER})
    assert len(fills) == 3 and sum(len(f.points) for f in fills) <= 3 * 4 * plots.MAX_BINS
    for name in ("outstanding", "response_times"):
        lines = _data(ds[name], {plots.MAXIMUM, plots.AVERAGE})
        assert len(lines) == 2 and sum(len(ln.points) for ln in lines) <= 2 * (2 * plots.MAX_BINS + 1)
    assert "30,000 steps drawn as 790 bins of 38" in ds["stream_map"].record["axes"][0]["title"]


@pytest.mark.parametrize(
    ("n_steps", "source"), [(1, "x.parquet"), (50, "x.parquet"), (30_000, "x.parquet"), (30_000, LONG)]
)
def test_every_plot_keeps_the_geometry_rules(n_steps, source):
    a = dataclasses.replace(_analysis(n_steps), source=source)  # a long name: the titles wrap inside the figure
    for name, d in plots.drawings(a).items():
        assert [str(v) for v in plot_violations(d.record, name)] == []
        w, h = d.record["size"]
        assert all(t["box"][0] >= 0 and t["box"][2] <= w and t["box"][3] <= h for t in d.record["texts"]), name


def test_a_long_trace_name_in_a_title_breaks_at_its_separators_not_inside_a_word():
    """A title's lines break at spaces and after the name's "_" and "-" (textwidth.wrap), each
    part of the name whole on one line; only a part wider than a line alone would be cut."""
    stem = "web_server_frontend_cluster-node-17_2024-03-11_production_capture_after_the_kernel_upgrade"
    a = dataclasses.replace(_analysis(5), source=f"/captures/{stem}.parquet")
    for name, d in plots.drawings(a).items():
        [title] = [t["text"] for t in d.record["texts"] if t["role"] == "title"]
        lines = title.split("\n")
        assert len(lines) > 1, name
        for part in ("web_", "server_", "frontend_", "cluster-", "node-17_", "2024-03-11_", "production_", "upgrade"):
            assert any(part in ln for ln in lines), (name, part, lines)
    x = dataclasses.replace(_analysis(5), source="/captures/" + "x" * 300 + ".parquet")
    for name, d in plots.drawings(x).items():  # one word wider than a line: cut where each line is full
        [title] = [t for t in d.record["texts"] if t["role"] == "title"]
        assert title["text"].count("x" * 60) >= 2 and plot_violations(d.record, name) == [], name


def test_the_stack_top_is_each_steps_iops_and_the_axes_name_what_is_drawn():
    a = _analysis(40)
    d = plots.stream_map(a)
    [ax] = d.record["axes"]
    assert ax["x"]["label"] == "time (seconds)" and ax["y"]["label"] == "IOPS" and ax["y"]["scale"] == "linear"
    assert ax["legend"] == ["RND 4KiB R (60.0 %)", "SEQ 64KiB W (35.0 %)", "other streams"]
    assert all(ax["series"].values())
    fills = _data(d, {*plots.TAB20, plots.OTHER})
    top = fills[-1]  # drawn last: "other streams", on top of the rest
    assert top.fill == plots.OTHER and top.closed and top.stroke is None
    # the top edge of the last polygon, left to right: one flat segment per step, its height the IOPS
    [axes_box] = [s for s in d.shapes if isinstance(s, Clip)]
    ys = [y for _, y in top.points[: 2 * len(a.steps)]]
    bottom, y_span = axes_box.y + axes_box.h, None
    iops = [s.ios / s.duration_s for s in a.steps]
    scale = (bottom - ys[0]) / iops[0]  # mm per IOPS, from the first step (from 0 up)
    y_span = [(bottom - y) / scale for y in ys[0::2]]
    assert y_span == pytest.approx(iops, rel=1e-6)
    assert ys[0::2] == ys[1::2]  # each step flat


def test_a_step_with_nothing_known_is_a_gap_and_response_times_are_on_a_log_axis():
    a = _analysis(30)
    steps = list(a.steps)
    for k in (10, 11):  # no IO completed in these steps: no response time known
        steps[k] = dataclasses.replace(steps[k], rt_avg_us=None, rt_max_us=None)
    d = plots.drawings(dataclasses.replace(a, steps=tuple(steps)))["response_times"]
    [ax] = d.record["axes"]
    assert ax["y"]["scale"] == "log" and ax["y"]["label"] == "response time (µs)"
    assert ax["legend"] == ["maximum", "average"]
    avg = _data(d, {plots.AVERAGE})
    assert len(avg) == 2  # steps 0-9 and 12-29, not joined across the gap
    assert [len(ln.points) for ln in avg] == [2 * 10 + 1, 2 * 18 + 1]
    oio = plots.drawings(a)["outstanding"].record["axes"][0]
    assert oio["y"]["scale"] == "linear" and oio["y"]["label"] == "outstanding IO"


def test_the_stream_table_holds_every_stream_and_the_rest_summed():
    a = _analysis(20)
    d = plots.stream_table(a, max_rows=2)
    texts = [t["text"] for t in d.record["texts"]]
    assert texts[0].replace("\n", " ").startswith("IO streams — x, 1 s steps:")
    assert texts[1:7] == ["stream", "IOs", "% occurrence", "dominant", "MB", "avg RT (µs)"]
    assert ["RND 4KiB R", f"{a.streams[0].ios:,}", "60.00", "yes", "0.0", "100.0"] == texts[7:13]
    assert texts[-4:] == ["1 more streams", f"{a.streams[2].ios:,}", "5.00", "0.0"]


def test_write_all_writes_an_svg_file_per_plot(tmp_path):
    a = _analysis(20)
    paths = plots.write_all(a, tmp_path / "plots")
    assert set(paths) == {"stream_map", "stream_table", "outstanding", "response_times"}
    for name, p in paths.items():
        text = p.read_text()
        assert p.name == f"{name}.svg" and text.startswith("<?xml") and "<svg xmlns=" in text
        assert '<rect x="0.00" y="0.00"' in text and 'fill="#ffffff"' in text  # on white
    no_rt = dataclasses.replace(a, has_latency=False)
    assert set(plots.write_all(no_rt, tmp_path / "plots2")) == {"stream_map", "stream_table"}


def test_bins_keep_iops_averages_and_maxima():
    a = _analysis(2_000, step_s=0.5)
    b = plots._bins(a, max_bins=100)
    assert b.per == 20 and len(b.dur_s) == 100
    ios = np.array([s.ios for s in a.steps], dtype=float)
    assert b.sum(ios)[3] == ios[60:80].sum()
    assert b.dur_s[3] == pytest.approx(10.0)
    v = np.array([s.rt_max_us for s in a.steps])
    assert b.max(v)[3] == v[60:80].max()
    w = ios.copy()
    avg = np.array([s.rt_avg_us for s in a.steps])
    assert b.mean(avg, w)[3] == pytest.approx((avg[60:80] * w[60:80]).sum() / w[60:80].sum())
    # A few steps: one bin per step, nothing merged.
    assert plots._bins(_analysis(50)).per == 1
