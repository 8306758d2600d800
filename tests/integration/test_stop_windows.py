"""A stop signal in the narrow windows of a write, as Ctrl-C at that moment would land: just after
a file took its name but before it was marked as iolab's, or while a trace export's body was
being copied. Each left a file that the same command, run again, refused as someone's data."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, default_signals, iolab, quick_sim_run

pytestmark = pytest.mark.integration

# `iolab ARGS` that sends itself SIGINT as soon as the first call of MODULE:NAME (NAME may be
# Class.method) whose arguments name MATCH has returned: the step after it (the mark, the next
# line) never begins. Deterministic whatever the machine's speed, unlike a signal sent when a
# file is seen.
STOP_AFTER = """
import importlib, os, signal, sys
module, name, match = *sys.argv[1].split(":"), sys.argv[2]
owner = importlib.import_module(module)
*within, attr = name.split(".")
for part in within:
    owner = getattr(owner, part)
real, done = getattr(owner, attr), []
def then_stopped(*args, **kwargs):
    result = real(*args, **kwargs)
    if not done and match in repr(args):
        done.append(1)
        os.kill(os.getpid(), signal.SIGINT)
    return result
setattr(owner, attr, then_stopped)
sys.argv = ["iolab", *sys.argv[3:]]
from iolab.cli.main import main
main()
"""


def harnessed(script: str, *args: str, code: int = 130) -> subprocess.CompletedProcess:
    """`python -c SCRIPT ARGS` (one of the scripts here, which runs iolab), ended by the stop it
    sends itself: exit `code` (130: Ctrl-C, 143: SIGTERM) and no traceback."""
    p = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="200"),
        preexec_fn=default_signals,  # Ctrl-C is KeyboardInterrupt in the child whatever the suite's own
    )
    assert p.returncode == code and "Traceback" not in p.stderr, p.stdout + p.stderr
    return p


def stopped_after(where: str, match: str, *args: str) -> subprocess.CompletedProcess:
    return harnessed(STOP_AFTER, where, match, *args)


def fleet_state(runs: Path) -> tuple[Path, dict]:
    """The one fleet directory under `runs`, and what its fleet.json says."""
    [d] = (runs / "fleets").iterdir()
    return d, json.loads((d / "fleet.json").read_text())


def again(*args: str) -> None:
    """The same command, as the user runs it after the stop: it writes over what the stop left."""
    p = iolab(*args)
    assert p.returncode == 0 and "Refusing" not in p.stderr, p.stderr


def test_a_stop_as_a_report_or_export_file_takes_its_name_leaves_it_iolabs(tmp_path):
    run = quick_sim_run(tmp_path / "runs")
    out = tmp_path / "out"
    # the HTML, placed last: both files are in place, and were not yet marked; the stop said the
    # report "was not kept"
    p = stopped_after("os:replace", f"{run.name}.html", "report", str(run), "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == [f"{run.name}.html", f"{run.name}.pdf"]
    said = " ".join(p.stderr.split())
    assert f"interrupted: these reports are whole and kept: {out / run.name}.html, {out / run.name}.pdf" in said, said
    again("report", str(run), "--out", str(out))
    # the PDF, placed first: the stop left it alone, without its HTML; it now waits for both
    alone = tmp_path / "alone"
    stopped_after("os:replace", f"{run.name}.pdf", "report", str(run), "--out", str(alone))
    assert sorted(p.name for p in alone.iterdir()) == [f"{run.name}.html", f"{run.name}.pdf"]
    # the first table put in place: the stop left cells.csv alone (unmarked), an export's set
    # half placed; it now takes effect once every file has its name
    exported = tmp_path / "exported"
    stopped_after("os:replace", "cells.csv", "export", str(run), "-o", str(exported))
    whole = sorted(p.name for p in exported.iterdir())
    assert "cells.csv" in whole and "manifest.json" in whole and len(whole) > 2, whole
    again("export", str(run), "-o", str(exported))
    assert sorted(p.name for p in exported.iterdir()) == whole


def test_a_reports_pdf_and_html_are_both_old_or_both_new_whenever_a_stop_lands(tmp_path):
    """A report's PDF and HTML are put in place as a pair (writepolicy.output_files, under one
    deferred stop): Ctrl-C between the two renames left a new PDF beside the HTML of the report
    before it. A file put in place is a new inode (renamed over the old name), so the inodes say
    which report each name holds whatever their contents."""
    run = quick_sim_run(tmp_path / "runs")
    out = tmp_path / "out"
    again("report", str(run), "--out", str(out))
    pair = [out / f"{run.name}{ext}" for ext in (".pdf", ".html")]

    def inodes() -> list[int]:
        return [p.stat().st_ino for p in pair]

    old = inodes()
    # stopped as the PDF has taken its name, the HTML not yet: both new once the stop takes effect
    stopped_after("os:replace", f"{run.name}.pdf", "report", str(run), "--out", str(out))
    new = inodes()
    assert all(n != o for n, o in zip(new, old)), (old, new)
    # stopped once both are written aside, before either rename: both as they were
    stopped_after("iolab.pages.report.pdf:write_pdf", "", "report", str(run), "--out", str(out))
    assert inodes() == new
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in pair)  # nothing written aside is left
    assert pair[0].read_bytes().startswith(b"%PDF") and pair[1].stat().st_size > 0


def test_a_report_stopped_as_it_claims_the_run_leaves_no_claim_file(tmp_path):
    """`iolab report RUN` claims the run (RUN/writer.lock names its process) before it writes into
    it. Stopped just after the claim was recorded, or just after claim_run returned but before the
    report held it to let go of, it left writer.lock naming a process that was gone."""
    run = quick_sim_run(tmp_path / "runs")
    for where, match in (("os:pwrite", '"command": "iolab report'), ("iolab.api.reports:claim_if_inside", "")):
        stopped_after(where, match, "report", str(run))
        assert not (run / "writer.lock").exists(), (where, (run / "writer.lock").read_text())
        assert not (run / "report").exists()


def msr_trace(d: Path) -> Path:
    """A small MSR trace (FILETIME, host, disk, type, offset, size, response time in 100 ns)."""
    src = d / "hm_0.csv"
    src.write_text(
        "".join(f"{128166372000000000 + i * 5000},hm,0,Write,{i * 8192},4096,{300 + i}\n" for i in range(20))
    )
    return src


def test_a_stop_in_a_trace_import_or_export_leaves_nothing_the_next_one_refuses(tmp_path):
    table = tmp_path / "t.parquet"
    import_it = ("trace", "import", str(msr_trace(tmp_path)), "--format", "msr", "--out", str(table))
    stopped_after("os:replace", table.name, *import_it)  # in place, not yet marked
    again(*import_it)
    out = tmp_path / "t.msr"
    export_it = ("trace", "export", str(table), "--format", "msr", "--out", str(out))
    # while the body the writer copied out is read into the file: a stop there left t.msr half
    # written and t.msr.body beside it, which the next export refused to write over
    stopped_after("builtins:open", ".body", *export_it)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hm_0.csv", "t.parquet"]
    again(*export_it)
    assert len(out.read_text().splitlines()) == 20


def test_a_ctrl_c_a_background_run_ignores_stays_ignored_as_its_run_directory_is_made(tmp_path):
    """A run started in the background (SIGINT ignored) ignores Ctrl-C for its whole life
    (stop_on_signals); the steps that hold a stop (run/stopsignals.held_stop: the run directory
    made, not yet known to its caller) caught it there and stopped the run, exit 130."""
    runs = tmp_path / "runs"
    p = subprocess.run(
        [sys.executable, "-c", STOP_AFTER, "iolab.api.runs:start", "", "run", "latency", "--quick", "-t", SMALL_SIM]
        + ["--no-report", "--runs-dir", str(runs)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="200"),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as a background job starts it
    )
    assert p.returncode == 0 and "interrupted" not in p.stderr, p.stderr
    [run] = list(runs.iterdir())
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"


def test_a_resume_stopped_as_it_takes_the_run_over_leaves_it_interrupted_not_running(tmp_path):
    """`iolab resume` stamped the run as its own ('running', its pid) before the runner's stop
    handling began: Ctrl-C in between left manifest.json 'running' with no writer, its earlier
    reason gone, and the run said 'interrupted again'."""
    runs = tmp_path / "runs"
    quick = ("run", "latency", "--quick", "--max-rounds", "2", "--no-report", "--runs-dir", str(runs))
    stopped_after("iolab.store.runstore:RunStore.finish_round", "", *quick)  # once its first round is stored
    [run] = list(runs.iterdir())
    manifest = run / "manifest.json"
    assert json.loads(manifest.read_text())["state"] == "interrupted"
    p = stopped_after("iolab.store.runstore:RunStore.claim", "", "resume", str(run), "--no-report")
    m = json.loads(manifest.read_text())
    assert (m["state"], m["error"]) == ("interrupted", "stopped by the user (Ctrl-C); finished rounds are kept"), m
    assert "interrupted again: finished rounds are kept" in " ".join(p.stderr.split())
    assert iolab("resume", str(run), "--no-report").returncode == 0
    assert json.loads(manifest.read_text())["state"] == "complete"


# `iolab ARGS` as a fleet coordinator that gets SIGTERM (a CI job's timeout, to it alone) while
# drive NAME is being set up, and goes on setting it up only once the coordinator has taken the
# stop in (its stop event is set): the moment a drive was started after the stop, and never told.
TERM_AS_DRIVE_STARTS = """
import os, signal, sys, threading, types
import iolab.api.fleet as fleet
made = []
class Event(threading.Event):
    def __init__(self):
        super().__init__()
        made.append(self)
