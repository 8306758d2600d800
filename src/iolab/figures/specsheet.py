"""A spec sheet: what a drive model's data sheet promises, as acceptance criteria a measured
drive is judged against (the fleet report; meant for a per-drive front page too).

TOML:

    [sheet]
    model = "Example 400 GB SAS"        # optional, shown with the verdicts
    [[criterion]]
    figure = "RND 4KiB R/W 0/100 IOPS"  # a key figure as the test's record names it
    min = 35000                         # and/or max = ...
    unit = "IOPS"                       # optional: the unit min/max are in (µs/us/ms/s, KB/s/MB/s/GB/s, IOPS/kIOPS)
    claim = 42500                       # optional: the data sheet's own figure, shown beside the bounds
    name = "4K random write"            # optional: the criterion's name in reports and JUnit

or CSV with the header `figure,min,max,unit,claim,name` (empty cells: not given). A criterion
on something the run does not measure (UBER, power; DWPD from a run whose test does not measure
endurance: figures/endurance.measures_endurance) is judged "not-measured", never passed."""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.safefile import loads_toml, read_config
from iolab.core.units import ASCII_NUMBER, GROUPED, given, grouped_number, num
from iolab.core.usertext import check_text

FIELDS = ("figure", "min", "max", "unit", "claim", "name")
NUMBERS = ("min", "max", "claim")
# Units a bound may be written in, as a factor to the unit's family base.
_UNITS = {
    "ns": ("time", 1e-3),
    "us": ("time", 1.0),
    "µs": ("time", 1.0),
    "ms": ("time", 1e3),
    "s": ("time", 1e6),
    "KB/s": ("rate", 1e-3),
    "MB/s": ("rate", 1.0),
    "GB/s": ("rate", 1e3),
    "IOPS": ("iops", 1.0),
    "kIOPS": ("iops", 1e3),
    "%": ("pct", 1.0),
}


@dataclass(frozen=True)
class Criterion:
    name: str
    figure: str
    min: float | None = None
    max: float | None = None
    unit: str | None = None
    claim: float | None = None

    def bounds_text(self, figure_unit: str | None = None) -> str:
        """'≥ 35,000 IOPS and ≤ 0.1 ms': the bounds as the sheet gave them (units.given), where a
        measured figure beside them is units.num's, as `iolab show` prints it. A bound given with
        no unit is in its figure's own, `figure_unit` (bare only where the figure is not known:
        "≥ 50,000" beside "40,111 IOPS" read as if it were another figure's bound)."""
        unit = self.unit or figure_unit
        u = f" {unit}" if unit else ""
        parts = ([f"≥ {given(self.min)}{u}"] if self.min is not None else []) + (
            [f"≤ {given(self.max)}{u}"] if self.max is not None else []
        )
        return " and ".join(parts)


@dataclass(frozen=True)
class SpecSheet:
    path: Path
    model: str | None
    criteria: tuple[Criterion, ...]


@dataclass(frozen=True)
class Verdict:
    drive: str
    criterion: Criterion
    verdict: str  # pass | fail | not-measured | not-judged
    value: float | None  # in `unit`
    why: str
    unit: str = ""  # the unit `value` is in: the criterion's own, else its figure's ("" not measured)


def load_spec_sheet(path: Path) -> SpecSheet:
    what = f"spec sheet {path}"
    text = read_config(path, "spec sheet")
    if path.suffix.lower() == ".csv":
        rows, model = _csv_rows(text, what), None
    else:
        data = loads_toml(text, what)
        if set(data) - {"sheet", "criterion"} or not isinstance(data.get("criterion"), list):
            raise IolabError(
                f"{what}: expected [[criterion]] tables (and an optional [sheet] with a model); "
                f"found {', '.join(sorted(data)) or 'nothing'}."
            )
        sheet = data.get("sheet", {})
        if not isinstance(sheet, dict) or set(sheet) - {"model"}:
            raise IolabError(f"{what}, [sheet]: the only field is 'model'.")
        # printed on the report's front page and the fleet's, as the criteria's names are
        model = _text(sheet, "model", f"{what}, [sheet]")
        rows = [(f"[[criterion]] #{i + 1}", t) for i, t in enumerate(data["criterion"])]
    crits = [_criterion(row, f"{what}, {where}") for where, row in rows]
    if not crits:
        raise IolabError(f"{what}: no criterion in it.")
    names = [c.name for c in crits]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise IolabError(f"{what}: criterion {twice[0]!r} is given twice; name each once (field 'name').")
    return SpecSheet(path, model, tuple(crits))


