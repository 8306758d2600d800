"""The profile's write cache must hold for the whole run: `iolab run` on a drive whose cache
the run set (enterprise: WCD) but which reported it on again at the end was labelled
compliant, as was one whose drive no longer answered a read of its cache, and a `--hosts` run
whose drive reported the other setting. This machine has no drive with a cache switch, so the run's loop device is read as a
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
# WCE` answer from a caching page kept here, which after the run's first fio round goes back to
# WCE (a drive that resets to its default during the run) or, with IOLAB_TEST_SILENT set, is
# answered no more (`sdparm --get` and sg_modes fail: a drive whose setting cannot be read back).
ON_A_DRIVE_THAT_RESETS = """
import os, sys
import iolab.engines.fio as fio
import iolab.targets.facts as facts
import iolab.targets.host as host
real_iface, real_run, real_round = facts._interface, host.run_command, fio.FioEngine.run
page = {"wce": True, "silent": False}
def sdparm(argv, timeout=60.0):
    if argv[0] == "sg_modes" and page["silent"]:
        return host.CommandResult(tuple(argv), 5, b"", "mode sense (10): Illegal request")
    if argv[0] != "sdparm" or "WCE" not in argv:
        return real_run(argv, timeout)
    if "--get" in argv and page["silent"]:
        return host.CommandResult(tuple(argv), 5, b"", "Illegal request")
    if "--get" in argv:
        return host.CommandResult(tuple(argv), 0, f"    {argv[-1]}: SAS\\nWCE  {int(page['wce'])}\\n".encode(), "")
    page["wce"] = "--set" in argv
    return host.CommandResult(tuple(argv), 0, b"", "")
def a_round_then_a_reset(self, *args, **kwargs):
    out = real_round(self, *args, **kwargs)
    page["silent" if os.environ.get("IOLAB_TEST_SILENT") else "wce"] = True
    return out
facts._interface = lambda dev: "sas" if dev.disk.name.startswith("loop") else real_iface(dev)
host.run_command, fio.FioEngine.run = sdparm, a_round_then_a_reset
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""
QUICK = ("--quick", "--cell-time", "1s", "--max-rounds", "1", "--purge", "none", "--no-report")


def _run_on_the_fake_drive(runs: Path, *args: str, silent: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    p = subprocess.run(
        [sys.executable, "-c", ON_A_DRIVE_THAT_RESETS, "run", "latency", *QUICK, *args, "--runs-dir", str(runs)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="300", **({"IOLAB_TEST_SILENT": "1"} if silent else {})),
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    [run] = list(runs.iterdir())
    return p, json.loads((run / "manifest.json").read_text())


def test_a_write_cache_the_drive_did_not_keep_makes_the_run_non_compliant(loop_device, tmp_path):
    runs = tmp_path / "runs"
    p, m = _run_on_the_fake_drive(runs, "-t", loop_device)
    [run] = list(runs.iterdir())
    said = "write cache WCD not held: the drive reported it enabled at the end of the run (set disabled at its start)"
    assert said in m["noncompliance"], m["noncompliance"]
    assert m["write_cache"].startswith(f"write cache disabled: $ sdparm --clear WCE {loop_device} -> exit 0")
    assert said in " ".join(p.stdout.split()), p.stdout
    assert said in " ".join(iolab("show", str(Path(run))).stdout.split())


def test_a_write_cache_the_drive_no_longer_reports_is_not_confirmed(loop_device, tmp_path):
    # the drive set to WCD at the start answered no read of its cache at the end: the run was
    # labelled compliant, though nothing showed the setting had held
    p, m = _run_on_the_fake_drive(tmp_path / "runs", "-t", loop_device, silent=True)
    said = (
        "write cache WCD could not be confirmed: the drive did not report its setting at the end of the run "
        "(set disabled at its start), and the profile requires it held"
    )
    assert said in m["noncompliance"] and not m["compliant"], m["noncompliance"]
    assert said in " ".join(p.stdout.split()), p.stdout


def test_a_hosts_runs_drive_reporting_another_setting_makes_it_non_compliant(loop_device, tmp_path, fio_server_here):
    # a host of this machine's fio server writing the drive: the run leaves each host's cache as it
    # is and recorded the drive's WCE, yet called the WCD run compliant where a local run is not
    host = f"127.0.0.1:{fio_server_here}"
    p, m = _run_on_the_fake_drive(tmp_path / "runs", "-t", loop_device, "--hosts", host)
    assert m["write_cache"].endswith(f"{host}: enabled (WCE) as the drive reported it; left as it was"), m
    said = (
        f"write cache WCD not held on {host}: the drive reported it enabled at the end of the run "
        "(left as it was: a hosts run does not set it)"
    )
    assert said in m["noncompliance"] and not m["compliant"], m["noncompliance"]
    assert said in " ".join(p.stdout.split()), p.stdout
