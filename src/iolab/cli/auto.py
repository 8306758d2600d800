"""The `iolab` command for scripts: `--json` documents on stdout (outcome.py), the shared exit
codes (errors.Exit) and `iolab check` (check.py). Thin: parse, call, print."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.markup import escape as esc
from rich.table import Table

from iolab.cli.console import Console, write_out
from iolab.cli.runsdir import runs_dir_option
from iolab.core.errors import Exit, IolabError
from iolab.core.streams import OUTCOME_FILE_ENV, note_line
from iolab.core.units import given, num, percent
from iolab.core.usertext import RUN_REF

# Runs, their records and checks are imported by the functions that read them: `iolab --help`
# mounts these commands without loading the store, the reports or the statistics.

JSON_HELP = (
    "Print one JSON document on standard output (docs/automation.md; schema in "
    "docs/schema/outcome.schema.json); the terminal output goes to standard error."
)
STEADY_HELP = (
    "Exit with code 6 when a run did not show steady state: a phase that tracks it did not reach it "
    "or ran too few rounds to be judged, or the run did not complete."
)

# The command that was asked for a JSON document, so an error that ends it still prints one.
_requested: dict[str, str] = {}


def want_json(command: str, console: Console, on: bool) -> None:
    """With --json, the command's human output goes to standard error."""
    if on:
        from iolab.core.streams import stdout_closed_at_start, undeliverable

        _requested["command"] = command
        # taken out of the environment: no process this one starts writes there too
        if told := os.environ.pop(OUTCOME_FILE_ENV, ""):
            _requested["to"] = told  # the console stays on standard output
            return
        if stdout_closed_at_start():  # refused before anything runs, not after a run of days
            raise undeliverable("is closed (>&-)")
        console.file = sys.stderr


def emit(command: str, code: int, **parts) -> None:
    from iolab.pages.outcome import document, dumps

    text = dumps(document(command, code, **parts)) + "\n"
    if "to" in _requested:  # a repeat's: its standard output holds what the run prints for people
        from iolab.targets.writepolicy import output_file

        # the path comes from the environment: written as every path iolab writes, under the policy
        with output_file(Path(_requested["to"]), "--json document of a repeat") as path:
            path.write_text(text, encoding="utf-8")
    else:
        write_out(text)


def emit_error(e: IolabError) -> None:
    """The document of a command that ended with an error (main() calls it); none when the error
    is that standard output takes no document."""
    from iolab.core.streams import Undelivered

    if _requested and not isinstance(e, Undelivered):
        emit_anyway(_requested["command"], e.exit_code, error=str(e))


def emit_anyway(command: str, code: int, **parts) -> None:
    """The document of a command that ends with `code` anyway (an error, an interrupted run): a
    document that cannot be delivered adds its own paragraph on standard error, and the
    command's own exit code stands."""
    try:
        emit(command, code, **parts)
    except IolabError as lost:
        note_line(f"iolab: {lost}")


def records_code(records: list[dict], require_steady: bool) -> int:
    from iolab.pages.outcome import run_exit_code

    return max((run_exit_code(r, require_steady) for r in records), default=Exit.OK)


def record_of(ref: str | Path, reports=()) -> dict:
    from iolab.api import reports as api
    from iolab.store.runstore import RunStore

    store = RunStore.open(ref)
    try:
        return api.run_record(store, reports)
    finally:
        store.close()


