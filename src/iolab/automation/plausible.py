"""Which values a key figure can have: one rule for the figures iolab reads from a file a person
can edit, a published-figures CSV (`compare`, published.py) and a saved `--json` document
(`check --baseline FILE.json`), so that a typo, a figure in another unit or a hand-edited value
is refused instead of being ranked first or judged against (a baseline of infinity or NaN passed
every candidate "within tolerance"; one of 0 or -10^308 made any candidate an improvement or a
regression).

A value is refused when it is not a finite number; when it is negative and the figure is a
magnitude (every key figure iolab defines, and a figure in one of MAGNITUDE_UNITS); when it is
0 in a unit of IO rate or latency (POSITIVE_UNITS: a drive that completed an IO has a rate and a
latency above 0; a size, share or duration may be 0: a drive without an SLC cache); and when it
is above PLAUSIBLE_MAX for its unit, or above 0 and below PLAUSIBLE_MIN for it (a baseline of
1e-300 µs made every candidate a regression of a 300-digit percentage).
"""

from __future__ import annotations

import math

from iolab.core.units import num

# Every key figure iolab defines is a magnitude (a rate, a time, a size, a share), never below 0;
# so is a made-up figure (one with a direction column) in one of these units. Other units (°C,
# dB, a difference) may be negative.
MAGNITUDE_UNITS = frozenset(
    ("IOPS", "KIOPS", "MB/s", "MiB/s", "GB/s", "GiB/s", "ns", "µs", "us", "ms", "s", "min", "h")
    + ("B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "%", "W", "mW", "J")
)
# IO rates and IO latencies: above 0 for any drive that completed an IO (ms and s are left out:
# a made-up figure in them may be a duration that can be 0)
POSITIVE_UNITS = frozenset(("IOPS", "KIOPS", "MB/s", "MiB/s", "GB/s", "GiB/s", "ns", "µs", "us"))
# The largest value a figure may have, by unit: about a hundred times the most any storage
# device publishes (some tens of millions of IOPS, tens of GB/s; a latency of over 2.7 hours or
# a capacity of 10 PB is no drive's), so that only a typo or a figure given in another unit is
# refused. A unit not listed: at most 10^12 (and at least -10^12).
PLAUSIBLE_MAX = {
    "IOPS": 1e9,
    "KIOPS": 1e6,
    "MB/s": 1e7,
    "MiB/s": 1e7,
    "GB/s": 1e4,
    "GiB/s": 1e4,
    "ns": 1e13,
    "µs": 1e10,
    "us": 1e10,
    "ms": 1e7,
    "s": 1e4,
    "min": 1e3,
    "h": 100.0,
    "GB": 1e7,
    "TB": 1e4,
    "%": 1e4,  # a share is at most 100 %, a coefficient of variation may be more
    "W": 1e4,
}
ANY_MAX = 1e12
# The smallest value above 0 a figure may have, by unit: far below any drive's (a latency of a
# picosecond; one IO, or one 512-byte IO, in about eleven days), so that only a typo or a
# figure in another unit is refused. A unit not listed: at least 10^-9 (a share, a duration or a
# size that small is no measurement's). 0 is judged by POSITIVE_UNITS alone.
PLAUSIBLE_MIN = {
    "IOPS": 1e-6,
    "KIOPS": 1e-9,
    "MB/s": 1e-9,
    "MiB/s": 1e-9,
    "GB/s": 1e-12,
    "GiB/s": 1e-12,
    "ns": 1e-3,
    "µs": 1e-6,
    "us": 1e-6,
    "ms": 1e-9,
    "s": 1e-12,
    "GB": 1e-12,
    "TB": 1e-15,
}
ANY_MIN = 1e-9


def implausible(value: float, unit: str, magnitude: bool) -> str | None:
    """Why `value` cannot be a figure in `unit`, as a sentence (None: it can be). `magnitude`: the
    figure is a magnitude whatever its unit (a key figure iolab defines)."""
    if not math.isfinite(value):
        return f"{value!r} is not a finite number."
    if value < 0 and (magnitude or unit in MAGNITUDE_UNITS):
        return f"{num(value)} {unit} is negative; the figure is a magnitude (0 or more)."
    if value == 0 and unit in POSITIVE_UNITS:
        return f"0 {unit} is no drive's: an IO rate or latency of a drive that completed an IO is above 0."
    most = PLAUSIBLE_MAX.get(unit, ANY_MAX)
    if abs(value) > most:
        return (
            f"{num(value)} {unit} is more than any drive's (at most {num(most)} {unit} is taken): "
            "a typo, or a figure in another unit?"
        )
    least = PLAUSIBLE_MIN.get(unit, ANY_MIN)
    if 0 < abs(value) < least:
        return (
            f"{value:.4g} {unit} is less than any drive's (at least {least:g} {unit} is taken, or 0 where the "
            "figure can be 0): a typo, or a figure in another unit?"
        )
    return None
