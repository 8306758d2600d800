"""figures/crosscheck.py: a figure claiming a maximum is held against other tests' measured
figures of its rate on its device."""

from __future__ import annotations

from iolab.figures.crosscheck import MARGIN, Figure, disagreements

READS = "4 KiB random read IOPS"


def fig(test: str, value: float | None, maximum: str = "", device: str = "", rate: str = READS) -> Figure:
    return Figure(device, test, f"{test} figure", "IOPS", value, rate, maximum)


def test_a_maximum_more_than_the_margin_below_another_tests_rate_is_found_with_the_highest():
    most = fig("Max IOPS", 10_000, "its search stopped")
    found = disagreements([most, fig("Demand", 12_000), fig("QoS", 30_000), fig("Max IOPS", 50_000)])
    # the highest other test's figure; the maximum's own test's other figures are not held against it
    assert [(d.most, d.more.test, round(d.ratio, 3)) for d in found] == [(most, "QoS", 3.0)]
    assert "its search stopped; or the drive's state changed" in found[0].text and "3.00x" in found[0].text


def test_within_the_margin_on_another_device_of_another_rate_or_unmeasured_none_is_found():
    most = fig("Max IOPS", 10_000, "stopped")
    assert disagreements([most, fig("Demand", 10_000 * (1 + MARGIN))]) == []  # at the margin: not above it
    assert disagreements([most, fig("Demand", 20_000, device="D2")]) == []
    assert disagreements([most, fig("Demand", 20_000, rate="4 KiB random write IOPS")]) == []
    assert disagreements([most, fig("Demand", None)]) == []
    assert disagreements([fig("Max IOPS", None, "stopped"), fig("Demand", 20_000)]) == []
    # a figure that claims no maximum is never the one below
    assert disagreements([fig("Demand", 10_000), fig("QoS", 20_000)]) == []
    assert len(disagreements([most, fig("Demand", 10_000 * (1 + MARGIN) + 1)])) == 1
