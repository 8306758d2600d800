"""Raw output taken out of a run's results but kept: the files of an attempt that is not stored
(a round resume runs again, a cell's output that no stored cell names) move from raw/ into a
new raw/interrupted-N/, never deleted or overwritten."""

from __future__ import annotations

import os
from pathlib import Path

from iolab.store.durable import fsync_dir


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
    if not files:
        return {}
    n = 1
    while (raw_dir / f"interrupted-{n}").exists():
        n += 1
    dest = raw_dir / f"interrupted-{n}"
    dest.mkdir()
    moved = {}
    for f in files:
        os.replace(f, dest / f.name)
        moved[f"raw/{f.name}"] = f"raw/{dest.name}/{f.name}"
    fsync_dir(raw_dir)
    return moved
