"""`iolab run TEST --fleet FILE`: one test on every drive of a fleet at once, and the fleet
directory that names their runs.

Each drive is an ordinary `iolab run` of its own (a child process, as several `--target`s are):
its own safety checks, purge, lock and run directory; a drive of a host runs through the
scale-out engine (fio's client/server mode, the server started over ssh or reached directly)
with a one-host hosts file the fleet directory keeps. The coordinator only starts, waits and
records: a drive that fails fails its own row and the others go on.

The fleet directory (`RUNS/fleets/STAMP-TEST-NAME/`):
  fleet.toml            the fleet file as given
  fleet.json            the fleet's state: test, arguments, each drive's run directory, state,
                        exit status and error (rewritten atomically as each drive ends)
  drives/NAME/          per drive: hosts.toml (a host's drive), out.json (the child's --json
                        document), log.txt (what it printed)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.api.fleetfile import Fleet, FleetDrive, drive_target, fleet_name, load_fleet
from iolab.core.errors import Exit, IolabError
from iolab.core.runfiles import FLEET_FILE, FLEET_SCHEMA
from iolab.core.safefile import read_config, read_json
from iolab.figures.specmatch import run_reasons
from iolab.figures.specsheet import judge, load_spec_sheet
from iolab.run.stopsignals import Interrupted
from iolab.store.durable import replace_file, room_for
from iolab.store.manifest import fleet_dir, is_fleet_dir, now_iso
from iolab.targets.writepolicy import check_file, mark_written, output_dir

if TYPE_CHECKING:
    from iolab.pages.report.model import Document


def _write(path: Path, text: str) -> Path:
    """A file of the fleet directory, replaced whole (never over a file iolab did not write)."""
    return replace_file(path, text.encode(), "fleet file")


@dataclass
class Member:
    """One drive's row of the fleet: where its run is and how it ended."""

    name: str
    target: str
    where: str  # "local" or the host's address:port
    labels: dict[str, str] = field(default_factory=dict)
    state: str = "pending"  # pending | running | complete | failed | interrupted | refused
    run_dir: str | None = None
    exit_code: int | None = None
    error: str | None = None
    seconds: float | None = None
    pid: int | None = None  # the drive's `iolab run` while it runs


@dataclass
class FleetState:
    dir: Path
    test: str
    name: str
    args: list[str]
    members: list[Member]
    started: str = ""
    ended: str | None = None
    state: str = "running"  # running | complete | interrupted
    spec_sheet: str | None = None  # the fleet's copy of its fleet file's spec sheet, as an absolute path
    outlier_k: float | None = None
    outlier_min_pct: float | None = None
    group_by: str | None = None
    baseline: str | None = None
    pid: int = field(default_factory=os.getpid)  # the coordinator
    stopped_by: str | None = None  # the signal that stopped the coordinator (SIGINT: Ctrl-C)

    def save(self) -> None:
        doc = {
            "schema": FLEET_SCHEMA,
            "schema_version": 1,
            **{k: v for k, v in asdict(self).items() if k != "dir"},
        }
        _write(self.dir / FLEET_FILE, json.dumps(doc, indent=2) + "\n")


def load_state(path: str | Path) -> FleetState:
    """A fleet directory's fleet.json, read back (IolabError when it is not one)."""
    d = Path(path)
    doc = read_json(d / FLEET_FILE, "fleet state", "manifest")
    if not isinstance(doc, dict) or doc.get("schema") != FLEET_SCHEMA:
        raise IolabError(f"{d}: not a fleet directory ({FLEET_FILE} is not iolab's fleet state).")
    try:
        members = [Member(**m) for m in doc["members"]]
        for i, m in enumerate(members):  # each names its folder drives/NAME, written on resume
            fleet_name(m.name, f"{d / FLEET_FILE}: members[{i}]: field 'name'")
        return FleetState(
            d,
            doc["test"],
            doc["name"],
            list(doc["args"]),
            members,
            doc["started"],
            doc.get("ended"),
            doc["state"],
            doc.get("spec_sheet"),
            doc.get("outlier_k"),
            doc.get("outlier_min_pct"),
            doc.get("group_by"),
            doc.get("baseline"),
            doc.get("pid", 0),
            doc.get("stopped_by"),
        )
    except (KeyError, TypeError) as e:
        raise IolabError(f"{d / FLEET_FILE}: cannot read the fleet state ({e}).") from None


def find_fleet(ref: str, root: Path) -> Path:
    """A fleet by its directory or by its name under RUNS/fleets/."""
    found = fleet_dir(ref, root)
    if found is None:
        raise IolabError(
            f"fleet {ref!r}: no fleet directory of that name under {root / 'fleets'} and no directory of that path "
            f"holding {FLEET_FILE}; `iolab runs` lists the fleets."
        )
    return found


def list_fleets(root: Path, unreadable: list[str] | None = None) -> list[FleetState]:
    """The fleets under RUNS/fleets; one whose fleet.json cannot be read is said in `unreadable`."""
    d = root / "fleets"
    if not d.is_dir():
        return []
    out = []
    for f in sorted(d.iterdir()):
        if is_fleet_dir(f):
            try:
                out.append(load_state(f))
            except IolabError as e:
                if unreadable is not None:
                    unreadable.append(str(e))
    return out


