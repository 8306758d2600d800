"""Claims: one run per target at a time, held by the kernel for as long as the run lasts.

A run claims its target before the safety checks and keeps the claim until it ends, however
it ends (the kernel drops every lock and descriptor of a process that dies):
  - every kind: an flock on a lock file named after the target in the lock directory
    ($IOLAB_LOCK_DIR, else /run/iolab/locks, else a private per-user directory under /tmp when
    that is not writable); the file says which run holds it (run id, pid, run directory), so a
    second run is refused naming the first. Lock files are written, so a directory another user
    could plant files in and a file that is a link or someone else's are refused;
  - block devices: an O_EXCL open as well, so the kernel also refuses mount, mkfs, swapon and
    other exclusive opens meanwhile (fio's plain opens still work);
  - files: an flock on the file itself as well, which holds across lock directories;
  - NBD exports by each server endpoint their URI reaches (the host resolved, the port and
    export written one way); simulated drives only when they save their state to a file.
A hosts run's export reached through an SSH host is locked on that host, under the names a
local run there would take (engines/hostholds.py: lock_name of the endpoints as the host reaches
them), so the two exclude each other.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import hashlib
import json
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from iolab.core.errors import IolabError, RefusedError
from iolab.core.procs import holder_record
from iolab.targets import host
from iolab.targets.facts import block_dev
from iolab.targets.kinds import kind_of
from iolab.targets.model import Target
from iolab.targets.spec import nbd_endpoints
from iolab.targets.usage import loop_backing

DEFAULT_LOCK_DIR = Path("/run/iolab/locks")


@dataclass(eq=False)
class TargetClaim:
    target: Target
    lock_path: Path | None  # None: nothing to hold (a simulated drive without save=)
    exclusive: bool = True  # block devices: whether our O_EXCL open succeeded
    fds: list[int] = field(default_factory=list)  # the lock file's first
    info: dict = field(default_factory=dict)
    file_held: bool = False  # file targets: an flock on the file itself
    parts: list[TargetClaim] = field(default_factory=list)  # loop devices: the backing file's claim
    pid: int = field(default_factory=os.getpid)  # the process that holds it (not a forked child)

    def hold_file(self) -> None:
        """flock the file target itself, which holds across lock directories (a missing file
        is held once the run creates it, see file_created)."""
        try:
            fd = os.open(self.target.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return  # missing (the run creates it) or unreadable (the safety checks refuse it)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            st = os.fstat(fd)
            os.close(fd)
            found = _holder_of(st.st_dev, st.st_ino, self.lock_path)
            if found is not None:  # a run on this file by another name (a hard link), named by its lock
                raise RefusedError(taken(self.target, found[1], found[0])) from None
            raise RefusedError(
                f"Refusing to write to target {self.target.spec!r} ({self.target.path}): another process holds "
                "it locked (flock): an iolab run that keeps its locks elsewhere (another user, another "
                "IOLAB_LOCK_DIR), or another program. Wait for it to end."
            ) from None
        except OSError:
            pass  # no flock on this filesystem (some NFS): the lock file still holds
        self.fds.append(fd)
        self.file_held = True

    def note_run(self, run_id: str, run_dir: Path) -> None:
        """Write the run's id into the lock, so a second run is refused naming it."""
        self.info.update(run_id=run_id, run_dir=str(Path(run_dir).resolve()))
        self._write()
        for part in self.parts:
            part.note_run(run_id, run_dir)

    def release(self) -> None:
        for part in self.parts:
            part.release()
        if _HELD.get(self.target) is self:
            del _HELD[self.target]
        if self.lock_path is not None and self.fds:
            try:  # removed while still locked: _lock retries when it locked a removed file
                self.lock_path.unlink()
            except OSError:
                pass
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()

    def _write(self) -> None:
        if self.lock_path is None or not self.fds:
            return
        data = json.dumps(self.info).encode()
        os.ftruncate(self.fds[0], 0)
        os.pwrite(self.fds[0], data, 0)


_HELD: dict[Target, TargetClaim] = {}


