"""The figures the PTS derives from measured series: XSR recovery times and the DIRTH
Max/Mid/Min operating points (pure functions, on lists)."""

from __future__ import annotations

import pytest

from iolab.figures.points import DemandPoint, operating_points, recovery


def test_recovery_is_the_end_of_the_first_interval_at_the_target():
    r = recovery([1, 2, 3, 4], [100, 300, 480, 500], 475)
    assert (r.minutes, r.interval) == (3, 3)
    assert recovery([1, 2], [100, 200], 475).minutes is None  # never reached: no invented time


def test_recovery_within_a_band_settles_from_either_side():
    # falling onto the level from above: 242 is 41 % off, 180 is within 10 % of 171
    r = recovery([1, 2, 3], [242, 180, 171], 171, band=0.10)
    assert r.interval == 2
    assert recovery([1, 2], [120, 160], 171, band=0.10).interval == 2  # rising into the band


def test_recovery_refuses_mismatched_series():
    with pytest.raises(ValueError):
        recovery([1, 2], [1], 1)


def grid(iops_art):
    return [DemandPoint(tc, qd, iops, art) for (tc, qd), (iops, art) in iops_art.items()]


def test_operating_points_follow_the_documented_rules():
    pts = grid(
        {
            (32, 32): (90_000, 11_000),  # the highest IOPS, but ART above 5 ms: never Max
            (8, 8): (80_000, 800),
            (4, 4): (70_000, 230),
            (2, 4): (46_000, 170),
            (2, 2): (40_000, 100),
            (1, 1): (10_000, 100),
        }
    )
    ops = operating_points(pts, 5_000)
    assert ops.max.label() == "TC8/QD8"
    assert ops.min.label() == "TC1/QD1"
    assert ops.mid.label() == "TC2/QD4"  # (80,000 + 10,000) / 2 = 45,000: 46,000 is closest
    assert ops.max.iops > ops.mid.iops > ops.min.iops


def test_operating_points_without_a_qualifying_point_or_tc1_qd1_say_so():
    ops = operating_points(grid({(1, 1): (1_000, 9_000), (2, 2): (2_000, 9_500)}), 5_000)
    assert ops.max is None and ops.mid is None and ops.min.label() == "TC1/QD1"
    ops = operating_points(grid({(2, 2): (2_000, 100)}), 5_000)
    assert ops.min is None and ops.mid is None and ops.max.label() == "TC2/QD2"


def test_a_point_without_latency_never_becomes_max():
    ops = operating_points(grid({(4, 4): (9e9, None), (1, 1): (1_000, 100)}), 5_000)
    assert ops.max.label() == "TC1/QD1"
