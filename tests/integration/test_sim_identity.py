"""A simulated drive is its preset and the parameters that differ from the preset's: a spec that
writes out a default (`sim:enterprise-sas?user_gb=400`, `t_read_us=50`) names the preset's own
drive, in `iolab history` and `iolab compare` as when two targets are refused as one
(test_bad_input.py, test_fleet.py)."""

from __future__ import annotations

import json

import pytest

from .conftest import SMALL_SIM, iolab, quick_sim_run

pytestmark = pytest.mark.integration


def test_a_parameter_written_at_its_default_is_the_same_drive_in_history_and_compare(tmp_path):
    runs = tmp_path / "runs"
    # enterprise-sas reads a page in 50 µs: the same drive, written out (history showed two targets)
    plain, written = quick_sim_run(runs), quick_sim_run(runs, f"{SMALL_SIM}&t_read_us=50")
    history = iolab("history", "ART RND 4KiB R/W 100/0", "--runs-dir", str(runs), "--json")
    assert history.returncode == 0, history.stdout + history.stderr
    targets = json.loads(history.stdout)["history"]["targets"]
    assert len(targets) == 1 and len(targets[0]["points"]) == 2, targets
    compared = iolab("compare", str(plain), str(written), "--out", str(tmp_path / "cmp"))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    [html] = (tmp_path / "cmp").glob("*.html")
    assert "<title>Latency comparison — 2 runs</title>" in html.read_text()  # was "2 drives"
    # a parameter that differs from the preset's is another drive
    slower = quick_sim_run(runs, f"{SMALL_SIM}&t_read_us=60")
    history = iolab("history", "ART RND 4KiB R/W 100/0", "--runs-dir", str(runs), "--json")
    assert len(json.loads(history.stdout)["history"]["targets"]) == 2, history.stdout
    compared = iolab("compare", str(plain), str(slower), "--out", str(tmp_path / "cmp2"))
    [html] = (tmp_path / "cmp2").glob("*.html")
    assert "<title>Latency comparison — 2 drives</title>" in html.read_text()
    # another seed is another random stream of the drive, another run of it (as history keeps it on
    # the drive's line), not another drive: compare called them "2 drives"; each label says its seed
    seeded = quick_sim_run(runs, f"{SMALL_SIM}&seed=2")
    compared = iolab("compare", str(plain), str(seeded), "--out", str(tmp_path / "cmp3"), "--json")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    [html] = (tmp_path / "cmp3").glob("*.html")
    assert "<title>Latency comparison — 2 runs</title>" in html.read_text()
    labels = json.loads(compared.stdout)["ranking"]["labels"]
    assert [label.rsplit(", ", 1)[1] for label in labels] == ["seed 0", "seed 2"], labels


def test_over_provisioning_given_with_the_size_is_another_drive_to_a_fleet_and_history(tmp_path):
    # with user_gb given, the simulator turns op into the flash geometry and lists op as the
    # preset's own '': two drives of 28 % and 100 % spare were refused as one fleet drive
    # ("drives 'op-default' and 'op-100' are the same drive") and drawn as one history line
    runs = tmp_path / "runs"
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        '[fleet]\nname = "op"\n\n'
        f'[[drive]]\ntarget = "{SMALL_SIM}"\nname = "op-default"\n\n'
        f'[[drive]]\ntarget = "{SMALL_SIM}&op=1.0"\nname = "op-100"\n'
    )
    ran = iolab("run", "latency", "--quick", "--fleet", str(fleet), "--no-report", "--runs-dir", str(runs), timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "same drive" not in ran.stderr and "2 complete" in ran.stdout, ran.stdout + ran.stderr
    history = iolab("history", "ART RND 4KiB R/W 100/0", "--runs-dir", str(runs), "--json")
    assert history.returncode == 0, history.stdout + history.stderr
    targets = json.loads(history.stdout)["history"]["targets"]
    assert sorted(len(t["points"]) for t in targets) == [1, 1], targets
    assert any("op=1.0" in t["spec"] for t in targets), targets
