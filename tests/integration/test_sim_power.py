"""A simulated run gets modelled power (figures/simpower.py) as users run it: `iolab run` on a sim
SSD writes power.json (labelled as the model, the values used also in the manifest), whose cell
energies add up to the phases' and the run's, whose mW moves with the workload, and the report's
Power Consumption pages say modelled, never measured."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from pypdf import PdfReader

from .conftest import iolab, quick_sim_run

pytestmark = pytest.mark.integration


def test_a_simulated_run_reports_modelled_power(scratch):
    runs = scratch / "runs"
    p = iolab(
        *("run", "latency", "-t", "sim:enterprise-sas?seed=1", "--quick", "--cell-time", "1s", "--max-rounds", "3"),
        *("--runs-dir", str(runs)),
    )
    assert p.returncode == 0, p.stderr
    (run_dir,) = runs.iterdir()
    doc = json.loads((run_dir / "power.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert doc["source"] == "simulator power model (UNVERIFIED parameters)"
    assert doc["model"] == manifest["power_model"] and doc["model"]["interface"] == "sas"
    assert doc["model"]["prog_uj_per_page"] > doc["model"]["read_uj_per_page"] > 0

    # energy is conserved: each cell's terms make its energy, the cells make each phase and the run
    cells = doc["cells"]
    assert cells and all(c["avg_mw"] > 0 and c["max_mw"] is None for c in cells)
    for c in cells:
        assert sum(c["energy_parts_mj"].values()) == pytest.approx(c["energy_mj"])
        assert c["avg_mw"] == pytest.approx(c["energy_mj"] / c["covered_s"])
    by_phase = defaultdict(list)
    for c in cells:
        by_phase[c["phase"]].append(c)
    for ph in doc["phases"]:
        mine = by_phase[ph["name"]]
        assert ph["cells"] == len(mine)
        assert ph["avg_mw"] == pytest.approx(sum(c["energy_mj"] for c in mine) / sum(c["covered_s"] for c in mine))
    assert doc["run"]["avg_mw"] == pytest.approx(
        sum(c["energy_mj"] for c in cells) / sum(c["covered_s"] for c in cells)
    )

    # the mW moves with the workload: 4 KiB writes draw more than 4 KiB reads, both more than idle
    def mean_mw(label: str) -> float:
        xs = [c["avg_mw"] for c in cells if c["label"] == label]
        assert xs, label
        return sum(xs) / len(xs)

    assert mean_mw("0/100 4KiB") > 1.3 * mean_mw("100/0 4KiB") > doc["model"]["idle_mw"]

    # the report says modelled, with the values used, and never calls it a meter's measurement
    (pdf,) = (run_dir / "report").glob("*.pdf")
    text = " ".join(page.extract_text() for page in PdfReader(pdf).pages)
    assert "Power Consumption (modelled, not measured)" in text
    assert "UNVERIFIED" in text and "power meter log" not in text

    # a meter's log still cannot be attached to virtual time
    meter = scratch / "meter.csv"
    meter.write_text("time,watts\n0,1\n1,1\n")
    p = iolab("power", str(run_dir), str(meter))
    assert p.returncode != 0 and "virtual time" in p.stderr


def test_a_power_json_that_cannot_be_read_refuses_the_run_in_every_form(scratch):
    """`show --json` gives no power figures but reads the run as `show` does: a garbage power.json
    is refused with the same paragraph and exit code by show, show --json, export and report."""
    runs = scratch / "runs"
    run_dir = quick_sim_run(runs, "sim:enterprise-sas?seed=1&user_gb=0.25")
    (run_dir / "power.json").write_text("garbage{")
    said = "power.json: not valid JSON"
    for args in (
        ("show", run_dir.name),
        ("show", run_dir.name, "--json"),
        ("export", run_dir.name, "-o", str(scratch / "out")),
        ("report", run_dir.name, "-o", str(scratch / "rep")),
    ):
        p = iolab(*args, "--runs-dir", str(runs))
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert said in " ".join(p.stderr.split()) and "Traceback" not in p.stderr, (args, p.stderr)
    doc = json.loads(iolab("show", run_dir.name, "--json", "--runs-dir", str(runs)).stdout)
    assert doc["exit_code"] == 2 and said in doc["error"] and "runs" not in doc
