"""The run store as readers and writers meet it: read paths leave the run untouched (finished,
running and killed runs), broken runs are listed with the reason, a reused pid does not keep a
dead run 'running', a full results disk ends the run cleanly, compare refuses what is not a
run or the same run twice."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from pathlib import Path

import pytest

from iolab.api import registry
from iolab.api.comparisons import compare
from iolab.api.runlist import list_runs
from iolab.core import procs
from iolab.core.errors import IolabError
from iolab.run import resume
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, start
from iolab.store import resultsdb
from iolab.store import runstore as store_mod
from iolab.store.durable import RESERVE_NAME
from iolab.store.runstore import ResultsDiskFull, RunStore
from tests.unit.test_runner import TARGET, ScriptedEngine, profile


def snapshot(d):
    """Every file under d with its size, mtime and content digest."""
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            st = os.stat(p)
            out[os.path.relpath(p, d)] = (st.st_size, st.st_mtime_ns, hash(open(p, "rb").read()))
    return out


def finished_run(tmp_path, rounds=3):
    plan = registry.build_plan("latency", profile(max_rounds=rounds), TARGET)
    s = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 1000 * (rnd + 1)), RunOptions(), tmp_path)
    Runner(plan, TARGET, ScriptedEngine(lambda rnd, call: 1000 * (rnd + 1)), s, RunOptions()).run()
    s.close()
    return s.dir


def read_everything(path):
    s = RunStore.open(path)
    try:
        return s.manifest.state, len(s.cells()), s.complete_rounds("main")
    finally:
        s.close()


def test_reading_a_finished_run_creates_and_modifies_nothing(tmp_path):
    d = finished_run(tmp_path)
    before = snapshot(d)
    assert read_everything(d) == ("complete", 3 * 9, [1, 2, 3])
    [r] = list_runs(tmp_path)
    assert r.state == "complete" and r.problem is None
    assert snapshot(d) == before


def test_reading_a_running_run_sees_committed_cells_and_creates_nothing(tmp_path):
    plan = registry.build_plan("latency", profile(max_rounds=2), TARGET)
    writer = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    Runner(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), writer, RunOptions()).run_phase(plan.phases[0], 0)
    writer.manifest.state = "running"  # this process is the live writer, its connection open
    writer.write_manifest()
    names = set(snapshot(writer.dir))
    assert read_everything(writer.dir) == ("running", 2 * 9, [1, 2])
    assert set(snapshot(writer.dir)) == names
    writer.close()


def test_reading_a_killed_run_uses_its_log_without_touching_it(tmp_path):
    plan = registry.build_plan("latency", profile(max_rounds=2), TARGET)
    pid = os.fork()
    if pid == 0:  # the writer: stores two rounds and dies without closing anything (kill -9)
        try:
            s = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
            Runner(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), s, RunOptions()).run_phase(plan.phases[0], 0)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    [d] = list(tmp_path.iterdir())
    assert (d / "results.db-wal").stat().st_size > 0  # the cells are only in the log
    before = snapshot(d)
    assert read_everything(d) == ("interrupted", 2 * 9, [1, 2])
    [r] = list_runs(tmp_path)
    assert r.state == "interrupted"
    assert snapshot(d) == before


def test_a_finished_run_leaves_no_log_even_while_its_writer_is_still_open(tmp_path):
    """An in-process caller (CliRunner, the API) may keep the writer open after the run ends:
    the run is still a plain database, which readers open in place, not a log to copy."""
    plan = registry.build_plan("latency", profile(max_rounds=2), TARGET)
    s = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    Runner(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), s, RunOptions()).run()
    assert s.manifest.state == "complete"
    assert not (s.dir / "results.db-wal").exists() and not (s.dir / "results.db-shm").exists()
    assert read_everything(s.dir) == ("complete", 2 * 9, [1, 2])
    s.close()


def test_a_log_that_goes_away_while_a_reader_copies_it_is_read_from_the_database(tmp_path, monkeypatch):
    """A dead writer's log is copied aside; if the writer's last connection closes meanwhile
    (the log moved into the database and deleted), the reader reads the database in place."""
    plan = registry.build_plan("latency", profile(max_rounds=2), TARGET)
    writer = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    Runner(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), writer, RunOptions()).run_phase(plan.phases[0], 0)
    writer.manifest.pid = 2**22 + 1  # no such process: the run reads as killed, its log as left behind
    writer.write_manifest()
    assert (writer.dir / "results.db-wal").stat().st_size > 0
    real = resultsdb.shutil.copyfile

    def copy_then_close(src, dst):
        out = real(src, dst)
        if str(src).endswith("results.db"):
            writer._db.close()  # the last connection: SQLite checkpoints and deletes the log
        return out

    monkeypatch.setattr(resultsdb.shutil, "copyfile", copy_then_close)
    assert read_everything(writer.dir) == ("interrupted", 2 * 9, [1, 2])
    assert not (writer.dir / "results.db-wal").exists()


def test_runs_started_in_the_same_second_by_other_processes_get_their_own_directories(tmp_path, monkeypatch):
    """A fleet starts its drives' runs at once, each in its own process: another process may make
    the name between this one's look and its mkdir (CI: 'cannot create a run directory there
    (File exists: ...)'). Here every look says the name is free, as it was a moment before."""
    plan = registry.build_plan("latency", profile(max_rounds=1), TARGET)
    first = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda p: False if p.parent == tmp_path else real_exists(p))
    second = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    third = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    names = {s.dir.name for s in (first, second, third)}
    assert len(names) == 3 and all(s.dir.parent == tmp_path for s in (first, second, third))
    for s in (first, second, third):
        s.close()


