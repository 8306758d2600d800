"""Every printed line is true of the run it came from: a scaled-down run names each option that
scaled it, as the user gave it (a --capacity-limit 512MiB beside --quick was credited to
--quick, being the same size)."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_quick_run_with_a_capacity_limit_names_both_on_screen_in_show_and_in_the_report(tmp_path):
    runs = tmp_path / "runs"
    args = ("-t", "sim:enterprise-sas", "--quick", "--capacity-limit", "256MiB")
    planned = iolab("plan", "latency", *args)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    said = flat(planned.stdout)
    assert "(a copy of sim:enterprise-sas, scaled down by --quick and --capacity-limit 256MiB)" in said, said
    assert "its size set by --capacity-limit 256MiB" in said and "chooses a larger copy" not in said, said
    ran = iolab("run", "latency", *args, "--runs-dir", str(runs))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "its size set by --capacity-limit 256MiB" in flat(ran.stdout), ran.stdout
    [run] = list(runs.iterdir())
    m = json.loads((run / "manifest.json").read_text())
    assert m["profile"]["capacity_limit_given"] == "256MiB"
    shown = flat(iolab("show", str(run)).stdout)
    assert re.search(r"NON-COMPLIANT: quick profile; .*its size set by --capacity-limit 256MiB", shown), shown
    html = flat((run / "report" / f"{run.name}.html").read_text())
    banners = re.findall(r'<div class="banner[^"]*">(.*?)</div>', html)
    assert banners and all("--capacity-limit 256MiB" in b for b in banners if "non-compliant" in b), banners


@pytest.mark.parametrize(
    ("given", "source"),
    [
        (("--quick", "--capacity-limit", "512MiB"), "--capacity-limit 512MiB"),  # --quick's size, but the user's
        (("--quick",), "--quick"),
        (("--capacity-limit", "0.5 GiB"), "--capacity-limit 0.5 GiB"),
    ],
)
def test_a_range_cut_by_a_limit_names_the_option_that_cut_it_as_given(given, source):
    p = iolab("plan", "iops", "-t", "file:/var/tmp/iolab-never-made.img?size=2GiB", *given)
    assert p.returncode == 0, p.stdout + p.stderr
    said = flat(p.stdout)
    assert f"limited to 0.537 GB ({source})" in said, said
    assert f"tested capacity limited to 0.537 GB of 2.147 GB by {source})" in said, said
