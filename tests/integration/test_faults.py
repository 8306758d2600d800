"""Faults around a run, as a user meets them on the command line: a results filesystem that is
all but full when the run starts, a stop signal while the report is being written, and lock
files left by killed runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iolab.store.durable import ResultsDiskFull
from tests.integration.conftest import IOLAB, default_signals, iolab


@pytest.mark.parametrize("free_kib", [64, 160, 224, 256])
def test_a_nearly_full_results_disk_ends_the_run_failed_and_says_so_once(small_fs, free_kib):
    st = os.statvfs(small_fs)
    with open(small_fs / "filler", "wb") as f:
        f.write(b"\0" * (st.f_bavail * st.f_frsize - free_kib * 1024))
    runs = small_fs / "runs"
    res = iolab(
        "run",
        "latency",
        "--quick",
        "--cell-time",
        "200ms",
        "--max-rounds",
        "3",
        "--no-report",
        "--runs-dir",
        str(runs),
        timeout=600,
    )
    assert res.returncode == 5, res.stderr
    out = " ".join((res.stdout + res.stderr).split())  # Rich wraps long lines
    assert "Traceback" not in out and out.count("results disk full at ") == 1
    assert out.count(ResultsDiskFull.ADVICE) == 1, out
    made = list(runs.iterdir()) if runs.is_dir() else []
    if not made:
        assert "no room to start a run" in out and "no run directory was left" in out
    for run in made:  # the run that began ends failed, with the reason, never 'running'
        m = json.loads((run / "manifest.json").read_text())
        assert m["state"] == "failed" and m["error"].startswith(f"results disk full at {run}")
        assert m["error"].count(ResultsDiskFull.ADVICE) == 1
    listed = iolab("runs", "--runs-dir", str(runs))
    assert listed.returncode == 0 and "broken" not in listed.stdout and "interrupted" not in listed.stdout


def files_in(folder: Path) -> list[Path]:
    """The files in `folder`, none while it is not there (a stopped report removes the folder it made)."""
    try:
        return list(folder.iterdir())
    except FileNotFoundError:
        return []


def signal_when(proc: subprocess.Popen, ready, sig: int) -> str:
    """Send sig to proc as soon as ready() is true (the report is being written; not after a
    time, which a busy machine would make miss); returns its stderr once it ended."""
    try:
        deadline = time.monotonic() + 600
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the report was never started"
            time.sleep(0.005)
        proc.send_signal(sig)
        return proc.communicate(timeout=600)[1]
    finally:
        proc.kill()


def stoppable_run(runs: Path, cell_time: str) -> subprocess.Popen:
    """A quick latency run that writes its report, which the test stops with a signal."""
    return subprocess.Popen(
        [*IOLAB, "run", "latency", "--quick", "--cell-time", cell_time, "--max-rounds", "1", "--runs-dir", str(runs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="100"),
        # as from a terminal: a child of a shell that ignores SIGINT would ignore it too
        preexec_fn=default_signals,
    )


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_while_the_report_is_written_keeps_the_run_and_no_half_report(tmp_path, sig, code):
    runs = tmp_path / "runs"
    proc = stoppable_run(runs, "200ms")
    err = signal_when(proc, lambda: list(runs.glob("*/report")), sig)  # the report's directory: being written now
    assert proc.returncode == code, err
    [run] = list(runs.iterdir())
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("writing report ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"after run {run.name} was complete" in lines[0] and f"`iolab report {run}` writes it" in lines[0]
    # neither an HTML without its PDF nor a partial file; the folder made for them is removed too
    assert not (run / "report").exists()
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"
    if sig != signal.SIGTERM:
        return
    # `iolab report` stopped the same way, once its first file appears
    proc = subprocess.Popen(
        [*IOLAB, "report", str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="100"),
    )
    err = signal_when(proc, lambda: files_in(run / "report"), sig)
    assert proc.returncode == code and [
        ln for ln in err.splitlines() if ln.strip() and not ln.startswith("writing report ")
    ] == ["stopped by SIGTERM: the report being written was not kept (the reports listed above are whole)"], err
    assert not (run / "report").exists()


def test_a_stop_once_both_reports_are_in_place_says_they_are_kept(tmp_path):
    # Ctrl-C once the HTML and PDF were in place said "a report stopped half-way is not kept"
    for attempt in range(3):  # the run may end before the test sees both files: then once more
        runs = tmp_path / f"runs{attempt}"
        proc = stoppable_run(runs, "100ms")
        try:
            # the HTML is put in place last (the PDF before it); a glob of *.* also counted the
            # two .partial files being written, and the stop then came before either was placed
            while not list(runs.glob("*/report/*.html")) and proc.poll() is None:
                time.sleep(0.002)
            proc.send_signal(signal.SIGSTOP)  # held at this moment, wherever it is, while it is signalled
            if proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGINT)
            proc.send_signal(signal.SIGCONT)
            err = proc.communicate(timeout=600)[1]
        finally:
            proc.kill()
            proc.wait()
        break
    else:
        pytest.fail("each run ended before the test could stop it")
    [run] = list(runs.iterdir())
    html, pdf = (run / "report" / f"{run.name}{ext}" for ext in (".html", ".pdf"))
    assert proc.returncode == 130, err
    said = " ".join(err.split())
    assert f"after run {run.name} was complete" in said and f"its report is kept too: {html} and {pdf}" in said
    assert "half-way" not in said
    assert html.stat().st_size > 0 and pdf.read_bytes().startswith(b"%PDF")


# `iolab ARGS` whose Nth call of MODULE:NAME (NAME may be Class.method; several, comma-separated,
# each its own Nth call) first sends the process SIGINT, as Ctrl-C at that moment would:
# deterministic, whatever the machine's speed
CTRL_C_AT = """
import importlib, os, signal, sys
def stop_at(where, nth):
    module, name = where.split(":")
    owner = importlib.import_module(module)
    *path, attr = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    real, calls = getattr(owner, attr), []
    def stopped_here(*args, **kwargs):
        calls.append(1)
        if len(calls) == nth:
            os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)
    setattr(owner, attr, stopped_here)
