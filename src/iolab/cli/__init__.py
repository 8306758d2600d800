"""Layer 1 of 12, the top: the `iolab` command. `main.py` is the console script, `app.py` its
Typer app (each command's options and what it does); the other modules hold its option
declarations (`options.py`), the command-line conventions every command shares
(`conventions.py`, `help.py`, `cli/console.py`), the progress display and the command groups
(`auto.py` for scripts, `inspection.py`, `traces.py`). Parses, calls the library, prints;
computes no figure.

May import: every layer below (automation, api, suites, run, pages, figures, engines, store,
traces, targets, core). Nothing imports it.
"""


def say_version() -> None:
    """`iolab --version`: said by main.py alone, by Typer's option (conventions.py) with other arguments."""
    # the package's own number, as each run's manifest and report record it; not read with
    # importlib.metadata, whose import (the email parser among it) cost more than the rest of
    # the command (test_cli_conventions holds it to the installed distribution's version)
    from iolab import __version__

    print(f"iolab {__version__}")