@atexit.register
def _let_go_at_exit() -> None:
    """The claims a command still holds as its process ends are let go of, their lock files
    removed: `iolab resume` stopped by Ctrl-C after it claimed the target but before its runner
    (which releases it however it ends) began left the lock file, which `iolab runs` then listed
    as left by a run that was killed. The kernel drops the locks at exit in any case."""
    for got in list(_HELD.values()):
        if got.pid == os.getpid():  # a forked child that exits leaves its parent's claims alone
            got.release()


def claim(target: Target) -> TargetClaim:
    """Claim the target for one run (its kind's claim hook). RefusedError when another run,
    in this process or another, holds it."""
    got = kind_of(target).claim(target)
    if not isinstance(got, TargetClaim):  # every kind claims with one of the claim_* below
        raise TypeError(f"target kind {target.kind}: its claim hook gave a {type(got).__name__}, not a TargetClaim")
    _HELD[target] = got
    return got


def held(target: Target) -> TargetClaim | None:
    """This process's claim on the target, if it holds one."""
    return _HELD.get(target)


def holds_file(path: str) -> bool:
    """Does a claim of this process hold this file, as a file target or as the backing file of
    a loop device it claimed? (Its flock, probed from another descriptor, looks like another run's.)"""
    real = os.path.realpath(path)
    return any(
        c.target.kind == "file" and os.path.realpath(c.target.path) == real
        for got in _HELD.values()
        for c in (got, *got.parts)
    )


def release(target: Target) -> None:
    """Give up this process's claim on the target (nothing happens when there is none)."""
    got = _HELD.get(target)
    if got is not None:
        got.release()


# --- the claim hooks of the built-in kinds ----------------------------------------------------


