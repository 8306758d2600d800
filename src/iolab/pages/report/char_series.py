"""Report pages of the characterisation tests that read series: QoS rounds (per-round figures
and the chosen rounds' stored histograms), IO consistency (the per-second series, the steady
part and its periodic dips) and the endurance page every characterisation report ends with.
Reads only the run directory."""

from __future__ import annotations

from pathlib import Path

from iolab.core.cellschema import CellRow
from iolab.core.results import Histogram, partial_row, row_spans
from iolab.core.steady import SteadyRule
from iolab.core.units import counted, num, pct_text
from iolab.figures.consistency import Dips, Spread, find_dips, part_text, part_title, spread
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import latency_plots
from iolab.pages.report.char_endurance import endurance_pages
from iolab.pages.report.char_plots import _scatter, per_round_plot
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData, cell_series
from iolab.pages.report.sections import convergence_page, not_measured_page, table_pages
from iolab.store.runstore import RunStore

QOS_MARKS = (95.0, 99.0, 99.9, 99.99, 99.999)
# The phase a characterisation run preconditions to steady state in (the suites name it; a
# report reads the run, not suite code)
PRECONDITION = "precondition"


def _source(run: RunData, ph: PhaseSummary, what: str) -> str:
    return f"Source: results.db tables cells and {what}, phase {ph.phase.name!r}; run {run.manifest.run_id}."


def _store(run: RunData) -> RunStore:
    return RunStore.open(run.dir)


# -- QoS rounds -----------------------------------------------------------------------------


def chosen_rounds(rows: list[CellRow], wanted: str) -> list[tuple[str, CellRow]]:
    """The rounds named by the histogram_rounds parameter: 'last', 'worst' (largest maximum
    latency) and round numbers; each round once, labelled with why it was chosen."""
    by_round = {r.round: r for r in rows}
    out: dict[int, list[str]] = {}
    for token in (t.strip() for t in wanted.split(",") if t.strip()):
        if token == "last" and rows:
            out.setdefault(rows[-1].round, []).append("last")
        elif token == "worst" and rows:
            worst = max(rows, key=lambda r: r.lat_max_us or 0.0)
            out.setdefault(worst.round, []).append("worst by maximum latency")
        elif token.isdigit() and int(token) in by_round:
            out.setdefault(int(token), []).append("chosen")
    return [(f"round {k} ({', '.join(v)})", by_round[k]) for k, v in sorted(out.items())]


def unmeasured_rounds(rows: list[CellRow], wanted: str) -> list[int]:
    """The round numbers histogram_rounds names that the phase did not store (a run interrupted
    or failed before them): said on the report, not left out without a word."""
    stored = {r.round for r in rows}
    asked = dict.fromkeys(int(t) for t in (t.strip() for t in wanted.split(",")) if t.isdigit())
    return [n for n in asked if n not in stored]


def _unmeasured_page(ph: PhaseSummary, missing: list[int], wanted: str) -> Page:
    rounds = ", ".join(str(n) for n in missing)
    return Page(
        f"{ph.phase.name}: histograms asked for and not measured",
        (
            Text(
                (
                    f"histogram_rounds {wanted} asks for round{'s' if len(missing) > 1 else ''} {rounds}, which "
                    f"phase {ph.phase.name!r} did not reach: it stored {counted(len(ph.rows), 'complete round')}. "
                    "There is no histogram of a round that was not measured; nothing is estimated.",
                )
            ),
        ),
    )


def _per_round_figure(ph: PhaseSummary) -> Figure:
    rows = list(ph.rows)
    xs = tuple(float(r.round) for r in rows)
    latency = tuple(
        (label, tuple((x, getattr(r, attr)) for x, r in zip(xs, rows) if getattr(r, attr)))
        for label, attr in (("average", "lat_mean_us"), ("maximum", "lat_max_us"))
    )
    png = per_round_plot(ph.phase.name, xs, tuple(r.iops for r in rows), latency)
    return Figure(
        f"{ph.phase.name}: per round",
        png,
        f"Source: results.db table cells, phase {ph.phase.name!r}, every complete round ({len(rows)}).",
    )


def qos_pages(run: RunData) -> list[Page]:
    pages = preconditioning_pages(run)
    wanted = run.value("histogram_rounds", "last,worst")
    store = _store(run)
    try:
        for ph in (p for p in run.phases if p.phase.name.endswith("rounds")):
            if not ph.rows:
                pages.append(not_measured_page(run, ph, ph.phase.name))
                continue
            pages.append(Page(f"{ph.phase.name}: per round", (_per_round_figure(ph),)))
            rows = tuple(
                (
                    str(r.round),
                    num(r.iops),
                    num(r.lat_mean_us),
                    num(r.lat_max_us),
                    pct_text(r.p99_99, r.ios, 99.99),
                    pct_text(r.p99_999, r.ios, 99.999),
                )
                for r in ph.rows
            )
            pages += table_pages(
                f"Tabular Results — {ph.phase.name}",
                [
                    Table(
                        f"{ph.phase.name}: each round (warm-up excluded)",
                        ("round", "IOPS", "average (µs)", "maximum (µs)", "99.99 % (µs)", "99.999 % (µs)"),
                        rows,
                        _source(run, ph, "histograms (percentiles from each round's own bins)"),
                        run.raw_links(list(ph.rows)) + run.store_links(),
                    )
                ],
            )
            for label, row in chosen_rounds(list(ph.rows), wanted):
                h = store.histogram(row.id)
                if h is None:
                    pages.append(
                        Page(
                            f"{ph.phase.name}: {label}",
                            (Text((f"No histogram was stored for {label}; nothing is estimated.",)),),
                        )
                    )
                    continue
                pages.append(_histogram_page(run, ph, label, row, h))
            missing = unmeasured_rounds(list(ph.rows), wanted)
            if missing:
                pages.append(_unmeasured_page(ph, missing, wanted))
    finally:
        store.close()
    return pages + endurance_pages(run)