def open_fleet(fleet: Fleet, test: str, args: list[str], root: Path) -> FleetState:
    """The new fleet directory, with the fleet file and every drive's row (pending)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = root / "fleets" / f"{stamp}-{test}-{fleet.name}"
    d, n = base, 1
    while d.exists():
        n += 1
        d = base.with_name(f"{base.name}-{n}")
    output_dir(d / "drives", "fleet directory")
    _write(d / "fleet.toml", fleet.text)
    members = [Member(dr.name, dr.target, dr.where, dict(dr.labels)) for dr in fleet.drives]
    sheet = None
    if fleet.spec_sheet:  # kept with the fleet: its verdicts stay those of the sheet it ran against
        copy = _write(d / f"spec-sheet{fleet.spec_sheet.suffix}", read_config(fleet.spec_sheet, "spec sheet"))
        sheet = str(copy.resolve())
    state = FleetState(d, test, fleet.name, args, members, now_iso(), spec_sheet=sheet, outlier_k=fleet.outlier_k)
    state.outlier_min_pct = fleet.outlier_min_pct
    state.group_by, state.baseline = fleet.group_by, fleet.baseline
    state.save()
    return state


def _hosts_file(drive: FleetDrive, d: Path) -> Path:
    """The one-host hosts file a host's drive runs with (the drive's path on that host)."""
    h = drive.host
    assert h is not None
    fields = {
        "address": h.address,
        "port": h.port,
        "target": drive_target(drive.target, h).path,
        "ssh": h.ssh,
        "ssh_config": h.ssh_config,
        "ioengine": h.ioengine,
    }
    text = "[[host]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items() if v is not None)
    return _write(d / "hosts.toml", text)


def _command(state: FleetState, drive: FleetDrive, d: Path, root: Path) -> list[str]:
    cmd = [sys.executable, "-c", "from iolab.cli.main import main; main()", *state.args]
    cmd += ["--target", drive.target, "--json", "--quiet", "--runs-dir", str(root)]
    if drive.host is not None:
        cmd += ["--hosts-file", str(_hosts_file(drive, d))]
    return cmd


# `iolab resume` takes these of a run's options (cli/options.RESUME_OPTIONS): flags, and valued ones
_RESUME_FLAGS = ("--allow-unsafe-target", "--allow-system-disk", "--listen-any", "--no-report", "--require-steady")
_RESUME_VALUED = ("--ioengine",)


def _resume_command(state: FleetState, m: Member, root: Path) -> list[str]:
    keep: list[str] = []
    for i, a in enumerate(state.args):
        if a in _RESUME_FLAGS or a.split("=", 1)[0] in _RESUME_VALUED:
            keep.append(a)
        elif a in _RESUME_VALUED and i + 1 < len(state.args):
            keep += [a, state.args[i + 1]]
    cmd = [sys.executable, "-c", "from iolab.cli.main import main; main()", "resume", str(m.run_dir), *keep]
    return cmd + ["--json", "--quiet", "--runs-dir", str(root)]


# a drive's process ended by a stop signal: iolab's own code for it (128 + signal) or the signal
_STOPPED = {c for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) for c in (128 + s, -s)}


def read_outcome(m: Member, out: Path, code: int | None) -> None:
    """The member's row from its child's --json document (`code` None: the document's own)."""
    try:
        doc = read_json(out, "drive outcome", "document")
    except (OSError, IolabError, ValueError):
        doc = {}
    if code is None:
        code = doc.get("exit_code") if isinstance(doc, dict) and isinstance(doc.get("exit_code"), int) else 1
    m.exit_code, m.pid = code, None
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if isinstance(runs, list) and runs and isinstance(runs[0], dict):
        m.run_dir = runs[0].get("path")
        m.state = runs[0].get("state") or "failed"
        m.error = runs[0].get("error")
    elif code in _STOPPED:  # stopped before its run directory existed: it starts again on resume
        m.state = "interrupted"
    else:
        m.state = "refused" if code in (2, 3) else "failed"
        m.error = (doc.get("error") if isinstance(doc, dict) else None) or f"exited with status {code}"
    # 6: --require-steady, the run itself is complete; a stop signal after the run was complete came
    # while it wrote its report: every measurement is stored, so the drive is complete (not failed)
    if m.state == "complete" and code not in (0, 6) and code not in _STOPPED:
        m.state = "failed"


def _keep_earlier(d: Path) -> None:
    """A drive started again (`iolab resume FLEET`): its earlier attempt's out.json and log.txt are
    kept as out.attemptN.json and log.attemptN.txt, not overwritten: they say how it stopped."""
    n = 1 + len(list(d.glob("out.attempt*.json")))
    for name, kept in (("out.json", f"out.attempt{n}.json"), ("log.txt", f"log.attempt{n}.txt")):
        if (d / name).is_file():
            check_file(d / name, "fleet file")  # iolab's own, as every file it moves
            (d / name).rename(check_file(d / kept, "fleet file"))
            mark_written(d / kept)


def _forward(signum: int, pids: list[int]) -> None:
    """A stop signal the coordinator got alone (SIGTERM from a CI job's timeout, SIGHUP) to its
    running drives, which store what they measured and stop as their own run would. Ctrl-C is not
    forwarded: the terminal sent it to every process of the group, and a second one would kill fio
    at once instead of letting it end its interval."""
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def run_fleet(
    fleet: Fleet, state: FleetState, root: Path, on_event: Callable[[Member, str], None] = lambda m, e: None
) -> FleetState:
    """Run every pending drive of `state`, at most `fleet.parallel` at once; each ends in its row."""
    lock = threading.Lock()
    stop = threading.Event()
    drives = {d.name: d for d in fleet.drives}

    def one(m: Member) -> None:
        if stop.is_set():
            return
        d = state.dir / "drives" / m.name
        output_dir(d, "fleet directory")
        # an interrupted drive whose run was stored goes on with `iolab resume` of that run
        cmd = _resume_command(state, m, root) if m.run_dir else _command(state, drives[m.name], d, root)
        t0 = time.monotonic()
        _keep_earlier(d)
        out, log = check_file(d / "out.json", "fleet file"), check_file(d / "log.txt", "fleet file")
        with open(out, "wb") as fo, open(log, "wb") as fe:
            mark_written(out)  # marked now, not when the drive ends: the coordinator may be killed first
            mark_written(log)
            # Not stopped when the coordinator dies (kill -9): the drive's run goes on to its end and
            # writes out.json, where `iolab resume FLEET` finds it. (A parent-death signal would reach
            # it once per coordinator thread that exits, and a second SIGTERM ends a run before it
            # can say where it stopped.)
            proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)
            with lock:
                m.state, m.pid = "running", proc.pid
                state.save()
            on_event(m, "start")
            code = proc.wait()
        with lock:
            read_outcome(m, out, code)
            m.seconds = round(time.monotonic() - t0, 3)
            state.save()
        on_event(m, "end")

    pending = [m for m in state.members if m.state in ("pending", "interrupted")]
    pool = ThreadPoolExecutor(max_workers=max(1, min(fleet.parallel or len(pending), len(pending) or 1)))
    futures = [pool.submit(one, m) for m in pending]
    interrupted = False
    for f in futures:
        while True:
            try:
                f.result()
                break
            except KeyboardInterrupt as e:  # let the running drives store what they measured, and stop
                interrupted = True
                stop.set()
                state.stopped_by = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
                if isinstance(e, Interrupted):  # sent to the coordinator alone: each running drive gets it too
                    with lock:
                        _forward(e.signum, [m.pid for m in state.members if m.state == "running" and m.pid])
    pool.shutdown()
    with lock:
        state.ended = now_iso()
        state.state = "interrupted" if interrupted else "complete"
        for m in state.members:
            if m.state == "pending":
                m.state = "interrupted"
        state.save()
    return state


