"""Layer 1 of 12, the top: the `iolab` command. `main.py` is the console script (Typer); the
other modules hold its option declarations (`options.py`), the command-line conventions every
command shares (`conventions.py`, `help.py`, `cli/console.py`), the progress display and the
command groups (`auto.py` for scripts, `inspection.py`, `traces.py`). Parses, calls the
library, prints; computes no figure.

May import: every layer below (automation, api, suites, run, pages, figures, engines, store,
traces, targets, core). Nothing imports it.
"""
