"""Report pages of the characterisation matrices (reads and writes matrices, 4K mixed matrix,
entropy): per phase, one line per series (IO size, write share, entropy) over queue depth, a
heat map, and the tables. Cells are named '<series> QD<n>' by suites/characterise_common.py;
the series is the stored cell's mix column. Reads only the run."""

from __future__ import annotations

from collections.abc import Callable

from iolab.core.units import num
from iolab.figures.compare.characterise import direction_figures, grid
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report import plots
from iolab.pages.report.char_endurance import endurance_pages
from iolab.pages.report.char_series import PRECONDITION, preconditioning_pages
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import not_measured_page, table_pages, window_source

# A cell's figure from its window averages, or from its per-direction figures (direction_figures)
Getter = Callable[[CellAverage, dict[str, float | None]], float | None]
Metric = tuple[str, str, Getter, bool]  # name, unit, getter, lower is better
Metrics = tuple[Metric, ...] | Callable[[PhaseSummary], tuple[Metric, ...]]  # or per phase

IOPS: Metric = ("IOPS", "IOPS", lambda c, d: c.iops, False)
MBPS: Metric = ("MB/s", "MB/s", lambda c, d: c.mbps, False)
ART: Metric = ("average latency", "µs", lambda c, d: c.lat_mean_us, True)
MRT: Metric = ("maximum latency", "µs", lambda c, d: c.lat_max_us, True)


def _direction(op: str, name: str, unit: str, figure: str, lower: bool) -> Metric:
    return (f"{op} {name}", unit, lambda c, d: d[f"{op}_{figure}"], lower)


READ_IOPS, WRITE_IOPS = (_direction(op, "IOPS", "IOPS", "iops", False) for op in ("read", "write"))
READ_MBPS, WRITE_MBPS = (_direction(op, "MB/s", "MB/s", "mbps", False) for op in ("read", "write"))
READ_ART, WRITE_ART = (_direction(op, "average latency", "µs", "lat_mean_us", True) for op in ("read", "write"))
READ_MRT, WRITE_MRT = (_direction(op, "maximum latency", "µs", "lat_max_us", True) for op in ("read", "write"))
# a mixed phase's figures as reviews publish them: each total, then its read and write parts
MIXED_TABLES: tuple[Metric, ...] = (IOPS, READ_IOPS, WRITE_IOPS, MBPS, READ_MBPS, WRITE_MBPS, ART, READ_ART, WRITE_ART)
MIXED_TABLES += (MRT, READ_MRT, WRITE_MRT)
MIXED_PLOTS: tuple[Metric, ...] = (IOPS, READ_IOPS, WRITE_IOPS, READ_ART, WRITE_ART, ART)


def _axis(name: str, unit: str) -> str:
    """'average latency (µs)', but 'read IOPS', not 'read IOPS (IOPS)'."""
    return name if name.endswith(unit) else f"{name} ({unit})"


def _values(ph: PhaseSummary, get: Getter) -> tuple[list[str], list[int], list[list[float | None]]]:
    labels, qds, cells = grid(ph)
    d = direction_figures(ph)
    return labels, qds, [[get(c, d[c.key]) if (c := cells.get((lab, q))) else None for q in qds] for lab in labels]


def _table(run: RunData, ph: PhaseSummary, metric: Metric) -> Table:
    name, unit, get, _ = metric
    labels, qds, z = _values(ph, get)
    rows = tuple((lab, *(num(v) for v in row)) for lab, row in zip(labels, z))
    return Table(
        f"{ph.phase.name}: {_axis(name, unit)} by queue depth",
        ("", *(f"QD {q}" for q in qds)),
        rows,
        window_source(run, ph, "one interval per cell"),
        run.raw_links(list(ph.rows)) + run.store_links(),
    )


def _lines(ph: PhaseSummary, metric: Metric, height: float) -> Figure:
    name, unit, get, _ = metric
    labels, qds, z = _values(ph, get)
    series = [
        plots.Series(lab, tuple(i for i, v in enumerate(row) if v is not None), tuple(v for v in row if v is not None))
        for lab, row in zip(labels, z)
    ]
    png = plots.lines_over_categories(
        [str(q) for q in qds],
        series,
        "queue depth (TC 1)",
        _axis(name, unit),
        f"{ph.phase.name}: {name} vs queue depth",
        height_mm=height,
    )
    return Figure(
        f"{ph.phase.name}: {name} vs queue depth, one line per series",
        png,
        f"Source: results.db table cells, phase {ph.phase.name!r}.",
    )


def _lines_across(ph: PhaseSummary, metric: Metric, height: float, across: str) -> Figure:
    """The same figure over the series (write %, entropy %), one line per queue depth: how the
    reviews plot a mixed or entropy matrix."""
    name, unit, get, _ = metric
    labels, qds, z = _values(ph, get)
    series = [
        plots.Series(
            f"QD {q}",
            tuple(i for i, row in enumerate(z) if row[j] is not None),
            tuple(v for row in z if (v := row[j]) is not None),
        )
        for j, q in enumerate(qds)
    ]
    png = plots.lines_over_categories(
        labels, series, across, _axis(name, unit), f"{ph.phase.name}: {name} vs {across}", height_mm=height
    )
    return Figure(
        f"{ph.phase.name}: {name} vs {across}, one line per queue depth (TC 1)",
        png,
        f"Source: results.db table cells, phase {ph.phase.name!r}.",
    )


