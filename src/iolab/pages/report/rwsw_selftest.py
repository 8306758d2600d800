"""The Self-Test (in-situ) pages that follow every RWSW test: the capture's own per-step
metrics, the baseline the drives are compared against, read from the stream analysis the run
was given (inputs/analysis.json in the run directory)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from iolab.core.errors import IolabError
from iolab.core.runfiles import ANALYSIS_FILE, INPUTS_DIR
from iolab.core.units import counted, duration, num
from iolab.pages.report.model import Block, Figure, Page, Table, Text
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw import thin, thin_caption, time_axis
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.sections import table_pages
from iolab.traces.analysis.streamstats import NO_DATA, StreamAnalysis


def with_selftest(build: Callable[[RunData], list[Page]]) -> Callable[[RunData], list[Page]]:
    """An RWSW test's pages: its own, then the Self-Test pages of the capture it replayed."""
    return lambda run: build(run) + selftest_pages(run)


def is_selftest(page: Page) -> bool:
    return page.title.startswith("Self-Test")


def capture_key(run: RunData) -> bytes | None:
    """What a run's Self-Test pages are drawn from (its analysis.json, None: none given):
    runs with one key have the same Self-Test pages."""
    path = run.dir / INPUTS_DIR / ANALYSIS_FILE
    return hashlib.sha1(path.read_bytes()).digest() if path.is_file() else None


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
        why = (
            "this run was given no stream analysis (analysis.json) with its workload"
            if not path.is_file()
            else f"{path.name} in the run directory could not be read"
        )
        return [
            Page(
                "Self-Test (In-Situ Capture)",
                (
                    Text(
                        (
                            f"No Self-Test page: {why}. Run `iolab trace analyze TRACE --out DIR` and give DIR as --workload so the "
                            "capture's own metrics are reported beside the drive's.",
                        )
                    ),
                ),
            )
        ]
    return selftest_from(
        a,
        f"Source: the stream analysis given with the workload ({INPUTS_DIR}/{ANALYSIS_FILE} in "
        f"run {run.manifest.run_id}), from {a.source}.",
    )


def selftest_from(a: StreamAnalysis, src: str) -> list[Page]:
    """The capture's own figures, as analysed: streams, stream map, per-step metrics."""
    intro, streams = _intro(a), _streams_table(a, src)
    pages = [Page("Self-Test — IO Streams", (intro, streams))]
    # numpy with it, here: `iolab tests` imports this page module and never draws (test_report_speed)
    from iolab.pages.report.stream_plots import drawings

    plots = drawings(a, table=False)  # the Streams page's own table says what its table would
    blocks: list[Block] = []
    if "stream_map" in plots:
        d = plots["stream_map"]
        blocks.append(
            Figure(
                "Self-Test: IOPS of each dominant stream per step (stacked; height = the step's IOPS)",
                d,
                src,
            )
        )
    rated = a.rated_steps()  # a short final step's rate is not drawn (StreamAnalysis.short_step)
    div, unit = time_axis([s.start_s for s in rated])
    x = tuple(s.start_s / div for s in rated)
    mb = tuple(s.mbps or 0.0 for s in rated)
    blocks.append(
        Figure(
            "Self-Test: MB/s per step",
            panels(
                [Panel("MB/s per step (capture)", "MB/s (10⁶ B/s)", (Series("", x, mb),), steps=True)],
                f"time ({unit})",
                70,
            ),
            src,
        )
    )
    pages.append(Page("Self-Test — IO Stream Map", tuple(blocks)))
    more = [
        Figure(f"Self-Test: {what} per step (average and maximum)", plots[name], src)
        for name, what in (("outstanding", "outstanding IO"), ("response_times", "response time"))
        if name in plots
    ]
    if more:
        pages.append(Page("Self-Test — Outstanding IO and Response Times", tuple(more)))
    return pages + table_pages("Self-Test — Per-Step Metrics", [_steps_table(a, src)])


def _intro(a: StreamAnalysis) -> Text:
    """What was captured, how it was filtered and how much the dominant streams hold."""
    filters = []
    if a.process:
        filters.append(f"process {a.process}")
    if a.devices:
        filters.append(f"device(s) {', '.join(a.devices)}")
    return Text(
        (
            f"Self-Test (in-situ): what the captured application asked of its storage, the baseline the drives are "
            f"compared against. {a.source} ({a.fmt}): {a.total_ios:,} reads and writes over {duration(a.duration_s)} in "
            f"{counted(len(a.steps), 'step')} of {a.step_s:g} s"
            + (f", filtered to {' and '.join(filters)}" if filters else "")
            + f"; read {num(a.read_pct())} %. Dominant streams (≥ {a.threshold * 100:g} % of IOs): {len(a.dominant)}, "
            f"holding {num(a.dominant_pct)} % of the IOs."
            + ("" if a.has_latency else " The trace has no response times."),
            # the capture's sample of its written data (RWSW Fig. 10), or why there is none
            "W" + (a.data.text() if a.data else f"written data (compressibility, duplicates): {NO_DATA}")[1:] + ".",
            *(f"Note: {n[:200]}" for n in a.notes[:2]),
        ),
        height_mm=32 + 8 * min(2, len(a.notes)),
    )


def _streams_table(a: StreamAnalysis, src: str) -> Table:
    """The 20 largest streams, and the rest in one row."""
    top = a.streams[:20]
    rows = [
        (s.label(), f"{s.ios:,}", num(s.pct), "yes" if s.dominant else "", num(s.rt_avg_us), num(s.rt_max_us))
        for s in top
    ]
    if len(a.streams) > len(top):
        rest = a.streams[len(top) :]
        rows.append(
            (f"{len(rest)} more streams", f"{sum(s.ios for s in rest):,}", num(sum(s.pct for s in rest)), "", "", "")
        )
    return Table(
        "IO streams over the whole capture",
        ("stream", "IOs", "% occurrence", "dominant", "avg RT (µs)", "max RT (µs)"),
        tuple(rows),
        src,
    )


def _steps_table(a: StreamAnalysis, src: str) -> Table:
    shown, step = thin(list(a.steps))
    step_rows = tuple(
        (
            f"{s.index}{' (partial)' if s.partial else ''}",
            num(s.start_s),
            f"{s.ios:,}",
            num(s.iops),
            num(s.mbps),
            num(s.read_pct),
            f"{num(s.oio_avg)} / {num(s.oio_max)}",
            f"{num(s.rt_avg_us)} / {num(s.rt_max_us)}",
        )
        for _, s in shown
    )
    return Table(
        thin_caption("Self-Test: per-step metrics of the capture", step),
        ("step", "start (s)", "IOs", "IOPS", "MB/s", "read %", "OIO avg / max", "RT avg / max (µs)"),
        step_rows,
        src,
    )
