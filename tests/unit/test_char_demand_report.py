"""What a demand ramp's report says when its stop rule never decided."""

from iolab.core.decide import Sample
from iolab.figures.demand import undecided_text


def test_a_ramp_that_ran_out_of_demands_short_of_them_does_not_say_every_demand_was_met():
    # 95,000 demanded, 87,991 delivered: short by 7.4 %, but one short step is fewer than the
    # rule's three in a row, so the ramp ended undecided.
    text = undecided_text(Sample(1, "95000", 87_991.0, 95_000.0, 32))
    assert "met" not in text
    assert "95,000 IOPS" in text and "87,991" in text and "-7.4 %" in text
