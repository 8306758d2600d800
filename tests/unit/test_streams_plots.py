"""Stream-analysis plots: drawing cost does not grow with the number of steps, and binned
values are the true IOPS, averages and maxima of the steps they group."""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pytest

from iolab.traces.analysis import plots
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


def test_drawing_does_not_grow_with_steps(tmp_path, monkeypatch):
    drawn: dict[str, int] = {}
    real = matplotlib.figure.Figure.savefig

    def count(fig, out, *args, **kw):
        ax = fig.axes[0]
        vertices = sum(len(p.get_path().vertices) for p in ax.patches) + sum(len(ln.get_xdata()) for ln in ax.lines)
        drawn[str(out).rsplit("/", 1)[-1]] = vertices + len(ax.patches) + len(ax.lines)
        return real(fig, out, *args, **kw)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", count)
    a = _analysis(30_000)
    plots.plot_all(a, tmp_path)
    # 3 series (2 dominant + other) on at most MAX_BINS bins: a few vertices per bin, not per step.
    assert drawn["stream_map.png"] <= 3 * (4 * plots.MAX_BINS + 10)
    for name in ("outstanding.png", "response_times.png"):
        assert drawn[name] <= 2 * (4 * plots.MAX_BINS + 10)


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
