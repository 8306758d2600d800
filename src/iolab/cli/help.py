"""The table Typer lays a command's options and sub-commands out in, made to fit any width
without cutting a word: Typer's own cut option names to "--precondition-fac…" and help words
to "file:PATH?size=8Gi…" in an 80-column terminal (10 cells of `iolab run -h`). Imported only
when help or a usage error is printed (cli_typer.tidy_help installs it; printer())."""

from __future__ import annotations

import sys
import types

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
    printer().Table = HelpTable  # type: ignore[attr-defined]


class _Markdown:
    """Stands for rich.markdown.Markdown in Typer's printer: the real one, imported when Typer
    makes one (help in its Markdown mode, which iolab's app does not use)."""

    def __new__(cls, *args, **kwargs):
        from rich.markdown import Markdown  # markdown-it with it: ~25 ms CPU, for no iolab help

        return Markdown(*args, **kwargs)


class _Traceback:
    """Stands for rich.traceback.Traceback in Typer's printer: the real one, imported when Typer
    draws a traceback (its pretty exceptions, which iolab's app turns off)."""

    @classmethod
    def from_exception(cls, *args, **kwargs):
        from rich.traceback import Traceback  # Pygments with it: ~20 ms CPU, for no iolab output

        return Traceback.from_exception(*args, **kwargs)


def printer() -> types.ModuleType:
    """Typer's help and error printer (typer.rich_utils), imported without the two modules it
    imports at its top for what iolab never shows: rich.markdown (Markdown help) and
    rich.traceback (pretty exceptions). They were 36 ms CPU of every --help and every usage
    error, a third of Typer's and Rich's whole start. While it is imported each stands as a
    module holding the one class it takes, _Markdown or _Traceback (which import the real
    class if ever used); then they leave sys.modules, so any later import gets the real module."""
    if "typer.rich_utils" in sys.modules:
        return sys.modules["typer.rich_utils"]
    stand_ins = {"rich.markdown": ("Markdown", _Markdown), "rich.traceback": ("Traceback", _Traceback)}
    placed: dict[str, types.ModuleType] = {}
    for name, (attr, cls) in stand_ins.items():
        if name not in sys.modules:  # already imported: Typer takes the real one
            placed[name] = sys.modules[name] = types.ModuleType(name, cls.__doc__)
            setattr(placed[name], attr, cls)
    try:
        from typer import rich_utils
    finally:
        for name, module in placed.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return rich_utils
