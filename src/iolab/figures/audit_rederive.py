"""Every stored figure the engine measured, derived again from the cell's raw engine output:
the self-audit's `raw-figures` invariant (audit_checks.raw_figures).

A cell's engine figures (its rates, IO counts, bytes, runtime, latency means and maxima, its
percentiles and counters) were stored as the engine's parser gave them from the raw JSON it
wrote (core/cellschema: each column's `source`, a RoundResult attribute); its latency histogram
rows likewise (the window percentiles are read from them). Here the same parser reads the same
file again (engines/reread.py) and the same column declarations take their values from it, so a
figure edited in results.db after the run, raised or lowered, differs from its raw output and
is named with both values. A phase's steady-state tables are derived from its cells: each is
checked against the cells as the raw output gives them (audit_steady.recheck, the runner's rule),
so a table scaled with its cells is caught too.

Unlike raw-output, nothing here is skipped for a raw file still as it was recorded: the record
says the file is whole, not that results.db still holds what it gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab.core.cellschema import CELL_COLUMNS, CellColumn, CellRow
from iolab.core.errors import EngineError
from iolab.core.results import output_damage
from iolab.core.units import counted
from iolab.engines.reread import Reread, leg_figures, reread, reseries, stored_legs
from iolab.figures.audit_rates import cell_name, rate_text
from iolab.figures.audit_steady import disagreements, recheck
from iolab.store.resultsdb import histogram_rows, series_rows
from iolab.store.runstore import RunStore

# The store keeps each figure as the double the parser computed (SQLite's REAL is one), so a
# figure read again is the stored one exactly; only the order in which a split round's parts
# are added (engines/reread.py) moves the last bits (~1e-16 of the value). Anything beyond this
# was not the engine's.
REDERIVE_TOL = 1e-9

# The cell columns an engine's parser gives (a RoundResult attribute or function of it): every
# figure but the runner's own facts (phase, workload, times) and the JSON ones (counters are
# compared key by key below; raw_files names the outputs themselves).
ENGINE_COLUMNS: tuple[CellColumn, ...] = tuple(c for c in CELL_COLUMNS if c.source is not None and not c.codec)


@dataclass(frozen=True)
class Rederived:
    """What the raw outputs gave: each cell as its raw output has it, and the findings."""

    cells: dict[int, CellRow]  # cell id -> the stored row with its engine figures from raw output
    checked: int
    failures: list[str]
    issued: int = 0  # cells stored with fio's issued IO count, the rule before (Reread.counted_as_issued)
    series: int = 0  # cells whose per-second series was derived again from their raw logs
    kinds: set[str] | None = None  # the figure kinds the failures concern (compare_cell; None: every kind)


def _differ(stored: Any, raw: Any) -> bool:
    if stored is None or raw is None:
        return (stored is None) != (raw is None)
    return not math.isclose(float(stored), float(raw), rel_tol=REDERIVE_TOL, abs_tol=REDERIVE_TOL)


def _text(v: Any, unit: str = "") -> str:
    if v is None:
        return "none"
    return (f"{v:,}" if isinstance(v, int) else rate_text(float(v))) + (f" {unit}" if unit else "")


def _unit(column: str) -> str:
    """A cell column's unit, from its name (cellschema's naming: _us, iops, mbps, _ios, bytes, _s)."""
    for end, unit in (("_us", "µs"), ("iops", "IOPS"), ("mbps", "MB/s"), ("_ios", "IOs"), ("bytes", "B"), ("_s", "s")):
        if column.endswith(end):
            return unit
    return "µs" if column.startswith("p99") else ""  # the percentiles (p99, p99_9, ...)


def _histogram_differs(stored: Sequence[tuple[Any, ...]], raw: list[tuple[Any, ...]]) -> str | None:
    """How a cell's stored histogram rows differ from those its raw output gives (the store's
    own rows, resultsdb.histogram_rows; None: they don't)."""
    if list(stored) == raw or sorted(stored) == sorted(raw):  # stored in the order resultsdb made them
        return None
    have = {(d, v): (c, mx) for _, d, v, c, mx in stored}
    for _, d, v, c, mx in raw:
        s = have.pop((d, v), None)
        if s is None or s[0] != c:
            return f"its {d} histogram holds {0 if s is None else s[0]:,} IOs at {v:,g} µs, its raw output {c:,}"
        if _differ(s[1], mx):
            return f"its {d} histogram's maximum is {_text(s[1])} µs, its raw output's {_text(mx)}"
    (d, v), (c, _mx) = next(iter(have.items()))
    return f"its {d} histogram holds {c:,} IOs at {v:,g} µs, its raw output none"


# The per-second columns as resultsdb.series_rows writes them, after the cell id.
SERIES_FIELDS = (
    ("t_s", "s"),
    ("read_iops", "IOPS"),
    ("write_iops", "IOPS"),
    ("mbps", "MB/s"),
    ("lat_mean_us", "µs"),
    ("lat_max_us", "µs"),
)


