"""Comparison overlays of the PTS 2.0 tests beyond IOPS/TP/LAT/WSAT: every drive on one plot
(XSR throughput over the groups, DIRTH's IOPS vs outstanding IO and the MaxIOPS point's
response-time histograms, HIR's mean burst IOPS per wait state), beside each drive's figures.
The numbers are the single-run reports' (compare/pts2.py, compare/hir.py)."""

from __future__ import annotations

from iolab.core.units import duration, num
from iolab.figures.compare.hir import hir_result
from iolab.figures.compare.pts2 import chosen_points, demand_points
from iolab.figures.points import MID_UNDER_CUTOFF, OP_PHASE, POINT_NAMES, PREWRITE, OperatingPoints
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import latency_plots, plots
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData
from iolab.pages.report.xsr import run_xsr

SRC = "Source: each run's results.db"


def xsr_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    series, rows = [], []
    for r, lab in zip(runs, labels):
        res, _ = run_xsr(r)
        xs = [g.start_min + m for g in res.groups for m in g.minutes]
        if xs:
            series.append(plots.Series(lab, tuple(xs), tuple(v for g in res.groups for v in g.mbps)))
        rec = res.recovered
        rows.append(
            (
                lab,
                num(res.groups[0].mean_mbps),
                num(res.groups[1].final_mbps()),
                "not measured" if rec is None else "NOT reached" if rec.minutes is None else duration(rec.minutes * 60),
            )
        )
    if not series:
        return [Page("Cross Stimulus Recovery", (Text(("No drive has a measured interval.",)),))]
    src = f"{SRC}, phases 'group 1' … 'group 3': every complete interval; time from the start of group 1."
    png = plots.time_series_pair(series, "time (minutes)", "MB/s", "Throughput vs time", height_mm=150)
    table = Table(
        "Recovery per drive (each run's own tolerances)",
        ("drive", "group 1 mean MB/s", "group 2 final MB/s", "group 3 recovery"),
        tuple(rows),
        src,
    )
    return [
        Page(
            "Throughput vs Time",
            (Figure("Cross Stimulus Recovery: MB/s over the three groups, one line per drive", png, src),),
        ),
        Page("Recovery Times", (table,)),
    ]


def dirth_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    series, hists, rows, decided_by = [], [], [], []
    for r, lab in zip(runs, labels):
        pts = sorted(demand_points(r.phases), key=lambda p: (p.oio, p.iops))
        if pts:
            series.append(plots.Series(lab, tuple(float(p.oio) for p in pts), tuple(p.iops for p in pts)))
        ops = chosen_points(r.phases)
        decided_by.append((lab.split()[0], ops))
        rows.append(
            (
                lab,
                *(
                    f"{p.label()}: {num(p.iops)} IOPS, ART {num(p.art_us)} µs" + _shared(ops, n) if p else "—"
                    for n, p in (ops.named() if ops else ((n, None) for n in POINT_NAMES))
                ),
            )
        )
        op = r.phase(OP_PHASE)
        hist = next(
            (
                c.histogram
                for c in (op.cells if op else ())
                if c.key.startswith("MaxIOPS")
                and not c.key.endswith(PREWRITE)
                and c.histogram is not None
                and c.histogram.total
            ),
            None,
        )
        if hist is not None:
            hists.append((lab, hist))
    if not series:
        return [Page("DIRTH", (Text(("No drive has a measured demand-variation point.",)),))]
    src = f"{SRC}, phase 'demand variation': each point's mean over its measurement window."
    decided = (
        "Source: each run's decision (manifest.json decisions), made from its demand-variation measurement "
        "window: the IOPS and ART the choice rested on. " + _mid_rules(decided_by)
    )
    pages = [
        Page(
            "IOPS vs Total Outstanding IO",
            (
                Figure(
                    "DIRTH: IOPS vs TC × QD, one line per drive (every point)",
                    plots.time_series_pair(
                        series, "total outstanding IO (TC × QD)", "IOPS", "IOPS vs OIO", height_mm=150
                    ),
                    src,
                ),
            ),
        ),
        Page(
            "Operating Points",
            (
                Table(
                    "Max/Mid/Min points per drive (each run's decision; MaxIOPS under its own ART cutoff, MidIOPS as said below)",
                    ("drive", "MaxIOPS", "MidIOPS", "MinIOPS"),
                    tuple(rows),
                    decided,
                ),
            ),
        ),
    ]
    if hists:
        png = latency_plots.latency_histogram(hists, "MaxIOPS point: response times", height_mm=150)
        pages.append(
            Page(
                "Response Time Histogram — MaxIOPS",
                (
                    Figure(
                        "DIRTH: response-time distribution of the test workload at each drive's MaxIOPS point",
                        png,
                        f"{SRC}, phase {OP_PHASE!r}: the MaxIOPS workload's histogram (fio json+ bins).",
                    ),
                ),
            )
        )
    return pages


