"""The pages of every DIRTH test (the flow of suites/dirth_flow.py, SNIA PTS 2.0; PTS DIRTH,
CBW, RWSW DIRTH on the composite): preconditioning and demand-variation steady state, Demand
Variation (IOPS vs QD per TC, for a TC × QD grid), Demand Intensity (ART vs IOPS), IOPS, MB/s
and response times vs total outstanding IO, CPU use where the engine measured it, and the
Max/Mid/Min operating points as the run decided them, with their histograms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from iolab.core.units import num, pct_text, unmeasured_text
from iolab.figures.compare import cell_percentile, demand_cells
from iolab.figures.compare.pts2 import point_cell
from iolab.figures.points import (
    ART_CUTOFF,
    DECISION,
    DV_PHASE,
    MIN_RULE,
    OP_PHASE,
    PC_PHASE,
    POINT_NAMES,
    PREWRITE,
    DemandPoint,
    OperatingPoints,
    decided_points,
)
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report import plots
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_plots import Panel, demand_intensity, panels
from iolab.pages.report.sections import (
    histogram_page,
    measurement_window_pages,
    not_measured_page,
    steady_note,
    table_pages,
    window_caveat,
    window_source,
)
from iolab.pages.runwords import rounds_text


def _cpu(ph: PhaseSummary, key: str) -> float | None:
    """Mean usr + sys CPU % of a point over the window; None where the engine did not measure it."""
    vals = [
        r.counters["usr_cpu_pct"] + r.counters["sys_cpu_pct"]
        for r in ph.rows
        if r.cell_key == key
        and r.round in ph.window
        and not r.partial
        and "usr_cpu_pct" in (r.counters or {})
        and "sys_cpu_pct" in (r.counters or {})
    ]
    return sum(vals) / len(vals) if vals else None


def _dv_rounds_page(run: RunData, dv: PhaseSummary) -> Page:
    """IOPS per round of the first line's points (the highest TC of a grid, or every point of a
    sweep) and of the pre-writes between rounds."""
    name, pts = next(iter(_lines(dv).items()))
    lines = []
    for p, _ in sorted(pts, key=lambda x: -x[0].oio):
        xy = [(r.round, r.iops) for r in dv.rows if r.cell_key == p.label()]
        lines.append(plots.Series(p.label(), *map(tuple, zip(*xy))))
    data = [(f"IOPS per round, {name}", lines)]
    pre = [(r.round, r.iops) for r in dv.rows if r.cell_key == PREWRITE]
    if pre:
        data.append(
            (f"pre-write IOPS before each round ({pre_mix(dv)})", [plots.Series("pre-write", *map(tuple, zip(*pre)))])
        )
    png = plots.convergence(data, "IOPS", dv.window, height_mm=150, caveat=window_caveat(run, dv))
    src = (
        f"Source: results.db table cells, phase {dv.phase.name!r}, every complete round ({rounds_text(dv.rounds)}); "
        f"shaded: measurement window {rounds_text(dv.window)}."
    )
    return Page(
        "Demand Variation Rounds",
        (Figure(f"{run.manifest.title}: demand-variation rounds and pre-writes", png, src),),
    )


def _pc_page(run: RunData, pc: PhaseSummary) -> Page:
    """IOPS per preconditioning round (one cell per round: the stimulus at 0/100, or the RWSW
    composite), whatever its block sizes."""
    r0 = pc.rows[0]
    name = (r0.workload or {}).get("name", r0.cell_key)
    xy = [(r.round, r.iops) for r in pc.rows]
    png = plots.convergence(
        [(f"PC IOPS per round at {r0.cell_key}", [plots.Series(name, *map(tuple, zip(*xy)))])],
        "IOPS",
        pc.window,
        height_mm=115,
        caveat=window_caveat(run, pc),
    )
    src = (
        f"Source: results.db table cells, phase {pc.phase.name!r}, every complete round ({rounds_text(pc.rounds)}); "
        f"shaded: measurement window {rounds_text(pc.window)}."
    )
    return Page(
        "Preconditioning — IOPS per Round",
        (Figure(f"{run.manifest.title}: preconditioning IOPS per round", png, src), steady_note(run, pc)),
    )


def pre_mix(dv: PhaseSummary) -> str:
    """The pre-write workload as the run stored it (its workload name)."""
    row = next((r for r in dv.rows if r.cell_key == PREWRITE), None)
    return (row.workload or {}).get("name", PREWRITE) if row else PREWRITE


# The demand points as plotted: line name -> its (point, cell) pairs (see _lines).
Lines = dict[str, list[tuple[DemandPoint, CellAverage]]]


def _lines(dv: PhaseSummary) -> Lines:
    """The points as plotted: one line per thread count over a full TC × QD grid, else (the
    RWSW outstanding-IO sweep) one line in order of total outstanding IO."""
    pts = demand_cells([dv])
    tcs, qds = {p.threads for p, _ in pts}, {p.queue_depth for p, _ in pts}
    if len(pts) != len(tcs) * len(qds) or len(qds) == 1:
        return {"every point": sorted(pts, key=lambda x: x[0].oio)}
    return {
        f"TC{tc}": sorted((x for x in pts if x[0].threads == tc), key=lambda x: x[0].queue_depth)
        for tc in sorted(tcs, reverse=True)
    }


def _unmeasured(lines: Lines) -> str:
    """What the 99.999 % panel says when no point measured it: the IOs it needs and had."""
    ios = [c.ios or 0 for pts in lines.values() for _, c in pts]
    return unmeasured_text([99.999], max(ios, default=0), min(ios, default=0)) or "not measured in this run"


def _series(lines: Lines, get: Callable[[DemandPoint, CellAverage], float | None]) -> tuple[plots.Series, ...]:
    out = []
    for name, pts in lines.items():
        xy = [(float(p.oio), get(p, c)) for p, c in pts if get(p, c) is not None]
        out.append(plots.Series(name, *map(tuple, zip(*xy))) if xy else plots.Series(name, (), ()))
    return tuple(out)


def dirth_pages(run: RunData) -> list[Page]:
    pages = []
    pc, dv = run.phase(PC_PHASE), run.phase(DV_PHASE)
    if pc is not None and pc.rows:
        pages.append(_pc_page(run, pc))
        pages += measurement_window_pages(run, pc, lambda v: "IOPS")
    if dv is None or not demand_cells([dv]):
        return pages + [
            not_measured_page(run, dv, "Demand Variation")
            if dv
            else Page("DIRTH", (Text(("The demand-variation rounds were not reached.",)),))
        ]
    pages.append(_dv_rounds_page(run, dv))
    pages += measurement_window_pages(run, dv, lambda v: "IOPS")
    src = window_source(run, dv, "mean of each demand point (percentiles: its merged histograms)")
    lines = _lines(dv)
    grid = "every point" not in lines
    points = [p for pts in lines.values() for p, _ in pts]
    if grid:
        pages.append(_iops_by_qd_page(run, lines, points, src))
    per = "per TC" if grid else "as outstanding IO grows"
    pages += _demand_pages(run, lines, per, src)
    cpu = {p: _cpu(dv, p.label()) for p in points}
    pages += _cpu_pages(run, lines, points, cpu, grid, src)
    tables = [_operating_points_table(run), _points_table(run, dv, lines, cpu, src)]
    return pages + _histogram_pages(run) + table_pages("Tabular Results — DIRTH", tables)


def _iops_by_qd_page(run: RunData, lines: Lines, points: list[DemandPoint], src: str) -> Page:
    """A full TC × QD grid only: IOPS over queue depth, one line per thread count."""
    depths = sorted({p.queue_depth for p in points})
    qd_index = {q: i for i, q in enumerate(depths)}
    dv_png = plots.lines_over_categories(
        [f"QD{q}" for q in depths],
        [
            plots.Series(tc, tuple(qd_index[p.queue_depth] for p, _ in pts), tuple(p.iops for p, _ in pts))
            for tc, pts in lines.items()
        ],
        "queue depth",
        "IOPS",
        "Demand Variation: IOPS vs QD per TC",
        height_mm=120,
    )
    return Page(
        "Demand Variation",
        (Figure(f"{run.manifest.title}: IOPS vs queue depth, one line per thread count", dv_png, src),),
    )


def _demand_pages(run: RunData, lines: Lines, per: str, src: str) -> list[Page]:
    """Demand intensity (ART vs IOPS), then throughput and response times over total outstanding
    IO: the three plots a grid and a sweep both have; `per` names how their lines are drawn."""
    di_png = demand_intensity(
        [(name, [(p.iops, p.art_us, p.oio) for p, _ in pts if p.art_us is not None]) for name, pts in lines.items()],
        "ART (µs)",
        f"Demand Intensity: ART vs IOPS {per} (labels: total outstanding IO)",
        height_mm=120,
    )
    oio_png = panels(
        [
            Panel("IOPS", "IOPS", _series(lines, lambda p, c: p.iops)),
            Panel("MB/s", "MB/s (10⁶ B/s)", _series(lines, lambda p, c: c.mbps)),
        ],
        "total outstanding IO (TC × QD, log scale)",
        140,
        logx2=True,
    )
    rt_png = panels(
        [
            Panel("ART", "response time (µs)", _series(lines, lambda p, c: c.lat_mean_us), logy=True),
            Panel(
                "99.999 % response time",
                "response time (µs)",
                _series(lines, lambda p, c: c.p99_999_us),
                logy=True,
                missing=_unmeasured(lines),
            ),
        ],
        "total outstanding IO (TC × QD, log scale)",
        140,
        logx2=True,
    )
    title = run.manifest.title
    return [
        Page(
            "Demand Intensity",
            (Figure(f"{title}: average response time vs IOPS {per}", di_png, src),),
        ),
        Page(
            "Throughput vs Total Outstanding IO",
            (Figure(f"{title}: IOPS and MB/s vs TC × QD {per}", oio_png, src),),
        ),
        Page(
            "Response Times vs Total Outstanding IO",
            (Figure(f"{title}: ART and 99.999 % response time vs TC × QD {per}", rt_png, src),),
        ),
    ]


def _cpu_pages(
    run: RunData, lines: Lines, points: list[DemandPoint], cpu: dict[DemandPoint, float | None], grid: bool, src: str
) -> list[Page]:
    """The engine's CPU use per TC × QD (a grid only), or why it is not shown."""
    if grid and any(v is not None for v in cpu.values()):
        tcs = [pts[0][0].threads for pts in lines.values()]
        depths = sorted({p.queue_depth for p in points})
        z = [
            [next((cpu[p] for p in points if (p.threads, p.queue_depth) == (tc, q)), None) for q in depths]
            for tc in tcs
        ]
        hm = plots.heatmap(
            [f"QD{q}" for q in depths],
            [f"TC{tc}" for tc in tcs],
            z,
            "CPU % (usr + sys)",
            "CPU utilisation per TC × QD",
            height_mm=110,
            log=False,
            lower_is_better=True,
        )
        what = "host CPU use of the engine (fio usr_cpu + sys_cpu, % of one CPU per job)"
        return [Page("CPU Utilisation", (Figure(f"{run.manifest.title}: {what}", hm, src),))]
    if not any(v is not None for v in cpu.values()):
        why = "Not measured: the engine of this run reports no CPU use (fio does; the simulated drives do not)."
        return [Page("CPU Utilisation", (Text((why,)),))]
    return []  # a sweep whose engine measured CPU: the table of every point gives it


