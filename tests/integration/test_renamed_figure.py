"""HIR's key figure was renamed ('PC steady-state IOPS (RND 4 KiB W)' called the window's mean
steady state whether it was or not) to 'PC IOPS, window mean (RND 4 KiB W)'. `iolab check` and
`iolab history` key on names: a baseline saved before the rename failed the check (exit 7, the
figure "missing") and `history` of the old name found nothing. The test declares the old name
(TestDef.renamed_figures) and both find the figure under its name now."""

from __future__ import annotations

import json
import re

import pytest

from iolab.suites.pts_hir import OLD_PC_FIGURE, PC_FIGURE

from .conftest import iolab

pytestmark = pytest.mark.integration


def test_a_baseline_and_a_history_under_the_old_name_find_the_figure(tmp_path):
    runs = tmp_path / "runs"
    for _ in range(2):
        p = iolab("run", "hir", "--quick", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
    base, cand = sorted(runs.iterdir())
    doc = json.loads(iolab("show", str(base), "--json").stdout)
    [figure] = [f for f in doc["runs"][0]["figures"] if f["name"] == PC_FIGURE]
    figure["name"] = OLD_PC_FIGURE  # as the document was saved before the rename
    saved = tmp_path / "last-good.json"
    saved.write_text(json.dumps(doc))
    p = iolab("check", "--baseline", str(saved), str(cand))
    said = " ".join(p.stdout.split())
    assert p.returncode == 0, said + p.stderr
    assert "missing" not in said and "not compared" not in said and OLD_PC_FIGURE not in said, said
    assert f"{PC_FIGURE} (IOPS; ↑) {figure['value']:,.0f}" in said, said
    # a tolerances file that names it as it was sets today's figure's allowance
    tol = tmp_path / "tolerances.toml"
    tol.write_text(f'[tolerances]\n"{OLD_PC_FIGURE}" = "1%"\n')
    p = iolab("check", "--baseline", str(saved), str(cand), "--tolerances", str(tol))
    said = " ".join(p.stdout.split())
    assert p.returncode == 0 and re.search(re.escape(f"{PC_FIGURE} (IOPS; ↑)") + r" [^↑]*? 1 % within-tolerance", said), (
        said
    )
    h = iolab("history", OLD_PC_FIGURE, "--runs-dir", str(runs), "--json")
    assert h.returncode == 0, h.stdout + h.stderr
    found = json.loads(h.stdout)["history"]
    assert found["figure"] == PC_FIGURE, found
    assert {p["run_id"] for t in found["targets"] for p in t["points"]} == {base.name, cand.name}, found
