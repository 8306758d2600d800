"""`iolab runs` names the stale lock files killed runs left: the newest few one by one, the rest
counted with where they are (a test machine gathered 93, and a page of them hid the runs' list)."""

from __future__ import annotations

import os

from iolab.api import runlist


def test_the_newest_stale_locks_are_named_and_the_older_ones_counted(tmp_path, monkeypatch):
    stale = []
    for i in range(8):
        p = tmp_path / f"file-{i}.lock"
        p.write_text("{}")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))  # lock i is the i-th oldest
        stale.append((p, {"run_id": f"run-{i}", "pid": 100 + i, "target": f"file:/x{i}"}))
    monkeypatch.setattr("iolab.targets.lock.stale_locks", lambda: stale[::-1][3:] + stale[::-1][:3])
    monkeypatch.setattr("iolab.engines.serverpids.leftover_servers", list)
    lines = runlist.leftovers()
    assert lines[0].startswith("8 stale lock files that no process holds")
    named = [ln for ln in lines[1:] if ln.strip().startswith(str(tmp_path))]
    assert [ln.split()[2] for ln in named] == ["run-7,", "run-6,", "run-5,", "run-4,", "run-3,"]
    assert lines[-1] == f"  and 3 older ones in {tmp_path}"


def test_a_few_stale_locks_are_all_named(tmp_path, monkeypatch):
    p = tmp_path / "only.lock"
    p.write_text("{}")
    monkeypatch.setattr("iolab.targets.lock.stale_locks", lambda: [(p, {"pid": 7})])
    monkeypatch.setattr("iolab.engines.serverpids.leftover_servers", list)
    lines = runlist.leftovers()
    assert len(lines) == 2 and "a run that had not started, pid 7" in lines[1] and "older" not in lines[-1]
