"""How iolab drives Typer: -h beside --help, --version, readable metavars, help as wide as the
terminal (110 columns to a file or a pipe), and text, paths and flags taken without the
validator Typer would import pydantic for."""

import copy
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import typer
from typer._click.exceptions import ClickException
from typer._coercion import RuntimeParam, build_runtime_param
from typer._param_types import coerce_cli_path
from typer.exceptions import Abort

from iolab.cli import say_version
from iolab.core.errors import IolabError
from iolab.core.units import Given
from iolab.core.usertext import check_argv, check_env

# Help printed to a file or a pipe: wide enough that an option's help is not cut to a narrow
# column, narrow enough to read. A terminal's own width is used as it is.
PIPED_HELP_WIDTH = 110
HELP_NAMES = ["-h", "--help"]


def _version(value: bool) -> None:
    if value:  # `--version` with other arguments (alone, cli/main.py answers it before Typer)
        say_version()
        raise typer.Exit()


def app_callback(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print the version and exit."
    ),
) -> None:
    """iolab: SNIA PTS and more, on real drives, files, NBD exports or a simulated drive."""


# Help that names what a registry holds (the trace formats), filled in when a command's help is
# printed: reading the registry (a module per format) cost every command's start ~10 ms CPU.
_LATER: dict[str, Callable[[], str]] = {}


def later(name: str, text: Callable[[], str]) -> str:
    """A mark for an option's help that `text()` replaces when the command's help is printed."""
    mark = f"{{later:{name}}}"
    _LATER[mark] = text
    return mark


_METAVARS = {"int": "N", "float": "X", "str": "TEXT", "path": "PATH", "file": "FILE", "directory": "DIR"}


def tidy_help(command) -> None:
    """Readable metavars for every option (PATH, N, TEXT; none for an on/off flag) instead of
    the types' names (<bool>, <list[str]>), a help width that is not 80 columns when the help
    goes to a file or a pipe, and text, paths and flags taken without pydantic (_Plain)."""
    if not sys.stdout.isatty():
        if "typer.rich_utils" in sys.modules:
            from typer import rich_utils

            if rich_utils.MAX_WIDTH is None:
                rich_utils.MAX_WIDTH = PIPED_HELP_WIDTH
        else:  # Typer's help printer reads it when first imported; importing it here would cost every command
            os.environ.setdefault("TERMINAL_WIDTH", str(PIPED_HELP_WIDTH))
    for cmd in _commands(command):
        if any("--json" in p.opts for p in cmd.params):
            cmd.parse_args = _json_usage_errors(cmd, cmd.parse_args)
        cmd.format_help = _fitting_help(cmd.format_help)
        if any(p.help and "{later:" in p.help for p in cmd.params):  # a shell's completion shows it too
            cmd.shell_complete = _filled_first(cmd, cmd.shell_complete)
        # the help option is made on first use: made here, with the names the app gives it
        cmd.get_help_option(SimpleNamespace(help_option_names=HELP_NAMES))
        for p in cmd.params:  # the top level's: they take SHELL (completion()), as the README says
            for name in set(p.opts) & set(COMPLETION_HELP):
                p.help = COMPLETION_HELP[name]
        if cmd.help:  # a docstring's line breaks are not the help's: Rich wraps it to the width
            cmd.help = re.sub(r"(?<!\n)\n(?!\n)", " ", cmd.help)
        for p in [*cmd.params, *([cmd._help_option] if cmd._help_option else [])]:
            kind = p.type_descriptor.annotation if hasattr(p, "type_descriptor") else None
            if kind in (str, list[str], Path, list[Path]) or (kind is bool and getattr(p, "is_flag", False)):
                p._runtime_param = _Plain(p.type_descriptor.parameter_info, kind)
            elif kind in (int, float) and _unconstrained(p.type_descriptor.parameter_info):
                p._runtime_param = _Number(p.type_descriptor.parameter_info, kind)
            if p.param_type_name == "argument":  # its name (TEST, RUN) says it; no <str> beside it
                p.display_type_rich = lambda ctx: None
            if p.param_type_name != "option" or p.metavar is not None:
                continue
            if p.is_flag:
                p.metavar = ""
                continue
            label = p.display_type(None).strip("<>").removeprefix("list[").rstrip("]")
            p.metavar = _METAVARS.get(label, label.upper())


