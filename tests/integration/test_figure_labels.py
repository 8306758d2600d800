"""A figure's label is true of the run it came from: each column of a terminal table says how
it was reduced over the window, a percentile is printed only where its IOs measure it, every
report page of a run not judged steady says so, --require-steady holds runs that never showed
steady state, and a sequence summary names the device each figure came from. Real `iolab`
runs on the simulated drive, quick, 100 ms cells, a few rounds."""

from __future__ import annotations

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

QUICK = ("--quick", "--cell-time", "100ms")
SIM = ("-t", "sim:enterprise-sas?seed=1")


def flat(text: str) -> str:
    """Rich wraps a table's title to the table's width: the words, one space apart."""
    return " ".join(text.split())


def test_the_latency_table_says_each_columns_reduction_not_mean_for_all(tmp_path):
    p = iolab("run", "latency", *SIM, *QUICK, "--max-rounds", "3", "--no-report", "--runs-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    said = "ART (mean) / MRT (maximum) / 99.999 % (of the merged histogram) over the measurement window, µs"
    shown = iolab("show", next(tmp_path.iterdir()).as_posix())
    for out in (p.stdout, shown.stdout):
        assert said in flat(out)
        assert "99.999 % (µs), mean over" not in flat(out)  # a maximum and a percentile are no means