def ranking(summary, caveats: Sequence[str] = ()) -> dict:
    """`iolab compare`'s summary table (compare.SummaryTable) as the document's ranking, with what
    the terminal says beside it: the caveat each drive's figure carries (its key, as the terminal's
    [a]), each caveat's text by its key, and the comparison's own caveats (`caveats`, in full)."""
    return {
        "labels": list(summary.drives),
        "figures": [
            {
                "name": m.name,
                "unit": m.unit,
                "direction": "higher-is-better" if m.higher_is_better else "lower-is-better",
                "values": [row[j] for row in summary.values],
                "ranks": [row[j] for row in summary.ranks],
                "caveats": [summary.mark_of(i, j) for i in range(len(summary.drives))],
            }
            for j, m in enumerate(summary.metrics)
        ],
        "caveats": [{"key": key, "text": mk} for mk, key in summary.mark_keys().items()],
        "comparison_caveats": list(caveats),
    }


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
    from iolab.automation.verdict import UNJUDGED

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
        "noise ±",
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
            percent(f["noise_pct"]),
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
        help="The largest regression allowed in any figure, in % of the baseline, in the figure's bad direction.",
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
    from iolab.automation.check_junit import junit_xml
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
    base = _side(baseline, "baseline", force)
    cand = _side(candidates, "candidate", force)
    result = check_runs(base, cand, tol, conf, force, require_steady)
    if junit is not None:
        with room_for("the JUnit file", junit, "run the same `iolab check` again"):  # whole or not at all
            replace_file(junit, junit_xml(result).encode(), "JUnit file")
        result["junit"] = str(junit)
    render_check(result, console)
    # a run without steady state makes every verdict doubtful: that comes first under --require-steady
    if result["passed"]:
        code = Exit.OK
    elif require_steady and result["not_steady"]:
        code = Exit.NOT_STEADY
    else:
        code = Exit.REGRESSION
    if json_out:
        emit("check", code, runs=cand, baseline=base, check=result)
    if code:
        raise typer.Exit(code)


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
    console.print(t)
    for s in h.skipped:
        console.print(f"[yellow]skipped {esc(s['path'])}: {esc(s['reason'])}[/]", soft_wrap=True)
    written = None
    if html is not None:
        written = write_html(h, html)
        console.print(f"chart: {esc(str(written))}", soft_wrap=True)
    if json_out:
        emit("history", Exit.OK, history={**h.record(), "html": str(written) if written else None})


def runs_given(refs: list[str], console: Console) -> list[str]:
    """The runs of `iolab compare runs/*`: the shell's list also names the folders iolab writes
    beside the runs (compare/, sequences/, fleets/), which were refused as no run (exit 2). Each
    is passed over with a note; named alone, it is refused as before."""
    from iolab.store.manifest import runs_dir_folder

    kept = [r for r in refs if runs_dir_folder(Path(r)) is None]
    for r in (r for r in refs if r not in kept and kept):
        console.print(
            f"note: {esc(r)} holds the runs directory's {runs_dir_folder(Path(r))}, not a run: passed over",
            soft_wrap=True,
        )
    return kept or refs


def compare_published(
    refs: list[str], out: Path, force: bool, labels: Sequence[str], json_out: bool, console: Console
) -> bool:
    """`iolab compare` when any argument is a CSV of published figures (published.py): the
    measured runs' comparison (its report when there are two or more runs) with the published
    drives ranked beside them. False when no argument is such a file."""
    from iolab.api import comparisons as api
    from iolab.automation.published import is_published, known_figures, read_published
    from iolab.automation.published import ranking as published_ranking
    from iolab.pages.textreport import render_ranking

    files, run_refs = [Path(r) for r in refs if is_published(r)], [r for r in refs if not is_published(r)]
    if not files:
        return False
    known = known_figures()
    published = [p for f in files for p in read_published(f, known)]
    first: dict[tuple[str, str], str] = {}
    for p in published:
        if first.setdefault((p.drive, p.figure), p.source) != p.source:
            raise IolabError(
                f"{p.source}: {p.drive!r} has {p.figure!r} already at {first[(p.drive, p.figure)]}; "
                "give each drive's figure once."
            )
    paths: list[Path] = []
    measured = None
    caveats: tuple[str, ...] = ()
    if len(run_refs) >= 2:
        done = api.compare(run_refs, out, force=force, labels=labels)
        if done.summary is None:
            raise IolabError("published figures rank beside runs of one test; these runs are a sequence's.")
        measured, paths, caveats = done.summary, list(done.paths), done.caveats
    elif run_refs:
        # one run's figures carry the caveats two runs' do (they were ranked bare: no [a], none
        # of the incomplete, non-compliant or steady-state lines)
        done = api.rank(run_refs[0], out, labels)
        measured, caveats = done.summary, done.caveats
    table, notes = published_ranking(measured, published)
    for caveat in caveats:
        console.print(f"[bold red]{esc(caveat)}[/]")
    render_ranking(table, console, report=bool(paths))
    for n in notes:
        console.print(f"[yellow]{esc(n)}[/]", soft_wrap=True)
    for path in paths:
        console.print(f"comparison: {esc(str(path))}", soft_wrap=True)
    if json_out:
        rank = ranking(table, caveats)
        n_measured = len(measured.drives) if measured is not None else 0
        rank["published"] = [i >= n_measured for i in range(len(table.drives))]
        emit(
            "compare",
            Exit.OK,
            runs=[record_of(r) for r in run_refs],
            reports=[str(path) for path in paths],
            ranking=rank,
            published=[p.record() for p in published],
        )
    return True


