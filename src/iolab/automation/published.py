"""Published summary figures (a datasheet's, another lab's) read from CSV, to rank beside
measured runs in `iolab compare` with the same ordinal ranking (compare.competition_ranks).

The file: a header line naming the columns `drive`, `figure`, `value` and `unit`, and
optionally `direction` (`higher-is-better` or `lower-is-better`; without it the figure's own
definition decides, so `figure` must then be one of a test's key figures as `iolab show`
prints them), then one line per figure of a drive. Anything else is refused with the file,
line and field: a missing column, an unknown one, an empty field, a field holding a control
character (an argument holding one is refused too), a value that is not a finite
number, a direction that is neither, a unit or direction other than the figure's own, the same
figure twice for a drive, and a value no drive can have (plausible.py, the rule `check` applies to a
saved document too: a negative magnitude, a rate or latency of 0, a value above any drive's in
its unit: a typo, or a figure in another unit, would otherwise rank first).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.api import registry
from iolab.automation.plausible import implausible
from iolab.core.errors import IolabError
from iolab.core.safefile import read_bytes
from iolab.core.units import ASCII_NUMBER, ascii_number, counted
from iolab.core.usertext import control_problem
from iolab.figures.compare import KeyMetric, SummaryTable, competition_ranks

REQUIRED = ("drive", "figure", "value", "unit")
DIRECTIONS = ("higher-is-better", "lower-is-better")


@dataclass(frozen=True)
class PublishedFigure:
    drive: str
    figure: str
    value: float
    unit: str
    higher_is_better: bool
    source: str  # FILE:LINE

    def record(self) -> dict:
        return {
            "drive": self.drive,
            "figure": self.figure,
            "value": self.value,
            "unit": self.unit,
            "direction": DIRECTIONS[0] if self.higher_is_better else DIRECTIONS[1],
            "source": self.source,
        }


def is_published(ref: str | Path) -> bool:
    """A compare argument that names a CSV file of published figures, not a run."""
    return str(ref).lower().endswith(".csv")


def known_figures(tests: Sequence[str] = ()) -> dict[str, KeyMetric]:
    """Every key figure the registered tests (or these tests) define, by name."""
    out: dict[str, KeyMetric] = {}
    for t in registry.all():
        if t.key_figures is not None and (not tests or t.name in tests):
            for m in t.key_figures(()):
                out.setdefault(m.name, m)
    return out


def _problem(path: Path, line: int, field: str | None, text: str) -> IolabError:
    where = f"{path}, line {line}" + (f", field {field!r}" if field else "")
    return IolabError(
        f"{where}: {text} A published-figures CSV has a header line with the columns drive, figure, "
        "value and unit (and optionally direction: higher-is-better or lower-is-better), then one "
        "line per figure of a drive, e.g. 'Vendor X1,RND 4KiB R/W 0/100 IOPS,180000,IOPS'. Nothing "
        "was compared."
    )


def _plain(path: Path, rows: Iterator[list[str]]) -> Iterator[list[str]]:
    """The CSV's rows, each refused (file, line, field) where a field holds a control character: a
    drive's name is printed in the comparison's table, where an escape sequence would recolour or
    rewrite the terminal, as an argument holding one is refused (usertext.check_argv)."""
    names: list[str] = []  # the header's, which name a line's fields
    for line, row in enumerate(rows, start=1):
        for i, cell in enumerate(row):
            if problem := control_problem(cell):
                field = names[i] if i < len(names) else f"column {i + 1}"
                raise _problem(
                    path,
                    line,
                    field,
                    f"{cell!r} {problem}; a field may not hold control or invisible format characters.",
                )
        names = names or [h.strip().lower() for h in row]
        yield row


def read_published(path: Path, known: dict[str, KeyMetric]) -> list[PublishedFigure]:
    """The figures in one CSV file; `known`: the key figures a figure without a direction
    column takes its direction from (and whose unit it must have)."""
    try:
        text = read_bytes(path, "published-figures file", "config").decode("utf-8-sig")
    except OSError as e:
        raise IolabError(f"{path}: cannot read the published-figures file ({e.strerror}).") from None
    except UnicodeDecodeError as e:
        raise IolabError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save the CSV as UTF-8.") from None
    rows = _plain(path, csv.reader(text.splitlines()))
    header = [h.strip().lower() for h in next(rows, [])]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise _problem(
            path,
            1,
            missing[0],
            f"the header line has no column {', '.join(missing)} (it has: {', '.join(header) or 'nothing'}).",
        )
    unknown = [h for h in header if h not in (*REQUIRED, "direction")]
    if unknown or len(set(header)) != len(header):
        bad = unknown[0] if unknown else next(h for h in header if header.count(h) > 1)
        raise _problem(path, 1, bad, f"the header line's column {bad!r} is {'unknown' if unknown else 'named twice'}.")
    out: list[PublishedFigure] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in enumerate(rows, start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise _problem(path, line, None, f"the line has {counted(len(row), 'field')}, the header {len(header)}.")
        f = {h: c.strip() for h, c in zip(header, row)}
        for h in header:
            if not f[h] and h != "direction":
                raise _problem(path, line, h, "the field is empty.")
        value = ascii_number(f["value"])
        if value is None:
            raise _problem(
                path, line, "value", f"{f['value']!r} is no plain number ({ASCII_NUMBER}, e.g. 180000 or 1.8e5)."
            )
        if problem := implausible(value, f["unit"], f["figure"] in known):
            raise _problem(path, line, "value", problem)
        definition = known.get(f["figure"])
        if f.get("direction"):
            if f["direction"] not in DIRECTIONS:
                raise _problem(path, line, "direction", f"{f['direction']!r} is neither {' nor '.join(DIRECTIONS)}.")
            higher = f["direction"] == DIRECTIONS[0]
            if definition is not None and definition.higher_is_better != higher:
                raise _problem(
                    path,
                    line,
                    "direction",
                    f"{f['figure']!r} is {definition.direction.replace(' ', '-')} by its definition.",
                )
        elif definition is None:
            raise _problem(
                path,
                line,
                "figure",
                f"{f['figure']!r} is no key figure iolab defines, so its direction "
                "is unknown: add a direction column, or name the figure as `iolab show` prints it.",
            )
        else:
            higher = definition.higher_is_better
        if definition is not None and f["unit"] != definition.unit:
            raise _problem(path, line, "unit", f"{f['figure']!r} is in {definition.unit}, not {f['unit']}.")
        key = (f["drive"], f["figure"])
        if key in seen:
            raise _problem(path, line, "figure", f"{f['drive']!r} has {f['figure']!r} already on line {seen[key]}.")
        seen[key] = line
        out.append(PublishedFigure(f["drive"], f["figure"], value, f["unit"], higher, f"{path}:{line}"))
    if not out:  # every line under the header was blank: there is no line 2 to point at
        raise _problem(path, 1, None, "the file has only its header line, no line of figures under it.")
    return out


def ranking(measured: SummaryTable | None, published: Sequence[PublishedFigure]) -> tuple[SummaryTable, list[str]]:
    """The measured drives' summary table with the published drives added as rows (named
    'DRIVE (published)'), every column ranked again over them all; and the notes on published
    figures no column holds. Without measured runs the columns are the published figures."""
    if measured is not None:
        metrics = list(measured.metrics)
        drives, values = list(measured.drives), [list(v) for v in measured.values]
    else:
        metrics = list(
            {p.figure: KeyMetric(p.figure, p.unit, p.higher_is_better, lambda _: None) for p in published}.values()
        )
        drives, values = [], []
    names = [m.name for m in metrics]
    notes = []
    for m in metrics:
        units = {p.unit for p in published if p.figure == m.name}
        if units - {m.unit}:
            raise IolabError(
                f"published figure {m.name!r} is given in {', '.join(sorted(units))}; the measured "
                f"runs' is in {m.unit}. Give every drive's figure in one unit."
            )
    for p in published:
        if p.figure not in names:
            notes.append(f"{p.source}: {p.figure!r} is not a figure of the compared test, so it is not ranked")
    by_drive: dict[str, dict[str, float]] = {}
    for p in published:
        by_drive.setdefault(p.drive, {})[p.figure] = p.value
    for drive, figs in by_drive.items():
        if any(n in figs for n in names):
            drives.append(f"{drive} (published)")
            values.append([figs.get(n) for n in names])
    if len(drives) < 2:
        raise IolabError(
            "compare needs at least two drives to rank: give two or more runs, published drives, or "
            "both (a published drive counts when it has a figure of the compared test)."
        )
    per = [competition_ranks([row[j] for row in values], m.higher_is_better) for j, m in enumerate(metrics)]
    ranks = tuple(tuple(per[j][i] for j in range(len(metrics))) for i in range(len(drives)))
    # the measured figures keep the caveats of their runs; a published figure carries none iolab knows
    marks = (
        tuple(measured.marks) + ((("",) * len(metrics),) * (len(drives) - len(measured.marks)))
        if measured and measured.marks
        else ()
    )
    # the measured figures' notes too (what a DIRTH Mid figure is of): a published one has none
    said = measured.notes if measured else ()
    noted = (
        tuple(measured.figure_notes) + ((("",) * len(metrics),) * (len(drives) - len(measured.figure_notes)))
        if measured and measured.figure_notes
        else ()
    )
    table = SummaryTable(tuple(drives), tuple(metrics), tuple(tuple(v) for v in values), ranks, marks, said, noted)
    return table, notes
