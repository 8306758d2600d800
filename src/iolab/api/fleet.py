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

The fleet's report over its drives' runs is api/fleetreport.py's, which reads this state.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import get_type_hints

from iolab.api.fleetfile import Fleet, FleetDrive, drive_target, fleet_name, load_fleet
from iolab.core.errors import IolabError
from iolab.core.fieldtypes import shown, wrong_type
from iolab.core.runfiles import FLEET_FILE, FLEET_SCHEMA
from iolab.core.safefile import loads_json, read_bytes, read_config, read_json
from iolab.core.stopdefer import CHILD_MAIN, stop_deferred, stops_blocked, stops_held
from iolab.run.stopsignals import Interrupted, stop_exception
from iolab.store.durable import replace_file
from iolab.store.manifest import is_fleet_dir, now_iso
from iolab.targets.writepolicy import check_file, mark_written, output_dir


def write_fleet_file(path: Path, text: str) -> Path:
    """A file of the fleet directory, replaced whole (never over a file iolab did not write)."""
    return replace_file(path, text.encode(), "fleet file")


@dataclass
class Member:
    """One drive's row of the fleet: where its run is and how it ended."""

    name: str
    target: str
    where: str  # "local" or the host's address:port
    labels: dict[str, str] = field(default_factory=dict)
    # pending | running | complete | failed | interrupted | refused | not-started (the fleet
    # stopped before the drive began: never run, so neither a failure of the drive nor a pass)
    state: str = "pending"
    run_dir: str | None = None
    exit_code: int | None = None
    error: str | None = None
    seconds: float | None = None
    pid: int | None = None  # the drive's `iolab run` while it runs
    # SHA-256 of the drive's out.json as the coordinator read it when the drive ended: the fleet
    # report takes the run record from that document only while it is still those bytes
    out_sha256: str | None = None


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
    cwd: str | None = None  # the fleet's directory of relative file: paths (fleetfile.load_fleet's base)

    def save(self) -> None:
        doc = {
            "schema": FLEET_SCHEMA,
            "schema_version": 1,
            **{k: v for k, v in asdict(self).items() if k != "dir"},
        }
        write_fleet_file(self.dir / FLEET_FILE, json.dumps(doc, indent=2) + "\n")


MEMBER_STATES = ("pending", "running", "complete", "failed", "interrupted", "refused", "unreadable", "not-started")
FLEET_STATES = ("running", "complete", "interrupted")


def load_state(path: str | Path) -> FleetState:
    """A fleet directory's fleet.json, read back (IolabError when it is not one)."""
    d = Path(path)
    doc = read_json(d / FLEET_FILE, "fleet state", "manifest")
    if not isinstance(doc, dict) or doc.get("schema") != FLEET_SCHEMA:
        raise IolabError(f"{d}: not a fleet directory ({FLEET_FILE} is not iolab's fleet state).")
    try:
        _check_fields("", doc, FleetState, FLEET_STATES)
        if not isinstance(doc["members"], list):
            raise TypeError(f"field 'members' is {shown(doc['members'])}, not a list of objects")
        if not doc["members"]:  # a fleet starts with its file's drives: none left is no fleet, never a pass
            raise TypeError("field 'members' is empty, and a fleet holds every drive of its fleet file")
        for i, m in enumerate(doc["members"]):
            _check_fields(f"members[{i}]: ", m, Member, MEMBER_STATES)
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
            doc.get("cwd"),
        )
    except (KeyError, TypeError) as e:
        raise IolabError(
            f"{d / FLEET_FILE}: cannot read the fleet state ({e}). Nothing was read from it: put back the "
            "fleet.json the fleet wrote."
        ) from None


def _check_fields(where: str, doc: object, cls: type, states: tuple[str, ...]) -> None:
    """Hold a fleet.json object to the types its dataclass declares (TypeError naming the
    field): a hand-edited `labels` list or `outlier_k` string otherwise failed deep in the
    report with a traceback."""
    if not isinstance(doc, dict):
        raise TypeError(f"{where}a JSON {type(doc).__name__}, not an object")
    hints = get_type_hints(cls)
    for name, value in doc.items():
        if (
            name in hints
            and name not in ("dir", "members")
            and (problem := wrong_type(name, value, hints[name])) is not None
        ):
            raise TypeError(where + problem)
    if doc.get("state", states[0]) not in states:
        raise TypeError(f"{where}field 'state' is {shown(doc['state'])}, not one of {', '.join(states)}")


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
    write_fleet_file(d / "fleet.toml", fleet.text)
    members = [Member(dr.name, dr.target, dr.where, dict(dr.labels)) for dr in fleet.drives]
    sheet = None
    if fleet.spec_sheet:  # kept with the fleet: its verdicts stay those of the sheet it ran against
        copy = write_fleet_file(d / f"spec-sheet{fleet.spec_sheet.suffix}", read_config(fleet.spec_sheet, "spec sheet"))
        sheet = str(copy.resolve())
    state = FleetState(d, test, fleet.name, args, members, now_iso(), spec_sheet=sheet, outlier_k=fleet.outlier_k)
    state.cwd = os.getcwd()
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
    return write_fleet_file(d / "hosts.toml", text)