def _histogram_page(run: RunData, ph: PhaseSummary, label: str, row: CellRow, h: Histogram) -> Page:
    title = f"{ph.phase.name}: latency histogram, {label}"
    png = latency_plots.latency_histogram([("", h)], title, 120, marks=QOS_MARKS)
    marks = tuple((f"{p:g} %", pct_text(h.measured(p), h.total)) for p in QOS_MARKS) + (("maximum", num(h.max_us)),)
    table = Table(
        f"{label}: {h.total:,} IOs in {len(h.counts):,} bins (of {row.read_ios + row.write_ios:,} IOs measured)",
        ("percentile", "latency (µs)"),
        marks,
        _source(run, ph, f"histograms (the round's full-resolution bins, cell {row.id})"),
        run.raw_links([row]),
    )
    return Page(title, (Figure(title, png, table.source), table))


# -- IO consistency ----------------------------------------------------------------------------


def steady_from(run: RunData) -> float:
    return float(run.value("steady_from", 0.0))


Latencies = list[float | None]


def phase_series(
    ph: PhaseSummary | None, run_dir: Path | None
) -> tuple[list[float], list[float], Latencies, Latencies, CellRow | None]:
    """Per second of the consistency phase's last cell: time, IOPS, average and maximum
    latency (None where the engine has none)."""
    if ph is None or not ph.rows or run_dir is None:
        return [], [], [], [], None
    row = ph.rows[-1]
    pts = cell_series(run_dir, row.id)
    return [p[0] for p in pts], [p[1] + p[2] for p in pts], [p[4] for p in pts], [p[5] for p in pts], row


def consistency_series(run: RunData) -> tuple[list[float], list[float], Latencies, Latencies, CellRow | None]:
    return phase_series(run.phase("consistency"), run.dir)


def steady_figures(
    t: list[float], iops: list[float], start: float, rule: SteadyRule
) -> tuple[Spread | None, Dips | None]:
    """The spread and dips of the steady seconds: what the report, the comparison and the key
    figures show, the part judged by `rule`, the run's own (what --strict-steady set)."""
    ts, ys = steady_seconds(t, iops, start)
    if not ts:
        return None, None
    return spread(ys, rule), find_dips(ts, ys)


def steady_seconds(t: list[float], iops: list[float], start: float) -> tuple[list[float], list[float]]:
    """The whole seconds after `start` (a partial last row, the cell's drain after its last
    whole second, is no second of the steady part)."""
    st = [(x, y) for x, y, span in zip(t, iops, row_spans(t)) if x > start and not partial_row(span)]
    return [x for x, _ in st], [y for _, y in st]


def consistency_figures(run: RunData) -> tuple[Spread | None, Dips | None]:
    t, iops, _, _, _ = consistency_series(run)
    return steady_figures(t, iops, steady_from(run), SteadyRule.of_profile(run.manifest.profile))


def phase_spread(ph: PhaseSummary) -> Spread | None:
    """The steady part's spread of a consistency phase read on its own (a key figure), from
    the run's stored series and its own steady_from."""
    t, iops, _, _, _ = phase_series(ph, ph.run_dir)
    return steady_figures(t, iops, float(ph.values.get("steady_from", 0.0)), ph.rule)[0]


