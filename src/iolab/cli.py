"""The `iolab` command. Thin: parse, call, print."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape as esc

from . import api, cli_auto, cli_traces, registry, scaleout, suites, targets, textreport
from .cli_auto import JSON_HELP, STEADY_HELP, emit, records_code, want_json
from .errors import IolabError
from .runlist import leftovers, list_runs
from .runner import Interrupted, RunOptions, stop_on_signals
from .manifest import runs_root
from .store import RunStore
from .testparams import parse_settings
from .units import parse_duration, parse_size
from .usertext import check_argv

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="iolab: SNIA PTS and more, on real drives, files, NBD exports or a simulated drive.")
app.add_typer(cli_traces.sim_app, name="sim")
app.add_typer(cli_traces.trace_app, name="trace")
app.command("capture")(cli_traces.capture)
console = Console()
err = Console(stderr=True)
app.command()(scaleout.watch)
app.command()(cli_auto.check)
app.command()(cli_auto.history)

SCRATCH_FILE = "file:/var/tmp/iolab-scratch.img?size=1GiB"


def default_target() -> str:
    """The built-in simulated drive (its default preset)."""
    from .engines.sim import DEFAULT_PRESET

    return f"sim:{DEFAULT_PRESET}"


TargetOpt = typer.Option(None, "--target", "-t", help="/dev/XXX, file:PATH?size=8GiB, nbd://HOST[:PORT]/EXPORT or sim:PRESET?param=value (default: the simulated drive).")
PathsOpt = typer.Option(None, "--paths", help="Split the outstanding IO over these paths to the one drive (comma-separated, incl. --target).")
HostsOpt = typer.Option(None, "--hosts", help="Run on these fio servers at once (HOST[:PORT],...), splitting the outstanding IO.")
HostsFileOpt = typer.Option(None, "--hosts-file", help="TOML [[host]] list: address, port, target, share, ssh, ssh_config, ioengine.")
ListenAnyOpt = typer.Option(False, "--listen-any", help="Let a fio server iolab starts for --hosts listen on every interface (a host given as 0.0.0.0 or ::). Anyone who reaches it can make it write.")
ProfileOpt = typer.Option("enterprise", "--profile", help="enterprise (WCD, AR 100 %, TC4/QD32) or client (WCE, AR 75 %, TC2/QD16).")
SpecOpt = typer.Option("2.0.2", "--spec", help="PTS revision: 2.0.2 or 1.1 (changes the IOPS tracking variables).")
QuickOpt = typer.Option(False, "--quick", help="Scaled-down run (short cells, 512 MiB tested, ≤10 rounds; a simulated "
                        "drive becomes a 512 MiB copy with the same over-provisioning unless its target gives its size): "
                        "finishes in minutes, labelled non-compliant.")
CellOpt = typer.Option(None, "--cell-time", help="Duration of each cell/interval (e.g. 60s, 500ms). Below 60 s is non-compliant.")
RoundsOpt = typer.Option(None, "--max-rounds", help="Round limit for steady state (spec: 25; at most 1,000).")
CapOpt = typer.Option(None, "--capacity-limit", help="Test only this much of the target (e.g. 4GiB); non-compliant.")
PcOpt = typer.Option(None, "--precondition-factor", help="WIPC volume in × tested capacity (spec: 2).")
StrictOpt = typer.Option(False, "--strict-steady", help="Use strict < instead of inclusive ≤ in the steady-state test.")
WsatMulOpt = typer.Option(None, "--wsat-capacity-multiple", help="Write Saturation stops after this × capacity written (spec: 4).")
WsatTimeOpt = typer.Option(None, "--wsat-max-time", help="Write Saturation time limit (spec: 24h).")
MinWritesOpt = typer.Option(None, "--rwsw-min-writes", help="Multi-WSAT / Individual Streams: accept steady state only "
                            "after this × capacity of workload writes (default 1).")
SteadyMinOpt = typer.Option(None, "--steady-min-writes", help="Accept steady state only after this × the tested "
                            "capacity (plus the drive outside a range cut to the quick limit) is written since the purge (default 2).")
StallOpt = typer.Option(None, "--stall-timeout", help="Stop and fail a round in which fio completes no IO for this long "
                        "(default: 3 × the cell time, at least 30 s; e.g. 2m). Lower values than 30 s only when given here.")
WorkloadOpt = typer.Option(None, "--workload", "-w", help="RWSW tests: the directory written by `iolab trace analyze` "
                           "(or its composite.toml / replay.toml).")


SetOpt = typer.Option(None, "--set", metavar="NAME=VALUE", help="A test's own parameter (repeatable), e.g. "
                      "--set steps=5000:5000:100000; `iolab tests TEST` lists each test's parameters and defaults.")


def _profile(profile, spec, quick, cell_time, max_rounds, capacity_limit, precondition_factor, strict, wsat_mul, wsat_time,
             min_writes=None, sets=None, steady_min=None):
    return suites.make_profile(
        profile, quick=quick, spec=spec,
        cell_seconds=parse_duration(cell_time, "--cell-time") if cell_time is not None else None,
        max_rounds=max_rounds,
        capacity_limit=parse_size(capacity_limit, "--capacity-limit") if capacity_limit is not None else None,
        precondition_factor=precondition_factor,
        strict_steady=strict or None,
        wsat_capacity_multiple=wsat_mul,
        wsat_max_seconds=parse_duration(wsat_time, "--wsat-max-time") if wsat_time is not None else None,
        rwsw_min_write_multiple=min_writes,
        steady_min_write_multiple=steady_min,
        settings=parse_settings(sets) if sets else None,
    )


TEST_HELP = (f"A test ({', '.join(registry.names())}) or a sequence ({', '.join(registry.sequences())}: its tests in "
             "order); `iolab tests` lists them. Tests that need an input take --workload.")


@app.command()
def run(
    test: str = typer.Argument(..., help=TEST_HELP),
    target: Optional[list[str]] = typer.Option(None, "--target", "-t", help=TargetOpt.help + " Repeat for several drives in parallel."),
    paths: Optional[str] = PathsOpt,
    hosts: Optional[str] = HostsOpt,
    hosts_file: Optional[Path] = HostsFileOpt,
    listen_any: bool = ListenAnyOpt,
    workload: Optional[Path] = WorkloadOpt,
    profile: str = ProfileOpt,
    spec: str = SpecOpt,
    quick: bool = QuickOpt,
    cell_time: Optional[str] = CellOpt,
    max_rounds: Optional[int] = RoundsOpt,
    capacity_limit: Optional[str] = CapOpt,
    precondition_factor: Optional[float] = PcOpt,
    strict_steady: bool = StrictOpt,
    wsat_capacity_multiple: Optional[float] = WsatMulOpt,
    wsat_max_time: Optional[str] = WsatTimeOpt,
    rwsw_min_writes: Optional[float] = MinWritesOpt,
    steady_min_writes: Optional[float] = SteadyMinOpt,
    sets: Optional[list[str]] = SetOpt,
    pe_cycles: Optional[int] = typer.Option(None, "--pe-cycles", help="Rated P/E cycles of the flash, for TBW (same as --set pe_cycles=N)."),
    warranty_years: Optional[float] = typer.Option(None, "--warranty-years", help="Warranty in years, for DWPD (same as --set warranty_years=Y)."),
    purge: str = typer.Option("auto", "--purge", help="auto, nvme-format, nvme-sanitize, ata-secure-erase, sg-format, sg-sanitize, blkdiscard, file, none."),
    allow_unsafe_target: bool = typer.Option(False, "--allow-unsafe-target", help="Write even to a partitioned, signature-bearing, in-use or foreign target. DESTROYS DATA."),
    allow_system_disk: bool = typer.Option(False, "--allow-system-disk", help="Write even where a mounted filesystem, active swap or the running system lives (separate from --allow-unsafe-target). DESTROYS DATA."),
    runs_dir: Optional[Path] = typer.Option(None, "--runs-dir", help="Where run directories go (default ./runs or $IOLAB_RUNS)."),
    tested_by: str = typer.Option("", "--tested-by", help="Name for the report's 'tested by' field."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write the HTML/PDF report at the end."),
    stall_timeout: Optional[str] = StallOpt,
    everything: bool = typer.Option(False, "--all", help="A sequence with its optional tests (pts: every PTS 2.0 test)."),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
    require_steady: bool = typer.Option(False, "--require-steady", help=STEADY_HELP),
    repeat: int = typer.Option(1, "--repeat", help="Run the test N times (each a whole run with its purge) and give each key figure's mean with a 95 % Student t interval; `iolab check` takes the runs as repeats."),
):
    """Run a test or a sequence: purge, precondition, rounds until steady state; every round is stored."""
    want_json("run", console, json_out)
    if repeat != 1:
        raise typer.Exit(cli_auto.run_repeats(repeat, sys.argv[1:], target, default_target(), json_out, console))
    sets = [*(sets or ()), *(f"{k}={v}" for k, v in (("pe_cycles", pe_cycles), ("warranty_years", warranty_years)) if v is not None)]
    prof = _profile(profile, spec, quick, cell_time, max_rounds, capacity_limit, precondition_factor, strict_steady,
                    wsat_capacity_multiple, wsat_max_time, rwsw_min_writes, sets,
                    steady_min_writes)
    stall_s = parse_duration(stall_timeout, "--stall-timeout") if stall_timeout is not None else None
    # An empty -t is a mistake, not a request for the simulated drive.
    root = runs_dir or runs_root()
    if target and len(target) > 1:  # several drives: one run each, then their comparison
        if json_out:
            raise IolabError("--json describes the runs of one target; with several --target, compare their runs "
                             "afterwards with `iolab compare RUN... --json`.")
        raise typer.Exit(scaleout.run_many(target, sys.argv[1:], root, console))
    tgt = targets.parse_target(target[0] if target else default_target())
    engine = scaleout.engine_for_run(tgt, paths, hosts, hosts_file, stall_s, allow_unsafe_target, allow_system_disk,
                                     listen_any)
    options = RunOptions(purge_method=purge, allow_unsafe=allow_unsafe_target, allow_system_disk=allow_system_disk,
                         tested_by=tested_by)
    from .progress import RichProgress, sequence_eta

    current: list[RunStore] = []
    records: list[dict] = []
    seq_reports: list[Path] = []

    def planned(plans, i: int) -> None:
        if len(plans) > 1:
            progress.in_sequence(plans, i)
            console.print(f"[bold]test {i + 1}/{len(plans)}[/]: remaining {esc(sequence_eta(plans[i:]))}", soft_wrap=True)

    def started(store: RunStore) -> None:
        current[:] = [store]
        m = store.manifest
        console.print(f"[bold]{esc(m.title)}[/] on {esc(m.target['spec'])} → {esc(str(store.dir))}")
        for overridden in m.safety_overrides:
            console.print(f"[bold yellow]safety check overridden: {esc(overridden)}[/]", soft_wrap=True)
        if not m.compliant:
            console.print(f"[yellow]non-compliant: {esc('; '.join(m.noncompliance))}[/]")

    def ended(store: RunStore, reports: list[Path]) -> None:
        if json_out or require_steady:
            records.append(api.run_record(store, reports))
        if store.manifest.state == "complete":
            api.show(store, console)
        for p in reports:
            console.print(f"report: {esc(str(p))}", soft_wrap=True)
        if store.manifest.state == "complete":
            console.print(f"run directory: {esc(str(store.dir))}")

    try:
        with stop_on_signals(), RichProgress(console) as progress:
            api.run_test(test, tgt, prof, workload=workload, options=options, runs_dir=root, engine=engine,
                         progress=progress, report=report, on_start=started, on_end=ended,
                         everything=everything, on_plan=planned,
                         on_sequence_report=lambda paths: [seq_reports.append(p) or console.print(
                             f"sequence report: {esc(str(p))}", soft_wrap=True) for p in paths])
    except KeyboardInterrupt as e:
        if not current or current[0].manifest.state not in ("interrupted", "complete"):
            raise
        by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted"
        run_dir = esc(str(current[0].dir))
        if current[0].manifest.state == "complete":  # stopped while its report was written
            err.print(f"[yellow]{by} after run {esc(current[0].manifest.run_id)} was complete: its measurements are "
                      f"kept in {run_dir}; a report stopped half-way is not kept (`iolab report {run_dir}` "
                      "writes it)[/]", soft_wrap=True)
        else:
            err.print(f"[yellow]{by}: finished rounds are kept in {run_dir}; "
                      f"`iolab report {run_dir}` reports what was measured[/]")
        _ended_early("run", json_out, records, current[0], 128 + e.signum if isinstance(e, Interrupted) else 130)
    except IolabError as e:
        if not current or current[0].manifest.state != "failed":
            raise  # refused before its run began: main() prints it
        err.print(f"[red]{esc(str(e))}[/]\n(the run so far is kept in {esc(str(current[0].dir))})")
        _ended_early("run", json_out, records, current[0], e.exit_code)
    _finish("run", json_out, require_steady, records, reports=[str(p) for p in seq_reports])


def _ended_early(command: str, json_out: bool, records: list[dict], store: RunStore, code: int) -> None:
    """An interrupted or failed run: its document (the run so far), then its exit code."""
    if json_out:
        if not any(r["path"] == str(store.dir) for r in records):
            records.append(cli_auto.record_of(store.dir))
        emit(command, code, runs=records)
    raise typer.Exit(code)


def _finish(command: str, json_out: bool, require_steady: bool, records: list[dict], **parts) -> None:
    code = records_code(records, require_steady)
    if json_out:
        emit(command, code, runs=records, **parts)
    if code:
        raise typer.Exit(code)


def compliance_text(r) -> str:
    """The `runs` table's compliant column: the run's own reasons, never a guessed one."""
    if r.compliant:
        return "yes"
    return "no: " + "; ".join(r.noncompliance) if r.noncompliance else "no"


@app.command()
def resume(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or directory of an interrupted or failed run."),
    allow_unsafe_target: bool = typer.Option(False, "--allow-unsafe-target", help="As for `iolab run`. DESTROYS DATA."),
    allow_system_disk: bool = typer.Option(False, "--allow-system-disk", help="As for `iolab run`. DESTROYS DATA."),
    listen_any: bool = ListenAnyOpt,
    report: bool = typer.Option(True, "--report/--no-report", help="Write the HTML/PDF report at the end."),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
    require_steady: bool = typer.Option(False, "--require-steady", help=STEADY_HELP),
):
    """Continue an interrupted run from its last complete round (or say why it cannot, and what it does instead)."""
    from .progress import RichProgress

    want_json("resume", console, json_out)
    current = []
    records: list[dict] = []

    def started(r) -> None:
        current[:] = [r.store]
        console.print(f"[bold]resuming {esc(r.store.manifest.run_id)}[/] ({esc(r.plan.title)} on {esc(r.target.spec)})")
        for note in r.notes:
            console.print(f"  {esc(note)}", soft_wrap=True)

    def ended(store: RunStore, reports: list[Path]) -> None:
        if json_out or require_steady:
            records.append(api.run_record(store, reports))
        api.show(store, console)
        for p in reports:
            console.print(f"report: {esc(str(p))}", soft_wrap=True)
        console.print(f"run directory: {esc(str(store.dir))}")

    try:
        with stop_on_signals(), RichProgress(console) as progress:
            api.resume_test(run_ref, allow_unsafe=allow_unsafe_target, allow_system_disk=allow_system_disk,
                            listen_any=listen_any, progress=progress, report=report, on_start=started, on_end=ended)
    except KeyboardInterrupt as e:
        if not current:
            raise
        by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted again"
        err.print(f"[yellow]{by}: finished rounds are kept; `iolab resume {esc(str(current[0].dir))}` "
                  "continues[/]")
        _ended_early("resume", json_out, records, current[0], 128 + e.signum if isinstance(e, Interrupted) else 130)
    except IolabError as e:
        if not current:
            raise  # it could not be resumed: nothing changed; main() prints why
        err.print(f"[red]{esc(str(e))}[/]\n(the run so far is kept in {esc(str(current[0].dir))})")
        _ended_early("resume", json_out, records, current[0], e.exit_code)
    _finish("resume", json_out, require_steady, records)


@app.command()
def tests(test: Optional[str] = typer.Argument(None, help="A test or sequence: list its parameters (--set NAME=VALUE).")):
    """List the tests iolab can run by family (name, sequence, input, what it does), or one test's parameters."""
    from rich.table import Table

    if test is not None:
        for d in registry.sequence(test):
            console.print(f"[bold]{esc(d.name)}[/]: {esc(d.summary)}")
            if not d.params:
                console.print("  no parameters of its own (the profile options of `iolab run` apply)")
            for p in d.params:
                src = f"; {p.source}" if p.source else ""
                # a computed quick value (from --cell-time) is described by the help text
                if p.quick is not None and not callable(p.quick):
                    src += f"; --quick: {p.show(p.quick)}"
                console.print(f"  --set {esc(p.name)}=…  {esc(p.help)} (default {esc(p.show(p.default))}{esc(src)})",
                              soft_wrap=True)
        return
    families: dict[str, list] = {}
    for d in registry.all():
        families.setdefault(d.family, []).append(d)
    for family, defs in families.items():  # one table per family: the description keeps the width
        t = Table(title=esc(family), title_justify="left", title_style="bold")
        for col in ("test", "sequence", "input", "what it does"):
            t.add_column(col, no_wrap=col != "what it does")
        for d in defs:
            t.add_row(esc(d.name), (d.sequence or "—") + (" (--all)" if d.optional else ""),
                      "--workload" if d.needs_workload else "—", esc(d.summary))
        console.print(t)


