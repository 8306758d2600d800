"""Export a stored run as plain tables (CSV, JSON or Parquet) so users can chart it in their own
tools. One file per table, the same numbers the report shows, read only from the store and the
summary (never recomputed differently):

    cells       every measured cell of every complete round (and the preconditioning cells)
    window      measurement-window averages per cell: what the report's tables show
    steady      the steady-state table at every evaluated round, one row per tracking variable
    phases      per phase: purge, steady state, rounds, why it stopped
    series      the per-second samples of every exported cell (span_s: each row's length; a
                last row under a second is the partial rest of a cell that ran past its time)
    histograms  the latency histograms of every exported cell, per direction
    manifest    manifest.json as stored (target facts, plan, versions, times)

Missing measurements stay missing (empty in CSV, null in JSON and Parquet), never zero.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from iolab.core.cellschema import EXPORTED, CellRow
from iolab.core.errors import IolabError
from iolab.core.fieldtypes import json_finite
from iolab.core.results import row_spans
from iolab.core.runfiles import EXPORT_CELLS, EXPORT_FORMATS
from iolab.core.safefile import read_json
from iolab.figures.power import stored_power
from iolab.figures.summary import PhaseSummary, summarise
from iolab.store.durable import room_for
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore
from iolab.store.writer import claim_if_inside
from iolab.targets.writepolicy import check_file, dir_problems, made_for, output_files, refusal
from iolab.traces.sqltext import sql_str

FORMATS = EXPORT_FORMATS
TABLES = (EXPORT_CELLS, "window", "steady", "phases", "series", "histograms", "power")  # as collect() returns them


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB type: BIGINT | DOUBLE | VARCHAR | BOOLEAN | BIGINT[] | DOUBLE[] (Parquet's)


@dataclass(frozen=True)
class ExportTable:
    name: str
    columns: tuple[Column, ...]
    rows: list[tuple]


def _cols(spec: str) -> tuple[Column, ...]:
    """'name:TYPE name:TYPE ...' (compact, so each table's schema reads on a few lines)."""
    return tuple(Column(*item.split(":")) for item in spec.split())


CELL_COLUMNS = (Column("run_id", "VARCHAR"), *(Column(c.export_name, c.export_type) for c in EXPORTED))
WINDOW_COLUMNS = _cols(
    "run_id:VARCHAR phase:VARCHAR cell_key:VARCHAR mix:VARCHAR block_size:BIGINT rounds:BIGINT[] n_rounds:BIGINT"
    " phase_steady:BOOLEAN iops:DOUBLE read_iops:DOUBLE write_iops:DOUBLE mbps:DOUBLE read_mbps:DOUBLE"
    " write_mbps:DOUBLE lat_mean_us:DOUBLE lat_max_us:DOUBLE p99_999_us:DOUBLE"
    # the IOs the window's percentiles are read from: p99_999_us is empty below 1,000,000 (results.measurable)
    " latency_ios:BIGINT"
)
STEADY_COLUMNS = _cols(
    "run_id:VARCHAR phase:VARCHAR round:BIGINT variable:VARCHAR window_first:BIGINT window_last:BIGINT"
    " window_rounds:BIGINT[] window_values:DOUBLE[] average:DOUBLE range_measured:DOUBLE range_allowed:DOUBLE"
    " slope:DOUBLE intercept:DOUBLE fit_excursion:DOUBLE fit_allowed:DOUBLE range_ok:BOOLEAN slope_ok:BOOLEAN"
    " steady:BOOLEAN"
    # False: shown with its own verdict, but the phase's steady state does not wait for it
    " decides:BOOLEAN"
)
PHASE_COLUMNS = _cols(
    "run_id:VARCHAR phase:VARCHAR ordinal:BIGINT purge_method:VARCHAR purge_ok:BOOLEAN purge_detail:VARCHAR"
    " steady:BOOLEAN rounds:BIGINT stop_reason:VARCHAR window_rounds:BIGINT[]"
)
SERIES_COLUMNS = _cols(
    "run_id:VARCHAR cell_id:BIGINT phase:VARCHAR round:BIGINT cell_key:VARCHAR t_s:DOUBLE read_iops:DOUBLE"
    " write_iops:DOUBLE mbps:DOUBLE lat_mean_us:DOUBLE lat_max_us:DOUBLE span_s:DOUBLE"
)
HISTOGRAM_COLUMNS = _cols(
    "run_id:VARCHAR cell_id:BIGINT phase:VARCHAR round:BIGINT cell_key:VARCHAR direction:VARCHAR"
    " value_us:DOUBLE count:BIGINT max_us:DOUBLE"
)
# each cell's power from the run's power.json (`iolab power` with a meter's log, or the
# simulator's model: `source` says which); no rows when the run has neither
POWER_COLUMNS = _cols(
    "run_id:VARCHAR source:VARCHAR phase:VARCHAR round:BIGINT cell:BIGINT label:VARCHAR started:DOUBLE"
    " ended:DOUBLE readings:BIGINT coverage_pct:DOUBLE avg_mw:DOUBLE max_mw:DOUBLE energy_mj:DOUBLE"
)


# A list or object in one CSV cell: rounds as "3,4,5" (spreadsheet-friendly), anything else
# as JSON text. JSON keeps lists and objects; Parquet has typed lists and objects as JSON text.
CSV_TEXT = {"BIGINT[]": lambda v: ",".join(str(r) for r in v)}


def _csv(v, text):
    if v is None:
        return ""
    if text:
        return text(v)
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True)
    return "true" if v is True else "false" if v is False else v


