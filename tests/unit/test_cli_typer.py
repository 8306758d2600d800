"""iolab takes its text, path, flag and number parameters without Typer's pydantic validators
(cli_typer._Plain and _Number, for start-up time): each must give what Typer's own coercion gives."""

from __future__ import annotations

from pathlib import Path

import typer
from typer._coercion import build_runtime_param

from iolab.cli import app as cli
from iolab.cli import conventions as cli_typer
from iolab.core.units import Given


def _taken(kind):
    """(command name, parameter, iolab's reading, Typer's own) for every parameter read by `kind`."""
    command = typer.main.get_command(cli.app)
    cli_typer.tidy_help(command)
    for cmd in cli_typer._commands(command):
        for p in cmd.params:
            ours = getattr(p, "_runtime_param", None)
            if isinstance(ours, kind):
                yield cmd.name, p, ours, build_runtime_param(p.type_descriptor)


def test_every_parameter_taken_without_pydantic_gets_what_typer_would_give(tmp_path):
    values = {str: ["", "latency", "ünï cødé"], bool: [True, False], Path: ["", "a/../b/", str(tmp_path)]}
    checked = set()
    for name, p, plain, typer_own in _taken(cli_typer._Plain):
        ann = p.type_descriptor.annotation
        one = ann.__args__[0] if hasattr(ann, "__args__") else ann
        for v in values[one]:
            given = (v, v) if p.multiple or p.nargs == -1 else v
            if one is bool:  # a flag's value is already True/False, or None when unset
                given = None
            assert plain.coerce(given, p, None) == typer_own.coerce(given, p, None), (name, p.name, v)
        checked.add(ann)
    assert checked >= {str, bool, Path, list[str], list[Path]}


def _coerced(runtime, given, p):
    try:
        return "value", runtime.coerce(given, p, None)
    except typer.BadParameter as e:
        return "refused", e.format_message()


def test_every_number_parameter_gets_what_typer_would_give():
    """A plain number is read without pydantic (cli_typer._Number); every other text, and the
    defaults, as Typer reads them: the same value, or the same refusal."""
    texts = ["0", "2", "-3", "+4", "007", "12345678901234567890123", "2.5", "-0.5", ".5", "5.", "1e3", "1E-2"]
    texts += ["1_000", " 3", "2.0", "inf", "nan", "", "abc", "2,5", "0x10", "1e", "--3", "1 2", "1e999", "-1e999"]
    checked = set()
    for name, p, number, typer_own in _taken(cli_typer._Number):
        for given in [*texts, None, p.default]:
            ours, theirs = _coerced(number, given, p), _coerced(typer_own, given, p)
            nan = ours[0] == theirs[0] == "value" and ours[1] != ours[1] and theirs[1] != theirs[1]
            # a float read here is a Given (core/units): the same float, that keeps the text it was read from
            kind = float if type(ours[1]) is Given else type(ours[1])
            assert (ours == theirs or nan) and kind is type(theirs[1]), (name, p.name, given, ours, theirs)
        checked.add(number.annotation)
    assert checked == {int, float}


def test_every_bracketed_word_of_an_options_help_is_shown():
    """Rich reads `[word]` in a help text as markup and drops it: `iolab check -h` said "its
    table gives a figure its own allowed regression", the `[tolerances]` and `[spread]` tables'
    names gone. Every bracketed word of every option's help must be in the help printed."""
    import re

    from typer.testing import CliRunner

    command = typer.main.get_command(cli.app)

    def walk(cmd, path):
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, [*path, name])

    checked = 0
    for path, cmd in walk(command, []):
        # as written in the help: [word], or \\[word] escaped for Rich
        helps = " ".join(getattr(p, "help", "") or "" for p in cmd.params)
        words = {f"[{w}]" for w in re.findall(r"\\?\[([A-Za-z_]\w*)\]", helps)}
        if not words:
            continue
        shown = CliRunner().invoke(cli.app, [*path, "--help"], env={"COLUMNS": "400"}).output
        assert all(w in shown for w in words), (path, words, shown)
        checked += 1
    assert checked  # `check --tolerances` names two tables


def test_the_printers_stand_ins_give_the_real_markdown_and_traceback():
    """Typer's printer holds cli_help's stand-ins for the two classes it was imported without:
    each gives the real object if Typer ever makes one (Markdown help, a pretty traceback)."""
    from rich.markdown import Markdown
    from rich.traceback import Traceback

    from iolab.cli import help as cli_help

    assert isinstance(cli_help._Markdown("*x*", style="bold"), Markdown)
    try:
        raise ValueError("x")
    except ValueError as e:
        assert isinstance(cli_help._Traceback.from_exception(type(e), e, e.__traceback__), Traceback)
    assert cli_help.printer() is __import__("sys").modules["typer.rich_utils"]
