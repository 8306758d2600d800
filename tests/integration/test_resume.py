"""kill -9 a real quick run on a file target, then `iolab resume`: the run completes with every
round once, steady state over all of them, and nothing stored lost."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

from iolab.api.runlist import list_runs
from iolab.store.runstore import RunStore
from iolab.store.writer import WRITER_FILE

from .conftest import IOLAB, iolab

ROUNDS = 5  # the steady-state window, no more
CELLS = 9  # latency: 3 mixes × 3 block sizes


def run_and_kill(
    scratch: Path,
    runs: Path,
    when: str,
    run: tuple[str, ...] = (),
    env: dict | None = None,
    also=lambda raw: True,
    cwd: Path | None = None,
    rounds: int = ROUNDS,
) -> Path:
    """Start a quick run (default: latency on a file, of `rounds` rounds) in `cwd` (default: this
    process's) and kill -9 it once a raw file name contains `when` and `also(the raw directory)`
    holds. A test that needs no steady-state window asks for fewer rounds: its resume then
    measures fewer (a round is 9 fio starts), and `when` leaves several cells before the end."""
    run = run or (
        "latency",
        "--cell-time",
        "200ms",
        "--max-rounds",
        str(rounds),
        "-t",
        f"file:{scratch}/target.img?size=64MiB",
    )
    cmd = [*IOLAB, "run", *run, "--quick", "--runs-dir", str(runs), "--no-report"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if any(when in p.name for p in runs.glob("*/raw/*")) and also(next(runs.glob("*/raw"))):
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before the kill point"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    [r] = list_runs(runs)
    assert r.state == "interrupted"
    return r.path


def measure_cells(db: Path) -> list[tuple[int, int]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT round, ordinal FROM cells WHERE kind='measure' ORDER BY round, ordinal").fetchall()
    finally:
        con.close()


def every_raw_output_has_its_cell(run: Path) -> list[str]:
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    named = {f for (raw,) in con.execute("SELECT raw_files FROM cells") for f in json.loads(raw or "[]")}
    con.close()
    outputs = [str(p.relative_to(run)) for p in run.glob("raw/**/*.json")]
    assert outputs
    return [o for o in outputs if o not in named]


def test_kill_in_round_3_then_resume_completes_the_run_without_duplicates(scratch):
    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "main-r03-c03")
    before = measure_cells(run / "results.db")
    assert {r for r, _ in before} >= {1, 2}

    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "continues at round 3" in res.stdout

    store = RunStore.open(run)
    assert store.manifest.state == "complete"
    rounds = store.complete_rounds("main")
    assert rounds == list(range(1, len(rounds) + 1)) and len(rounds) >= 5
    cells = [(c.round, c.ordinal) for c in store.cells()]
    assert len(cells) == len(set(cells)) == len(rounds) * CELLS  # every round once, no duplicates
    assert all(c in cells for c in before if c[0] <= 2)  # the rounds measured before the kill are kept
    # Steady state is evaluated over all rounds: its window includes rounds measured before the kill.
    [verdict] = store.steady_rows("main")
    assert min(verdict.rounds) <= 2
    tracked = {c.round: c.lat_mean_us for c in store.cells("main") if c.cell_key == "0/100 4KiB"}
    assert list(verdict.values) == [tracked[r] for r in verdict.rounds]
    # The killed round's stored cells are kept aside, each with its raw output.
    assert store.cells(kind="interrupted", complete_only=False)
    assert every_raw_output_has_its_cell(run) == []
    store.close()


def test_a_kill_in_round_1_resumes_saying_no_round_had_ended(scratch):
    """Before: 'continues at round 1 (rounds 1-0 are kept …)', in the output, the notes and the report."""
    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "main-r01-c03", rounds=2)  # what it says needs no window
    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    said = " ".join(res.stdout.split())
    assert "main: continues at round 1 (no round of it had ended" in said and "rounds 1-0" not in said, said
    shown = iolab("show", str(run))
    assert "no round of it had ended" in " ".join(shown.stdout.split()) and "rounds 1-0" not in shown.stdout


def test_a_cell_measured_but_not_stored_is_recovered_from_raw(scratch):
    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "main-r02-c05", rounds=3)  # a cell of round 2 is what is recovered
    # Lose the newest stored cell as a kill between fio's end and the commit would.
    con = sqlite3.connect(run / "results.db")
    (cid, tag_file) = con.execute(
        "SELECT id, raw_files FROM cells WHERE kind='measure' ORDER BY id DESC LIMIT 1"
    ).fetchone()
    con.execute("DELETE FROM cells WHERE id=?", (cid,))
    con.commit()
    con.close()
    json_file = next(f for f in json.loads(tag_file) if f.endswith(".json"))
    assert json_file in every_raw_output_has_its_cell(run)

    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "recovered 1 cell of round 2" in res.stdout
    assert every_raw_output_has_its_cell(run) == []
    store = RunStore.open(run)
    cells = [(c.round, c.ordinal) for c in store.cells()]
    assert len(cells) == len(set(cells)) == len(store.complete_rounds("main")) * CELLS


def test_a_last_cell_recovered_from_raw_ends_the_run_and_resume_completes_it(scratch):
    # Killed between the last cell's fio and its commit: the recovered cell ends the last phase,
    # so nothing is left to measure, but the run still needs its end (audit, record). Resume
    # said "every phase is finished", exit 2, and the run stayed interrupted for good.
    runs = scratch / "runs"
    target = f"file:{scratch}/target.img?size=64MiB"
    quick = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--runs-dir", str(runs))
    assert iolab("run", "latency", "-t", target, *quick).returncode == 0
    [run] = [r.path for r in list_runs(runs)]
    con = sqlite3.connect(run / "results.db")
    (cid,) = con.execute("SELECT max(id) FROM cells WHERE kind='measure'").fetchone()
    for table, key in (("histograms", "cell_id"), ("series", "cell_id"), ("cells", "id")):
        con.execute(f"DELETE FROM {table} WHERE {key}=?", (cid,))
    con.execute("UPDATE rounds SET ended=NULL, complete=0")
    con.execute("UPDATE phases SET steady=NULL, rounds=NULL, stop_reason=NULL, ended=NULL")
    con.commit()
    con.close()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(
        state="interrupted", ended=None, error="killed (as by SIGKILL)", audit={}
    )  # as a killed run stores it: no audit yet
    (run / "manifest.json").write_text(json.dumps(manifest))

    res = iolab("resume", str(run), "--no-report", timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "recovered 1 cell of round 1" in res.stdout and "the run is finished now" in res.stdout
    store = RunStore.open(run)
    assert store.manifest.state == "complete" and store.manifest.audit
    assert len(store.cells()) == CELLS and every_raw_output_has_its_cell(run) == []


def test_a_target_written_since_is_not_continued_and_its_phase_runs_again(scratch):
    runs = scratch / "runs"
    # the phase runs again from its purge, all its rounds: three show it as well as five
    run = run_and_kill(scratch, runs, "main-r02-c02", rounds=3)
    target = scratch / "target.img"
    subprocess.run(["fallocate", "--punch-hole", "--offset", "0", "--length", str(64 << 20), str(target)], check=True)
    later = time.time() + 600  # as if purged ten minutes after the kill
    os.utime(target, (later, later))

    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "cannot continue" in res.stdout and "written after the run stopped" in res.stdout
    assert "runs again from its purge" in res.stdout
    store = RunStore.open(run)
    assert store.manifest.state == "complete"
    cells = [(c.round, c.ordinal) for c in store.cells()]
    assert len(cells) == len(set(cells)) == len(store.complete_rounds("main")) * CELLS
    assert len(store.manifest.purges) == 2  # purged again before its new preconditioning
    assert store.cells(kind="interrupted", complete_only=False)


def test_a_phase_that_goes_on_from_a_lost_simulated_state_runs_again_with_the_phases_it_follows(scratch):
    """DIRTH's demand variation starts from the state its preconditioning left (no purge). A
    simulated drive's state ends with the process: resume must precondition again, never
    measure the demand variation on a fresh drive."""
    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "demand_variation-r01-c05", ("dirth", "-t", "sim:enterprise-sas?user_gb=1"))
    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "run again from the purge of preconditioning" in " ".join(res.stdout.split()), res.stdout
    store = RunStore.open(run)
    assert store.manifest.state == "complete"
    assert len(store.manifest.purges) == 2
    redone = {c.phase for c in store.cells(kind="interrupted", complete_only=False)}
    assert redone == {"preconditioning", "demand variation"}, redone
    assert store.cells("preconditioning") and store.cells("demand variation")
    assert len(store.manifest.decisions) == len({d["phase"] for d in store.manifest.decisions})  # none twice


def test_a_phase_without_a_purge_is_not_said_to_run_again_from_its_purge(scratch):
    """DIRTH's operating points on a file (the drive keeps its state), killed in its only round:
    resume said "Instead it runs again from its purge", and the phase has none; it runs again
    from its first round (a pre-write) on the drive as the killed attempt left it."""
    runs = scratch / "runs"
    dirth = ("dirth", "--cell-time", "200ms", "--max-rounds", "2", "--set", "threads=1", "--set", "depths=1,32")
    run = run_and_kill(
        scratch, runs, "operating_points-r01-c01", (*dirth, "-t", f"file:{scratch}/target.img?size=64MiB")
    )
    res = iolab("resume", str(run), "--no-report", timeout=900)
    said = " ".join(res.stdout.split())
    assert res.returncode == 0, res.stderr + res.stdout
    assert (
        "operating points: cannot continue from round 1: no round had finished. Instead it runs again from its first "
        "round; it has no purge, so it starts from the drive as it is now;" in said
    ), said
    assert "from its purge" not in said
    store = RunStore.open(run)
    assert store.manifest.state == "complete" and len(store.manifest.purges) == 1


def test_resume_refuses_another_file_at_the_same_path(scratch):
    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "main-r02-c01")
    target = scratch / "target.img"
    target.rename(scratch / "moved-away.img")  # kept, so its inode cannot be reused at once
    target.write_bytes((scratch / "moved-away.img").read_bytes())  # same path and size, another inode
    # the claim file the killed run left (its dead writer's) is put back as it was by the refusing resume
    assert (run / WRITER_FILE).is_file()
    before = sorted(p.name for p in run.rglob("*"))
    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "not the one the run wrote" in res.stderr and "inode" in res.stderr and "Start a new run" in res.stderr
    assert sorted(p.name for p in run.rglob("*")) == before  # refused before anything changed


def test_resume_of_a_finished_run_is_refused(scratch):
    runs = scratch / "runs"
    res = iolab(
        "run",
        "latency",
        "--quick",
        "--cell-time",
        "200ms",
        "--max-rounds",
        "1",
        "-t",
        f"file:{scratch}/t.img?size=16MiB",
        "--runs-dir",
        str(runs),
        "--no-report",
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    [r] = list_runs(runs)
    res = iolab("resume", str(r.path))
    assert res.returncode != 0 and "nothing to resume" in res.stderr and "Traceback" not in res.stderr


def test_a_full_results_disk_fails_the_run_cleanly_and_keeps_what_is_stored(scratch):
    if os.geteuid() != 0:
        import pytest

        pytest.skip("needs root to mount a tmpfs")
    runs = scratch / "full"
    runs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(runs)], check=True)
    try:
        res = iolab(
            "run",
            "latency",
            "--quick",
            "--cell-time",
            "1s",
            "--max-rounds",
            "6",
            "-t",
            f"file:{scratch}/target.img?size=64MiB",
            "--runs-dir",
            str(runs),
            timeout=900,
        )
        assert res.returncode == 5, res.stderr
        assert "Traceback" not in res.stderr and "results disk full at " in res.stderr
        [run] = list(runs.iterdir())
        assert not list(run.glob(".manifest.json.*.partial")), list(run.iterdir())  # nothing written aside is left
        m = json.loads((run / "manifest.json").read_text())
        assert m["state"] == "failed" and m["error"].startswith(f"results disk full at {run}")
        store = RunStore.open(run)
        assert store.cells(complete_only=False)  # what was stored before the disk filled is kept
        store.check()
        store.close()
        [r] = list_runs(runs)
        assert r.state == "failed" and r.problem is None
    finally:
        subprocess.run(["umount", str(runs)], check=True)


def jobs_running_in(raw: Path) -> dict[int, str]:
    """Live processes (no zombies) working in `raw` on a job file: a run's fio (its jobs are its
    threads) and a wrapper that started it."""
    found = {}
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and os.readlink(p / "cwd") == str(raw):
                cmd = (p / "cmdline").read_bytes()
                stat = (p / "stat").read_text()
                if b".fio\0" in cmd and stat[stat.rfind(")") + 2] != "Z":
                    found[int(p.name)] = stat[stat.rfind(")") + 2 :].split()[19]  # with its start time
        except OSError:
            continue
    return found


def test_resume_ends_the_fio_a_killed_run_left_running_before_it_runs_the_round_again(scratch):
    """kill -9 of iolab reaches only its own child: fio started through a wrapper (here a shell
    that does not exec it) runs on, orphaned, to the end of its cell, writing into raw/ and onto
    the target. `iolab resume` started at once must end it before it sets the round aside: its
    IO must not overlap the round run again, and none of its files may land in raw/ after the
    move. A raw file of a round the run never stored, found where a cell is about to run, is
    set aside too instead of failing the run."""
    wrapper = scratch / "bin" / "fio"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\n{shutil.which("fio")} "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ, PATH=f"{wrapper.parent}:{os.environ['PATH']}")
    tag = "SEQ_1024KiB-r01-c00-100_0_1024KiB"
    run = run_and_kill(
        scratch,
        scratch / "runs",
        tag,
        ("throughput", "--cell-time", "3s", "--max-rounds", "1", "-t", f"file:{scratch}/target.img?size=64MiB"),
        env,
        # the wrapper and fio, which runs its job as a thread beside its main and helper ones
        # (thread=1): the cell's IO is under way
        lambda raw: len(jobs := jobs_running_in(raw)) >= 2 and max(map(task_count, jobs)) >= 3,
    )
    raw = run / "raw"
    orphans = jobs_running_in(raw)
    assert orphans, "no fio left running: the scenario did not happen"
    # Held, so that they are still there when resume looks however slow the machine (resume
    # sends SIGCONT with its SIGTERM); whatever is left at the end is killed.
    for pid in orphans:
        os.kill(pid, signal.SIGSTOP)
    try:
        resume_after_orphans(run, tag, orphans, env["PATH"])
    finally:
        for pid, _ in set(orphans.items()) & set(jobs_running_in(raw).items()):
            os.kill(pid, signal.SIGKILL)


def task_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def resume_after_orphans(run: Path, tag: str, orphans: dict[int, str], path: str) -> None:
    raw = run / "raw"
    # as a process iolab cannot see (another machine sharing the runs directory) would leave it
    stray = raw / "SEQ_128KiB-r00-c00-WIPC_SEQ_128KiB_W_bw.1.log"
    stray.write_text("0, 1, 0, 0, 0\n")

    overlap: list[str] = []
    done = threading.Event()

    def watch() -> None:  # is a process of the killed attempt alive once the round runs again?
        while not done.is_set():
            again = (raw / f"{tag}.fio").exists() and (raw / "interrupted-1" / f"{tag}.fio").exists()
            if again and (alive := set(orphans.items()) & set(jobs_running_in(raw).items())):
                overlap.append(f"pids {sorted(p for p, _ in alive)} still run as round {tag} runs again")
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        res = iolab("resume", str(run), "--no-report", timeout=600, env={"PATH": path})
    finally:
        done.set()
        watcher.join()
    assert overlap == [], res.stdout
    assert res.returncode == 0, res.stderr + res.stdout
    assert "ended pid" in res.stdout and "the stopped run had left running" in res.stdout
    assert not set(orphans.items()) & set(jobs_running_in(raw).items())
    store = RunStore.open(run)
    assert store.manifest.state == "complete"
    cells = [(c.phase, c.round, c.ordinal) for c in store.cells()]
    assert len(cells) == len(set(cells)) == 4  # two phases × two cells, each once
    store.close()
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    named = {f for (files,) in con.execute("SELECT raw_files FROM cells") for f in json.loads(files or "[]")}
    con.close()
    # raw/ holds only stored cells' output; the killed attempt's files and the stray are kept aside
    stored = tuple(f[4:-5] + sep for f in named if f.startswith("raw/") and f.endswith(".json") for sep in "._")
    assert [p.name for p in raw.iterdir() if p.is_file() and not p.name.startswith(stored)] == []
    assert (raw / "interrupted-1" / f"{tag}.fio").exists()
    assert [p.relative_to(raw).parent.name for p in raw.glob(f"interrupted-*/{stray.name}")] != []


def test_a_test_with_typed_parameters_killed_midway_resumes(scratch):
    """A test whose plan stores its parameters' values (every characterisation test, and any
    test with --set) could never be resumed: resume compared the plan it builds (phases and
    values) with the stored one stripped to its phases, and refused with "this iolab builds a
    different plan for its test than the stored one", exit 2, the run interrupted for good."""
    runs = scratch / "runs"
    target = f"file:{scratch}/target.img?size=64MiB"
    qos = ("qos", "--cell-time", "200ms", "--set", "rounds=5", "--set", "precondition_time=1s", "-t", target)
    run = run_and_kill(scratch, runs, "write_rounds-r03", qos)
    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    try:
        rounds = con.execute("SELECT phase, COUNT(*) FROM cells WHERE kind='measure' GROUP BY phase").fetchall()
    finally:
        con.close()
    assert dict(rounds) == {"write rounds": 5, "read rounds": 5}, rounds


def test_a_kill_in_preconditioning_resumes_saying_no_cell_was_stored(scratch):
    """Before: a run stopped in its WIPC (no measured cell) resumed saying 'cannot continue from
    round 0: ... what was measured before is kept (cells marked 'interrupted', 2 raw files ...)',
    when nothing had been measured or stored and no cell was marked."""
    runs = scratch / "runs"
    run = (
        "latency",
        "--cell-time",
        "200ms",
        "--max-rounds",
        "1",
        "-t",
        f"file:{scratch}/target.img?size=64MiB",
    )
    stopped = run_and_kill(scratch, runs, "main-r00-c00", run)
    assert measure_cells(stopped / "results.db") == []
    res = iolab("resume", str(stopped), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    said = " ".join(res.stdout.split())
    assert (
        "main: cannot continue: it stopped during preconditioning, which must run whole. Instead it runs again "
        "from its purge; no cell of it had been stored; the unfinished step's output is kept in "
        "raw/interrupted-*/ (" in said
    ), said
    assert "marked 'interrupted'" not in said and "round 0" not in said
