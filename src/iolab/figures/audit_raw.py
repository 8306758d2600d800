"""Whether each stored cell's raw engine output is still whole: the figures of a cell rest on
its raw output (the report links it as the evidence behind them), so a file cut short after the
run (a copy stopped midway, a full disk, a hand) leaves figures nobody can check again.

The check is engine-neutral: every engine iolab runs writes its result as JSON (fio one object
per status report with its final report last, and warnings between them as text; the simulator
one object). A whole output holds at least one object, and every object begun in it ends; a
truncated one ends inside an object. Whole is not enough: its final report's IO counts (fio's
jobs or its client's hosts, the simulator's read and write) must be those the cell stored, when
the cell has that one output (a split round's parts each hold a share): a file cut where an
earlier status report ends, or one whose jobs list lost a job, is whole. Reads only the run
directory.

The store records each raw file's size and mtime as its cell is stored, once the engine's parser
has read it whole (resultsdb.raw_stats). A file still as recorded is that whole file, so it is
not parsed again: parsing every cell's output whenever a stored audit was read cost 23 ms of CPU
for a quick run (`show`, the report, and `history` once per run). A file cut or grown since, or
one with no record (a run stored before the record, a file moved), is parsed as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from iolab.core.cellschema import CellRow
from iolab.core.results import output_damage as damage


def json_outputs(cell: CellRow) -> list[str]:
    """The JSON files a cell names as its raw output, relative to the run directory; only names
    inside it (a name a hand put in results.db pointing elsewhere is not read)."""
    out = []
    for name in cell.raw_files or ():
        p = Path(str(name))
        if p.suffix == ".json" and not p.is_absolute() and ".." not in p.parts:
            out.append(str(name))
    return out


def _as_recorded(path: Path, record: tuple[int, int] | None) -> bool:
    """Whether the file at `path` has the size and mtime recorded when its cell was stored."""
    if record is None:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return False  # damage() says why
    return (st.st_size, st.st_mtime_ns) == tuple(record)


def _stored_ios(cell: CellRow, names: list[str]) -> tuple[int, int] | None:
    """The cell's read and write IOs, which its one JSON output must hold (a fio client's one
    report is named once per host); None for a cell of several outputs, each a part's share."""
    if len(set(names)) != 1 or cell.read_ios is None or cell.write_ios is None:
        return None
    return int(cell.read_ios), int(cell.write_ios)


def damaged_outputs(
    run_dir: Path, cells: list[CellRow], recorded: Mapping[str, tuple[int, int]] | None = None
) -> tuple[int, list[str]]:
    """How many of `cells` name a JSON output, and one line per cell whose output is not whole.
    `recorded`: each raw file's (size, mtime_ns) when its cell was stored (store.bulk.raw_stats)."""
    checked, bad = 0, []
    recorded = recorded or {}
    for c in cells:
        names = json_outputs(c)
        checked += bool(names)
        for name in names:
            path = run_dir / name
            why = None if _as_recorded(path, recorded.get(name)) else damage(path, _stored_ios(c, names))
            if why:
                where = (
                    f"{c.phase} round {c.round} {c.cell_key}" if c.round else f"{c.phase} preconditioning {c.cell_key}"
                )
                said = why if why.startswith("holds") else f"is {why}"  # not "is holds no JSON result"
                bad.append(f"{where}: raw output {name} {said}")
    return checked, bad


def outputs_changed(run_dir: Path, cells: list[CellRow], recorded: Mapping[str, tuple[int, int]]) -> bool:
    """Whether any of `cells`' JSON outputs is not as recorded when its cell was stored (grown,
    cut, rewritten, or never recorded): audit.stored_audit then derives the figures again."""
    return any(not _as_recorded(run_dir / name, recorded.get(name)) for c in cells for name in json_outputs(c))