def start(fleet_file: Path, test: str, args: list[str], root: Path) -> tuple[Fleet, FleetState, list[str]]:
    """The fleet file checked, the same drive twice refused, the fleet directory made; and the
    drives whose identity could not be read (fleetident.identity: a host's drive reached through
    its fio server only, or over ssh where the read failed; a path of this machine it could not
    stat). A simulated drive has one: its preset, parameters and seed."""
    from iolab.api.fleetident import refuse_duplicates
    from iolab.api.runs import read_spec_sheet

    fleet = load_fleet(fleet_file)
    if fleet.spec_sheet is not None:  # a bad spec sheet is refused before any drive is written
        read_spec_sheet(fleet.spec_sheet, test)
    unread = refuse_duplicates(fleet)
    return fleet, open_fleet(fleet, test, args, root), unread


def _record(run_dir: str | None) -> dict | None:
    from iolab.api.runs import run_record
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
    100-200 ms a drive (13 s of CPU for the report of 64 simulated drives). None: rebuild it."""
    try:
        doc = read_json(state.dir / "drives" / m.name / "out.json", "drive outcome", "document")
        rec = doc["runs"][0]
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
                verdicts[d.name] = judge(d.name, d.figures, units, sheet, reasons=run_reasons(recs.get(d.name) or {}))
    fleet = {
        "dir": str(state.dir),
        "name": state.name,
        "test": state.test,
        "state": state.state,
        "started": state.started,
        "ended": state.ended,
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
            written.append(_write(state.dir / name, data))
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


def fleet_pages(fleet_ref: str | Path, out_dir: Path | None = None) -> FleetPages:
    """The fleet report as HTML and PDF (pages/report/fleet.py), for out_dir (default: the fleet
    directory's report/); the same document as report.json, read from the drives' runs."""
    from iolab.pages.report.fleet import fleet_document

    state = load_state(fleet_ref)
    out = Path(out_dir or state.dir / "report")
    again = f"`iolab report {state.dir}" + ("`" if out_dir is None else f" --out {out}`")
    return FleetPages(fleet_document(report(state)), out, state.dir.name, again)
