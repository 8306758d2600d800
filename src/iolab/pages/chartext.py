"""Terminal views of the characterisation tests (`iolab run`/`iolab show`): a queue depth ×
series table of IOPS per matrix phase, per-round figures of the QoS rounds, the IO
consistency period's figures and the dips of its stored per-second series."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.markup import escape as esc
from rich.table import Table

from iolab.core.units import counted, num, pct_text
from iolab.figures.compare.characterise import DIRECTIONS, direction_figures, grid
from iolab.figures.consistency import part_text
from iolab.figures.endurance import steady_random_write
from iolab.figures.summary import PhaseSummary
from iolab.pages.runwords import rounds_text
from iolab.pages.textreport import generic_view


def matrix_view(ph: PhaseSummary, console: Console) -> None:
    labels, qds, cells = grid(ph)
    if not cells:
        # a phase of no queue-depth series (precondition=steady's rounds): "no cell measured"
        # over the rounds and steady-state table it measured; its cells as any test's are
        generic_view(ph, console)
        return
    totals, directions = _reduced(ph)
    t = Table(title=f"{esc(ph.phase.name)}: IOPS (average latency µs){totals}", box=box.SIMPLE)
    t.add_column("")
    for q in qds:
        t.add_column(f"QD {q}", justify="right")
    for lab in labels:
        t.add_row(
            esc(lab), *(f"{num(c.iops)} ({num(c.lat_mean_us)})" if (c := cells.get((lab, q))) else "—" for q in qds)
        )
    console.print(t)
    figs = direction_figures(ph)
    if not any(f["read_iops"] is not None and f["write_iops"] is not None for f in figs.values()):
        return  # no cell mixed reads and writes: the totals above are one direction's
    for op in DIRECTIONS:
        t = Table(
            title=f"{esc(ph.phase.name)}: {op} IOPS, MB/s (average / maximum latency µs){directions}", box=box.SIMPLE
        )
        t.add_column("")
        for q in qds:
            t.add_column(f"QD {q}", justify="right")
        for lab in labels:
            t.add_row(esc(lab), *(_direction_text(figs[c.key], op) if (c := cells.get((lab, q))) else "—" for q in qds))
        console.print(t)


def _reduced(ph: PhaseSummary) -> tuple[str, str]:
    """How the totals' and the directions' figures were reduced over the phase's window, for the
    tables' titles: every figure is the cell's CellAverage (direction_figures folds the read_/
    write_ columns alike), IOPS, MB/s and average latency the means of the window's rounds, the
    maximum latency their maximum. A window of one round (the matrix phases run one) is that
    round's figures, said so rather than called a mean of one."""
    rounds = rounds_text(ph.window)
    if len(ph.window) == 1:
        return (f", {rounds}",) * 2
    over = f"over the measurement window ({rounds})"
    return f", each the mean {over}", f": the maximum latency the maximum, the others the mean, {over}"


def _direction_text(f: dict[str, float | None], op: str) -> str:
    """'12,340, 50.54 (80.12 / 1,234)'; '—' for a direction the cell did not run."""
    if f[f"{op}_iops"] is None:
        return "—"
    return (
        f"{num(f[f'{op}_iops'])}, {num(f[f'{op}_mbps'])} ({num(f[f'{op}_lat_mean_us'])} / {num(f[f'{op}_lat_max_us'])})"
    )


@dataclass(frozen=True)
class _QosView:
    """Per-round figures of a QoS phase. Its figures use every round, not the measurement window
    (the last rounds), which show prints above them: `window_use` says what that window is for,
    where "measurement window: rounds 6–10" read as the rounds of the IOPS below it."""

    def __call__(self, ph: PhaseSummary, console: Console) -> None:
        _qos_rounds(ph, console)

    @staticmethod
    def window_use(ph: PhaseSummary) -> str:
        every = f"the figures below use all {counted(len(ph.rows), 'round')}"
        # the window of a random-write phase is the WAF's basis (figures/endurance.py); a read phase's serves none
        if steady_random_write([ph]) is not None:
            return f"the basis of the WAF only; {every}"
        return f"used by no figure of this phase; {every}"


qos_view = _QosView()


def _qos_rounds(ph: PhaseSummary, console: Console) -> None:
    rows = list(ph.rows)
    if not rows:
        console.print("no round measured")
        return
    worst = max(rows, key=lambda r: r.lat_max_us or 0.0)
    # the median of the rounds' own averages, taken apart from the IOPS' (no one round's, as
    # "(median round)" said), of the rounds that measured one: a round without was counted as 0 µs
    lats = [r.lat_mean_us for r in rows if r.lat_mean_us is not None]
    console.print(
        esc(
            f"{counted(len(rows), 'round')}: median IOPS {num(statistics.median(r.iops for r in rows))}, "
            f"median average latency {num(statistics.median(lats) if lats else None)} µs, "
            f"worst maximum {num(worst.lat_max_us)} µs in round {worst.round}, "
            f"last round 99.99 % {_us(pct_text(rows[-1].p99_99, rows[-1].ios, 99.99))}"
        )
    )


def _us(text: str) -> str:
    """'70.40 µs', or 'n/m (20,400 IOs)' where the IOs cannot measure the percentile: the value
    stored per round is read off however few IOs, so it is shown only where `measurable`."""
    return text if text.startswith("n/m") else f"{text} µs"


def consistency_view(ph: PhaseSummary, console: Console) -> None:
    for r in ph.rows:
        console.print(
            esc(
                f"{r.cell_key}: {num(r.iops)} IOPS over {num(r.runtime_s)} s, average {num(r.lat_mean_us)} µs, "
                f"maximum {num(r.lat_max_us)} µs (per-second series: `iolab report`)"
            )
        )
    # the consistency pages' module, and its plots, only for this view: every test's declaration
    # imports this module's views, and `iolab tests` loaded the plots through it
    from iolab.pages.report.char_series import phase_series, steady_figures

    start = float(ph.values.get("steady_from", 0.0))
    t, iops, _, _, _ = phase_series(ph, ph.run_dir)
    sp, dips = steady_figures(t, iops, start, ph.rule)
    console.print(esc(part_text(sp, start)), soft_wrap=True)
    if dips is not None:
        console.print(esc(f"dips in the steady part (after {start:g} s): {dips.text()}"))
