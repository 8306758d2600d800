"""The `iolab` console script: reads nothing it does not need. `iolab --version` is answered
before Typer and Rich are imported (about 0.1 CPU-s, two thirds of what it cost); every other
command line goes to the Typer app (cli/app.py), which builds only the command it names."""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module, as iolab/__init__.py
import os
import sys

from iolab import _STARTING
from iolab.cli import say_version
from iolab.core.errors import IolabError
from iolab.core.streams import open_closed_standard_streams, stdout_refused, watch_stdout
from iolab.core.usertext import check_env

DUCKDB_INTERRUPTED = "Query interrupted"  # the whole message of DuckDB's error for a Ctrl-C in a query


def main(started_blocked: bool = False) -> None:
    open_closed_standard_streams()
    watch_stdout()
    try:
        if sys.argv[1:] == ["--version"]:  # alone; with anything else Typer reads the line (an error in it wins)
            check_env(os.environ)
            say_version()
            return
        from iolab.cli import conventions as cli_typer
        from iolab.cli.app import app

        if _STARTING:  # iolab/__init__.py: the command's imports are done, Ctrl-C is KeyboardInterrupt again
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        cli_typer.run(app, started_blocked)
    except IolabError as e:
        _failed(e)
    except KeyboardInterrupt as e:  # before a run directory existed: nothing to keep
        from iolab.run.stopsignals import exit_code

        _stderr().print("[yellow]interrupted[/]")
        sys.exit(exit_code(e))
    except RuntimeError as e:
        # DuckDB (trace import, analyze and export, a Parquet export) takes a Ctrl-C that lands in
        # a query for itself: it stops the query and raises RuntimeError('Query interrupted') in
        # place of the KeyboardInterrupt, which left a traceback and exit 1 for a Ctrl-C
        if type(e) is not RuntimeError or str(e) != DUCKDB_INTERRUPTED:
            raise
        _stderr().print("[yellow]interrupted[/]")
        sys.exit(130)
    except OSError as e:
        # A path iolab was pointed at that the system refuses (not a directory, read-only,
        # full): the system's own words and the path, not a traceback.
        where = f": {e.filename}" if e.filename else ""
        _failed(stdout_refused(e) or IolabError((e.strerror or str(e)) + where))


def _failed(e: IolabError) -> None:
    from rich.markup import escape

    from iolab.cli.auto import emit_error

    _stderr().print(f"[red]iolab: {escape(str(e))}[/]")
    emit_error(e)  # --json: the error's document, as every other error has
    sys.exit(e.exit_code)


def _stderr():
    """The app's standard-error console; a new one where the app is not (wholly) imported: an
    error of `--version`, or Ctrl-C while the app was imported."""
    app = sys.modules.get("iolab.cli.app")
    if app is not None and hasattr(app, "err"):
        return app.err
    from iolab.cli.console import Console

    return Console(stderr=True)
