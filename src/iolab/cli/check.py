"""`iolab check`: is the candidate worse than the baseline beyond noise? Reads the runs or saved
`--json` documents on each side, calls automation/check.py, prints each figure's verdict (and
writes the JUnit file). Thin: parse, call, print."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.markup import escape as esc
from rich.table import Table

from iolab.cli.auto import JSON_HELP, emit, record_of, want_json
from iolab.cli.console import Console
from iolab.core.errors import Exit, IolabError
from iolab.core.units import given, num, percent
from iolab.core.usertext import RUN_REF

# Runs, their records and checks are imported by the functions that read them: `iolab --help`
# mounts these commands without loading the store, the reports or the statistics.


def _side(refs: list[str], what: str, force: bool) -> list[dict]:
    """Run records from run ids/directories or saved --json documents (a file ending .json)."""
    from iolab.automation.saved import is_saved, read_saved

    out = []
    for ref in refs:
        out += read_saved(Path(ref)) if is_saved(ref) else [record_of(ref)]
    for r in out:
        if r["state"] != "complete" and not force:
            raise IolabError(
                f"{what} run {r['run_id']} is {r['state']}, not complete: its figures are not those of a "
                "whole run. Check complete runs, or pass --force."
            )
    return out


def render_check(result: dict, console: Console) -> None:
    from iolab.automation.verdict import UNJUDGED, noise_text

    t = Table(
        title=f"check: {esc(result['test'])} (confidence {given(100 * result['confidence'])}%)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    allowed = {f["tolerance_pct"] for f in result["figures"]}
    cols = (
        "figure",
        "baseline",
        "candidate",
        "change",
        "noise",
        "detects ≥",
        *(("allowed",) if len(allowed) > 1 else ()),
        "verdict",
    )
    for col in cols:
        # the figure's name may wrap; a verdict or a number cut short would mislead
        t.add_column(
            col,
            justify="left" if col in ("figure", "verdict") else "right",
            no_wrap=col != "figure",
            min_width=14 if col == "figure" else None,
        )
    style = {"regression": "red", "missing": "red", "improvement": "green", "within-noise": "yellow"}

    for f in result["figures"]:
        v = f["verdict"]
        kind = "" if f["kind"] == "value" else f"; {f['kind']}"
        t.add_row(
            esc(f"{f['name']} ({f['unit']}; {'↑' if f['direction'] == 'higher-is-better' else '↓'}{kind})"),
            num(f["baseline"]["value"]),
            num(f["candidate"]["value"]),
            percent(f["change_pct"], "+"),
            noise_text(f),
            percent(f["detectable_pct"]),
            *((f"{given(f['tolerance_pct'])} %",) if len(allowed) > 1 else ()),
            f"[{style[v]}]{v}[/]" if v in style else v,
        )
    console.print(t)
    if len(allowed) == 1:
        console.print(f"allowed regression: {given(allowed.pop())} % in every figure")
    methods: dict[str, list[str]] = {}
    # a figure listed without a verdict, or missing from the candidate: said why, under the table
    # (a missing figure fails the check: "FAILED: NAME" alone left the user to find out why)
    unjudged: dict[tuple[str, str], list[str]] = {}
    for f in result["figures"]:
        if f["verdict"] in (*UNJUDGED, "missing"):
            unjudged.setdefault((f["verdict"], f["method"]), []).append(f["name"])
        elif f["method"]:
            methods.setdefault(f["method"], []).append(f["name"])
    for (v, m), names in unjudged.items():
        console.print(esc(f"{', '.join(names)}: {v.replace('-', ' ')}: {m}"), soft_wrap=True)
    judged = sum(f["verdict"] not in UNJUDGED for f in result["figures"])
    for m, names in methods.items():
        every = "every figure" if judged == len(result["figures"]) else "every figure compared"
        which = every if len(names) == judged else ", ".join(names)
        console.print(esc(f"how ({which}): {m}"), soft_wrap=True)
    for n in result.get("notes", ()):  # what a figure is of (a DIRTH point measured as another's)
        console.print(esc(n), soft_wrap=True)
    for w in result["warnings"]:
        console.print(f"[yellow]warning: {esc(w)}[/]", soft_wrap=True)
    for d in result["differences"]:
        console.print(f"[yellow]difference (--force): {esc(d)}[/]", soft_wrap=True)
    from iolab.automation.check import models_note

    if note := models_note(result["drive_models"]):  # on standard error: not in what a script reads
        Console(stderr=True).print(esc(note), style="yellow", soft_wrap=True)
    if result["regressions"]:
        console.print(f"[red]FAILED[/]: {esc(', '.join(result['regressions']))}", soft_wrap=True)
    elif not result["passed"]:
        console.print("[red]FAILED[/]: --require-steady, and a run did not show steady state", soft_wrap=True)
    else:
        console.print("[green]passed[/]: no key figure is worse than the baseline beyond noise and tolerance")


def check(
    candidates: list[str] = typer.Argument(
        ..., metavar="RUN", help=f"The candidate: one run, or several runs of it (repeats), each by {RUN_REF}."
    ),
    baseline: list[str] = typer.Option(
        ...,
        "--baseline",
        "-b",
        metavar="RUN|FILE.json",
        help=f"A baseline run, by {RUN_REF} (repeat for several runs), or a "
        "saved `--json` document (FILE.json) whose runs are the baseline.",
    ),
    max_regression: str = typer.Option(
        "5%",
        "--max-regression",
        metavar="PCT",
        help="The largest regression allowed in a figure's bad direction, in % of the baseline (5; up to 1 with its %).",
    ),
    tolerances: Optional[Path] = typer.Option(
        None,
        "--tolerances",
        metavar="FILE",
        # escaped: Rich would read [tolerances] as markup and drop it
        help='A TOML file: its \\[tolerances] table gives a figure its own allowed regression ("FIGURE NAME" = '
        '"10%"), its \\[spread] table a figure\'s run-to-run standard deviation ("FIGURE NAME" = "4%").',
    ),
    confidence: str = typer.Option("95%", "--confidence", metavar="PCT", help="Confidence of the noise interval."),
    junit: Optional[Path] = typer.Option(
        None, "--junit", metavar="FILE", help="Also write the verdicts as JUnit XML to this file."
    ),
    force: bool = typer.Option(
        False, "--force", help="Check runs with different settings, or incomplete runs, anyway."
    ),
    require_steady: bool = typer.Option(
        False,
        "--require-steady",
        help="Exit with code 6 when a run on either side did not show steady state: a phase that tracks it did "
        "not reach it or ran too few rounds to be judged, or the run did not complete (else a warning).",
    ),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Is the candidate worse than the baseline beyond noise? Per key figure, direction-aware; exit 7 on a
    regression (docs/automation.md)."""
    from iolab.automation.check import check as check_runs
    from iolab.automation.check import mixed_targets
    from iolab.automation.tolerances import load_tolerances, parse_pct
    from iolab.store.durable import replace_file, room_for
    from iolab.targets.writepolicy import check_file_in_dir

    console = Console()
    want_json("check", console, json_out)
    try:
        conf = parse_pct(confidence, "--confidence")
    except IolabError:  # parse_pct's range (0% to 999%) is a tolerance's: the level's own is said for every value
        conf = math.nan
    if not 0.5 <= conf < 1:
        raise IolabError(f"--confidence {confidence}: give a level from 50% to below 100%, e.g. 95%.")
    tol = load_tolerances(parse_pct(max_regression, "--max-regression"), tolerances)
    if junit is not None:
        check_file_in_dir(junit, "JUnit file", "--junit")  # refused before the runs are read, not after
    base, cand = _side(baseline, "baseline", force), _side(candidates, "candidate", force)
    result = check_runs(base, cand, tol, conf, force, require_steady)
    result["warnings"] += mixed_targets(base, cand)
    if junit is not None:
        from iolab.automation.check_junit import junit_xml  # (and the XML escapes): only with --junit

        with room_for("the JUnit file", junit, "run the same `iolab check` again"):  # whole or not at all
            replace_file(junit, junit_xml(result).encode(), "JUnit file")
        result["junit"] = str(junit)
    render_check(result, console)
    # a run without steady state makes every verdict doubtful: that comes first under --require-steady
    unsteady = require_steady and result["not_steady"]
    code = Exit.OK if result["passed"] else Exit.NOT_STEADY if unsteady else Exit.REGRESSION
    if json_out:
        emit("check", code, runs=cand, baseline=base, check=result)
    if code:
        raise typer.Exit(code)
