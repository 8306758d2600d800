"""Writing to standard output and error when their reader may go away (`iolab run ... | head -3`):
what could not be printed is dropped and the command goes on (a run completes, its report is
written) with its own exit code. Every line of progress or notes, in any layer, goes through
here; the CLI's Rich consoles drop theirs the same way (cli/console.py)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from iolab.core.errors import IolabError

# `iolab run --repeat`'s children write their --json document to the file this variable names (a
# machine channel, as api/scaleout.RUN_DIRS_ENV), so that their standard output carries what a run
# prints for people: the repeat's own standard output, where data belongs.
OUTCOME_FILE_ENV = "IOLAB_OUTCOME_FILE"

# The standard descriptors the caller closed, opened on /dev/null at start-up (see
# open_closed_standard_streams): what a command writes there reaches no one.
_closed_at_start: set[int] = set()


def drop_output(stream) -> None:
    """Send whatever is still written to `stream` (closed by its reader) to /dev/null, so later
    writes and the flush at exit do not fail again."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def write_text(text: str, stream: TextIO | None = None) -> None:
    """`text` to `stream` (None: standard error, as progress and notes are), flushed; dropped when
    the stream's reader has gone away."""
    out = sys.stderr if stream is None else stream
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        drop_output(out)


class Undelivered(IolabError):
    """A data document that did not reach standard output: the error's own document cannot
    reach it either, so none is tried (it added the same paragraph a second time)."""


def undeliverable(why: str) -> IolabError:
    """The paragraph of a data document (`--json`, `export -o -`) that did not reach standard
    output: a script reading it must not take the exit code 0 for a document it never got."""
    return Undelivered(
        f"standard output {why}, so the document this command prints there was not delivered; a script "
        "reading it would get nothing. Give the command a standard output it can write (a pipe or a file "
        "with room) and run it again."
    )


def stdout_closed_at_start() -> bool:
    """Standard output was closed when iolab started (`iolab show RUN --json >&-`)."""
    return 1 in _closed_at_start


@contextmanager
def delivering(stream: TextIO | None = None) -> Iterator[TextIO]:
    """Around the writes of a data document to standard output (or `stream`), flushed at the
    end. Unlike progress, its loss is an error (IolabError naming standard output): standard
    output closed at start-up (opened on /dev/null, where the document would vanish while the
    command said 0) or a write the system refused (a full disk: ENOSPC, EIO). A reader that went
    away (`| head -c 100`) took what it wanted: the rest is dropped as write_text drops it."""
    out = sys.stdout if stream is None else stream
    if out is sys.stdout and stdout_closed_at_start():
        raise undeliverable("was closed when iolab started (>&-)")
    try:
        yield out
        out.flush()
    except BrokenPipeError:
        drop_output(out)
    except OSError as e:
        # the rest would fail again at exit's flush: dropped, the paragraph says what was lost
        drop_output(out)
        raise undeliverable(f"could not be written ({e.strerror or errno.errorcode.get(e.errno or 0, e)})") from None


def write_data(text: str, stream: TextIO | None = None) -> None:
    """A data document to standard output (or `stream`): see delivering."""
    with delivering(stream) as out:
        out.write(text)


# `iolab run -q`/`resume -q` print no progress, a report's page-by-page lines included
# (cli/progress.py sets it for the run's length; `iolab report` keeps them)
QUIET_PROGRESS = {"on": False}


def note_line(line: str) -> None:
    """One line of progress or a note on standard error (see write_text)."""
    write_text(line + "\n")


def open_closed_standard_streams() -> None:
    """Standard input, output or error that the caller closed (`iolab show RUN >&-`, a service
    manager's bare process) opened on /dev/null, with Python's stream for it. Python leaves
    `sys.stdout` None there, and every print or isatty() ended in an AttributeError traceback (a
    run lost its report); and the first file iolab opened would take the free descriptor, so fio
    or anything writing to "standard output" would write into it."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            _closed_at_start.add(fd)
        # ascending order: the lowest free descriptor is this one (dup2 should it not be)
        null = os.open(os.devnull, os.O_RDONLY if mode == "r" else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False, encoding="utf-8", errors="replace"))  # noqa: SIM115


class _WatchedStdout:
    """sys.stdout as it was, remembering the error a write or flush to it met: an OSError
    carries no file name for standard output, so without it `iolab show RUN > /dev/full` said
    only "No space left on device", as if a file iolab writes had no room."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.failed: OSError | None = None

    def _watch(self, do, *args):
        try:
            return do(*args)
        except BrokenPipeError:
            # A reader that went away (`| head -1`, `| true`) took what it wanted: not an error
            # (docs/automation.md). Dropped here, where every writer of standard output meets it
            # (click's --version, the help, print, Rich): click and Rich end the command with
            # exit 1 on it, which no command's own handling could then undo.
            drop_output(self._stream)
            return None
        except OSError as e:
            self.failed = e
            raise

    def write(self, text: str) -> int:
        written = self._watch(self._stream.write, text)
        return len(text) if written is None else written

    def flush(self) -> None:
        self._watch(self._stream.flush)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def watch_stdout() -> None:
    """Standard output watched (see _WatchedStdout) for the command's length."""
    if not isinstance(sys.stdout, _WatchedStdout):
        sys.stdout = _WatchedStdout(sys.stdout)


def stdout_refused(e: OSError) -> IolabError | None:
    """The paragraph for `e` when it is standard output that the system refused to write (full:
    `> /dev/full`); None when `e` is another file's. What was still to be printed is dropped, so
    the flush at exit does not fail again."""
    out = sys.stdout
    if not isinstance(out, _WatchedStdout) or out.failed is not e:
        return None
    drop_output(out)
    return IolabError(
        f"standard output could not be written ({e.strerror or errno.errorcode.get(e.errno or 0, e)}), so what "
        "this command prints there was lost and it stopped at that point; files it had yet to write were not "
        "written. Give the command a standard output it can write (a pipe or a file with room) and run it again."
    )