def _fill_later(cmd) -> None:
    """The help of `cmd`'s options with each `later` mark replaced by its text."""
    for p in cmd.params:
        for mark, text in _LATER.items():
            if p.help and mark in p.help:
                p.help = p.help.replace(mark, text())


def _filled_first(cmd, shell_complete):
    def complete(ctx, incomplete):
        _fill_later(cmd)
        return shell_complete(ctx, incomplete)

    return complete


def _fitting_help(format_help):
    """The command's help, laid out to fit the width without cutting a word (cli_help)."""

    def fitting(ctx, formatter):
        from iolab.cli import help as cli_help

        cli_help.install()
        _fill_later(ctx.command)
        return format_help(ctx, formatter)

    return fitting


def _json_usage_errors(cmd, parse_args):
    """A command line the command cannot parse, asked for --json: the JSON document of the
    error (exit 2) on standard output beside Typer's message on standard error, as for every
    other error of the command (docs/automation.md)."""

    def parse(ctx, args):
        given = args[: args.index("--")] if "--" in args else list(args)  # the parser empties args
        try:
            return parse_args(ctx, args)
        except (ClickException, IolabError) as e:  # IolabError: an option's own check (--runs-dir)
            if "--json" in given:
                from iolab.cli.auto import emit_anyway
                from iolab.pages.outcome_schema import COMMANDS

                if cmd.name in COMMANDS:
                    said = e.format_message() if isinstance(e, ClickException) else str(e)
                    emit_anyway(cmd.name, e.exit_code, error=said)
            raise

    return parse


class _Plain(RuntimeParam):
    """Text and paths as given (a path checked as Typer checks it) and a flag's True/False
    (unset: None), as Typer's own coercion takes them, without the pydantic validator Typer
    builds for each: importing pydantic costs 0.1 s CPU at every start. Numbers keep Typer's."""

    def _coerce_value(self, value, param, ctx):
        if isinstance(value, (list, tuple)):
            return [self._coerce_value(v, param, ctx) for v in value]
        if self.annotation in (Path, list[Path]):
            # path_type=None: the value comes back as given on the command line, text, never bytes
            given = coerce_cli_path(value, self.parameter_info, path_type=None, param=param, ctx=ctx)
            return Path(cast("str | os.PathLike[str]", given))
        return str(value)


# A number as Python's int()/float() and pydantic's lax mode read it alike (tests/integration/test_cli_conventions.py)
_PLAIN_NUMBER = {
    int: re.compile(r"[+-]?[0-9]+"),
    float: re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"),
}


def _unconstrained(info) -> bool:
    return all(getattr(info, k, None) is None for k in ("min", "max", "parser", "click_type"))


class _Number(RuntimeParam):
    """An int or float option unset, at its default or given as a plain number, read without
    pydantic: Typer built a validator for every number option of the command, given or not,
    and importing pydantic for it was 0.12 CPU-s of each `iolab run`'s start (each drive of a
    fleet is one). Any other text goes to Typer's own coercion: its messages, its forms."""

    def _coerce_value(self, value, param, ctx):
        kind = cast("type[int] | type[float]", self.annotation)
        if type(value) is kind:  # a default
            return value
        if isinstance(value, str) and _PLAIN_NUMBER[kind].fullmatch(value):
            # a float keeps its text: 1e999 is refused as written, not as the inf float() makes of it
            return Given(value) if kind is float else kind(value)
        return build_runtime_param(param.type_descriptor)._coerce_value(value, param, ctx)