for where in sys.argv[1].split(","):
    stop_at(where, int(sys.argv[2]))
sys.argv = ["iolab", *sys.argv[3:]]
from iolab.cli.main import main
main()
"""


def ctrl_c_at(where: str, nth: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CTRL_C_AT, where, str(nth), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="100"),
        preexec_fn=default_signals,  # Ctrl-C is KeyboardInterrupt in the child whatever the suite's own
    )


def test_ctrl_c_while_a_complete_run_stores_its_end_says_it_is_complete_and_how_to_report(tmp_path):
    """Ctrl-C in Runner.finish (a simulated drive's power model, before the audit and the report):
    the run had ended every phase but stayed 'running', and its start then marked it 'stopped as it
    started; nothing was measured'; `iolab run` said 'interrupted: finished rounds are kept'."""
    runs = tmp_path / "runs"
    quick = ("--quick", "--max-rounds", "2", "--runs-dir", str(runs))
    p = ctrl_c_at("iolab.run.runner:model_document", 1, "run", "latency", *quick)
    [run] = list(runs.iterdir())
    said = " ".join(p.stderr.split())
    assert p.returncode == 130 and "Traceback" not in said, said
    assert f"interrupted after run {run.name} was complete: the run is complete and stored in {run};" in said, said
    assert f"its report was not written (`iolab report {run}` writes it)" in said, said
    m = json.loads((run / "manifest.json").read_text())
    assert (m["state"], m["error"]) == ("complete", None)
    assert iolab("report", str(run)).returncode == 0  # as the message says
    # a resumed run the same: stopped after its first round, then Ctrl-C as the resume stores its end
    runs2 = tmp_path / "runs2"
    p = ctrl_c_at("iolab.store.runstore:RunStore.finish_round", 1, "run", "latency", *quick[:-1], str(runs2))
    [run] = list(runs2.iterdir())
    assert p.returncode == 130 and json.loads((run / "manifest.json").read_text())["state"] == "interrupted"
    p = ctrl_c_at("iolab.run.runner:model_document", 1, "resume", str(run))
    said = " ".join(p.stderr.split())
    assert p.returncode == 130 and f"after run {run.name} was complete: the run is complete and stored" in said, said
    assert "interrupted again" not in said and f"`iolab report {run}` writes it" in said, said
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"


CLAIMER = """
import sys, time
from pathlib import Path
from iolab import targets
targets.claim(targets.parse_target(sys.argv[1])).note_run(sys.argv[2], Path("/somewhere/runs") / sys.argv[2])
print("held", flush=True)
time.sleep(600)
"""


def test_runs_names_the_lock_files_killed_runs_left_and_leaves_them(tmp_path):
    locks = tmp_path / "locks"
    env = dict(os.environ, IOLAB_LOCK_DIR=str(locks))
    holders = {}
    for name in ("killed-run", "live-run"):
        holders[name] = subprocess.Popen(
            [sys.executable, "-c", CLAIMER, f"file:{tmp_path}/{name}.img?size=1MiB", name],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert holders[name].stdout.readline().strip() == "held"
    try:
        holders["killed-run"].kill()  # kill -9: nothing of iolab's runs, the kernel drops its lock
        holders["killed-run"].wait()
        before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in locks.iterdir()}
        assert len(before) == 2
        (tmp_path / "runs").mkdir()  # a missing runs directory is an error of its own
        res = iolab("runs", "--runs-dir", str(tmp_path / "runs"), env={"IOLAB_LOCK_DIR": str(locks)})
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        err = " ".join(res.stderr.split())
        assert "1 stale lock file that no process holds" in err and "run killed-run" in err and "live-run" not in err
        [stale] = [n for n, (_, data) in before.items() if b"killed-run" in data]
        assert str(locks / stale) in err and "leaves them in place" in err
        assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in locks.iterdir()} == before
    finally:
        for p in holders.values():
            p.kill()
            p.wait()


