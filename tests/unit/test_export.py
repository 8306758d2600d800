"""`iolab export`: every table behind the report, written as CSV, JSON and Parquet and read back
with another tool (the csv module, json, DuckDB), checked value by value against the store."""

from __future__ import annotations

import csv
import dataclasses
import json
import math

import duckdb
import pytest
from typer.testing import CliRunner

from iolab.cli.app import app
from iolab.core.errors import IolabError
from iolab.core.results import SecondSample
from iolab.core.units import measurable
from iolab.figures.summary import summarise
from iolab.pages.export import export_run
from iolab.store.runstore import RunStore
from tests.unit.test_report import DriveEngine, record

TABLES = ("cells", "window", "steady", "phases", "series", "histograms", "power")


class SeriesEngine(DriveEngine):
    """The report tests' engine plus a per-second series (the scripted engine records none)."""

    def run(self, target, workload, raw_dir, tag, progress=None):
        r = super().run(target, workload, raw_dir, tag, progress)
        series = tuple(
            SecondSample(
                t + 1.0, r.read.iops * (1 + t / 10), r.write.iops * (1 - t / 10), r.mbps, r.lat_mean_us if t else None
            )
            for t in range(3)
        )
        return dataclasses.replace(r, series=series)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    # two phases (1024 KiB and 128 KiB), steady state reached, with histograms and series
    return record(tmp_path_factory.mktemp("runs"), "throughput", SeriesEngine())


def read_table(path, fmt) -> list[dict]:
    """Rows as dicts of text/number/None, read without iolab's code."""
    if fmt == "csv":
        with path.open(newline="") as f:
            return [{k: (None if v == "" else v) for k, v in row.items()} for row in csv.DictReader(f)]
    if fmt == "json":
        return json.loads(path.read_text())
    con = duckdb.connect()
    cur = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    con.close()
    return rows


def obj(v, fmt):
    """A JSON column: JSON text in CSV and Parquet (its JSON type), an object in JSON."""
    return v if fmt == "json" else json.loads(v)