def _series_differs(stored: Sequence[tuple[Any, ...]], raw: Sequence[tuple[Any, ...]]) -> str | None:
    """How a cell's stored per-second rows differ from those its raw logs give (both as
    resultsdb.series_rows makes them; None: they don't)."""
    if len(stored) != len(raw):
        return f"it holds {counted(len(stored), 'per-second row')}, its raw logs give {len(raw):,}"
    for s, r in zip(stored, raw):
        for (name, unit), a, b in zip(SERIES_FIELDS, s[1:], r[1:]):
            if _differ(a, b):
                return f"its per-second row at {r[1]:g} s stores {name} {_text(a, unit)}, its raw logs {_text(b, unit)}"
    return None


def series_finding(
    run_dir: Path, c: CellRow, got: Reread, stored: Sequence[tuple[Any, ...]] | None
) -> tuple[bool, str | None]:
    """Whether the cell's per-second series was derived again from its raw output (the engine's
    own parser: engines/reread.reseries), and how the stored rows differ (None: they don't). Not
    derived: a fio client's report, or a cell whose per-second logs are not kept (one named as
    its raw output is gone)."""
    if stored is None:
        return False, None
    names, as_issued = [str(n) for n in c.raw_files or ()], got.counted_as_issued(c.read_ios, c.write_ios)
    try:
        series = reseries(run_dir, names, got, as_issued)
        differs = None if series is None else _series_differs(stored, _rows(c, got, series))
        if differs and len(got.reports) > 1:
            # a split stored before merge_series held every leg's rest: held to the rule it was made by
            before = reseries(run_dir, names, got, as_issued, merged_before=True)
            if before is not None and not _series_differs(stored, _rows(c, got, before)):
                return True, None
    except FileNotFoundError:
        return False, None  # a log not kept (a copy made without them): no series to derive again
    except (EngineError, OSError) as e:
        return True, f"its per-second series cannot be derived again from its raw logs: {e}"
    if series is None:
        return False, None
    if not stored and len(series) == 1 and series[0].t_s == got.result.runtime_s:
        # the round as one row (fio_parse.whole_round: its logs held no line), which runs stored
        # before such rows were kept have none of: the row adds nothing the cell's totals lack
        return True, None
    return True, differs


