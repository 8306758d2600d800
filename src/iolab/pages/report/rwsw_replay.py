"""Replay-Native's pages (RWSW catalogue): the capture's steps replayed flat out in capture
order after the composite reached steady state, each step's IOPS, MB/s and response times
beside the capture's own, the whole replay's totals and histogram."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.core.results import Histogram
from iolab.core.runfiles import INPUTS_DIR, REPLAY_FILE
from iolab.core.units import duration, eng, num, pct_text
from iolab.figures.compare import REPLAY_PHASE, ReplayTotals, replay_totals
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report import latency_plots
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw import STEADY_PHASE, eng_pct, steady_pages, thin, thin_caption, time_axis
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.rwsw_selftest import load_analysis
from iolab.pages.report.sections import not_measured_page, table_pages
from iolab.pages.runwords import rounds_text
from iolab.traces.analysis.streamstats import StreamAnalysis
from iolab.traces.analysis.workloads import ReplayStep, load_replay


def _replay_file_steps(run: RunData) -> dict[str, ReplayStep]:
    """Cell key → its step in the replay file the run used (none when the file is gone or unread)."""
    path = run.dir / INPUTS_DIR / REPLAY_FILE
    if not path.is_file():
        return {}
    try:
        return {f"step {s.index}": s for s in load_replay(path).steps}
    except IolabError:
        return {}


def _capture_times(run: RunData) -> dict[str, float]:
    """Cell key → start of its step in the capture (s), from the replay file the run used."""
    return {key: s.start_s for key, s in _replay_file_steps(run).items()}


def _how_long(run: RunData, ph: PhaseSummary) -> str:
    """How long the steps ran: their replay file's durations, or (a quick run cuts each to its
    cell time) what they ran, which the summary called "its duration" whatever it was."""
    planned = _replay_file_steps(run)
    cut = [
        (row.runtime_s, planned[c.key].duration_s)
        for c, row in zip(ph.cells, ph.rows)
        if c.key in planned and row.runtime_s < 0.99 * planned[c.key].duration_s
    ]
    if not cut:
        return "for its duration"
    return (
        f"for at most {duration(max(r for r, _ in cut))} (a scaled-down run: the replay file's steps last up to "
        f"{duration(max(d for _, d in cut))})"
    )


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
    ios = t.histogram.total if t.histogram is not None else None
    rows = (
        ("Steps replayed", f"{t.steps}"),
        ("Replay runtime", duration(t.seconds)),
        ("IOs", num(t.ios)),
        ("IOPS (all IOs / all runtime)", num(t.iops)),
        ("MB/s (all bytes / all runtime)", num(t.mbps)),
        ("Average response time (ART, IO-weighted)", eng(t.art_us, "µs")),
        ("Maximum response time (MRT)", eng(t.mrt_us, "µs")),
        ("99.99 % response time", eng_pct(t.percentile(99.99), ios)),
        ("99.999 % response time (5 nines)", eng_pct(t.percentile(99.999), ios)),
    )
    return Table(
        "Replay-Native over the whole replay",
        ("item", "value"),
        rows,
        f"Source: results.db table cells, phase {ph.phase.name!r}: every step; percentiles from the steps' "
        "histograms merged (exact bin counts).",
        run.store_links(),
    )


# The replay's steps as replay_steps gives them: (capture or replay time in s, the step's cell).
Steps = list[tuple[float, CellAverage]]


@dataclass(frozen=True)
class _Axis:
    """The time axis every replay plot shares: the step times in `unit` (`div` seconds each)
    and what they are (capture or replay time); with the capture's analysis when it is kept."""

    x: tuple[float, ...]
    name: str
    div: float
    unit: str
    analysis: StreamAnalysis | None

    @property
    def capture(self) -> StreamAnalysis | None:
        """The analysis, when the steps sit at their capture times and can be drawn beside it."""
        return self.analysis if self.name == "capture time" else None


def replay_pages(run: RunData) -> list[Page]:
    ph, steps, axis = replay_steps(run)
    pages: list[Page] = []
    t = replay_totals(run.phases)
    if ph is None or not steps or t is None:
        pages.append(
            not_measured_page(run, ph, "Replay-Native")
            if ph
            else Page(
                "Replay-Native",
                (Text(("The replay phase was not reached (see the preconditioning pages and Run Details).",)),),
            )
        )
        return pages + steady_pages(run, "the replay")
    analysis = load_analysis(run)
    div, unit = time_axis([s for s, _ in steps])
    ax = _Axis(tuple(s / div for s, _ in steps), axis, div, unit, analysis)
    src = (
        f"Source: results.db table cells, phase {ph.phase.name!r}: one cell per replay step, at the step's "
        f"{axis}" + ("; capture: the stream analysis (inputs/analysis.json)" if analysis else "") + "."
    )
    pages.append(_summary_page(run, ph, t, steps, ax, src))
    pages += _response_time_pages(steps, ax, src)
    pages += table_pages("Tabular Results — Replay-Native", [_steps_table(run, ph, steps, axis, src)])
    if t.histogram is not None and t.histogram.total:
        pages.append(_histogram_page(t.histogram))
    return pages + steady_pages(run, "the replay")


