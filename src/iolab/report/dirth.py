"""The pages of the PTS DIRTH test (digest A.11): preconditioning and demand-variation steady
state, Demand Variation (IOPS vs QD per TC), Demand Intensity (ART vs IOPS per TC), IOPS vs
total outstanding IO, CPU use where the engine measured it, and the Max/Mid/Min operating
points chosen from the measurement window with the ART cutoff the run used."""

from __future__ import annotations

from ..compare.pts2 import DV_PHASE, PC_PHASE, PREWRITE, chosen_points, demand_points, parse_point
from ..points import ART_CUTOFF, DemandPoint
from ..summary import PhaseSummary
from ..testparams import stored_values
from ..units import num
from . import plots
from .model import Figure, Page, Table, Text
from .rundata import RunData, rounds_text
from .rwsw_plots import Panel, demand_intensity, panels
from .sections import convergence_page, measurement_window_pages, not_measured_page, table_pages, window_source


def _cpu(ph: PhaseSummary, key: str) -> float | None:
    """Mean usr + sys CPU % of a point over the window; None where the engine did not measure it."""
    vals = [r.counters["usr_cpu_pct"] + r.counters["sys_cpu_pct"] for r in ph.rows
            if r.cell_key == key and r.round in ph.window and not r.partial
            and "usr_cpu_pct" in (r.counters or {}) and "sys_cpu_pct" in (r.counters or {})]
    return sum(vals) / len(vals) if vals else None


def _by_tc(points: list[DemandPoint]) -> dict[int, list[DemandPoint]]:
    out: dict[int, list[DemandPoint]] = {}
    for p in points:
        out.setdefault(p.threads, []).append(p)
    return {tc: sorted(ps, key=lambda p: p.queue_depth) for tc, ps in sorted(out.items(), reverse=True)}


def _dv_rounds_page(run: RunData, dv: PhaseSummary) -> Page:
    """IOPS per round at the highest TC, every QD, and the pre-writes between rounds."""
    top = max((parse_point(c.key) for c in dv.cells if parse_point(c.key)), default=None)
    data = []
    if top:
        lines = []
        for qd in sorted({q for t, q in map(parse_point, {r.cell_key for r in dv.rows} - {PREWRITE}) if t == top[0]},
                         reverse=True):
            pts = [(r.round, r.iops) for r in dv.rows if r.cell_key == f"TC{top[0]}/QD{qd}"]
            lines.append(plots.Series(f"QD{qd}", *map(tuple, zip(*pts))))
        data.append((f"IOPS per round at TC{top[0]}, every QD", lines))
    pre = [(r.round, r.iops) for r in dv.rows if r.cell_key == PREWRITE]
    if pre:
        data.append(("pre-write (RND 0/100) IOPS before each round", [plots.Series("pre-write", *map(tuple, zip(*pre)))]))
    png = plots.convergence(data, "IOPS", dv.window, height_mm=150)
    src = (f"Source: results.db table cells, phase {dv.phase.name!r}, every complete round ({rounds_text(dv.rounds)}); "
           f"shaded: measurement window {rounds_text(dv.window)}.")
    return Page("Demand Variation Rounds", (Figure("DIRTH: demand-variation rounds and pre-writes", png, 150, src),))


