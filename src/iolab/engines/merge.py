"""Exact merging of results measured side by side: several paths to one drive, or several
hosts driving one system. Counts and rates add; latency percentiles come from the summed
json+ histogram bins (never from averaging each part's percentiles, which is wrong whenever
the parts differ); each part's own figures are kept in the merged result's counters so the
report can show the breakdown.

Also: how a workload's outstanding IO (threads × queue depth), rate cap and byte budget are
split over the parts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from iolab.core.errors import EngineError
from iolab.core.results import RoundResult, SecondSample, partial_row, row_spans
from iolab.core.workload import Workload
from iolab.engines.fio_job import _apportion
from iolab.engines.fio_parse import TAIL_MIN_S, _combine

# Counter keys of one part: f"{PART_PREFIX}{name}{PART_SEP}{figure}". One declaration,
# read back by `breakdown`.
PART_PREFIX = "part "
PART_SEP = " | "
PART_FIGURES = ("iops", "mbps", "ios", "lat_mean_us", "p99_us", "threads", "queue_depth")


@dataclass(frozen=True)
class Part:
    """One leg of a merged measurement: where it ran (host address or device path)."""

    name: str
    result: RoundResult
    threads: int
    queue_depth: int


@dataclass(frozen=True)
class PartFigures:
    name: str
    figures: dict[str, float]


def split_workload(w: Workload, shares: list[float]) -> list[Workload | None]:
    """The workload each part runs: the outstanding IO split as `shares` ask (threads when
    there are at least as many threads as parts, else queue depth), rate cap and byte budget
    in proportion. A part whose share rounds to no outstanding IO runs nothing (None): one
    IO cannot be split over two paths."""
    n = len(shares)
    if n == 1:
        return [w]
    if w.threads >= n:
        threads = _apportion(w.threads, shares) if w.threads > n else [1] * n
        qds = [w.queue_depth] * n
    else:
        total = w.threads * w.queue_depth
        per = _apportion(total, shares) if total >= n else [1] * total + [0] * (n - total)
        threads = [1 if p else 0 for p in per]
        qds = per
    out: list[Workload | None] = []
    for share, t, q in zip(shares, threads, qds):
        if t == 0:
            out.append(None)
            continue
        frac = share / sum(shares)
        out.append(
            replace(
                w,
                threads=t,
                queue_depth=q,
                rate_iops=None if w.rate_iops is None else max(1, round(w.rate_iops * frac)),
                bytes_budget=None if w.bytes_budget is None else max(1, round(w.bytes_budget * frac)),
            )
        )
    return out


def merge(
    parts: list[Part], engine: str, engine_version: str, raw_files: tuple[str, ...] = (), among: Sequence[str] = ()
) -> RoundResult:
    """One result for parts that ran at the same time; `among` names every leg the round was
    split over, so that a leg the split left without IO is said in the cell's deviations."""
    if not parts:
        raise EngineError("no part of a split round produced a result; nothing to merge.")
    results = [p.result for p in parts]
    idle = idle_legs(parts, among)
    return RoundResult(
        read=_combine([r.read for r in results]),
        write=_combine([r.write for r in results]),
        runtime_s=max(r.runtime_s for r in results),
        series=merge_series(results),
        counters=part_counters(parts),
        raw_files=raw_files or tuple(f for r in results for f in r.raw_files),
        engine=engine,
        engine_version=engine_version,
        deviations=tuple(dict.fromkeys([*(d for r in results for d in r.deviations), *idle])),
    )


def idle_legs(parts: Sequence[Part], among: Sequence[str]) -> tuple[str, ...]:
    """The deviation of a round that left some legs without IO: a QD1 cell over two hosts ran
    on one of them while the run's note said its IO was split over both."""
    ran = {p.name for p in parts}
    idle = [name for name in among if name not in ran]
    if not idle:
        return ()
    oio = sum(p.threads * p.queue_depth for p in parts)
    return (
        f"ran on {len(ran)} of its {len(among)} legs ({', '.join(p.name for p in parts)}): "
        f"{unsplit(oio)}; {', '.join(idle)} ran none of its IO",
    )


