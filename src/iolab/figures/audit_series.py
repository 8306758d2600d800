"""The bound of the self-audit's series-totals invariant (audit_checks.series_totals): how far a
cell's per-second rows may fall short of, or exceed, the IOs and bytes its totals count.

What fio's logs hold (write_iops_log / write_bw_log with log_avg_msec = LOG_INTERVAL_MS, one
file per thread): fio's helper thread takes a thread's sample once an interval has passed since
its last one and writes the IOs (bytes) the thread completed since then over the time since then,
truncated to a whole IO/s (KiB/s). Nothing is written for what a thread completes after its last
sample: up to an interval of IO (more when the helper wakes late: a 4 s cell on a loaded machine
was last sampled at 3.012 s) and then the drain, the IO in flight when the runtime was up (at most
threads × queue depth IOs), which fio's totals and runtime count. engines/fio_parse.py adds the
threads' rows (a second is one row once every thread logged it, stamped with its latest thread's
time) and writes that unlogged rest as one more row from the last logged second to the runtime's
end, the totals less the rows (`tail_row`), unless less than TAIL_MIN_S or half an IO is left.

So, with the rows' IOs (bytes) added as rate × time since the row before, the totals may exceed
the rows by at most what completed after the last row, before the cell's end:
- at most the highest rate a row shows over that time, and no longer than one interval (a row
  per interval is what fio logs; the tail row keeps it below TAIL_MIN_S in runs stored since
  fio_parse made one);
- plus threads × queue depth IOs (block size: the workload's largest) completed in the drain;
- plus one IO (KiB) per thread and row: each thread's rate truncated.
The time is counted from the last row's stamp, its latest thread's: a thread that logged earlier
has the difference counted in the row (at its own rate, added over the row's longer time) rather
than after it. A 1 s cell of 1 MiB IOs at 4 × QD32 (tests/fixtures/fio/iops1m) logs one row a
thread as its runtime is up and completes most of its 128 IOs in flight after it: 119 of its 1,748
IOs (7 %) in no row, within the bound's 170, fio's output correct. Rows dropped from the end (more than the interval fio may leave), another cell's
rows or a total counted twice exceed the bound. The rows never add up to more than the totals
(fio counts every IO it logs) but for their stamps (a row is stamped with its latest thread's
time, each thread's rate is over its own window): SERIES_TOL and one IO (block) a row.

What the rows hold at least, the side that catches inflated rows, counts each row over at most
one interval. fio's helper takes a thread's sample only once its iops (bw) averaging time has
passed since its last one (__add_samples; LOG_MSEC_SLACK, 1 ms, early at most), and with
log_avg_msec set and iopsavgtime/bwavgtime not, that time is log_avg_msec: every logged rate is
over at least one interval of its thread's time. The stamp is not that window's end: it is taken
when the sample is logged (a helper preempted on a loaded machine logs it later), and
finalize_logs writes a window still held when the thread exits stamped with the exit time. A
loop-device round at load 12 logged one row a thread stamped 1.308 s, each thread's rate over its
own ~1.1 s: counted from 0 the rows held 2,054.9 IOs of 1,771 (+16 %) and failed a healthy round.
Over one interval a row is never more than the IOs it measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.core.results import LOG_INTERVAL_MS

# A row fio logs covers one interval: the most of a cell's end its rows can leave uncovered.
INTERVAL_S = LOG_INTERVAL_MS / 1000
# The rows may add up to more than the totals by this: their stamps against the IOs each thread
# completed in its own window (see the module's docstring), and one IO (block) a row.
SERIES_TOL = 0.05
KIB = 1024

# (t_s, read IOPS, write IOPS, MB/s, maximum latency µs), as store/bulk.all_series reads them
Row = tuple[float, float, float, float, float | None]


@dataclass(frozen=True)
class Shape:
    """What the series-totals bound needs of a cell besides its rows."""

    ios: int
    io_bytes: int
    runtime_s: float
    threads: int
    queue_depth: int
    largest_block: int  # bytes; 0 when the workload does not say


@dataclass(frozen=True)
class Finding:
    """One quantity's rows against its total: `unlogged_max` is the most fio leaves out of the
    rows, `most` the most the rows may add up to."""

    what: str  # "IOs" | "MB"
    total: float
    rows_sum: float  # each row's rate over the time since the row before
    unlogged_max: float
    most: float
    rows_least: float  # each row's rate over at most one interval: what the rows hold at least

    @property
    def short(self) -> bool:
        return self.total - self.rows_sum > self.unlogged_max

    @property
    def over(self) -> bool:
        return self.rows_least > self.most

    def text(self) -> str:
        if self.short:
            return (
                f"the per-second rows add up to {self.rows_sum:,.1f} {self.what}, the cell's total is "
                f"{self.total:,.1f}: {self.total - self.rows_sum:,.1f} in no row, more than fio leaves unlogged "
                f"after its last row ({self.unlogged_max:,.1f})"
            )
        return (
            f"the per-second rows add up to at least {self.rows_least:,.1f} {self.what} (each row's rate over at "
            f"most {INTERVAL_S:g} s), more than the cell's total {self.total:,.1f} (at most {self.most:,.1f})"
        )


def findings(rows: Sequence[Row], cell: Shape) -> list[Finding]:
    """The IOs' and the bytes' findings of one cell (a quantity whose total is 0 is left out)."""
    sums, least, prev, rounding = [0.0, 0.0], [0.0, 0.0], 0.0, 0.0
    for t, r, w, mbps, _ in rows:
        dt, prev = max(0.0, t - prev), t
        sums[0] += (r + w) * dt
        sums[1] += mbps * dt
        # a row stamped when its thread exited measured its rate over one interval, not since the row before
        least[0] += (r + w) * min(dt, INTERVAL_S)
        least[1] += mbps * min(dt, INTERVAL_S)
        rounding += cell.threads * max(1.0, dt / INTERVAL_S)  # a truncated IO (KiB) a thread and interval
    left = min(INTERVAL_S, max(0.0, cell.runtime_s - prev))
    in_flight = cell.threads * cell.queue_depth
    block = cell.largest_block or (cell.io_bytes / cell.ios if cell.ios else 0.0)  # else the mean IO
    out = []
    for i, (what, total, rate, per_io, trunc) in enumerate(
        (
            ("IOs", float(cell.ios), max(r + w for _, r, w, _, _ in rows), 1.0, 1.0),
            ("MB", cell.io_bytes / 1e6, max(row[3] for row in rows), block / 1e6, KIB / 1e6),
        )
    ):
        if total > 0:
            unlogged_max = rate * left + in_flight * per_io + rounding * trunc
            most = total * (1 + SERIES_TOL) + len(rows) * per_io
            out.append(Finding(what, total, sums[i], unlogged_max, most, least[i]))
    return out
