"""The Write Saturation figures calibration fits: the steady level and where the cliff falls;
and the search's choice knob (the link's duplex) and count knobs."""

import math

from iolab.calibrate import KNOBS, _pattern_search, _render, _start
from iolab.calibrate_runs import cliff_interval, steady_level


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
