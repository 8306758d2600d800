"""One key figure's verdict in `iolab check` (automation/check.py): the candidate's change against
the baseline's, in the figure's bad direction, held to its tolerance (automation/tolerances.py)
and to the run-to-run noise (automation/noise.py).

Kinds of figure (KeyMetric.kind, in each figure record):
  value       an average, a rate, a search result: judged against the noise and the tolerance
  percentile  judged so on each run's percentile (never a mean of round percentiles); the
              run gives it only where its IOs support it (else not-measured)
  extreme     one observation (a maximum latency, a minimum interval): no standard error, a
              heavy-tailed spread: `info` (reported, not judged) unless the tolerances file gives
              it its own tolerance, then the candidate's worst run against the baseline's worst

Verdict per figure, with `worse` the change in the figure's bad direction and `noise` the
interval's half-width (both in % of the baseline):
  regression        worse > tolerance and worse > noise (the interval lies on the worse side)
  within-noise      |change| > tolerance, but the interval includes no change
  improvement       better by more than the tolerance and than the noise
  within-tolerance  |change| <= tolerance
  info              an extreme without a tolerance of its own: reported, never failing
  missing           the baseline has the figure, the candidate does not (counts as failing)
  not-measured      the baseline has no value for it (nothing to hold the candidate to)
  not-compared      the baseline has no such figure at all (a figure named after what the
                    candidate ran: automation/check.py); listed, never failing
`detectable_pct` is the smallest worsening the check would call a regression: the larger of the
tolerance and the noise.
"""

from __future__ import annotations

import math

from iolab.automation.noise import Noise, Side, noise
from iolab.automation.tolerances import Tolerances
from iolab.automation.tstat import on_log_scale
from iolab.core.units import percent

FAILING = ("regression", "missing")  # the verdicts that fail the check
UNJUDGED = ("not-measured", "not-compared")  # a figure listed without a verdict on it (a skipped JUnit case)


def _pct(x: float | None, base: float) -> float | None:
    return None if x is None or base == 0 else 100 * x / abs(base)


EXTREME_INFO = (
    "an extreme (one observation per run): no standard error and a heavy-tailed run-to-run spread, so it is "
    "reported, not judged; give it its own tolerance in the tolerances file to judge the candidate's worst run "
    "against the baseline's worst"
)
EXTREME_JUDGED = "an extreme: the candidate's worst run against the baseline's worst, with its own tolerance; no noise"


def verdict(name: str, meta: dict, base: Side, cand: Side, tolerances: Tolerances, confidence: float) -> dict:
    higher = meta["direction"] == "higher-is-better"
    kind = meta["kind"]
    tolerance = tolerances.of(name)
    out = {
        "name": name,
        "unit": meta["unit"],
        "direction": meta["direction"],
        "kind": kind,
        "baseline": base.record(),
        "candidate": cand.record(),
        "change_pct": None,
        "worse_pct": None,
        "noise_pct": None,
        "detectable_pct": None,
        "tolerance_pct": 100 * tolerance,
        "method": "",
    }
    log = kind != "extreme" and on_log_scale(meta["unit"], base.samples + cand.samples)
    if log:
        base, cand = base.geometric(), cand.geometric()  # the centre of the log-scale interval
        out |= {"baseline": base.record(), "candidate": cand.record()}
    if base.value is None:
        return {**out, "verdict": "not-measured", "method": "the baseline has no value for this figure"}
    if cand.value is None:
        return {**out, "verdict": "missing", "method": "the candidate has no value for this figure"}
    change = cand.value - base.value
    worse = -change if higher else change
    pcts = {"change_pct": _pct(change, base.value), "worse_pct": _pct(worse, base.value)}
    if kind == "extreme" and name not in tolerances.per_figure:
        return {**out, **pcts, "verdict": "info", "method": EXTREME_INFO}
    if kind == "extreme":
        nz = Noise(0.0, EXTREME_JUDGED)
        method = nz.method
    else:
        nz = noise(base, cand, tolerances.spread.get(name), confidence, log)
        method = ("percentile, each run's own: " if kind == "percentile" else "") + nz.method
    half, better_half = nz.edges(base.value, higher)  # the interval's edge on the worse side, the better side
    tol_abs = tolerance * abs(base.value)
    if worse > tol_abs and worse > half:
        v = "regression"
    elif -worse > tol_abs and -worse > better_half:
        v = "improvement"
    elif abs(change) > tol_abs:
        v = "within-noise"
    else:
        v = "within-tolerance"
    noise_pct = _pct(half, base.value) if half > 0 else None
    return {
        **out,
        **pcts,
        "verdict": v,
        "noise_pct": noise_pct,
        "noise_scale": "log" if nz.log else "linear",
        # the tolerance as given, not through the baseline and back (5 % stays 5.0, not 4.999…)
        "detectable_pct": None if base.value == 0 else max(100 * tolerance, noise_pct or 0.0),
        "method": method,
    }


def noise_text(f: dict) -> str:
    """The noise interval's edges around the baseline: "±4.1 %", or for an interval of the
    logarithms (a ratio, asymmetric) both edges, "-52.7 % / +111.4 %". The worse-side edge alone
    under "noise ±" read as symmetric: an IOPS interval of -96 % / +2,400 % printed "±96.0 %"."""
    w = f["noise_pct"]
    if w is None or f.get("noise_scale") != "log":
        return percent(w) if w is None else f"±{percent(w)}"
    # the edges are base ×/÷ exp(h): the worse side's edge gives h, and h the other edge
    higher = f["direction"] == "higher-is-better"
    h = (-math.log1p(-w / 100) if w < 100 else math.inf) if higher else math.log1p(w / 100)
    return f"-{percent(-100 * math.expm1(-h))} / +{percent(100 * math.expm1(h))}"