def consistency_pages(run: RunData) -> list[Page]:
    t, iops, lat, lat_max, row = consistency_series(run)
    ph = run.phase("consistency")
    if ph is None or row is None or not t:
        return ([not_measured_page(run, ph, "IO Consistency")] if ph else []) + endurance_pages(run)
    start = steady_from(run)
    src = _source(run, ph, f"series (one point per second, cell {row.id})")
    zt, zy = steady_seconds(t, iops, start)
    sp, dips = consistency_figures(run)
    title = part_title(sp, start)  # the verdict in every caption of the part, as in its table
    # linear scales from 0, as the reviews draw them: a spread reads as its share of the rate
    pages = [
        Page(
            "IO Consistency: whole run",
            (
                Figure(
                    "IOPS every second, whole run, linear scale from 0",
                    _scatter(t, iops, "IOPS every second", "IOPS", False, 85),
                    src,
                ),
                Figure(f"{title}, linear scale from 0", _scatter(zt, zy, title, "IOPS", False, 80), src),
            ),
        ),
        Page(
            "IO Consistency: dips and latency",
            (
                Figure(
                    "IOPS every second, whole run, log scale in whole decades (deep dips)",
                    _scatter(t, iops, "IOPS every second", "IOPS", True, 80),
                    src,
                ),
                _latency_figure(t, lat, lat_max, src),
            ),
        ),
    ]
    rows = [
        ("seconds in the steady part", f"{sp.seconds:,}" if sp else "none: the run ended before it"),
        # the part starts at a time; whether the drive was steady in it is judged from its seconds
        ("steady by the rule?", part_text(sp, start).split(": ", 1)[1]),
    ]
    if sp:
        rows += [
            ("minimum IOPS", num(sp.min)),
            ("maximum IOPS", num(sp.max)),
            ("mean IOPS", num(sp.mean)),
            ("coefficient of variation", f"{sp.cv:.1%}"),
            ("minimum ÷ maximum", f"{sp.min_over_max:.1%}"),
        ]
    rows += [
        ("periodic dips", dips.text() if dips else "not evaluated (no steady part)"),
        _max_row(t, lat_max, start, row),
    ]
    pages += table_pages(
        "IO Consistency: figures",
        [
            Table(
                title,
                ("figure", "value"),
                tuple(rows),
                src,
                run.raw_links([row]) + run.store_links(),
            )
        ],
    )
    return pages + endurance_pages(run)


def _latency_figure(t: list[float], lat: Latencies, lat_max: Latencies, src: str) -> Figure:
    if any(v is not None for v in lat_max):
        png = _scatter(
            t,
            lat,
            "average and maximum latency every second",
            "latency (µs)",
            True,
            80,
            label="average",
            more=(("maximum", lat_max),),
        )
        return Figure("average and maximum latency every second (µs, log scale)", png, src)
    return Figure(
        "average latency every second (the engine reports no maximum per second)",
        _scatter(t, lat, "average latency every second", "latency (µs)", True, 80),
        src,
    )


def _max_row(t: list[float], lat_max: Latencies, start: float, row: CellRow) -> tuple[str, str]:
    steady = [m for x, m in zip(t, lat_max) if x > start and m is not None]
    if steady:
        return ("maximum latency, largest per-second maximum in the steady part", f"{num(max(steady))} µs")
    return (
        "maximum latency per second",
        f"not reported per second by the engine; the whole period's maximum is {num(row.lat_max_us)} µs",
    )


# -- endurance -------------------------------------------------------------------------------


def preconditioning_pages(run: RunData) -> list[Page]:
    """A characterisation run preconditioned to steady state (`--set precondition=steady`): the
    IOPS of its 4K random writes in every round until the rule decided, and why it stopped. A
    run preconditioned by time (or by capacity): its writes' IOPS every second (timed_pages)."""
    pc = run.phase(PRECONDITION)
    if pc is None:
        return timed_pages(run)
    state = {True: "steady state reached", False: "steady state NOT reached", None: "not evaluated"}[pc.steady]
    told = Text(
        (
            f"Preconditioning ran until PTS steady state of 4K random-write IOPS: {state} after "
            f"{counted(len(pc.rounds), 'round')} ({pc.phase.stop_reason or 'no reason stored'}).",
        )
    )
    if not pc.rows:
        return [Page("Preconditioning", (told,))]
    mix = pc.rows[0].mix or ""  # stored with every cell the characterisation tests plan
    page = convergence_page(
        run,
        pc,
        "Preconditioning — IOPS per Round",
        [(f"4 KiB random-write IOPS per round (R/W {mix})", mix, "iops")],
        "IOPS",
    )
    return [Page(page.title, (told, *page.blocks))]


def timed_pages(run: RunData) -> list[Page]:
    """The preconditioning the run's first phase wrote before its cells (precondition=time): its
    IOPS every second on a linear scale from 0, as the reviews show their timed preconditioning."""
    if not run.preconditioning:
        return []
    c = run.preconditioning[0]  # the drive's: later phases of these tests write none
    pts = cell_series(run.dir, c.id)
    told = Text(
        (
            f"Preconditioning before phase {c.phase!r}: {c.cell_key}, {c.write_bytes / 1e9:,.3f} GB written in "
            f"{c.runtime_s:,.0f} s at {num(c.iops)} IOPS on average; steady state not checked.",
        )
    )
    if not pts:
        return [Page("Preconditioning", (told, Text(("The engine stored no per-second series for it.",))))]
    src = f"Source: results.db tables cells and series (cell {c.id}, preconditioning of phase {c.phase!r})."
    png = _scatter(
        [p[0] for p in pts], [p[1] + p[2] for p in pts], "preconditioning: IOPS every second", "IOPS", False, 85
    )
    return [
        Page(
            "Preconditioning — IOPS every Second",
            (
                told,
                Figure("4 KiB random-write IOPS every second while preconditioning, linear scale from 0", png, src),
            ),
        )
    ]
