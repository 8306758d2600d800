"""The table Typer lays a command's options and sub-commands out in, made to fit any width
without cutting a word: Typer's own cut option names to "--precondition-fac…" and help words
to "file:PATH?size=8Gi…" in an 80-column terminal (10 cells of `iolab run -h`). Imported only
when help is printed (cli_typer.tidy_help installs it)."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.table import Column, Table
from rich.text import Text

HELP_INDENT = 4  # the help under an option's name, when the two do not fit side by side


def _plain(console: Console, cell) -> str:
    if isinstance(cell, str):
        return console.render_str(cell).plain
    if isinstance(cell, Text):
        return cell.plain
    parts = getattr(cell, "renderables", None)  # Typer's help cell: a Columns of Texts
    if parts is not None:
        return " ".join(_plain(console, p) for p in parts)
    return str(getattr(cell, "markup", ""))


def _text(console: Console, cell) -> Text:
    if isinstance(cell, Text):
        return cell
    return console.render_str(cell) if isinstance(cell, str) else Text(_plain(console, cell))


class HelpTable(Table):
    """Names whole on one line and help wrapped between its words beside them, while the
    widest word of the help still fits beside the longest name; in a narrower terminal each
    row becomes its names on one line with the help under them, indented. Columns empty in
    every row (Typer's secondary-flag columns) are dropped: they only take width."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cols = [c for c in self.columns if any(_plain(console, cell).strip() for cell in c._cells)]
        if len(cols) < 2:
            yield from super().__rich_console__(console, options)
            return
        for i, c in enumerate(cols):
            c._index = i
        self.columns = cols
        *names, help_col = cols
        wide = options.update_width(1 << 16)
        need = sum(self._measure_column(console, wide, c).maximum for c in names)
        words = [w for cell in help_col._cells for w in _plain(console, cell).split()]
        need += max(map(len, words), default=0) + self._get_padding_width(help_col._index) + self._extra_width
        if need <= options.max_width:
            for c in names:
                c.no_wrap, c.overflow = True, "fold"
            help_col.overflow = "fold"
            yield from super().__rich_console__(console, options)
            return
        yield self._stacked(console, names, help_col)

    def _stacked(self, console: Console, names: list[Column], help_col: Column) -> Table:
        grid = Table.grid(expand=True)
        grid.add_column(overflow="fold")
        for row in range(self.row_count):
            cells = [c._cells[row] for c in names]
            line = Text(" ").join(_text(console, cell) for cell in cells if _plain(console, cell).strip())
            grid.add_row(Group(line, Padding(help_col._cells[row], (0, 0, 0, HELP_INDENT))))
        return grid


def install() -> None:
    """Typer's help printer lays its tables out with HelpTable."""
    from typer import rich_utils

    rich_utils.Table = HelpTable  # type: ignore[misc]
