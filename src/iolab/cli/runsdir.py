"""--runs-dir, the one option every command that stores or finds runs takes: declared once here,
with the check of what it names (cli/options.py and cli/auto.py mount it)."""

import os
from pathlib import Path
from typing import Any, Optional

import typer

from iolab.core.errors import IolabError
from iolab.core.runfiles import SHELL_RUNS_VAR
from iolab.core.usertext import RUNS_HELP


def _set_runs_dir(ctx: typer.Context, value: Optional[Path]) -> Optional[Path]:
    # Every module that finds a run by its id reads IOLAB_RUNS; setting it for the command's
    # length gives the option the same reach as the variable, child processes included. The
    # shell's own value is kept beside it (SHELL_RUNS_VAR; an outer iolab's kept one stands): a
    # command suggested for typing there must name the runs directory unless it is the shell's.
    if value is None and os.environ.get("IOLAB_RUNS"):
        # the variable reaches the same commands the option does: said once here as the option is,
        # not each command's own way ("no such runs directory", "no such run directory", a refusal
        # to write it, "no fleets under FILE/fleets" and exit 0)
        _check(Path(os.environ["IOLAB_RUNS"]), "$IOLAB_RUNS")
    if value is not None:
        _check(value, "--runs-dir")
        before = {k: os.environ.get(k) for k in ("IOLAB_RUNS", SHELL_RUNS_VAR)}
        os.environ.setdefault(SHELL_RUNS_VAR, before["IOLAB_RUNS"] or "")
        os.environ["IOLAB_RUNS"] = str(value)
        ctx.call_on_close(lambda: _restore_env(before))
    return value


def _check(value: Path, given: str) -> None:
    """A --runs-dir (or $IOLAB_RUNS: `given`) that names something other than a directory is said
    as what it is, once for every command: each said it its own way (`history`: "no such runs
    directory", `show RUN`: "no such run directory", `run`: a refusal to write it). A missing one
    is each command's to judge (`run` makes it)."""
    try:
        st = os.stat(value)
    except FileNotFoundError:
        return
    except OSError as e:
        raise IolabError(
            f"{given} {value}: it cannot be examined ({e.strerror}). Nothing was read or written."
        ) from None
    if not os.path.isdir(value):
        from iolab.targets.facts import file_type  # the targets package is heavy: only when it is needed

        via = f" (through a symlink to {os.path.realpath(value)})" if os.path.islink(value) else ""
        raise IolabError(
            f"{given} {value}: it is {file_type(st.st_mode)}{via}, not a directory. Give the directory "
            "iolab stores runs in (`iolab run` makes it when it does not exist). Nothing was read or written."
        )


def _restore_env(before: dict[str, Optional[str]]) -> None:
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def runs_dir_option() -> Any:  # typer.Option is typed Any, so it defaults any parameter
    return typer.Option(None, "--runs-dir", metavar="DIR", help=RUNS_HELP, callback=_set_runs_dir, is_eager=True)
