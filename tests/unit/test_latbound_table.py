"""The latency-bound report's sustained-demand table gives its measured time with the digits of
every other figure beside it: "measured time 5.00046 s" stood over "mean latency 206.3 µs"."""

from dataclasses import replace

from iolab.pages.report.latbound import _percentile_table
from tests.unit.test_char_directions import row


class _Run:
    """What the table reads of a run: its test's settings (the defaults here) and its links."""

    def value(self, name, default):
        return default

    def raw_links(self, rows):
        return ()

    def store_links(self):
        return ()


def test_the_measured_time_has_four_significant_digits():
    base = row(13, 1, 30, (224000, 44800.0, 183.5, 200.0, 3000.0), (96000, 19200.0, 78.6, 220.0, 3098.0))
    sustained = replace(base, runtime_s=5.00046, workload={**base.workload, "rate_iops": 64000})
    table = _percentile_table(_Run(), sustained, "src")  # type: ignore[arg-type]
    rows = dict(table.rows)
    assert rows["measured time"] == "5.000 s", rows
