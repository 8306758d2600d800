"""`iolab runs`: every run directory under a root, broken ones included with the reason."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.procs import same_process_alive
from iolab.core.runfiles import not_a_run_of, run_name_order
from iolab.core.safefile import read_json
from iolab.core.units import counted
from iolab.store.manifest import Manifest, runs_root, unknown_parts
from iolab.store.resultsdb import unknown_schema
from iolab.store.runstore import RunStore
from iolab.store.unstarted import NOTHING_STORED, stopped_unstarted


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    test: str
    target: str
    state: str  # running | complete | failed | interrupted | broken
    started: str
    compliant: bool
    noncompliance: tuple[str, ...] = ()
    problem: str | None = None  # why a broken run cannot be read
    unknown: tuple[str, ...] = ()  # what a newer iolab stored that this one does not know (manifest.unknown_parts)


def _looks_like_run(d: Path) -> bool:
    return d.is_dir() and any((d / n).exists() for n in ("manifest.json", "results.db", "raw"))


def summarise_run(d: Path) -> RunSummary:
    """One line of `iolab runs`; a run that cannot be read is 'broken', with the reason."""
    try:
        s = RunStore(d, writable=False)
    except IolabError as e:
        m = _manifest_or_none(d)
        if m is None:  # the manifest itself is the problem: say what we can from the name
            return RunSummary(d.name, d, "?", "?", "broken", "?", False, (), str(e))
        if (
            m.state == "running"
            and not (d / "results.db").exists()
            and same_process_alive(m.pid, m.pid_start, m.boot_id)
        ):
            # RunStore.create writes the manifest first: a live writer is still setting the run up.
            return RunSummary(
                m.run_id,
                d,
                m.test,
                m.target.get("spec", "?"),
                "running",
                m.started,
                m.compliant,
                tuple(m.noncompliance),
            )
        return RunSummary(
            m.run_id,
            d,
            m.test,
            m.target.get("spec", "?"),
            "broken",
            m.started,
            m.compliant,
            tuple(m.noncompliance),
            _why(d, e),
        )
    m = s.manifest
    if m is None:
        s.close()
        return RunSummary(d.name, d, "?", "?", "broken", "?", False, (), f"{d / 'manifest.json'}: missing.")
    try:
        s.check()
        state = "interrupted" if m.state == "running" and not s.writer_alive() else m.state
        unknown = tuple(unknown_parts(m, unknown_schema(s.query)))
        return RunSummary(
            m.run_id,
            d,
            m.test,
            m.target.get("spec", "?"),
            state,
            m.started,
            m.compliant,
            tuple(m.noncompliance),
            unknown=unknown,
        )
    except IolabError as e:
        return RunSummary(
            m.run_id,
            d,
            m.test,
            m.target.get("spec", "?"),
            "broken",
            m.started,
            m.compliant,
            tuple(m.noncompliance),
            _why(d, e),
        )
    finally:
        s.close()


def _why(d: Path, e: IolabError) -> str:
    """Why a run cannot be read: a run stopped before it stored anything says so, not that its
    results database is not iolab's."""
    return f"{NOTHING_STORED}: nothing to show or resume" if stopped_unstarted(d) else str(e)


def _manifest_or_none(d: Path) -> Manifest | None:
    try:
        return Manifest.from_document(read_json(d / "manifest.json", "run manifest", "manifest"))
    except (OSError, IolabError, TypeError):
        return None


def checked_root(root: Path | None) -> Path:
    """The runs directory `iolab runs` lists: a missing one or a file is an error (an empty list
    would say "no runs" of a path that was mistyped), except the default ./runs before any run."""
    given = root is not None or "IOLAB_RUNS" in os.environ
    root = root or runs_root()
    if root.is_dir() or (not given and not root.exists()):
        return root
    what = "is not a directory" if root.exists() else "does not exist"
    raise IolabError(
        f"runs directory {root} {what}, so it holds no runs. Give the directory `iolab run` stored them in "
        "(--runs-dir DIR or $IOLAB_RUNS)."
    )


def list_runs(root: Path | None = None) -> list[RunSummary]:
    """Every run directory under root, broken ones included."""
    root = root or runs_root()
    if not root.is_dir():
        return []
    return [
        summarise_run(d)
        for d in sorted(root.iterdir(), key=lambda d: run_name_order(d.name))
        if _looks_like_run(d) and not not_a_run_of(d, root)
    ]


def leftovers() -> list[str]:
    """What killed runs left on this machine, for `iolab runs` to say (read-only: it removes
    nothing): fio servers whose iolab is gone, and lock files no process holds."""
    from iolab.engines.serverpids import leftover_servers
    from iolab.targets.lock import stale_locks

    lines = [
        f"leftover fio server: pid {s['pid']} listening on {s['address']}:{s['port']}, started by iolab pid "
        f"{s['owner']} (run {s.get('run_dir') or 'not named'}), which is gone; the next --hosts run stops it, "
        f"or `kill {s['pid']}`"
        for s in leftover_servers()
    ]
    stale = stale_locks()
    if stale:
        lines.append(
            f"{counted(len(stale), 'stale lock file')} that no process holds (the run that held it was killed). Harmless "
            "(the next run on that target takes the lock over); `iolab runs` leaves them in place:"
        )
        # the newest few: a test machine gathers hundreds, and a page of them hid the runs' list
        newest = sorted(stale, key=lambda s: _mtime(s[0]), reverse=True)
        for path, info in newest[:STALE_SHOWN]:
            who = f"run {info['run_id']}" if info.get("run_id") else "a run that had not started"
            lines.append(f"  {path} ({who}, pid {info.get('pid', '?')}, target {info.get('target', '?')})")
        if len(newest) > STALE_SHOWN:
            dirs = ", ".join(sorted({str(p.parent) for p, _ in newest[STALE_SHOWN:]}))
            lines.append(f"  and {counted(len(newest) - STALE_SHOWN, 'older one')} in {dirs}")
    return lines


STALE_SHOWN = 5  # stale lock files `iolab runs` names one by one, newest first


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0
