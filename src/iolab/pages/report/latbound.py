"""Report pages and terminal view of the latency-bounded maximum-IOPS test
(suites/scale_latbound.py): the demand ramp against the bound, then the sustained demand's
IOPS and latency every second and its percentile table. Reads only the run directory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape as esc

from iolab.core.cellschema import CellRow
from iolab.core.decide import PERCENTILE_COLUMNS
from iolab.core.units import given, measurable, num, pct_text
from iolab.figures.latbound import RAMP, SUSTAIN, held, recorded_bound
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import plot_style, vfigure
from iolab.pages.report.char_plots import _scatter
from iolab.pages.report.char_series import _latency_figure
from iolab.pages.report.model import CONTENT_WIDTH_MM, Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData, cell_series
from iolab.pages.report.sections import not_measured_page, table_pages
from iolab.pages.report.vaxes import Axes, Path, Rule
from iolab.pages.report.vticks import autoscale

if TYPE_CHECKING:
    from rich.console import Console


def _pct(row: CellRow, p: float) -> float | None:
    value: float | None = getattr(row, PERCENTILE_COLUMNS[p])
    return value


def _judged(row: CellRow, p: float) -> float | None:
    """The step's percentile where its IOs measure it (units.measurable), as the ramp's rule
    judged it: one read off too few IOs is neither plotted nor held against the bound."""
    return _pct(row, p) if measurable(p, row.ios) else None


def _bound(run: RunData) -> tuple[float, float]:
    return float(run.value("percentile", 99.0)), float(run.value("bound", 1000.0))


def _ramp_figure(rows: list[CellRow], pct: float, bound: float, src: str) -> Figure:
    """The percentile against its bound (log) over the demand ramp, and the IOPS delivered
    against those demanded, over a shared x axis (a vector drawing: vfigure.py)."""
    demand = [float(r.workload["rate_iops"]) for r in rows]
    lat = [(d, v) for d, r in zip(demand, rows) if (v := _judged(r, pct))]
    delivered = [float(r.iops) for r in rows]
    xlim = autoscale(demand, False)
    top = Axes(ylabel="latency (µs, log)", ylog=True, xlim=xlim)
    if lat:
        xs, ys = zip(*lat)
        top.add(Path(xs, ys, plot_style.color(0), 1.5, marker_pt=3, label=f"{pct:g} % latency"))
    top.add(Rule(bound, False, plot_style.color(3), 1.5, "--", f"bound {given(bound)} µs", counts=True))
    bottom = Axes(xlabel="demand (IOPS, all hosts/paths)", ylabel="IOPS", xlim=xlim)
    bottom.add(Path(tuple(demand), tuple(demand), "#808080", 1.5, ":", label="demanded"))
    bottom.add(Path(tuple(demand), tuple(delivered), plot_style.color(1), 1.5, marker_pt=3, label="delivered"))
    title = f"{pct:g} % latency and delivered IOPS at each demand step"
    return Figure(title, vfigure.draw([top, bottom], CONTENT_WIDTH_MM, 95, title), src)


def _ramp_table(run: RunData, rows: list[CellRow], pct: float, bound: float, src: str) -> Table:
    body = tuple(
        (
            f"{r.workload['rate_iops']:,}",
            num(r.iops),
            num(r.lat_mean_us),
            pct_text(_pct(r, pct), r.ios, pct),
            _within(r, pct, bound),
        )
        for r in rows
    )
    return Table(
        f"demand steps ({pct:g} % ≤ {given(bound)} µs)",
        ("demand IOPS", "delivered IOPS", "mean µs", f"{pct:g} % µs", "within bound"),
        body,
        src,
        run.raw_links(rows) + run.store_links(),
    )


def _within(row: CellRow, pct: float, bound: float) -> str:
    if (v := _judged(row, pct)) is not None:
        return "yes" if v <= bound else "NO"
    return "not measured" if row.ios else "NO"  # no IO completed: nothing shows the bound met


def _us(v: float | None, ios: int, pct: float) -> str:
    text = pct_text(v, ios, pct)
    return text if text.startswith("n/m") or v is None else f"{text} µs"


def _percentile_table(run: RunData, row: CellRow, src: str) -> Table:
    pct, bound = _bound(run)
    said = "yes" if held(row, (pct, bound)) else "NO: the bound met in the ramp step did not hold"
    body = (
        (f"{pct:g} % ≤ {given(bound)} µs over the whole phase", said),
        ("IOPS delivered", num(row.iops)),
        ("demanded IOPS", f"{row.workload['rate_iops']:,}"),
        ("measured time", f"{num(row.runtime_s)} s"),  # "5.00046 s" beside 4-digit figures
        ("mean latency", f"{num(row.lat_mean_us)} µs"),
        *((f"{p:g} % latency", _us(_pct(row, p), row.ios, p)) for p in PERCENTILE_COLUMNS),
        ("maximum latency", f"{num(row.lat_max_us)} µs"),
    )
    return Table(
        "sustained demand: latency percentiles (merged histogram of every host/path)",
        ("figure", "value"),
        body,
        src,
        run.raw_links([row]) + run.store_links(),
    )


def latbound_pages(run: RunData) -> list[Page]:
    pct, bound = _bound(run)
    ramp, sustain = run.phase(RAMP), run.phase(SUSTAIN)
    if ramp is None or not ramp.rows:
        return [not_measured_page(run, ramp, "Latency-Bounded IOPS")] if ramp else []
    # the ramp's steps and the bisection's between them (suites/bisection.py), in demand order
    halves = [ph for ph in run.phases if ph.phase.name.startswith(f"{RAMP}: bisection")]
    rows = sorted([*ramp.rows, *(r for ph in halves for r in ph.rows)], key=lambda r: r.workload.get("rate_iops") or 0)
    names = [RAMP, *(ph.phase.name for ph in halves)]
    src = f"Source: results.db table cells, phases {', '.join(repr(n) for n in names)}; run {run.manifest.run_id}."
    decided = [f"{d['phase']}: {d['outcome']}" for d in run.manifest.decisions if d.get("phase") in (*names, SUSTAIN)]
    pages = [
        Page(
            "Latency-Bounded IOPS: demand ramp",
            (
                _ramp_figure(rows, pct, bound, src),
                Text(tuple(decided) or ("No decision was stored (the run ended before the ramp did).",), 30),
            ),
        )
    ]
    pages += table_pages("Latency-Bounded IOPS: demand steps", [_ramp_table(run, rows, pct, bound, src)])
    if sustain is None or not sustain.rows:
        return pages + ([not_measured_page(run, sustain, "Latency-Bounded IOPS: sustain")] if sustain else [])
    row = sustain.rows[-1]
    pts = cell_series(run.dir, row.id)
    ssrc = (
        f"Source: results.db tables cells and series (one point per second, cell {row.id}); run {run.manifest.run_id}."
    )
    t = [p[0] for p in pts]
    rate = row.workload["rate_iops"]
    pages.append(
        Page(
            f"Latency-Bounded IOPS: {rate:,} IOPS sustained",
            (
                Figure(
                    "IOPS every second",
                    _scatter(t, [p[1] + p[2] for p in pts], f"{rate:,} IOPS demanded", "IOPS", False, 80),
                    ssrc,
                ),
                _latency_figure(t, [p[4] for p in pts], [p[5] for p in pts], ssrc),
            ),
        )
    )
    pages += table_pages("Latency-Bounded IOPS: sustained percentiles", [_percentile_table(run, row, ssrc)])
    return pages


def latbound_view(ph: PhaseSummary, console: Console) -> None:
    for r in ph.rows:
        pcts = ", ".join(f"{p:g} % {_us(_pct(r, p), r.ios, p)}" for p in PERCENTILE_COLUMNS)
        console.print(esc(f"{r.cell_key}: delivered {num(r.iops)} IOPS, mean {num(r.lat_mean_us)} µs, {pcts}"))
        if ph.phase.name == SUSTAIN and (bound := recorded_bound(r)) is not None:
            said = "held" if held(r, bound) else "NOT held: the highest demand within the bound is not claimed"
            console.print(esc(f"the bound ({bound[0]:g} % ≤ {given(bound[1])} µs) over the sustained demand: {said}"))
    if not ph.rows:
        console.print("no step measured")