fleet.threading = types.SimpleNamespace(Lock=threading.Lock, Event=Event)
real, name = fleet._keep_earlier, sys.argv[1]
def set_up(d):
    if d.name == name:
        os.kill(os.getpid(), signal.SIGTERM)
        assert made[0].wait(600), "the coordinator never took the stop in"
    return real(d)
fleet._keep_earlier = set_up
sys.argv = ["iolab", *sys.argv[2:]]
from iolab.cli.main import main
main()
"""


def test_a_fleet_stopped_as_a_drive_is_set_up_never_starts_it(tmp_path):
    f = tmp_path / "fleet.toml"
    sim = "sim:enterprise-sas?user_gb=0.1"
    f.write_text(
        f'[fleet]\nname = "t"\nparallel = 1\n[[drive]]\ntarget = "{sim}&seed={{i}}"\ncount = 2\nname = "d{{i}}"\n'
    )
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--fleet", str(f))
    harnessed(TERM_AS_DRIVE_STARTS, "d2", "run", "latency", *quick, "--runs-dir", str(runs), code=143)
    d, state = fleet_state(runs)
    rows = {r["name"]: r["state"] for r in state["members"]}
    # d2 was never started (it ran to its end, the fleet waiting for it: 'complete')
    assert state["stopped_by"] == "SIGTERM" and rows == {"d1": "complete", "d2": "not-started"}, state
    assert not (d / "drives" / "d2" / "out.json").exists() and len(list(runs.glob("2*"))) == 1
    # and it is said so: it read "ERROR", "did not complete: error", a JUnit <error> and exit 2
    # (bad input), as a drive whose run crashed; never tested, it is neither a failure nor a pass
    shown = iolab("fleet", str(d))
    said = " ".join(shown.stdout.split())
    assert shown.returncode == 143 and "ERROR" not in said and "1 not started (d2)" in said, said
    report = json.loads((d / "report.json").read_text())
    (row,) = [r for r in report["drives"] if r["name"] == "d2"]
    assert row["verdict"] == "not-started" and report["summary"]["not_started_drives"] == ["d2"]
    assert report["exit_code"] == 143 and report["summary"]["error_drives"] == [], report["summary"]
    junit = (d / "junit.xml").read_text()
    assert 'errors="0"' in junit and '<skipped message="d2 (' in junit and "not started: the fleet" in junit
    go_on = iolab("resume", str(d), "--runs-dir", str(runs))  # the drive not started is the one it runs
    assert go_on.returncode == 0 and "[d2] complete" in go_on.stdout, go_on.stdout + go_on.stderr


def test_a_resume_stopped_before_its_runner_began_leaves_no_target_lock(scratch):
    """`iolab resume` claims the target as it prepares the run; the runner lets the claim go however
    it ends. Stopped in between, it left the target's lock file, which `iolab runs` then listed as
    left by a run that was killed."""
    runs = scratch / "runs"
    target = f"file:{scratch}/drive.img?size=64MiB"
    quick = ("--quick", "--cell-time", "200ms", "--max-rounds", "2", "--no-report", "--runs-dir", str(runs))
    stopped_after("iolab.store.runstore:RunStore.finish_round", "", "run", "latency", "-t", target, *quick)
    [run] = list(runs.iterdir())
    locks = Path(os.environ["IOLAB_LOCK_DIR"])
    assert list(locks.iterdir()) == []  # the run stopped by Ctrl-C let its target go
    stopped_after("iolab.run.resume:prepare", "", "resume", str(run), "--no-report")
    assert list(locks.iterdir()) == []
    listed = iolab("runs", "--runs-dir", str(runs))
    assert listed.returncode == 0 and "stale lock file" not in listed.stderr, listed.stderr


def test_a_stop_between_the_meter_log_and_power_json_leaves_a_pair(scratch):
    """`iolab power` puts the log's copy in place, then power.json. Ctrl-C between the two renames
    left the new log beside the figures of the one before, which every reader then refused as
    not a pair (test_power.py's kill -9 there still is); the stop now waits for both."""
    from .test_power import designed_log

    runs = scratch / "runs"
    line = ("run", "latency", "-t", f"file:{scratch}/drive.img?size=64MiB", "--quick", "--cell-time", "200ms")
    p = iolab(*line, "--max-rounds", "1", "--no-report", "--runs-dir", str(runs))
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    for name, step in (("first.csv", 0.01), ("second.csv", 0.05)):
        (scratch / name).write_text(designed_log(run, shift=0.0, step=step)[0])
    assert iolab("power", str(run), str(scratch / "first.csv")).returncode == 0
    stopped_after("os:replace", "power-meter.csv", "power", str(run), str(scratch / "second.csv"))
    assert (run / "power-meter.csv").read_text() == (scratch / "second.csv").read_text()
    shown = iolab("show", str(run))
    assert shown.returncode in (0, 6) and "Traceback" not in shown.stderr, shown.stderr


# `iolab ARGS` as a fleet coordinator that gets SIGTERM once its first drive has started, and a
# second SIGTERM as it passes the first on to its drives (a CI runner that signals twice, or
# Ctrl-C pressed twice): the second stop lands while the first is being handled.
TERM_TWICE = """
import os, signal, sys
import iolab.api.fleet as fleet
start, forward, sent = fleet._start_drive, fleet._forward, []
def started(*args):
    proc = start(*args)
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
    return proc
def forwarded(*args):
    if len(sent) == 1:
        sent.append(2)
        os.kill(os.getpid(), signal.SIGTERM)
    return forward(*args)
fleet._start_drive, fleet._forward = started, forwarded
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def _fleet_of_one_stopped_by_sigterm(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`run latency --fleet` of one tiny simulated drive under `script`, which sends it SIGTERM:
    exit 143, the fleet and its drive stored as interrupted, the drive's process gone."""
    f = tmp_path / "fleet.toml"
    f.write_text('[fleet]\nname = "t"\n[[drive]]\ntarget = "sim:enterprise-sas?user_gb=0.1"\nname = "d1"\n')
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "1s", "--max-rounds", "25", "--no-report", "--fleet", str(f))
    p = harnessed(script, "run", "latency", *quick, "--runs-dir", str(runs), code=143)
    _, state = fleet_state(runs)
    assert (state["state"], state["stopped_by"]) == ("interrupted", "SIGTERM") and state["ended"], state
    [d1] = state["members"]
    assert d1["state"] == "interrupted" and not (d1["pid"] and Path(f"/proc/{d1['pid']}").exists()), d1
    return p


