"""The rule a split round's per-second series was merged by before merge.merge_series held every
leg's rest (2026-12-02): kept only so that the self-audit's raw-figures invariant holds a run
stored then to the series its engine made from the same raw logs (engines/reread.reseries), as
it holds a cell counted by fio's issued IOs to that rule. Nothing stores a series by it now."""

from __future__ import annotations

from iolab.core.results import SecondSample
from iolab.engines.fio_parse import TAIL_MIN_S
from iolab.engines.merge import _split_tail, _sum_points


def merge_series_before(series: list[tuple[SecondSample, ...]]) -> tuple[SecondSample, ...]:
    """The seconds every leg with rows logged, summed; the legs' partial last rows one row, from
    the merged last second to the latest leg's end, only when every leg's whole seconds end at
    that second. A leg without rows was left out, and so were rests of legs whose whole seconds
    ended apart (what merge_series now holds)."""
    live = [s for s in series if s]
    if not live:
        return ()
    split = [_split_tail(s) for s in live]
    by_part = [{round(p.t_s): p for p in whole} for whole, _ in split]
    seconds = sorted(set.intersection(*(set(b) for b in by_part)))
    out = [_sum_points([b[sec] for b in by_part], max(b[sec].t_s for b in by_part)) for sec in seconds]
    tails = [(whole[-1].t_s if whole else 0.0, tail) for whole, tail in split if tail is not None]
    last = {round(whole[-1].t_s) if whole else 0 for whole, _ in split}
    if tails and last == {seconds[-1] if seconds else 0}:
        start, end = (out[-1].t_s if out else 0.0), max(t.t_s for _, t in tails)
        if end - start >= TAIL_MIN_S:  # else a late log stamp: no row of negative rates
            scaled = [_rescaled(t, (t.t_s - t0) / (end - start), end) for t0, t in tails]
            out.append(_sum_points(scaled, end))
    return tuple(out)


def _rescaled(p: SecondSample, share: float, t_s: float) -> SecondSample:
    return SecondSample(t_s, p.read_iops * share, p.write_iops * share, p.mbps * share, p.lat_mean_us)
