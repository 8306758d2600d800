"""docs/tests.md quotes what `rw-matrix --quick` measures on two simulated drives (RND 4KiB
write IOPS at QD32): it said 8,500 where the run measured 8,335. The simulator runs in virtual
time, so each command gives the same figure on any machine: the page's figures are held to the
commands it names, run as it names them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "tests.md"


def _quoted() -> list[tuple[str, str]]:
    """(preset, IOPS) as the page quotes them: each command, then the figure after it."""
    text = " ".join(DOC.read_text().split())
    found = re.findall(r"`iolab run rw-matrix --quick -t sim:([\w-]+)` (?:measures )?([\d,]+)", text)
    assert len(found) == 2, found
    return found


@pytest.mark.parametrize(("preset", "figure"), _quoted())
def test_the_rw_matrix_figures_the_page_quotes_are_what_the_command_measures(tmp_path, preset, figure):
    runs = tmp_path / "runs"
    p = iolab("run", "rw-matrix", "--quick", "-t", f"sim:{preset}", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    shown = iolab("show", str(next(runs.iterdir())))
    table = shown.stdout[shown.stdout.index("RND WRITE: IOPS") : shown.stdout.index("SEQ READ:")]
    header = re.search(r"QD 1\s+QD 4\s+QD 32", table)
    row = re.search(r"4KiB\s+[\d,.]+ \([\d,.]+\)\s+[\d,.]+ \([\d,.]+\)\s+([\d,.]+) \(", table)
    assert header and row, table
    assert row.group(1) == figure, (preset, row.group(1), figure)
