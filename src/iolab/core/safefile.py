"""Reading a file a user named, or one a runs directory holds, without hanging or filling memory.

A FIFO named manifest.json in a run directory hung `iolab runs` (and one `iolab watch` server
thread per request) in `open()`, `--hosts-file /dev/zero` grew to 1.14 GB in 8 s, and a JSON
document nested a few thousand levels deep ended in a RecursionError traceback. Every such read
goes through here: the path must name a regular file (checked with stat, before any open, so
opening a device or a FIFO never happens; the open itself is non-blocking, and the open file is
checked again in case it was swapped in between), and at most the kind's cap is read. A refusal
is an `IolabError` (one paragraph, exit 2).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from iolab.core.errors import IolabError

MiB = 1 << 20
# The most iolab reads of each kind of file: far above any real one (a manifest is a few KiB,
# a --json document of a long sequence a few MiB), far below what would strain memory.
CAPS = {
    "manifest": 16 * MiB,  # a run directory's manifest.json, live.json
    "document": 256 * MiB,  # a saved --json document (check --baseline), a stream analysis JSON
    "config": 4 * MiB,  # a hosts file, a tolerances file, a spec sheet, published figures CSV
    # a composite or replay TOML: `iolab trace analyze` writes a step of replay per capture step, up
    # to --max-steps (100,000), and a 2.5 h trace in 1 s steps already made one over 4 MiB
    "workload": 256 * MiB,
    # an engine's raw output in a run directory: fio's final json+ report is ~60 KiB, its log files
    # a line a second (a 24 h cell: a few MiB)
    "raw": 1024 * MiB,
}
EDITED = ("config", "workload")  # kinds a user writes or edits by hand


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _refuse_special(path: Path, mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        raise IolabError(
            f"{what} {path}: is {_kind(mode)}, not a regular file; iolab reads only regular files "
            "(a FIFO or a device could block it for ever or never end). Give the path of an ordinary file."
        )


def check_regular(path: str | Path, what: str) -> os.stat_result:
    """The file's stat if `path` names a regular file (after symlinks), else IolabError. Opens
    nothing: for a file another program (the simulator) reads."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as e:
        raise IolabError(f"{what} {p}: cannot read it ({e.strerror or e}).") from None
    _refuse_special(p, st.st_mode, what)
    return st


