"""`round_values` in --json: a figure's value per window round, left out only where the figure
does not read the rounds (it equals its own value in rounds that measured differently)."""

from iolab.pages.outcome import round_values


def test_a_figure_equal_in_rounds_that_measured_differently_has_no_round_values():
    assert round_values(45371.5, [45371.5, 45371.5]) == []


def test_rounds_that_measured_exactly_alike_keep_their_equal_values():
    # a simulated drive reading sequentially can complete the same IOs in every round: a measured
    # spread of zero, not a repeated figure
    assert round_values(1000.0, [1000.0, 1000.0, 1000.0], rounds_alike=True) == [1000.0, 1000.0, 1000.0]


def test_values_that_differ_are_kept_and_missing_rounds_left_out():
    assert round_values(2.0, [1.0, None, 3.0]) == [1.0, 3.0]
    assert round_values(5.0, [5.0]) == [5.0]
