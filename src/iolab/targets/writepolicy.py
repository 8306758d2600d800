"""The one write policy for every path iolab writes other than a test target's data: the
simulator's saved state (save=), run directories and their root (--runs-dir), reports,
comparisons, exports, trace tables, trace exports, captures and stream analyses.

A path is refused, before anything is written, when it (or what the symlinks on its way lead
to) is
  - on a pseudo filesystem (proc, sysfs, debugfs, tracefs, cgroup, devtmpfs, ...): a write
    there changes the kernel, not a file;
  - in the operating system's own trees or directly in / (the system-location rule,
    SYSTEM_TREES and LOCAL_DATA below): the system's files, never an output's place. Judged on
    the resolved path, so a symlink planted where an output goes (`out -> /etc`) is refused as
    /etc is, and the one rule covers every output (`export -o`, `report --out`, `--junit`, ...);
  - not a regular file where a file is meant (a block or character device, a FIFO, a socket, a
    directory), or not a directory where a directory is meant;
  - in a run directory (one holding iolab's manifest.json beside results.db or raw/), or that
    directory itself, when this process does not write it as its run: a stored run's files (manifest.json, results.db, live.json, power.json, ...) are
    iolab's, so the rule below let any output replace them (`trace import -o RUN/results.db`,
    `check --junit RUN/live.json`, a simulator's save= state over a run's results.db). Only
    the run's own writers go there: the run and its resume, and a report, export, power or
    audit --store of it, each holding the run's claim (store/writer.py), which tells the policy
    (own_run) that this process writes that run; and a report or export of the run goes there
    only in its own folder (report/, export/: run_place_problems), never among the run's record
    (`export RUN -o RUN/raw` put tables and a manifest.json among the engine's raw output);
  - an existing non-empty file with other names (hard links), which a write would change too;
  - an existing non-empty file iolab did not make: iolab replaces only files carrying its mark
    (the xattr or sidecar that file targets carry), an empty file, a simulator state file (it
    begins with the state's magic) when a state is written, or a file inside the run directory
    this process writes or a fleet directory (reports and exports that older versions wrote
    without the mark, and any of their files copied where the mark did not follow: `cp -r`,
    rsync without -X, a filesystem without xattrs);
  - an existing non-empty file iolab made as another kind of file: its mark records what it is
    (the `what` its writer gave this policy: "IO table", "JUnit file", "report file", ...), and
    an output is replaced only by a write of the same kind, never a test's scratch file
    (`check --junit my_trace.parquet` replaced an imported trace table with JUnit XML). An
    output marked before its kind was recorded (`iolab output` alone) is replaced by any
    output, as it was then, and carries its kind from that write on;
  - read-only: no write permission bit is set (root could write it anyway; iolab does not), or
    the filesystem is mounted read-only.
Nothing overrides these: the user chooses another path or removes the file. Every file written
through `output_file`, `output_files` or `put_in_place` is marked as iolab's `what`, so writing it again (a
report written twice, a state saved over the one it was loaded from) is allowed.

The same pseudo-filesystem and permission-bit rules apply to file targets (safety.py).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from iolab.core.errors import IolabError, RefusedError
from iolab.core.runfiles import FLEET_FILE, FLEET_SCHEMA
from iolab.core.safefile import read_json
from iolab.core.stopdefer import stop_deferred
from iolab.core.units import human_bytes
from iolab.core.writeaside import written_aside
from iolab.targets.facts import file_type
from iolab.targets.files import mark_created, mark_inode, read_mark
from iolab.targets.usage import pseudo_filesystem

SIM_STATE_MAGIC = b"IOLABSIM"  # crates/sim/src/state.rs
SIM_STATE = "simulator state file (save=)"  # what the simulator's save= writes (engines/sim.py)


def no_write_bits(st: os.stat_result) -> bool:
    """Mode 0444 and the like: no one may write it, though root's writes would succeed."""
    return not st.st_mode & 0o222


def file_problems(path: str | Path, what: str) -> list[str]:
    """Why iolab must not write the file at `path` as a `what` (each a clause naming the path), or []."""
    return _problems(str(path), stat.S_ISREG, "a regular file", what)


def dir_problems(path: str | Path) -> list[str]:
    """Why iolab must not create or write into the directory at `path`, or []."""
    return _problems(str(path), stat.S_ISDIR, "a directory", None)