def test_a_fleet_stopped_twice_still_stops_its_drives_and_stores_its_end(tmp_path):
    # before: the second stop went out of the fleet as the first was handled: fleet.json said
    # 'running' and d1 'running', and d1, never told, ran on after the coordinator had gone
    _fleet_of_one_stopped_by_sigterm(TERM_TWICE, tmp_path)
    # and d1, its run ended by the stop (as it started or part-way), is said so: it read "ERROR",
    # "1 did not complete: error" and a JUnit <error>, though `iolab resume FLEET` goes on with it
    d, _ = fleet_state(tmp_path / "runs")
    shown = iolab("fleet", str(d))
    said = " ".join(shown.stdout.split())
    assert shown.returncode == 143 and "ERROR" not in said and "1 interrupted (resumable) (d1)" in said, said
    report = json.loads((d / "report.json").read_text())
    assert report["drives"][0]["verdict"] == "interrupted" and report["exit_code"] == 143, report["drives"][0]
    assert (report["summary"]["interrupted_drives"], report["summary"]["error_drives"]) == (["d1"], [])
    junit = (d / "junit.xml").read_text()
    assert 'errors="0"' in junit and '<skipped message="d1 (' in junit and "goes on with it" in junit, junit


# `iolab ARGS` with --fleet that sends itself SIGTERM as the first drive is handed to the pool that
# starts it: before the fleet waits for its drives, as a stop lands on a busy machine
TERM_AT_SUBMIT = """
import os, signal, sys, threading
import iolab.api.fleet as fleet
started, start = threading.Event(), fleet._start_drive
def starting(*args, **kwargs):
    proc = start(*args, **kwargs)
    started.set()
    return proc
class Pool(fleet.ThreadPoolExecutor):
    def submit(self, *args, **kwargs):
        future = super().submit(*args, **kwargs)
        # the drive's process started first: sent at once, the stop came before the pool's thread
        # began it as often as after, and the drive was not started (its own state) or interrupted
        started.wait(120)
        os.kill(os.getpid(), signal.SIGTERM)
        return future
fleet._start_drive, fleet.ThreadPoolExecutor = starting, Pool
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def test_a_fleet_stopped_as_it_hands_out_its_drives_stops_them_and_says_so(tmp_path):
    # before: exit 130 with nothing said (Typer's answer to a stop that left a command), fleet.json
    # 'running', and d1, never told, ran to its end ("[d1] complete in 0.5 s")
    p = _fleet_of_one_stopped_by_sigterm(TERM_AT_SUBMIT, tmp_path)
    assert "complete in" not in p.stdout, p.stdout


# `iolab ARGS` with several --target that gets Ctrl-C once each run has measured a cell, and a
# second one as it passes the first on (Ctrl-C pressed twice): its runs, each in a process group
# of its own, are told by it alone. The first argument is the runs directory to watch.
CTRL_C_TWICE = """
import glob, os, signal, subprocess, sys, time
from iolab.api.scaleout import ChildStop
runs, wait, forward, sent = sys.argv.pop(1), subprocess.Popen.wait, ChildStop.forward, []
def waited(self, *args, **kwargs):
    if not sent:
        sent.append(1)
        while len({p.split("/raw/")[0] for p in glob.glob(f"{runs}/*/raw/*.json")}) < 2:
            assert self.poll() is None, "a run ended before it measured a cell"
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)
    return wait(self, *args, **kwargs)
