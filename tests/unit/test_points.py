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


def test_mid_is_chosen_among_the_points_under_the_cutoff_not_all_points():
    # the three levels a tester's RWSW DIRTH run measured (oio=1,32,1024 on the simulated SAS
    # drive): OIO 1,024 is nearer (Max + Min) / 2 = 13,617.5 by IOPS than either end, but its
    # ART (42 ms) is past the 5 ms cutoff Max honours; the old rule made it MidIOPS
    pts = grid({(1, 1): (5_077, 197), (1, 32): (22_158, 1_437), (32, 32): (21_825, 42_342)})
    ops = operating_points(pts, 5_000)
    assert ops.max.label() == "TC1/QD32" and ops.min.label() == "TC1/QD1"
    assert ops.mid.label() != "TC32/QD32" and ops.mid.art_us < 5_000
    # no point other than the two ends is under the cutoff: Mid is the nearer end, and says so
    assert ops.mid == ops.min and ops.mid_is() == ("MinIOPS",) and ops.under_cutoff == 2
    assert ops.mid_same_as() == (
        "MidIOPS is the same point as MinIOPS (TC1/QD1): no point other than TC1/QD32 and TC1/QD1 has "
        "ART < 5 ms, and of those it is the nearest to (Max + Min) / 2"
    )
    assert ops.rules()[1] == "IOPS closest to (Max + Min) / 2 among points with ART < 5 ms"


def test_mid_skips_a_nearer_point_past_the_cutoff_for_the_nearest_under_it():
    pts = grid(
        {
            (1, 1): (10_000, 100),
            (2, 2): (30_000, 400),  # under the cutoff, 15,000 from the middle
            (8, 8): (90_000, 3_000),  # Max
            (32, 32): (52_000, 20_000),  # 2,000 from the middle (50,000), but ART 20 ms
        }
    )
    ops = operating_points(pts, 5_000)
    assert ops.max.label() == "TC8/QD8" and ops.mid.label() == "TC2/QD2"
    assert ops.mid_same_as() == "" and ops.under_cutoff == 3


def test_a_decision_stored_before_the_rule_was_named_says_it_chose_among_all_points():
    from iolab.figures.points import DECISION, MID_ALL_POINTS, decided_points

    p = {"threads": 1, "queue_depth": 1, "iops": 5.0, "art_us": 1.0}
    old = decided_points([{"rule": {"name": DECISION, "art_cutoff_ms": 5.0}, "chosen": {"MinIOPS": p}}])
    assert old.mid_from == MID_ALL_POINTS and "among all points" in old.rules()[1]
    assert old.rules()[0] == "highest IOPS with ART < 5 ms"


def test_a_point_named_twice_is_measured_once_and_the_decision_says_whose_cells_it_reads():
    from dataclasses import asdict

    from iolab.figures.points import DECISION, decided_points

    # two points under the cutoff: Mid is an end (the tie goes to the lower OIO, Min's point)
    ops = operating_points(grid({(1, 1): (10_000, 100), (1, 32): (60_000, 500)}), 5_000)
    assert ops.shared == (("MidIOPS", "MinIOPS"),)
    assert [n for n, _ in ops.measured()] == ["MaxIOPS", "MinIOPS"]
    assert ops.cells_of("MidIOPS") == "MinIOPS" and ops.cells_of("MaxIOPS") == "MaxIOPS"
    assert ops.shared_text("MidIOPS") == "MidIOPS = MinIOPS point TC1/QD1, histogram shared"
    assert ops.shared_text("MinIOPS") == ""
    # one point under the cutoff that is not TC1/QD1: Mid is Max's
    ops = operating_points(grid({(1, 1): (10_000, 9_000), (4, 4): (60_000, 500)}), 5_000)
    assert ops.shared == (("MidIOPS", "MaxIOPS"),) and [n for n, _ in ops.measured()] == ["MaxIOPS", "MinIOPS"]
    # TC1/QD1 alone: the three names are one point, measured once (as Max)
    ops = operating_points(grid({(1, 1): (10_000, 100)}), 5_000)
    assert ops.shared == (("MidIOPS", "MaxIOPS"), ("MinIOPS", "MaxIOPS")) and len(ops.measured()) == 1
    # three points apart share nothing
    assert operating_points(grid({(1, 1): (1, 1), (1, 4): (5, 2), (1, 32): (9, 3)}), 5_000).shared == ()
    # stored and read back; a decision stored before points were shared reads every name's own cells
    record = {"rule": {"name": DECISION, "art_cutoff_ms": 5.0}, "chosen": ops.record()}
    assert decided_points([record]).shared == ops.shared
    low = asdict(DemandPoint(1, 1, 10_000.0, 100.0))
    old = decided_points([{"rule": record["rule"], "chosen": dict.fromkeys(("MaxIOPS", "MidIOPS", "MinIOPS"), low)}])
    assert old.shared == () and old.cells_of("MidIOPS") == "MidIOPS" and old.shared_text("MidIOPS") == ""


def test_two_points_under_the_cutoff_tie_and_mid_is_min_s_lower_outstanding_io():
    # the two ends are equally far from (Max + Min) / 2; in floats 76,613.7 - 48,115.0 is
    # 28,498.699999999997 and 48,115.0 - 19,616.3 is 28,498.7, so Max looked nearer (Mid = Max)
    assert abs(76_613.7 - (76_613.7 + 19_616.3) / 2) < abs(19_616.3 - (76_613.7 + 19_616.3) / 2)
    for top, low in ((76_613.7, 19_616.3), (14_302.1, 12_135.3), (50_048.1, 22_551.2), (38_052.3, 5_558.1)):
        ops = operating_points(grid({(1, 32): (top, 1_000), (1, 1): (low, 100)}), 5_000)
        assert ops.mid.label() == "TC1/QD1" and ops.shared == (("MidIOPS", "MinIOPS"),), (top, low)
