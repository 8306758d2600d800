"""The run-to-run noise `iolab check` judges a figure's change against (automation/check.py):
each side's runs of the figure (`Side`) and the interval of the difference between them (`Noise`).

Noise is run-to-run variation, never the spread of one run's window rounds: rounds of one run
follow each other on one warmed-up target, so they share its state and say nothing of how a
second run would come out (four identical quick runs on a file differed by 15 % to 10x while
their rounds' spread claimed ±35 %). It comes from
  - a declared spread: the tolerances file's [spread] table gives a figure's run-to-run standard
    deviation (in % of its value), measured once by the user; taken as known (normal quantile);
  - else repeats (`run --repeat N`, several runs on a side): Welch's t interval of the
    difference of the two means; with one side a single run, the other side's spread stands for
    it too (a prediction interval: t(n-1) × s × √(1/n + 1)). A magnitude whose runs are all
    above 0 (tstat.on_log_scale: every key figure iolab has) takes both on its runs' logarithms
    and compares the geometric means, as `run --repeat` gives its interval: the interval of the
    ratio, asymmetric and never reaching 0 (Noise.edges);
  - else none: single runs on both sides are judged against the tolerance alone, and say so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from iolab.automation.tstat import geometric_mean, t_quantile
from iolab.core.units import counted, given, share_text


@dataclass(frozen=True)
class Side:
    runs: tuple[str, ...]
    samples: tuple[float, ...]  # one value per run that has the figure
    value: float | None  # what is compared: the runs' mean (geometric for a magnitude), or an extreme's worst run

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.samples) if self.samples else None

    @property
    def source(self) -> str:
        return "repeats" if len(self.samples) >= 2 else "none"

    def geometric(self) -> Side:
        """The side compared by its runs' geometric mean (a magnitude's, on the log scale)."""
        return replace(self, value=geometric_mean(self.samples)) if self.samples else self

    def record(self) -> dict:
        return {
            "runs": list(self.runs),
            "mean": self.mean,
            "value": self.value,
            "samples": list(self.samples),
            "noise_source": self.source,
        }


def side(records: Sequence[dict], name: str, kind: str, higher: bool) -> Side:
    figs = [next((f for f in r["figures"] if f["name"] == name), None) for r in records]
    values = tuple(f["value"] for f in figs if f is not None and f["value"] is not None)
    if not values:
        value = None
    elif kind == "extreme":  # the worst run's: one bad maximum is what the figure is about
        value = min(values) if higher else max(values)
    else:
        value = statistics.fmean(values)
    return Side(tuple(r["run_id"] for r in records), values, value)


@dataclass(frozen=True)
class Noise:
    half: float  # the interval's half-width, in the figure's unit, or of the logarithms (`log`) (0: none)
    method: str
    log: bool = False

    def edges(self, base: float, higher: bool) -> tuple[float, float]:
        """How far the candidate must move from `base`, in the figure's unit, to leave the interval
        on the worse side and on the better side: the half-width, or for an interval of the
        logarithms the asymmetric edges of base ×/÷ exp(half)."""
        if not self.log:
            return self.half, self.half
        down, up = abs(base) * -math.expm1(-self.half), abs(base) * math.expm1(self.half)
        return (down, up) if higher else (up, down)


def noise(base: Side, cand: Side, spread: float | None, confidence: float, log: bool = False) -> Noise:
    """The half-width of the interval of the difference of the two sides' means, or (`log`, a
    magnitude whose runs are all above 0: tstat.py) of the means of their logarithms."""
    nb, nc = len(base.samples), len(cand.samples)
    p = 0.5 + confidence / 2
    if spread is not None:
        half = t_quantile(p, 1e9) * spread * abs(base.value or 0) * math.sqrt(1 / nb + 1 / nc)
        return Noise(
            half,
            f"normal interval, {given(100 * confidence)}%, from the declared run-to-run spread ({share_text(spread)} of the "
            f"value per run; {nb} baseline and {counted(nc, 'candidate run')})",
        )
    xb, xc = ([math.log(v) for v in s.samples] if log else s.samples for s in (base, cand))
    vb = statistics.variance(xb) if nb >= 2 else None
    vc = statistics.variance(xc) if nc >= 2 else None
    # a magnitude's interval is of its logarithms: of the ratio of the geometric means, never below 0
    logs = " of the logarithms (the ratio of the geometric means)" if log else ""
    if vb is not None and vc is not None and vb + vc > 0:
        terms = [(vb / nb, nb - 1), (vc / nc, nc - 1)]
        df = sum(v for v, _ in terms) ** 2 / sum(v * v / d for v, d in terms if v > 0)
        half = t_quantile(p, df) * math.sqrt(vb / nb + vc / nc)
        how = f"Welch t interval{logs}, {given(100 * confidence)}%, {df:.1f} degrees of freedom, from the repeated runs' spread"
        return Noise(half, f"{how} ({nb} baseline and {nc} candidate runs)", log)
    one = vb if vb is not None else vc
    if one:  # one side a single run: the other side's per-run spread stands for it
        n = nb if vb is not None else nc
        half = t_quantile(p, n - 1) * math.sqrt(one * (1 / n + 1))
        which = "baseline" if vb is not None else "candidate"
        return Noise(
            half,
            f"t prediction interval{logs}, {given(100 * confidence)}%, {n - 1} degrees of freedom, from the spread of the "
            f"{which}'s {n} repeated runs (the single run on the other side taken to vary as much)",
            log,
        )
    if nb >= 2 or nc >= 2:
        return Noise(0.0, "the repeats agree exactly: no spread to take as noise; judged against the tolerance alone")
    return Noise(
        0.0,
        "single runs on both sides: no run-to-run noise estimate (a run's window rounds are not repeats); "
        "judged against the tolerance alone. Run the baseline with --repeat N or declare the figure's spread "
        "in the tolerances file",
    )
