"""iolab takes its text, path and flag parameters without Typer's pydantic validators
(cli_typer._Plain, for start-up time): each must give what Typer's own coercion gives."""

from __future__ import annotations

from pathlib import Path

import typer
from typer._coercion import build_runtime_param

from iolab.cli import conventions as cli_typer
from iolab.cli import main as cli


def test_every_parameter_taken_without_pydantic_gets_what_typer_would_give(tmp_path):
    command = typer.main.get_command(cli.app)
    cli_typer.tidy_help(command)
    values = {str: ["", "latency", "ünï cødé"], bool: [True, False], Path: ["", "a/../b/", str(tmp_path)]}
    checked = set()
    for cmd in cli_typer._commands(command):
        for p in cmd.params:
            plain = getattr(p, "_runtime_param", None)
            if not isinstance(plain, cli_typer._Plain):
                continue
            ann = p.type_descriptor.annotation
            one = ann.__args__[0] if hasattr(ann, "__args__") else ann
            typer_own = build_runtime_param(p.type_descriptor)
            for v in values[one]:
                given = (v, v) if p.multiple or p.nargs == -1 else v
                if one is bool:  # a flag's value is already True/False, or None when unset
                    given = None
                assert plain.coerce(given, p, None) == typer_own.coerce(given, p, None), (cmd.name, p.name, v)
            checked.add(ann)
    assert checked >= {str, bool, Path, list[str], list[Path]}
