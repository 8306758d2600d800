"""Student's t distribution: its quantiles, for the confidence intervals of `iolab check` and
`run --repeat` (no SciPy: the incomplete beta function by its continued fraction), and which
figures take their interval on the scale of their logarithms.

A magnitude (a rate, a time, a size, a share: every key figure iolab declares is one) cannot be
negative, and its run-to-run spread is a proportion of it: three runs of 100, 200 and 400 IOPS
give a Student t interval of the mean from -146 to 613 IOPS, which no drive can deliver. Its
interval is the t interval of the natural logarithms, taken back: the geometric mean ×/÷
exp(t × s_ln / √n), asymmetric and above 0 (the interval of the median of a lognormal spread).
It needs every run above 0; a magnitude with a run at 0 keeps the t interval, its lower end
clipped at 0 (the interval's part below 0 holds no possible value, so its coverage is kept).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The units that are magnitudes (never below 0) are plausible.py's, the one list `check` and
# `compare` refuse a negative figure by; a figure in another unit (a signed change, should one be
# declared) keeps the t interval on its own scale.
from iolab.automation.plausible import MAGNITUDE_UNITS


def magnitude(unit: str) -> bool:
    return unit in MAGNITUDE_UNITS


def on_log_scale(unit: str, values: Sequence[float]) -> bool:
    """Whether these runs' values of a figure in `unit` take their interval on the log scale."""
    return magnitude(unit) and bool(values) and all(v > 0 for v in values)


def geometric_mean(values: Sequence[float]) -> float:
    if min(values) == max(values):  # equal runs are their own mean (exp of a log can be 1 ulp off)
        return values[0]
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-14:
            break
    return h


def _t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    lbeta = math.lgamma(df / 2) + math.lgamma(0.5) - math.lgamma(df / 2 + 0.5)
    front = math.exp(math.log(x) * df / 2 + math.log(1 - x) * 0.5 - lbeta)
    if x < (df / 2 + 1) / (df / 2 + 2.5):
        tail = front * _betacf(df / 2, 0.5, x) / (df / 2)
    else:
        tail = 1 - front * _betacf(0.5, df / 2, 1 - x) / 0.5
    return 1 - tail / 2 if t >= 0 else tail / 2


def t_quantile(p: float, df: float) -> float:
    """The p quantile (p > 0.5) of Student's t with df degrees of freedom."""
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2