def _problems(p: str, right_type, meant: str, what: str | None) -> list[str]:
    if os.path.basename(os.path.normpath(p)) == "-":  # `-o -` is standard output where a command
        # writes one document there (export's JSON); elsewhere it made a file or directory named '-'
        # in the current directory (the report and comparison made theirs resolved: /cwd/-)
        return [
            "'-' names standard output only where a command writes one document there (`iolab export --format "
            "json --out -`, `--json`); this command writes files, so give a path whose name is not '-'"
        ]
    real = os.path.realpath(p)
    via = f" (through a symlink to {real})" if real != os.path.abspath(p) else ""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        return [f"{p} cannot be examined ({e.strerror})"]
    if st is not None and not right_type(st.st_mode):
        return [f"{p} is {file_type(st.st_mode)}{via}, not {meant}"]
    pseudo = pseudo_filesystem(real)
    if pseudo:
        return [f"{p} is on a pseudo filesystem ({pseudo}), where writes change the kernel, not a file"]
    system = system_location(real, is_dir=right_type is stat.S_ISDIR)
    if system is not None:
        return [
            f"{p} is {system}{via}, where the operating system keeps its own files, not a place for iolab's outputs "
            f"({SYSTEM_RULE})"
        ]
    foreign = foreign_run(real)
    if foreign is not None:
        return [
            f"{p} is {'' if str(foreign) == real else 'in '}the run directory {foreign}{via}, whose files are "
            "that run's record: only the run itself and its own report, export, power and audit write there"
        ]
    if st is None:
        return _parent_problems(p, real)
    if _read_only_fs(real):
        return [f"{p} is on a read-only filesystem{via}"]
    if stat.S_ISDIR(st.st_mode):
        return []
    if no_write_bits(st):
        return [f"{p} is read-only (mode {stat.S_IMODE(st.st_mode):04o}){via}"]
    if st.st_size > 0 and st.st_nlink > 1:
        # another name of the same file, which a writer truncating it in place would change too
        # (a file planted in a run directory, where iolab's own products are otherwise accepted)
        return [
            f"{p} has {st.st_nlink} hard links{via} (other names for the same file), so writing it changes them too"
        ]
    if st.st_size == 0:
        return []
    mark = read_mark(real)
    if mark is not None:
        return _other_kind(p, via, mark, what)
    if not ((what == SIM_STATE and _sim_state(real)) or _in_run_dir(real) or _in_fleet_dir(real)):
        return [
            f"{p} already exists{via} and holds {human_bytes(st.st_size)} that iolab did not write (it carries "
            "no iolab mark), so it may be someone's data"
        ]
    return []


# The system-location rule, in one place. The operating system's own trees (FHS) are never an
# output's place: its configuration, programs and libraries, its runtime state (/run), and in
# /var the package managers' state (/var/lib/dpkg, /var/lib/apt, /var/lib/rpm), other services'
# data (/var/lib/postgresql), logs, caches and spools.
SYSTEM_TREES = ("/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/run")
# The places in /var that hold local data, not the system's (FHS): scratch space (/var/tmp, where
# inspection.SCRATCH_FILE makes a file target), iolab's own state (/var/lib/<package>: a service
# keeps its runs in /var/lib/iolab/runs), the local administrator's (/var/local) and add-on
# packages' variable data (/var/opt). /srv, /opt, /home and /mnt are outside SYSTEM_TREES.
LOCAL_DATA = ("/var/tmp", "/var/lib/iolab", "/var/local", "/var/opt")
SYSTEM_RULE = (
    f"the system-location rule: {', '.join(SYSTEM_TREES)} and / itself are the operating system's, "
    f"except {', '.join(LOCAL_DATA)}; /srv, /opt and /home are places for data"
)


def _under(real: str, tree: str) -> bool:
    return real == tree or real.startswith(tree + "/")


def system_location(real: str, is_dir: bool = False) -> str | None:
    """Where in the system's own files the resolved path `real` is (a clause), or None: in one of
    SYSTEM_TREES (not a LOCAL_DATA place in it), the root directory itself, or a file directly in /."""
    if real == "/" or (not is_dir and os.path.dirname(real) == "/"):
        return "in the root directory /" if real != "/" else "the root directory"
    if any(_under(real, t) for t in LOCAL_DATA):
        return None
    for tree in SYSTEM_TREES:
        if _under(real, tree):
            return tree if real == tree else f"in {tree}"
    return None


def _other_kind(p: str, via: str, mark: tuple[str, str | None], what: str | None) -> list[str]:
    """A marked file is replaced only by a write of what it is: an output of the same kind, or one
    marked before outputs recorded their kind (it may be any, so any output replaces it)."""
    kind, was = mark
    if kind == "output" and (was is None or was == what):
        return []
    held = "a test's scratch file iolab made" if kind == "target" else f"iolab's {was}"
    return [
        f"{p} is {held}{via}: iolab replaces a file it wrote only with the same kind of file, so this "
        "write would lose it"
    ]


def _parent_problems(p: str, real: str) -> list[str]:
    """A path to be created: its nearest existing ancestor must be a writable directory."""
    up = os.path.dirname(real)
    while up != "/" and not os.path.exists(up):
        up = os.path.dirname(up)
    if not os.path.isdir(up):
        return [f"{p} cannot be created: {up} is not a directory"]
    if _read_only_fs(up):
        return [f"{p} cannot be created: {up} is on a read-only filesystem"]
    return []


