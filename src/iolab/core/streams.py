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
