"""The periodic-dip detector of the IO consistency test on hand-made series."""

from __future__ import annotations

import math
import random

from iolab.figures.consistency import find_dips, part_text, spread


def series(n, base=10_000.0, noise=0.03, seed=1):
    rnd = random.Random(seed)
    return [float(i + 1) for i in range(n)], [base * (1 + rnd.gauss(0, noise)) for _ in range(n)]


def test_periodic_dips_are_found_with_their_period_and_length():
    t, y = series(600)
    for start in range(37, 600, 45):  # a 45 s period, 3 s dips to 20 %
        for k in range(3):
            if start + k < len(y):
                y[start + k] = 2_000.0
    d = find_dips(t, y)
    assert d.periodic
    assert abs(d.period_s - 45) <= 4.5
    assert d.duration_s == 3
    assert 0.15 < d.depth < 0.25
    assert "every 45 s" in d.text()


def test_a_period_that_is_not_a_whole_number_of_samples_is_found_even_with_a_dip_unseen():
    """GC every 4.3 s sampled every second: gaps of 4 and 5 s, and one dip missing (it fell
    between two seconds' worth of catch-up); the period is still 4.3 s within 10 %."""
    t, y = series(300)
    starts = [int(k * 4.3) + 3 for k in range(68)]
    for i in starts[:30] + starts[31:]:
        y[i] = 3_000.0
    d = find_dips(t, y)
    assert d.periodic, d
    assert abs(d.period_s - 4.3) <= 0.43, d.period_s


def test_periodic_dips_with_stalls_off_the_beat_are_still_periodic():
    """Background GC every 4.3 s, and now and then a foreground stall between two bursts (as
    the client preset with the write cache disabled shows): the extra dips make gaps of 2 and
    6 s, but most gaps are whole periods and the period is still 4.3 s."""
    t, y = series(600)
    starts = [int(k * 4.3) + 3 for k in range(139)]
    for i in starts:
        y[i] = 3_000.0
    for i in starts[5::12]:
        y[i + 2] = 6_000.0
    d = find_dips(t, y)
    assert d.periodic, d
    assert abs(d.period_s - 4.3) <= 0.43, d.period_s


def test_periodic_dips_are_found_when_half_the_bursts_go_unseen():
    """The client preset at 4 GB with the write cache disabled: a burst whose deficit is split
    between two seconds and made up within them goes unseen, as often as one is seen, so the
    gaps run 4, 9, 4, 13, 4, 9 … (a median gap of 6.5 s fits neither beat nor multiples)."""
    t, y = series(120)
    beats = [int(k * 4.3) + 2 for k in range(27)]
    for n, i in enumerate(beats):
        if n % 3 != 1 and n not in (9, 21):
            y[i] = 4_000.0
    d = find_dips(t, y)
    assert d.periodic, d
    assert abs(d.period_s - 4.3) <= 0.43, d.period_s


def test_white_noise_has_no_periodic_dips():
    for seed in range(5):
        t, y = series(2000, noise=0.1, seed=seed)
        assert not find_dips(t, y).periodic


def test_a_flat_series_has_no_dips():
    t = [float(i) for i in range(1, 301)]
    d = find_dips(t, [5000.0] * 300)
    assert d.count == 0 and not d.periodic
    assert d.text() == "none found; a period longer than 150 s cannot show in this series"


def test_a_period_longer_than_the_series_can_show_is_named_out_of_reach():
    """A quick consistency run's 45 steady seconds cannot show a 150 s GC period: 'none found'
    alone would read as a drive without one."""
    t, y = series(45)
    y[20:25] = [3000.0] * 5  # one pass of a long period, caught once
    d = find_dips(t, y)
    assert d.count == 1 and not d.periodic and d.longest_period_s == 22.5
    assert d.text().endswith("not periodic); a period longer than 22.5 s cannot show in this series")
    # a beat the series can hold is still found, and the reach grows with the series
    t, y = series(400)
    for start in range(10, 400, 100):
        y[start : start + 5] = [3000.0] * 5
    d = find_dips(t, y)
    assert d.periodic and d.period_s == 100 and d.longest_period_s == 200


def test_a_single_dip_is_not_periodic():
    t, y = series(300)
    y[150:154] = [100.0] * 4
    d = find_dips(t, y)
    assert d.count == 1 and not d.periodic
    assert "not periodic" in d.text() and "151 s" in d.text()


def test_three_dips_whose_gaps_are_only_multiples_of_some_beat_are_not_periodic():
    """Gaps of 142 and 336 s are one and two beats of 159 s within the tolerance, but no two
    dips a beat apart were seen (a client run with the write cache on, 600 s steady part)."""
    t, y = series(600, noise=0.01)
    y = [v * (1 + 0.08 * math.sin(2 * math.pi * i / 159)) for i, v in enumerate(y)]  # a slow swell
    for i in (121, 457, 599):
        y[i] = 500.0
    d = find_dips(t, y)
    assert d.count == 3 and d.autocorrelation > 0.2 and not d.periodic, d


def test_irregular_dips_are_not_periodic():
    t, y = series(600)
    for start in (20, 50, 200, 230, 480):
        y[start] = 1000.0
    assert not find_dips(t, y).periodic


