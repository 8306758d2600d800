"""File targets: iolab's mark on the files it creates, and creating/extending them.

Files iolab creates are marked with the extended attribute `user.iolab` (works on ext4, xfs,
btrfs and tmpfs). On a filesystem without user xattrs (vfat, some NFS) the mark is a sidecar
file `PATH.iolab` holding the marked file's inode number, so a file later replaced under the
same name is not mistaken for ours. A non-empty file without either mark is refused as a
write target: it may be someone's data.

The files iolab writes as results (reports, exports, trace tables, simulator states) carry a
mark of their own, `iolab output: WHAT`: the write policy lets iolab replace them, but they are
never a test's scratch file (one mark for both let `iolab run -t file:trace.parquet` overwrite
an imported trace with fio's data). WHAT is what the file is, as its writer names it to the
policy ("IO table", "JUnit file", ...): the policy replaces an output only with one of the same
kind (writepolicy.py). Outputs marked before the kind was recorded carry `iolab output` alone.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.units import human_bytes
from iolab.targets import host, lock
from iolab.targets.model import Target

MARK_XATTR = "user.iolab"
# The xattr's value and the sidecar's text per kind of file: a scratch file a test writes
# ("target": the value remote hosts' checks compare too, engines/hostcheck.py) or a result.
_MARK_VALUE = {"target": b"created by iolab", "output": b"iolab output"}
_SIDECAR_TEXT = {"target": "iolab target file, inode ", "output": "iolab output file, inode "}
# an output's kind follows the mark: the xattr's value after this, the sidecar's text after the inode
_KIND_AFTER = ": "


def sidecar(path: str) -> str:
    return path + ".iolab"


def mark_created(path: str, kind: str = "target", what: str | None = None) -> None:
    """Mark a file as made by iolab (xattr, or a sidecar where the filesystem has no xattrs):
    kind "target" for a test's scratch file, "output" for a result, `what` naming which
    (report file, IO table...)."""
    if not mark_inode(path, kind, what):
        _write_sidecar(path, kind, what)


def _kind_suffix(kind: str, what: str | None) -> str:
    if what is None:
        return ""
    if kind != "output" or "\n" in what:
        raise ValueError(f"an output's kind is one line, and only an output has one: {kind!r}, {what!r}")
    return _KIND_AFTER + what


def mark_inode(path: str | Path, kind: str = "target", what: str | None = None) -> bool:
    """The xattr mark alone (False where the filesystem has none): it stays with the inode
    when the file is renamed, so a file marked before it takes its name is never unmarked."""
    try:
        os.setxattr(path, MARK_XATTR, _MARK_VALUE[kind] + _kind_suffix(kind, what).encode())
        return True
    except OSError as e:
        if e.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            raise IolabError(f"{path}: cannot mark the file as iolab's: {e.strerror}.") from None
        return False


def _ours(text: str | None) -> bool:
    """A sidecar's text that iolab wrote (either kind)."""
    return text is not None and any(text.startswith(t) for t in _SIDECAR_TEXT.values())


