"""`iolab history`: one key figure across the runs of a runs directory, per target, as a table
(and an HTML trend chart). Thin: parse, call, print."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.markup import escape as esc
from rich.table import Table

from iolab.cli.auto import JSON_HELP, emit, want_json
from iolab.cli.console import Console, print_with_ids
from iolab.cli.runsdir import runs_dir_option
from iolab.core.errors import Exit
from iolab.core.units import num

# Runs, their records and checks are imported by the functions that read them: `iolab --help`
# mounts these commands without loading the store, the reports or the statistics.


def history(
    figure: str = typer.Argument(
        ..., metavar="FIGURE", help='A key figure\'s name as `iolab show` prints it, e.g. "RND 4KiB R/W 0/100 IOPS".'
    ),
    runs_dir: Optional[Path] = runs_dir_option(),
    test: Optional[str] = typer.Option(None, "--test", metavar="TEST", help="Only runs of this test."),
    target: Optional[str] = typer.Option(
        None,
        "--target",
        metavar="TARGET",
        help="Only this target: its id as the table prints it, its serial, spec or label.",
    ),
    html: Optional[Path] = typer.Option(
        None, "--html", metavar="FILE", help="Also write the trend chart as one self-contained HTML file."
    ),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """One key figure across every complete run in a runs directory, per target, in time order, with the firmware
    (read-only: the runs directory is left as it was)."""
    from iolab.automation.history import history as collect
    from iolab.automation.historychart import write_html
    from iolab.store.manifest import runs_root
    from iolab.targets.writepolicy import check_file_in_dir

    console = Console()
    want_json("history", console, json_out)
    if html is not None:
        check_file_in_dir(html, "history chart", "--html")  # refused before the runs are read, not after
    h = collect(figure, runs_dir or runs_root(), test, target)
    t = Table(
        title=esc(f"{h.figure} ({h.unit}; {'higher' if h.direction == 'higher-is-better' else 'lower'} is better)"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    seeded = any(p.seed is not None for g in h.targets for p in g.points)  # simulated drives: which run of the drive
    cols = ("started", "run", "firmware", "compliant", "steady state", "audit", h.unit)
    for col in ("target", "drive", *(("seed",) if seeded else ()), *cols):
        t.add_column(esc(col), justify="right" if col in (h.unit, "seed") else "left", overflow="fold")
    for g in h.targets:
        for p in g.points:
            t.add_row(
                esc(g.id),
                esc(g.label),
                *((str(p.seed) if p.seed is not None else "",) if seeded else ()),
                esc(p.started),
                esc(p.run_id),
                esc(p.firmware or "?"),
                esc(p.compliance_text()),
                esc(p.steady_text()),
                esc(p.audit_text()),
                num(p.value) if p.value is not None else "not measured",
            )
    print_with_ids(console, t, [c.header for c in t.columns].index("run"))
    for s in h.skipped:
        console.print(f"[yellow]skipped {esc(s['path'])}: {esc(s['reason'])}[/]", soft_wrap=True)
    written = None
    if html is not None:
        written = write_html(h, html)
        console.print(f"chart: {esc(str(written))}", soft_wrap=True)
    if json_out:
        emit("history", Exit.OK, history={**h.record(), "html": str(written) if written else None})