def _read_only_fs(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


# The run directories this process writes as their run: claim_run (store/writer.py) adds one
# when it takes a run's claim and takes it away when the claim is let go.
_OWN_RUNS: set[str] = set()


def own_run(run_dir: str | Path, own: bool = True) -> None:
    """Record that this process writes the run at `run_dir` (or, `own=False`, no longer does)."""
    key = os.path.realpath(run_dir)
    if own:
        _OWN_RUNS.add(key)
    else:
        _OWN_RUNS.discard(key)


def foreign_run(real: str) -> Path | None:
    """The run directory at or above the resolved path `real` that this process does not write
    as its run, or None."""
    for d in (Path(real), *Path(real).parents):
        if is_run_dir(d) and str(d) not in _OWN_RUNS:
            return d
    return None


def run_place_problems(run_dir: str | Path, out: str | Path, place: str) -> list[str]:
    """Why an output that goes to `out` must not, when `out` is the run directory `run_dir` or
    in it, or []. Inside a run directory an output has one place, its own folder `place` (the
    report's report/, the export's export/): its other folders are the run's record (raw/ holds
    the engine's output behind every number), and `export -o RUN/raw` or `report --out RUN/raw`
    put files among them that a later reader takes for the run's own."""
    d, o = Path(run_dir).resolve(), Path(out).resolve()
    if (d != o and d not in o.parents) or o == d / place:
        return []
    where = "" if d == o else "in "
    return [
        f"{out} is {where}the run directory {d}, whose folders hold that run's record; an output goes "
        f"there only in its own folder {d / place}, or outside the run"
    ]


def is_run_dir(d: Path) -> bool:
    """A run directory holds iolab's manifest.json and what a run stores beside it (its database,
    raw/); a folder with a manifest.json alone is not one: an export's (a copy of the run's
    manifest beside the tables, which the next export replaces) or someone else's."""
    return os.path.lexists(d / "manifest.json") and ((d / "raw").is_dir() or os.path.lexists(d / "results.db"))


def _in_run_dir(path: str) -> bool:
    """A file in a run directory (its report/ or export/ folder, written before files carried
    iolab's mark) is a product of that run; the run is this process's own (foreign_run)."""
    return any(is_run_dir(d) for d in Path(path).parents)


def _in_fleet_dir(path: str) -> bool:
    """A file in a fleet directory (its report.json, junit.xml, fleet.json, drives/NAME/out.json,
    ...) is a product of that fleet. The directory is one by what its fleet.json says (iolab's
    fleet state), never by the file's name: a report.json beside a fleet.json of anything else
    stays someone's data."""
    for d in Path(path).parents:
        try:
            doc = read_json(d / FLEET_FILE, "fleet state", "manifest") if (d / FLEET_FILE).is_file() else None
        except (OSError, ValueError, IolabError):
            continue
        if isinstance(doc, dict) and doc.get("schema") == FLEET_SCHEMA and isinstance(doc.get("members"), list):
            return True
    return False


def _sim_state(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(SIM_STATE_MAGIC)) == SIM_STATE_MAGIC
    except OSError:
        return False


def refusal(what: str, path: str | Path, problems: list[str]) -> RefusedError:
    return RefusedError(
        f"Refusing to write the {what} {str(path)!r}: {'; '.join(problems)}. Nothing was written; "
        "choose another path (iolab replaces only files it wrote itself)."
    )


def check_file(path: str | Path, what: str, *, reads: Iterable[str | Path] = ()) -> Path:
    """RefusedError unless the policy lets iolab write the file at `path`. `reads` are the files
    the command reads: an output that is one of them is refused first (the more telling reason)."""
    _refuse_own_input(path, reads, what)
    problems = file_problems(path, what)
    if problems:
        raise refusal(what, path, problems)
    return Path(path)


def _refuse_own_input(path: str | Path, reads: Iterable[str | Path], what: str) -> None:
    """RefusedError when `path` is, by any name, a file the command reads: an iolab output is
    one the policy lets iolab replace, so `trace export T.parquet -o T.parquet` (or importing an
    exported trace onto itself) replaced its input with the output, exit 0; and a user's file
    read as input is refused for what it is, not as "not iolab's"."""
    for f in reads:
        try:
            same = os.path.samefile(path, f)
        except OSError:  # the output does not exist yet (or the input is gone): not the same file
            continue
        if same:
            raise RefusedError(
                f"Refusing to write the {what} {str(path)!r}: it is {f}, which this command reads, so the output "
                "would replace its own input. Nothing was written; give another path."
            )


def directory_problem(path: str | Path) -> str | None:
    """Why the directory the file `path` names cannot hold it (a clause), or None: it is missing,
    or is a file (`/etc/passwd/j.xml`)."""
    parent = Path(os.path.abspath(path)).parent
    if parent.is_dir():
        return None
    return f"{parent} is not a directory" if parent.exists() else f"the directory {parent} does not exist"


def check_file_in_dir(path: str | Path, what: str, option: str, *, reads: Iterable[str | Path] = ()) -> Path:
    """check_file for a file whose writer makes no directory (a JUnit file, a chart): refused,
    naming the option, before the work whose result it holds; else the temporary file written
    beside it failed at the end, naming itself (`No such file or directory: /nodir/j.xml.tmp`).
    `reads` as check_file's: an output that is one of the command's inputs is refused first."""
    _refuse_own_input(path, reads, what)
    problem = directory_problem(path)
    if problem is not None:
        raise IolabError(
            f"{option} {path}: {problem}, so the {what} cannot be written there; create the directory or give a "
            "file in one that exists. Nothing was read or written."
        )
    return check_file(path, what)  # `reads` checked above, before the directory


def output_dir(path: str | Path, what: str) -> Path:
    """Check the directory `path` against the policy and create it (with its parents)."""
    problems = dir_problems(path)
    if problems:
        raise refusal(what, path, problems)
    # made where the check looked, its symlinks resolved: mkdir on a symlink to a folder yet to be
    # made (`out -> /data/new`) failed "File exists: out"
    Path(os.path.realpath(path)).mkdir(parents=True, exist_ok=True)
    return Path(path)


@contextmanager
def made_for(path: str | Path, what: str) -> Iterator[Path]:
    """`output_dir` for a writer that may fail: the directories this makes (`path` and its
    missing parents) are removed again when the writer raises, deepest first and only while
    empty. A directory that existed before is never removed, so a failed write leaves the
    filesystem as it found it, not an empty folder the user never had."""
    missing = []
    d = Path(os.path.realpath(path))  # what output_dir makes
    while not os.path.lexists(d) and d != d.parent:
        missing.append(d)
        d = d.parent
    try:  # a stop signal just after output_dir's mkdir lands here too, not outside the cleanup
        yield output_dir(path, what)
    except BaseException:
        with stop_deferred():  # a second Ctrl-C as the first is cleaned up cut it short, folders left
            for d in missing:
                try:
                    d.rmdir()
                except FileNotFoundError:  # the writer removed it whole (kept_whole): on to its parents
                    continue
                except OSError:  # something is in it (not the writer's: it removes its own)
                    break
        raise


def mark_written(path: str | Path, what: str) -> None:
    """Mark a file iolab has just written as its own output, a `what`, so writing it again as one
    is allowed (and a run refuses it as a test's scratch file: targets/safety.py)."""
    if os.path.isfile(path):
        mark_created(str(path), "output", what)


def put_in_place(part: str | Path, path: str | Path, what: str) -> None:
    """Rename a file written aside (`part`) to its name `path`, marked as iolab's before it takes
    the name: the xattr goes with the inode through the rename. Marked after the rename, a stop
    between the two left a whole file of iolab's that the next write refused as someone's data
    (`iolab report --out DIR`, `export -o DIR`, `trace import --out T` again after a Ctrl-C). A
    filesystem without xattrs gets the sidecar, which names the inode, so it can only follow."""
    sealed = mark_inode(part, "output", what)
    os.replace(part, path)
    if not sealed:
        mark_written(path, what)


@contextmanager
def output_file(path: str | Path, what: str, keep: bool = False) -> Iterator[Path]:
    """Check a file against the policy and hand the writer a new file beside it (holding a copy
    of the file with `keep`, for a writer that appends), which then takes the name, marked as
    iolab's first (put_in_place); a writer that fails or is stopped leaves the file as it was.
    Written in place and marked after, a stop between the two left an unmarked file that the
    next write refused as someone's data (a data sample beside a captured trace)."""
    with output_files([path], what) as (part,):
        if keep and Path(path).is_file():
            shutil.copyfile(path, part)
        yield part


@contextmanager
def output_files(paths: Sequence[str | Path], what: str | Sequence[str], durable: bool = False) -> Iterator[list[Path]]:
    """output_file for files that belong together (a report's PDF and HTML; `what` one for all,
    or one per file: `iolab power`'s meter log and power.json): every one checked before any is
    made, each written aside and, once the writer is done, put in place marked (put_in_place),
    in the order given, under one deferred stop (core/writeaside.written_aside; `durable` for a
    run's own files, fsync'd before they take their names)."""
    whats = [what] * len(paths) if isinstance(what, str) else list(what)
    ps = [check_file(path, w) for path, w in zip(paths, whats, strict=True)]
    kind = dict(zip(ps, whats))
    with written_aside(ps, lambda part, p: put_in_place(part, p, kind[p]), durable) as parts:
        yield parts
