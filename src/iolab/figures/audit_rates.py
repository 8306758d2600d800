"""The audit's rate arithmetic on one stored cell: IOPS, MB/s, IO counts and bytes must agree
with each other (figures/audit_checks.py's `iops-bytes` invariant reads them here)."""

from __future__ import annotations

import math

from iolab.core.cellschema import CellRow

# IOPS × mean IO size against MB/s: both come from one count of IOs and bytes, so only the
# rounding of each figure separates them.
RATE_TOL = 0.01


def cell_name(c: CellRow) -> str:
    return f"{c.phase} round {c.round} {c.cell_key}"


def rates_differ(want: float, got: float) -> bool:
    """Beyond RATE_TOL of each other; a product that overflowed (an absurd stored IOPS: 1e308
    IOPS × 4 KiB is inf) differs from any stored rate, where inf > tol × inf would be False."""
    if not (math.isfinite(want) and math.isfinite(got)):
        return True
    return abs(want - got) > RATE_TOL * max(want, got)


def rate_text(x: float) -> str:
    """A rate for a failure line: grouped digits, or 4 significant ones past what any drive does
    (an absurd stored value would otherwise print with 300 digits)."""
    return f"{x:,.2f}" if abs(x) < 1e12 else f"{x:.4g}"


def cell_bytes(c: CellRow) -> list[str]:
    """A whole cell's rates against its counts, for mixed sizes. Its IOPS and MB/s are its
    directions' sums (as the PTS reports a mixed cell), each direction's over its own runtime:
    fio times reads and writes apart, and a composite's random reads and sequential writes run as
    jobs of their own that end some ms apart. So IOPS × the cell's mean size is not its MB/s (a
    correct replay failed by 1.3 %); each direction's MB/s over its own time (its IOs / its IOPS)
    must instead add up to the bytes the cell moved, and the cell's figures to its directions'."""
    known = [(n, ios, iops, mbps) for n, ios, iops, mbps in sides(c) if ios and iops is not None and mbps is not None]
    if len(known) < sum(1 for _, ios, _, _ in sides(c) if ios):
        return []  # a direction without its rates: nothing to weigh the bytes by
    failures = []
    moved = sum(mbps * 1e6 * ios / iops if iops > 0 else math.inf for _, ios, iops, mbps in known)
    if rates_differ(moved, c.io_bytes):
        each = ", ".join(
            f"{n} {ios:,} IOs at {rate_text(iops)} IOPS and {rate_text(mbps)} MB/s" for n, ios, iops, mbps in known
        )
        failures.append(f"{cell_name(c)}: {each} move {rate_text(moved)} B in their own times, stored {c.io_bytes:,} B")
    iops, mbps = sum(s[2] for s in known), sum(s[3] for s in known)
    if rates_differ(iops, c.iops) or rates_differ(mbps, c.mbps):
        failures.append(
            f"{cell_name(c)}: stored {rate_text(c.iops)} IOPS and {rate_text(c.mbps)} MB/s, its reads and writes "
            f"{rate_text(iops)} IOPS and {rate_text(mbps)} MB/s"
        )
    return failures


def sides(c: CellRow) -> list[tuple[str, int | None, float | None, float | None]]:
    return [("read", c.read_ios, c.read_iops, c.read_mbps), ("write", c.write_ios, c.write_iops, c.write_mbps)]
