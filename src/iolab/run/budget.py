"""How a phase with a write budget (Write Saturation, the RWSW saturation phases) sizes each
interval so that it ends exactly at its budget and never with a sliver of an interval.

An interval ends at its length or its byte cap, whichever comes first, and the target's rate
decides which. A timed interval whose cap is the whole rest of the budget can therefore end
a few KiB short of it, whatever rule foresaw its rate: a file target's rate swings threefold
from one 100 ms interval to the next (page-cache writeback), so such an interval once ended
491,520 B short, and that rest became an interval of its own, measured in milliseconds at a
silly rate. The rule here holds whatever the rate does, because no interval both has a time
limit and may take the whole rest:

- The *pace* is what one interval of the planned length writes at the highest rate of the
  cell's last PACE_INTERVALS intervals (recent ones: a purged drive's fresh-out-of-box rate
  would make it many intervals long).
- While more than FINAL_PACES (half a pace) is left, an interval runs its planned length with a
  cap that keeps KEEP_PACES (a quarter pace) back. If the rate leaps past every recent one, or
  little more than the final's share is left, the cap ends it early (marked partial) after at
  least a quarter pace, and exactly a quarter pace is left.
- Once at most half a pace is left, the interval is the final one: all of the rest, by bytes
  only, with no time limit, so it never leaves a remainder. It writes a quarter to half a pace
  (the interval before it kept a quarter back): a quarter to half a planned length at the pace's
  rate, so every stretch of a planned length is measured as a whole interval, and the one the
  budget's end cuts short is short. It runs longer only if the target is slower than half its
  fastest recent interval (the phase's time budget is held between intervals, as always: see
  the end of this module). A final interval of one to two paces, as this once was, ran longer
  than a whole interval and was still partial: the steady-state window and the minimum left out
  the longest interval the budget's end measured.
- The first interval has no rate to go by: it keeps half the budget back.

`is_partial` says which intervals the budget, not the cell time, ended: one a cap ended early,
and always the final one. fio stops each thread at its share of the bytes, and the threads do
not finish together (a file target measured three of four done at 128-131 ms and the fourth at
244 ms), so the end of such an interval ran with fewer IOs outstanding than planned and its
rate is not a sample of the planned stimulus. Both are reported with their true length and
rate and never enter a steady-state window, a window mean or a minimum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from iolab.core.cellschema import CellRow
from iolab.core.plan import Cell, Phase
from iolab.core.results import PARTIAL_TOLERANCE, RoundResult
from iolab.core.workload import Workload

PACE_INTERVALS = 5  # the pace is the highest rate of this many of a cell's latest intervals
FINAL_PACES = 0.5  # the final interval takes the rest once it is at most this many paces
KEEP_PACES = 0.25  # what a timed interval's cap keeps back for the final one, in paces (< FINAL_PACES:
# the gap is the least a cap-ended interval writes, so neither is ever a sliver)
# A mixed workload's byte cap counts reads and writes, the phase budget writes only: the final
# interval gets this much more IO than its write share needs, so it reaches the budget.
MIXED_MARGIN = 1.05

Interval = tuple[int, float]  # one measured interval: (bytes written, its true length in s)


def pace(recent: Sequence[Interval], length_s: float) -> float | None:
    """Bytes one interval of `length_s` writes at the highest rate of the latest intervals
    (None before the first)."""
    rates = [written / seconds for written, seconds in recent[-PACE_INTERVALS:] if seconds > 0]
    return max(rates) * length_s if rates else None


def latest(recent: Sequence[Interval], result: RoundResult) -> tuple[Interval, ...]:
    """A cell's latest intervals with this one's result added: what `pace` reads."""
    return (*recent, (result.write.io_bytes, result.runtime_s))[-PACE_INTERVALS:]


def stored_intervals(cells: Iterable[CellRow]) -> dict[str, tuple[Interval, ...]]:
    """Each cell's latest stored intervals, oldest first, as the runner keeps them for `pace`
    (a resumed phase's)."""
    out: dict[str, tuple[Interval, ...]] = {}
    for c in cells:
        out[c.cell_key] = (*out.get(c.cell_key, ()), (c.write_bytes, c.runtime_s))[-PACE_INTERVALS:]
    return out


def write_share(w: Workload) -> float:
    """The share of a workload's bytes that are writes."""
    by_op = {op: sum(s.share * s.block_size for s in w.streams if s.op == op) for op in ("read", "write")}
    return by_op["write"] / (by_op["read"] + by_op["write"])


def within_budget(phase: Phase, cell: Cell, written: int, recent: Sequence[Interval] = ()) -> Cell:
    """The cell to run next in a byte-budgeted phase: capped as the module says. `written` is
    what the phase's intervals wrote so far, `recent` this cell's latest intervals, oldest first."""
    if phase.budget_write_bytes is None:
        return cell
    w = cell.workload
    share = write_share(w)
    if share == 0:
        return cell  # a read-only interval writes nothing towards the budget
    rest = phase.budget_write_bytes - written
    p = pace(recent, w.duration_s) if w.duration_s is not None else None
    # Engines write whole blocks per thread (fio gives each job whole blocks, rounding down).
    unit = w.threads * max(s.block_size for s in w.streams)
    changes: dict[str, float | None] = {}
    if w.duration_s is None or (p is not None and rest <= FINAL_PACES * p):
        # The final interval: all of the rest, rounded up so the budget is reached.
        io = rest / share * (MIXED_MARGIN if share < 1 else 1.0)
        cap = math.ceil(io / unit) * unit
        changes["duration_s"] = None
    else:
        keep = KEEP_PACES * p if p is not None else rest / 2
        cap = int((rest - keep) / share) // unit * unit  # rounded down: at least `keep` is left
    cap = max(cap, unit)
    if w.bytes_budget is not None and w.bytes_budget <= cap:
        return cell  # the plan's own cap ends it first
    return Cell(cell.key, w.with_(bytes_budget=cap, **changes), cell.mix, cell.block_size)


def is_partial(planned: Cell, run: Cell, result: RoundResult) -> bool:
    """Whether the write budget (`run` differs from `planned`) ended this timed interval: its cap
    before the planned length (RoundResult.runtime_s is the true length on every engine), or
    the final interval, run by bytes alone."""
    d = planned.workload.duration_s
    if run is planned or d is None:
        return False
    return run.workload.duration_s is None or result.runtime_s < d * (1 - PARTIAL_TOLERANCE)


# -- the time budget ----------------------------------------------------------------------------
# An interval runs past its planned length until its IO in flight completes; a phase with a time
# budget starts no round that what is left of the budget cannot hold (figures/phaseend.time_budget),
# by what the round is expected to take: its planned length and the drain to expect (drain_estimate).
#
# The drain to expect is the most measured, except one drain longer than every other once at least
# OUTLIER_AFTER are measured: that one is set aside and the second most is expected. The most alone
# let a single long drain (XSR's group 3: its first interval, paying group 2's garbage collection,
# drained 0.77 s, each after it 0.30 s) end the phase an interval early, for the rest of the phase,
# although no interval after it drained as long. Setting aside one drain only where at least two
# others agree on less keeps the estimate the most the drive does now: a drain seen twice is the
# drive's and is expected (a long drain every tenth interval is, from its second), and two
# measured drains are too few to call either one an outlier. The budget the user gave still bounds
# every round that drains as the intervals before it did: a round passes it only when it drains
# longer than every interval before it but the one set aside, and its decision then says by how
# much (as one always did that drained longer than every one before it; the first interval of a
# phase has no drain to go by at all).
OUTLIER_AFTER = 3


def drained(planned: Cell, result: RoundResult) -> float:
    """How long an interval ran past its planned length (0 for one run by bytes alone). The cell,
    not its length, is handed in: the cell time keeps to its one path (tests/unit/test_run_path.py)."""
    d = planned.workload.duration_s
    return max(0.0, result.runtime_s - d) if d is not None else 0.0


def stored_drains(cells: Iterable[CellRow]) -> dict[str, list[float]]:
    """Each cell's drains in a phase's stored rounds (a resumed phase's, as the runner keeps
    them); an interval a byte budget ended is not a timed one and does not count."""
    out: dict[str, list[float]] = {}
    for c in cells:
        d = c.workload.get("duration_s")
        if not c.partial and d is not None:
            out.setdefault(c.cell_key, []).append(max(0.0, c.runtime_s - d))
    return out


def drain_estimate(drains: Sequence[float]) -> float:
    """The drain to expect of a cell's next interval from its drains so far (the comment above):
    the most, or the second most once OUTLIER_AFTER are measured; 0 before the first."""
    if len(drains) < OUTLIER_AFTER:
        return max(drains, default=0.0)
    return sorted(drains)[-2]


def next_round_s(phase: Phase, drains: Mapping[str, Sequence[float]]) -> float:
    """Engine seconds the phase's next round is expected to take: each timed cell's planned
    length and the drain to expect of it."""
    return sum(
        c.workload.duration_s + drain_estimate(drains.get(c.key, ()))
        for c in phase.cells
        if c.workload.duration_s is not None
    )
