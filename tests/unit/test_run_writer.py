"""One writer per run directory (store/writer.py): another process is refused naming the holder,
a stale claim is taken over, a process that holds the claim may take it again. And a cell set
aside always names its own raw files (store/rawaside.py), also after a resume was stopped midway."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import subprocess
import sys

import pytest

from iolab.core.errors import Exit, RefusedError
from iolab.core.procs import boot_id, process_start
from iolab.store import rawaside, runstore, writer
from iolab.store.runstore import RunStore
from iolab.store.writer import WRITER_FILE, claim_run

OTHER = "import sys; from iolab.store.writer import claim_run; claim_run(sys.argv[1])"


def other_claims(d) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", OTHER, str(d)], capture_output=True, text=True)


def test_another_process_is_refused_naming_the_holder_and_takes_it_once_released(tmp_path):
    held = claim_run(tmp_path)
    again = claim_run(tmp_path)  # the same process: its store and the report it writes
    assert again is held
    held.release()
    res = other_claims(tmp_path)
    assert res.returncode != 0 and f"iolab process {os.getpid()} (`iolab" in res.stderr, res.stderr
    assert "RefusedError" in res.stderr and RefusedError.exit_code == Exit.REFUSED
    again.release()
    assert not (tmp_path / WRITER_FILE).exists()
    assert other_claims(tmp_path).returncode == 0


def no_flock(monkeypatch) -> None:
    def refuse(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)


def plant(d, pid: int, start: int | None) -> None:
    (d / WRITER_FILE).write_text(json.dumps({"pid": pid, "pid_start": start, "boot_id": boot_id(), "since": "then"}))


def test_without_flock_the_record_decides_a_live_holder_refuses_a_dead_or_reused_pid_is_stale(tmp_path, monkeypatch):
    no_flock(monkeypatch)
    parent = os.getppid()  # alive as long as this test runs
    plant(tmp_path, parent, process_start(parent))
    with pytest.raises(RefusedError, match=f"iolab process {parent} .*kill {parent}"):
        claim_run(tmp_path)
    plant(tmp_path, parent, (process_start(parent) or 0) + 1)  # its pid, reused by another process
    claim_run(tmp_path).release()
    dead = subprocess.Popen(["true"])
    dead.wait()
    plant(tmp_path, dead.pid, None)
    got = claim_run(tmp_path)
    assert json.loads((tmp_path / WRITER_FILE).read_text())["pid"] == os.getpid()
    got.release()
    assert os.path.realpath(tmp_path) not in writer._HELD


def own_files_of(s) -> dict[str, list[str]]:
    return {f"{c.phase}-r{c.round}-c{c.ordinal}": c.raw_files for c in s.cells(kind="interrupted", complete_only=False)}


def stored_run_with_raw_files(tmp_path):
    from tests.unit.test_store import finished_run

    d = finished_run(tmp_path, rounds=2)
    s = RunStore.open(d, writable=True)
    for c in s.cells("main"):
        for f in c.raw_files:
            (d / f).write_text(f"{c.round} {c.ordinal}")  # each file says whose it is
    return d, s


def says_whose(d, files: dict[str, list[str]]) -> list[str]:
    """Files that are missing or another cell's (each file was written with its cell's round and ordinal)."""
    wrong = []
    for cell, names in files.items():
        rnd, ordinal = cell.split("-r")[1].split("-c")
        for f in names:
            if not (d / f).is_file() or (d / f).read_text() != f"{rnd} {ordinal}" or "interrupted-" not in f:
                wrong.append(f"{cell}: {f}")
    return wrong


def test_a_resume_stopped_between_naming_and_moving_the_files_set_aside_is_finished_by_the_next(tmp_path, monkeypatch):
    d, s = stored_run_with_raw_files(tmp_path)
    try:
        monkeypatch.setattr(runstore, "carry_out", lambda run_dir, moves: (_ for _ in ()).throw(KeyboardInterrupt))
        with pytest.raises(KeyboardInterrupt):  # stopped after the cells named their new places
            s.set_aside("main", 2, ["main-r02-"])
        monkeypatch.undo()
        assert s.set_aside("main", 1, ["main-r01-", "main-r02-"]) > 0  # the next resume sets round 1 aside too
        files = own_files_of(s)
        assert len(files) == 2 * 9  # latency: two rounds of 9 cells
        assert says_whose(d, files) == [] and all(files.values())
        assert not list((d / "raw").glob("main-r0[12]-*"))  # nothing left where the rounds run again write
    finally:
        s.close()


def test_cells_whose_files_a_stopped_resume_moved_unrecorded_name_those_not_the_next_attempts(tmp_path):
    """As two resumes at once, or one stopped between moving and recording, left a run before
    the claim and the recording order: the round's files in raw/interrupted-1/, its cells still
    naming raw/. Setting the round aside again must not leave them naming raw/, where the round
    run again writes its own files."""
    d, s = stored_run_with_raw_files(tmp_path)
    try:
        moved = rawaside.move_aside(d / "raw", rawaside.raw_files(d / "raw", ("main-r02-",)))
        assert moved and all(v.startswith("raw/interrupted-1/") for v in moved.values())
        s.set_aside("main", 2, ["main-r02-"])
        files = own_files_of(s)
        assert files and says_whose(d, files) == [], files
        assert all(f.startswith("raw/interrupted-1/") for names in files.values() for f in names)
    finally:
        s.close()
