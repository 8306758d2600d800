"""The simulator's presets as Python sees them: each SSD preset's rated endurance comes from the
preset itself, through the Rust surface, so a new preset cannot leave it empty."""

import json
import os
import subprocess
import sys
from pathlib import Path

from iolab import _sim
from iolab.targets.sim_facts import describe_target


def test_every_ssd_preset_carries_its_rating_from_the_simulator():
    presets = json.loads(_sim.presets())
    assert any(p["kind"] == "ssd" for p in presets), "no SSD preset"
    for p in presets:
        _, facts = describe_target(p["name"], {})
        rating = (facts.rated_pe_cycles, facts.warranty_years)
        assert rating == (p["rated_pe_cycles"], p["warranty_years"]), p["name"]
        if p["kind"] == "ssd":
            assert facts.rated_pe_cycles > 0 and facts.warranty_years > 0, p["name"]
            assert json.loads(_sim.describe(p["name"], [("user_gb", "4")]))["rated_pe_cycles"] == p["rated_pe_cycles"]
        else:
            assert rating == (None, None), p["name"]


def test_sim_presets_command_lists_the_inherited_values():
    # A derived preset states only what differs from its base; the listing shows every value.
    env = {**os.environ, "COLUMNS": "200"}
    out = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "sim", "presets", "--detail"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    client = out.stdout[out.stdout.index("client-nvme-slc") : out.stdout.index("sas-15k-hdd")]
    rows = {
        cells[1].strip(): cells[2].strip()
        for cells in (line.split("│") for line in client.splitlines())
        if len(cells) > 3
    }
    assert (rows["idle_ms"], rows["channels"], rows["planes"]) == ("5 ms", "8", "4"), rows


def test_every_ssd_preset_states_what_it_is_calibrated_to_in_the_simulator():
    # The `iolab sim presets` headline lives in the preset (crates/sim/src/config/presets.rs), as
    # its endurance does: a new SSD preset brings its own, an HDD has none (its parameters are its
    # headline).
    presets = json.loads(_sim.presets())
    for p in presets:
        if p["kind"] == "ssd":
            assert isinstance(p["calibrated_to"], str) and p["calibrated_to"].strip(), p["name"]
        else:
            assert p["calibrated_to"] is None, p["name"]
    env = {**os.environ, "COLUMNS": "200"}
    out = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "sim", "presets"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines() if line.split()}
    for p in presets:
        if p["kind"] == "ssd":
            assert p["calibrated_to"] in rows[p["name"]], rows[p["name"]]