def unsplit(oio: int) -> str:
    """Why a round runs on fewer legs than it was split over, as its deviation and the plan say it."""
    return f"its {oio} outstanding IO{'' if oio == 1 else 's'} cannot be split over more"


def legs_run(w: Workload, shares: list[float]) -> int:
    """How many of the legs (their `shares`) split_workload gives some of `w`'s IO."""
    return sum(part is not None for part in split_workload(w, shares))


def part_counters(parts: list[Part]) -> dict[str, float]:
    """Each part's own figures as counters of the whole round (what `breakdown` reads back)."""
    counters: dict[str, float] = {}
    for p in parts:
        pct99 = p.result.percentile(99.0)
        figures = {
            "iops": p.result.iops,
            "mbps": p.result.mbps,
            "ios": float(p.result.ios),
            "lat_mean_us": p.result.lat_mean_us,
            "p99_us": pct99,
            "threads": float(p.threads),
            "queue_depth": float(p.queue_depth),
        }
        for k in PART_FIGURES:
            if figures[k] is not None:
                counters[f"{PART_PREFIX}{p.name}{PART_SEP}{k}"] = float(figures[k])  # type: ignore[arg-type]
    return counters


def merge_series(legs: Sequence[RoundResult]) -> tuple[SecondSample, ...]:
    """The per-second series of legs that ran side by side, from each leg's series and totals.

    A row is a second every leg logged (`_seconds`; stamped with the latest leg's), the legs'
    rates summed: a leg that started or logged late
    never shows up as a dip, and no such row holds fewer than all the legs. What these rows
    leave of each leg's totals (its IOs and bytes less its rates over the merged rows' lengths)
    is one last row, from the last such second to the latest leg's end, each leg's rest a rate
    over that row's length (`_rest`): a leg's own partial last row, the seconds it logged that
    another leg did not, or its whole round when it logged no second (fio logs no line for a
    job whose helper never found a whole interval gone while it ran, fio_parse.whole_round).
    That row is an average over its length: no leg is given per-second variation it did not
    log, and the rows hold every leg's IOs and bytes. Before, a leg that logged no row was left
    out and legs whose whole seconds ended apart lost their rests: a two-path SEQ 128KiB round
    stored 1,594 of its 3,381 IOs. No leg with a row (a round under a second that no leg logged
    a line of, fio_parse.whole_round): no series."""
    if not any(r.series for r in legs):
        return ()
    by_leg = [_seconds(_split_tail(r.series)[0]) for r in legs]
    seconds = sorted(set.intersection(*(set(b) for b in by_leg)))
    out = [_sum_points([b[sec] for b in by_leg], max(b[sec].t_s for b in by_leg)) for sec in seconds]
    rest = _rest(legs, [[b[sec] for sec in seconds] for b in by_leg], out)
    return (*out, rest) if rest else tuple(out)


def _rest(legs: Sequence[RoundResult], kept: list[list[SecondSample]], out: list[SecondSample]) -> SecondSample | None:
    """The legs' IOs and bytes the merged rows `out` do not hold (`kept`: each leg's rows in
    them), as one row to the latest leg's end (`_leg_rest`: each leg's part). Its mean latency
    is IO-weighted over the legs whose rest has one, as the merged seconds' is over their legs.
    None, as fio_parse.tail_row: less than TAIL_MIN_S to go (a leg's late log stamp put the
    merged last second after every leg's end: the rows under-count that rest, as fio's own do)
    or under half an IO left."""
    start = out[-1].t_s if out else 0.0
    end = max(max(r.runtime_s for r in legs), max((r.series[-1].t_s for r in legs if r.series), default=0.0))
    span = end - start
    if span < TAIL_MIN_S:
        return None
    rests = [_leg_rest(r, rows) for r, rows in zip(legs, kept)]
    reads, writes, size = (sum(x[i] for x, _ in rests) for i in range(3))
    if reads + writes < 0.5:
        return None
    lat = [(x[0] + x[1], m) for x, m in rests if m is not None and x[0] + x[1] > 0]
    ios = sum(n for n, _ in lat)
    mean = sum(n * m for n, m in lat) / ios if ios > 0 else None
    return SecondSample(end, reads / span, writes / span, size / span / 1e6, mean)