def _points_table(
    run: RunData, dv: PhaseSummary, lines: Lines, cpu: dict[DemandPoint, float | None], src: str
) -> Table:
    grid_rows = tuple(
        (
            p.label(),
            str(p.oio),
            num(p.iops),
            num(c.mbps),
            num(p.art_us),
            pct_text(cell_percentile(c, 99.99), c.ios),
            pct_text(c.p99_999_us, c.ios),
            num(c.lat_max_us),
            num(cpu[p]),
        )
        for pts in lines.values()
        for p, c in pts
    )
    return Table(
        "Every demand point",
        ("point", "OIO", "IOPS", "MB/s", "ART (µs)", "99.99 % (µs)", "99.999 % (µs)", "MRT (µs)", "CPU %"),
        grid_rows,
        src,
        run.raw_links([r for r in dv.rows if r.round in dv.window]),
    )


def _operating_points_table(run: RunData) -> Table:
    """The Max/Mid/Min points as the run decided them (manifest.decisions), with the IOPS and
    ART the decision rested on, each with the rule the run chose it by."""
    decided = [d for d in run.manifest.decisions if d.get("rule", {}).get("name") == DECISION]
    ops = decided_points(decided)
    cut = ops.art_cutoff_ms if ops else None
    rules = ops.rules() if ops else ("highest IOPS under the ART cutoff", "IOPS closest to (Max + Min) / 2", MIN_RULE)
    same = ops.mid_same_as() if ops else ""
    rows = []
    for (name, p), rule in zip(ops.named() if ops else ((n, None) for n in POINT_NAMES), rules):
        what = (
            p.label()
            if p
            else (
                "not decided (the run did not reach the operating points)"
                if ops is None
                else "none qualifies"
                if name == "MaxIOPS"
                else "not determined"
            )
        )
        if ops and p and ops.cells_of(name) != name:
            what += f" (= {ops.cells_of(name)} point, histogram shared)"
        elif name == "MidIOPS" and ops and same:  # a run that measured Mid on its own all the same
            what += f" (= {' and '.join(ops.mid_is())})"
        rows.append((name, rule, what, num(p.iops) if p else "—", num(p.art_us) if p else "—"))
    src = (
        "Source: the run's decision (manifest.json decisions; Run Details), made from the demand-variation "
        "measurement window: each point's mean IOPS and ART over the window rounds."
        + (f" {same}." if same else "")
        + (f" art_cutoff_ms = {ART_CUTOFF.show(cut)} ({ART_CUTOFF.source})." if cut is not None else "")
    )
    return Table(
        "Operating points (the run's decision)",
        ("point", "rule", "TC/QD", "IOPS", "ART (µs)"),
        tuple(rows),
        src,
        run.store_links(),
    )