def _commands(command):
    yield command
    subs = getattr(command, "commands", {})
    if not isinstance(subs, _OnDemand):  # those are tidied as each is built
        for sub in subs.values():
            yield from _commands(sub)


# The shells Typer writes a completion script for (pwsh: PowerShell's other name)
COMPLETION_SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
COMPLETION_HELP = {
    "--show-completion": "Print the completion script for SHELL (bash, zsh, fish, powershell) or, with none "
    "named, for the current shell, to copy it or customize the installation.",
    "--install-completion": "Install completion for SHELL (bash, zsh, fish, powershell) or, with none named, "
    "for the current shell (it adds a line to that shell's start-up file).",
}


def completion(args: list[str]) -> None:
    """`iolab --show-completion SHELL` and `iolab --install-completion SHELL`: Typer's options are
    flags, so they printed or installed the current shell's script and dropped SHELL (a zsh user
    got the bash script, an unknown name too; `--install-completion zsh` wrote ~/.bashrc).
    Prints or installs the named shell's script, or refuses a name that is not a shell (exit 2)."""
    first, _, given = (args[0] if args else "").partition("=")
    if first not in COMPLETION_HELP:
        return
    shell = given or (args[1] if len(args) > 1 and not args[1].startswith("-") else "")
    if not shell:
        return  # Typer's own: the current shell's
    from iolab.core.errors import IolabError

    if shell not in COMPLETION_SHELLS:
        raise IolabError(
            f"{first} {shell}: not a shell iolab writes completion for; name one of "
            f"{', '.join(COMPLETION_SHELLS[:-1])} (or pwsh), or none for the current shell's. "
            f"Nothing was {'printed' if first == '--show-completion' else 'installed'}."
        )
    # PowerShell's profile is wherever PowerShell says: installing asks the program itself
    if first == "--install-completion" and shell in ("powershell", "pwsh") and not shutil.which(shell):
        raise IolabError(
            f"--install-completion {shell}: there is no '{shell}' program on PATH to ask where its profile is; "
            f"`iolab --show-completion {shell}` prints the script to add to your profile. Nothing was installed."
        )
    from typer._completion_shared import get_completion_script, install

    if first == "--show-completion":
        print(get_completion_script(prog_name="iolab", complete_var="_IOLAB_COMPLETE", shell=shell))
    else:
        _, path = install(shell=shell, prog_name="iolab", complete_var="_IOLAB_COMPLETE")
        print(f"{shell} completion installed in {path}\nCompletion will take effect once you restart the terminal")
    raise SystemExit(0)


def value_names(command, args: list[str]) -> list[str | None]:
    """What each of `args` is, as an error about it names it: the option it is the value of
    ('--runs-dir'), the argument it stands for ('TEST'), or None (an option or a command's name
    itself; also where it cannot be told, and the error names its place). An option takes the
    next argument as its value only if the commands named so far declare it with one: after a
    flag (--json), an unknown option or '--', an argument is the command's own (`iolab tests
    --json ''` called the empty test name "--json"'s value). The completion options take a
    shell's name (completion())."""
    cmd, options = command, _options(command)
    out: list[str | None] = []
    pending: str | None = None
    ended, place = False, 0
    for a in args:
        if pending is not None:  # the value of the option before it
            out.append(pending)
            pending = None
        elif not ended and a in getattr(cmd, "commands", {}):  # a command of the group: its own from here
            cmd, place = cmd.commands[a], 0
            options |= _options(cmd)
            out.append(None)
        elif not ended and a == "--":
            ended = True
            out.append(None)
        elif not ended and a.startswith("-") and a != "-":
            name, eq, _ = a.partition("=")
            p = options.get(name)
            takes = name in COMPLETION_HELP or (p is not None and not (getattr(p, "is_flag", False) or p.count))
            pending = name if takes and not eq else None
            out.append(name if eq else None)
        else:
            declared = [p for p in cmd.params if _is_argument(p)]
            # one argument more than the command takes is none of them (a last one of nargs=-1 takes the rest)
            p = (
                declared[place]
                if place < len(declared)
                else declared[-1]
                if declared and declared[-1].nargs == -1
                else None
            )
            out.append(None if p is None else (p.metavar or p.name.upper()).removesuffix("..."))
            place += 1
    return out


