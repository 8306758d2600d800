"""Numbers a user types into a published-figures CSV, `--max-regression` and a tolerances file
are read only as ASCII writes them: Python's float() also read 1_000 as 1000 and full-width
５ as 5, which a reader of the same line does not see as the number compared."""

from __future__ import annotations

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

ART = "ART RND 4KiB R/W 65/35"


@pytest.mark.parametrize("value", ["1_000", "５0", "٥0", "inf", "nan", "1,000", "0x10"])
def test_a_published_figure_that_is_no_plain_number_is_refused(tmp_path, value):
    f = tmp_path / "vendor.csv"
    f.write_text(f'drive,figure,value,unit\nA,{ART},"{value}",µs\nB,{ART},90,µs\n', encoding="utf-8")
    p = iolab("compare", str(f))
    message = " ".join(p.stderr.split())
    assert p.returncode == 2 and p.stdout == "", p.stdout + p.stderr
    assert f"{f}, line 2, field 'value': {value!r} is no plain number (ASCII digits 0-9" in message, message
    assert "Nothing was compared." in message and "Traceback" not in p.stderr


def test_published_figures_in_plain_ascii_forms_are_ranked(tmp_path):
    f = tmp_path / "vendor.csv"
    f.write_text(f"drive,figure,value,unit\nA,{ART},1.2e2,µs\nB,{ART}, 90. ,µs\nC,{ART},.5,µs\n")
    p = iolab("compare", str(f))
    assert p.returncode == 0, p.stderr
    said = " ".join(p.stdout.split())
    assert "120.0 (#3)" in said and "90.00 (#2)" in said and "0.5000 (#1)" in said, p.stdout


@pytest.mark.parametrize("value", ["1_0%", "５%", "５", "inf%", "nan"])
def test_max_regression_that_is_no_plain_number_is_refused(tmp_path, value):
    p = iolab("check", "some-run", "--baseline", "other-run", "--max-regression", value)
    message = " ".join(p.stderr.split())
    assert p.returncode == 2 and p.stdout == "", p.stdout + p.stderr
    assert message == (
        f"iolab: --max-regression: {value!r} is not a percentage: give a plain number "
        "(ASCII digits 0-9 with an optional sign, decimal point and exponent), e.g. 5%."
    ), message


def test_a_tolerance_in_full_width_digits_is_refused(tmp_path):
    t = tmp_path / "tol.toml"
    t.write_text(f'[tolerances]\n"{ART}" = "１0%"\n', encoding="utf-8")
    p = iolab("check", "some-run", "--baseline", "other-run", "--tolerances", str(t))
    message = " ".join(p.stderr.split())
    assert p.returncode == 2 and "'１0%' is not a percentage: give a plain number (ASCII digits" in message, message