def _rows(c: CellRow, got: Reread, series: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The rows a cell would store with this series."""
    return series_rows(c.id, replace(got.result, series=series))


def legs_differ(c: CellRow, got: Reread) -> list[str]:
    """How the figures a split round stored for each leg (path or host: `part NAME | iops` in its
    counters, engines/merge) differ from its raw output's legs. The legs are matched by their
    figures, not their names: a fio client's report names a host by the address it reached it
    at, which the run does not keep."""
    stored = stored_legs(c.counters or {})
    if not stored:
        return []
    raw = leg_figures(got, got.counted_as_issued(c.read_ios, c.write_ios))
    if len(raw) != len(stored):
        return [f"it stores the figures of {counted(len(stored), 'leg')}, its raw output holds {len(raw):,}"]
    found = []
    for name, figures in stored.items():

        def off(leg: dict[str, float], figures: dict[str, float] = figures) -> list[str]:
            return [k for k, v in figures.items() if _differ(v, leg.get(k))]

        near = min(raw, key=lambda leg: len(off(leg)))
        if wrong := off(near):
            k = wrong[0]
            found.append(f"leg {name} stored {k} {_text(figures[k])}, its raw output {_text(near.get(k))}")
        raw.remove(near)
    return found


# The figure kinds (audit.TOUCHES) a finding concerns, so that a failure marks those figures
# only (the run's banner says every failure): a stored column's, by its name; a counter's; a
# split round's legs' (the per-path pages' rates and latencies); the histogram's (percentiles);
# the per-second rows'; a steady-state table's. UNKNOWN: a finding of no one kind (a figure
# nothing here names, a cell whose output no parser reads), which marks every kind it touches.
UNKNOWN: tuple[str, ...] = ()
LEG_KINDS = ("IOPS", "MB/s", "latency", "percentile")
COUNTER_KINDS = ("WAF", "endurance")  # the flash and host write counters (and erases) they rest on


def column_kinds(name: str) -> tuple[str, ...]:
    """The figure kinds a cell column feeds (UNKNOWN: none named here)."""
    ends = (
        ("iops", ("IOPS",)),
        ("mbps", ("MB/s",)),
        ("_ios", ("IOPS", "percentile")),
        ("bytes", ("MB/s", *COUNTER_KINDS)),
    )
    if name.startswith("p99"):
        return ("percentile",)
    if "lat_" in name:
        return ("latency",)
    if name == "runtime_s":
        return ("IOPS", "MB/s")
    return next((kinds for end, kinds in ends if name.endswith(end)), UNKNOWN)


def counter_kinds(key: str) -> tuple[str, ...]:
    return COUNTER_KINDS if any(w in key for w in ("write_bytes", "waf", "erase")) else UNKNOWN


def compare_cell(
    c: CellRow, got: Reread, files: str, stored_rows: Sequence[tuple[Any, ...]], more: Sequence[str] = ()
) -> tuple[CellRow, list[str], set[str] | None]:
    """The cell as its raw output gives it, one line per figure stored otherwise, and the figure
    kinds those concern (None: one concerns no one kind; `more`: per-second findings). A cell
    stored before the IO count became its latencies' (Reread.counted_as_issued) is held to the
    rule it was stored under: its counts are then fio's issued IOs from the same report."""
    result = got.result
    raw = {col.name: col.value(result, {}) for col in ENGINE_COLUMNS}
    if got.issued is not None and got.counted_as_issued(c.read_ios, c.write_ios):
        raw["read_ios"], raw["write_ios"] = got.issued
    found = [
        (
            f"{col.name} stored {_text(getattr(c, col.name), _unit(col.name))}, its raw output "
            f"{_text(raw[col.name], _unit(col.name))}",
            column_kinds(col.name),
        )
        for col in ENGINE_COLUMNS
        if _differ(getattr(c, col.name), raw[col.name])
    ]
    counters = c.counters or {}
    found += [
        (f"counter {k} stored {_text(counters[k])}, its raw output {_text(v)}", counter_kinds(k))
        for k, v in result.counters.items()
        if k in counters and _differ(counters[k], v)
    ]
    found += [(line, LEG_KINDS) for line in legs_differ(c, got)]
    if (why := _histogram_differs(stored_rows, histogram_rows(c.id, result))) is not None:
        found.append((why, ("percentile",)))
    found += [(line, ("per-second",)) for line in more]
    failures = []
    if found:
        said = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        failures.append(f"{cell_name(c)}: {', '.join(line for line, _ in found[:3])}{said} ({files})")
    kinds = None if any(k == UNKNOWN for _, k in found) else {kind for _, ks in found for kind in ks}
    return replace(c, **raw), failures, kinds


def rederive(
    run_dir: Path,
    cells: Sequence[CellRow],
    outputs: Mapping[int, list[str]],
    hists: Mapping[int, Sequence[tuple[Any, ...]]],
    series: Mapping[int, Sequence[tuple[Any, ...]]] | None = None,
) -> Rederived:
    """Each cell with raw JSON output (`outputs`: cell id -> its files) read again and compared;
    `hists`: each cell's stored histogram rows (store.bulk.histogram_rows); `series`: each
    cell's stored per-second rows, every column (store.bulk.series_rows; None: not compared)."""
    got: dict[int, CellRow] = {}
    failures: list[str] = []
    kinds: set[str] | None = set()
    checked = issued = with_series = 0
    for c in cells:
        names = outputs.get(c.id)
        if not names:
            continue
        try:
            read = reread(run_dir, names)
        except EngineError as e:
            # a file missing or cut short is raw-output's finding (said once, not by both); a whole
            # one no engine's parser reads leaves the cell's figures without their evidence
            if not any(output_damage(run_dir / n) for n in names):
                checked += 1
                failures.append(f"{cell_name(c)}: its figures cannot be derived again from its raw output: {e}")
                kinds = None
            continue
        checked += 1
        issued += read.counted_as_issued(c.read_ios, c.write_ios)
        derived, why = series_finding(run_dir, c, read, None if series is None else series.get(c.id, ()))
        with_series += derived
        files = ", ".join(dict.fromkeys(names))
        got[c.id], found, concern = compare_cell(c, read, files, hists.get(c.id, ()), [why] if why else [])
        failures += found
        kinds = None if kinds is None or concern is None else kinds | concern
    return Rederived(got, checked, failures, issued, with_series, kinds)


def steady_tables(
    store: RunStore,
    plan: Mapping[str, Any],
    profile: Mapping[str, Any],
    stored: Sequence[CellRow],
    raw: Sequence[CellRow],
) -> tuple[int, list[str]]:
    """Every stored steady-state table (each round's) against its phase's cells as their raw
    output gives them (`raw`). What the table disagrees with in the stored cells too is
    steady-evidence's finding; here only what the raw output adds."""
    planned = {p.get("name"): p for p in plan.get("phases", ())}
    checked, failures = 0, []
    for phase, rnd in store.query("SELECT DISTINCT phase, round FROM steady ORDER BY phase, round"):
        table = store.steady_rows(phase, rnd)
        if not table:
            continue
        checked += 1
        rule = (dict(planned.get(phase, {})), dict(profile), table)
        known = disagreements(phase, recheck(*rule, [c for c in stored if c.phase == phase]))
        found = disagreements(phase, recheck(*rule, [c for c in raw if c.phase == phase]))
        failures += [f"{line} as its raw output gives it (round {rnd}'s table)" for line in found if line not in known]
    return checked, failures
