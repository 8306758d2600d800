"""The Write Saturation figures calibration fits: the steady level and where the cliff falls;
the search's choice knob (the link's duplex) and count knobs; the spare a compressing base
fits; the least-squares steps."""

import json
import math

import pytest

from iolab import _sim
from iolab.api.calibrate import KNOBS, _least_squares, _pattern_search, _render, _start
from iolab.api.calibrate_runs import cliff_interval, steady_level


def test_the_cliff_is_the_first_interval_below_halfway_to_the_steady_level():
    curve = [100.0, 98, 97, 90, 60, 45, 41, 40, 40, 40, 40, 40]
    assert steady_level(curve) == 40
    assert cliff_interval(curve) == 5  # 60 < (100 + 40) / 2 = 70; 90 is not


def test_a_curve_that_does_not_fall_by_a_fifth_has_no_cliff():
    assert cliff_interval([100.0, 95, 90, 88, 85, 85, 85]) is None


def test_a_choice_is_probed_a_whole_choice_away_even_when_the_steps_have_shrunk():
    # The choice only pays once the rate has converged near 100 (steps of a few %), so a search
    # that moved the index by the current step would never land on the other choice.
    def cost(p):
        return abs(p["rate"] - math.log(100)) + (0.0 if p["duplex"] == 1.0 else 0.05 * (p["rate"] > math.log(95)))

    evals = []
    x, f = _pattern_search(
        lambda p: evals.append(p) or cost(p),
        {"rate": math.log(10), "duplex": 0.0},
        math.inf,
        {"rate": (0.0, math.log(1e4)), "duplex": (0.0, 1.0)},
        400,
        lambda: len(evals),
        frozenset({"duplex"}),
    )
    assert x["duplex"] == 1.0
    assert abs(math.exp(x["rate"]) / 100 - 1) < 0.05


def test_a_count_is_probed_a_whole_count_away_even_when_the_steps_have_shrunk():
    # One more core pays only once the rate is within 3 % of 100, when the steps are a few %:
    # 4 × 1.05 still rounds to 4, so a search that moved the count by the current step would
    # stay at 4 (as dies_per_channel did while program time converged).
    def cost(p):
        best = 5 if p["rate"] > math.log(97) else 4
        return abs(p["rate"] - math.log(100)) + 0.01 * abs(round(math.exp(p["cores"])) - best)

    evals = []
    x, f = _pattern_search(
        lambda p: evals.append(p) or cost(p),
        {"rate": math.log(10), "cores": math.log(4)},
        math.inf,
        {"rate": (0.0, math.log(1e4)), "cores": (0.0, math.log(16))},
        400,
        lambda: len(evals),
        integer=frozenset({"cores"}),
    )
    assert round(math.exp(x["cores"])) == 5
    assert abs(math.exp(x["rate"]) / 100 - 1) < 0.03


def test_a_count_moves_with_its_partner_keeping_the_rate_they_set():
    # The figures pin the rate cores / overhead; only a weaker figure (latency) prefers 4 cores.
    # A core more alone moves the rate by half, a probe never accepted: the count stayed at 2.
    def cost(p):
        cores = round(math.exp(p["cores"]))
        return abs(math.log(cores) - p["overhead"] - math.log(0.1)) + 0.01 * abs(cores - 4)

    evals = []
    x, f = _pattern_search(
        lambda p: evals.append(p) or cost(p),
        {"overhead": math.log(20), "cores": math.log(2)},
        cost({"overhead": math.log(20), "cores": math.log(2)}),
        {"overhead": (0.0, math.log(1e4)), "cores": (0.0, math.log(16))},
        200,
        lambda: len(evals),
        integer=frozenset({"cores"}),
        per={"cores": "overhead"},
    )
    assert round(math.exp(x["cores"])) == 4
    assert abs(4 / math.exp(x["overhead"]) / 0.1 - 1) < 0.02


def test_the_link_knob_starts_at_the_base_links_duplex_and_renders_its_word():
    link = next(k for k in KNOBS if k.name == "link")
    assert _render(link, _start("entry-sata-compress", 2**29)["link"]) == "sata3"
    assert _render(link, _start("enterprise-sas", 2**29)["link"]) == "sas6"
    assert _render(link, _start("client-nvme-slc", 2**29)["link"]) == "sas6"  # PCIe is full duplex


def test_a_compressing_base_fits_the_spare_incompressible_data_leaves_beside_its_ceiling():
    # The runs measure the spare incompressible data leaves; with op alone fitted, every move of
    # the ceiling would change that spare too (1.28 / 1.15: 11 % instead of 28 %).
    x = _start("entry-sata-compress", 2**29)
    info = json.loads(_sim.describe("entry-sata-compress", [("user_gb", f"{2**29 / 1e9:.9g}")]))
    ceiling = float(dict(info["params"])["compress_ceiling"])
    assert math.exp(x["compress_ceiling"]) == pytest.approx(ceiling)
    assert math.exp(x["op"]) == pytest.approx((1 + info["op"]) / ceiling - 1)
    assert "compress_ceiling" not in _start("enterprise-sas", 2**29)


def test_least_squares_moves_knobs_that_trade_off_together_from_a_far_start():
    # Two figures set by ratios (cores / overhead, dies / program time) and one by a sum: in log
    # space a linear problem whose valley runs across the axes. Solving for all knobs at once
    # lands on it within 30 evaluations, where the pattern search is still 83 % off on reads.
    want = {"read": math.log(70.0), "write": math.log(30.0), "mixed": math.log(50.0)}

    def resid(p):
        read, write = p["cores"] - p["overhead"], p["dies"] - p["prog"]
        mixed = math.log((math.exp(read) + math.exp(write)) / 2)
        return [read - want["read"], write - want["write"], mixed - want["mixed"]]

    evals = []
    start = {"overhead": math.log(4.0), "cores": math.log(2.0), "prog": math.log(1.0), "dies": math.log(2.0)}
    bounds = {n: (math.log(0.01), math.log(1e4)) for n in start}
    x = _least_squares(lambda p: evals.append(p) or resid(p), start, bounds, 30, lambda: len(evals))
    assert max(abs(e) for e in resid(x)) < 0.01, [math.exp(e) for e in resid(x)]
