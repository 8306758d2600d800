"""A fleet's key figures over its drives: each figure's distribution (median, quartiles, spread)
and the drives that stray from the rest by a robust rule.

The rule: a drive is an outlier on a figure when |x - median| > k × 1.4826 × MAD, MAD the median
absolute deviation over the drives that measured the figure (1.4826 × MAD estimates the standard
deviation of normal data, so k = 3.5 is Iglewicz and Hoaglin's modified z-score cut-off). The
median and the MAD are not pulled by the outliers themselves, which the mean and standard
deviation are: one drive 30 % slow among 64 moves the mean by 0.5 % but inflates the standard
deviation until a 3-sigma rule may miss it. Fewer than MIN_DRIVES drives: nothing is judged. Nor
is an extreme (a maximum latency: one observation per drive, heavy-tailed), as `iolab check`
reports extremes without judging them; its distribution is shown.

A drive must also differ from the median by more than `min_pct` % (default DEFAULT_MIN_PCT, the
tolerance `iolab check` holds a candidate to by default: a smaller difference is one check would
not call a regression either). Drives whose figure is set by a shared limit (a host link's
bandwidth) agree to a few parts per million, and the MAD rule alone would flag a difference of
0.0006 % there. And identical drives in a quick run differ by more than their MAD says: 64
simulated drives of one preset, different only in their workload's seed, had a 64 KiB mixed IOPS
spread of ±1.05 % (1.4826 × MAD) and one drive 4.1 % above the median, consistently over its
rounds (its garbage collection fell differently), which a 1 % floor called a stray.
A MAD of 0 (half the drives or more measured the same) flags every drive that differs by more
than the arithmetic's resolution (RESOLUTION × the median: sums of the same counts in another
order differ in the last digits, which is no difference between drives).

Pure: inputs are the run records (`pages/outcome.run_record` dicts) of the fleet's drives."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from iolab.core.steady import STEADY_NOT_REACHED

DEFAULT_K = 3.5
DEFAULT_MIN_PCT = 5.0
MAD_SIGMA = 1.4826  # 1 / Phi^-1(3/4): MAD × this estimates sigma for normal data
MIN_DRIVES = 5
RESOLUTION = 1e-9


@dataclass(frozen=True)
class Conditions:
    """What a drive's figures are true of, as its own run recorded it: whether the run kept to the
    test's specification (a --quick run is scaled down), whether its phases reached steady state
    (pages/outcome.steady_state's words) and which audit invariants it failed. The fleet's pages
    carry these beside the figures: a fleet of quick runs is as scaled down as each of its runs."""

    compliant: bool | None = None  # None: no run record to read
    noncompliance: tuple[str, ...] = ()
    steady_state: str | None = None  # reached, not-reached, not-evaluated, not-applicable
    audit_failed: tuple[str, ...] = ()
    # not-reached only over windows that pass the rule's numbers: why they were not accepted
    # ("" when the run did not store why); None when a window failed them (or steady state is not
    # not-reached): `show` words the one "NOT accepted", never "NOT reached"
    not_accepted: str | None = None


@dataclass(frozen=True)
class DriveFigures:
    """One drive as the fleet sees it: its name, labels and key figures (None: no run to read)."""

    name: str
    labels: dict[str, str]
    state: str
    figures: dict[str, float]  # figure name -> value, only the figures the run measured
    meta: dict[str, dict] = field(default_factory=dict)  # figure name -> unit, direction, kind
    conditions: Conditions = Conditions()
    facts: dict[str, object] = field(default_factory=dict)  # DRIVE_FACTS, as the drive's run read them


@dataclass(frozen=True)
class Outlier:
    drive: str
    value: float
    z: float  # (x - median) / (1.4826 × MAD); inf when the MAD is 0
    worse: bool  # on the figure's worse side (below for higher-is-better)


@dataclass(frozen=True)
class Distribution:
    figure: str
    unit: str
    higher_is_better: bool
    values: dict[str, float]  # drive -> value
    median: float
    mad: float
    q1: float
    q3: float
    low: float  # the rule's fences: median -+ max(k × 1.4826 × MAD, min_pct % of the median)
    high: float
    outliers: tuple[Outlier, ...]
    judged: bool  # False: fewer than MIN_DRIVES drives measured it, or an extreme
    kind: str = "value"

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def spread_pct(self) -> float | None:
        """The robust spread (1.4826 × MAD) as a share of the median."""
        return None if not self.median else 100 * MAD_SIGMA * self.mad / abs(self.median)

    @property
    def minimum(self) -> float:
        return min(self.values.values())

    @property
    def maximum(self) -> float:
        return max(self.values.values())


def drive_figures(name: str, labels: dict[str, str], state: str, record: dict | None) -> DriveFigures:
    """The figures a run record (`--json`'s run) holds; a figure the run did not measure is left out."""
    figs: dict[str, float] = {}
    meta: dict[str, dict] = {}
    for f in (record or {}).get("figures", []):
        v = f.get("value")
        if isinstance(v, (int, float)) and v == v and abs(v) != float("inf"):
            figs[f["name"]] = float(v)
            meta[f["name"]] = {"unit": f["unit"], "direction": f["direction"], "kind": f.get("kind", "value")}
    # DWPD only where the run measured it (a test that measures endurance: its record says so)
    dwpd = ((record or {}).get("endurance") or {}).get("dwpd")
    if isinstance(dwpd, (int, float)) and dwpd == dwpd and abs(dwpd) != float("inf"):
        figs["DWPD"] = float(dwpd)
        meta["DWPD"] = {"unit": "", "direction": "higher-is-better", "kind": "value"}
    return DriveFigures(name, dict(labels), state, figs, meta, conditions_of(record), facts_of(record))


# What tells one drive from another where it sits in a rack (the name is the fleet file's): read by
# the drive's own run (its record's target), so a row whose drive was swapped says so
DRIVE_FACTS = ("vendor", "model", "serial", "firmware", "capacity_bytes")


def facts_of(record: dict | None) -> dict[str, object]:
    """The drive's model, serial, firmware and capacity as its run recorded them (None: not read)."""
    target = (record or {}).get("target") or {}
    return {k: target.get(k) for k in DRIVE_FACTS}


def conditions_of(record: dict | None) -> Conditions:
    """The conditions a run record (pages/outcome.run_record) states for its figures."""
    if not record:
        return Conditions()
    audit = record.get("audit") or {}
    compliant = record.get("compliant")
    return Conditions(
        compliant=bool(compliant) if compliant is not None else None,
        noncompliance=tuple(str(n) for n in record.get("noncompliance") or ()),
        steady_state=record.get("steady_state"),
        audit_failed=tuple(str(n) for n in audit.get("failed") or ()) if audit.get("passed") is False else (),
        not_accepted=not_accepted(record),
    )


def not_accepted(record: dict) -> str | None:
    """Why a run record's steady state is not reached when every phase that decides it has a
    window passing the rule's numbers that was not accepted (pages/outcome's `not_accepted`):
    the phases' reasons; None when one failed the numbers, or the state is not not-reached."""
    if record.get("steady_state") != STEADY_NOT_REACHED:
        return None
    unsteady = [p for p in record.get("phases") or () if p.get("steady") is False and not p.get("for_information")]
    whys = [p.get("not_accepted") for p in unsteady]
    if not unsteady or any(not isinstance(w, str) for w in whys):
        return None
    return "; ".join(dict.fromkeys(str(w) for w in whys if w))


def _quartiles(xs: Sequence[float]) -> tuple[float, float]:
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def distribution(
    figure: str, drives: Sequence[DriveFigures], k: float = DEFAULT_K, min_pct: float = DEFAULT_MIN_PCT
) -> Distribution | None:
    """The figure's distribution over the drives that measured it (None: none did)."""
    values = {d.name: d.figures[figure] for d in drives if figure in d.figures}
    if not values:
        return None
    meta = next(d.meta[figure] for d in drives if figure in d.figures)
    higher = meta["direction"] == "higher-is-better"
    xs = sorted(values.values())
    med = statistics.median(xs)
    mad = statistics.median(abs(x - med) for x in xs)
    sigma = MAD_SIGMA * mad
    floor = max(RESOLUTION, min_pct / 100) * abs(med)
    q1, q3 = _quartiles(xs)
    judged = len(xs) >= MIN_DRIVES and meta.get("kind") != "extreme"
    out = []
    if judged:
        for name, x in values.items():
            dev = x - med
            if abs(dev) <= floor:
                continue
            z = dev / sigma if sigma > RESOLUTION * abs(med) else float("inf") * (1 if dev > 0 else -1)
            if abs(z) > k:
                out.append(Outlier(name, x, z, worse=(dev < 0) == higher))
    out.sort(key=lambda o: -abs(o.z))
    half = max(k * sigma, floor)  # the rule's fences: beyond both k × sigma and min_pct
    return Distribution(
        figure, meta["unit"], higher, values, med, mad, q1, q3, med - half, med + half, tuple(out), judged, meta["kind"]
    )


def figure_names(drives: Sequence[DriveFigures]) -> list[str]:
    """Every figure any drive measured, in the order the first drives list them."""
    names: list[str] = []
    for d in drives:
        names += [n for n in d.figures if n not in names]
    return names


def distributions(
    drives: Sequence[DriveFigures], k: float = DEFAULT_K, min_pct: float = DEFAULT_MIN_PCT
) -> list[Distribution]:
    return [dist for n in figure_names(drives) if (dist := distribution(n, drives, k, min_pct)) is not None]


def outliers_by_drive(dists: Sequence[Distribution]) -> dict[str, list[tuple[str, Outlier]]]:
    """drive -> the (figure, outlier) pairs it was flagged on."""
    out: dict[str, list[tuple[str, Outlier]]] = {}
    for dist in dists:
        for o in dist.outliers:
            out.setdefault(o.drive, []).append((dist.figure, o))
    return out