def _write_sidecar(path: str, kind: str, what: str | None) -> None:
    """The sidecar sits beside a file the policy allowed, but its own name may be someone's:
    only a missing name or an older sidecar of iolab's is written, never through a symlink."""
    side = sidecar(path)
    try:
        fd = os.open(side, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise IolabError(f"{side}: cannot write iolab's mark beside {path}: {e.strerror}.") from None
    with os.fdopen(fd, "r+") as f:
        st = os.fstat(f.fileno())
        old = f.read(st.st_size + 1) if stat.S_ISREG(st.st_mode) and st.st_size < 4096 else None
        if old is None or (old and not _ours(old)):
            raise IolabError(
                f"{side} exists and is not an iolab mark, so iolab cannot record there that it made {path} "
                "(this filesystem has no extended attributes); remove or rename it, or use another target path."
            )
        f.seek(0)
        f.truncate()
        f.write(f"{_SIDECAR_TEXT[kind]}{os.stat(path).st_ino}{_kind_suffix(kind, what)}\n")


def iolab_mark(path: str) -> str | None:
    """The kind of iolab's mark on the file at `path` ("target" or "output"), or None."""
    mark = read_mark(path)
    return None if mark is None else mark[0]


def read_mark(path: str) -> tuple[str, str | None] | None:
    """iolab's mark on the file at `path`: ("target", None), ("output", what the output is), or
    ("output", None) for one marked before outputs recorded their kind; None when unmarked."""
    try:
        mark = _parse(os.getxattr(path, MARK_XATTR).decode("utf-8", "replace"), dict(_MARK_VALUE_TEXT))
        if mark is not None:
            return mark
    except OSError:
        pass
    side = host.read(Path(sidecar(path)))
    st = host.stat_or_none(path)
    if not (side and st):
        return None
    return _parse(side, {k: f"{t}{st.st_ino}" for k, t in _SIDECAR_TEXT.items()})


_MARK_VALUE_TEXT = {k: v.decode() for k, v in _MARK_VALUE.items()}


def _parse(text: str, plain: dict[str, str]) -> tuple[str, str | None] | None:
    """The mark `text` is, given the plain text of each kind's mark (an output's may go on with
    its kind)."""
    for kind, head in plain.items():
        if text == head:
            return kind, None
        if kind == "output" and text.startswith(head + _KIND_AFTER) and len(text) > len(head + _KIND_AFTER):
            return kind, text[len(head + _KIND_AFTER) :]
    return None


def created_by_iolab(path: str) -> bool:
    """A scratch file iolab made for a test, which a run may write (an output is not one)."""
    return iolab_mark(path) == "target"


def prepare_file(target: Target) -> str:
    """Create the file target (marked as iolab's) or extend it to the target's capacity, with
    space allocated now so a full filesystem fails here and not in the middle of a test.
    Idempotent; call check_safe_to_write first. Returns what was done."""
    path, size = target.path, target.capacity
    created = False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        created = True
    except FileExistsError:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        raise IolabError(f"target {target.spec!r}: cannot create {path}: {e.strerror}.") from None
    try:
        if created:
            mark_created(path)
        before = os.fstat(fd).st_size
        allocate(fd, path, size, target.spec)
    except BaseException:
        os.close(fd)
        if created:
            _remove_ours(path)
        raise
    os.close(fd)
    if created:
        lock.file_created(target)
        return f"created {path} ({human_bytes(size)}, space allocated)"
    return f"extended {path} from {before} to {size} bytes" if before < size else f"{path} already {before} bytes"


def held(target: Target) -> str:
    """A local file target's own size, as it is now."""
    st = host.stat_or_none(target.path)
    return "absent" if st is None else f"holds {st.st_size:,} B"


def sizing(target: Target) -> str:
    """What a run does with a local file target's size (prepare_file does it), for `iolab info`
    to say beside the capacity the test uses: the file's own size is another number."""
    st = host.stat_or_none(target.path)
    size = target.capacity
    if st is None:
        return f"absent: a run creates it, {size:,} B, with its space allocated"
    if st.st_size < size:
        return f"holds {st.st_size:,} B now: a run grows it to {size:,} B first, with its space allocated"
    if st.st_size > size:
        return f"holds {st.st_size:,} B: a run tests its first {size:,} B (size=)"
    return f"holds {size:,} B"


def check_space(target: Target) -> None:
    """Refuse a file target its filesystem has no room for, before anything is written (the
    run's directory included): what `allocate` would find only once the run had started. A
    file already there needs only the blocks it lacks."""
    path, size = target.path, target.capacity
    st = host.stat_or_none(path)
    need = size - (st.st_blocks * 512 if st is not None else 0)
    try:
        fs = os.statvfs(path if st is not None else os.path.dirname(path) or ".")
    except OSError:
        return  # a directory that cannot be read: the target's own checks say so
    free = fs.f_bavail * fs.f_frsize
    if need > free:
        raise IolabError(f"{no_space(target.spec, path, size, free)} Nothing was run or written.")


def no_space(spec: str, path: str, size: int, free: int) -> str:
    """Why a file target of `size` bytes does not fit where it goes (`path`, with its host if not here)."""
    return (
        f"target {spec!r}: not enough space for {path}: it needs {human_bytes(size)}, the "
        f"filesystem has {human_bytes(free)} free. Give a smaller size= or another directory."
    )


def allocate(fd: int, path: str, size: int, spec: str) -> None:
    # the free space as it was before: a posix_fallocate that fails for want of space may keep
    # the blocks it took (ext4 does), and the disk then reads as full
    st = os.fstatvfs(fd)
    free = st.f_bavail * st.f_frsize
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise IolabError(no_space(spec, path, size, free)) from None
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise IolabError(f"target {spec!r}: cannot allocate {path}: {e.strerror}.") from None
        if os.fstat(fd).st_size < size:
            os.ftruncate(fd, size)  # a filesystem without fallocate: a sparse file at least has the size


def _remove_ours(path: str) -> None:
    """Remove a file iolab has just made, and its sidecar only when the sidecar is iolab's."""
    side = sidecar(path)
    ours = not os.path.islink(side) and _ours(host.read(Path(side)))
    for p in (path, side) if ours else (path,):
        try:
            os.unlink(p)
        except OSError:
            pass
