"""One writer per run directory: a run, its resume, `audit --store`, `power` and a report written
into the run claim it before they read what they will change, and hold the claim to the end.

Without it two `iolab resume` of one run both went ahead: each read the run as interrupted, each
set the same round aside into its own raw/interrupted-N/, and one left the interrupted cells
naming the files the other's new measurement then wrote. A file target's lock kept that from
happening on a file; a simulated drive has no such lock, and the run directory is the thing
two writers share whatever the target.

The claim is an flock on RUN/writer.lock, which the kernel drops when its process ends however
it ends, so the claim of a killed process is taken over by the next writer (one that then
refuses the run, or fails, puts the dead writer's file back as it found it). The file says who
holds it (pid, the process's start time, the boot, its command line), so a second writer is
refused naming the first. On a filesystem without flock (some NFS) that record is the claim: a
writer that names a process still alive (the same pid, start time and boot, core/procs.py) is
refused; one that names a dead process is stale and taken over.

The claim is also what the write policy (targets/writepolicy.py) asks of a write into a run
directory: only a process that holds the run's claim writes there.

A process that holds the claim may take it again (an open store and the report it writes): the
claim counts its holders and is dropped when the last one releases it.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from iolab.core.errors import IolabError, RefusedError
from iolab.core.procs import boot_id, holder_record, process_start, same_process_alive
from iolab.core.stopdefer import stop_deferred
from iolab.store.durable import is_disk_full
from iolab.targets.lock import open_file_problem
from iolab.targets.writepolicy import own_run, refusal, run_place_problems

WRITER_FILE = "writer.lock"


@dataclass(eq=False)
class RunClaim:
    run_dir: Path
    fd: int
    holders: int = 1
    # a dead writer's claim file as this claim found it (its record, access and modification
    # times); None: there was none
    found: tuple[bytes, int, int] | None = None
    pid: int = field(default_factory=os.getpid)  # the process that holds it (not a forked child)

    def release(self, failed: bool = False) -> None:
        """Drop the claim. `failed`: the command refused or failed, and a dead writer's claim file
        it took over is put back as it was (a refusing command leaves the run as it found it)."""
        self.holders -= 1
        if self.holders > 0:
            return
        _HELD.pop(str(self.run_dir), None)
        own_run(self.run_dir, False)
        try:
            if failed and self.found is not None:
                _put_back(self.fd, *self.found)
            else:  # removed while still held: a writer that opened the old file retries (claim_run)
                os.unlink(self.run_dir / WRITER_FILE)
        except OSError:
            pass
        os.close(self.fd)

    def __enter__(self) -> RunClaim:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.release(failed=kind is not None)


def _put_back(fd: int, record: bytes, atime_ns: int, mtime_ns: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, record, 0)
    os.utime(fd, ns=(atime_ns, mtime_ns))


_HELD: dict[str, RunClaim] = {}


@atexit.register
def _let_go_at_exit() -> None:
    """The claims a command still holds as its process ends are let go of as a failed command's
    are: a stop between claim_run's return and the `with` or ExitStack that would release it
    (`iolab report RUN` stopped by Ctrl-C as it began) left writer.lock naming a process that
    was gone. The kernel drops the flock at exit in any case; this removes the file with it."""
    for claim in list(_HELD.values()):
        if claim.pid == os.getpid():  # a forked child that exits leaves its parent's claims alone
            claim.holders = 1
            claim.release(failed=True)


@contextmanager
def released_on_error(claim: RunClaim | None) -> Iterator[None]:
    """Give the claim up again when what was to hold it fails to open."""
    try:
        yield
    except BaseException:
        if claim is not None:
            claim.release(failed=True)
        raise


def claim_run(run_dir: Path, instead: str = "") -> RunClaim:
    """Claim the run directory for this process's writes. RefusedError (exit 3) naming the
    holder when another live process writes it; IolabError (exit 2) when the run directory is
    on a read-only filesystem, ending with `instead`: the command that does without writing
    there (a report with --out, an audit without --store)."""
    key = os.path.realpath(run_dir)
    got = _HELD.get(key)
    if got is not None:
        got.holders += 1
        return got
    # A stop between the claim file's creation and the claim's record left an empty writer.lock
    # behind (the descriptor closed, the file kept): the claim is taken whole, a stop then lands
    # once it is held, and a claim the caller never got is let go of as a failed command's is.
    taken: list[RunClaim] = []
    try:
        with stop_deferred():
            taken.append(_take(key, instead))
    except BaseException:
        for claim in taken:
            claim.release(failed=True)
        raise
    return taken[0]


def _take(key: str, instead: str) -> RunClaim:
    """claim_run's claim of the run directory `key` (its real path), not yet held by this process."""
    path = Path(key) / WRITER_FILE
    while True:
        existed = os.path.lexists(path)  # a dead writer's claim: put back if this command refuses
        fd = _open(path, instead)
        try:
            if _lock(fd):
                # The holder before may have removed the file between our open and our lock: a
                # lock on a file no one else opens holds nothing, so take the one there now.
                now = os.stat(path, follow_symlinks=False) if path.exists() else None
                if now is not None and (now.st_dev, now.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                    break
                os.close(fd)
                continue
            holder = holder_record(fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        raise RefusedError(_in_use(Path(key), holder))
    got = RunClaim(Path(key), fd, found=_as_found(fd) if existed else None)
    record = {
        "pid": os.getpid(),
        "pid_start": process_start(os.getpid()),
        "boot_id": boot_id(),
        "command": " ".join(["iolab", *sys.argv[1:]])[:300],
        "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    data = json.dumps(record).encode()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        _HELD[key] = got
        own_run(key)  # the write policy lets this process write into the run's directory now
    except BaseException:
        # a full disk (the caller says so), or a stop before the caller has the claim to let go
        # of: no claim is left behind, nor its descriptor (a stop here left writer.lock naming
        # this process once it was gone, `iolab report RUN` stopped by Ctrl-C as it began)
        got.release()
        raise
    return got


def claim_if_inside(run_dir: Path, out: Path, instead: str, what: str, place: str) -> AbstractContextManager[object]:
    """The run's claim when `out` is its own folder `place` in it (a report or an export into the
    run's own folder: one more writer in the run, and the write policy's leave to write there);
    nothing to claim when it goes elsewhere. Any other place in the run is refused (the write
    policy's run_place_problems), here where every output into a run takes its leave."""
    d, o = Path(run_dir).resolve(), Path(out).resolve()
    problems = run_place_problems(d, o, place)
    if problems:
        raise refusal(what, out, problems)
    return claim_run(d, instead) if d in o.parents else nullcontext()


def _as_found(fd: int) -> tuple[bytes, int, int] | None:
    try:
        st = os.fstat(fd)
        return os.pread(fd, min(st.st_size, 64 * 1024), 0), st.st_atime_ns, st.st_mtime_ns
    except OSError:
        return None


def _open(path: Path, instead: str) -> int:
    try:
        # never through a symbolic link (O_NOFOLLOW) nor a hard link (open_file_problem): the file is
        # written (truncated, then the holder's record), which would replace whatever file it names
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as e:
        if is_disk_full(e):
            raise  # not a refusal: the caller says the disk is full (durable.room_for)
        if e.errno == errno.EROFS:  # no other process is the matter: nothing can write there
            raise IolabError(
                f"run directory {path.parent} is on a read-only filesystem, so iolab cannot write into it; "
                f"nothing was written. {instead or 'Mount that filesystem read-write, then run the command again.'}"
            ) from None
        raise RefusedError(
            f"cannot claim run directory {path.parent} for writing: {path.name}: {e.strerror}. A run "
            "directory is written by one iolab process at a time, which needs that file."
        ) from None
    unsafe = open_file_problem(fd)
    if unsafe:
        os.close(fd)
        raise RefusedError(
            f"{path} {unsafe}, so iolab will not write its claim into it and cannot claim run directory "
            f"{path.parent}; remove {path.name} (iolab makes it afresh) and try again."
        )
    return fd


def _lock(fd: int) -> bool:
    """flock the claim file; True when this process now holds it. Without flock on the
    filesystem, True unless the record names a process that still runs."""
    import fcntl  # here: not every module that imports the store takes a claim

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError:  # no flock here (ENOLCK): the record decides
        h = holder_record(fd)
        pid = h.get("pid")
        return not (
            isinstance(pid, int)
            and pid != os.getpid()
            and same_process_alive(pid, h.get("pid_start"), h.get("boot_id"))
        )


def _in_use(run_dir: Path, holder: dict) -> str:
    pid = holder.get("pid")
    who = (
        f"iolab process {pid} (`{holder.get('command', 'iolab')}`, since {holder.get('since', '?')}) is writing it"
        if pid
        else f"another iolab process holds its claim {run_dir / WRITER_FILE} (it is starting)"
    )
    stop = f", or stop that process (kill {pid})" if pid else ""
    return (
        f"Refusing to write to run {run_dir.name} ({run_dir}): {who}. A run directory has one writer at a "
        f"time: two would mix their rounds and raw files. Wait for it to end{stop}, then try again."
    )