def test_a_run_a_test_kills_leaves_its_lock_file_in_that_tests_own_lock_directory(tmp_path):
    """Each test's runs claim their targets in a lock directory of its own (tests/conftest.py sets
    IOLAB_LOCK_DIR): the runs the suite kills left their lock files in the machine's
    /run/iolab/locks, where `iolab runs` then listed some 60 stale ones of the suite's."""
    from iolab.targets.lock import DEFAULT_LOCK_DIR, stale_locks

    own = Path(os.environ.get("IOLAB_LOCK_DIR", DEFAULT_LOCK_DIR))
    spec = f"file:{tmp_path}/killed.img?size=1MiB"
    holder = subprocess.Popen([sys.executable, "-c", CLAIMER, spec, "killed-run"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
    finally:
        holder.kill()  # kill -9: nothing of iolab's runs, the lock file stays
        holder.wait()
    [lock] = [p for p, record in stale_locks() if record.get("path") == str(tmp_path / "killed.img")]
    assert lock.parent == own and own != DEFAULT_LOCK_DIR and own.is_relative_to(tmp_path.parent)


# iolab with /proc/self/mountinfo read from a fake tree (targets/host.py's seam): the first
# argument is that tree, the rest iolab's.
ON_FAKE_PROC = (
    "import sys; from pathlib import Path; import iolab.targets.host as h; h.PROC = Path(sys.argv.pop(1)); "
    "from iolab.cli.main import main; main()"
)


def test_a_runs_directory_on_a_network_filesystem_is_named_as_the_cause(tmp_path):
    # SQLite failing on a 9p runs directory said only "not a readable SQLite database (disk I/O error)"
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr
    [run] = list(runs.iterdir())
    m = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**m, "state": "interrupted"}))
    # SQLite's real answer where it cannot map the WAL index: "disk I/O error"
    os.mkfifo(run / "results.db-shm")
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    mounts = Path("/proc/self/mountinfo").read_text()
    (proc / "self" / "mountinfo").write_text(f"{mounts}999 1 0:99 / {runs} rw - 9p trans9p rw,trans=virtio\n")
    env = dict(os.environ, COLUMNS="300")
    said = subprocess.run(
        [sys.executable, "-c", ON_FAKE_PROC, str(proc), "resume", str(run), "--no-report"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert said.returncode == 2 and "Traceback" not in said.stderr, said.stderr
    err = " ".join(said.stderr.split())
    assert "results.db: SQLite cannot work on this file (disk I/O error)" in err, err
    assert f"the run directory is on 9p (mounted at {runs})" in err and "POSIX locks" in err
    assert "Keep runs on a local filesystem (--runs-dir DIR or $IOLAB_RUNS) and copy the run directory" in err
    # on a local filesystem the same error is not put down to the network
    local = iolab("resume", str(run), "--no-report")
    assert local.returncode == 2 and "disk I/O error" in local.stderr and "9p" not in local.stderr


def test_a_stopped_trace_analysis_leaves_nothing_it_made_in_a_folder_that_was_there(tmp_path):
    """Ctrl-C while the plots were drawn (plots/ made, none written yet) left an empty plots/ in
    the folder the analysis was given; the workload files it had written were removed."""
    from .test_rwsw import msr_trace

    msr_trace(tmp_path / "t.csv")
    table = tmp_path / "t.parquet"
    assert iolab("trace", "import", str(tmp_path / "t.csv"), "-f", "msr", "-o", str(table)).returncode == 0
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("someone's notes\n")
    analyze = ("trace", "analyze", str(table), "--step", "1s", "-o", str(out))
    p = ctrl_c_at("iolab.pages.report.stream_plots:drawings", 1, *analyze)
    assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr
    assert sorted(f.name for f in out.iterdir()) == ["notes.txt"]
    # an earlier analysis there, stopped between two plots: none of this one's files is left
    assert iolab(*analyze).returncode == 0 and len(list((out / "plots").glob("*.svg"))) == 4
    p = ctrl_c_at("iolab.pages.report.stream_plots:standalone_svg", 2, *analyze)
    assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr
    assert sorted(f.name for f in out.iterdir()) == ["notes.txt", "plots"] and not list((out / "plots").iterdir())


def test_a_stopped_trace_analysis_leaves_no_folder_it_made(tmp_path):
    """Ctrl-C just after `trace analyze` made its --out folder (and its missing parents), before
    writing into it, left them empty; one while the plots were drawn removed --out but left the
    parents it had made. What the command made goes; the folder that was there stays."""
    from .test_rwsw import msr_trace

    msr_trace(tmp_path / "t.csv")
    table = tmp_path / "t.parquet"
    assert iolab("trace", "import", str(tmp_path / "t.csv"), "-f", "msr", "-o", str(table)).returncode == 0
    for where in ("iolab.store.durable:room_for", "iolab.pages.report.stream_plots:drawings"):
        p = ctrl_c_at(where, 1, "trace", "analyze", str(table), "--step", "1s", "-o", str(tmp_path / "a" / "b" / "wl"))
        assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr
        assert sorted(f.name for f in tmp_path.iterdir()) == ["t.csv", "t.parquet"], where


def test_ctrl_c_as_a_run_is_claimed_leaves_no_claim_file(tmp_path):
    """A stop between the claim file's creation and its lock (`audit --store` as it began) left an
    empty writer.lock in the run, which the next writer took for a dead writer's claim."""
    from .conftest import quick_sim_run

    run = quick_sim_run(tmp_path / "runs")
    p = ctrl_c_at("iolab.store.writer:_lock", 1, "audit", str(run), "--store")
    assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr
    assert not (run / "writer.lock").exists()
    assert iolab("audit", str(run), "--store").returncode == 0  # and the next writer claims it as ever


def test_a_second_ctrl_c_while_a_stopped_export_cleans_up_leaves_no_folder_it_made(tmp_path):
    """The first Ctrl-C stops the export; a second as the folders it made are removed cut that
    removal short: the empty folders a/b/c were left."""
    from .conftest import quick_sim_run

    run = quick_sim_run(tmp_path / "runs")
    out = tmp_path / "a" / "b" / "c"
    p = ctrl_c_at("iolab.pages.export:_write_all,pathlib:Path.rmdir", 1, "export", str(run), "-o", str(out))
    assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["runs"]
