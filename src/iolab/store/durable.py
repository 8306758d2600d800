"""Files that survive a crash and a full disk: atomic replacement with fsync, and the one
error a full results filesystem gives."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

from iolab.core.diskfull import is_disk_full
from iolab.core.errors import Exit, IolabError
from iolab.core.stopdefer import stop_deferred
from iolab.targets.files import mark_inode
from iolab.targets.writepolicy import check_file, mark_written, new_part


class ResultsDiskFull(IolabError):
    """The filesystem holding the run directory has no room left."""

    exit_code = Exit.DISK_FULL
    ADVICE = (
        "Everything stored before this point is kept; free space on that filesystem (or use --runs-dir on "
        "another one) and run again."
    )

    def __init__(
        self, run_dir: Path, detail: str | BaseException = "", advice: str | None = None, disk: str = "results disk"
    ):
        if isinstance(detail, OSError) and detail.filename:
            detail = self.written(detail)
        # said once, however often the error is wrapped on its way up
        detail = str(detail).replace(" " + self.ADVICE, "").rstrip(".")
        advice = self.ADVICE if advice is None else advice
        super().__init__(f"{disk} full at {run_dir}: {detail or 'no space left on device'}. {advice}")

    @staticmethod
    def written(e: OSError) -> str:
        """The system's words and the file it was writing ("No space left on device writing F")."""
        return f"{e.strerror} writing {e.filename}"


@contextmanager
def room_for(what: str, out: Path, again: str, run_dir: Path | None = None) -> Iterator[None]:
    """A full disk while `what` (of the run at `run_dir`, if any) is written into `out` becomes
    exit 5 naming the run (its results disk) or the output, and `again` (what writes it once
    there is room); the writer inside removes what it left half written. Without it the command
    ended with exit 2 and the system's bare "No space left on device"."""
    try:
        yield
    except Exception as e:  # an OSError, SQLite's or DuckDB's error: is_disk_full tells which is a full disk
        if not isinstance(e, ResultsDiskFull) and not is_disk_full(e):
            raise
        why = f" ({ResultsDiskFull.written(e)})" if isinstance(e, OSError) and e.filename else ""
        kept = "no part of it is kept" + ("" if run_dir is None else " and what the run stores is as it was")
        if run_dir is not None and _same_filesystem(out, run_dir):
            raise ResultsDiskFull(
                run_dir, f"no room for {what} in {out}{why}; {kept}", f"Free space on that filesystem, then {again}."
            ) from None
        of = "" if run_dir is None else f" of run {run_dir}"
        raise ResultsDiskFull(
            out, f"no room for {what}{of}{why}; {kept}", f"Free space there, then {again}.", "disk"
        ) from None


def _same_filesystem(out: Path, run_dir: Path) -> bool:
    """`out` (or the nearest of its parents that exists) is on the run directory's filesystem."""
    p = out
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return os.stat(p).st_dev == os.stat(run_dir).st_dev
    except OSError:
        return True


# Space kept aside in each open run directory from before the run starts, spent only on the
# run's last manifest write, so a run on a filesystem that fills still ends marked failed.
RESERVE_NAME = ".space-reserve"
RESERVE_BYTES = 128 * 1024


def reserve_space(run_dir: Path) -> None:
    """Set the space aside (OSError when the filesystem has not that much left)."""
    f = run_dir / RESERVE_NAME
    if f.is_file() and f.stat().st_size == RESERVE_BYTES:
        return
    try:
        with open(f, "wb") as out:
            out.write(b"\0" * RESERVE_BYTES)
            out.flush()
            os.fsync(out.fileno())
    except OSError:
        f.unlink(missing_ok=True)
        raise


def no_room(path: Path) -> bool:
    """The filesystem holding path has (next to) no room left."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def release_space(run_dir: Path) -> bool:
    """Give the space back; False when there was none set aside."""
    try:
        (run_dir / RESERVE_NAME).unlink()
        return True
    except FileNotFoundError:
        return False


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """tmp + fsync + rename + fsync(dir): after a crash the file is the old or the new one, whole."""
    _replace_together([(path, data)], None)


def _replace_together(files: Sequence[tuple[Path, bytes]], seal: Callable[[Path, Path], object] | None) -> None:
    """Each file written whole beside its name (fsync'd, sealed) before any takes its name: a
    failure while writing (a full disk) leaves every old file as it was and no tmp file. The
    names are taken in order, so readers go by the last. `seal(tmp, path)` is called on each
    written tmp file before it takes its name (to mark it as iolab's, so a kill between the
    rename and a later mark cannot leave an unmarked file)."""
    tmps: list[Path] = []
    try:
        for path, data in files:
            tmps.append(new_part(path))
            with open(tmps[-1], "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            if seal is not None:
                seal(tmps[-1], path)
        # a stop between two renames left a set neither old nor new (a meter log beside the
        # power.json of the one before): it takes effect once all have their names
        with stop_deferred() if len(files) > 1 else nullcontext():
            for (path, _), tmp in zip(files, tmps):
                os.replace(tmp, path)
    except BaseException:
        for tmp in tmps:
            tmp.unlink(missing_ok=True)
        raise
    for parent in dict.fromkeys(path.parent for path, _ in files):
        fsync_dir(parent)


def replace_file(path: Path, data: bytes, what: str) -> Path:
    """A file replaced whole after the write policy allows it (replace_files)."""
    replace_files([(path, data, what)])
    return path


def replace_files(files: Sequence[tuple[Path, bytes, str]]) -> None:
    """Files (path, contents, what it is) replaced together after the write policy allows each,
    marked as iolab's before they take their names: killed at any moment, a name holds the old
    file or the new one, each marked, so the next write is allowed; a full disk while they are
    written leaves every old one (a pair that belongs together, such as `iolab power`'s meter log
    and power.json, is never left half replaced). Where the filesystem has no xattrs the sidecar
    mark can only follow the rename, since it names the inode."""
    for path, _, what in files:
        check_file(path, what)
    whats = {path: what for path, _, what in files}
    _replace_together(
        [(path, data) for path, data, _ in files], lambda tmp, path: mark_inode(tmp, "output", whats[path])
    )
    for path, _, what in files:
        mark_written(path, what)
