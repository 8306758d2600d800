"""Writing to standard output and error when their reader may go away (`iolab run ... | head -3`):
what could not be printed is dropped and the command goes on (a run completes, its report is
written) with its own exit code. Every line of progress or notes, in any layer, goes through
here; the CLI's Rich consoles drop theirs the same way (cli/console.py)."""

from __future__ import annotations

import os
import sys
from typing import TextIO


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
            pass
        # ascending order: the lowest free descriptor is this one (dup2 should it not be)
        null = os.open(os.devnull, os.O_RDONLY if mode == "r" else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False, encoding="utf-8", errors="replace"))  # noqa: SIM115