def _csv_rows(text: str, what: str) -> list[tuple[str, dict]]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "figure" not in reader.fieldnames or set(reader.fieldnames) - set(FIELDS):
        raise IolabError(f"{what}: the first line must name the columns, from {','.join(FIELDS)} ('figure' required).")
    twice = sorted({f for f in reader.fieldnames if reader.fieldnames.count(f) > 1})
    if twice:  # DictReader keeps a row's last cell of the name: "figure,min,min" judged by the second
        raise IolabError(f"{what}: the first line names column {twice[0]!r} twice; name each column once.")
    rows = []
    for i, row in enumerate(reader):
        where = f"{what}, line {i + 2}"
        if None in row:  # the cells past the header's columns (an unquoted comma in a name, a stray cell)
            raise IolabError(
                f"{where}: {len(reader.fieldnames) + len(row[None])} cells, but the first line names "
                f'{len(reader.fieldnames)} columns; quote a cell that holds a comma ("4K, random").'
            )
        cells = {k: v for k, v in row.items() if v not in (None, "")}
        # a CSV cell is text by nature: its numbers are read here, so _number takes numbers only
        numbers = {k: _cell_number(v, f"{where}: field {k!r}") for k, v in cells.items() if k in NUMBERS}
        rows.append((f"line {i + 2}", cells | numbers))
    return rows


def _cell_number(v: str, where: str) -> float:
    value = grouped_number(v)  # any comma was dropped, so "35,5" read as 355
    if value is None:
        raise IolabError(
            f"{where} is {v!r}; give a number ({ASCII_NUMBER}; {GROUPED}: a decimal comma is a point, 35.5)."
        )
    return value


def _number(v, where: str) -> float:
    if isinstance(v, str):  # TOML's quotes make text of a number: min = "5" passed as 5
        if grouped_number(v) is not None:
            raise IolabError(
                f"{where} is {json.dumps(v)}, text in quotes where a number belongs; write the number without them."
            )
        raise IolabError(f"{where} is {json.dumps(v)}; give a number (without quotes).")
    # an infinite bound (TOML's inf, 1e400 or a CSV's 'inf') holds nothing: max = inf passed every
    # drive as meeting a spec no data sheet states, min = inf failed every one
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise IolabError(f"{where} is {v!r}; give a finite number.")
    return float(v)


def _criterion(t, where: str) -> Criterion:
    if not isinstance(t, dict):
        raise IolabError(f"{where}: expected a table.")
    unknown = set(t) - set(FIELDS)
    if unknown:
        raise IolabError(f"{where}: unknown field {sorted(unknown)[0]!r}; fields are {', '.join(FIELDS)}.")
    fig = _text(t, "figure", where)
    if not fig or not fig.strip():
        raise IolabError(f"{where}: field 'figure' is missing (the key figure's name, as `iolab show` prints it).")
    lo = _number(t["min"], f"{where}: field 'min'") if "min" in t else None
    hi = _number(t["max"], f"{where}: field 'max'") if "max" in t else None
    if lo is None and hi is None:
        raise IolabError(f"{where}: give 'min' or 'max' (or both): the bound a drive must meet.")
    if lo is not None and hi is not None and lo > hi:
        raise IolabError(f"{where}: 'min' {lo:g} is above 'max' {hi:g}; no drive could pass.")
    unit = _text(t, "unit", where)
    if unit is not None and unit not in _UNITS:
        raise IolabError(f"{where}: field 'unit' is {unit!r}; use one of {', '.join(_UNITS)}.")
    claim = _number(t["claim"], f"{where}: field 'claim'") if "claim" in t else None
    name = _text(t, "name", where) or fig
    return Criterion(name, fig, lo, hi, unit, claim)


def _text(t: dict, field: str, where: str) -> str | None:
    """A text field's value (None: not given). Any other TOML type is refused: a list as the unit
    raised TypeError, a table as the name was printed on the front page as Python's repr."""
    v = t.get(field)
    if v is None:
        return None
    if not isinstance(v, str):
        raise IolabError(f"{where}: field {field!r} is {v!r}; give text in quotes.")
    return check_text(v, f"{where}: field {field!r}")


def in_unit(value: float, have: str, want: str | None) -> float | None:
    """`value` in `have` expressed in `want` (None: the units do not convert)."""
    if want is None or want == have:
        return value
    a, b = _UNITS.get(have), _UNITS.get(want)
    if a is None or b is None or a[0] != b[0]:
        return None
    return value * a[1] / b[1]


