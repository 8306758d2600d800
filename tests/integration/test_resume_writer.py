"""Two `iolab resume` of one run started together: one writes the run, the other is refused
naming it (store/writer.py), and every cell keeps its own raw files. A simulated drive has no
target lock, so only the run directory's claim keeps the two apart."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs
from iolab.run.runner import cell_tag
from iolab.store.writer import WRITER_FILE

from .conftest import SMALL_SIM, iolab, killed_at

# Runs `iolab ARGS` once the test lets it start (fd GO), and stops it where it would begin measuring
# (Runner.run) until the test releases it (fd RELEASE), after saying so on fd ARRIVED: a barrier that
# holds a resume that went ahead, whatever the machine's speed.
LAUNCH = """
import os, sys
go, arrived, release = (int(a) for a in sys.argv[1:4])
from iolab.run import runner
measure = runner.Runner.run
def held(self, *a, **k):
    os.write(arrived, b"x")
    os.read(release, 1)
    return measure(self, *a, **k)
runner.Runner.run = held
sys.argv = ["iolab", *sys.argv[4:]]
os.read(go, 1)
from iolab.cli.main import main
main()
"""


def interrupted_after_round_3(runs: Path) -> Path:
    """`iolab run iops --quick` on its simulated drive, stopped with SIGINT once round 4 began."""
    killed_at(
        ["run", "iops", "--quick", "--runs-dir", str(runs), "--no-report"], runs, "*/raw/main-r04-*", signal.SIGINT
    )
    [r] = list_runs(runs)
    assert r.state == "interrupted"
    return r.path


def race(run: Path) -> tuple[list[subprocess.Popen], list[str]]:
    """Start two resumes at once, hold those that go ahead until both have or one has ended, then
    let them finish; returns them and what each printed."""
    go_r, go_w = os.pipe()
    arrived_r, arrived_w = os.pipe()
    release_r, release_w = os.pipe()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                LAUNCH,
                str(go_r),
                str(arrived_w),
                str(release_r),
                "resume",
                str(run),
                "--no-report",
            ],
            pass_fds=(go_r, arrived_w, release_r),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for fd in (go_r, arrived_w, release_r):
        os.close(fd)
    os.write(go_w, b"xx")  # both start now
    os.close(go_w)
    # Wait until both have gone ahead, or one has ended: no timing decides which.
    pidfds = [os.pidfd_open(p.pid) for p in procs]
    ahead = 0
    try:
        while ahead < 2:
            ready, _, _ = select.select([arrived_r, *pidfds], [], [], 600)
            assert ready, "neither resume went ahead nor ended in 10 minutes"
            if arrived_r in ready:
                ahead += len(os.read(arrived_r, 2))
            elif ahead <= 1:
                break  # one has ended (refused, or failed before its rounds)
    finally:
        for fd in pidfds:
            os.close(fd)
        os.write(release_w, b"xx")  # let the ones held go on
        os.close(release_w)
    outs = ["".join(p.communicate(timeout=900)) for p in procs]
    os.close(arrived_r)  # open till both ended: one that arrives late must not write into a closed pipe
    return procs, outs


def test_two_resumes_started_together_one_writes_the_other_is_refused_naming_it(scratch):
    runs = scratch / "runs"
    run = interrupted_after_round_3(runs)
    assert not (run / WRITER_FILE).exists()  # the stopped run released its claim
    # A claim as a killed process leaves it (kill -9: its record stays, the kernel drops its flock):
    # stale, the first resume takes it over.
    dead = subprocess.Popen(["true"])
    dead.wait()
    (run / WRITER_FILE).write_text(json.dumps({"pid": dead.pid, "command": "iolab run iops", "since": "earlier"}))

    procs, outs = race(run)
    went_on = [i for i, p in enumerate(procs) if p.returncode == 0]
    assert len(went_on) == 1, outs
    winner, loser = procs[went_on[0]], procs[1 - went_on[0]]
    said = " ".join(outs[1 - went_on[0]].split())
    assert loser.returncode == 3, said  # a write refused (docs/automation.md, exit codes)
    assert f"iolab process {winner.pid} (`iolab resume" in said and "is writing it" in said, said
    assert said.count("Refusing") == 1 and "Traceback" not in said

    [r] = list_runs(runs)
    assert r.state == "complete"
    assert not (run / WRITER_FILE).exists()  # released when the resume ended
    assert own_raw_files(run) == []
    assert sorted(p.name for p in (run / "raw").iterdir() if p.is_dir()) == ["interrupted-1"]


def own_raw_files(run: Path) -> list[str]:
    """What is wrong with the cells' raw files: each cell names files that exist, are its own
    (its tag; a cell set aside has its files under raw/interrupted-N/, a stored one directly in
    raw/), and no other cell names; every engine output in raw/ is some cell's, but for what the
    stop in round 4 caught between fio's output and its cell's row (set aside, RunStore.set_aside)."""
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    rows = con.execute("SELECT phase, round, ordinal, cell_key, kind, raw_files FROM cells").fetchall()
    con.close()
    wrong, named = [], set()
    for phase, rnd, ordinal, key, kind, raw in rows:
        files = json.loads(raw or "[]")
        if not files:
            wrong.append(f"{kind} {phase} r{rnd} c{ordinal}: no raw files")
        for f in files:
            p = Path(f)
            where = p.parent.name.startswith("interrupted-") if kind == "interrupted" else str(p.parent) == "raw"
            if not (run / f).is_file() or not p.name.startswith(cell_tag(phase, rnd, ordinal, key)) or not where:
                wrong.append(f"{kind} {phase} r{rnd} c{ordinal}: {f}")
            if f in named:
                wrong.append(f"named twice: {f}")
            named.add(f)
    outputs = {str(p.relative_to(run)) for p in run.glob("raw/**/*.json")}
    # the output of a cell the stop caught before it was stored (round 4's) is kept aside unnamed
    stray = {o for o in outputs if Path(o).parent.name.startswith("interrupted-") and "-r04-" in Path(o).name}
    return wrong + sorted(f"no cell: {o}" for o in outputs - named - stray)


HOLD = "import sys; from iolab.store.writer import claim_run; claim_run(sys.argv[1]); print('held', flush=True); sys.stdin.read()"


@pytest.fixture(scope="module")
def a_finished_run(tmp_path_factory) -> Path:
    """One complete run, copied by each test that claims, reports or audits it (they made one
    each, of the default drive to steady state: 2.8 CPU-s apiece); what it measured is not read."""
    runs = tmp_path_factory.mktemp("finished")
    args = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "-t", "sim:enterprise-sas?user_gb=0.1")
    res = iolab("run", "iops", *args, "--runs-dir", str(runs), "--no-report")
    assert res.returncode == 0, res.stderr
    [r] = list_runs(runs)
    return r.path


def copied(run: Path, scratch: Path) -> Path:
    runs = scratch / "runs"
    shutil.copytree(run, runs / run.name)
    [r] = list_runs(runs)
    return r.path


def test_audit_store_and_a_report_into_the_run_wait_for_its_writer(a_finished_run, scratch):
    run = copied(a_finished_run, scratch)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"  # it holds the claim now
        for cmd in (("audit", "--store", str(run)), ("report", str(run)), ("resume", str(run))):
            res = iolab(*cmd)
            said = " ".join(res.stderr.split())
            assert res.returncode == 3 and f"iolab process {holder.pid} " in said, (cmd, said)
        assert not (run / "report").exists()
        # reading, and a report written elsewhere, do not write the run
        assert iolab("audit", str(run)).returncode == 0
        res = iolab("report", str(run), "--out", str(scratch / "elsewhere"))
        assert res.returncode == 0, res.stderr
    finally:
        holder.communicate(b"")
    assert iolab("audit", "--store", str(run)).returncode == 0


def test_a_claim_file_that_is_a_hard_link_to_another_file_is_refused_and_that_file_kept(a_finished_run, scratch):
    # O_NOFOLLOW stopped a symbolic link only: `audit --store` wrote its claim record through a
    # hard link planted as writer.lock, into the file it names, and ended 0.
    run = copied(a_finished_run, scratch)
    precious = scratch / "precious.txt"
    precious.write_text("precious data line\n")
    os.link(precious, run / WRITER_FILE)
    for cmd in (("audit", "--store", str(run)), ("report", str(run)), ("resume", str(run))):
        res = iolab(*cmd)
        said = " ".join(res.stderr.split())
        assert res.returncode == 3, (cmd, said)
        assert f"{run / WRITER_FILE} has 2 hard links" in said and "Traceback" not in said, (cmd, said)
        assert precious.read_text() == "precious data line\n", cmd
    assert not (run / "report").exists()
    (run / WRITER_FILE).unlink()  # as the refusal says: the run is written again once it is gone
    assert iolab("audit", "--store", str(run)).returncode == 0
    assert precious.read_text() == "precious data line\n"


def as_found(run: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(run)): (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()}


def test_a_refusing_writer_leaves_a_killed_run_s_claim_file_as_it_found_it(scratch):
    """A run killed with kill -9 leaves its writer.lock (the kernel drops only its flock). Before:
    `iolab report RUN` (and resume, audit --store) of such a run that it then refused took the
    stale claim over and deleted the file on the way out; now every file of the run is as it was."""
    runs = scratch / "runs"
    args = ["run", "latency", "--quick", "-t", SMALL_SIM, "--no-report", "--runs-dir", str(runs)]
    killed_at(args, runs, "*/raw/main-r03-c03*")
    [r] = list_runs(runs)
    assert (r.path / WRITER_FILE).is_file()  # the killed run's claim file
    con = sqlite3.connect(r.path / "results.db")
    with con:  # a tampered round: every command refuses the run
        con.execute("DELETE FROM cells WHERE kind='measure' AND round=1 AND ordinal=2")
    con.close()
    before = as_found(r.path)
    for cmd in (("report", str(r.path)), ("resume", str(r.path), "--no-report"), ("audit", "--store", str(r.path))):
        res = iolab(*cmd, timeout=300)
        said = " ".join(res.stderr.split())
        assert res.returncode == 2 and "marked complete but holds 8 of its 9" in said, (cmd, said)
        assert as_found(r.path) == before, cmd
