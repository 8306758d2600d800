"""A magnitude's confidence interval stays above 0: `run --repeat` gives the t interval of the
logarithms (geometric mean ×/÷ a factor) and `iolab check` judges on the same scale. Every
reference here is computed by hand from closed forms (SciPy is not a dependency): Student's t
quantile has one for 1, 2 and 4 degrees of freedom, and 100, 200, 400 have logarithms evenly
spaced by ln 2."""

from __future__ import annotations

import math
import statistics

import pytest

from iolab.automation.check import check
from iolab.automation.repeats import interval, summary
from iolab.automation.tolerances import Tolerances
from iolab.automation.tstat import t_quantile
from iolab.cli.repeats import interval_text


def t_closed(p: float, df: int) -> float:
    """Student's t quantile in closed form (df 1, 2, 4; Wikipedia's Student's t-distribution)."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    a = 4 * p * (1 - p)
    q = math.cos(math.acos(math.sqrt(a)) / 3) / math.sqrt(a)
    return math.copysign(2 * math.sqrt(q - 1), p - 0.5)


T2 = t_closed(0.975, 2)  # 4.30265...


@pytest.mark.parametrize("df", [1, 2, 4])
@pytest.mark.parametrize("p", [0.9, 0.975, 0.995])
def test_t_quantiles_match_the_closed_forms(p, df):
    assert t_quantile(p, df) == pytest.approx(t_closed(p, df), rel=1e-9)


def test_a_magnitude_gets_the_geometric_interval_never_below_zero():
    iops = interval([100.0, 200.0, 400.0], "IOPS")
    # the logs are ln 200 ∓ ln 2: geometric mean 200, s_ln = ln 2, factor exp(t × ln 2 / √3) = 2^(t/√3)
    factor = 2 ** (T2 / math.sqrt(3))
    assert iops["interval"] == "geometric" and iops["geometric_mean"] == pytest.approx(200, rel=1e-12)
    assert iops["factor"] == pytest.approx(factor, rel=1e-9) and iops["half_width"] is None
    assert (iops["low"], iops["high"]) == pytest.approx((200 / factor, 200 * factor), rel=1e-9)
    assert 35.7 < iops["low"] < 35.8 and 1118 < iops["high"] < 1120
    assert iops["mean"] == pytest.approx(700 / 3)  # the arithmetic mean is still given
    # the Student t interval of the same values, what --repeat gave before: below 0
    plain = interval([100.0, 200.0, 400.0])
    half = T2 * statistics.stdev([100.0, 200.0, 400.0]) / math.sqrt(3)
    assert plain["interval"] == "t" and plain["half_width"] == pytest.approx(half, rel=1e-9)
    assert plain["low"] == pytest.approx(700 / 3 - half) and plain["low"] < -146


def test_a_magnitude_with_a_run_at_zero_keeps_the_t_interval_clipped_at_zero():
    f = interval([0.0, 200.0, 400.0], "MB/s")
    assert f["interval"] == "t, clipped at 0" and f["low"] == 0.0
    assert f["high"] == pytest.approx(200 + T2 * 200 / math.sqrt(3))
    assert interval([400.0, 410.0, 0.0001], "µs")["interval"] == "geometric"  # above 0: logs exist
    equal = interval([5.0, 5.0, 5.0], "IOPS")  # a seeded simulator repeats itself: no spread
    assert (equal["low"], equal["geometric_mean"], equal["high"], equal["factor"]) == (5.0, 5.0, 5.0, 1.0)


def test_the_repeat_summary_and_its_table_say_which_interval_each_figure_has():
    def run(k: int, iops: float, mrt: float) -> dict:
        figs = [("IOPS", "IOPS", "value", iops), ("MRT", "µs", "extreme", mrt)]
        return {
            "state": "complete",
            "test": "iops",
            "figures": [
                {"name": n, "unit": u, "direction": "higher-is-better", "kind": kd, "value": v} for n, u, kd, v in figs
            ],
        }

    rep = summary([run(1, 100.0, 9.0), run(2, 200.0, 90.0), run(3, 400.0, 900.0)])
    iops, mrt = rep["figures"]
    assert iops["interval"] == "geometric" and mrt["interval"] == "none" and mrt["low"] is None
    assert "logarithms" in rep["method"] and "clipped at 0" in rep["method"]
    assert interval_text(iops) == "35.75 – 1,119 (geometric mean 200.0 ×/÷ 5.5950)"
    assert interval_text(mrt) == "none: an extreme"
    # ln(101/99) = 0.0200, s_ln = 0.0200 / √2, factor exp(12.71 × 0.0200 / 2) = 1.1355
    assert interval_text(interval([99.0, 101.0], "s") | {"kind": "value"}).endswith("×/÷ 1.1355)")
    assert interval_text(interval([-1.0, 1.0]) | {"kind": "value"}) == "-12.71 – 12.71 (t: mean ± 12.71)"


def figure(run_id: str, value: float, higher: bool = True) -> dict:
    direction = "higher-is-better" if higher else "lower-is-better"
    fig = {"name": "F", "unit": "IOPS" if higher else "µs", "direction": direction, "kind": "value", "value": value}
    return {
        "run_id": run_id,
        "test": "iops",
        "state": "complete",
        "steady_state": "reached",
        "profile": {},
        "figures": [fig],
    }


def judged(base: list[float], cand: list[float], higher: bool = True) -> dict:
    sides = [[figure(f"{s}{i}", v, higher) for i, v in enumerate(vs)] for s, vs in (("a", base), ("b", cand))]
    [f] = check(sides[0], sides[1], Tolerances(0.05))["figures"]
    return f


def test_check_judges_a_magnitude_on_the_scale_of_its_interval():
    # both sides ×/÷ e^0.1 around 100 and 100 e^-0.7 (49.7): Welch on the logs has 2 degrees of
    # freedom and half-width t × √(0.01 + 0.01); the candidate lies beyond it, a regression
    s, d = 0.1, 0.7
    base = [100 * math.exp(-s), 100 * math.exp(s)]
    cand = [v * math.exp(-d) for v in base]
    half = T2 * math.sqrt(2 * s * s)
    f = judged(base, cand)
    assert "Welch t interval of the logarithms" in f["method"] and "2.0 degrees of freedom" in f["method"]
    assert f["verdict"] == "regression" and f["noise_pct"] == pytest.approx(100 * -math.expm1(-half), rel=1e-9)
    assert f["baseline"]["value"] == pytest.approx(100) and f["change_pct"] == pytest.approx(100 * math.expm1(-d))
    # (the arithmetic Welch interval of these runs, 1.5 degrees of freedom, was ±69 %: within-noise)
    assert judged(base, [v * math.exp(-0.55) for v in base])["verdict"] == "within-noise"  # 0.55 < half = 0.608
    # the interval is asymmetric: a rise must pass e^half − 1 (83.7 %), a fall 1 − e^−half (45.6 %)
    assert judged(base, [v * math.exp(0.55) for v in base])["verdict"] == "within-noise"
    assert judged(base, [v * math.exp(0.65) for v in base])["verdict"] == "improvement"
    lat = judged(base, [v * math.exp(0.65) for v in base], higher=False)  # a time: the rise is the worse side
    assert lat["verdict"] == "regression" and lat["noise_pct"] == pytest.approx(100 * math.expm1(half), rel=1e-9)


def test_a_single_candidate_against_repeats_gets_the_prediction_interval_of_the_logarithms():
    base = [100.0, 110.0, 90.0]
    s_ln = statistics.stdev([math.log(v) for v in base])
    half = T2 * s_ln * math.sqrt(1 / 3 + 1)
    f = judged(base, [93.0])
    assert "prediction interval of the logarithms" in f["method"]
    assert f["noise_pct"] == pytest.approx(100 * -math.expm1(-half), rel=1e-9)
    assert f["baseline"]["value"] == pytest.approx((100 * 110 * 90) ** (1 / 3), rel=1e-12)
    assert f["verdict"] == "within-noise"
