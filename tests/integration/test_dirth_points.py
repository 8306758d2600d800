"""DIRTH's Max/Mid/Min operating points as a user meets them: the RWSW DIRTH on the composite
with `--set oio=1,32,1024` on the simulated SAS drive, where OIO 1,024 (42 ms ART) was chosen as
MidIOPS past the 5 ms cutoff MaxIOPS honours. Mid is chosen among the points under the cutoff;
run, show, --json and the report name that rule where they name the points, and say when the
cutoff leaves Mid no point of its own."""

from __future__ import annotations

import html
import json
import re

import pytest

from iolab.api.runlist import list_runs

from .conftest import iolab
from .test_rwsw import SIM, workload  # noqa: F401 (the module fixture: an analysed trace)

pytestmark = pytest.mark.integration

MID_RULE = "MidIOPS (IOPS closest to (Max + Min) / 2 among points with ART < 5 ms)"


def test_mid_is_chosen_under_the_art_cutoff_and_every_output_names_the_rule(workload, tmp_path):  # noqa: F811
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "dirth-rwsw",
        "--workload",
        str(workload / "wl"),
        "--target",
        SIM,
        "--quick",
        "--cell-time",
        "200ms",
        "--set",
        "oio=1,32,1024",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    [r] = list_runs(runs)
    shown = iolab("show", str(r.path))
    assert shown.returncode == 0, shown.stderr
    out = " ".join(shown.stdout.split())
    # the levels as measured: OIO 1,024 is past the cutoff, so it is no operating point
    levels = dict(re.findall(r"OIO \d+ │ (TC\d+/QD\d+) │ [\d,]+ │ ([\d,.]+) │", out))
    assert float(levels["TC32/QD32"].replace(",", "")) > 5_000, levels
    mid = re.search(re.escape(MID_RULE) + r": (TC\d+/QD\d+), [\d,]+ IOPS, ART ([\d,.]+) µs", out)
    assert mid, out[-3000:]
    assert mid.group(1) != "TC32/QD32" and float(mid.group(2).replace(",", "")) < 5_000
    assert (
        "MaxIOPS (highest IOPS with ART < 5 ms): " in out
        and "MinIOPS (fixed by A.11: the lowest demand, one thread at queue depth 1): TC1/QD1," in out
    )
    # only OIO 1 and 32 are under the cutoff: Mid is one of them, and the run says which and why
    said = re.search(r"MidIOPS is the same point as (MaxIOPS|MinIOPS) \((TC\d+/QD\d+)\): no point other than", out)
    assert said and said.group(2) == mid.group(1), out[-3000:]
    # --json: the decision's rule and its outcome sentence say the same
    doc = json.loads(iolab("show", str(r.path), "--json").stdout)
    [d] = [d for d in doc["runs"][0]["decisions"] if d["rule"]["name"] == "dirth-operating-points"]
    assert d["rule"]["mid_from"] == "under-cutoff" and d["chosen"]["points_under_cutoff"] == 2
    assert f"MidIOPS at {mid.group(1)} (" in d["outcome"]
    assert "IOPS closest to (Max + Min) / 2 among points with ART < 5 ms" in d["outcome"]
    assert said.group(0) in d["outcome"]
    # the report's operating-points table: the rule per point, and Mid marked as the same point
    [page] = (r.path / "report").glob("*.html")
    text = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", page.read_text()).split()))
    assert (
        f"MidIOPS IOPS closest to (Max + Min) / 2 among points with ART < 5 ms {mid.group(1)} "
        f"(= {said.group(1)} point, histogram shared)" in text
    )
    assert said.group(0) in text