def forwarded(self, e):
    if len(sent) == 1:
        sent.append(2)
        os.kill(os.getpid(), signal.SIGINT)
    return forward(self, e)
subprocess.Popen.wait, ChildStop.forward = waited, forwarded
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def test_runs_on_several_targets_stopped_twice_are_each_told(scratch):
    runs = scratch / "runs"
    drives = [f"file:{scratch}/d{i}.img?size=64MiB" for i in (1, 2)]
    quick = ("--quick", "--cell-time", "200ms", "--max-rounds", "25", "--no-report", "--runs-dir", str(runs))
    p = harnessed(CTRL_C_TWICE, str(runs), "run", "latency", *quick, "-t", drives[0], "-t", drives[1])
    # before: the second Ctrl-C went out of the command as the first was passed on, and each
    # run, never told, went on to its end after the command had gone
    states = [json.loads(m.read_text())["state"] for m in runs.glob("*/manifest.json")]
    assert states == ["interrupted", "interrupted"], p.stdout + p.stderr


def test_a_fleet_stopped_as_its_pool_is_made_ends_interrupted_with_no_drive_started(tmp_path):
    # before: the stop, come once the fleet took stops but before the drives were handed to the
    # pool, went out of the fleet: exit 130 with fleet.json 'running' and its drive 'pending'
    f = tmp_path / "fleet.toml"
    f.write_text('[fleet]\nname = "t"\n[[drive]]\ntarget = "sim:enterprise-sas?user_gb=0.1"\nname = "d1"\n')
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "1s", "--no-report", "--fleet", str(f), "--runs-dir", str(runs))
    stopped_after("iolab.api.fleet:ThreadPoolExecutor", "", "run", "latency", *quick)
    d, state = fleet_state(runs)
    assert (state["state"], state["stopped_by"]) == ("interrupted", "SIGINT") and state["ended"], state
    [d1] = state["members"]
    assert (d1["state"], d1["run_dir"], d1["pid"]) == ("not-started", None, None), d1  # never started
    assert not (d / "drives" / "d1" / "out.json").exists() and not list(runs.glob("2*"))