@app.command()
def runs(runs_dir: Optional[Path] = typer.Option(None, "--runs-dir"),
         json_out: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """List stored runs."""
    from rich.table import Table

    if json_out:
        emit("runs", 0, listed=[{"run_id": r.run_id, "path": str(r.path), "test": r.test, "target": r.target,
                                 "state": r.state, "started": r.started, "compliant": r.compliant,
                                 "noncompliance": list(r.noncompliance), "problem": r.problem}
                                for r in list_runs(runs_dir)])
        return
    t = Table()
    for col in ("run", "test", "target", "state", "started", "compliant"):
        t.add_column(col, overflow="fold")  # a run id cut with "…" cannot be typed back
    found = list_runs(runs_dir)
    for r in found:
        state = f"[red]broken: {esc(r.problem)}[/]" if r.problem else esc(r.state)
        t.add_row(esc(r.run_id), esc(r.test), esc(r.target), state, esc(r.started),
                  esc(compliance_text(r)))
    console.print(t)
    broken = sum(1 for r in found if r.problem)
    if broken:
        err.print(f"[yellow]{broken} of {len(found)} runs cannot be read (state 'broken'; the reason is shown)[/]")
    for line in leftovers():
        err.print(f"[yellow]{esc(line)}[/]", soft_wrap=True)


@app.command()
def show(run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or directory."),
         json_out: bool = typer.Option(False, "--json", help="Print the run as one JSON document instead of the tables "
                                       "(docs/automation.md; schema in docs/schema/outcome.schema.json)."),
         require_steady: bool = typer.Option(False, "--require-steady", help=STEADY_HELP)):
    """Print a run's results: tables (block size × mix, or one row per cell), steady-state table, completeness."""
    want_json("show", console, json_out)
    store = RunStore.open(run_ref)
    if not json_out:
        api.show(store, console)
    _finish("show", json_out, require_steady, [api.run_record(store)] if json_out or require_steady else [])


@app.command()
def report(
    run_refs: list[str] = typer.Argument(..., metavar="RUN", help="Run ids or directories."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory for the HTML and PDF files (default: each run's report/ folder; with --sequence: sequences/ beside the runs)."),
    sequence: bool = typer.Option(False, "--sequence", help="One report of these runs of one target (a summary page, then each run's pages in the order they ran), as `iolab run pts|characterise` writes."),
):
    """Write each run's report: one self-contained HTML file and a PDF of the same pages."""
    from .manifest import resolve_run

    try:
        with stop_on_signals():
            if sequence:
                for p in api.write_sequence_report(run_refs, out):
                    console.print(f"sequence report: {esc(str(p))}", soft_wrap=True)
                return
            for ref in run_refs:
                path = resolve_run(ref)
                for p in api.write_report([path], out or path / "report"):
                    console.print(f"report: {esc(str(p))}", soft_wrap=True)
    except KeyboardInterrupt as e:
        by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted"
        err.print(f"[yellow]{by}: the report being written was not kept (the reports listed above are whole)[/]",
                  soft_wrap=True)
        raise typer.Exit(128 + e.signum if isinstance(e, Interrupted) else 130)


@app.command()
def compare(
    run_refs: list[str] = typer.Argument(..., metavar="RUN", help="Two or more runs of the same test (one per drive); a FILE.csv of published figures (drive, figure, value, unit[, direction]) ranks those drives beside them."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory for the comparison (default: compare/ under the runs directory)."),
    force: bool = typer.Option(False, "--force", help="Compare runs of different tests or parameters anyway; every page lists the differences."),
    labels: Optional[list[str]] = typer.Option(None, "--label", help="A name for each run, in the order of the runs (repeat once per run), e.g. --label before --label after; default: the drive, with the run id where two runs would read the same."),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Compare drives: one report (HTML and PDF) overlaying the runs, with a summary table and the ordinal ranking per column."""
    want_json("compare", console, json_out)
    if cli_auto.compare_published(run_refs, out or runs_root() / "compare", force, labels or (), json_out, console):
        return
    done = api.compare(run_refs, out or runs_root() / "compare", force=force, labels=labels or ())
    if done.summary is not None:
        textreport.render_ranking(done.summary, console)
    for p in done.paths:
        console.print(f"comparison: {esc(str(p))}", soft_wrap=True)
    if json_out:
        emit("compare", 0, runs=[cli_auto.record_of(r) for r in run_refs], reports=[str(p) for p in done.paths],
             **({"ranking": cli_auto.ranking(done.summary)} if done.summary is not None else {}))


@app.command()
def export(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or directory."),
    fmt: str = typer.Option("csv", "--format", "-f", help="csv, json or parquet."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory for the files (default: the run's export/ folder); - writes a JSON export to standard output as one document."),
):
    """Export every table behind the report (cells, window averages, steady state, series, histograms, manifest), one file per table."""
    from .export import export_run, export_stream

    store = RunStore.open(run_ref)
    if out is not None and str(out) == "-":
        export_stream(store, fmt, sys.stdout)
        return
    for p in export_run(store, fmt, out or store.dir / "export"):
        console.print(f"wrote {esc(str(p))}", soft_wrap=True)


@app.command()
def info(target: str = typer.Argument(..., help="Target spec (read-only inspection; never writes).")):
    """Show what a target reports about itself (model, serial, firmware, capacity, sectors, interface)."""
    from dataclasses import asdict

    tgt = targets.parse_target(target)
    console.print(f"[bold]{esc(tgt.spec)}[/] ({tgt.kind})  capacity {tgt.capacity:,} B = {tgt.capacity / 1e9:.3f} GB")
    for k, v in asdict(tgt.facts).items():
        if v not in (None, (), ""):
            console.print(f"  {k:16} {esc(str(v) if not isinstance(v, (list, tuple)) else ', '.join(map(str, v)))}")


@app.command("fio-job")
def fio_job(
    test: str = typer.Argument(..., help=TEST_HELP),
    target: Optional[str] = TargetOpt,
    paths: Optional[str] = PathsOpt,
    hosts: Optional[str] = HostsOpt,
    hosts_file: Optional[Path] = HostsFileOpt,
    workload: Optional[Path] = WorkloadOpt,
    profile: str = ProfileOpt,
    spec: str = SpecOpt,
    quick: bool = QuickOpt,
    cell_time: Optional[str] = CellOpt,
    capacity_limit: Optional[str] = CapOpt,
    sets: Optional[list[str]] = SetOpt,
):
    """Print the exact fio job files a test runs (preconditioning and one round), to reproduce any cell by
    hand; with --paths/--hosts, each path's or host's own job file (nothing is connected or checked)."""
    from .engines.fio import FioEngine
    from .engines.fio_hosts import legs_job_text
    from .plan import Deferred
    from .runner import cell_tag

    prof = _profile(profile, spec, quick, cell_time, None, capacity_limit, None, False, None, None, sets=sets)
    tgt = targets.parse_target(target or SCRATCH_FILE)
    if tgt.kind == "sim":
        raise IolabError("fio-job needs a real target (block device, file: or nbd://); the simulated drive does not run fio.")
    engine = FioEngine()
    split = scaleout.legs_for_run(tgt, paths, hosts, hosts_file)

    def job(w, tag: str) -> str:
        return legs_job_text(split[0], engine, w, tag) if split else engine.job_text(tgt, w, tag)

    for plan in api.plans(test, prof, tgt, workload):
        for phase in plan.phases:
            if isinstance(phase, Deferred):
                print(f"# ---- {plan.title} / {phase.name}: built during the run from {phase.describe}")
                continue
            for i, w in enumerate(phase.precondition):
                tag = cell_tag(phase.name, 0, i, w.label())
                print(f"# ---- {plan.title} / {phase.name} / preconditioning {i + 1}: {w.label()}")
                print(job(w, tag))
            for i, cell in enumerate(phase.cells):
                tag = cell_tag(phase.name, 1, i, cell.key)
                print(f"# ---- {plan.title} / {phase.name} / cell {i + 1}/{len(phase.cells)}: {cell.key} (every round)")
                print(job(cell.workload, tag))


def main() -> None:
    try:
        check_argv(sys.argv[1:])
        app()
    except IolabError as e:
        err.print(f"[red]iolab: {esc(str(e))}[/]")
        cli_auto.emit_error(e)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        sys.exit(130)
    except OSError as e:
        # A path iolab was pointed at that the system refuses (not a directory, read-only,
        # full): the system's own words and the path, not a traceback.
        where = f": {e.filename}" if e.filename else ""
        err.print(f"[red]iolab: {esc((e.strerror or str(e)) + where)}[/]")
        sys.exit(2)