def _histogram_pages(run: RunData) -> list[Page]:
    """At each chosen point: the response-time histogram of its test workload (percentiles and
    the MRT under it) and a table of the pre-writes and workloads as measured. A name on another
    name's point (Mid on Min's) was measured once, as that point: its page and row say so."""
    ph = run.phase(OP_PHASE)
    if ph is None or not ph.cells:
        return []
    ops = decided_points(d for d in run.manifest.decisions if d.get("rule", {}).get("name") == DECISION)
    shared = ops.shared if ops else ()
    work = [c for c in ph.cells if not c.key.endswith(PREWRITE)]
    pages = [_labelled(histogram_page(run, ph, c), ops, c.key.split()[0]) for c in work]
    rows = [(c.key, num(c.iops), num(c.lat_mean_us), num(c.lat_max_us)) for c in ph.cells]
    for name, _ in shared:
        if ops and (c := point_cell(run.phases, name)) is not None:
            rows.append((ops.shared_text(name), num(c.iops), num(c.lat_mean_us), num(c.lat_max_us)))
    table = Table(
        "Operating points as run: each pre-write (RND 0/100) and test workload",
        ("cell", "IOPS", "ART (µs)", "MRT (µs)"),
        tuple(rows),
        f"Source: results.db table cells, phase {OP_PHASE!r} (one round); the points are the run's decision "
        "(Run Details)." + "".join(f" {n}: the {o} cells (one point, measured once)." for n, o in shared),
        run.raw_links(list(ph.rows)),
    )
    return pages + table_pages("Operating Points — Max/Mid/Min", [table])


def _labelled(page: Page, ops: OperatingPoints | None, owner: str) -> Page:
    """The histogram page of `owner`'s point, titled for every name that shares it."""
    said = [ops.shared_text(n) for n, o in ops.shared if o == owner] if ops else []
    if not said:
        return page
    blocks = tuple(
        replace(b, caption=f"{b.caption}; {'; '.join(said)}") if isinstance(b, Figure) else b for b in page.blocks
    )
    names = " = ".join(n for n, o in (ops.shared if ops else ()) if o == owner)
    return Page(f"{page.title} = {names}", blocks)
