"""Comparing drives: which runs may be compared, the key figures of each test, the summary
table (one row per drive) and the ordinal ranking of the drives per column.

Each key figure knows its direction (higher IOPS and MB/s are better, lower response times
are better). Ranks are standard competition ranks: tied drives share a rank and the next rank
skips (1, 2, 2, 4). Drives tie when their figures are equal *as printed* (at the table's
precision), so a reader never sees two equal numbers ranked differently. A drive without a
figure (not measured, e.g. an interrupted run) is not ranked in that column.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .errors import IolabError
from .summary import CellAverage, PhaseSummary
from .units import KiB

# Profile settings that change what a test measures; runs that differ in any of them measure
# different things and are not compared unless forced.
COMPARED_PROFILE_KEYS = (
    "name", "spec", "active_range", "threads", "queue_depth", "write_cache", "cell_seconds",
    "precondition_factor", "capacity_limit", "quick", "max_rounds", "strict_steady",
    "wsat_capacity_multiple", "wsat_max_seconds",
)


@dataclass(frozen=True)
class KeyMetric:
    """One column of the summary table."""

    name: str
    unit: str
    higher_is_better: bool
    digits: int  # printed decimals; ranks compare the printed value
    get: Callable[[list[PhaseSummary]], float | None]

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"

    def fmt(self, v: float | None) -> str:
        return "—" if v is None else f"{v:,.{self.digits}f}"


def competition_ranks(values: Sequence[float | None], higher_is_better: bool, digits: int | None = None) -> list[int | None]:
    """Rank = 1 + the number of drives strictly better; ties share a rank; None is unranked.
    With `digits`, values are compared as rounded to that many decimals (as printed)."""
    keyed = [None if v is None else (round(v, digits) if digits is not None else v) for v in values]
    ranks: list[int | None] = []
    for v in keyed:
        if v is None:
            ranks.append(None)
            continue
        better = sum(1 for w in keyed if w is not None and (w > v if higher_is_better else w < v))
        ranks.append(1 + better)
    return ranks


@dataclass(frozen=True)
class SummaryTable:
    drives: tuple[str, ...]
    metrics: tuple[KeyMetric, ...]
    values: tuple[tuple[float | None, ...], ...]  # [drive][metric]
    ranks: tuple[tuple[int | None, ...], ...]  # [drive][metric]


def summary_table(drives: Sequence[str], phases: Sequence[list[PhaseSummary]], metrics: Sequence[KeyMetric]) -> SummaryTable:
    values = [[m.get(ph) for m in metrics] for ph in phases]
    per_metric = [competition_ranks([row[j] for row in values], m.higher_is_better, m.digits)
                  for j, m in enumerate(metrics)]
    ranks = [[per_metric[j][i] for j in range(len(metrics))] for i in range(len(drives))]
    return SummaryTable(tuple(drives), tuple(metrics), tuple(tuple(r) for r in values), tuple(tuple(r) for r in ranks))


# -- the key figures of each test ------------------------------------------------------------


def _cell(phases: list[PhaseSummary], mix: str, bs: int, phase: str | None = None) -> CellAverage | None:
    for ph in phases:
        if phase is not None and ph.phase.name != phase:
            continue
        c = ph.cell(mix, bs)
        if c is not None:
            return c
    return None


def _from_cell(mix: str, bs: int, attr: str, phase: str | None = None) -> Callable[[list[PhaseSummary]], float | None]:
    def get(phases: list[PhaseSummary]) -> float | None:
        c = _cell(phases, mix, bs, phase)
        return None if c is None else getattr(c, attr)
    return get


def _wsat_first(phases: list[PhaseSummary]) -> float | None:
    return phases[0].rows[0].iops if phases and phases[0].rows else None


def _wsat_min(phases: list[PhaseSummary]) -> float | None:
    return min(r.iops for r in phases[0].rows) if phases and phases[0].rows else None


def key_metrics(test: str) -> tuple[KeyMetric, ...]:
    if test == "iops":
        return tuple(KeyMetric(f"RND {label} R/W {mix} IOPS", "IOPS", True, 0, _from_cell(mix, bs, "iops"))
                     for mix, bs, label in (("100/0", 4 * KiB, "4KiB"), ("65/35", 4 * KiB, "4KiB"), ("0/100", 4 * KiB, "4KiB"),
                                            ("65/35", 64 * KiB, "64KiB"), ("100/0", 1024 * KiB, "1024KiB")))
    if test == "throughput":
        return tuple(KeyMetric(f"SEQ {label} {'read' if mix == '100/0' else 'write'} MB/s", "MB/s", True, 1,
                               _from_cell(mix, bs, "read_mbps" if mix == "100/0" else "write_mbps", f"SEQ {label}"))
                     for bs, label in ((1024 * KiB, "1024KiB"), (128 * KiB, "128KiB")) for mix in ("100/0", "0/100"))
    if test == "latency":
        return (
            KeyMetric("ART RND 4KiB R/W 100/0", "µs", False, 1, _from_cell("100/0", 4 * KiB, "lat_mean_us")),
            KeyMetric("ART RND 4KiB R/W 65/35", "µs", False, 1, _from_cell("65/35", 4 * KiB, "lat_mean_us")),
            KeyMetric("ART RND 4KiB R/W 0/100", "µs", False, 1, _from_cell("0/100", 4 * KiB, "lat_mean_us")),
            KeyMetric("MRT RND 4KiB R/W 0/100", "µs", False, 1, _from_cell("0/100", 4 * KiB, "lat_max_us")),
            KeyMetric("99.999 % RND 4KiB R/W 100/0", "µs", False, 1, _from_cell("100/0", 4 * KiB, "p99_999_us")),
            KeyMetric("99.999 % RND 4KiB R/W 0/100", "µs", False, 1, _from_cell("0/100", 4 * KiB, "p99_999_us")),
        )
    if test == "wsat":
        return (
            KeyMetric("IOPS, first interval (FOB)", "IOPS", True, 0, _wsat_first),
            KeyMetric("IOPS, minimum interval", "IOPS", True, 0, _wsat_min),
            # the window: the last five intervals, or all of them in a run with fewer
            KeyMetric("IOPS, window mean (last ≤5 intervals)", "IOPS", True, 0, _from_cell("0/100", 4 * KiB, "iops")),
            KeyMetric("ART, window (last ≤5 intervals)", "µs", False, 1, _from_cell("0/100", 4 * KiB, "lat_mean_us")),
            KeyMetric("99.999 %, window (last ≤5 intervals)", "µs", False, 1, _from_cell("0/100", 4 * KiB, "p99_999_us")),
        )
    raise IolabError(f"test {test!r}: no comparison figures are defined for it.")


# -- which runs may be compared --------------------------------------------------------------


@dataclass(frozen=True)
class RunFacts:
    """What decides whether two runs are comparable (read from each manifest)."""

    label: str
    test: str
    profile: dict
    cells: tuple[tuple[str, tuple[str, ...]], ...]  # per phase: name, cell keys


def differences(runs: Sequence[RunFacts]) -> list[str]:
    """Why these runs do not measure the same thing; empty when they are comparable."""
    if not runs:
        return []
    first, out = runs[0], []
    for r in runs[1:]:
        if r.test != first.test:
            out.append(f"{r.label} ran test {r.test!r}, {first.label} ran {first.test!r}")
            continue
        for k in COMPARED_PROFILE_KEYS:
            a, b = first.profile.get(k), r.profile.get(k)
            if a != b:
                out.append(f"{k}: {first.label} {a!r} vs {r.label} {b!r}")
        if r.cells != first.cells:
            mine = {f"{p}: {c}" for p, cs in first.cells for c in cs}
            theirs = {f"{p}: {c}" for p, cs in r.cells for c in cs}
            only_a, only_b = sorted(mine - theirs), sorted(theirs - mine)
            what = []
            if only_a:
                what.append(f"only {first.label} has {', '.join(only_a[:4])}{' …' if len(only_a) > 4 else ''}")
            if only_b:
                what.append(f"only {r.label} has {', '.join(only_b[:4])}{' …' if len(only_b) > 4 else ''}")
            out.append("test cells differ: " + ("; ".join(what) or "different order or phases"))
    return out


def check_comparable(runs: Sequence[RunFacts], force: bool) -> list[str]:
    """Raise unless the runs are comparable or `force`; returns the differences (for a banner)."""
    if len(runs) < 2:
        raise IolabError("compare needs at least two runs (give two or more run ids or directories).")
    diffs = differences(runs)
    if diffs and not force:
        listed = "; ".join(diffs[:8]) + (f"; and {len(diffs) - 8} more" if len(diffs) > 8 else "")
        raise IolabError(
            f"these runs do not measure the same thing, so their figures are not comparable: {listed}. "
            "Compare runs of the same test with the same profile and parameters, or pass --force to compare "
            "anyway (every page then lists these differences)."
        )
    return diffs


def comparison_stem(test: str, run_ids: Sequence[str]) -> str:
    """A stable file name: the same runs compared again overwrite the same report."""
    digest = hashlib.sha1("\n".join(run_ids).encode()).hexdigest()[:8]
    return f"compare-{test}-{len(run_ids)}drives-{digest}"


def compare(run_refs: Sequence[str | Path], out_dir: Path, force: bool = False) -> list[Path]:
    """Write one comparison report (HTML and PDF) for these runs; returns the paths written."""
    from .report.comparison import write_comparison

    return write_comparison(list(run_refs), Path(out_dir), force)