def _open_regular(p: Path, what: str) -> int:
    """A descriptor open for reading on regular file `p`; IolabError for any other kind."""
    _refuse_special(p, os.stat(p).st_mode, what)
    # O_NONBLOCK: had a FIFO been put there since the stat, the open still returns at once.
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        _refuse_special(p, os.fstat(fd).st_mode, what)
    except IolabError:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | Path, what: str, kind: str) -> bytes:
    """The whole of a regular file of at most CAPS[kind] bytes. OSError as the system gives it
    (a missing file stays FileNotFoundError for callers that expect one); IolabError for a
    special file or one over the cap."""
    p = Path(path)
    cap = CAPS[kind]
    fd = _open_regular(p, what)
    try:
        chunks, got = [], 0
        while got <= cap:
            chunk = os.read(fd, min(cap + 1 - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    if got > cap:
        raise IolabError(
            f"{what} {p}: larger than {cap // MiB} MiB, the most iolab reads of such a file; "
            "it is not one iolab wrote or a user would write."
        )
    return b"".join(chunks)


def read_text(path: str | Path, what: str, kind: str) -> str:
    """read_bytes as UTF-8; UnicodeDecodeError becomes IolabError. A file a user wrote or edited
    (EDITED kinds) may open with a byte-order mark: Windows editors and spreadsheets' "CSV UTF-8"
    write one, and TOML and the CSV header then failed on their first line."""
    data = read_bytes(path, what, kind)
    try:
        return data.decode("utf-8-sig" if kind in EDITED else "utf-8")
    except UnicodeDecodeError as e:
        raise IolabError(f"{what} {path}: not a text file (byte {e.start + 1} is not UTF-8).") from None


def read_output(path: str | Path) -> str:
    """An engine's raw output in a run directory as text (undecodable bytes replaced). A FIFO
    there hung `iolab show` in open(). OSError as the system gives it; a special file or one over
    the cap is an OSError too, naming what it is, for the callers that say a raw file is unreadable."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(f"{_kind(mode)}, not a regular file")
    try:
        return read_bytes(path, "raw output", "raw").decode(errors="replace")
    except IolabError:  # made special since the stat, or over the cap
        raise OSError(f"not a regular file of at most {CAPS['raw'] // MiB:,} MiB") from None


# The longest line of an engine's log iolab reads: fio's widest, a histogram log's 1,856 bin
# counts, is tens of KiB; a file with none ends in a long line that is not a log.
LINE_CAP = 1 * MiB


@contextmanager
def output_lines(path: str | Path) -> Iterator[Iterator[str]]:
    """An engine's raw log in a run directory, line by line (text, undecodable bytes replaced),
    checked as read_output checks a file. Line by line: a long cell's histogram logs run to GBs
    (a line of ~10 KiB a second per job and direction), and only a line at a time is held. OSError
    as read_output's, and for a line over LINE_CAP, raised where the lines are read."""
    p = Path(path)
    mode = os.stat(p).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(f"{_kind(mode)}, not a regular file")
    try:
        fd = _open_regular(p, "raw output")
    except IolabError:  # made special since the stat
        raise OSError("not a regular file") from None
    with os.fdopen(fd, "rb") as fh:
        yield _lines(fh)


def _lines(fh: IO[bytes]) -> Iterator[str]:
    while line := fh.readline(LINE_CAP + 1):
        if len(line) > LINE_CAP:
            raise OSError(f"a line longer than {LINE_CAP // MiB} MiB, not a log an engine wrote")
        yield line.decode(errors="replace")


def read_config(path: str | Path, what: str) -> str:
    """A configuration file a user named (kind "config"), every failure an IolabError that names it."""
    try:
        return read_text(path, what, "config")
    except OSError as e:
        raise IolabError(f"{what} {path}: cannot read it ({e.strerror or e}).") from None


def loads_json(text: str | bytes, what: str) -> Any:
    """json.loads, with a document nested too deep for Python's parser (RecursionError) and
    invalid JSON both an IolabError."""
    try:
        doc = json.loads(text)
    except RecursionError:
        doc = _TOO_DEEP
    except ValueError as e:  # JSONDecodeError, and bytes that are not UTF-8
        raise IolabError(f"{what}: not valid JSON ({e}).") from None
    if doc is _TOO_DEEP or _depth(doc) > MAX_DEPTH:
        # Python's parser stops near 1,000 levels; a document just under that still broke the
        # code that walks or writes it again (json.dumps, the schema check).
        raise IolabError(f"{what}: nested more than {MAX_DEPTH} levels deep, not a document iolab wrote.")
    return doc


_TOO_DEEP = object()
MAX_DEPTH = 64  # iolab's own documents nest under 10 levels


def _depth(doc: Any) -> int:
    """How deep lists and objects nest in a parsed document (without recursion)."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                break
            stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def loads_toml(text: str, what: str) -> dict[str, Any]:
    """tomllib.loads, with too deep nesting and invalid TOML both an IolabError."""
    import tomllib  # its parser compiles its regexes on import: only where a TOML file is read

    doc: Any
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        doc = _TOO_DEEP
    except tomllib.TOMLDecodeError as e:
        raise IolabError(f"{what}: not valid TOML ({e}).") from None
    if doc is _TOO_DEEP or _depth(doc) > MAX_DEPTH:
        raise IolabError(f"{what}: nested more than {MAX_DEPTH} levels deep, not a file iolab reads.")
    return doc


def read_json(path: str | Path, what: str, kind: str) -> Any:
    """A regular file's JSON document, capped (read_bytes), nesting and syntax checked."""
    return loads_json(read_text(path, what, kind), f"{what} {path}")