def test_a_folder_without_a_database_is_refused_and_left_as_it_was(tmp_path):
    d = finished_run(tmp_path / "runs")
    export = tmp_path / "export"
    export.mkdir()
    (export / "manifest.json").write_bytes((d / "manifest.json").read_bytes())
    with pytest.raises(IolabError, match="no results.db"):
        RunStore.open(export)
    with pytest.raises(IolabError, match="no results.db"):
        compare([export, d], tmp_path / "cmp")
    assert sorted(p.name for p in export.iterdir()) == ["manifest.json"]


def test_compare_refuses_the_same_run_twice(tmp_path):
    d = finished_run(tmp_path / "runs")
    for refs in ([d, d], [d, str(d) + "/"], [d, tmp_path / "runs" / ".." / "runs" / d.name]):
        with pytest.raises(IolabError, match="same run"):
            compare(refs, tmp_path / "cmp")
    assert not (tmp_path / "cmp").exists()


def test_a_copy_is_the_same_run_but_another_run_of_the_same_second_is_not(tmp_path):
    """A run id is the start's second, the test and the target's name: two runs of one test and
    target started in one second, in other runs directories, share it (a fresh clone's CI ran two
    quick WSAT runs under a second each and compare refused them as "the same run"). A copy of a
    run directory is the same run (it keeps the uid); another run is not. A run stored before
    uids is told by the process that wrote it."""
    import shutil

    from iolab.figures.compare import open_runs

    d = finished_run(tmp_path / "runs")
    assert len(json.loads((d / "manifest.json").read_text())["uid"]) == 32
    copy = tmp_path / "copy" / d.name
    shutil.copytree(d, copy)
    with pytest.raises(IolabError, match="same run"):
        open_runs([d, copy])

    def changed(where: str, **fields) -> Path:
        other = tmp_path / where / d.name
        shutil.copytree(d, other)
        m = json.loads((other / "manifest.json").read_text())
        (other / "manifest.json").write_text(json.dumps({**m, **fields}))
        return other

    assert open_runs([d, changed("other", uid="another run")]) == [d, tmp_path / "other" / d.name]
    old, old_copy = changed("old", uid=None), changed("old_copy", uid=None)
    with pytest.raises(IolabError, match="same run"):
        open_runs([old, old_copy])
    m = json.loads((d / "manifest.json").read_text())
    assert open_runs([old, changed("old_other", uid=None, pid=m["pid"] + 1)])  # written by another process


def test_runs_lists_every_run_and_marks_broken_ones_with_the_reason(tmp_path):
    good = finished_run(tmp_path)
    bad_db = finished_run(tmp_path)
    (bad_db / "results.db").write_bytes(b"this is not a database" * 100)
    bad_manifest = finished_run(tmp_path)
    (bad_manifest / "manifest.json").write_text('{"run_id": "x", "test":')
    no_manifest = finished_run(tmp_path)
    (no_manifest / "manifest.json").unlink()
    (tmp_path / "compare").mkdir()  # not a run: not listed
    runs = {r.path.name: r for r in list_runs(tmp_path)}
    assert set(runs) == {good.name, bad_db.name, bad_manifest.name, no_manifest.name}
    assert runs[good.name].state == "complete" and runs[good.name].problem is None
    assert runs[bad_db.name].state == "broken" and "results.db" in runs[bad_db.name].problem
    assert runs[bad_db.name].test == "latency"  # what the manifest says is still shown
    assert runs[bad_manifest.name].state == "broken" and "not valid JSON" in runs[bad_manifest.name].problem
    assert runs[no_manifest.name].state == "broken" and "manifest.json" in runs[no_manifest.name].problem


