"""The `iolab` command's Typer app: every command's options and what it does. Thin: parse,
call, print. cli/main.py runs it (and answers `--version` before importing it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape as esc

from iolab.api import registry, scaleout
from iolab.cli import check as cli_check
from iolab.cli import compare as cli_compare
from iolab.cli import conventions as cli_typer
from iolab.cli import fleet as cli_fleet
from iolab.cli import history as cli_history
from iolab.cli import inspection as cli_inspect
from iolab.cli import options as opts
from iolab.cli import planview as cli_plan
from iolab.cli import repeats as cli_repeats
from iolab.cli import simcmds as cli_sim
from iolab.cli import traces as cli_traces
from iolab.cli.auto import JSON_HELP, STEADY_HELP, emit, want_json
from iolab.cli.console import Console, print_with_ids
from iolab.cli.options import (
    TEST_HELP,
    RunArgs,
    compliance_text,
    ended_early,
    finish,
    runs_dir_option,
    with_run_args,
    with_runs_dir,
)
from iolab.core.errors import IolabError
from iolab.core.streams import delivering
from iolab.core.usertext import RUN_REF

if TYPE_CHECKING:
    from iolab.api.runs import RunPlan
    from iolab.store.runstore import RunStore

# Each command imports the library it uses: `iolab --help`, `tests` and `runs` start without the runner.

app = typer.Typer(
    pretty_exceptions_enable=False, no_args_is_help=True, context_settings={"help_option_names": cli_typer.HELP_NAMES}
)
app.callback()(cli_typer.app_callback)
app.add_typer(cli_sim.sim_app, name="sim")
app.add_typer(cli_traces.trace_app, name="trace")
app.command("capture")(cli_traces.capture)
console = Console()
err = Console(stderr=True)
app.command("watch")(with_runs_dir(scaleout.watch))
app.command("check")(with_runs_dir(cli_check.check))
RunsDirOpt = runs_dir_option()
app.command()(cli_history.history)
app.command("fleet")(with_runs_dir(cli_fleet.fleet))


def default_target() -> str:
    """The built-in simulated drive (its default preset)."""
    from iolab.engines.sim import DEFAULT_PRESET

    return f"sim:{DEFAULT_PRESET}"


@app.command()
@with_run_args()
def run(
    test: str = typer.Argument(..., metavar="TEST", help=TEST_HELP),
    repeat: int = typer.Option(
        1,
        "--repeat",
        metavar="N",
        help="Run the test N times (each a whole run with its purge) and give each key figure's mean with a 95 % interval (geometric for IOPS, MB/s and times: never below 0); `iolab check` takes the runs as repeats.",
    ),
    fleet_file: Optional[Path] = typer.Option(
        None,
        "--fleet",
        metavar="FILE",
        help="Run the test on every drive of this fleet file (TOML: drives here and on hosts) at once, each its own run; then the fleet report (`iolab fleet`).",
    ),
    *,
    args: RunArgs,
):
    """Run a test or a sequence: purge, precondition, rounds until steady state; every round is stored."""
    from iolab.api import runs as api
    from iolab.cli.progress import RichProgress
    from iolab.cli.runview import RunView
    from iolab.run.stopsignals import stop_on_signals
    from iolab.store.manifest import runs_root

    target = args.target
    want_json("run", console, args.json_out)
    if fleet_file is not None:
        # absolute: fleet.json names each drive's run by the path its run printed, and a relative
        # one read from another directory named no run (`iolab fleet` rewrote every row unreadable)
        fleet_root = (args.runs_dir or runs_root()).resolve()
        raise typer.Exit(cli_fleet.run_fleet(test, fleet_file, sys.argv[1:], fleet_root, console, args))
    if repeat != 1:
        raise typer.Exit(
            cli_repeats.run_repeats(repeat, sys.argv[1:], target, default_target(), args.json_out, console)
        )
    prof, stall_s = args.make_profile(), args.stall_seconds()
    root = args.runs_dir or runs_root()
    if target and len(target) > 1:  # several drives: one run each, then their comparison
        if args.json_out:
            raise IolabError(
                "--json describes the runs of one target; with several --target, compare their runs "
                "afterwards with `iolab compare RUN... --json`."
            )
        raise typer.Exit(
            scaleout.run_many(
                target, sys.argv[1:], root, console, args.hosts, args.hosts_file, report=args.report, quiet=args.quiet
            )
        )
    # An empty -t is a mistake, not a request for the simulated drive.
    tgt = scaleout.run_target(target[0] if target else default_target(), args.hosts, args.hosts_file)
    # built once: what the notes say is what the run runs (a plan that cannot be built: main says why)
    plans = api.planned(test, prof, tgt, args.workload, args.everything)
    _say_ignored(test, plans)
    engine = run_engine(tgt, stall_s, args)
    view = RunView(console, err, args)
    try:
        with stop_on_signals(), RichProgress(console, quiet=args.quiet, report=args.report) as progress:
            view.progress = progress
            steps = api.run_steps(
                test,
                tgt,
                prof,
                workload=args.workload,
                options=args.run_options(),
                runs_dir=root,
                engine=engine,
                progress=progress,
                report=args.report,
                everything=args.everything,
                spec_sheet=args.spec_sheet,
                plans=plans,
            )
            view.follow(steps)
    except KeyboardInterrupt as e:
        view.interrupted(e)
    except IolabError as e:
        view.failed(e)
    finish("run", args.json_out, args.require_steady, view.records, reports=[str(p) for p in view.sequence_reports])


def _say_ignored(test: str, plans: list[RunPlan]) -> None:
    """A note for each option the run's tests do not use (api/unused.py), before anything runs."""
    from iolab.api.unused import ignored
    from iolab.core.plan import PROFILE_FLAGS

    for line in ignored(test, [plan for plan, _, _ in plans], PROFILE_FLAGS):
        err.print(f"iolab: note: {esc(line)}", highlight=False)


