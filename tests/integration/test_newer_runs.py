"""A run directory a newer iolab wrote, read and rewritten by this one through the real CLI: a
manifest.json with fields this version does not know (a newer iolab's `ignored_options`, `uid`
were such fields to the iolab before them, which listed those runs as broken) and a results.db
with a table and columns it does not know. `runs`, `show` and `export` read what they know and
say what they do not; `audit --store` and `resume` write the run again and lose nothing stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .conftest import iolab

SIM = "sim:enterprise-sas"
NEWER = {"calibration": {"drive": "x", "ok": True}, "unknown": ["a key named as the reader's own field"]}


def _a_run(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "-t", SIM, "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report",
        "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = [d for d in runs.iterdir() if d.is_dir()]
    return run


def _as_a_newer_iolab_left_it(run: Path, state: str = "complete") -> None:
    """What a newer iolab may have added: manifest fields, a table, a column of a known table
    (with values in it) and one in the steady and phases tables."""
    doc = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps(doc | NEWER | {"state": state}, indent=2))
    con = sqlite3.connect(run / "results.db")
    with con:
        con.execute("CREATE TABLE power_samples (cell_id INTEGER, t_s REAL, mw REAL)")
        con.execute("INSERT INTO power_samples VALUES (1, 0.5, 4200.0)")
        for table in ("cells", "phases", "series"):
            con.execute(f"ALTER TABLE {table} ADD COLUMN energy_j REAL")
        con.execute("UPDATE cells SET energy_j = id * 1.5")
        con.execute("UPDATE phases SET energy_j = 7.0")
    con.close()


def _stored(run: Path) -> tuple[dict, list, list]:
    doc = json.loads((run / "manifest.json").read_text())
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    try:
        power = con.execute("SELECT * FROM power_samples").fetchall()
        energy = con.execute("SELECT id, energy_j FROM cells ORDER BY id").fetchall()
    finally:
        con.close()
    return {k: doc.get(k) for k in NEWER}, power, energy


def test_a_run_a_newer_iolab_wrote_is_read_and_what_is_not_known_is_said(tmp_path):
    run = _a_run(tmp_path)
    _as_a_newer_iolab_left_it(run)
    runs = iolab("runs", "--runs-dir", str(run.parent))
    assert runs.returncode == 0, runs.stdout + runs.stderr
    listed = " ".join(runs.stdout.split())
    assert "complete" in listed and "broken" not in listed, listed
    said = " ".join(runs.stderr.split())
    for part in ("manifest.json field calibration", "manifest.json field unknown", "results.db table power_samples"):
        assert part in said, said
    assert "results.db column cells.energy_j" in said and "kept as stored and not read" in said, said
    [doc] = json.loads(iolab("runs", "--runs-dir", str(run.parent), "--json").stdout)["listed"]
    assert doc["state"] == "complete" and "results.db column phases.energy_j" in doc["unknown"], doc

    shown = iolab("show", str(run))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    text = " ".join(shown.stdout.split())
    assert "does not know manifest.json field calibration" in text and "results.db column series.energy_j" in text
    assert "main: 1 complete round" in text and "R/W 65/35" in text, text  # the run's own table, read
    record = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]
    assert record["state"] == "complete" and record["phases"] and "results.db table power_samples" in record["unknown"]

    out = tmp_path / "export"
    ex = iolab("export", str(run), "--out", str(out), "--format", "json")
    assert ex.returncode == 0, ex.stdout + ex.stderr
    assert json.loads((out / "manifest.json").read_text())["calibration"] == NEWER["calibration"]
    cells = json.loads((out / "cells.json").read_text())
    assert [c["kind"] for c in cells].count("measure") == 9  # latency: 3 mixes × 3 sizes, one round


def test_this_version_writing_the_run_again_loses_nothing_a_newer_iolab_stored(tmp_path):
    run = _a_run(tmp_path)
    _as_a_newer_iolab_left_it(run, state="interrupted")  # killed after its last phase, by the newer iolab
    before = _stored(run)
    assert before[0] == NEWER and before[1] and all(e is not None for _, e in before[2])

    audited = iolab("audit", str(run), "--store")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert _stored(run) == before

    resumed = iolab("resume", str(run), "--no-report")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    doc = json.loads((run / "manifest.json").read_text())
    assert doc["state"] == "complete" and doc["audit"], doc["state"]
    assert _stored(run) == before