def test_a_reused_pid_does_not_keep_a_dead_run_running(tmp_path):
    d = finished_run(tmp_path)
    m = json.loads((d / "manifest.json").read_text())
    m.update(state="running", ended=None, pid=os.getpid())  # our pid: alive, but another process now
    m["pid_start"] = procs.process_start(os.getpid()) - 1
    (d / "manifest.json").write_text(json.dumps(m))
    [r] = list_runs(tmp_path)
    assert r.state == "interrupted"
    m["pid_start"] = procs.process_start(os.getpid())
    m["boot_id"] = "00000000-0000-0000-0000-000000000000"  # written before a reboot
    (d / "manifest.json").write_text(json.dumps(m))
    assert RunStore.open(d).manifest.state == "interrupted"
    m["boot_id"] = procs.boot_id()  # the same process, same boot: still running
    (d / "manifest.json").write_text(json.dumps(m))
    assert RunStore.open(d).manifest.state == "running"


def test_manifest_is_replaced_atomically_and_a_failed_write_leaves_no_tmp(tmp_path, monkeypatch):
    d = finished_run(tmp_path)
    s = RunStore.open(d, writable=True)
    old = (d / "manifest.json").read_text()
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    s.manifest.notes.append("changed")
    s.write_manifest()
    assert len(synced) == 2  # the file, then its directory
    assert "changed" in (d / "manifest.json").read_text()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    s.manifest.notes.append("again")
    with pytest.raises(ResultsDiskFull, match="results disk full at"):
        s.finish("failed", "x")
    assert "changed" in (d / "manifest.json").read_text() and "again" not in (d / "manifest.json").read_text()
    assert sorted(p.name for p in d.iterdir() if "manifest" in p.name) == ["manifest.json"]  # no aside file left
    assert old != (d / "manifest.json").read_text()


def test_a_symlink_at_the_old_fixed_aside_name_is_not_followed(tmp_path):
    """The manifest was written to the fixed name manifest.json.tmp with open(), which followed a
    symlink planted there: the file it named (someone's) got the manifest, and the link itself was
    renamed over manifest.json. A fresh name made with O_EXCL is never anyone's file."""
    d = finished_run(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's data\n")
    (d / "manifest.json.tmp").symlink_to(victim)
    s = RunStore.open(d, writable=True)
    s.manifest.notes.append("changed")
    s.write_manifest()
    assert victim.read_text() == "someone's data\n"
    assert not (d / "manifest.json").is_symlink() and "changed" in (d / "manifest.json").read_text()
    assert (d / "manifest.json.tmp").is_symlink()  # not iolab's: left as it was


def test_results_disk_full_marks_the_run_failed_with_that_reason(tmp_path):
    class FullDisk(ScriptedEngine):
        def run(self, target, workload, raw_dir, tag, progress=None):
            if self.calls >= 5:
                raise OSError(errno.ENOSPC, "No space left on device", str(raw_dir / f"{tag}.json"))
            return super().run(target, workload, raw_dir, tag, progress)

    plan = registry.build_plan("latency", profile(), TARGET)
    s = start(plan, TARGET, FullDisk(lambda rnd, call: 100), RunOptions(), tmp_path)
    with pytest.raises(ResultsDiskFull, match=f"results disk full at {s.dir}"):
        Runner(plan, TARGET, FullDisk(lambda rnd, call: 100), s, RunOptions()).run()
    r = RunStore.open(s.dir)
    assert r.manifest.state == "failed" and r.manifest.error.startswith("results disk full at")
    assert len(r.cells(complete_only=False)) == 4  # 1 preconditioning + 4 cells, all kept
    assert not (s.dir / RESERVE_NAME).exists()


def test_when_not_even_the_failure_can_be_stored_it_says_so(tmp_path, monkeypatch):
    d = finished_run(tmp_path)
    s = RunStore.open(d, writable=True)

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_mod, "write_atomic", full)
    with pytest.raises(ResultsDiskFull, match="not even the run's end could be stored"):
        s.finish("failed", "results disk full")