def _cell_row(run_id: str, c: CellRow) -> tuple:
    return (run_id, *(col.exported(getattr(c, col.name), c.ios) for col in EXPORTED))


def collect(store: RunStore) -> list[ExportTable]:
    """Every table behind the report, from one run's store."""
    run_id = manifest_of(store).run_id
    summaries = summarise(store)
    # Preconditioning cells first (round 0), then the measured cells the report uses.
    exported = store.cells(kind="precondition") + store.cells(kind="measure")
    cells = [_cell_row(run_id, c) for c in exported]
    phases = [_phase_row(run_id, s) for s in summaries]
    window = [row for s in summaries for row in _window_rows(run_id, s)]
    steady = [row for s in summaries for row in _steady_rows(store, run_id, s)]
    series, histograms = _series_and_histograms(store, run_id, exported)
    return [
        ExportTable("cells", CELL_COLUMNS, cells),
        ExportTable("window", WINDOW_COLUMNS, window),
        ExportTable("steady", STEADY_COLUMNS, steady),
        ExportTable("phases", PHASE_COLUMNS, phases),
        ExportTable("series", SERIES_COLUMNS, series),
        ExportTable("histograms", HISTOGRAM_COLUMNS, histograms),
        ExportTable("power", POWER_COLUMNS, _power_rows(run_id, stored_power(store.dir))),
    ]


def _power_rows(run_id: str, doc: dict | None) -> list[tuple]:
    if doc is None:
        return []
    keys = [c.name for c in POWER_COLUMNS[2:]]
    return [(run_id, doc.get("source"), *(c.get(k) for k in keys)) for c in doc.get("cells", [])]


def _phase_row(run_id: str, s: PhaseSummary) -> tuple:
    ph = s.phase
    return (
        run_id,
        ph.name,
        ph.ordinal,
        ph.purge_method,
        ph.purge_ok,
        ph.purge_detail,
        s.steady,  # the verdict every page gives (core/steady.phase_verdict), as the window rows'
        ph.rounds,
        ph.stop_reason,
        list(s.window),
    )


def _window_rows(run_id: str, s: PhaseSummary) -> list[tuple]:
    """Each cell's mean over the phase's measurement window."""
    return [
        (
            run_id,
            s.phase.name,
            a.key,
            a.mix,
            a.block_size,
            list(a.rounds),
            len(a.rounds),
            s.steady,
            a.iops,
            a.read_iops,
            a.write_iops,
            a.mbps,
            a.read_mbps,
            a.write_mbps,
            a.lat_mean_us,
            a.lat_max_us,
            a.p99_999_us,
            a.ios,
        )
        for a in s.cells
    ]


def _steady_rows(store: RunStore, run_id: str, s: PhaseSummary) -> list[tuple]:
    """The steady-state check of every tracked variable after each of the phase's rounds."""
    return [
        (
            run_id,
            s.phase.name,
            rnd,
            v.name,
            v.rounds[0],
            v.rounds[-1],
            list(v.rounds),
            list(v.values),
            v.average,
            v.range_measured,
            v.range_allowed,
            v.slope,
            v.intercept,
            v.fit_excursion,
            v.fit_allowed,
            v.range_ok,
            v.slope_ok,
            v.steady,
            v.name not in s.shown_only,
        )
        for rnd in s.rounds
        for v in store.steady_rows(s.phase.name, rnd)
    ]


def _series_and_histograms(store: RunStore, run_id: str, exported: list[CellRow]) -> tuple[list[tuple], list[tuple]]:
    series, histograms = [], []
    for c in exported:
        points = store.series(c.id)
        # each row's own length: a last row under a second is the partial rest of its cell
        for point, span in zip(points, row_spans([p[0] for p in points])):
            series.append((run_id, c.id, c.phase, c.round, c.cell_key, *point, span))
        for direction in ("read", "write"):
            h = store.histogram(c.id, direction)
            if h is not None:
                histograms += [
                    (run_id, c.id, c.phase, c.round, c.cell_key, direction, v, n, h.max_us)
                    for v, n in zip(h.values_us, h.counts)
                ]
    return series, histograms