def _heat(ph: PhaseSummary, metric: Metric, height: float) -> Figure:
    name, unit, get, lower = metric
    labels, qds, z = _values(ph, get)
    png = plots.heatmap(
        [str(q) for q in qds],
        labels,
        z,
        _axis(name, unit),
        f"{ph.phase.name}: {name}",
        height_mm=height,
        lower_is_better=lower,
        xlabel="queue depth",
        ylabel="",
    )
    return Figure(
        f"{ph.phase.name}: {name} map (queue depth × series)",
        png,
        f"Source: results.db table cells, phase {ph.phase.name!r}.",
    )


def mixes_directions(ph: PhaseSummary) -> bool:
    """Whether a phase ran reads and writes together in one cell (a mix worth splitting)."""
    return any({s.get("op") for s in r.workload.get("streams", ())} >= {"read", "write"} for r in ph.rows)


def grid_pages(
    run: RunData, phases: list[PhaseSummary], plotted: Metrics, tabled: Metrics, across: str = ""
) -> list[Page]:
    """`plotted`/`tabled` for every phase, or a function of the phase giving them. `across`: the
    series' axis name (write %, entropy %): each figure is plotted over it too, first."""
    pages: list[Page] = []
    for ph in phases:
        plotted_ph = plotted(ph) if callable(plotted) else plotted
        tabled_ph = tabled(ph) if callable(tabled) else tabled
        if not ph.cells:
            pages.append(not_measured_page(run, ph, ph.phase.name))
            continue
        first, *rest = plotted_ph
        lead = _lines_across(ph, first, 85, across) if across else _lines(ph, first, 85)
        pages.append(Page(f"{ph.phase.name}: {first[0]}", (lead, _heat(ph, first, 80))))
        figs = [(first[0], _lines(ph, first, 85))] if across else []
        for m in rest:
            figs += [(m[0], _lines_across(ph, m, 85, across))] if across else []
            figs.append((m[0], _lines(ph, m, 85)))
        for a, b in zip(figs[::2], [*figs[1::2], None]):
            names = list(dict.fromkeys([a[0]] + ([b[0]] if b else [])))
            pages.append(Page(f"{ph.phase.name}: {', '.join(names)}", (a[1],) + ((b[1],) if b else ())))
        pages += table_pages(f"Tabular Results — {ph.phase.name}", [_table(run, ph, m) for m in tabled_ph])
    return pages


def measured(run: RunData) -> list[PhaseSummary]:
    """The test's own phases (not the steady-state preconditioning phase, if it ran)."""
    return [ph for ph in run.phases if ph.phase.name != PRECONDITION]


def matrix_pages(run: RunData) -> list[Page]:
    return (
        preconditioning_pages(run)
        + grid_pages(run, measured(run), (IOPS, MBPS, ART, MRT), (IOPS, MBPS, ART, MRT))
        + endurance_pages(run)
    )


def mixed_pages(run: RunData) -> list[Page]:
    plotted = grid_pages(run, measured(run), MIXED_PLOTS, MIXED_TABLES, across="write share (%)")
    return preconditioning_pages(run) + plotted + endurance_pages(run)


# fio's usr + sys CPU of a job, in % of one core, from which the host (fio making the data:
# compressible buffers with refill_buffers cost CPU per write) rather than the drive may set the pace
CPU_BOUND = 90.0


def cpu_notes(phases: list[PhaseSummary]) -> list[str]:
    """Per phase: the cells where fio used nearly a whole core, or its highest use, or that the
    engine did not report it. Never silent: a CPU-bound cell is not a drive's figure."""
    notes = []
    for ph in phases:
        use: dict[str, float] = {}
        for r in ph.rows:
            c = r.counters or {}
            if "usr_cpu_pct" in c:
                use[r.cell_key] = max(use.get(r.cell_key, 0.0), c["usr_cpu_pct"] + c.get("sys_cpu_pct", 0.0))
        name = ph.phase.name
        if not use:
            notes.append(f"{name}: the engine did not report its CPU use (a simulated drive, or a run stored before).")
            continue
        busy = [k for k, v in use.items() if v >= CPU_BOUND]
        top = max(use, key=lambda k: use[k])
        notes.append(
            f"{name}: HOST CPU-BOUND at {', '.join(f'{k} ({use[k]:.0f} % of a core)' for k in busy)}: fio "
            f"used at least {CPU_BOUND:g} % of a core there, so those IOPS measure how fast the host makes "
            "the data (compressible buffers cost fio CPU per write), not only the drive."
            if busy
            else f"{name}: fio used at most {use[top]:.0f} % of a core (at {top}), below {CPU_BOUND:g} %: "
            "the host CPU did not limit these cells."
        )
    return notes


def entropy_pages(run: RunData) -> list[Page]:
    cpu = Page(
        "Host CPU use",
        (
            Text(
                (
                    "fio's CPU use per cell (usr_cpu + sys_cpu of its JSON output, the highest "
                    "over a cell's rounds), checked against the host's limit:",
                    *cpu_notes(measured(run)),
                )
            ),
        ),
    )
    return (
        preconditioning_pages(run)
        + grid_pages(
            run,
            measured(run),
            lambda ph: (IOPS, ART, MRT) + (MIXED_PLOTS[1:5] if mixes_directions(ph) else ()),
            lambda ph: MIXED_TABLES if mixes_directions(ph) else (IOPS, MBPS, ART, MRT),
            across="data entropy (%)",
        )
        + [cpu]
        + endurance_pages(run)
    )