def test_a_simulated_drive_cannot_continue_and_its_phase_runs_again(tmp_path, monkeypatch):
    # 1 preconditioning + 9 cells per round: call 1 + 2*9 + 3 is inside round 3
    plan = registry.build_plan("latency", profile(max_rounds=5), TARGET)
    s = start(plan, TARGET, ScriptedEngine(lambda r, c: 100), RunOptions(), tmp_path)
    with pytest.raises(KeyboardInterrupt):
        Runner(plan, TARGET, ScriptedEngine(lambda r, c: 100, interrupt_at=1 + 2 * 9 + 3), s, RunOptions()).run()
    s.close()
    engine = ScriptedEngine(lambda r, c: 100)
    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    r, _ = resume.prepare(s.dir, lambda t, **_: engine, registry.build_plan)
    assert r.start.phase == 0 and r.start.round == 0
    assert any("simulated drive" in n and "runs again from its purge" in n for n in r.notes)
    resume.run(r, engine)
    done = RunStore.open(s.dir)
    assert done.manifest.state == "complete" and engine.purges == ["auto"]
    assert done.complete_rounds("main") == [1, 2, 3, 4, 5]
    assert len(done.cells()) == 5 * 9  # no duplicate rounds
    assert len(done.cells(kind="interrupted", complete_only=False)) == 1 + 2 * 9 + 2  # kept, set aside


def test_resume_refuses_a_complete_run_without_touching_it(tmp_path):
    d = finished_run(tmp_path)
    before = snapshot(d)
    with pytest.raises(IolabError, match="complete: nothing to resume"):
        resume.prepare(d, lambda t, **_: None, registry.build_plan)
    assert snapshot(d) == before


@pytest.mark.parametrize("table", ["steady", "histograms", "series", "rounds"])
def test_a_writer_refuses_a_results_db_that_lost_a_table_and_changes_nothing(tmp_path, table):
    """Before: opening the run for writing (what resume does once its read-only look passed)
    made the lost table again, empty, and the run went on without the rows it had stored there."""
    d = finished_run(tmp_path)
    with sqlite3.connect(d / "results.db") as db:
        db.execute(f"DROP TABLE {table}")
    db.close()
    before = snapshot(d)
    with pytest.raises(IolabError, match=f"has lost its {table} table .* Nothing was changed"):
        RunStore(d, writable=True)
    assert snapshot(d) == before
    assert not (d / "writer.lock").exists()  # the claim it took is given up


def test_a_corrupt_database_is_a_clear_error(tmp_path):
    d = finished_run(tmp_path)
    with open(d / "results.db", "r+b") as f:
        f.seek(0)
        f.write(b"garbage" * 20)
    with pytest.raises(IolabError, match="not a readable SQLite database"):
        RunStore.open(d)
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(d / "results.db").execute("select * from cells").fetchall()


def test_iolab_runs_prints_broken_runs_with_the_reason(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    good = finished_run(tmp_path)
    bad = finished_run(tmp_path)
    (bad / "results.db").write_bytes(b"[not] a database" * 100)
    # The real command in its own process: an in-process console keeps the width an earlier
    # test gave it, and at 80 columns the table folds the state column.
    res = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "runs", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="300"),
    )
    assert res.returncode == 0, res.stderr
    assert good.name in res.stdout and bad.name in res.stdout
    assert "broken" in res.stdout and "not a readable SQLite database" in res.stdout
    assert "1 of 2 runs cannot be read" in res.stderr


def test_a_database_without_a_manifest_is_listed_broken_and_refused_by_name(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from iolab.store.manifest import manifest_of

    good = finished_run(tmp_path)
    orphan = tmp_path / "orphan"
    orphan.mkdir()
    RunStore(orphan).close()  # results.db with its tables, but no manifest.json
    res = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "runs", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="300"),
    )
    assert res.returncode == 0, res.stderr
    assert good.name in res.stdout and "orphan" in res.stdout and "manifest.json: missing." in res.stdout
    assert "Traceback" not in res.stderr
    s = RunStore(orphan, writable=False)
    try:
        with pytest.raises(IolabError, match="not an iolab run directory \\(no manifest.json\\)"):
            manifest_of(s)
    finally:
        s.close()


