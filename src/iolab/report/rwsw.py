"""Pages of the SNIA RWSW tests (catalogue §1): Multi-WSAT, Individual Streams WSAT,
Replay-Native and DIRTH on the composite, each followed by the Self-Test (in-situ) pages —
the capture's own per-step metrics, the baseline the drives are compared against — read
from the stream analysis the run was given (inputs/analysis.json in the run directory).
(Their overlays for several drives are in compare/rwsw.py.)"""

from __future__ import annotations

from typing import Callable, Sequence

from ..analysis.streamstats import StreamAnalysis
from ..analysis.workloads import load_replay
from ..compare import DIRTH_SUMMARY_OIO, REPLAY_PHASE, ReplayTotals, cell_percentile, dirth_level, replay_totals
from ..points import DV_PHASE
from ..errors import IolabError
from ..summary import CellAverage, PhaseSummary, interval_label
from ..runfiles import ANALYSIS_FILE, INPUTS_DIR, REPLAY_FILE
from ..units import duration, eng, kib_label, measurable, num, pct_text
from . import plots
from .model import CONTENT_MM, Block, Figure, Page, Table, Text, block_height
from .plots import Series
from .pts import partial_indices, wsat_series
from .rundata import RunData, intervals_text, rounds_text
from .rwsw_plots import Panel, analysis_pngs, panels
from .dirth import dirth_pages
from .sections import histogram_page, measurement_window_pages, not_measured_page, table_pages, window_source

STEADY_PHASE = "steady state (composite)"
TABLE_MAX_ROWS = 60  # longer per-interval/per-step tables show every k-th row (all are in results.db)


def with_selftest(build: Callable[[RunData], list[Page]]) -> Callable[[RunData], list[Page]]:
    """An RWSW test's pages: its own, then the Self-Test pages of the capture it replayed."""
    return lambda run: build(run) + selftest_pages(run)