def _shared(ops: OperatingPoints | None, name: str) -> str:
    """A point measured once as another name's (Mid on Min's point): which, in its cell."""
    owner = ops.cells_of(name) if ops else name
    return f" (= {owner} point, histogram shared)" if owner != name else ""


def _mid_words(ops: OperatingPoints) -> str:
    if ops.mid_from == MID_UNDER_CUTOFF:
        return ops.rules()[1]
    # a decision stored before the rule was named (no mid_from) chose among every point
    return (
        "IOPS closest to (Max + Min) / 2 among all points, whatever their ART (a run decided before MidIOPS was "
        "restricted to points under the cutoff)"
    )


def _mid_rules(decided_by: list[tuple[str, OperatingPoints | None]]) -> str:
    """Which rule chose each run's MidIOPS: once when the runs agree, per run when they differ. A
    run decided before Mid was restricted to points under the ART cutoff chose it among all points,
    and the table's "under its own ART cutoff" is then true of its Max alone."""
    said = [(d, _mid_words(ops)) for d, ops in decided_by if ops is not None]
    if not said:
        return ""
    if len({w for _, w in said}) == 1:
        return f"MidIOPS of every run: {said[0][1]}."
    return "The runs chose MidIOPS by different rules: " + "; ".join(f"{d}: {w}" for d, w in said) + "."


def hir_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    results = [hir_result(r.phases) for r in runs]
    idles = sorted({w.idle_s for res in results for w in res.waits})
    if not idles:
        return [Page("Host Idle Recovery", (Text(("No drive has a measured burst.",)),))]
    groups = [
        (lab, [next((w.burst_iops for w in res.waits if w.idle_s == i), None) for i in idles])
        for res, lab in zip(results, labels)
    ]
    png = plots.grouped_bars(
        [duration(i) for i in idles], groups, "IOPS", "Mean burst IOPS per wait state", height_mm=100
    )
    rows = tuple(
        (
            lab,
            num(res.steady_iops) + _unsteady(res.pc),
            *(num(next((res.recovery(w) for w in res.waits if w.idle_s == i), None)) for i in idles),
        )
        for res, lab in zip(results, labels)
    )
    src = f"{SRC}, phases 'preconditioning' and 'wait …': recovery = mean burst IOPS / the preconditioning window's mean IOPS."
    return [
        Page(
            "Mean IOPS per Wait State",
            (
                Figure("Host Idle Recovery: mean burst IOPS after each idle, one bar per drive", png, src),
                Table(
                    "Recovery per drive (×)",
                    ("drive", "preconditioning IOPS (window mean)", *(f"after {duration(i)}" for i in idles)),
                    rows,
                    src,
                ),
            ),
        )
    ]


def _unsteady(pc: PhaseSummary | None) -> str:
    """HIR's preconditioning beside its steady IOPS, as its own report says it (hir.py): a window
    that passes the rule but was not accepted is no window that failed it."""
    if pc is not None and pc.steady:
        return ""
    if pc is not None and pc.not_accepted() is not None:
        return " (its window passes the rule but was NOT accepted as steady state)"
    return " (steady state NOT reached)"
