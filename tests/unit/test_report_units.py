"""The one number formatter every report, plot and terminal view prints with (units.num, eng,
duration): fixed significant digits, no exponent notation (below 10^15), engineering units."""

from __future__ import annotations

import math
import re

import pytest

from iolab.core.units import denoise, duration, eng, given, num, printed_value, scale_for

EXPONENT = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize(
    "v, text",
    [
        (13_430.0, "13,430"),  # was "1.343e+04" with {:,.4g}
        (1_234_567.8, "1,234,568"),  # integer part printed whole: no false zeros
        (524.569, "524.6"),
        (12.456, "12.46"),
        (0.08312, "0.08312"),
        (9.9996, "10.00"),  # rounding carries into the next digit: still four significant digits
        (999.96, "1,000"),
        (-12.3, "-12.30"),
        (0.0, "0"),
        (None, "—"),
        (math.nan, "—"),
    ],
)
def test_num_prints_four_significant_digits_without_exponents(v, text):
    assert num(v) == text


def test_num_never_uses_exponent_notation_across_magnitudes():
    for k in range(-6, 13):
        for m in (1.0, 1.2345, 9.99951):
            text = num(m * 10**k)
            assert not EXPONENT.search(text), text
            digits = re.sub(r"[^0-9]", "", text).lstrip("0")
            assert len(digits) >= 4, text  # never fewer than four significant digits


def test_num_prints_a_huge_number_as_mantissa_and_exponent_not_every_digit():
    # 1e300 (a published figure) printed 301 digits
    assert [num(v) for v in (1e300, -1e300, 1e15, 1.23456e18)] == [
        "1.000e+300",
        "-1.000e+300",
        "1.000e+15",
        "1.235e+18",
    ]
    assert num(999_999_999_999_999.0) == "999,999,999,999,999"
    assert printed_value(1e300) == 1e300


def test_trimmed_ticks_and_printed_values():
    assert [num(v, trim=True) for v in (0.5, 1.0, 1.5, 20_000.0)] == ["0.5", "1", "1.5", "20,000"]
    assert printed_value(12_345.4) == printed_value(12_344.6) == 12_345.0
    assert printed_value(None) is None


@pytest.mark.parametrize(
    "v, unit, text",
    [
        (13_430.0, "µs", "13.43 ms"),
        (132.9, "µs", "132.9 µs"),
        (2.5e6, "µs", "2.500 s"),
        (536_870_912, "B", "536.9 MB"),
        (400e9, "B", "400.0 GB"),
        (1_500.0, "MB/s", "1.500 GB/s"),
        (7_530.0, "IOPS", "7,530 IOPS"),
        (None, "µs", "—"),
    ],
)
def test_eng_picks_the_unit_that_keeps_the_value_readable(v, unit, text):
    assert eng(v, unit) == text


def test_one_unit_per_table_from_its_median():
    assert scale_for([200.0, 13_430.0, 15_000.0]) == ("ms", 1000.0)
    assert scale_for([20.0, 130.0, 13_430.0]) == ("µs", 1.0)
    assert scale_for([None]) == ("µs", 1.0)


@pytest.mark.parametrize("seconds, text", [(2000, "33.3 min"), (86_400, "24.0 h"), (90, "90.0 s"), (0.25, "0.250 s")])
def test_duration_is_never_a_fraction_of_an_hour(seconds, text):
    assert duration(seconds) == text  # 2000 s was printed "0.555556 h"


def test_float_noise_prints_as_zero():
    assert denoise(7.45e-11, 99_999.0) == 0.0
    assert denoise(33.71, 12_898.0) == 33.71


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (0.1, "0.1"),  # num: "0.1000", a precision the user never claimed
        (35000.0, "35,000"),
        (1234567.0, "1,234,567"),  # the spec sheet's `,.6g` printed "1.23457e+06"
        (0.57 * 1000, "570"),  # 0.57 ms in µs is 569.9999999999999: float noise, not a digit given
        (700.0, "700"),
        (0.000125, "0.000125"),
        (0.0, "0"),
        (None, "—"),
    ],
)
def test_a_number_a_user_gave_prints_the_digits_given(v, text):
    assert given(v) == text


@pytest.mark.parametrize(
    "seconds, key_figure, sentence",
    [
        (2.5931, "2.593", "2.59 s"),  # "0.04322 min" in the key figures and the XSR page
        (119.0, "119.0", "119 s"),
        (1800.0, "1,800 (30.0 min)", "30.0 min"),
        (None, "—", None),
    ],
)
def test_a_recovery_time_is_printed_in_the_unit_of_its_magnitude(seconds, key_figure, sentence):
    from iolab.figures.points import Recovery
    from iolab.pages.report.xsr import _when
    from iolab.suites.pts_xsr import key_figures

    [recovery] = [m for m in key_figures() if m.name.startswith("Group 3 recovery")]
    assert recovery.unit == "s" and recovery.fmt(seconds) == key_figure
    if sentence is not None:
        assert _when(Recovery(100.0, seconds / 60, 3)).startswith(f"{sentence} (interval 3;")