def _command(state: FleetState, drive: FleetDrive, d: Path, root: Path) -> list[str]:
    cmd = [sys.executable, "-c", CHILD_MAIN, *state.args]
    cmd += ["--target", drive.target, "--json", "--quiet", "--runs-dir", str(root)]
    # the fleet's sheet (the fleet file's or --spec-sheet's, as the fleet keeps it) opens each
    # drive's own report: only --spec-sheet's reached them, so the fleet file's runs had no front page
    if state.spec_sheet:
        cmd += ["--spec-sheet", state.spec_sheet]
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
    cmd = [sys.executable, "-c", CHILD_MAIN, "resume", str(m.run_dir), *keep]
    # the fleet's sheet opens the resumed run's report as it opens a drive's first run's (_command)
    sheet = ["--spec-sheet", state.spec_sheet] if state.spec_sheet else []
    return cmd + [*sheet, "--json", "--quiet", "--runs-dir", str(root)]


# a drive's process ended by a stop signal: iolab's own code for it (128 + signal) or the signal
_STOPPED = {c for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) for c in (128 + s, -s)}


def read_outcome(m: Member, out: Path, code: int | None) -> None:
    """The member's row from its child's --json document (`code` None: the document's own)."""
    try:
        raw = read_bytes(out, "drive outcome", "document")
        doc, m.out_sha256 = loads_json(raw, f"drive outcome {out}"), hashlib.sha256(raw).hexdigest()
    except (OSError, IolabError, ValueError):
        doc, m.out_sha256 = {}, None
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
            mark_written(d / kept, "fleet file")


def _start_drive(cmd: list[str], out: Path, log: Path) -> subprocess.Popen:
    """The drive's own `iolab` process, its stdout into out.json and its stderr into log.txt,
    both marked as iolab's now, not when the drive ends: the coordinator may be killed first.
    Not stopped when the coordinator dies (kill -9): the drive's run goes on to its end and writes
    out.json, where `iolab resume FLEET` finds it. (A parent-death signal would reach it once per
    coordinator thread that exits, and a second SIGTERM ends a run before it can say where it
    stopped.)"""
    with open(out, "wb") as fo, open(log, "wb") as fe:
        mark_written(out, "fleet file")
        mark_written(log, "fleet file")
        with stops_blocked():  # until the drive's iolab can take a stop (CHILD_MAIN)
            return subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)


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
    # by target and place, not name: a default name follows what the drive reports (its serial),
    # which `iolab resume` may read otherwise (an ssh host's drive is named after reading it there)
    drives = {(d.target, d.where): d for d in fleet.drives}

    def one(m: Member) -> None:
        if stop.is_set():
            return
        d = state.dir / "drives" / m.name
        output_dir(d, "fleet directory")
        # an interrupted drive whose run was stored goes on with `iolab resume` of that run
        cmd = _resume_command(state, m, root) if m.run_dir else _command(state, drives[(m.target, m.where)], d, root)
        t0 = time.monotonic()
        _keep_earlier(d)
        out, log = check_file(d / "out.json", "fleet file"), check_file(d / "log.txt", "fleet file")
        # A stop is set, and passed on to the running drives, under the lock (below), and a drive
        # starts under it only while there is none: each drive is told of a stop or never started.
        # Started after the stop (it came while the drive was set up), a drive was told nothing and
        # ran to its end while the stopped fleet waited for it (a CI job's SIGTERM, forwarded before
        # the drive was running, never reached it).
        with lock:
            if stop.is_set():
                return
            proc = _start_drive(cmd, out, log)
            m.state, m.pid = "running", proc.pid
            state.save()
        on_event(m, "start")
        code = proc.wait()
        with lock:
            read_outcome(m, out, code)
            m.seconds = round(time.monotonic() - t0, 3)
            state.save()
        on_event(m, "end")

    def stopped(e: KeyboardInterrupt) -> None:  # let the running drives store what they measured, and stop
        with lock:  # no drive starts from here on (one)
            stop.set()
            state.stopped_by = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
            if isinstance(e, Interrupted):  # sent to the coordinator alone: each running drive gets it too
                _forward(e.signum, [m.pid for m in state.members if m.state == "running" and m.pid])

    pools: list[ThreadPoolExecutor] = []

    def make_pool() -> Callable[[], list[Future]]:
        # made inside _wait_all's try, a stop held while it is: one that came as the pool was made
        # (no drive started yet) went out of the fleet, fleet.json left 'running' with every drive pending
        pending = [m for m in state.members if m.state in ("pending", "interrupted", "not-started")]
        pools.append(ThreadPoolExecutor(max_workers=max(1, min(fleet.parallel or len(pending), len(pending) or 1))))
        return lambda: [pools[0].submit(one, m) for m in pending]

    interrupted = _wait_all(make_pool, stopped)
    with stop_deferred():  # the fleet's end is stored whole; a stop now takes effect after it
        for pool in pools:
            pool.shutdown()
        with lock:
            state.ended = now_iso()
            state.state = "interrupted" if interrupted else "complete"
            for m in state.members:
                if m.state == "pending":  # the fleet stopped before it began: it was never run
                    m.state = "not-started"
            state.save()
    return state