def dirth_pages(run: RunData) -> list[Page]:
    pages = []
    pc, dv = run.phase(PC_PHASE), run.phase(DV_PHASE)
    if pc is not None and pc.rows:
        mix = pc.rows[0].mix or ""
        pages.append(convergence_page(run, pc, "Preconditioning — IOPS per Round",
                                      [(f"PC IOPS per round, RND 0/100 at {pc.rows[0].cell_key}", mix, "iops")], "IOPS"))
        pages += measurement_window_pages(run, pc, lambda v: "IOPS")
    points = demand_points(run.phases)
    if dv is None or not points:
        return pages + [not_measured_page(run, dv, "Demand Variation") if dv else
                        Page("DIRTH", (Text(("The demand-variation rounds were not reached.",)),))]
    pages.append(_dv_rounds_page(run, dv))
    pages += measurement_window_pages(run, dv, lambda v: "IOPS")
    src = window_source(run, dv, "mean of each TC × QD point")
    by_tc = _by_tc(points)
    depths = sorted({p.queue_depth for p in points})
    qd_index = {q: i for i, q in enumerate(depths)}
    dv_png = plots.lines_over_categories([f"QD{q}" for q in depths], [
        plots.Series(f"TC{tc}", tuple(qd_index[p.queue_depth] for p in ps), tuple(p.iops for p in ps))
        for tc, ps in by_tc.items()], "queue depth", "IOPS", "Demand Variation: IOPS vs QD per TC", height_mm=120)
    pages.append(Page("Demand Variation", (Figure("DIRTH: IOPS vs queue depth, one line per thread count", dv_png, 120, src),)))
    di_png = demand_intensity([(f"TC{tc}", [(p.iops, p.art_us, p.oio) for p in ps if p.art_us is not None])
                               for tc, ps in by_tc.items()], "ART (µs)",
                              "Demand Intensity: ART vs IOPS per TC (labels: total outstanding IO)", height_mm=120)
    pages.append(Page("Demand Intensity", (Figure("DIRTH: average response time vs IOPS, one curve per thread count",
                                                  di_png, 120, src),)))
    oio_png = panels([Panel("IOPS vs total outstanding IO", "IOPS", tuple(
        plots.Series(f"TC{tc}", tuple(float(p.oio) for p in ps), tuple(p.iops for p in ps)) for tc, ps in by_tc.items()))],
        "total outstanding IO (TC × QD, log scale)", 110, logx2=True)
    pages.append(Page("IOPS vs Total Outstanding IO", (Figure("DIRTH: IOPS vs TC × QD, one line per thread count",
                                                              oio_png, 110, src),)))
    cpu = {p: _cpu(dv, f"TC{p.threads}/QD{p.queue_depth}") for p in points}
    if any(v is not None for v in cpu.values()):
        tcs = list(by_tc)
        z = [[next((cpu[p] for p in by_tc[tc] if p.queue_depth == q), None) for q in depths] for tc in tcs]
        hm = plots.heatmap([f"QD{q}" for q in depths], [f"TC{tc}" for tc in tcs], z, "CPU % (usr + sys)",
                           "CPU utilisation per TC × QD", height_mm=110, log=False, lower_is_better=True)
        pages.append(Page("CPU Utilisation", (Figure("DIRTH: host CPU use of the engine (fio usr_cpu + sys_cpu, % of one "
                                                     "CPU per job)", hm, 110, src),)))
    else:
        pages.append(Page("CPU Utilisation", (Text(("Not measured: the engine of this run reports no CPU use "
                                                    "(fio does; the simulated drives do not).",)),)))
    cut = stored_values((ART_CUTOFF,), run.manifest.profile.get("settings", ()), "dirth")["art_cutoff_ms"]
    ops = chosen_points(run.phases, cut)
    rows = []
    for name, p, rule in (("MaxIOPS", ops.max, f"highest IOPS with ART < {cut:g} ms"), ("MidIOPS", ops.mid,
                          "IOPS closest to (Max + Min) / 2"), ("MinIOPS", ops.min, "TC1/QD1")):
        rows.append((name, rule, p.label() if p else "none qualifies" if name == "MaxIOPS" else "not determined",
                     num(p.iops) if p else "—", num(p.art_us) if p else "—"))
    tables = [Table("Operating points (chosen from the demand-variation measurement window)",
                    ("point", "rule", "TC/QD", "IOPS", "ART (µs)"), tuple(rows),
                    src + f" art_cutoff_ms = {ART_CUTOFF.show(cut)} ({ART_CUTOFF.source}).", run.store_links())]
    cells = {c.key: c for c in dv.cells}
    grid = tuple((p.label(), str(p.oio), num(p.iops), num(cells[p.label()].mbps), num(p.art_us),
                  num(cells[p.label()].lat_max_us), num(cpu[p])) for p in points)
    tables.append(Table("Every TC × QD point", ("point", "OIO", "IOPS", "MB/s", "ART (µs)", "MRT (µs)", "CPU %"), grid,
                        src, run.raw_links([r for r in dv.rows if r.round in dv.window])))
    return pages + table_pages("Tabular Results — DIRTH", tables)