def run_engine(tgt, stall_s: float | None, args: RunArgs):
    """The engine of `iolab run`: the target's own, or one that splits rounds over --paths or hosts."""
    return scaleout.engine_for_run(
        tgt,
        args.paths,
        args.hosts,
        args.hosts_file,
        stall_s,
        args.allow_unsafe_target,
        args.allow_system_disk,
        args.listen_any,
        args.ioengine,
    )


@app.command()
@with_run_args(*opts.RESUME_OPTIONS)
def resume(
    run_ref: str = typer.Argument(..., metavar="RUN", help=f"The interrupted or failed run: {RUN_REF}."),
    again: Optional[list[str]] = cli_fleet.AGAIN,
    *,
    args: RunArgs,
):
    """Continue an interrupted run from its last complete round (or say why it cannot, and what it does instead)."""
    from iolab.api import reports as api_reports
    from iolab.api import runs as api
    from iolab.cli.progress import RichProgress
    from iolab.cli.runview import error_once_begun, report_paths, stopped_when_complete
    from iolab.run.stopsignals import Interrupted, exit_code, stop_on_signals
    from iolab.store.manifest import manifest_of

    json_out, require_steady = args.json_out, args.require_steady
    want_json("resume", console, json_out)  # before the lookup: a name refused is a --json error document too
    if (code := cli_fleet.resume_fleet(run_ref, args, console, again)) is not None:  # its drives not ended go on
        raise typer.Exit(code)
    current: list[RunStore] = []
    records: list[dict] = []

    def started(r) -> None:
        current[:] = [r.store]
        progress.test_starts(r.plan)  # its ETA and steady-state window, as a new run's
        if args.quiet:
            return
        console.print(
            f"[bold]resuming {esc(manifest_of(r.store).run_id)}[/] ({esc(r.plan.title)} on {esc(r.target.spec)})"
        )
        for note in r.notes:
            console.print(f"  {esc(note)}", soft_wrap=True)

    def ended(store: RunStore, reports: list[Path]) -> None:
        read = api_reports.read_run(store) if json_out or require_steady else None  # once, for both
        if read is not None:
            records.append(api_reports.run_record(store, reports, read))
        api_reports.show(store, console, read)
        report_paths(console, progress, reports, args.quiet)
        console.print(f"run directory: {esc(str(store.dir))}", soft_wrap=True)  # whole, for copying

    began = time.time()  # a report older than this is of the run's earlier end
    try:
        with stop_on_signals(), RichProgress(console, quiet=args.quiet, report=args.report) as progress:
            api.resume_test(
                run_ref,
                allow_unsafe=args.allow_unsafe_target,
                allow_system_disk=args.allow_system_disk,
                listen_any=args.listen_any,
                ioengine=args.ioengine,
                progress=progress,
                report=args.report,
                on_start=started,
                on_end=ended,
                spec_sheet=args.spec_sheet,
            )
    except KeyboardInterrupt as e:
        if not current:
            raise
        if manifest_of(current[0]).state == "complete":  # stopped while its end or report was written
            by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted"
            err.print(f"[yellow]{stopped_when_complete(by, current[0], began)}[/]", soft_wrap=True)
        else:
            by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted again"
            err.print(f"[yellow]{by}: finished rounds are kept; `iolab resume {esc(str(current[0].dir))}` continues[/]")
        ended_early("resume", json_out, records, current[0], exit_code(e))
    except IolabError as e:
        if not current:
            raise  # it could not be resumed: nothing changed; main() prints why
        err.print(error_once_begun(e, current[0]))
        ended_early("resume", json_out, records, current[0], e.exit_code, str(e))
    finish("resume", json_out, require_steady, records)


