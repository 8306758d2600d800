"""`iolab history --html` labels its value axis at round numbers, as every plot of the report
does (vticks): it once divided 1.05 × the largest value into quarters, so one quick IOPS run of
38,531 IOPS was charted against ticks of 0, 10,114, 20,229, 30,343 and 40,457 IOPS."""

from __future__ import annotations

import json
import math
import re

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

FIGURES = ("RND 4KiB R/W 0/100 IOPS", "RND 64KiB R/W 65/35 IOPS", "RND 1024KiB R/W 100/0 IOPS")


def _round_step(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m) for m in (1.0, 2.0, 2.5, 5.0))


def test_the_trend_chart_is_labelled_at_round_numbers_that_cover_every_point(tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", "iops", "--quick", "--cell-time", "100ms", "--no-report", "-q", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    for figure in FIGURES:
        out = tmp_path / "trend.html"
        h = iolab("history", figure, "--runs-dir", str(runs), "--json", "--html", str(out))
        assert h.returncode == 0, h.stdout + h.stderr
        [value] = [pt["value"] for t in json.loads(h.stdout)["history"]["targets"] for pt in t["points"]]
        svg = out.read_text().split("</svg>")[0]
        ticks = [float(t.replace(",", "")) for t in re.findall(r'text-anchor="end" font-size="12">([^<]+)<', svg)]
        steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
        assert len(ticks) >= 3 and len(steps) == 1, (figure, ticks)
        assert _round_step(steps.pop()) and ticks[0] == 0 and ticks[-1] >= value, (figure, ticks, value)
