"""HIR's key figure was renamed twice: 'PC steady-state IOPS (RND 4 KiB W)' called the window's
mean steady state whether it was or not; 'PC IOPS, window mean (RND 4 KiB W)' used the PTS's
shorthand; it is 'Preconditioning IOPS, window mean (RND 4 KiB W)'. `iolab check`, its
tolerances file and `iolab history` key on names: a baseline saved before a rename failed the
check (exit 7, the figure "missing"). The test declares its earlier names
(TestDef.renamed_figures), and each finds the figure under its name now."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iolab.suites.pts_hir import EARLIER_PC_FIGURES, PC_FIGURE

from .conftest import iolab

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def two_hir_runs(tmp_path_factory) -> Path:
    """Two quick HIR runs in one runs directory, made once: each earlier name is looked up in the
    same two (every name made its own pair before), and neither check nor history writes to them."""
    runs = tmp_path_factory.mktemp("hir") / "runs"
    for _ in range(2):
        p = iolab("run", "hir", "--quick", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
    return runs


@pytest.mark.parametrize("old", EARLIER_PC_FIGURES)
def test_a_baseline_and_a_history_under_an_earlier_name_find_the_figure(two_hir_runs, tmp_path, old):
    runs = two_hir_runs
    base, cand = sorted(runs.iterdir())
    doc = json.loads(iolab("show", str(base), "--json").stdout)
    [figure] = [f for f in doc["runs"][0]["figures"] if f["name"] == PC_FIGURE]
    figure["name"] = old  # as the document was saved before the rename
    saved = tmp_path / "last-good.json"
    saved.write_text(json.dumps(doc))
    p = iolab("check", "--baseline", str(saved), str(cand))
    said = " ".join(p.stdout.split())
    assert p.returncode == 0, said + p.stderr
    assert "missing" not in said and "not compared" not in said and old not in said, said
    assert f"{PC_FIGURE} (IOPS; ↑) {figure['value']:,.0f}" in said, said
    # a tolerances file that names it as it was sets today's figure's allowance
    tol = tmp_path / "tolerances.toml"
    tol.write_text(f'[tolerances]\n"{old}" = "1%"\n')
    p = iolab("check", "--baseline", str(saved), str(cand), "--tolerances", str(tol))
    said = " ".join(p.stdout.split())
    assert p.returncode == 0 and re.search(
        re.escape(f"{PC_FIGURE} (IOPS; ↑)") + r" [^↑]*? 1 % within-tolerance", said
    ), said
    h = iolab("history", old, "--runs-dir", str(runs), "--json")
    assert h.returncode == 0, h.stdout + h.stderr
    found = json.loads(h.stdout)["history"]
    assert found["figure"] == PC_FIGURE, found
    assert {p["run_id"] for t in found["targets"] for p in t["points"]} == {base.name, cand.name}, found