@app.command()
def tests(
    test: Optional[str] = typer.Argument(
        None, metavar="TEST", help="A test or sequence: list its parameters (--set NAME=VALUE)."
    ),
):
    """List the tests iolab can run by family (name, sequence, input, what it does), or one test's parameters."""
    from rich.table import Table

    from iolab.core.percentages import PERCENT_NOTE
    from iolab.core.testparams import PERCENTAGES

    if test is not None:
        for d in registry.sequence(test):
            console.print(f"[bold]{esc(d.name)}[/]: {esc(d.summary)}", soft_wrap=True)  # one line when piped too
            if not d.params:
                console.print("  no parameters of its own (the profile options of `iolab run` apply)")
            for p in d.params:
                src = f"; {p.source}" if p.source else ""
                # its unit said: min_gain=0.002 read as 0.002 % where a fraction was meant
                unit = f" [{PERCENT_NOTE}]" if p.parse in PERCENTAGES else ""
                # a computed quick value (from --cell-time) is described by the help text
                if p.quick is not None and not callable(p.quick):
                    src += f"; --quick: {p.show(p.quick)}"
                console.print(
                    f"  --set {esc(p.name)}=…  {esc(p.help)}{esc(unit)} (default {esc(p.show(p.default))}{esc(src)})",
                    soft_wrap=True,
                )
        return
    families: dict[str, list] = {}
    for d in registry.all():
        families.setdefault(d.family, []).append(d)
    for family, defs in families.items():  # one table per family: the description keeps the width
        t = Table(title=esc(family), title_justify="left", title_style="bold")
        for col in ("test", "sequence", "input", "what it does"):
            t.add_column(col, no_wrap=col != "what it does")
        for d in defs:
            t.add_row(
                esc(d.name),
                (d.sequence or "—") + (" (--all)" if d.optional else ""),
                "--workload" if d.needs_workload else "—",
                esc(d.summary),
            )
        console.print(t)


