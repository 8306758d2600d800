"""A run directory holding what a newer iolab added, read and written by this version: its
manifest's fields it does not know are kept and written back as they were; results.db's
tables and columns it does not know are left as stored, even in the rows it writes again (a
phase or round begun again, a round's verdict stored again on resume), and its own rows go in
beside them."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

from iolab.api import registry
from iolab.core.results import SecondSample
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, new_manifest, start
from iolab.store.manifest import Manifest, manifest_bytes, unknown_parts
from iolab.store.resultsdb import unknown_schema
from iolab.store.runstore import RunStore
from tests.unit.test_runner import TARGET, ScriptedEngine, profile

TABLES = ("phases", "rounds", "cells", "series", "histograms", "steady")


class SeriesEngine(ScriptedEngine):
    """The scripted engine with one per-second row per cell (the series table gets rows too)."""

    def run(self, *args, **kw):
        r = super().run(*args, **kw)
        return replace(r, series=(SecondSample(r.runtime_s, r.read.iops, r.write.iops, r.mbps, r.lat_mean_us),))


def newer_db(path) -> None:
    con = sqlite3.connect(path / "results.db")
    with con:
        con.execute("CREATE TABLE power_samples (cell_id INTEGER, mw REAL)")
        con.execute("INSERT INTO power_samples VALUES (1, 4200.0)")
        for t in TABLES:
            con.execute(f"ALTER TABLE {t} ADD COLUMN newer REAL")
            con.execute(f"UPDATE {t} SET newer = 1.5")
    con.close()


def newer_values(path) -> dict[str, list]:
    con = sqlite3.connect(f"file:{path / 'results.db'}?mode=ro", uri=True)
    try:
        out = {t: [v for (v,) in con.execute(f"SELECT newer FROM {t} ORDER BY rowid")] for t in TABLES}
        out["power_samples"] = con.execute("SELECT * FROM power_samples").fetchall()
    finally:
        con.close()
    return out


def test_a_manifest_keeps_the_fields_it_does_not_know_and_writes_them_back():
    plan = registry.build_plan("latency", profile(max_rounds=1), TARGET)
    doc = json.loads(manifest_bytes(new_manifest(plan, TARGET, ScriptedEngine(lambda r, c: 1), RunOptions())))
    # as stored: RunStore.create names the run before it writes the manifest (an empty id names no file)
    doc["run_id"] = "20261130-000000-latency-sim"
    newer = doc | {"calibration": {"ok": True}, "unknown": [1, 2]}  # "unknown" is the reader's own field's name
    m = Manifest.from_document(newer)
    assert m.unknown == {"calibration": {"ok": True}, "unknown": [1, 2]} and m.test == "latency"
    assert json.loads(manifest_bytes(m)) == newer  # nothing lost, nothing added
    assert unknown_parts(m) == ["manifest.json field calibration", "manifest.json field unknown"]


def test_a_results_db_with_a_newer_iolabs_tables_and_columns_is_read_and_written_again_keeping_them(tmp_path):
    plan = registry.build_plan("latency", profile(max_rounds=5), TARGET)
    engine = SeriesEngine(lambda rnd, call: 1000)
    s = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, s, RunOptions()).run()
    s.close()
    newer_db(s.dir)
    before = newer_values(s.dir)
    assert all(before[t] for t in TABLES) and all(v == 1.5 for t in TABLES for v in before[t])

    store = RunStore.open(s.dir, writable=True)
    assert len(store.cells("main")) == 5 * 9  # read, the column it does not know left out of the rows
    assert sorted(unknown_schema(store.query)) == [f"column {t}.newer" for t in sorted(TABLES)] + [
        "table power_samples"
    ]
    # the phase run again over its stored rows: begun again, its rounds begun again, each round's
    # verdict stored again, new cells with their series and histograms beside the stored ones
    Runner(plan, TARGET, engine, store, RunOptions()).run_phase(plan.phases[0], 0)
    store.close()
    after = newer_values(s.dir)
    for t in ("phases", "rounds", "steady"):  # the same rows, written again in their known columns
        assert after[t] == before[t], t
    for t in ("cells", "series", "histograms"):  # the stored rows as they were, the new ones beside them
        assert after[t][: len(before[t])] == before[t] and len(after[t]) == 2 * len(before[t]), t
        assert set(after[t][len(before[t]) :]) == {None}, t
    assert after["power_samples"] == before["power_samples"]
