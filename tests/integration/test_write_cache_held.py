"""The profile's write cache must hold for the whole run: `iolab run` on a drive whose cache
the run set (enterprise: WCD) but which reported it on again at the end was labelled
compliant. This machine has no drive with a cache switch, so the run's loop device is read as a
SAS drive whose caching page (sdparm's answers) is kept by the seam below; everything else (fio,
the store, the pages) is the real one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

# `iolab ARGS` with the target's loop device read as a SAS drive: `sdparm --get/--set/--clear
# WCE` answer from a caching page kept here, which goes back to WCE after the run's first fio
# round (a drive that resets to its default during the run).
ON_A_DRIVE_THAT_RESETS = """
import sys
import iolab.engines.fio as fio
import iolab.targets.facts as facts
import iolab.targets.host as host
real_iface, real_run, real_round = facts._interface, host.run_command, fio.FioEngine.run
page = {"wce": True}
def sdparm(argv, timeout=60.0):
    if argv[0] != "sdparm" or "WCE" not in argv:
        return real_run(argv, timeout)
    if "--get" in argv:
        return host.CommandResult(tuple(argv), 0, f"    {argv[-1]}: SAS\\nWCE  {int(page['wce'])}\\n".encode(), "")
    page["wce"] = "--set" in argv
    return host.CommandResult(tuple(argv), 0, b"", "")
def a_round_then_a_reset(self, *args, **kwargs):
    out = real_round(self, *args, **kwargs)
    page["wce"] = True
    return out
facts._interface = lambda dev: "sas" if dev.disk.name.startswith("loop") else real_iface(dev)
host.run_command, fio.FioEngine.run = sdparm, a_round_then_a_reset
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def test_a_write_cache_the_drive_did_not_keep_makes_the_run_non_compliant(loop_device, tmp_path):
    runs = tmp_path / "runs"
    args = ("run", "latency", "--quick", "--cell-time", "1s", "--max-rounds", "1", "--purge", "none", "--no-report")
    p = subprocess.run(
        [sys.executable, "-c", ON_A_DRIVE_THAT_RESETS, *args, "-t", loop_device, "--runs-dir", str(runs)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="300"),
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    [run] = list(runs.iterdir())
    m = json.loads((run / "manifest.json").read_text())
    said = "write cache WCD not held: the drive reported it enabled at the end of the run (set disabled at its start)"
    assert said in m["noncompliance"], m["noncompliance"]
    assert m["write_cache"].startswith(f"write cache disabled: $ sdparm --clear WCE {loop_device} -> exit 0")
    assert said in " ".join(p.stdout.split()), p.stdout
    assert said in " ".join(iolab("show", str(Path(run))).stdout.split())