# `iolab ARGS` that sends itself Ctrl-C as it turns from starting its runs (several --target) to
# waiting for them: just before it first waits for one (ChildStop.wait), deterministic whatever
# the machine's speed.
CTRL_C_AS_THE_WAIT_BEGINS = """
import os, signal, sys
from iolab.api.scaleout import ChildStop
wait, sent = ChildStop.wait, []
def waited(*args):
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGINT)
    return wait(*args)
ChildStop.wait = waited
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def test_runs_on_several_targets_stopped_as_the_wait_begins_are_each_told(tmp_path):
    # before: the stop landed between the start loop's except clause and the try that waited: the
    # command went out with exit 130, its runs never told, running on to their end after it
    runs = tmp_path / "runs"
    sims = [f"sim:enterprise-sas?user_gb=0.1&seed={i}" for i in (1, 2)]
    quick = ("--quick", "--cell-time", "1s", "--no-report", "--runs-dir", str(runs))
    p = harnessed(CTRL_C_AS_THE_WAIT_BEGINS, "run", "latency", *quick, "-t", sims[0], "-t", sims[1])
    said = " ".join(p.stderr.split())
    assert f"runs that did not finish: {sims[0]} (exit 130), {sims[1]} (exit 130)" in said, p.stdout + p.stderr
    states = [json.loads(m.read_text())["state"] for m in runs.glob("*/manifest.json")]
    assert all(s == "interrupted" for s in states), states  # a run stopped as it began has no directory


def test_a_stop_as_a_runs_end_is_stored_leaves_the_run_as_it_says(tmp_path):
    """Ctrl-C (or a fleet's SIGTERM) as the run's complete end was being stored: it took effect
    between the state set in memory and manifest.json written, and the run said "the run is
    complete and stored" of a manifest still saying 'running' (`iolab runs`: interrupted)."""
    runs = tmp_path / "runs"
    args = ("run", "latency", "--quick", "--no-report", "-t", SMALL_SIM, "--runs-dir", str(runs))
    p = stopped_after("iolab.store.runstore:manifest_bytes", "state='complete'", *args)
    [run] = runs.iterdir()
    assert "was complete: the run is complete and stored in" in " ".join(p.stderr.split()), p.stderr
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"