def _options(cmd) -> dict:
    return {n: p for p in cmd.params if not _is_argument(p) for n in (*p.opts, *p.secondary_opts)}


def _is_argument(param) -> bool:
    return type(param).__name__.endswith("Argument")


class _OnDemand(Mapping):
    """A group's commands, each built (Typer reading its function's parameters, ~0.6 ms each of
    about 200) and tidied (tidy_help) the first time it is looked up: a command line builds the
    command it names, not all 24. Its names are known without building any."""

    def __init__(self, makers: dict[str, Callable[[], object]]) -> None:
        self._makers = makers
        self._built: dict[str, object] = {}

    def __getitem__(self, name: str):
        if name not in self._built:
            command = self._built[name] = self._makers[name]()
            tidy_help(command)
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._makers

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


def built_on_demand(app: typer.Typer):
    """`app`'s top-level group, as typer.main.get_command makes it, with its commands and
    sub-groups built when first named (_OnDemand), in the order Typer lists them."""
    from typer import main as typer_main

    short, markup = app.pretty_exceptions_short, app.rich_markup_mode
    makers: dict[str, Callable[[], object]] = {}
    for info in app.registered_commands:
        name = info.name or typer_main.get_command_name(info.callback.__name__)  # type: ignore[union-attr]
        makers[name] = partial(
            typer_main.get_command_from_info, info, pretty_exceptions_short=short, rich_markup_mode=markup
        )
    for sub in app.registered_groups:
        makers[sub.name] = partial(  # type: ignore[index]
            typer_main.get_group_from_info,
            sub,
            pretty_exceptions_short=short,
            rich_markup_mode=markup,
            suggest_commands=app.suggest_commands,
        )
    bare = copy.copy(app)  # the group itself: its callback (--version) and options, no command yet
    bare.registered_commands, bare.registered_groups = [], []
    group = typer_main.get_command(bare)
    group.commands = _OnDemand(makers)  # type: ignore[attr-defined]
    tidy_help(group)
    # every usage error of the line (a sub-command's too) passes through these two calls on its
    # way to Typer's handler, which imports Typer's printer: imported first, the lighter way
    group.make_context = _printer_first(group.make_context)  # type: ignore[method-assign]
    group.invoke = _printer_first(group.invoke)  # type: ignore[method-assign]
    return group


def _printer_first(call):
    def calling(*args, **kwargs):
        try:
            return call(*args, **kwargs)
        except (ClickException, Abort):
            from iolab.cli import help as cli_help

            cli_help.printer()  # Typer's handler takes it from sys.modules (cli_help.printer says why)
            raise

    return calling


def run(app: typer.Typer, started_blocked: bool = False) -> None:
    """The `iolab` command line: `app` with -h beside --help and the help tidied. `started_blocked`:
    started by another iolab with its stop signals blocked (core/stopdefer.CHILD_MAIN), let in
    here, inside main's handling of a Ctrl-C as the command starts."""
    if started_blocked:
        from iolab.core.stopdefer import let_stops_in

        let_stops_in()
    command = built_on_demand(app)
    check_argv(sys.argv[1:], value_names(command, sys.argv[1:]))
    check_env(os.environ)
    completion(sys.argv[1:])
    try:
        command(prog_name="iolab")
    except SystemExit as e:
        # Typer ends a command a stop signal went out of with a silent exit 130 (SIGTERM's too:
        # a fleet stopped as it started a drive exited 130, saying nothing); main() says
        # "interrupted" and exits with the signal's own code, as every stopped command does
        stop = getattr(e.__context__, "__cause__", None)
        if isinstance(stop, KeyboardInterrupt):
            raise stop from None
        raise
