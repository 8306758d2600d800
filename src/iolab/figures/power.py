"""Power from a meter's log, aligned to a run's cells: the average and the maximum mW a drive
drew while each cell ran (the RWSW paper's "Power Consumption - Ave mW"; reviews' active
power), then per phase and per run.

A meter writes one reading every so often; a reading holds until the next one (a step
function), and the last holds for one usual interval. A cell's average is the integral of that
step function over the cell's wall-clock window divided by the time it covers, so irregular
sampling weighs each reading by how long it held, not once. A cell whose window the log covers
less than `min_coverage` of gets no figure ("not measured"): the log started late, ended early
or had a gap there. A gap is a silence longer than GAP_FACTOR usual intervals; a reading does
not hold across it. The meter's clock may differ from this machine's: `offset_s` is added to
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
from typing import TYPE_CHECKING

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.core.safefile import read_bytes
from iolab.core.units import counted

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the functions that read a meter's log: every run imports this module
# (a simulated drive's modelled power, figures/simpower.py) and most have no log, where numpy
# was 0.15 CPU-s of each `iolab run`'s start.

GAP_FACTOR = 5.0  # a silence longer than this many usual intervals is a gap in the log
MIN_COVERAGE = 0.9  # the least share of a cell's window the log must cover for a figure
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

    def holds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each reading's [start, end) on the host clock: until the next reading, or one usual
        interval where the next is a gap away (and after the last)."""
        import numpy as np

        nxt = np.append(self.t[1:], self.t[-1] + self.interval_s)
        end = np.minimum(nxt, self.t + GAP_FACTOR * self.interval_s)
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

    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
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
    interval = float(np.median(steps[steps > 0])) if (steps > 0).any() else 0.0
    if interval <= 0:
        raise IolabError(f"{source}: every reading has the same time; the log has no interval.")
    return MeterLog(source, times, np.asarray(ps), interval)


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
        first, last = min(c.started for c in out), max(c.ended for c in out)
        raise IolabError(
            f"{log.source}: the meter log ({_utc(log.t[0])} to {_utc(log.t[-1])}) covers none of the run's cells "
            f"({_utc(first)} to {_utc(last)}) well enough; check the meter's clock (--offset adds seconds to its times)."
        )
    return out


def summarise(name: str, cells: Sequence[CellPower]) -> PowerSummary:
    measured = [c for c in cells if c.avg_mw is not None]
    covered = sum(c.covered_s for c in measured)
    avg = sum(c.energy_mj for c in measured) / covered if covered > 0 else None
    mx = max((c.max_mw for c in measured if c.max_mw is not None), default=None)
    return PowerSummary(name, len(cells), len(measured), avg, mx)


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def to_document(log: MeterLog, cells: Sequence[CellPower], min_coverage: float, offset_s: float) -> dict:
    """power.json: what the report, show and export read back."""
    phases = dict.fromkeys(c.phase for c in cells)
    return {
        "source": log.source,
        "readings": len(log.t),
        "interval_s": log.interval_s,
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
