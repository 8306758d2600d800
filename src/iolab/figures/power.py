"""Power from a meter's log, aligned to a run's cells: the average and the maximum mW a drive
drew while each cell ran (the RWSW paper's "Power Consumption - Ave mW"; reviews' active
power), then per phase and per run.

A meter writes one reading every so often; a reading holds until the next one (a step
function), and the last holds for one usual interval. A cell's average is the integral of that
step function over the cell's wall-clock window divided by the time it covers, so irregular
sampling weighs each reading by how long it held, not once. A cell whose window the log covers
less than `min_coverage` of gets no figure ("not measured"): the log started late, ended early
or had a gap there. A gap is a silence longer than GAP_FACTOR of the meter's slow intervals (its
SLOW_PCT-th percentile interval: a meter that logs fast while power changes and slowly while it is
steady holds each steady reading until the next, which the median, its fast interval, would call a
gap); a reading does not hold across it. The meter's clock may differ from this machine's: `offset_s` is added to
every meter time (host time = meter time + offset)."""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.core.runfiles import POWER_FILE
from iolab.core.safefile import read_bytes, read_json
from iolab.core.units import counted, num

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the functions that read a meter's log: every run imports this module
# (a simulated drive's modelled power, figures/simpower.py) and most have no log, where numpy
# was 0.15 CPU-s of each `iolab run`'s start.

GAP_FACTOR = 5.0  # a silence longer than this many slow intervals is a gap in the log
# The slow interval: the meter's intervals at this percentile (numpy's "lower": one that occurred).
# A meter logging every 10 ms while power changes and every 1 s while steady has 1 % of its
# intervals slow (1 in 101); silences rarer than 1 in 200 intervals stay gaps, more frequent ones
# are read as the meter's slow pace.
SLOW_PCT = 99.5
MIN_COVERAGE = 0.9  # the least share of a cell's window the log must cover for a figure
# A meter's clock and the offset to this machine's, each at most this far from 0 either way (1970,
# or the meter's own start): about 317 years, where readings' times still keep microseconds (a
# double's step at 1e10 is 2e-6 s) and print as dates.
MAX_CLOCK_S = 1e10
# The most a reading may say: ten kilowatts is more than a drive, or a server full of them, draws;
# above it the log is corrupt or its unit is wrong (mW under a "watts" header reads 1,000 × too high).
MAX_READING_MW = 1e7
TIME_NAMES = ("time", "timestamp", "t", "time_s", "epoch")
POWER_NAMES = {
    "watts": 1000.0,
    "w": 1000.0,
    "power_w": 1000.0,
    "watt": 1000.0,
    "mw": 1.0,
    "milliwatts": 1.0,
    "power_mw": 1.0,
}


@dataclass(frozen=True)
class MeterLog:
    source: str
    t: np.ndarray  # host-clock Unix seconds, non-decreasing
    mw: np.ndarray  # milliwatts
    interval_s: float  # the usual interval between readings (median)
    gap_s: float  # a longer silence is a gap: GAP_FACTOR x the slow interval (SLOW_PCT)

    def holds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each reading's [start, end) on the host clock: until the next reading, or gap_s
        where the next is a gap away, and one usual interval after the last."""
        import numpy as np

        nxt = np.append(self.t[1:], self.t[-1] + self.interval_s)
        end = np.minimum(nxt, self.t + self.gap_s)
        end[-1] = self.t[-1] + self.interval_s
        return self.t, end


@dataclass(frozen=True)
class CellPower:
    """One cell's power. avg_mw/max_mw are None when the log covers too little of it."""

    phase: str
    round: int
    cell: int
    label: str
    started: float
    ended: float
    readings: int  # readings that held during the cell
    coverage_pct: float
    avg_mw: float | None
    max_mw: float | None
    energy_mj: float  # integral over the covered part (mW x s)
    covered_s: float