def test_spread_of_the_steady_part():
    s = spread([100.0, 200.0, 300.0])
    assert (s.min, s.max, s.mean, s.seconds) == (100.0, 300.0, 200.0, 3)
    assert abs(s.cv - 0.40825) < 1e-4 and abs(s.min_over_max - 1 / 3) < 1e-9
    assert spread([]) is None


def test_long_dips_broken_by_noise_are_one_dip_each_and_periodic():
    """A GC pass every 150 s holds IOPS 12 % down for 35 s (the enterprise preset's, and the
    reviewed drive's ~150 s with 30-40 s dips); noise lifts a second or two of each above the
    limit. Each is one dip of ~35 s and the period is 150 s: as fragments, their gaps (1-2 s
    inside a dip, ~100 s between) fitted no beat and the run showed 'none found'."""
    t, y = series(900, noise=0.005)
    for start in range(40, 900, 150):
        for k in range(35):
            if k not in (9, 10, 21):  # above the limit for a moment
                y[start + k] *= 0.88
    d = find_dips(t, y)
    assert d.periodic, d
    assert abs(d.period_s - 150) <= 5 and d.count == 6, d
    assert 33 <= d.duration_s <= 35 and 0.86 < d.depth < 0.9, d


def test_dips_of_a_sample_or_two_are_not_merged():
    t, y = series(60, noise=0.0)
    for i in (10, 12, 13, 15):
        y[i] = 1000.0
    assert find_dips(t, y).count == 3  # 10 | 12-13 | 15: gaps of one sample stay gaps


def test_a_dip_under_way_when_the_series_starts_does_not_shorten_the_period():
    """The consistency test's steady part (1,400-2,000 s) opened 27 s into a GC pass of the
    full-size enterprise drive (every 150 s, 35 s long): that dip's start is the window's, its
    gap to the next 123 s, and the period came out 143 s (the beat had to fit the short gap).
    Its start was not seen, so it times nothing: 150 s, and its 8 s are not a dip's length."""
    for noise in (0.002, 0.01):
        t, y = series(600, noise=noise, seed=3)
        for start in range(-27, 600, 150):
            for k in range(35):
                if 0 <= start + k < 600:
                    y[start + k] *= 0.84
        d = find_dips(t, y)
        assert d.periodic and d.count == 5, d
        assert abs(d.period_s - 150) <= 1.5, d
        assert d.duration_s == 35 and d.starts_s[0] == 1.0, d


def test_a_plateau_near_the_limit_with_noise_is_one_dip_not_a_short_period():
    """A GC pass holding IOPS 11 % down for 35 s every 150 s, with 1.5 % noise, crosses the
    limit (10 % below the median) back and forth: its seconds above the limit cut it into
    pieces of 1-3 s a few seconds apart, which made a 'period' of 3-4 s (as full-size
    enterprise-sas with a shallower pass showed) or no period at all. A dip ends only once
    the series is back halfway to the median, so each pass is one dip and the period 150 s;
    the same noise without the passes still has no dip."""
    for seed in range(4):
        t, y = series(900, noise=0.015, seed=seed)
        for start in range(40, 900, 150):
            for k in range(35):
                y[start + k] *= 0.89
        d = find_dips(t, y)
        assert d.periodic and abs(d.period_s - 150) <= 2 and d.count == 6, (seed, d)
        assert 33 <= d.duration_s <= 36, (seed, d)
        assert find_dips(*series(900, noise=0.015, seed=seed)).count == 0


def test_a_dip_that_recovers_through_its_length_is_measured_whole():
    """A pass's IOPS climb back while it lasts (14 % down at its start, 8 % at its end): the
    seconds past the limit are still the pass, and its length is 35 s, not the ~22 s spent
    below the limit."""
    for seed in range(4):
        t, y = series(600, noise=0.003, seed=seed)
        for start in range(40, 600, 150):
            for k in range(35):
                y[start + k] *= 0.86 + 0.06 * k / 34
        d = find_dips(t, y)
        assert d.periodic and d.period_s == 150 and d.duration_s == 35, (seed, d)


def test_the_steady_part_is_judged_by_the_rule_over_five_equal_pieces():
    """A flat series meets the rule; a ramp (piece means 50 to 95) does not, and its figures
    say they are of the part after its start, not of a steady drive; too few seconds: not judged."""
    flat = spread(series(100)[1])
    assert flat.steady.steady and flat.steady.seconds_each == 20
    assert part_text(flat, 15).startswith("steady part (from 15 s): steady by the rule (range ")
    ramp = spread([float(v) for v in range(50, 100)])
    assert not ramp.steady.steady
    assert round(ramp.steady.range_pct) == 54 and ramp.steady.excursion_pct > 10
    assert part_text(ramp, 1).endswith("these figures are of the part after 1 s, not of a steady drive")
    assert "NOT steady by the rule (range 54 % > 20 %" in part_text(ramp, 1)
    assert spread([1.0, 2.0]).steady is None and "not judged" in part_text(spread([1.0, 2.0]), 0)
