"""Multi-WSAT has two write thresholds before it accepts steady state: the workload's own writes
(--rwsw-min-writes, 1× capacity) and every write since the purge, preconditioning included
(--steady-min-writes, 2×). Page 1 named the first as "Steady state accepted after" while the stop
reason beside it said "declared after ... (≥ 2× the tested capacity)": which figure belonged to
which threshold could not be told. Each now has its own labelled row, and the stop reason gives
each threshold its own written figure."""

from __future__ import annotations

import html
import re

import pytest

from .conftest import iolab
from .test_rwsw import workload  # noqa: F401 (the module fixture: an analysed trace)

pytestmark = pytest.mark.integration


def test_each_write_threshold_has_its_own_row_and_its_own_figure(workload, tmp_path):  # noqa: F811
    runs = tmp_path / "runs"
    p = iolab(
        "run", "multi-wsat", "-w", str(workload / "wl"), "--quick", "--cell-time", "1s",
        "-t", "sim:enterprise-sas?user_gb=1", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = [d for d in runs.iterdir() if d.is_dir()]
    page = next((run / "report").glob("*.html")).read_text()
    rows = {
        html.unescape(re.sub(r"<[^>]+>", "", k)).strip(): html.unescape(re.sub(r"<[^>]+>", "", v)).strip()
        for k, v in re.findall(r"<tr><t[dh][^>]*>(.*?)</t[dh]><t[dh][^>]*>(.*?)</t[dh]></tr>", page, re.S)
    }
    own = rows["Steady state after: workload writes"]
    assert own == "1× capacity of workload writes (0.537 GB; workloads with writes; --rwsw-min-writes)", own
    purge = rows["Steady state after: writes since the purge"]
    assert purge == "2× capacity, preconditioning included (1.074 GB; workloads with writes; --steady-min-writes)"
    assert "Steady state accepted after" not in rows
    # the stop reason: each threshold beside the figure written against it
    said = " ".join(iolab("show", str(run)).stdout.split())
    assert re.search(
        r"declared after [\d.]+ GB written since the purge \(≥ 2× the tested capacity, 1\.074 GB\) and [\d.]+ GB of "
        r"the workload's own writes \(≥ its minimum, 0\.537 GB\)",
        said,
    ), said