@dataclass(frozen=True)
class PowerSummary:
    """Power over several cells: time-weighted over their covered windows."""

    name: str
    cells: int
    measured: int
    avg_mw: float | None
    max_mw: float | None


def _parse_time(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise IolabError(f"{where}: {text!r} is not a time (Unix seconds or ISO 8601 with a UTC offset).") from None
    if dt.tzinfo is None:
        raise IolabError(
            f"{where}: the time {text!r} has no UTC offset, so it cannot be placed on this machine's clock; "
            "write it as Unix seconds or with an offset (2026-11-29T03:00:00+00:00)."
        )
    return dt.timestamp()


def _columns(header: list[str], source: str) -> tuple[int, int, float] | None:
    """(time column, power column, mW per unit) of a header row; None if the row is data."""
    names = [h.strip().lower().replace(" ", "_").strip("()[]") for h in header]
    if all(_is_number(n) for n in names[:2]):
        return None
    ti = next((i for i, n in enumerate(names) if n in TIME_NAMES), None)
    pi = next((i for i, n in enumerate(names) if n in POWER_NAMES), None)
    if ti is None or pi is None:
        raise IolabError(
            f"{source}: line 1 names the columns {header}; a meter log needs a time column "
            f"({', '.join(TIME_NAMES)}) and a power column (watts, w, mw, milliwatts)."
        )
    return ti, pi, POWER_NAMES[names[pi]]


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def parse_meter_log(text: str, source: str, offset_s: float = 0.0) -> MeterLog:
    """A meter's CSV: `time,watts` (a header may name the columns and the unit: watts or mW;
    without one, time then watts). IolabError with the file and line of what is wrong."""
    import numpy as np

    # a meter's Windows software or a spreadsheet saves "CSV UTF-8" with a byte-order mark: its
    # header then named a column '\ufefftime' and the log was refused
    rows = [r for r in csv.reader(io.StringIO(text.removeprefix("\ufeff"))) if r and any(c.strip() for c in r)]
    if not rows:
        raise IolabError(f"{source}: the meter log is empty.")
    cols = _columns(rows[0], source)
    first = 1 if cols else 0
    ti, pi, scale = cols or (0, 1, 1000.0)
    ts: list[float] = []
    ps: list[float] = []
    for n, r in enumerate(rows[first:], start=first + 1):
        where = f"{source}, line {n}"
        if len(r) <= max(ti, pi):
            raise IolabError(f"{where}: {counted(len(r), 'field')}; the time and power columns need {max(ti, pi) + 1}.")
        t = _parse_time(r[ti], where) + offset_s
        try:
            p = float(r[pi]) * scale
        except ValueError:
            raise IolabError(f"{where}: the power {r[pi]!r} is not a number.") from None
        if not (math.isfinite(p) and p >= 0 and math.isfinite(t)):
            raise IolabError(f"{where}: power {r[pi]!r} at {r[ti]!r} is not a finite non-negative reading.")
        if p > MAX_READING_MW:
            raise IolabError(
                f"{where}: power {r[pi]!r} is {p / 1e6:,.6g} kW, more than the {MAX_READING_MW / 1e6:g} kW a meter "
                "of drives reads; check the power column's unit (watts or mW, named in the header) and the line."
            )
        if abs(t - offset_s) > MAX_CLOCK_S:
            raise IolabError(
                f"{where}: the time {r[ti]!r} is more than {MAX_CLOCK_S:,.0f} s (about 317 years) from 1970; "
                "give Unix seconds, ISO 8601 with an offset, or the meter's own seconds with --offset."
            )
        p += 0.0  # a reading of -0 is 0: the figures never say "-0 mW"
        if ts and t < ts[-1]:
            raise IolabError(
                f"{where}: the time goes back ({r[ti]!r} after a later one); readings must be in time order."
            )
        ts.append(t)
        ps.append(p)
    if len(ts) < 2:
        raise IolabError(f"{source}: {counted(len(ts), 'reading')}; a meter log needs at least two.")
    times = np.asarray(ts)
    steps = np.diff(times)
    moving = steps[steps > 0]
    interval = float(np.median(moving)) if moving.size else 0.0
    if interval <= 0:
        raise IolabError(f"{source}: every reading has the same time; the log has no interval.")
    slow = float(np.percentile(moving, SLOW_PCT, method="lower"))
    return MeterLog(source, times, np.asarray(ps), interval, GAP_FACTOR * max(slow, interval))


def cell_power(log: MeterLog, started: float, ended: float, min_coverage: float = MIN_COVERAGE) -> dict:
    """The average, maximum, energy and coverage of one wall-clock window."""
    import numpy as np

    start, end = log.holds()
    lo = np.maximum(start, started)
    hi = np.minimum(end, ended)
    span = np.clip(hi - lo, 0.0, None)
    held = span > 0
    covered = float(span.sum())
    length = max(ended - started, 1e-12)
    coverage = covered / length
    energy = float((span * log.mw).sum())
    measured = held.any() and coverage >= min_coverage
    return {
        "readings": int(held.sum()),
        "coverage_pct": round(100.0 * coverage, 3),
        "avg_mw": energy / covered if measured else None,
        "max_mw": float(log.mw[held].max()) if measured else None,
        "energy_mj": energy,
        "covered_s": covered,
    }


def align(log: MeterLog, cells: Iterable[CellRow], min_coverage: float = MIN_COVERAGE) -> list[CellPower]:
    """Every stored cell, preconditioning included, in the order given."""
    out = []
    for c in cells:
        f = cell_power(log, c.started, c.ended, min_coverage)
        label = c.cell_key if c.kind == "measure" else f"{c.kind}: {c.cell_key}"
        out.append(CellPower(c.phase, c.round, c.ordinal, label, c.started, c.ended, **f))
    if out and not any(c.avg_mw is not None for c in out):
        _refuse_uncovered(log, out, min_coverage)
    return out


def _refuse_uncovered(log: MeterLog, cells: Sequence[CellPower], min_coverage: float) -> None:
    """No cell is covered well enough: the clock when the log's times miss the cells', else its gaps."""
    import numpy as np

    first, last = min(c.started for c in cells), max(c.ended for c in cells)
    times = f"the meter log ({_utc(log.t[0])} to {_utc(log.t[-1])})"
    run = f"the run's cells ({_utc(first)} to {_utc(last)})"
    if log.t[-1] <= first or log.t[0] >= last:  # the two ranges do not meet: the clock or the wrong log
        raise IolabError(
            f"{log.source}: {times} covers none of {run} well enough; check the meter's clock "
            "(--offset adds seconds to its times)."
        )
    silences = np.diff(log.t)
    gaps = silences > log.gap_s
    best = max(c.coverage_pct for c in cells)
    if not gaps.any():  # a log that starts after the cells or ends before them, shifted or short
        raise IolabError(
            f"{log.source}: {times} covers at most {best:.1f} % of a cell of {run} (--min-coverage "
            f"{100 * min_coverage:g} %); check the meter's clock (--offset adds seconds to its times) "
            "or that it logged the whole run."
        )
    longest = float(silences.max())
    raise IolabError(
        f"{log.source}: {times} spans {run}, but covers at most {best:.1f} % of a cell (--min-coverage "
        f"{100 * min_coverage:g} %) because of its gaps: {counted(int(gaps.sum()), 'silence')} longer than "
        f"{log.gap_s:g} s ({GAP_FACTOR:g} x the meter's slow interval), the longest {longest:g} s at "
        f"{_utc(float(log.t[:-1][silences.argmax()]))}; no reading holds across a gap. A meter that stopped "
        "logging needs the run again with it logging."
    )


def summarise(name: str, cells: Sequence[CellPower]) -> PowerSummary:
    measured = [c for c in cells if c.avg_mw is not None]
    covered = sum(c.covered_s for c in measured)
    avg = sum(c.energy_mj for c in measured) / covered if covered > 0 else None
    mx = max((c.max_mw for c in measured if c.max_mw is not None), default=None)
    return PowerSummary(name, len(cells), len(measured), avg, mx)


def timing_text(interval_s: float, gap_s: float | None) -> str:
    """The log's pace as `iolab power` and the report print it: the median interval between
    readings and, beside it, the gap limit the figures used (GAP_FACTOR x the slow interval)."""
    every = f"readings every {num(interval_s, trim=True)} s (median)"
    if gap_s is None:  # power.json written before the limit was kept
        return f"{every}; the gap limit used was not recorded"
    slow = gap_s / GAP_FACTOR  # the limit is GAP_FACTOR x max(slow, median): the slow one, never below the median
    return (
        f"{every}; gap limit {num(gap_s, trim=True)} s ({GAP_FACTOR:g} x the {SLOW_PCT:g}th-percentile interval, "
        f"{num(slow, trim=True)} s): no reading holds across a longer silence"
    )


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def to_document(log: MeterLog, cells: Sequence[CellPower], min_coverage: float, offset_s: float) -> dict:
    """power.json: what the report, show and export read back."""
    phases = dict.fromkeys(c.phase for c in cells)
    return {
        "source": log.source,
        "readings": len(log.t),
        "interval_s": log.interval_s,
        "gap_s": log.gap_s,
        "offset_s": offset_s,
        "min_coverage_pct": 100.0 * min_coverage,
        "run": asdict(summarise("run", cells)),
        "phases": [asdict(summarise(p, [c for c in cells if c.phase == p])) for p in phases],
        "cells": [asdict(c) for c in cells],
    }


def copy_record(data: bytes) -> dict:
    """What power.json records of the meter log copied beside it (`source_copy`): its size and
    digest. The two files are replaced one after the other (durable.replace_files), so a kill
    between the renames leaves a new log beside the old figures; this tells them apart."""
    return {"source_copy_bytes": len(data), "source_copy_sha256": hashlib.sha256(data).hexdigest()}


def refuse_other_copy(run_dir: Path, doc: dict, where: Path) -> None:
    """Raise IolabError when the meter log beside power.json (at `where`) is not the one its
    figures came from (a document without the record, from before it was kept, is read as it is)."""
    name, size, digest = doc.get("source_copy"), doc.get("source_copy_bytes"), doc.get("source_copy_sha256")
    if not isinstance(name, str) or not isinstance(digest, str) or Path(name).name != name:
        return
    try:
        data = read_bytes(run_dir / name, "copy of the power meter log", "document")
    except OSError as e:
        found = f"cannot be read ({e.strerror or e})"
    else:
        have = copy_record(data)  # hashed once: compared, then named when it differs
        if have == {"source_copy_bytes": size, "source_copy_sha256": digest}:
            return
        found = f"is {counted(len(data), 'byte')} with sha256 {have['source_copy_sha256'][:16]}…"
    raise IolabError(
        f"{where}: its power figures come from a meter log of {counted(int(size or 0), 'byte')} with sha256 "
        f"{digest[:16]}…, but the copy beside it, {run_dir / name}, {found}: `iolab power` was stopped between "
        "replacing the two, or one was changed since. No power figure is shown from them; attach the log "
        f"again: iolab power {run_dir} LOG"
    )


def stored_power(run_dir: Path) -> dict[str, Any] | None:
    """The run's power.json, None when no meter log was attached to it; refused when the meter
    log beside it is not the one its figures came from."""
    p = run_dir / POWER_FILE
    if not p.exists():
        return None
    doc: dict[str, Any] = read_json(p, "run's power figures", "document")
    if isinstance(doc, dict):
        refuse_other_copy(run_dir, doc, p)
    return doc