def _summary_page(run: RunData, ph: PhaseSummary, t: ReplayTotals, steps: Steps, ax: _Axis, src: str) -> Page:
    """The totals, and IOPS and MB/s per step (beside the capture's own when it is kept)."""
    iops = [Series("replay (flat out)", ax.x, tuple(c.iops for _, c in steps))]
    mbps = [Series("replay (flat out)", ax.x, tuple(c.mbps for _, c in steps))]
    if ax.capture is not None:
        cap = [
            (s.start_s / ax.div, s.iops, s.mbps) for s in ax.capture.steps if s.iops is not None and s.mbps is not None
        ]
        if cap:
            iops.append(Series("capture (Self-Test)", tuple(a for a, _, _ in cap), tuple(b for _, b, _ in cap)))
            mbps.append(Series("capture (Self-Test)", tuple(a for a, _, _ in cap), tuple(c for _, _, c in cap)))
    png = panels(
        [
            Panel("IOPS per step", "IOPS", tuple(iops), steps=True),
            Panel("MB/s per step", "MB/s (10⁶ B/s)", tuple(mbps), steps=True),
        ],
        f"{ax.name} ({ax.unit})",
        105,
    )
    return Page(
        "Replay-Native Summary",
        (
            _totals_table(run, ph, t),
            Text(
                (
                    f"Every step ran flat out at its own stream mix and queue depth {_how_long(run, ph)} (not throttled "
                    f"to the captured IO count), in capture order, {_after_composite(run)}.",
                ),
                height_mm=16,
            ),
            Figure(
                "Replay-Native: IOPS and MB/s per step" + (", with the capture's own" if len(iops) > 1 else ""),
                png,
                src,
            ),
        ),
    )


def _after_composite(run: RunData) -> str:
    """What the composite did before the replay, as the run's own verdict has it: a run that
    stopped at its round limit (or too soon to judge) was said to start from steady state."""
    ph = run.phase(STEADY_PHASE)
    if ph is None:
        return "with no composite phase stored before it"
    if ph.steady is True:
        return f"after the composite brought the drive to steady state ({rounds_text(ph.window)})"
    if ph.steady is False:
        return f"after the composite, which did NOT bring the drive to steady state ({ph.phase.stop_reason})"
    return f"after the composite, whose steady state was not evaluated ({rounds_text(ph.rounds)}: too few to judge)"


def _response_time_pages(steps: Steps, ax: _Axis, src: str) -> list[Page]:
    """ART, 99.999 % and MRT per step (and the capture's ART); none when no step measured one."""
    rts = []
    getters: tuple[tuple[str, Callable[[CellAverage], float | None]], ...] = (
        ("ART", lambda c: c.lat_mean_us),
        ("99.999 %", lambda c: c.p99_999_us),
        ("MRT", lambda c: c.lat_max_us),
    )
    for name, get in getters:
        pts = [(xi, get(c)) for xi, (_, c) in zip(ax.x, steps) if get(c) is not None]
        if pts:
            rts.append(Series(f"replay {name}", *map(tuple, zip(*pts))))
    if ax.capture is not None:
        pts = [(s.start_s / ax.div, s.rt_avg_us) for s in ax.capture.steps if s.rt_avg_us is not None]
        if pts:
            rts.append(Series("capture ART (Self-Test)", *map(tuple, zip(*pts))))
    if not rts:
        return []
    png = panels(
        [Panel("response times per step", "response time (µs)", tuple(rts), logy=True, steps=True)],
        f"{ax.name} ({ax.unit})",
        110,
    )
    return [Page("Response Times vs Time", (Figure("Replay-Native: response times per step", png, src),))]


def _steps_table(run: RunData, ph: PhaseSummary, steps: Steps, axis: str, src: str) -> Table:
    shown, step = thin(steps)
    rows = tuple(
        (
            c.key,
            num(s),
            num(ph.rows[i].runtime_s),
            _qd_as_run(run, ph, ph.rows[i]),
            num(c.iops),
            num(c.mbps),
            num(c.lat_mean_us),
            pct_text(c.p99_999_us, c.ios),
        )
        for i, (s, c) in shown
    )
    return Table(
        thin_caption("Replay-Native: every step", step),
        ("step", f"{axis} (s)", "runtime (s)", "QD", "IOPS", "MB/s", "ART (µs)", "99.999 % (µs)"),
        rows,
        src,
        run.raw_links([ph.rows[i] for i, _ in shown]),
    )


def _histogram_page(histogram: Histogram) -> Page:
    hpng = latency_plots.latency_histogram(
        [("", histogram)], "Replay-Native: response times of all steps", height_mm=150
    )
    return Page(
        "Response Time Histogram — Whole Replay",
        (
            Figure(
                "Replay-Native: response-time histogram of every IO of the replay",
                hpng,
                "Source: results.db table histograms, every replay step merged (exact bin counts).",
            ),
        ),
    )


def _qd_as_run(run: RunData, ph: PhaseSummary, row: CellRow) -> str:
    """A step's queue depth, and the outstanding IO it ran at where the engine raised it (fio
    runs random and sequential streams as jobs of their own): the plan's QD alone said 1 of a
    step fio ran at 2."""
    qd = str(row.workload.get("queue_depth", "?"))
    ran = run.ran_outstanding(ph.phase.name, row.cell_key)
    return qd if ran is None else f"{qd} (ran at {ran} outstanding)"
