"""The one way iolab replaces a file whole: its new contents are written aside, under a fresh
name nothing held, and take the file's name only once whole. The write policy's outputs
(targets/writepolicy.output_files) and the run store's own files (store/durable.write_atomic:
manifest.json, power.json) both go through it.

An aside file is made with O_EXCL|O_NOFOLLOW: a fixed name (`NAME.tmp`) was opened through
whatever held it, so a symlink planted there made iolab write its manifest into the file the
link named, then rename the link itself over manifest.json; a killed writer's leftover there was
overwritten or removed as if it were iolab's.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

from iolab.core.stopdefer import stop_deferred


@contextmanager
def written_aside(
    paths: Sequence[Path], put: Callable[[Path, Path], object] = os.replace, durable: bool = False
) -> Iterator[list[Path]]:
    """Hand the writer a new, empty file beside each of `paths`; once it is done, each takes its
    name (`put(part, path)`, a rename), in the order given, under one deferred stop: a stop between
    two renames left a set that was neither the old one nor the new one (a new PDF beside an
    earlier HTML, a meter log beside the power.json of the one before). Readers go by the last
    name taken, so give the index last. A writer that fails or is stopped leaves every file as it
    was and no aside file. `durable`: each file reaches the disk before any takes its name, and
    the renames before this returns (fsync), so after a crash a name holds the old file or the
    new one, whole; the run store needs it, a report can be written again."""
    parts: list[Path] = []
    try:
        with stop_deferred():  # a stop as a part is made, before it is listed, left it behind
            for p in paths:
                parts.append(_new_part(Path(p)))
        yield parts
        if durable:
            for part in parts:
                _fsync(part, os.O_RDONLY | os.O_NOFOLLOW)
        with stop_deferred() if len(parts) > 1 else nullcontext():
            for part, p in zip(parts, paths):
                put(part, Path(p))
    finally:
        for part in parts:
            part.unlink(missing_ok=True)
    if durable:
        for parent in dict.fromkeys(Path(p).parent for p in paths):
            fsync_dir(parent)


def _new_part(p: Path) -> Path:
    """A new, empty file beside `p` for its next contents, made under a name nothing holds
    (O_EXCL: a file of that name, someone's or a killed writer's, is never written or removed)."""
    for n in itertools.count():
        part = p.with_name(f".{p.name}.{os.getpid()}-{n}.partial")
        try:
            os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666))
            return part
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def fsync_dir(path: Path) -> None:
    """A directory's entries (the names just taken) reach the disk."""
    _fsync(path, os.O_RDONLY | os.O_DIRECTORY)


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