def _wait_all(
    make_pool: Callable[[], Callable[[], list[Future]]], stopped: Callable[[KeyboardInterrupt], None]
) -> bool:
    """Make the pool (`make_pool`, which gives the drives' submission), start the drives and wait
    for every one, each stop signal meanwhile handed to `stopped`; True if one came. Every step is
    inside the one try that takes a stop: one that came while the last was handled (Ctrl-C pressed
    twice, a second SIGTERM) is taken as the next, and one that came while the pool was made or the
    drives were handed to it is held until it is done. A stop that came before the drives were
    handed over starts none of them. Outside it (handled in the except clause, or come before the
    try began, as a drive's start sent the coordinator a SIGTERM on a busy machine) it went out of
    the fleet half-way: the coordinator gone with exit 130, fleet.json 'running' and the drives
    untold, running to their end."""
    stops: list[KeyboardInterrupt] = []
    held: list[int] = []
    submit: Callable[[], list[Future]] | None = None
    futures: list[Future] | None = None
    came, done = False, 0
    while True:
        try:
            # a loop of its own inside the try: the outer loop's jump back is outside it, where
            # a stop landing went out of the fleet; this one's is inside
            while True:
                if submit is None:
                    with stops_held() as held:  # the pool made whole: a stop waits for it
                        submit = make_pool()
                while held:
                    stops.append(stop_exception(held.pop(0)))
                while stops:
                    came = True
                    stopped(stops.pop(0))
                if futures is None:
                    with stops_held() as held:  # each drive handed over, or none: a stop waits for it
                        futures = [] if came else submit()
                    continue  # the stops held meanwhile are taken above
                if done == len(futures):
                    return came
                futures[done].result()
                done += 1
        except KeyboardInterrupt as e:
            stops.append(e)


def start(
    fleet_file: Path, test: str, args: list[str], root: Path, spec_sheet: Path | None = None
) -> tuple[Fleet, FleetState, list[str]]:
    """The fleet file checked, the same drive twice refused, the fleet directory made; and the
    drives whose identity could not be read (fleetident.identity: a host's drive reached through
    its fio server only, or over ssh where the read failed; a path of this machine it could not
    stat). A simulated drive has one: its preset, parameters and seed. `spec_sheet` (`iolab run
    --fleet F --spec-sheet S`) is the fleet's sheet in place of the fleet file's: kept with the
    fleet as that one is, so its report, `iolab fleet` and `show` judge against it alike."""
    from iolab.api.fleetident import refuse_duplicates, serial_named
    from iolab.api.reports import read_spec_sheet

    fleet = load_fleet(fleet_file)
    if spec_sheet is not None:
        fleet = replace(fleet, spec_sheet=spec_sheet)
    if fleet.spec_sheet is not None:  # a bad spec sheet is refused before any drive is written
        read_spec_sheet(fleet.spec_sheet, test)
    unread = refuse_duplicates(fleet)
    fleet = serial_named(fleet)
    return fleet, open_fleet(fleet, test, args, root), unread
