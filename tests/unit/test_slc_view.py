"""`iolab show` of an SLC cache run prints the fill's rate and length with the digits every other
figure has: "456 MB/s over 70.1944 s" stood above the key figures' 455.9 MB/s."""

from dataclasses import replace

from rich.console import Console

from iolab.figures.summary import PhaseSummary
from iolab.pages.report.char_slc import slc_view
from iolab.store.runstore import PhaseRow
from tests.unit.test_char_directions import row


def test_the_fill_line_prints_four_significant_digits():
    base = row(1, 1, 100, (0, 0.0, 0.0, 0.0, 0.0), (1, 3478.3, 455.93, 9000.0, 20000.0))
    fill = replace(base, cell_key="SEQ 128KiB W QD32", phase="fill", runtime_s=70.1944, mbps=455.93)
    ph = PhaseSummary(PhaseRow("fill", 0, None, None, None, None, 1, "done"), (1,), (1,), None, (), (), (), (), (fill,))
    console = Console(width=200, record=True, color_system=None)
    slc_view(ph, console)
    out = console.export_text()
    assert "SEQ 128KiB W QD32: 455.9 MB/s over 70.19 s" in out, out
