"""The Write Saturation figures calibration fits: the steady level and where the cliff falls."""

from iolab.calibrate import _cliff, _steady


def test_the_cliff_is_the_first_interval_below_halfway_to_the_steady_level():
    curve = [100.0, 98, 97, 90, 60, 45, 41, 40, 40, 40, 40, 40]
    assert _steady(curve) == 40
    assert _cliff(curve) == 5  # 60 < (100 + 40) / 2 = 70; 90 is not


def test_a_curve_that_does_not_fall_by_a_fifth_has_no_cliff():
    assert _cliff([100.0, 95, 90, 88, 85, 85, 85]) is None
