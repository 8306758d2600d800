"""A block device tested in its first part (`/dev/sdb?size=16GiB`) is a range cut below the
drive's, as `--capacity-limit` cuts it: the rest of the drive, never written, keeps its flash
free, so the steady state is that part's at best, never the drive's. `?size=64MiB` on a 256 MiB
device was planned and run as "compliant yes" (`--capacity-limit 64MiB` on the same device:
"no: active range 25 %: not the drive's steady state"), and its report gave the device's
capacity as 67.11 MB."""

from __future__ import annotations

import html
import json
import re

import pytest

from .conftest import iolab

pytestmark = [pytest.mark.integration, pytest.mark.root]

SAID = "active range 25 %: not the drive's steady state (tested capacity limited to 0.067 GB of 0.268 GB by"


def test_a_device_tested_in_its_first_part_is_not_the_drives_steady_state(loop_device, scratch):
    target = f"{loop_device}?size=64MiB"
    plan = iolab("plan", "latency", "-t", target)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    said = " ".join(plan.stdout.split())
    assert f"compliant no: {SAID} the target's ?size=64MiB)" in said, said
    limited = " ".join(iolab("plan", "latency", "-t", loop_device, "--capacity-limit", "64MiB").stdout.split())
    assert f"compliant no: {SAID} --capacity-limit 64MiB)" in limited, limited

    runs = scratch / "runs"
    args = ("--quick", "--cell-time", "100ms", "--max-rounds", "5", "--no-report", "--runs-dir", str(runs))
    p = iolab("run", "latency", "-t", target, *args, "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = json.loads(p.stdout)["runs"]
    assert any(e.startswith(SAID) for e in run["noncompliance"]), run["noncompliance"]
    assert run["steady_state"] != "reached" and not run["audit"]["failed"], (run["steady_state"], run["audit"])
    assert (run["target"]["capacity_bytes"], run["target"]["tested_capacity_bytes"]) == (256 << 20, 64 << 20)
    shown = " ".join(iolab("show", run["path"]).stdout.split())
    assert f"NON-COMPLIANT: quick profile; 0.1 s per cell instead of 60 s; {SAID}" in shown, shown
    assert f"target {target} (block; model unknown; 268.4 MB, tested 67.11 MB)" in shown, shown
    assert "268.4 MB" in " ".join(iolab("plan", "latency", "-t", target).stdout.split())

    made = iolab("report", run["path"], "--out", str(scratch / "report"))
    assert made.returncode == 0, made.stdout + made.stderr
    [page] = (scratch / "report").glob("*.html")
    text = " ".join(re.sub(r"<[^>]+>", " ", html.unescape(page.read_text())).split())
    assert "Capacity 268.4 MB (67.11 MB tested)" in text and "tested whole" not in text
    # the page may break a line after "?" (a <wbr>): read without it
    assert "Active range 100 %, the device's first 0.067 GB of 0.268 GB (?size=64MiB)" in text.replace("? ", "?")