def test_a_run_being_created_is_listed_whole_never_half_set_up(tmp_path, monkeypatch):
    """`iolab runs` (and anything waiting for a run) may look while a run directory is being
    made: from the moment it holds raw/ or a database it already holds its manifest, and a
    reader sees a running run with nothing stored before its writer has made results.db."""
    seen = []
    real_mkdir = store_mod.Path.mkdir

    def watching_mkdir(self, *a, **kw):
        real_mkdir(self, *a, **kw)
        if self.name == "raw":
            seen.append([(r.run_id, r.state, r.problem) for r in list_runs(tmp_path)])
            # and a reader that opens it then (CI's Ctrl-C test did) sees a run with nothing stored
            reader = RunStore.open(self.parent)
            seen.append((reader.manifest.state, reader.cells(complete_only=False)))
            reader.close()

    monkeypatch.setattr(store_mod.Path, "mkdir", watching_mkdir)
    plan = registry.build_plan("latency", profile(max_rounds=1), TARGET)
    s = start(plan, TARGET, ScriptedEngine(lambda rnd, call: 100), RunOptions(), tmp_path)
    assert seen == [[(s.manifest.run_id, "running", None)], ("running", [])]


def test_runs_table_never_cuts_a_run_id_at_80_columns(tmp_path):
    from typer.testing import CliRunner

    from iolab.cli.app import app

    d = finished_run(tmp_path)
    out = CliRunner().invoke(app, ["runs", "--runs-dir", str(tmp_path)], env={"COLUMNS": "80"}).stdout
    assert "…" not in out
    first_column = "".join(line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│"))
    assert d.name in first_column, out


def test_stray_raw_files_of_a_cell_are_set_aside_but_stored_output_never_moves(tmp_path):
    d = finished_run(tmp_path, rounds=1)
    s = RunStore.open(d, writable=True)
    try:
        [named] = s.cells("main")[0].raw_files
        stored = d / named
        stored.write_text("{}")  # the stored cell's own output, and a log beside it
        log = stored.with_name(stored.stem + "_bw.1.log")
        log.write_text("0, 1, 0, 0, 0\n")
        assert s.set_aside_strays(stored.stem) == 0
        assert stored.exists() and log.exists() and not (d / "raw" / "interrupted-1").exists()
        strays = [d / "raw" / "main-r02-c00-x.fio", d / "raw" / "main-r02-c00-x_iops.1.log"]
        other = d / "raw" / "main-r02-c00-xy.fio"  # another cell's name that only begins the same
        for f in [*strays, other]:
            f.write_text("x")
        assert s.set_aside_strays("main-r02-c00-x") == 2
        assert sorted(p.name for p in (d / "raw" / "interrupted-1").iterdir()) == sorted(f.name for f in strays)
        assert other.exists() and not any(f.exists() for f in strays)
    finally:
        s.close()


def test_a_replaced_file_is_iolabs_even_when_killed_between_the_rename_and_the_mark(tmp_path, monkeypatch):
    """A coordinator killed with -9 right after fleet.json took its new inode left it unmarked,
    and `iolab resume FLEET` refused to write it (CI, 2026-11-29): the mark must come first."""
    from iolab.store import durable
    from iolab.targets.files import iolab_mark

    p = tmp_path / "fleet.json"
    durable.replace_file(p, b"{}\n", "fleet file")

    rename = os.replace

    def killed(part, path):
        rename(part, path)
        raise KeyboardInterrupt  # stands for the kill: nothing after the rename runs

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        durable.replace_file(p, b'{"a": 1}\n', "fleet file")
    assert p.read_bytes() == b'{"a": 1}\n' and iolab_mark(str(p)) == "output"
    monkeypatch.undo()
    durable.replace_file(p, b"{}\n", "fleet file")  # and it may be written again


def open_fds_of(path: Path) -> int:
    """This process's open file descriptors on `path`."""
    fds = Path("/proc/self/fd")
    found = 0
    for fd in fds.iterdir():
        try:
            found += os.readlink(fd) == str(path)
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return found


@pytest.mark.parametrize("content", [b"not a database, " * 512, b"SQLite format 3\x00" + b"\xff" * 4080])
def test_a_damaged_results_db_refused_for_writing_leaves_no_connection_open(tmp_path, content):
    """Before: the sqlite3.DatabaseError path raised IolabError with the connection open; the
    error's traceback held it, so its descriptor stayed open as long as the caller kept the error."""
    (tmp_path / "results.db").write_bytes(content)
    db = (tmp_path / "results.db").resolve()
    assert open_fds_of(db) == 0
    with pytest.raises(IolabError, match="results.db") as caught:
        resultsdb.open_for_writing(tmp_path, "uid-1")
    assert caught.value is not None  # the error, and its traceback, are still held here
    assert open_fds_of(db) == 0
