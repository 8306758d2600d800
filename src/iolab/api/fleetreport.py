"""A fleet's report, from its directory as stored: each complete drive's run record (the one its
run wrote as it ended, else rebuilt from the run), the report document (pages/fleet.py) over them,
its report.json and junit.xml in the fleet directory, and its HTML and PDF pages. Reads the fleet's
state (api/fleet.py, which runs the fleet) and never writes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.api.fleet import FleetState, Member, load_state, write_fleet_file
from iolab.core.errors import Exit, IolabError
from iolab.core.runfiles import FLEET_FILE
from iolab.core.safefile import loads_json, read_bytes, read_json
from iolab.figures.specmatch import figures_steady, run_reasons, unmeasured_figures
from iolab.figures.specsheet import judge, load_spec_sheet
from iolab.store.durable import room_for

if TYPE_CHECKING:
    from iolab.pages.report.model import Document


def _record(run_dir: str | None) -> dict | None:
    from iolab.api.reports import run_record
    from iolab.store.runstore import RunStore

    if not run_dir:
        return None
    try:
        store = RunStore(Path(run_dir), writable=False)
    except (IolabError, OSError):
        return None
    try:
        return run_record(store)
    finally:
        store.close()


def _own_record(state: FleetState, m: Member) -> dict | None:
    """The record the drive's run wrote itself as it ended (its --json document, the drive's
    out.json), when it is of the run the row names and that run's manifest still says the same
    id, state and end: a JSON read, where rebuilding it from results.db cost the coordinator
    100-200 ms a drive (13 s of CPU for the report of 64 simulated drives). Only while out.json is
    the bytes the coordinator read as the drive ended (the row's digest): an edited figure there
    was reported as the drive's, and one made text was dropped from the fleet. None: rebuild it."""
    if m.out_sha256 is None:  # a fleet stored before the digest, or a drive whose document was unreadable
        return None
    out = state.dir / "drives" / m.name / "out.json"
    try:
        raw = read_bytes(out, "drive outcome", "document")
        if hashlib.sha256(raw).hexdigest() != m.out_sha256:  # edited or damaged since: its figures are not the run's
            return None
        rec = loads_json(raw, f"drive outcome {out}")["runs"][0]
        man = read_json(Path(str(m.run_dir)) / "manifest.json", "run manifest", "document")
    except (OSError, IolabError, ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(rec, dict) or rec.get("path") != m.run_dir or not isinstance(man, dict):
        return None
    same = all(rec.get(k) == man.get(k) and man.get(k) is not None for k in ("run_id", "state", "ended"))
    same = same and rec.get("uid") == man.get("uid")  # the run fleetcheck tells apart is the manifest's
    return {**rec, "reports": []} if same else None  # as rebuilt: the fleet lists no drive's reports


def records(state: FleetState) -> dict[str, dict | None]:
    """Each drive's run record (`--json`'s run; None: its run did not complete)."""
    return {
        m.name: (_own_record(state, m) or _record(m.run_dir)) if m.state == "complete" else None for m in state.members
    }


def report(
    state: FleetState,
    sheet_path: Path | None = None,
    k: float | None = None,
    min_pct: float | None = None,
    recs: dict[str, dict | None] | None = None,
) -> dict:
    """The fleet report document (pages/fleet.py) of a fleet directory's drives as stored:
    each complete drive's key figures read from its own run. `sheet_path`/`k` override the fleet
    file's spec sheet and outlier rule. A row whose run is another row's, another test's or
    another drive's is refused (fleetcheck.py) before any figure counts."""
    from iolab.api.fleetcheck import check_rows
    from iolab.figures.fleet import DEFAULT_K, DEFAULT_MIN_PCT, distributions, drive_figures
    from iolab.pages.fleet import document

    recs = records(state) if recs is None else recs
    check_rows(state.dir / FLEET_FILE, state.test, state.members, recs)

    k = k if k is not None else state.outlier_k if state.outlier_k is not None else DEFAULT_K
    if min_pct is None:
        min_pct = state.outlier_min_pct if state.outlier_min_pct is not None else DEFAULT_MIN_PCT
    sheet_at = sheet_path or (Path(state.spec_sheet) if state.spec_sheet else None)
    sheet = load_spec_sheet(sheet_at) if sheet_at else None
    drives, rows = [], [asdict(m) for m in state.members]
    for m, row in zip(state.members, rows):
        rec = recs.get(m.name)
        if m.state == "complete" and rec is None:  # moved or deleted since: no figure of it may count
            row.update(state="unreadable", exit_code=Exit.BAD_INPUT, error=_unreadable(m.run_dir))
        drives.append(drive_figures(m.name, m.labels, row["state"], rec))
    dists = distributions([d for d in drives if d.state == "complete"], k, min_pct)
    verdicts = {}
    if sheet is not None:
        for d in drives:
            if d.state == "complete":
                units = {n: meta["unit"] for n, meta in d.meta.items()}
                rec = recs.get(d.name) or {}
                reasons, steady = run_reasons(rec), figures_steady(rec)
                verdicts[d.name] = judge(
                    d.name, d.figures, units, sheet, reasons=reasons, unmeasured=unmeasured_figures(rec), steady=steady
                )
    fleet = {
        "dir": str(state.dir),
        "name": state.name,
        "test": state.test,
        "state": state.state,
        "started": state.started,
        "ended": state.ended,
        "stopped_by": state.stopped_by,  # a drive not started gives the fleet's stop as its status
        "args": state.args,
    }
    return document(fleet, rows, drives, dists, (k, min_pct), sheet, verdicts, _pool(state))


def _unreadable(run_dir: str | None) -> str:
    return (
        f"its run {run_dir} cannot be read (moved or deleted since the fleet ran?): its figures are left out; "
        "put the run back where the fleet recorded it"
    )


def _pool(state: FleetState):
    """The pool at a latency bound (figures/fleetpool.py) of a latency-bound fleet's complete drives."""
    from iolab.figures.fleetpool import LATBOUND_TEST, pool
    from iolab.store.runstore import RunStore

    if state.test != LATBOUND_TEST:
        return None
    stores = []
    try:
        for m in state.members:
            if m.state == "complete" and m.run_dir:
                stores.append((m.name, RunStore(Path(m.run_dir), writable=False)))
        return pool(stores)
    finally:
        for _, st in stores:
            st.close()


def write_report_files(state: FleetState, doc: dict) -> list[Path]:
    """report.json and junit.xml in the fleet directory (rewritten each time it is reported)."""
    from iolab.pages.fleet_junit import junit_xml

    written = []
    with room_for("the fleet's report", state.dir, f"`iolab fleet {state.dir}`"):
        for name, data in (("report.json", json.dumps(doc, indent=2) + "\n"), ("junit.xml", junit_xml(doc))):
            written.append(write_fleet_file(state.dir / name, data))
    return written


@dataclass(frozen=True)
class FleetPages:
    """The fleet report built and not yet written: `iolab report` builds every fleet's (and
    reads every run) it was given before it writes any."""

    document: Document
    out: Path
    stem: str
    again: str

    def write(self) -> list[Path]:
        from iolab.pages.report import write_document

        with room_for("the fleet's report pages", self.out, self.again):
            return write_document(self.document, self.out, self.stem)


def fleet_pages(
    fleet_ref: str | Path, out_dir: Path | None = None, document_of: Callable[[FleetState], dict] | None = None
) -> FleetPages:
    """The fleet report as HTML and PDF (pages/report/fleet.py), for out_dir (default: the fleet
    directory's report/); the same document as report.json, read from the drives' runs.
    `document_of` makes that document (the command line's: with the groups compared, which this
    layer cannot); default: `report`, without groups."""
    from iolab.pages.report.fleet import fleet_document

    state = load_state(fleet_ref)
    out = Path(out_dir or state.dir / "report")
    again = f"`iolab report {state.dir}" + ("`" if out_dir is None else f" --out {out}`")
    return FleetPages(fleet_document((document_of or report)(state)), out, state.dir.name, again)