def num(v):
    return None if v is None else float(v)


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_every_table_reads_back_with_the_stored_values(run, tmp_path, fmt):
    store = RunStore.open(run)
    paths = export_run(store, fmt, tmp_path / fmt)
    assert sorted(p.name for p in paths) == sorted([f"{t}.{fmt}" for t in TABLES] + ["manifest.json"])
    tables = {t: read_table(tmp_path / fmt / f"{t}.{fmt}", fmt) for t in TABLES}

    # cells: every complete measured cell and the preconditioning, all metrics
    measured = store.cells()
    pre = store.cells(kind="precondition")
    rows = {int(r["cell_id"]): r for r in tables["cells"]}
    assert len(rows) == len(tables["cells"]) == len(measured) + len(pre) and pre
    for c in measured + pre:
        r = rows[c.id]
        assert (r["phase"], int(r["round"]), r["kind"], r["cell_key"], r["mix"]) == (
            c.phase,
            c.round,
            c.kind,
            c.cell_key,
            c.mix,
        )
        assert same(r["block_size"], c.block_size) and int(r["io_bytes"]) == c.io_bytes
        for metric in (
            "iops",
            "read_iops",
            "write_iops",
            "mbps",
            "read_mbps",
            "write_mbps",
            "runtime_s",
            "lat_mean_us",
            "lat_max_us",
            "read_lat_mean_us",
            "write_lat_mean_us",
            "read_ios",
            "write_ios",
            "read_lat_max_us",
            "write_lat_max_us",
        ):
            assert same(r[metric], getattr(c, metric)), (metric, r[metric], getattr(c, metric))
        # a percentile the cell's IOs cannot measure is exported empty (units.measurable)
        assert same(r["p99_999_us"], c.p99_999 if measurable(99.999, c.ios) else None)
        assert same(r["p99_us"], c.p99 if measurable(99.0, c.ios) else None)
        assert obj(r["workload"], fmt) == c.workload and obj(r["raw_files"], fmt) == c.raw_files
    # a side that did no IO has no latency: missing, not zero
    write_only = next(c for c in measured if c.read_iops == 0)
    assert write_only.read_lat_mean_us is None and rows[write_only.id]["read_lat_mean_us"] is None

    # window: the report's table values, per phase and cell
    summaries = summarise(store)
    expected = [(s.phase.name, a) for s in summaries for a in s.cells]
    assert len(tables["window"]) == len(expected) == 4  # 2 phases × (read, write)
    for r, (phase, a) in zip(tables["window"], expected):
        assert (r["phase"], r["cell_key"], int(r["block_size"])) == (phase, a.key, a.block_size)
        assert (
            r["rounds"] == (",".join(map(str, a.rounds)) if fmt == "csv" else list(a.rounds))
            and int(r["n_rounds"]) == 5
        )
        for metric in ("iops", "mbps", "read_mbps", "write_mbps", "lat_mean_us", "lat_max_us", "p99_999_us"):
            assert same(r[metric], getattr(a, metric)), metric

    # steady: every evaluated round, each variable with window, fit and verdict
    last = {s.phase.name: s.verdicts for s in summaries}
    for phase, verdicts in last.items():
        assert verdicts
        final_round = max(int(r["round"]) for r in tables["steady"] if r["phase"] == phase)
        got = [r for r in tables["steady"] if r["phase"] == phase and int(r["round"]) == final_round]
        assert [r["variable"] for r in got] == [v.name for v in verdicts]
        for r, v in zip(got, verdicts):
            assert (int(r["window_first"]), int(r["window_last"])) == (v.rounds[0], v.rounds[-1])
            values = json.loads(r["window_values"]) if fmt == "csv" else r["window_values"]
            assert values == pytest.approx(list(v.values), rel=1e-12)
            for f in (
                "average",
                "range_measured",
                "range_allowed",
                "slope",
                "intercept",
                "fit_excursion",
                "fit_allowed",
            ):
                assert same(r[f], getattr(v, f)), f
            assert str(r["steady"]).lower() == str(v.steady).lower() == "true"
        # Throughput decides on write MB/s; read MB/s is shown with its own verdict only.
        decides = {r["variable"]: str(r["decides"]).lower() for r in got}
        assert decides == {v.name: "false" if v.name.startswith("Read MB/s") else "true" for v in verdicts}
    assert {int(r["round"]) for r in tables["steady"]} > {5}  # earlier rounds' evaluations kept too

    # phases
    assert [r["phase"] for r in tables["phases"]] == [p.name for p in store.phases()]

    # series and histograms match the store for a sampled cell
    c = measured[-1]
    got = [r for r in tables["series"] if int(r["cell_id"]) == c.id]
    want = store.series(c.id)
    assert len(got) == len(want) > 0
    assert want[0][4] is None and got[0]["lat_mean_us"] is None  # an unmeasured sample stays missing
    for r, (t_s, ri, wi, mbps, lat, mx) in zip(got, want):
        assert (
            same(r["t_s"], t_s)
            and same(r["read_iops"], ri)
            and same(r["write_iops"], wi)
            and same(r["mbps"], mbps)
            and same(r["lat_mean_us"], lat)
        )
        assert same(r["lat_max_us"], mx)
    direction = "write" if c.write_iops else "read"
    hist = store.histogram(c.id, direction)
    got = [r for r in tables["histograms"] if int(r["cell_id"]) == c.id and r["direction"] == direction]
    assert [num(r["value_us"]) for r in got] == list(hist.values_us)
    assert [int(r["count"]) for r in got] == list(hist.counts)

    assert json.loads((tmp_path / fmt / "manifest.json").read_text())["run_id"] == store.manifest.run_id


def test_parquet_columns_are_typed(run, tmp_path):
    export_run(RunStore.open(run), "parquet", tmp_path)
    con = duckdb.connect()
    types = dict(
        con.execute(
            f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('{tmp_path}/cells.parquet'))"
        ).fetchall()
    )
    assert types["iops"] == "DOUBLE" and types["block_size"] == "BIGINT" and types["phase"] == "VARCHAR"
    types = dict(
        con.execute(
            f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('{tmp_path}/steady.parquet'))"
        ).fetchall()
    )
    assert types["steady"] == "BOOLEAN"


def test_unknown_format_is_refused(run, tmp_path):
    with pytest.raises(IolabError, match="csv, json, parquet"):
        export_run(RunStore.open(run), "xlsx", tmp_path)