def claim_block(target: Target) -> TargetClaim:
    try:
        st = os.stat(target.path)
    except OSError as e:
        raise IolabError(f"target {target.spec!r}: cannot stat {target.path}: {e.strerror}.") from None
    got = _lock(target, f"block-{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    try:
        got.fds.append(host.open_exclusive(target.path))
    except OSError:
        # EBUSY: mounted, a RAID/LVM member, another program's O_EXCL. The safety checks say
        # which and refuse; with an override the run goes on under the lock file alone.
        got.exclusive = False
    # A loop device writes its backing file: claim that file as a file target run does, so a
    # run on the file or on a second loop device over it is refused while this one lasts.
    backing = loop_backing(block_dev(target.path))
    if backing:
        try:
            got.parts.append(claim_file(Target("file", f"{target.spec} (backing file {backing})", backing, 0)))
        except RefusedError:
            got.release()
            raise
    return got


def claim_file(target: Target) -> TargetClaim:
    got = _lock(target, f"file-{os.path.realpath(target.path)}")
    try:
        got.hold_file()
    except RefusedError:
        got.release()
        raise
    return got


def file_created(target: Target) -> None:
    """A file target this process claimed before it existed now exists: hold the file too."""
    got = _HELD.get(target)
    if got is not None and not got.file_held:
        got.hold_file()


def claim_nbd(target: Target) -> TargetClaim:
    """A lock per server endpoint the export's URI reaches (spec.nbd_endpoints), so one export
    under two names (127.0.0.1 and localhost, a host name and one of its addresses) is one target."""
    first, *more = nbd_endpoints(target.path)
    got = _lock(target, f"nbd-{first}")
    try:
        got.parts.extend(_lock(target, f"nbd-{e}") for e in more)
    except RefusedError:
        got.release()
        raise
    return got


def claim_sim(target: Target) -> TargetClaim:
    """A simulated drive is private to its run unless it saves its state to a file."""
    save = target.option("save")
    if not save:
        return TargetClaim(target, None)
    return _lock(target, f"sim-save-{os.path.realpath(save)}")


# --- lock files -------------------------------------------------------------------------------


def lock_dirs() -> list[Path]:
    env = os.environ.get("IOLAB_LOCK_DIR")
    if env:
        if not os.path.isabs(env):
            # relative, each working directory had its own locks: two runs started from two
            # directories both claimed one NBD export or one simulator state file
            raise IolabError(
                f"IOLAB_LOCK_DIR={env!r} is not an absolute path, so runs started from different "
                "directories would each take their own locks and could write one target at once; "
                "give an absolute directory (e.g. /run/iolab/locks), or unset it."
            )
        return [Path(env)]
    return [DEFAULT_LOCK_DIR, Path(tempfile.gettempdir()) / f"iolab-locks-{os.getuid()}"]


def lock_name(ident: str) -> str:
    """The lock file's name in a lock directory for a target's identity."""
    return (
        re.sub(r"[^A-Za-z0-9.:_-]+", "_", ident)[-60:] + "-" + hashlib.sha1(ident.encode()).hexdigest()[:12] + ".lock"
    )


def _lock(target: Target, ident: str) -> TargetClaim:
    while True:
        fd, path = _open_lock_file(lock_name(ident))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = holder_record(fd)
            os.close(fd)
            raise RefusedError(taken(target, holder, path)) from None
        except OSError as e:
            os.close(fd)
            raise RefusedError(
                f"cannot lock {path} to claim target {target.spec!r} for this run ({e.strerror}); "
                "set IOLAB_LOCK_DIR to a directory on a local filesystem."
            ) from None
        # The run before may have removed the file between our open and our lock: then the
        # lock is on a file no one else will ever open, so take the one at the path now.
        now = host.stat_or_none(str(path))
        if now is not None and (now.st_dev, now.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
            break
        os.close(fd)
    got = TargetClaim(target, path, fds=[fd])
    got.info = {
        "pid": os.getpid(),
        "target": target.spec,
        "path": target.path,  # a second run through another name of the file finds its holder by it
        "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    got._write()
    return got


def _open_lock_file(name: str) -> tuple[int, Path]:
    errors = []
    for d in lock_dirs():
        try:
            # the per-user fallback is private; the shared directory only root can write
            # the path up to it first: a directory made inside another user's is already theirs to swap
            unsafe = _unsafe_path(d.parent)
            if unsafe:
                errors.append(f"{d}: {unsafe}")
                continue
            d.mkdir(mode=0o755 if d == DEFAULT_LOCK_DIR else 0o700, parents=True, exist_ok=True)
            unsafe = _unsafe_path(d.parent) or _unsafe_dir(d)
            if unsafe:
                errors.append(f"{d}: {unsafe}")
                continue
            path = d / name
            # never through a link: lock files are written (truncated, then the holder's facts)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise RefusedError(
                    f"lock file {d / name} is a symbolic link, which iolab never follows (someone "
                    "may have planted it to make a run overwrite the file it points to); remove it "
                    "or set IOLAB_LOCK_DIR to a directory only you can write."
                ) from None
            # mkdir(exist_ok) of a path that is a file fails with "File exists"
            errors.append(f"{d}: {'not a directory' if d.exists() and not d.is_dir() else e.strerror}")
            continue
        unsafe = open_file_problem(fd)
        if unsafe:
            os.close(fd)
            raise RefusedError(
                f"lock file {path} {unsafe}, so iolab will not write to it; remove it or set "
                "IOLAB_LOCK_DIR to a directory only you can write."
            )
        return fd, path
    raise RefusedError(
        "cannot create a lock file to claim the target for this run ("
        + "; ".join(errors)
        + "); set IOLAB_LOCK_DIR to a directory only you (or root) can write."
    )


def _unsafe_path(d: Path, depth: int = 0) -> str | None:
    """Why the directories on the way to a lock directory (d and those above it) are unsafe, or
    None, each checked as _unsafe_dir checks the lock directory itself: whoever may rename or
    replace any of them (or a symbolic link on the way) decides where our opens write. A link
    is taken when root or we own it, and the path it points to is checked the same way. A part
    that does not exist yet ends the check (mkdir makes it and those below it ours)."""
    path = Path(os.path.abspath(d))
    for part in [*reversed(path.parents), path]:
        try:
            st = os.lstat(part)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in (os.geteuid(), 0):
                return f"{part} is a symbolic link owned by uid {st.st_uid}, not by you (uid {os.geteuid()}) or root"
            if depth >= 20:
                return f"{part}: too many levels of symbolic links"
            unsafe = _unsafe_path(Path(os.path.realpath(part.parent)) / os.readlink(part), depth + 1)
            if unsafe:
                return unsafe
            continue
        unsafe = _unsafe_dir(part)
        if unsafe:
            return f"the directory {part} on its path is {unsafe}"
    return None


def _unsafe_dir(d: Path) -> str | None:
    """Why lock files cannot be kept in d, or None: another user's directory, or one others
    may write without the sticky bit, would let them plant the files our opens write."""
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory (a symbolic link or a file)"
    if st.st_uid not in (os.geteuid(), 0):
        return f"owned by uid {st.st_uid}, not by you (uid {os.geteuid()}) or root"
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"writable by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def open_file_problem(fd: int) -> str | None:
    """Why iolab must not write a file it opened to hold a claim (a target's lock file, a run
    directory's writer.lock), or None. Such a file is opened with O_NOFOLLOW, which stops only a
    symbolic link: a hard link planted under its name, or another user's file, would have its
    content replaced by the holder's record, so anything but a regular file of ours (or root's)
    with no other name is refused before it is written."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_nlink != 1:
        return f"has {st.st_nlink} hard links (another name for the same file)"
    if st.st_uid not in (os.geteuid(), 0):
        return f"belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}) or root"
    return None


def stale_locks() -> list[tuple[Path, dict]]:
    """Lock files in the lock directories that no process holds, each with what it says of its
    run: left by runs that were killed (the kernel dropped the lock, no one removed the file).
    Harmless: the next run on the target takes the file over. Only read, never locked."""
    held = _flocked()
    if held is None:
        return []  # no /proc/locks: a held lock cannot be told from a stale one
    return list(_lock_records(held, is_held=False))


def _lock_records(held: set[tuple[int, int, int]], is_held: bool) -> Iterator[tuple[Path, dict]]:
    """Each lock file in the lock directories that some process holds (`is_held`) or none does,
    with its record; a FIFO or link planted in a shared directory is not read."""
    for d in lock_dirs():
        for p in sorted(d.glob("*.lock")):
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and ((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in held) == is_held:
                yield p, host.json_object(host.read(p) or "") or {}


def _flocked() -> set[tuple[int, int, int]] | None:
    """(major, minor, inode) of every file some process holds an flock on; None without
    /proc/locks. An empty /proc/locks is no lock held anywhere (host.read says None for
    empty): with no lock held on the machine, no stale lock file was ever listed."""
    try:
        text = Path("/proc/locks").read_text(errors="replace")
    except OSError:
        return None
    held = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK":  # "->" in fields[1]: a waiter, not a holder
            try:
                major, minor, inode = fields[5].split(":")
                held.add((int(major, 16), int(minor, 16), int(inode)))
            except ValueError:
                continue
    return held


def _holder_of(dev: int, ino: int, own: Path | None) -> tuple[Path, dict] | None:
    """The held lock file (and its record) of a run on the file (dev, ino), under whatever name
    it was given: a hard link's run is refused by the file's flock, and named by this. `own`:
    this claim's lock file, which names the same file."""
    # a stale lock names no run
    for p, record in _lock_records(_flocked() or set(), is_held=True):
        named = host.stat_or_none(str(record.get("path") or ""))
        if p != own and named is not None and (named.st_dev, named.st_ino) == (dev, ino):
            return p, record
    return None


def taken(target: Target, holder: dict, path: Path | str) -> str:
    """The refusal of a second run on a target whose lock `path` another holds (`holder`: what the
    lock file says of it). A holder on another machine (a run through an SSH host, whose lock is on
    that host) names its machine, where its pid is."""
    pid, run_id = holder.get("pid"), holder.get("run_id")
    machine = holder.get("machine")
    if pid and machine and machine != socket.gethostname():
        pid = f"{pid} on {machine}"
    if run_id:
        who = (
            f"iolab run {run_id} (pid {pid}, run directory {holder.get('run_dir')}) is using it since "
            f"{holder.get('since', '?')}"
        )
    elif pid:
        who = f"another iolab process (pid {pid}) is starting a run on it"
    else:
        who = f"another iolab process holds its lock {path}"
    stop = f", or stop it (kill {pid})" if pid else ""
    return (
        f"Refusing to write to target {target.spec!r} ({target.path}): {who}. Two runs on one target "
        f"destroy each other's data and measurements; wait for that run to end{stop}."
    )