def interval_text(f: dict) -> str:
    """A repeat figure's interval and which it is: '35.75 – 1,119 (geometric mean 200.0 ×/÷ 5.5950)'."""
    if f["low"] is None:
        return "none: an extreme" if f.get("kind") == "extreme" else "—"
    span = f"{num(f['low'])} – {num(f['high'])}"
    if f.get("interval") == "geometric":
        return f"{span} (geometric mean {num(f['geometric_mean'])} ×/÷ {f['factor']:.4f})"
    clipped = ", clipped at 0" if f.get("interval") == "t, clipped at 0" else ""
    return f"{span} (t: mean ± {num(f['half_width'])}{clipped})"


def run_repeats(
    n: int, argv: list[str], target: list[str] | None, default_target: str, json_out: bool, console: Console
) -> int:
    """`iolab run --repeat N`: the runs (repeats.py), then each key figure's mean and confidence
    interval; returns the exit code."""
    from iolab.automation.repeats import run_repeated, summary

    records, code, error = run_repeated(n, argv, target, default_target, json_out)
    rep = summary(records)
    if rep["repeats"]:  # no repeat complete: no table of nothing, only the error below
        _repeat_table(rep, n, console)
    for r in records:
        console.print(f"run: {esc(r['run_id'])} ({esc(r['state'])})", soft_wrap=True)
    if code and code != Exit.NOT_STEADY:  # an error, so standard error: stdout holds the table only
        note_line(f"iolab: repeat {rep['repeats'] + 1} of {n} ended with exit code {code}; no further repeat was run")
    if json_out:
        emit("run", code, runs=records, repeat=rep, **({"error": error} if error else {}))
    return code


def _repeat_table(rep: dict, n: int, console: Console) -> None:
    """The repeats' key figures: each one's mean and confidence interval, and why one is "—"."""
    t = Table(
        title=f"{rep['repeats']} of {n} repeats complete: mean and {rep['confidence']:.0%} confidence interval",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for col in ("figure", "n", "mean", "interval (95 %)", "per run"):
        t.add_column(col, justify="left" if col in ("figure", "per run") else "right", overflow="fold")
    several = len({f["test"] for f in rep["figures"]}) > 1  # a sequence: each figure says its test
    for f in rep["figures"]:
        t.add_row(
            esc(
                f"{f['test'] + ': ' if several else ''}{f['name']} "
                f"({f['unit']}; {'↑' if f['direction'] == 'higher-is-better' else '↓'})"
            ),
            str(f["n"]),
            num(f["mean"]),
            interval_text(f),
            ", ".join(num(v) for v in f["values"]),
        )
    console.print(t)
    for f in rep["figures"]:  # a "—" or a short n says why, as a run's own key figures do
        if f.get("unmeasured"):
            where = f"{f['test']}: " if several else ""
            said = "; ".join(f["unmeasured"])
            runs = "any run" if not f["n"] else "every run"
            console.print(esc(f"— {where}{f['name']}: not measured in {runs}: {said}"), soft_wrap=True)
    console.print(esc(f"interval: {rep['method']}"), soft_wrap=True)