def _leg_rest(r: RoundResult, kept: list[SecondSample]) -> tuple[tuple[float, float, float], float | None]:
    """What a leg did besides its rows `kept` in the merged ones: (read IOs, write IOs, bytes),
    its totals less those rows' rates over their own lengths (never below 0), and its mean
    latency: its other rows', IO-weighted (None when one has none), its round's when it
    logged no row."""
    rows = list(zip(r.series, row_spans([p.t_s for p in r.series])))
    merged = {id(p) for p in kept}
    held = [(p, d) for p, d in rows if id(p) in merged]
    rest = (
        max(0.0, r.read.ios - sum(p.read_iops * d for p, d in held)),
        max(0.0, r.write.ios - sum(p.write_iops * d for p, d in held)),
        max(0.0, r.read.io_bytes + r.write.io_bytes - sum(p.mbps * 1e6 * d for p, d in held)),
    )
    if not rows:
        return rest, r.lat_mean_us
    after = [((p.read_iops + p.write_iops) * d, p.lat_mean_us) for p, d in rows if id(p) not in merged]
    known = [(n, m) for n, m in after if m is not None]
    ios = sum(n for n, _ in known)
    if len(known) < len(after) or ios <= 0:
        return rest, None
    return rest, sum(n * m for n, m in known) / ios


def _seconds(whole: Sequence[SecondSample]) -> dict[int, SecondSample]:
    """A leg's whole rows by the second each closes: its stamp's whole second, but at least the
    one after the row before's (fio_parse._read_log's rule for fio's log lines: fio stamps an
    interval as it closes it, a millisecond early, or later when its helper thread is late). A
    row stamped 2.554 s after one at 1.015 s is second 2: keyed by its rounded stamp it was 3,
    the other leg's second 2 had no partner, and a sound two-path round's rows held 2,727 of
    its 2,900 IOs."""
    out: dict[int, SecondSample] = {}
    last = 0
    for p in whole:
        last = max(math.floor(p.t_s), last + 1)
        out[last] = p
    return out


def _split_tail(s: tuple[SecondSample, ...]) -> tuple[tuple[SecondSample, ...], SecondSample | None]:
    """A leg's whole seconds and its partial last row (None when its last row is whole)."""
    if s and partial_row(s[-1].t_s - (s[-2].t_s if len(s) > 1 else 0.0)):
        return s[:-1], s[-1]
    return s, None


def _sum_points(pts: list[SecondSample], t_s: float) -> SecondSample:
    lat = [(p.read_iops + p.write_iops, p.lat_mean_us) for p in pts if p.lat_mean_us is not None]
    w = sum(i for i, _ in lat)
    return SecondSample(
        t_s=t_s,
        read_iops=sum(p.read_iops for p in pts),
        write_iops=sum(p.write_iops for p in pts),
        mbps=sum(p.mbps for p in pts),
        lat_mean_us=sum(i * m for i, m in lat) / w if lat and w > 0 else None,
    )


def breakdown(counters: dict[str, float]) -> list[PartFigures]:
    """The parts of a merged result, in the order they were stored."""
    found: dict[str, dict[str, float]] = {}
    for key, value in counters.items():
        if key.startswith(PART_PREFIX) and PART_SEP in key:
            name, figure = key[len(PART_PREFIX) :].rsplit(PART_SEP, 1)
            found.setdefault(name, {})[figure] = value
    return [PartFigures(n, f) for n, f in found.items()]
