"""The console every command prints with."""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import rich.console
import rich.table
from rich.measure import Measurement

from iolab.core.streams import drop_output, write_data


class Console(rich.console.Console):
    """Written to a file or a pipe, a table is printed at the width its columns need when that
    is more than the console's: a verdict cut from "pass" to "pas", a block size to "blo…" or
    a reason wrapped over three lines misleads a reader and defeats grep, a long line does not.
    A terminal keeps its width.

    A reader that goes away (`iolab run ... | head -3`) does not end the command: what could not
    be printed is dropped and the command goes on (a run completes and is stored) with its own
    exit code. Rich's own answer to a broken pipe is SystemExit(1), which the runner would
    take for a failure of the run."""

    def __init__(self, *args, **kw) -> None:
        # No emoji codes: Rich reads ":name:" in printed text as one, and text iolab prints holds
        # the user's own words (--set steps=900:100:700 came back as '900💯700', 1000:-1:10 as
        # '1000👎10', in the very error that quoted them) and paths, which may hold such colons.
        kw.setdefault("emoji", False)
        super().__init__(*args, **kw)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        drop_output(self.file)

    def print(self, *objects, **kw) -> None:
        if self.is_terminal or not any(isinstance(o, rich.table.Table) for o in objects):
            return super().print(*objects, **kw)
        wide = self.options.update_width(1 << 16)
        sizes = [Measurement.get(self, wide, o) for o in objects]
        width = self.width
        if max(m.maximum for m in sizes) > width:  # squeezed or wrapped: at its natural width instead
            self.width = max(m.maximum for m in sizes)
        try:
            super().print(*objects, **kw)
        finally:
            self.width = width

    @contextmanager
    def whole(self) -> Iterator[None]:
        """What is printed in the block goes out only when the block ends without an error: a
        command that fails half-way (a run whose stored results turn out unreadable at their
        last table) prints its error paragraph alone, not a header the error then disowns.
        Rendered as it would have been (this console's width, colours and table widths)."""
        self.begin_capture()
        try:
            yield
        except BaseException:
            self.end_capture()  # dropped: the command's error says what happened
            raise
        text = self.end_capture()
        if self.quiet:
            return
        try:
            self.file.write(text)
            self.file.flush()
        except BrokenPipeError:  # as Rich's own print would meet it (see the class)
            self.on_broken_pipe()


def print_with_ids(console: Console, table: rich.table.Table, id_column: int) -> None:
    """Print a table one of whose columns holds ids a reader copies into another command (run
    ids): that column is never wrapped or folded ("20261201-212620-i" / "ops-enterprise-sa" /
    "s" cannot be copied back). On a terminal too narrow for the ids whole beside every other
    column's heading whole, each row is printed as a block instead: its id alone on a line, then
    the other columns as "heading: value" lines (a table squeezed further folds every value)."""
    ids = table.columns[id_column]
    wide = console.options.update_width(1 << 16)
    ids.no_wrap = True
    ids.min_width = max((Measurement.get(console, wide, c).maximum for c in ids.cells), default=None)
    # the least width at which the ids and the headings stay whole: the other columns' values
    # left out of the measure, as they may fold
    skeleton = copy.copy(table)
    skeleton.columns = [c if c is ids else dataclasses.replace(c, _cells=[]) for c in table.columns]
    if not console.is_terminal or Measurement.get(console, wide, skeleton).minimum <= console.width:
        console.print(table)
        return
    if table.title:
        console.print(table.title, style="italic")
    others = [c for c in table.columns if c is not ids]
    for row, key in enumerate(ids.cells):
        console.print()
        console.print(f"[bold]{key}[/]", soft_wrap=True)  # whole even on a terminal narrower than the id
        for c in others:
            value = " ".join(str(list(c.cells)[row]).split("\n"))
            if value:
                console.print(f"  {c.header}: {value}")


def write_out(text: str) -> None:
    """A data document (`--json`) to standard output: dropped when its reader went away (see
    Console); not delivered at all (standard output closed at start-up, or full) is an error
    naming standard output (streams.write_data), never an exit code 0 for nothing."""
    write_data(text, sys.stdout)