def not_measured_hint(figure: str, measured: list[str], unmeasured: Mapping[str, str] | None = None) -> str:
    """What a not-measured verdict adds. A figure of the run's own test that it has no value for
    (`unmeasured`: figure -> why, specmatch.unmeasured_figures) is no typo: why it has none, the
    reason the key-figure table gives. Any other name: the run's figures named most like `figure`
    (a typo in the sheet is then seen at once), else a few of its figures; '' for a run with none."""
    if unmeasured and figure in unmeasured:
        return f": {figure} is this test's figure, but {unmeasured[figure] or 'the run could not compute it'}"
    if not measured:
        return ""
    close = difflib.get_close_matches(figure, measured, n=3, cutoff=0.6)
    if close:
        return "; did you mean " + " or ".join(repr(n) for n in close) + "?"
    more = f" and {len(measured) - 3} more" if len(measured) > 3 else ""
    return f"; none of its figures is named like it (it measured {', '.join(map(repr, measured[:3]))}{more})"


def _unit_mismatch(c: Criterion, have: str, sheet: SpecSheet, again: str | None = None) -> IolabError:
    """A bound in a unit its figure cannot be in: the sheet's mistake, never the drive's fail.
    `again`: how to go on with the sheet fixed, when it was refused before anything ran (None:
    it was found judging runs)."""
    fam = _UNITS.get(have, (None, 0.0))[0]
    fits = [u for u, (f, _) in _UNITS.items() if fam is not None and f == fam] or [have]
    after = (
        "No drive was judged on it; fix the sheet and judge the runs again (`iolab fleet FLEET "
        "--spec-sheet FILE`, `iolab report RUN --spec-sheet FILE`)."
        if again is None
        else f"Nothing was run; fix the sheet and {again}."
    )
    return IolabError(
        f"spec sheet {sheet.path}, criterion {c.name!r}: its figure {c.figure!r} is in {have}, and the "
        f"unit given, {c.unit!r}, does not apply to it; give unit = one of {', '.join(map(repr, fits))}, or "
        f"none (the figure's own unit). {after}"
    )


def check_units(sheet: SpecSheet, units: dict[str, str], again: str = "start again") -> None:
    """Refuse, before anything runs, a bound in a unit its figure is never in (`units`: the key
    figures the tests to run declare, with their units): found after the run, the sheet's typo
    would cost the whole run (a fleet's: every drive's) before it was said. `again`: how to go on
    once the sheet is fixed (a run is started again; an interrupted one is resumed)."""
    for c in sheet.criteria:
        have = units.get(c.figure)
        if have is not None and in_unit(1.0, have, c.unit) is None:
            raise _unit_mismatch(c, have, sheet, again)


def judge(
    drive: str,
    figures: dict[str, float],
    units: dict[str, str],
    sheet: SpecSheet,
    strict_units: bool = True,
    reasons: Sequence[str] = (),
    unmeasured: Mapping[str, str] | None = None,
    steady: Mapping[str, Sequence[str]] | None = None,
) -> list[Verdict]:
    """Each criterion's verdict on one drive (`figures`: its measured key figures; `units`: theirs).
    A criterion whose unit does not apply to its figure is refused (IolabError) unless not
    `strict_units`, when its verdict is "fail" with no value (the front page says "not judged").
    `reasons` (specmatch.run_reasons: a quick run, steady state not reached, an audit failed)
    make every measured figure "not-judged": it was measured, but not as the drive's, so it
    neither passes nor fails the sheet (the fleet's rule and a single run's front page are one).
    `unmeasured` (specmatch.unmeasured_figures): the test's figures the run has no value for, and why.
    `steady` (specmatch.figures_steady): each figure's steady-state caveats, which make it alone
    "not-judged" (a steady phase's figure is judged though another phase of the run was not)."""
    out = []
    for c in sheet.criteria:
        if c.figure not in figures:
            hint = not_measured_hint(c.figure, list(figures), unmeasured)
            out.append(Verdict(drive, c, "not-measured", None, f"{c.figure}: not measured by this run{hint}"))
            continue
        v = in_unit(figures[c.figure], units[c.figure], c.unit)
        if v is None:
            if strict_units:
                raise _unit_mismatch(c, units[c.figure], sheet)
            out.append(
                Verdict(
                    drive, c, "fail", None, f"{c.figure} is in {units[c.figure]}, which does not convert to {c.unit}"
                )
            )
            continue
        ok = (c.min is None or v >= c.min) and (c.max is None or v <= c.max)
        unit = c.unit or units[c.figure]
        why = f"{c.figure} = {num(v)} {unit}, needs {c.bounds_text(unit) or '-'}" + (
            f" (data sheet: {given(c.claim)})" if c.claim is not None else ""
        )
        if held := [*reasons, *(steady or {}).get(c.figure, ())]:
            # the bound beside the value: a quick qualification run shows how near each drive came
            needs = f"; needs {c.bounds_text(unit)}" if c.bounds_text() else ""
            why = f"not judged: {'; '.join(held)} ({c.figure} = {num(v)} {unit}{needs})"
            out.append(Verdict(drive, c, "not-judged", v, why, unit))
            continue
        out.append(Verdict(drive, c, "pass" if ok else "fail", v, why, unit))
    return out