@app.command()
def runs(runs_dir: Optional[Path] = RunsDirOpt, json_out: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """List stored runs."""
    from rich.table import Table

    from iolab.api.runlist import checked_root, leftovers, list_runs
    from iolab.store.manifest import unknown_text

    want_json("runs", console, json_out)
    runs_dir = checked_root(runs_dir)
    if json_out:
        emit(
            "runs",
            0,
            listed=[
                {
                    "run_id": r.run_id,
                    "path": str(r.path),
                    "test": r.test,
                    "target": r.target,
                    "state": r.state,
                    "started": r.started,
                    "compliant": r.compliant,
                    "noncompliance": list(r.noncompliance),
                    "problem": r.problem,
                    "unknown": list(r.unknown),
                }
                for r in list_runs(runs_dir)
            ],
            fleets=cli_fleet.listed(runs_dir),
        )
        return
    t = Table()
    for col in ("run", "test", "target", "state", "started", "compliant"):
        t.add_column(col, overflow="fold")  # a value cut with "…" cannot be typed back; the ids stay whole
    found = list_runs(runs_dir)
    for r in found:
        state = f"[red]broken: {esc(r.problem)}[/]" if r.problem else esc(r.state)
        # a renamed or copied run directory keeps its manifest's id: its name is shown too, the
        # reference that names it alone when a copy beside it holds the same id
        name = r.run_id if r.path.name == r.run_id else f"{r.run_id}\n(directory {r.path.name})"
        t.add_row(esc(name), esc(r.test), esc(r.target), state, esc(r.started), esc(compliance_text(r)))
    print_with_ids(console, t, 0)
    for r in found:
        if unknown := unknown_text(r.unknown):
            err.print(f"[yellow]{esc(r.run_id)}: {esc(unknown)}[/]", soft_wrap=True)
    broken = sum(1 for r in found if r.problem)
    if broken:
        err.print(f"[yellow]{broken} of {len(found)} runs cannot be read (state 'broken'; the reason is shown)[/]")
    for line in leftovers():
        err.print(f"[yellow]{esc(line)}[/]", soft_wrap=True)
    cli_fleet.listed_note(runs_dir, console)


@app.command()
def show(
    run_ref: str = typer.Argument(..., metavar="RUN", help=f"The run: {RUN_REF}."),
    json_out: bool = opts.SHOW_JSON,
    require_steady: bool = typer.Option(False, "--require-steady", help=STEADY_HELP),
    runs_dir: Optional[Path] = RunsDirOpt,
):
    """Print a run's results: tables (block size × mix, or one row per cell), steady-state table, completeness."""
    from iolab.api import reports as api
    from iolab.store.runstore import RunStore

    want_json("show", console, json_out)  # before the lookup: a name refused is a --json error document too
    if (fleet_dir := cli_fleet.fleet_path(run_ref, runs_dir)) is not None:  # its report, as `iolab fleet FLEET`
        raise typer.Exit(cli_fleet.show(str(fleet_dir), json_out, console))
    store = RunStore.open(run_ref)
    read = api.read_run(store) if json_out or require_steady else None  # once, for the record and the tables
    records = [api.run_record(store, read=read)] if read is not None else []
    if json_out:
        api.check_readable(store)
    else:
        with console.whole():  # a table that cannot be read fails the command: then nothing is printed
            api.show(store, console, read)
    finish("show", json_out, require_steady, records)


@app.command()
def report(
    run_refs: list[str] = typer.Argument(..., metavar="RUN", help=f"The runs, each by {RUN_REF}."),
    out: Optional[Path] = opts.REPORT_OUT,
    sequence: bool = opts.SEQUENCE,
    spec_sheet: Optional[Path] = opts.SPEC_SHEET_PAGE,
    runs_dir: Optional[Path] = RunsDirOpt,
):
    """Write each run's report: one self-contained HTML file and a PDF of the same pages (a fleet,
    by its directory or name: the fleet's report, its key figures over the drives)."""
    from iolab.api import reports as api
    from iolab.cli.runview import stopped_reports
    from iolab.run.stopsignals import Interrupted, exit_code, stop_on_signals

    api.check_spec_sheet(spec_sheet, sequence)  # a bad sheet is said before any run is looked for
    began = time.time()  # a report file older than this is not this command's
    try:
        with stop_on_signals():
            if sequence:
                for p in api.write_sequence_report(run_refs, out):
                    console.print(f"sequence report: {esc(str(p))}", soft_wrap=True)
                return
            # every fleet and run given is read, and its report built, before any is written: a
            # bad argument fails the command with nothing new on disk (api.write_report)
            named = {ref: cli_fleet.fleet_path(ref, runs_dir) for ref in run_refs}
            built = []
            for fleet_dir in filter(None, named.values()):
                from iolab.api.fleetreport import fleet_pages  # its imports only when a fleet is named

                built.append(fleet_pages(fleet_dir, out, lambda st: cli_fleet.fleet_document(st)[0]))
            runs = [ref for ref, f in named.items() if f is None]
            for p in api.write_report(runs, out, spec_sheet) if runs else []:
                console.print(f"report: {esc(str(p))}", soft_wrap=True)
            for pages in built:
                for p in pages.write():
                    console.print(f"fleet report: {esc(str(p))}", soft_wrap=True)
    except KeyboardInterrupt as e:
        by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted"
        kept = [] if sequence else api.reports_in_place(run_refs, out, began)
        err.print(f"[yellow]{by}: {stopped_reports(kept)}[/]", soft_wrap=True)
        raise typer.Exit(exit_code(e)) from None


@app.command()
def compare(
    run_refs: list[str] = typer.Argument(
        ...,
        metavar="RUN",
        help=f"Two or more runs of the same test (one per drive), each by {RUN_REF}; a FILE.csv of published figures (drive, figure, value, unit[, direction]) ranks those drives beside them.",
    ),
    out: Optional[Path] = opts.COMPARE_OUT,
    force: bool = opts.COMPARE_FORCE,
    labels: Optional[list[str]] = opts.LABELS,
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
    runs_dir: Optional[Path] = RunsDirOpt,
):
    """Compare drives: one report (HTML and PDF) overlaying the runs, with a summary table and the ordinal ranking per column."""
    from iolab.store.manifest import runs_root

    want_json("compare", console, json_out)
    cli_fleet.refuse_fleets([r for r in run_refs if not r.lower().endswith(".csv")], runs_dir)
    cli_compare.compare(run_refs, out or runs_root() / "compare", force, labels or (), json_out, console, err)


@app.command()
def export(
    run_ref: str = typer.Argument(..., metavar="RUN", help=f"The run: {RUN_REF}."),
    fmt: str = typer.Option("csv", "--format", "-f", metavar="csv|json|parquet", help="csv, json or parquet."),
    out: Optional[Path] = opts.EXPORT_OUT,
    runs_dir: Optional[Path] = RunsDirOpt,
):
    """Export every table behind the report (cells, window averages, steady state, phases, series, histograms, power, manifest), one file per table."""
    from iolab.pages.export import export_run, export_stream
    from iolab.store.runstore import RunStore

    cli_fleet.refuse_fleets([run_ref], runs_dir)
    store = RunStore.open(run_ref)
    if out is not None and str(out) == "-":
        # a reader that goes away (`| head`) has what it read; a full disk or a closed standard
        # output is an error, the export is not whole (streams.delivering)
        with delivering(sys.stdout) as stream:
            export_stream(store, fmt, stream)
        return
    for p in export_run(store, fmt, out or store.dir / "export"):
        console.print(f"wrote {esc(str(p))}", soft_wrap=True)


app.command()(cli_inspect.info)
app.command("fio-job")(cli_inspect.fio_job)
app.command("plan")(with_run_args()(cli_plan.plan))
app.command("audit")(with_runs_dir(cli_inspect.audit))
app.command("power")(with_runs_dir(cli_inspect.power))