def _thin(rows: list, limit: int = TABLE_MAX_ROWS) -> tuple[list[tuple[int, object]], int]:
    """Every k-th row (and the last, and any partial interval) when there are more than `limit`:
    (index, row) pairs and k."""
    step = max(1, -(-len(rows) // limit))
    keep = [(i, r) for i, r in enumerate(rows)
            if i % step == 0 or i == len(rows) - 1 or getattr(r, "partial", False)]
    return keep, step


def _thin_caption(caption: str, step: int) -> str:
    return caption + (f" (every {step}th shown; all are in results.db)" if step > 1 else "")


def _pack(title: str, blocks: Sequence[Block]) -> list[Page]:
    """Blocks top to bottom, a new page when the next one does not fit; a table longer than a
    page is split (with its header repeated)."""
    pages: list[Page] = []
    cur: list[Block] = []
    room = CONTENT_MM
    for b in blocks:
        h = block_height(b)
        if h > room and cur:
            pages.append(Page(title, tuple(cur)))
            cur, room = [], CONTENT_MM
        if isinstance(b, Table) and h > room:
            split = table_pages(title, [b])
            pages += split[:-1]
            cur = list(split[-1].blocks)
            room = CONTENT_MM - sum(block_height(x) for x in cur)
            continue
        cur.append(b)
        room -= h
    if cur:
        pages.append(Page(title, tuple(cur)))
    return pages


def _workload_table(run: RunData, ph: PhaseSummary, caption: str) -> Table:
    """The mix a cell ran, as stored with the cell (not as the input file says today)."""
    w = ph.rows[0].workload
    rows = tuple((f"{s['access'].upper()} {kib_label(s['block_size'])} {s['op'][0].upper()}", f"{num(s['share'] * 100)} %")
                 for s in w["streams"])
    rows += (("Outstanding IO", f"TC {w['threads']} × QD {w['queue_depth']} = {w['threads'] * w['queue_depth']}"),)
    return Table(caption, ("stream", "share of IOs"), rows,
                 f"Source: results.db table cells (workload of phase {ph.phase.name!r}); run {run.manifest.run_id}.")


# -- WSAT-like phases: a metric per interval -------------------------------------------------


def _interval_panels(run: RunData, ph: PhaseSummary, title: str) -> list[Page]:
    """IOPS and MB/s vs time, then response times vs time, with the window shaded."""
    minutes, _, iops = wsat_series(ph)
    div, unit = time_axis([m * 60 for m in minutes])
    ends = [m * 60 / div for m in minutes]  # end of each interval, in `unit`
    window = [(e - r.runtime_s / div, e) for e, r in zip(ends, ph.rows) if r.round in ph.window]
    shade = (window[0][0], window[-1][1]) if window else None
    label = "measurement window" if ph.steady else "last five intervals"
    src = (f"Source: results.db table cells, phase {ph.phase.name!r}: {intervals_text(ph)}; "
           "time is the cumulative measured runtime at the end of each interval.")
    x = tuple(ends)
    marked = partial_indices(ph)
    png1 = panels([Panel(f"{title}: IOPS per interval", "IOPS", (Series("", x, tuple(iops), marked),)),
                   Panel(f"{title}: MB/s per interval", "MB/s (10⁶ B/s)",
                         (Series("", x, tuple(r.mbps for r in ph.rows), marked),))],
                  f"time ({unit})", 150, shade=shade, shade_label=label)
    rt = [("ART", [r.lat_mean_us for r in ph.rows]), ("99.999 %", [r.p99_999 if measurable(99.999, r.ios) else None for r in ph.rows]),
          ("MRT", [r.lat_max_us for r in ph.rows])]
    series = []
    for name, vals in rt:
        pts = [(e, v) for e, v in zip(ends, vals) if v is not None]
        if pts:
            xs, ys = zip(*pts)
            series.append(Series(name, xs, ys))
    pages = [Page("IOPS and MB/s vs Time", (Figure(f"{title}: IOPS and MB/s per interval", png1, 150, src),))]
    if series:
        png2 = panels([Panel(f"{title}: response times per interval", "response time (µs)", tuple(series), logy=True)],
                      f"time ({unit})", 110, shade=shade, shade_label=label)
        pages.append(Page("Response Times vs Time", (Figure(f"{title}: ART, 99.999 % and maximum response time per "
                                                            "interval", png2, 110, src),)))
    return pages


def _interval_table(run: RunData, ph: PhaseSummary, caption: str) -> Table:
    minutes, tgbw, _ = wsat_series(ph)
    shown, step = _thin(list(ph.rows))
    rows = tuple((interval_label(r), num(minutes[i]), num(tgbw[i]), num(r.iops), num(r.mbps), num(r.lat_mean_us),
                  pct_text(r.p99_999, r.ios, 99.999)) for i, r in shown)
    return Table(_thin_caption(caption, step), ("interval", "time (min)", "TGBW (GB)", "IOPS", "MB/s", "ART (µs)",
                                                "99.999 % (µs)"), rows,
                 f"Source: results.db table cells, phase {ph.phase.name!r}, every complete interval.",
                 run.raw_links([r for _, r in shown]))


def _eng_pct(v: float | None, ios: int | None) -> str:
    return eng(v, "µs") if v is not None else pct_text(v, ios)


def _steady_results(run: RunData, ph: PhaseSummary, c: CellAverage, caption: str) -> Table:
    _, tgbw, _ = wsat_series(ph)
    state = {True: "reached", False: "NOT ACHIEVED (last five intervals used)", None: "not evaluated (fewer than five intervals)"}
    rows = (
        ("Steady state", f"{state[ph.steady]}: {rounds_text(ph.window)}"),
        ("IOPS (read + write)", f"{num(c.iops)} ({num(c.read_iops)} read, {num(c.write_iops)} write)"),
        ("MB/s (10⁶ B/s)", f"{num(c.mbps)} ({num(c.read_mbps)} read, {num(c.write_mbps)} write)"),
        ("Average response time (ART)", eng(c.lat_mean_us, "µs")),
        ("99.99 % response time", _eng_pct(cell_percentile(c, 99.99), c.ios)),
        ("99.999 % response time (5 nines)", _eng_pct(c.p99_999_us, c.ios)),
        ("Maximum response time (MRT)", eng(c.lat_max_us, "µs")),
        ("Intervals measured", f"{len(ph.rounds)}; {eng(tgbw[-1] * 1e9, 'B')} written"),
        ("Stop reason", ph.phase.stop_reason or "unfinished"),
    )
    return Table(caption, ("item", "value"), rows, window_source(run, ph, "mean (MRT: maximum; percentiles: merged "
                                                                          "histogram) of the cell"),
                 run.raw_links([r for r in ph.rows if r.round in ph.window]) + run.store_links())


# -- Multi-WSAT ------------------------------------------------------------------------------


def multi_wsat_pages(run: RunData) -> list[Page]:
    ph = run.phase("main")
    if ph is None or not ph.rows or not ph.cells:
        return [not_measured_page(run, ph, "Multi-WSAT") if ph else _nothing(run)]
    c = ph.cells[0]
    pages = _pack("Applied Workload and Steady-State Results", (
        _steady_results(run, ph, c, "Multi-WSAT results over the measurement window"),
        _workload_table(run, ph, "The composite workload (dominant streams renormalised to 100 %)"),
    ))
    pages += _interval_panels(run, ph, "Multi-WSAT")
    pages += measurement_window_pages(run, ph, lambda v: "IOPS")
    pages += table_pages("Tabular Results — Multi-WSAT", [_interval_table(run, ph, "Composite: every interval")])
    pages.append(histogram_page(run, ph, c))
    return pages


# -- Individual Streams WSAT -----------------------------------------------------------------


def streams_pages(run: RunData) -> list[Page]:
    phases = [ph for ph in run.phases if ph.cells]
    if not phases:
        return [_nothing(run)]
    state = {True: "yes", False: "NOT ACHIEVED", None: "not evaluated"}
    rows = tuple((ph.phase.name, num(ph.cells[0].iops), num(ph.cells[0].mbps), num(ph.cells[0].lat_mean_us),
                  pct_text(ph.cells[0].p99_999_us, ph.cells[0].ios), f"{len(ph.rounds)}", state[ph.steady]) for ph in phases)
    src = ("Source: results.db table cells; each stream is its own phase (purge, rounds to steady state); mean over "
           "that phase's measurement window (percentiles: merged histogram).")
    table = Table("IOPS per stream at steady state", ("stream", "IOPS", "MB/s", "ART (µs)", "99.999 % (µs)",
                                                      "intervals", "steady state"), rows, src,
                  tuple(link for ph in phases for link in run.raw_links([r for r in ph.rows if r.round in ph.window]))
                  + run.store_links())
    png = plots.grouped_bars([ph.phase.name for ph in phases], [("IOPS", [ph.cells[0].iops for ph in phases])], "IOPS",
                             "IOPS per stream (steady-state window)", height_mm=90)
    pages = _pack("IOPS per Stream", (table, Figure("Individual Streams: IOPS of each stream alone", png, 90, src)))
    series = []
    for ph in phases:
        series.append(Series(ph.phase.name, tuple(r.round for r in ph.rows), tuple(r.iops for r in ph.rows)))
    conv = panels([Panel("IOPS per interval, each stream from its own purge", "IOPS", tuple(series), logy=True)],
                  "interval", 120)
    pages.append(Page("IOPS per Interval — All Streams", (Figure(
        "Individual Streams: IOPS per interval (one line per stream)", conv, 120,
        "Source: results.db table cells, every complete interval of each stream's phase."),)))
    stops = tuple((ph.phase.name, rounds_text(ph.window), ph.phase.stop_reason or "unfinished") for ph in phases)
    pages += table_pages("Stop Reasons", [Table("Why each stream's phase ended", ("stream", "window", "stop reason"),
                                                stops, "Source: results.db table phases.")])
    for ph in phases:
        pages += measurement_window_pages(run, ph, lambda v: "IOPS")
    return pages


# -- the composite to steady state (before Replay-Native and DIRTH) ---------------------------


def steady_pages(run: RunData, what: str) -> list[Page]:
    ph = run.phase(STEADY_PHASE)
    if ph is None or not ph.rows:
        return [not_measured_page(run, ph, f"Steady State before {what}")] if ph else []
    src = (f"Source: results.db table cells, phase {ph.phase.name!r}: every complete round ({rounds_text(ph.rounds)}).")
    png = panels([Panel(f"composite IOPS per round before {what}", "IOPS",
                        (Series("", tuple(r.round for r in ph.rows), tuple(r.iops for r in ph.rows)),))], "round", 85,
                 shade=(ph.window[0] - 0.5, ph.window[-1] + 0.5) if ph.window else None,
                 shade_label="measurement window" if ph.steady else "last five rounds")
    verdict = {True: f"Steady state reached in {rounds_text(ph.window)}.",
               False: f"STEADY STATE NOT ACHIEVED before {what}: {ph.phase.stop_reason}. The test went on from this state.",
               None: "Steady state not evaluated (fewer than five rounds)."}[ph.steady]
    return _pack("Preconditioning — Composite to Steady State", (
        Figure(f"Composite IOPS per round (after purge and WIPC) before {what}", png, 85, src),
        Text((verdict,), height_mm=12),
        _workload_table(run, ph, "The composite workload used to reach steady state"),
    )) + measurement_window_pages(run, ph, lambda v: "IOPS")


# -- Replay-Native ---------------------------------------------------------------------------


def _capture_times(run: RunData) -> dict[str, float]:
    """Cell key → start of its step in the capture (s), from the replay file the run used."""
    path = run.dir / INPUTS_DIR / REPLAY_FILE
    if not path.is_file():
        return {}
    try:
        return {f"step {s.index}": s.start_s for s in load_replay(path).steps}
    except IolabError:
        return {}


def time_axis(seconds: Sequence[float]) -> tuple[float, str]:
    span = max(seconds, default=0.0)
    return (3600.0, "hours") if span >= 7200 else (60.0, "minutes") if span >= 120 else (1.0, "seconds")


def replay_steps(run: RunData) -> tuple[PhaseSummary | None, list[tuple[float, CellAverage]], str]:
    """The replay's cells in order with their capture time (or, without the replay file, the
    cumulative replay time) in seconds, and which of the two it is."""
    ph = run.phase(REPLAY_PHASE)
    if ph is None:
        return None, [], ""
    starts = _capture_times(run)
    if starts and all(c.key in starts for c in ph.cells):
        return ph, [(starts[c.key], c) for c in ph.cells], "capture time"
    t, out = 0.0, []
    for c, r in zip(ph.cells, ph.rows):
        out.append((t, c))
        t += r.runtime_s
    return ph, out, "replay time"


def _totals_table(run: RunData, ph: PhaseSummary, t: ReplayTotals) -> Table:
    rows = (
        ("Steps replayed", f"{t.steps}"),
        ("Replay runtime", duration(t.seconds)),
        ("IOs", num(t.ios)),
        ("IOPS (all IOs / all runtime)", num(t.iops)),
        ("MB/s (all bytes / all runtime)", num(t.mbps)),
        ("Average response time (ART, IO-weighted)", eng(t.art_us, "µs")),
        ("Maximum response time (MRT)", eng(t.mrt_us, "µs")),
        ("99.99 % response time", _eng_pct(t.percentile(99.99), t.histogram and t.histogram.total)),
        ("99.999 % response time (5 nines)", _eng_pct(t.percentile(99.999), t.histogram and t.histogram.total)),
    )
    return Table("Replay-Native over the whole replay", ("item", "value"), rows,
                 f"Source: results.db table cells, phase {ph.phase.name!r}: every step; percentiles from the steps' "
                 "histograms merged (exact bin counts).", run.store_links())


def replay_pages(run: RunData) -> list[Page]:
    ph, steps, axis = replay_steps(run)
    pages: list[Page] = []
    t = replay_totals(run.phases)
    if ph is None or not steps or t is None:
        pages.append(not_measured_page(run, ph, "Replay-Native") if ph else Page("Replay-Native", (Text((
            "The replay phase was not reached (see the preconditioning pages and Run Details).",)),)))
        return pages + steady_pages(run, "the replay")
    analysis = load_analysis(run)
    div, unit = time_axis([s for s, _ in steps])
    x = tuple(s / div for s, _ in steps)
    src = (f"Source: results.db table cells, phase {ph.phase.name!r}: one cell per replay step, at the step's "
           f"{axis}" + ("; capture: the stream analysis (inputs/analysis.json)" if analysis else "") + ".")
    iops = [Series("replay (flat out)", x, tuple(c.iops for _, c in steps))]
    mbps = [Series("replay (flat out)", x, tuple(c.mbps for _, c in steps))]
    if analysis is not None and axis == "capture time":
        cap = [(s.start_s / div, s.iops, s.mbps) for s in analysis.steps if s.iops is not None]
        if cap:
            iops.append(Series("capture (Self-Test)", tuple(a for a, _, _ in cap), tuple(b for _, b, _ in cap)))
            mbps.append(Series("capture (Self-Test)", tuple(a for a, _, _ in cap), tuple(c for _, _, c in cap)))
    png = panels([Panel("IOPS per step", "IOPS", tuple(iops), steps=True),
                  Panel("MB/s per step", "MB/s (10⁶ B/s)", tuple(mbps), steps=True)], f"{axis} ({unit})", 105)
    pages.append(Page("Replay-Native Summary", (
        _totals_table(run, ph, t),
        Text(("Every step ran flat out at its own stream mix and queue depth for its duration (not throttled to the "
              "captured IO count), in capture order, after the composite brought the drive to steady state.",),
             height_mm=12),
        Figure("Replay-Native: IOPS and MB/s per step" + (", with the capture's own" if len(iops) > 1 else ""), png,
               105, src))))
    rts = []
    for name, get in (("ART", lambda c: c.lat_mean_us), ("99.999 %", lambda c: c.p99_999_us),
                      ("MRT", lambda c: c.lat_max_us)):
        pts = [(xi, get(c)) for xi, (_, c) in zip(x, steps) if get(c) is not None]
        if pts:
            rts.append(Series(f"replay {name}", *map(tuple, zip(*pts))))
    if analysis is not None and axis == "capture time":
        pts = [(s.start_s / div, s.rt_avg_us) for s in analysis.steps if s.rt_avg_us is not None]
        if pts:
            rts.append(Series("capture ART (Self-Test)", *map(tuple, zip(*pts))))
    if rts:
        png = panels([Panel("response times per step", "response time (µs)", tuple(rts), logy=True, steps=True)],
                     f"{axis} ({unit})", 110)
        pages.append(Page("Response Times vs Time", (Figure("Replay-Native: response times per step", png, 110, src),)))
    shown, step = _thin(steps)
    rows = tuple((c.key, num(s), num(ph.rows[i].runtime_s),
                  str(ph.rows[i].workload.get("queue_depth", "?")), num(c.iops), num(c.mbps), num(c.lat_mean_us),
                  pct_text(c.p99_999_us, c.ios)) for i, (s, c) in shown)
    table = Table(_thin_caption("Replay-Native: every step", step),
                  ("step", f"{axis} (s)", "runtime (s)", "QD", "IOPS", "MB/s", "ART (µs)", "99.999 % (µs)"), rows,
                  src, run.raw_links([ph.rows[i] for i, _ in shown]))
    pages += table_pages("Tabular Results — Replay-Native", [table])
    if t.histogram is not None and t.histogram.total:
        hpng = plots.latency_histogram([("", t.histogram)], "Replay-Native: response times of all steps", height_mm=150)
        pages.append(Page("Response Time Histogram — Whole Replay", (Figure(
            "Replay-Native: response-time histogram of every IO of the replay", hpng, 150,
            "Source: results.db table histograms, every replay step merged (exact bin counts)."),)))
    return pages + steady_pages(run, "the replay")


# -- DIRTH on the composite ------------------------------------------------------------------


def rwsw_dirth_pages(run: RunData) -> list[Page]:
    """The DIRTH flow's pages, then the catalogue's summary at OIO = 32."""
    at = dirth_level(run.phases, DIRTH_SUMMARY_OIO)
    ph = run.phase(DV_PHASE)
    rows = (("Threads / QD", at.key if at else "not measured"),
            *((name, pct_text(get(at), at.ios) if at else "not measured") for name, get in (
                ("IOPS", lambda c: c.iops), ("MB/s", lambda c: c.mbps), ("ART (µs)", lambda c: c.lat_mean_us),
                ("99.99 % response time (µs)", lambda c: cell_percentile(c, 99.99)),
                ("99.999 % response time (µs)", lambda c: c.p99_999_us))))
    src = window_source(run, ph, "mean of the point") if ph else "not measured"
    return dirth_pages(run) + [Page(f"Summary at OIO = {DIRTH_SUMMARY_OIO}", (Table(
        f"DIRTH on the composite at total outstanding IO {DIRTH_SUMMARY_OIO} (the RWSW summary figures)",
        ("item", "value"), rows, src),))]


# -- Self-Test (the capture itself) -----------------------------------------------------------


def load_analysis(run: RunData) -> StreamAnalysis | None:
    path = run.dir / INPUTS_DIR / ANALYSIS_FILE
    if not path.is_file():
        return None
    try:
        return StreamAnalysis.load(path)
    except IolabError:
        return None


def selftest_pages(run: RunData) -> list[Page]:
    path = run.dir / INPUTS_DIR / ANALYSIS_FILE
    a = load_analysis(run)
    if a is None:
        why = ("this run was given no stream analysis (analysis.json) with its workload" if not path.is_file()
               else f"{path.name} in the run directory could not be read")
        return [Page("Self-Test (In-Situ Capture)", (Text((
            f"No Self-Test page: {why}. Run `iolab trace analyze TRACE --out DIR` and give DIR as --workload so the "
            "capture's own metrics are reported beside the drive's.",)),))]
    return selftest_from(a, f"Source: the stream analysis given with the workload ({INPUTS_DIR}/{ANALYSIS_FILE} in "
                            f"run {run.manifest.run_id}), from {a.source}.")


def selftest_from(a: StreamAnalysis, src: str) -> list[Page]:
    """The capture's own figures, as analysed: streams, stream map, per-step metrics."""
    filters = []
    if a.process:
        filters.append(f"process {a.process}")
    if a.devices:
        filters.append(f"device(s) {', '.join(a.devices)}")
    intro = Text((
        f"Self-Test (in-situ): what the captured application asked of its storage, the baseline the drives are "
        f"compared against. {a.source} ({a.fmt}): {a.total_ios:,} reads and writes over {duration(a.duration_s)} in "
        f"{len(a.steps)} steps of {a.step_s:g} s" + (f", filtered to {' and '.join(filters)}" if filters else "")
        + f"; read {num(a.read_pct())} %. Dominant streams (≥ {a.threshold * 100:g} % of IOs): {len(a.dominant)}, "
        f"holding {num(a.dominant_pct)} % of the IOs." + ("" if a.has_latency else
                                                            " The trace has no response times."),
        *(f"Note: {n[:200]}" for n in a.notes[:2])), height_mm=24 + 8 * min(2, len(a.notes)))
    top = a.streams[:20]
    rows = [(s.label(), f"{s.ios:,}", num(s.pct), "yes" if s.dominant else "", num(s.rt_avg_us), num(s.rt_max_us))
            for s in top]
    if len(a.streams) > len(top):
        rest = a.streams[len(top):]
        rows.append((f"{len(rest)} more streams", f"{sum(s.ios for s in rest):,}", num(sum(s.pct for s in rest)), "",
                     "", ""))
    streams = Table("IO streams over the whole capture", ("stream", "IOs", "% occurrence", "dominant", "avg RT (µs)",
                                                          "max RT (µs)"), tuple(rows), src)
    pages = [Page("Self-Test — IO Streams", (intro, streams))]
    pngs = analysis_pngs(a)
    blocks: list = []
    if "stream_map" in pngs:
        png, h = pngs["stream_map"]
        blocks.append(Figure("Self-Test: IOPS of each dominant stream per step (stacked; height = the step's IOPS)",
                             png, h, src))
    div, unit = time_axis([s.start_s for s in a.steps])
    x = tuple(s.start_s / div for s in a.steps)
    mb = tuple(s.mbps or 0.0 for s in a.steps)
    blocks.append(Figure("Self-Test: MB/s per step", panels(
        [Panel("MB/s per step (capture)", "MB/s (10⁶ B/s)", (Series("", x, mb),), steps=True)], f"time ({unit})", 70),
        70, src))
    pages.append(Page("Self-Test — IO Stream Map", tuple(blocks)))
    more = [Figure(f"Self-Test: {what} per step (average and maximum)", *pngs[name], src)
            for name, what in (("outstanding", "outstanding IO"), ("response_times", "response time"))
            if name in pngs]
    if more:
        pages.append(Page("Self-Test — Outstanding IO and Response Times", tuple(more)))
    shown, step = _thin(list(a.steps))
    rows = tuple((str(s.index), num(s.start_s), f"{s.ios:,}", num(s.iops), num(s.mbps), num(s.read_pct),
                  f"{num(s.oio_avg)} / {num(s.oio_max)}", f"{num(s.rt_avg_us)} / {num(s.rt_max_us)}")
                 for _, s in shown)
    table = Table(_thin_caption("Self-Test: per-step metrics of the capture", step),
                  ("step", "start (s)", "IOs", "IOPS", "MB/s", "read %", "OIO avg / max", "RT avg / max (µs)"),
                  rows, src)
    return pages + table_pages("Self-Test — Per-Step Metrics", [table])


def _nothing(run: RunData) -> Page:
    return Page(run.manifest.title, (Text(("No phase of this run was started, so nothing was measured. "
                                           f"State: {run.manifest.state}. {run.manifest.error or ''}",)),))