def _write_csv(table: ExportTable, path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([c.name for c in table.columns])
        text = [CSV_TEXT.get(c.type) for c in table.columns]
        # repr-exact floats (csv uses repr), None as an empty field, booleans as true/false
        w.writerows([[_csv(v, f) for v, f in zip(row, text)] for row in table.rows])


def _records(table: ExportTable) -> list[dict]:
    names = [c.name for c in table.columns]
    return [dict(zip(names, row)) for row in table.rows]


def _write_json(table: ExportTable, path: Path) -> None:
    path.write_text(json.dumps(json_finite(_records(table)), indent=1, allow_nan=False))


def _write_parquet(table: ExportTable, path: Path) -> None:
    import duckdb

    # DuckDB reads the rows back from newline-delimited JSON with the declared column types, so
    # the Parquet schema is exact even for an empty table or a column that is all null.
    with tempfile.TemporaryDirectory(prefix="iolab-export-") as tmp:
        src = Path(tmp) / f"{table.name}.jsonl"
        with src.open("w") as f:
            for rec in _records(table):
                f.write(json.dumps(json_finite(rec), allow_nan=False) + "\n")
        columns = "{" + ", ".join(f"'{c.name}': '{c.type}'" for c in table.columns) + "}"
        con = duckdb.connect()
        try:
            con.execute(
                f"COPY (SELECT * FROM read_json('{src}', format='newline_delimited', columns={columns}))"
                f" TO {sql_str(str(path))} (FORMAT parquet)"  # a quote in a path (it's/) doubled
            )
        finally:
            con.close()


WRITERS = {"csv": _write_csv, "json": _write_json, "parquet": _write_parquet}


def export_stream(store: RunStore, fmt: str, stream: IO[str]) -> None:
    """The whole export as one JSON document on a stream (`--out -`): {table: rows, ...,
    "manifest": manifest.json}. CSV and Parquet are one file per table, which no single stream holds."""
    if fmt not in WRITERS:
        raise IolabError(f"export format {fmt!r} is not known; use one of: {', '.join(FORMATS)}.")
    if fmt != "json":
        raise IolabError(
            f"--out -: a {fmt} export is one file per table and cannot go to standard output; give a "
            "directory, or --format json to write every table to standard output as one JSON document."
        )
    doc: dict = {t.name: _records(t) for t in collect(store)}
    doc["manifest"] = read_json(store.dir / "manifest.json", "run manifest", "manifest")
    # made whole before a byte is written: a value json cannot hold no longer stops it midway
    stream.write(json.dumps(json_finite(doc), indent=1, allow_nan=False) + "\n")


def export_run(store: RunStore, fmt: str, out_dir: Path) -> list[Path]:
    """Write one file per table (<table>.<fmt>) and manifest.json into out_dir; returns the paths.
    Each is written aside and the set put in place once all are whole (output_files): a full disk
    or a stop midway leaves no half file (a 0-byte cells.csv before) and an earlier export as it was."""
    if fmt not in WRITERS:
        raise IolabError(f"export format {fmt!r} is not known; use one of: {', '.join(FORMATS)}.")
    _refuse_a_run_directory(store, out_dir)
    paths = [out_dir / f"{name}.{fmt}" for name in TABLES] + [out_dir / "manifest.json"]
    again = f"iolab export {store.dir} --format {fmt} -o {out_dir}"
    elsewhere = f"`iolab export {store.dir} -o DIR` writes the export elsewhere."
    with (
        room_for("its export", out_dir, f"`{again}`", store.dir),
        claim_if_inside(store.dir, out_dir, elsewhere, "export directory", "export"),
    ):
        # every file is checked before the tables are read, and they are read before anything is
        # made, so a refusal is quick and a run that cannot be read leaves no (empty) export behind
        if problems := dir_problems(out_dir):
            raise refusal("export directory", out_dir, problems)
        for path in paths:
            check_file(path, "export file")
        tables = collect(store)
        with made_for(out_dir, "export directory"):  # a failed export leaves no folder it made
            _write_all(store, tables, fmt, paths)
    return paths


def _write_all(store: RunStore, tables: list[ExportTable], fmt: str, paths: list[Path]) -> None:
    """Each table and the manifest written aside, then all put in place under one deferred stop
    (output_files): a stop between two renames left new tables beside an earlier export's manifest."""
    with output_files(paths, "export file") as parts:
        part_of = dict(zip(paths, parts))
        for table in tables:
            WRITERS[fmt](table, part_of[paths[0].with_name(f"{table.name}.{fmt}")])
        shutil.copyfile(store.dir / "manifest.json", parts[-1])


def _refuse_a_run_directory(store: RunStore, out_dir: Path) -> None:
    """A run directory's own files are iolab's, so the write policy lets an export replace them:
    its manifest.json (another run's copy over this run's) and power.json (the export's table over
    the run's power record, which `show` then could not read). An export goes beside a run, or in
    its own export/ folder in it (writer.claim_if_inside), never among its files."""
    if out_dir.resolve() == store.dir.resolve() or (out_dir / "results.db").exists():
        raise refusal(
            "export directory",
            out_dir,
            [f"{out_dir} is a run directory, whose manifest.json and power.json an export would replace"],
        )
