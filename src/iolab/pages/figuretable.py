"""A run's key figures on the terminal (`iolab show`, the end of `iolab run`): the figures
`iolab compare` ranks drives by, for this run alone, each value with the marks compare's ranking
gives it, and why a figure has no value."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, JustifyMethod
from rich.markup import escape as esc
from rich.table import Table

from iolab.figures.audit import Audit, kinds_of, marker
from iolab.figures.summary import PhaseSummary
from iolab.pages.report.header import Caveat, figure_caveats


def render_figures(
    metrics, phases: list[PhaseSummary], console: Console, audit: Audit | None = None, caveats: Sequence[Caveat] = ()
) -> None:
    """The figures `iolab compare` ranks drives by, for this run alone; each value marked with the
    failed audit invariants that touch it, and a figure without one with why it has none.
    `caveats`: the run's steady-state caveats (header.steady_caveats), which every value carries
    as [a], said below the table, as compare's ranking marks the same figures."""
    t = Table(title="key figures", title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("figure", "left"),
        ("value", "right"),
        ("unit", "left"),
        ("", "left"),
    )
    for col, justify in columns:
        t.add_column(col, justify=justify)
    values = [k.get(phases) for k in metrics]
    # a failed invariant marks a value: a figure without one ("—") carries only why it has none,
    # said below the table where its getter knows (a percentile of too few IOs), as the stored
    # record and a spec sheet's verdict do
    marks = [audit.marks(kinds_of(k.name, k.unit)) if audit and v is not None else () for k, v in zip(metrics, values)]
    if any(marks):
        t.add_column("audit", justify="left", style="red")
    unmeasured = []
    # a value is marked, an absence ("—") is not: a caveat on a value is none on its absence; a
    # figure of a named phase carries that phase's caveats alone (header.figure_caveats)
    carried = [figure_caveats(k.get, caveats) if v is not None else [] for k, v in zip(metrics, values)]
    for k, v, mk, own in zip(metrics, values, marks, carried):
        value = k.fmt(v) + (" [a]" if own else "")
        t.add_row(esc(k.name), esc(value), esc(k.unit), k.direction, *([esc(marker(mk))] if any(marks) else []))
        why = k.unmeasured(phases) if v is None else ""
        if why:
            unmeasured.append(f"— {k.name}: not measured, {why}")
    console.print()
    console.print(t)
    if any(carried):
        console.print(f"[red]{esc('[a] ' + '; '.join(c.text() for c in caveats))}[/]", soft_wrap=True)
    for line in unmeasured:
        console.print(esc(line), soft_wrap=True)
    _notes(metrics, values, phases, console)


def _notes(metrics, values: list[float | None], phases: list[PhaseSummary], console: Console) -> None:
    """What figures are of where their names may claim more, each said once (two figures of one
    steady part share it): a caveat in red, naming the figures it qualifies."""
    said: dict[tuple[str, bool], list[str]] = {}
    for k, v in zip(metrics, values):
        if v is None or not (note := k.note(phases)):
            continue
        said.setdefault((note, bool(k.caveat(phases))), []).append(k.name)
    for (note, caveat), names in said.items():
        line = esc(f"{', '.join(names)}: {note}")
        console.print(f"[red]{line}[/]" if caveat else line, soft_wrap=True)
