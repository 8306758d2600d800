"""`iolab show` of a QoS phase: the median of the rounds' average latencies is of the rounds that
measured one. A round without (no IO completed) was counted as 0 µs, pulling the median down, and
the figure was called "(median round)", though no one round has both medians."""

from dataclasses import replace

from rich.console import Console

from iolab.figures.summary import PhaseSummary
from iolab.pages.chartext import qos_view
from iolab.store.runstore import PhaseRow
from tests.unit.test_char_directions import row


def test_the_median_latency_leaves_out_a_round_without_one():
    base = row(1, 1, 100, (0, 0.0, 0.0, 0.0, 0.0), (20000, 20000.0, 82.0, 50.0, 70.0))
    rows = tuple(
        replace(base, id=i, round=i, iops=iops, lat_mean_us=lat)
        for i, (iops, lat) in enumerate([(20000.0, 50.0), (20100.0, 60.0), (0.5, None)], start=1)
    )
    ph = PhaseSummary(PhaseRow("write rounds", 0, None, None, None, None, 3, "done"), (1, 2, 3), (1, 2, 3), None,
                      (), (), (), (), rows)  # fmt: skip
    console = Console(width=300, record=True, color_system=None)
    qos_view(ph, console)
    out = " ".join(console.export_text().split())
    assert "3 rounds: median IOPS 20,000, median average latency 55.00 µs," in out, out
    assert "median round" not in out, out