def test_cli_export_writes_the_files(run, tmp_path):
    result = CliRunner().invoke(app, ["export", str(run), "--format", "csv", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cells.csv").stat().st_size > 0 and (tmp_path / "manifest.json").exists()
    assert "cells.csv" in result.output


def test_json_export_keeps_lists_and_objects(run, tmp_path):
    """window_values, rounds and the cells' workload are lists and objects in JSON, not strings."""
    export_run(RunStore.open(run), "json", tmp_path)
    steady = json.loads((tmp_path / "steady.json").read_text())
    assert all(
        isinstance(r["window_values"], list)
        and r["window_values"]
        and all(isinstance(x, float) for x in r["window_values"])
        for r in steady
    )
    assert all(r["window_rounds"] == list(range(r["window_first"], r["window_last"] + 1)) for r in steady)
    window = json.loads((tmp_path / "window.json").read_text())
    assert all(isinstance(r["rounds"], list) and len(r["rounds"]) == r["n_rounds"] for r in window)
    phases = json.loads((tmp_path / "phases.json").read_text())
    assert all(isinstance(r["window_rounds"], list) for r in phases)
    cells = json.loads((tmp_path / "cells.json").read_text())
    assert all(isinstance(r["workload"], dict) and isinstance(r["raw_files"], list) for r in cells)


def test_parquet_lists_are_typed(run, tmp_path):
    export_run(RunStore.open(run), "parquet", tmp_path)
    con = duckdb.connect()
    types = dict(
        con.execute(
            f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('{tmp_path}/steady.parquet'))"
        ).fetchall()
    )
    assert types["window_values"] == "DOUBLE[]" and types["window_rounds"] == "BIGINT[]"
    con.close()


def _iolab(*args, **kw):
    import os
    import subprocess
    import sys
    from pathlib import Path

    return subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
        **kw,
    )


def test_cli_export_to_stdout(run, tmp_path):
    """-o - writes the JSON export to standard output as one document and creates no file;
    CSV (one file per table) is refused with the reason."""
    r = _iolab("export", str(run), "--format", "json", "-o", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == set(TABLES) | {"manifest"}
    assert doc["manifest"]["run_id"] == RunStore.open(run).manifest.run_id
    assert doc["steady"] and isinstance(doc["steady"][0]["window_values"], list)
    r = _iolab("export", str(run), "--format", "csv", "-o", "-", cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "cannot go to standard output" in " ".join((r.stdout + r.stderr).split())
    assert not list(tmp_path.iterdir())  # no directory named "-"


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_a_simulated_runs_power_is_exported_cell_by_cell_with_its_source(tmp_path, fmt):
    # power.json (the simulator's model here; a meter's log through `iolab power` alike) was in
    # the report only: export, the way to the data behind every figure, left it out
    from iolab import suites
    from iolab.api import runs as api

    prof = suites.make_profile("enterprise", quick=True, cell_seconds=1.0, max_rounds=1)
    [r] = api.run_test("latency", "sim:enterprise-sas?user_gb=0.25", prof, runs_dir=tmp_path / "runs", report=False)
    doc = json.loads((r.dir / "power.json").read_text())
    export_run(RunStore.open(r.dir), fmt, tmp_path / fmt)
    rows = read_table(tmp_path / fmt / f"power.{fmt}", fmt)
    assert len(rows) == len(doc["cells"]) > 1
    for row, cell in zip(rows, doc["cells"]):
        assert row["source"] == doc["source"] and "model" in row["source"]
        assert (row["phase"], int(row["round"]), int(row["cell"]), row["label"]) == (
            cell["phase"],
            cell["round"],
            cell["cell"],
            cell["label"],
        )
        assert same(row["avg_mw"], cell["avg_mw"]) and same(row["energy_mj"], cell["energy_mj"])
        assert num(row["max_mw"]) is None  # a model has no maximum, and none is invented
    if fmt == "json":  # and `iolab show` says it, with its source
        out = CliRunner().invoke(app, ["show", str(r.dir)], env={"COLUMNS": "200"}).output
        [line] = [x for x in out.splitlines() if x.startswith("power (main): average ")]
        assert f"{doc['phases'][0]['avg_mw']:,.0f} mW" in line and line.endswith(doc["source"])


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_cli_export_into_a_directory_whose_name_has_a_quote(run, tmp_path, fmt):
    # `iolab export RUN -f json -o "it's"` was refused for every format ("export directory names
    # with a single quote are not supported"): a limit of the Parquet writer's SQL text alone
    out = tmp_path / "drive A's runs"
    result = CliRunner().invoke(app, ["export", str(run), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert read_table(out / f"cells.{fmt}", fmt) == read_table(*_plain(run, tmp_path, fmt))


def _plain(run, tmp_path, fmt):
    plain = tmp_path / "plain"
    export_run(RunStore.open(run), fmt, plain)
    return plain / f"cells.{fmt}", fmt
