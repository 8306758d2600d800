"""Raw output taken out of a run's results but kept: the files of an attempt that is not stored
(a round resume runs again, a cell's output that no stored cell names) move from raw/ into a
new raw/interrupted-N/, never deleted or overwritten. A cell set aside always names its own
files: its new paths are recorded before its files move, and a move a stopped resume left
undone is finished before the round runs again (finish_moves, own_files)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from iolab.core.usertext import name_problem
from iolab.core.writeaside import fsync_dir


def raw_files(raw_dir: Path, prefixes: tuple[str, ...]) -> list[Path]:
    """The files directly in `raw_dir` whose names start with one of `prefixes`. The runner asks
    before every cell, so the listing is a plain scan (the name first, the file type from the
    directory entry): a stat of every file of a long run per cell would cost more than the check."""
    try:
        with os.scandir(raw_dir) as entries:
            return sorted(Path(e.path) for e in entries if e.name.startswith(prefixes) and e.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def move_aside(raw_dir: Path, files: list[Path]) -> dict[str, str]:
    """Move `files` (in `raw_dir`) into a new raw_dir/interrupted-N/; returns each one's old and
    new path in the run directory ('raw/…', as the cells table names raw files)."""
    moves = aside_plan(raw_dir, files)
    carry_out(raw_dir.parent, moves)
    return moves


def aside_plan(raw_dir: Path, files: list[Path]) -> dict[str, str]:
    """Where `files` go: a new raw_dir/interrupted-N/, made now so that the cells can name it
    before the files move (carry_out); each file's old and new path in the run directory."""
    if not files:
        return {}
    n = 1
    while True:  # mkdir, not exists(): the directory is this plan's alone
        dest = raw_dir / f"interrupted-{n}"
        try:
            dest.mkdir()
            break
        except FileExistsError:
            n += 1
    return {f"raw/{f.name}": f"raw/{dest.name}/{f.name}" for f in files}


def carry_out(run_dir: Path, moves: dict[str, str]) -> None:
    """Move the files as planned; one already moved (a resume stopped midway, finish_moves) is skipped."""
    dirs = set()
    for old, new in moves.items():
        if (run_dir / old).exists():
            os.replace(run_dir / old, run_dir / new)
            dirs.add((run_dir / new).parent)
    for d in dirs:
        fsync_dir(d)
    if dirs:
        fsync_dir(run_dir / "raw")


def finish_moves(run_dir: Path, named: set[str]) -> None:
    """Cells set aside name their files under raw/interrupted-N/ before the files move there: a
    resume stopped in between left a file in raw/ that its cell names elsewhere. It moves now,
    before a round run again writes its own file of that name into raw/."""
    moves = {}
    for f in named:
        p = Path(f)
        # only raw/interrupted-N/NAME, as aside_plan names them: a name a hand put in results.db
        # ('../../x/interrupted-1/f') would move the run's file out of its directory
        ours = len(p.parts) == 3 and p.parts[0] == "raw" and name_problem(p.name) is None
        aside = ours and p.parent.name.startswith("interrupted-") and f"raw/{p.name}" not in named
        if aside and not (run_dir / f).exists() and (run_dir / "raw" / p.name).is_file():
            moves[f"raw/{p.name}"] = f
    carry_out(run_dir, moves)


def own_files(run_dir: Path, files: list[str], moves: dict[str, str], named: set[str]) -> list[str]:
    """A set-aside cell's raw files once `moves` are carried out. A file not in raw/ any more
    (moved aside by a resume that was stopped, or by one of two resumes at once, before its cell
    said so) is the copy under raw/interrupted-*/ that no cell names; none: it is gone, and the
    cell must not keep the name in raw/ that the round run again writes."""
    out = []
    for f in files:
        if f in moves or (run_dir / f).exists():
            out.append(moves.get(f, f))
            continue
        name = Path(f).name
        copies = sorted(
            (p for p in (run_dir / "raw").glob(f"interrupted-*/{name}") if str(p.relative_to(run_dir)) not in named),
            key=lambda p: int(p.parent.name.rsplit("-", 1)[1]) if p.parent.name.rsplit("-", 1)[1].isdigit() else 0,
        )
        if copies:
            out.append(str(copies[-1].relative_to(run_dir)))
    return out


def take_out(
    db: sqlite3.Connection, run_dir: Path, phase: str, from_round: int, moves: dict[str, str], named: set[str]
) -> None:
    """In the caller's transaction: the phase's cells from `from_round` on become kind
    'interrupted', each naming its own files where they will be (own_files); its rounds, steady
    state and end are taken out of the results."""
    rows = db.execute(
        "SELECT id, raw_files FROM cells WHERE phase=? AND round>=? AND kind IN ('measure', 'precondition')",
        (phase, from_round),
    ).fetchall()
    for cid, raw in rows:
        files = own_files(run_dir, json.loads(raw or "[]"), moves, named)
        db.execute("UPDATE cells SET kind='interrupted', raw_files=? WHERE id=?", (json.dumps(files), cid))
    db.execute("DELETE FROM rounds WHERE phase=? AND round>=?", (phase, from_round))
    db.execute("DELETE FROM steady WHERE phase=? AND round>=?", (phase, from_round))
    db.execute("UPDATE phases SET ended=NULL, steady=NULL, rounds=NULL, stop_reason=NULL WHERE name=?", (phase,))


def named_files(db: sqlite3.Connection) -> set[str]:
    """Every raw file some stored cell names."""
    return {x for (raw,) in db.execute("SELECT raw_files FROM cells") for x in json.loads(raw or "[]")}


def strays_aside(raw_dir: Path, tag: str, db: sqlite3.Connection) -> int:
    """Raw files of cell `tag` that no stored cell names (output of an attempt that was never
    stored, e.g. written by a stopped run's process after resume had set its round aside)
    move to a new raw/interrupted-N/, so that the cell can run. Stored output is never
    moved: the engine then refuses to overwrite it. Returns the number of files moved."""
    files = raw_files(raw_dir, (f"{tag}.", f"{tag}_"))
    if not files:  # the runner asks before every cell: the cells table is read only when there are some
        return 0
    named = named_files(db)
    if any(f"raw/{f.name}" in named for f in files):
        return 0
    return len(move_aside(raw_dir, files))
