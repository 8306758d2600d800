"""Whether each stored cell's raw engine output is still whole: the figures of a cell rest on
its raw output (the report links it as the evidence behind them), so a file cut short after the
run (a copy stopped midway, a full disk, a hand) leaves figures nobody can check again.

The check is engine-neutral: every engine iolab runs writes its result as JSON (fio one object
per status report with its final report last, and warnings between them as text; the simulator
one object). A whole output holds at least one object, and every object begun in it ends; a
truncated one ends inside an object. Reads only the run directory.
"""

from __future__ import annotations

import json
from pathlib import Path

from iolab.core.cellschema import CellRow
from iolab.core.results import json_objects


def damage(path: Path) -> str | None:
    """Why the JSON output at `path` is not whole (None: it is)."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    try:
        json.loads(text)  # the usual case, one object: a single parse
        return None
    except ValueError:
        pass
    objects, _text, cut = json_objects(text)
    if cut is not None:
        return f"truncated (a JSON object begun at byte {cut} never ends; {len(text)} bytes in all)"
    return None if objects else f"holds no JSON result ({len(text)} bytes)"


def _outputs(cell: CellRow) -> list[str]:
    """The JSON files a cell names as its raw output, relative to the run directory; only names
    inside it (a name a hand put in results.db pointing elsewhere is not read)."""
    out = []
    for name in cell.raw_files or ():
        p = Path(str(name))
        if p.suffix == ".json" and not p.is_absolute() and ".." not in p.parts:
            out.append(str(name))
    return out


def damaged_outputs(run_dir: Path, cells: list[CellRow]) -> tuple[int, list[str]]:
    """How many of `cells` name a JSON output, and one line per cell whose output is not whole."""
    checked, bad = 0, []
    for c in cells:
        names = _outputs(c)
        checked += bool(names)
        for name in names:
            why = damage(run_dir / name)
            if why:
                where = (
                    f"{c.phase} round {c.round} {c.cell_key}" if c.round else f"{c.phase} preconditioning {c.cell_key}"
                )
                bad.append(f"{where}: raw output {name} is {why}")
    return checked, bad
