"""A write cache's cliff in a sequential fill from fresh: MB/s against GB written, the cache size,
the rate in the cache and after it. Pure functions over plain lists, checked on hand-made series
(tests/unit/test_slc.py) and used by the SLC cache test's report and terminal view.

The method, on the engine's series (one interval a second; its last one may be shorter):

1. The one change point: the split of the series into a first and a second part that leaves the
   least squared error around each part's mean (each interval weighted by its length), found
   over every split with running sums.
2. The in-cache rate is the median of the first part without its last interval, the post-cache
   rate the median of the second part without its first one: the cache runs out inside one of
   those two, which mixes both rates.
3. A cliff needs MIN_CACHE_INTERVALS in the first part, a post-cache rate below `cliff` × the
   in-cache rate, and the rate to stay there: at least STAYS_BELOW of the second part's time
   below that line. Otherwise "no cache found": a drive without a cache, or one whose cache was
   not crossed, writes at one rate throughout.
4. The cache size: the bytes written up to the end of the second part's first interval (B, by
   time T) were written at the in-cache rate for x seconds and at the post-cache rate for the
   rest, so x = (B − post × T) ÷ (in − post) and the cache held in × x. The interval in which the
   cache ran out is read by its rate, so the size is not rounded to whole intervals.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from iolab.core.results import row_spans as widths  # each interval's length from the series' end times
from iolab.core.units import counted

MIN_CACHE_INTERVALS = 2  # whole intervals at the in-cache rate before the cliff
STAYS_BELOW = 0.8  # share of the time after the cliff spent below `cliff` × the in-cache rate


@dataclass(frozen=True)
class Cache:
    """What a fill's series shows; the rates and sizes are None where no cache was found."""

    written_gb: float  # the whole fill
    seconds: float
    size_gb: float | None = None  # written at the in-cache rate
    in_cache_mbps: float | None = None
    # after the cliff; without one, the fill's median rate only where the fill must have crossed
    # any cache the drive holds (enough intervals, the whole drive written): else None
    post_cache_mbps: float | None = None
    cliff_s: float | None = None  # when the cache ran out, from the start of the fill
    reason: str = ""  # why no cache was found
    median_mbps: float | None = None  # the fill's median rate, whatever it was of
    no_post: str = ""  # why there is no rate after a cache (post_cache_mbps None)

    @property
    def found(self) -> bool:
        return self.size_gb is not None

    def text(self) -> str:
        fast, slow = self.in_cache_mbps, self.post_cache_mbps
        if self.size_gb is None or fast is None or slow is None:
            rate = f" ({self.median_mbps:,.0f} MB/s median)" if self.median_mbps is not None else ""
            return f"no cache found: {self.reason}{rate}" + (f"; {self.no_post}" if self.no_post else "")
        return (
            f"SLC cache {self.size_gb:.2f} GB: {fast:,.0f} MB/s until {self.cliff_s:.1f} s, then "
            f"{slow:,.0f} MB/s ({slow / fast:.0%}) for the rest of {self.written_gb:.2f} GB"
        )


def written_gb(t_end: Sequence[float], mbps: Sequence[float]) -> list[float]:
    """GB written by the end of each interval: the x axis of MB/s against GB written."""
    out, total = [], 0.0
    for w, r in zip(widths(t_end), mbps):
        total += r * w / 1000
        out.append(total)
    return out


def change_point(w: Sequence[float], r: Sequence[float]) -> int | None:
    """The first index of the second part of the best two-part split (None below two intervals)."""
    n = len(r)
    if n < 2:
        return None
    sw = sx = sxx = 0.0
    pre = [(0.0, 0.0, 0.0)]
    for wi, ri in zip(w, r):
        sw, sx, sxx = sw + wi, sx + wi * ri, sxx + wi * ri * ri
        pre.append((sw, sx, sxx))

    def sse(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
        cw, cx, cxx = b[0] - a[0], b[1] - a[1], b[2] - a[2]
        return cxx - cx * cx / cw if cw > 0 else 0.0

    return min(range(1, n), key=lambda k: sse(pre[0], pre[k]) + sse(pre[k], pre[n]))


def find_cache(
    t_end: Sequence[float], mbps: Sequence[float], cliff: float, fill_of_drive: float | None = None
) -> Cache:
    """The cache a fill crossed, if any (t_end: each interval's end in seconds from the start;
    `fill_of_drive`: the fill's bytes ÷ the whole drive's, None where the run did not record it)."""
    w = widths(t_end)
    total = sum(a * b for a, b in zip(w, mbps)) / 1000
    seconds = t_end[-1] if t_end else 0.0
    median = statistics.median(mbps) if mbps else None
    few = len(mbps) < MIN_CACHE_INTERVALS + 1

    def none(reason: str) -> Cache:
        # without a cliff the median is the rate after any cache only where the fill wrote the
        # whole drive (no cache outlasts that) in enough intervals to show a drop
        if few:
            why = "too few intervals to tell a rate after a cache from the rate in it"
        elif fill_of_drive is None:
            why = "the run did not record how much of the drive its fill wrote"
        elif fill_of_drive < 1:
            why = f"the fill wrote {fill_of_drive:.1%} of the drive, which may all lie within a cache"
        else:
            why = ""
        post = None if why else median
        no_post = f"no rate after a cache is measured: {why}" if why else ""
        return Cache(total, seconds, post_cache_mbps=post, reason=reason, median_mbps=median, no_post=no_post)

    if few:
        return none(f"{counted(len(mbps), 'interval')} measured, too few to see a change of rate")
    k = change_point(w, mbps)
    if k is None or k < MIN_CACHE_INTERVALS:
        return none("the rate did not drop after the first intervals")
    first, second = list(mbps[:k]), list(mbps[k:])
    rate_in = statistics.median(first[:-1])
    post = statistics.median(second[1:] or second)
    line = cliff * rate_in
    if post >= line:
        return none(f"the rate never fell below {cliff:.0%} of its first {counted(k, 'interval')}")
    below = sum(wi for wi, ri in zip(w[k:], second) if ri < line)
    if below < STAYS_BELOW * sum(w[k:]):
        return none(f"the rate fell below {cliff:.0%} of the start only for a while")
    t_k = t_end[k]
    done = sum(a * b for a, b in zip(w[: k + 1], mbps[: k + 1]))
    x = min(max((done - post * t_k) / (rate_in - post), 0.0), t_k)
    return Cache(total, seconds, rate_in * x / 1000, rate_in, post, x, median_mbps=median)
