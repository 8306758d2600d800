"""The `iolab` command. Thin: parse, call, print."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape as esc

from . import api, registry, suites, targets
from .engines import engine_for
from .errors import IolabError
from .runlist import list_runs
from .runner import Interrupted, RunOptions, Runner, start, stop_on_signals
from .store import ResultsDiskFull, RunStore, runs_root
from .testparams import parse_settings
from .units import parse_duration, parse_size

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="iolab: SNIA PTS and more, on real drives, files, NBD exports or a simulated drive.")
sim_app = typer.Typer(help="The built-in simulated drives.", no_args_is_help=True)
app.add_typer(sim_app, name="sim")
trace_app = typer.Typer(help="Block IO traces: capture, import, analyze, export.", no_args_is_help=True)
app.add_typer(trace_app, name="trace")
console = Console()
err = Console(stderr=True)

SCRATCH_FILE = "file:/var/tmp/iolab-scratch.img?size=1GiB"


def default_target() -> str:
    """The built-in simulated drive (its default preset)."""
    from .engines.sim import DEFAULT_PRESET

    return f"sim:{DEFAULT_PRESET}"


TargetOpt = typer.Option(None, "--target", "-t", help="/dev/XXX, file:PATH?size=8GiB, nbd://HOST[:PORT]/EXPORT or sim:PRESET?param=value (default: the simulated drive).")
ProfileOpt = typer.Option("enterprise", "--profile", help="enterprise (WCD, AR 100 %, TC4/QD32) or client (WCE, AR 75 %, TC2/QD16).")
SpecOpt = typer.Option("2.0.2", "--spec", help="PTS revision: 2.0.2 or 1.1 (changes the IOPS tracking variables).")
QuickOpt = typer.Option(False, "--quick", help="Scaled-down run (short cells, 512 MiB tested, ≤10 rounds; a simulated "
                        "drive becomes a 512 MiB copy with the same over-provisioning): finishes in minutes, labelled non-compliant.")
CellOpt = typer.Option(None, "--cell-time", help="Duration of each cell/interval (e.g. 60s, 500ms). Below 60 s is non-compliant.")
RoundsOpt = typer.Option(None, "--max-rounds", help="Round limit for steady state (spec: 25).")
CapOpt = typer.Option(None, "--capacity-limit", help="Test only this much of the target (e.g. 4GiB); non-compliant.")
PcOpt = typer.Option(None, "--precondition-factor", help="WIPC volume in × tested capacity (spec: 2).")
StrictOpt = typer.Option(False, "--strict-steady", help="Use strict < instead of inclusive ≤ in the steady-state test.")
WsatMulOpt = typer.Option(None, "--wsat-capacity-multiple", help="Write Saturation stops after this × capacity written (spec: 4).")
WsatTimeOpt = typer.Option(None, "--wsat-max-time", help="Write Saturation time limit (spec: 24h).")
MinWritesOpt = typer.Option(None, "--rwsw-min-writes", help="Multi-WSAT / Individual Streams: accept steady state only "
                            "after this × capacity of workload writes (default 1).")
StallOpt = typer.Option(None, "--stall-timeout", help="Stop and fail a round in which fio completes no IO for this long "
                        "(default: 3 × the cell time, at least 30 s; e.g. 2m). Lower values than 30 s only when given here.")
WorkloadOpt = typer.Option(None, "--workload", "-w", help="RWSW tests: the directory written by `iolab trace analyze` "
                           "(or its composite.toml / replay.toml).")


SetOpt = typer.Option(None, "--set", metavar="NAME=VALUE", help="A test's own parameter (repeatable), e.g. "
                      "--set steps=5000:5000:100000; `iolab tests TEST` lists each test's parameters and defaults.")


def _profile(profile, spec, quick, cell_time, max_rounds, capacity_limit, precondition_factor, strict, wsat_mul, wsat_time,
             min_writes=None, sets=None):
    return suites.make_profile(
        profile, quick=quick, spec=spec,
        cell_seconds=parse_duration(cell_time, "--cell-time") if cell_time else None,
        max_rounds=max_rounds,
        capacity_limit=parse_size(capacity_limit, "--capacity-limit") if capacity_limit else None,
        precondition_factor=precondition_factor,
        strict_steady=strict or None,
        wsat_capacity_multiple=wsat_mul,
        wsat_max_seconds=parse_duration(wsat_time, "--wsat-max-time") if wsat_time else None,
        rwsw_min_write_multiple=min_writes,
        settings=parse_settings(sets) if sets else None,
    )


TEST_HELP = (f"A test ({', '.join(registry.names())}) or a sequence ({', '.join(registry.sequences())}: its tests in "
             "order); `iolab tests` lists them. Tests that need an input take --workload.")


@app.command()
def run(
    test: str = typer.Argument(..., help=TEST_HELP),
    target: Optional[str] = TargetOpt,
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
):
    """Run a test or a sequence: purge, precondition, rounds until steady state; every round is stored."""
    sets = [*(sets or ()), *(f"{k}={v}" for k, v in (("pe_cycles", pe_cycles), ("warranty_years", warranty_years)) if v is not None)]
    prof = _profile(profile, spec, quick, cell_time, max_rounds, capacity_limit, precondition_factor, strict_steady,
                    wsat_capacity_multiple, wsat_max_time, rwsw_min_writes, sets)
    stall_s = parse_duration(stall_timeout, "--stall-timeout") if stall_timeout is not None else None
    # An empty -t is a mistake, not a request for the simulated drive.
    tgt = suites.quick_target(prof, targets.parse_target(target if target is not None else default_target()))
    engine = engine_for(tgt, stall_timeout=stall_s)
    options = RunOptions(purge_method=purge, allow_unsafe=allow_unsafe_target, allow_system_disk=allow_system_disk,
                         tested_by=tested_by)
    root = runs_dir or runs_root()
    try:
        with stop_on_signals():
            _run_tests(test, prof, tgt, workload, engine, options, root, report)
    finally:
        engine.close()


def _run_tests(test, prof, tgt, workload, engine, options, root, report) -> None:
    from .progress import RichProgress, planned_seconds

    # Every plan of a sequence is built (and so checked) before the first one writes anything.
    plans = api.plans(test, prof, tgt, workload)
    planned = [planned_seconds(p) for p in plans]
    for i, plan in enumerate(plans):
        store = start(plan, tgt, engine, options, root)
        if workload is not None:
            from .suites.rwsw_common import copy_inputs

            copy_inputs(workload, store.dir)
        console.print(f"[bold]{esc(plan.title)}[/] on {esc(tgt.spec)} → {esc(str(store.dir))}")
        for overridden in store.manifest.safety_overrides:
            console.print(f"[bold yellow]safety check overridden: {esc(overridden)}[/]", soft_wrap=True)
        if not store.manifest.compliant:
            console.print(f"[yellow]non-compliant: {esc('; '.join(store.manifest.noncompliance))}[/]")
        try:
            sequence = (i + 1, len(plans), sum(planned[i + 1:])) if len(plans) > 1 else None
            with RichProgress(console, sequence) as progress:
                Runner(plan, tgt, engine, store, options, progress).run()
        except KeyboardInterrupt as e:
            by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted"
            err.print(f"[yellow]{by}: finished rounds are kept in {esc(str(store.dir))}; "
                      f"`iolab report {esc(str(store.dir))}` reports what was measured[/]")
            raise typer.Exit(128 + e.signum if isinstance(e, Interrupted) else 130)
        except IolabError as e:
            err.print(f"[red]{esc(str(e))}[/]\n(the run so far is kept in {esc(str(store.dir))})")
            if report and not isinstance(e, ResultsDiskFull):  # no room for a report either
                _write_report(store)
            raise typer.Exit(e.exit_code)
        api.show(store, console)
        if report:
            _write_report(store)
        console.print(f"run directory: {esc(str(store.dir))}")


def _write_report(store: RunStore) -> None:
    paths = api.write_report([store.dir], store.dir / "report")
    for p in paths:
        console.print(f"report: {esc(str(p))}", soft_wrap=True)


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
    report: bool = typer.Option(True, "--report/--no-report", help="Write the HTML/PDF report at the end."),
):
    """Continue an interrupted run from its last complete round (or say why it cannot, and what it does instead)."""
    from . import resume as resuming
    from .progress import RichProgress

    r, engine = resuming.prepare(run_ref, engine_for, allow_unsafe_target, allow_system_disk)
    console.print(f"[bold]resuming {esc(r.store.manifest.run_id)}[/] ({esc(r.plan.title)} on {esc(r.target.spec)})")
    for note in r.notes:
        console.print(f"  {esc(note)}", soft_wrap=True)
    try:
        with stop_on_signals(), RichProgress(console) as progress:
            resuming.run(r, engine, progress)
    except KeyboardInterrupt as e:
        by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted again"
        err.print(f"[yellow]{by}: finished rounds are kept; `iolab resume {esc(str(r.store.dir))}` "
                  "continues[/]")
        raise typer.Exit(128 + e.signum if isinstance(e, Interrupted) else 130)
    except IolabError as e:
        err.print(f"[red]{esc(str(e))}[/]\n(the run so far is kept in {esc(str(r.store.dir))})")
        raise typer.Exit(e.exit_code)
    finally:
        engine.close()
    api.show(r.store, console)
    if report:
        _write_report(r.store)
    console.print(f"run directory: {esc(str(r.store.dir))}")


@app.command()
def tests(test: Optional[str] = typer.Argument(None, help="A test or sequence: list its parameters (--set NAME=VALUE).")):
    """List the tests iolab can run (name, family, sequence, input, what it does), or one test's parameters."""
    from rich.table import Table

    if test is not None:
        for d in registry.sequence(test):
            console.print(f"[bold]{esc(d.name)}[/]: {esc(d.summary)}")
            if not d.params:
                console.print("  no parameters of its own (the profile options of `iolab run` apply)")
            for p in d.params:
                src = f"; {p.source}" if p.source else ""
                console.print(f"  --set {esc(p.name)}=…  {esc(p.help)} (default {esc(p.show(p.default))}{esc(src)})",
                              soft_wrap=True)
        return
    t = Table()
    for col in ("test", "family", "sequence", "input", "what it does"):
        t.add_column(col, no_wrap=col != "what it does")
    for d in registry.all():
        t.add_row(esc(d.name), esc(d.family), d.sequence or "—", "--workload" if d.needs_workload else "—",
                  esc(d.summary))
    console.print(t)


@app.command()
def runs(runs_dir: Optional[Path] = typer.Option(None, "--runs-dir")):
    """List stored runs."""
    from rich.table import Table

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


@app.command()
def show(run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or directory.")):
    """Print a run's results: tables (block size × mix, or one row per cell), steady-state table, completeness."""
    api.show(RunStore.open(run_ref), console)


@app.command()
def report(
    run_refs: list[str] = typer.Argument(..., metavar="RUN", help="Run ids or directories."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory for the HTML and PDF files (default: each run's report/ folder)."),
):
    """Write each run's report: one self-contained HTML file and a PDF of the same pages."""
    from .store import resolve_run

    for ref in run_refs:
        path = resolve_run(ref)
        for p in api.write_report([path], out or path / "report"):
            console.print(f"report: {esc(str(p))}", soft_wrap=True)


@app.command()
def compare(
    run_refs: list[str] = typer.Argument(..., metavar="RUN", help="Two or more runs of the same test (one per drive)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory for the comparison (default: compare/ under the runs directory)."),
    force: bool = typer.Option(False, "--force", help="Compare runs of different tests or parameters anyway; every page lists the differences."),
):
    """Compare drives: one report overlaying the runs, a summary table and the ordinal ranking per column."""
    for p in api.compare(run_refs, out or runs_root() / "compare", force=force):
        console.print(f"comparison: {esc(str(p))}", soft_wrap=True)


@app.command()
def export(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or directory."),
    fmt: str = typer.Option("csv", "--format", "-f", help="csv, json or parquet."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Directory for the files (default: the run's export/ folder)."),
):
    """Export every table behind the report (cells, window averages, steady state, series, histograms, manifest), one file per table."""
    from .export import export_run

    store = RunStore.open(run_ref)
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
    workload: Optional[Path] = WorkloadOpt,
    profile: str = ProfileOpt,
    spec: str = SpecOpt,
    quick: bool = QuickOpt,
    cell_time: Optional[str] = CellOpt,
    capacity_limit: Optional[str] = CapOpt,
    sets: Optional[list[str]] = SetOpt,
):
    """Print the exact fio job files a test runs (preconditioning and one round), to reproduce any cell by hand."""
    from .engines.fio import FioEngine
    from .runner import cell_tag

    prof = _profile(profile, spec, quick, cell_time, None, capacity_limit, None, False, None, None, sets=sets)
    tgt = targets.parse_target(target or SCRATCH_FILE)
    if tgt.kind == "sim":
        raise IolabError("fio-job needs a real target (block device, file: or nbd://); the simulated drive does not run fio.")
    engine = FioEngine()
    for plan in api.plans(test, prof, tgt, workload):
        for phase in plan.phases:
            for i, w in enumerate(phase.precondition):
                tag = cell_tag(phase.name, 0, i, w.label())
                print(f"# ---- {plan.title} / {phase.name} / preconditioning {i + 1}: {w.label()}")
                print(engine.job_text(tgt, w, tag))
            for i, cell in enumerate(phase.cells):
                tag = cell_tag(phase.name, 1, i, cell.key)
                print(f"# ---- {plan.title} / {phase.name} / cell {i + 1}/{len(phase.cells)}: {cell.key} (every round)")
                print(engine.job_text(tgt, cell.workload, tag))


# -- traces: capture, import, stream analysis (SNIA RWSW) ------------------------------------


@app.command("capture")
@trace_app.command("capture")
def capture(
    device: str = typer.Argument(..., help="Block device to trace, e.g. /dev/nvme0n1 (read-only: nothing is written to it)."),
    duration: str = typer.Option(..., "--duration", "-d", help="How long to capture (e.g. 60s, 5m, 24h); Ctrl-C ends it early."),
    out: Path = typer.Option(..., "--out", "-o", help="The IO table to write (.parquet); the raw trace (the kernel's buffer pages, or blktrace's files) is kept beside it."),
    process: Optional[str] = typer.Option(None, "--process", help="Only IOs issued by this process name (as the kernel shows it; * as a wildcard)."),
    source: str = typer.Option("auto", "--source", help="tracefs (block tracepoints), blktrace (the blktrace tool's binary output) or auto: blktrace when it works on this machine, else tracefs."),
    buffer: str = typer.Option("16MiB", "--buffer", help="tracefs trace buffer per CPU (kernel memory while capturing); raise it if the capture reports dropped events."),
):
    """Capture block IO on a device (tracefs block tracepoints) into an IO table for `iolab trace analyze`."""
    from .traces import capture as trace_capture

    seconds = parse_duration(duration, "--duration")
    buffer_kb = parse_size(buffer, "--buffer") // 1024
    if buffer_kb < 4:
        raise IolabError(f"--buffer {buffer}: give at least 4KiB per CPU (e.g. 16MiB).")
    with console.status(f"capturing {esc(device)} for {seconds:g} s (Ctrl-C ends early)") as status:
        def tick(t) -> None:
            status.update(f"capturing {esc(device)}: {t.elapsed_s:,.0f} of {seconds:g} s, {t.iops:,.0f} IOPS, {t.ios:,} IOs")

        result = trace_capture(device, seconds, out, process=process, on_tick=tick, source=source, buffer_kb=buffer_kb)
    console.print(esc(result.table.summary()), soft_wrap=True)
    console.print(f"raw trace: {esc(str(result.raw_path))}" + (" (ended early)" if result.interrupted else ""), soft_wrap=True)
    if result.lost_events:
        err.print(f"[bold red]WARNING: the kernel dropped {result.lost_events:,} trace events during this capture: the trace "
                  f"is INCOMPLETE (the IOs they described are missing from {esc(str(out))}). Capture again with a "
                  "larger --buffer, or only the process that matters (--process).[/]", soft_wrap=True)


@trace_app.command("import")
def trace_import(
    paths: list[Path] = typer.Argument(..., metavar="FILE", help="Trace file(s) of one trace (e.g. the per-CPU blktrace files)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="Trace format: msr, spc, alibaba, tencent, fiu, systor, blkparse, blktrace, fio, tracefs, disksim, biosnoop, cloudphysics, vscsi (default: detected from the file when unambiguous)."),
    out: Path = typer.Option(..., "--out", "-o", help="The IO table to write (.parquet)."),
    skip_bad_lines: bool = typer.Option(False, "--skip-bad-lines", help="Drop lines that do not parse (counted and reported) instead of stopping at the first."),
    time_unit: Optional[str] = typer.Option(None, "--time-unit", help="Unit of the time field: ns, us, ms or s, for formats whose unit varies (disksim/MQSim, cloudphysics, vscsi; default: guessed from the times, and the guess is printed)."),
):
    """Import a public trace format into the normalised IO table."""
    from .traces import detect_format, import_trace

    if fmt is None:
        fmt = detect_format(paths[0])
        console.print(f"format: {fmt} (detected; pass --format to override)")
    table = import_trace(paths, fmt, out, skip_bad_lines=skip_bad_lines, time_unit=time_unit)
    console.print(esc(table.summary()), soft_wrap=True)


@trace_app.command("export")
def trace_export(
    trace: Path = typer.Argument(..., metavar="TRACE", help="IO table (.parquet) from `iolab trace capture` or `iolab trace import`."),
    fmt: str = typer.Option(..., "--format", "-f", help="msr, spc, alibaba, tencent, fiu, systor, blkparse, blktrace, fio2, fio3, tracefs."),
    out: Path = typer.Option(..., "--out", "-o", help="The file to write."),
):
    """Write an IO table back out in a public trace format (reads and writes)."""
    from .traces.writers import export_trace

    console.print(f"wrote {esc(str(export_trace(trace, fmt, out)))}", soft_wrap=True)


def _fraction(text: str, what: str) -> float:
    """'3%' or '3' -> 0.03; '0.03' -> 0.03 (bare numbers below 1 are fractions)."""
    t = text.strip()
    try:
        v = float(t.rstrip("%").strip())
    except ValueError:
        raise IolabError(f"{what}: cannot read {text!r}; give a percentage such as 3% (or a fraction such as 0.03).") from None
    return v / 100 if t.endswith("%") or v >= 1 else v


@trace_app.command("analyze")
def analyze(
    trace: Path = typer.Argument(..., metavar="TRACE", help="IO table (.parquet) from `iolab trace capture` or `iolab trace import`."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for analysis.json, composite.toml, replay.toml and plots/."),
    step: str = typer.Option("5m", "--step", help="Capture step length (SNIA RWSW: 5 minutes)."),
    threshold: str = typer.Option("3%", "--threshold", help="Dominant streams: at least this share of all IOs."),
    process: Optional[str] = typer.Option(None, "--process", help="Only IOs of this process."),
    device: Optional[list[str]] = typer.Option(None, "--device", help="Only IOs of this device (repeat for several)."),
    qd: Optional[int] = typer.Option(None, "--qd", help="Queue depth of the workloads (default: the capture's average outstanding IO; needed when the trace has no response times)."),
    threads: int = typer.Option(1, "--threads", help="Threads of the workloads (outstanding IO = threads × QD)."),
    compress: float = typer.Option(1.0, "--compress", help="Replay time compression: 60 turns a 5-minute step into 5 s."),
    replay_streams: str = typer.Option("dominant", "--replay-streams", help="Replay the dominant streams only, or all."),
):
    """Stream analysis of an IO table (SNIA RWSW): streams, dominant streams, per-step metrics;
    writes the composite and replay workloads for `iolab run multi-wsat|streams-wsat|replay|dirth-rwsw`."""
    from rich.table import Table

    from .analysis import composite, replay, save_composite
    from .analysis.plots import plot_all
    from .analysis.streams import analyse as run_analysis
    from .suites.rwsw_common import ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE

    with console.status(f"analysing {esc(str(trace))}"):
        a = run_analysis(trace, step_s=parse_duration(step, "--step"), threshold=_fraction(threshold, "--threshold"),
                         devices=tuple(device or ()), process=process)
    console.print(esc(a.summary()), soft_wrap=True)
    t = Table(title="per step (the Self-Test figures)", title_justify="left")
    for col in ("step", "start s", "IOPS", "MB/s", "read %", "OIO avg / max", "RT avg / max µs"):
        t.add_column(col, justify="right")

    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    shown = a.steps if len(a.steps) <= 30 else a.steps[:10] + a.steps[-10:]
    for s in shown:
        if len(a.steps) > 30 and s is a.steps[-10]:
            t.add_row("…", *[""] * 6)
        t.add_row(str(s.index), f"{s.start_s:,.0f}", f(s.iops, ",.0f"), f(s.mbps, ",.1f"),
                  f(s.read_pct, ".1f"), f"{f(s.oio_avg, ',.2f')} / {f(s.oio_max, ',')}",
                  f"{f(s.rt_avg_us, ',.0f')} / {f(s.rt_max_us, ',.0f')}")
    console.print(t)
    out.mkdir(parents=True, exist_ok=True)
    written = [a.save(out / ANALYSIS_FILE)]
    w = composite(a, queue_depth=qd, threads=threads)
    written.append(save_composite(w, out / COMPOSITE_FILE, a))
    plan = replay(a, compress=compress, queue_depth=qd, threads=threads, streams=replay_streams)
    written.append(plan.save(out / REPLAY_FILE))
    written += list(plot_all(a, out / "plots").values())
    console.print(esc(f"composite: {', '.join(f'{s.label()} {s.share * 100:.1f} %' for s in w.streams)}; "
                      f"TC {w.threads} × QD {w.queue_depth}"), soft_wrap=True)
    console.print(f"replay: {len(plan.steps)} steps, {plan.duration_s:,.1f} s"
                  + (f" ({len(plan.skipped)} steps without IOs of the replayed streams left out)" if plan.skipped else ""))
    for p in written:
        console.print(f"wrote {esc(str(p))}", soft_wrap=True)
    console.print(f"next: iolab run rwsw --workload {esc(str(out))} --target …", soft_wrap=True)


@sim_app.command("presets")
def sim_presets():
    """List the simulated drive presets and their parameters."""
    from rich.table import Table

    from .engines.sim import list_presets

    for p in list_presets():
        t = Table(title=esc(f"{p.name} — {p.description}"), title_justify="left")
        t.add_column("parameter")
        t.add_column("value")
        for k, v in p.parameters:
            t.add_row(esc(k), esc(str(v)))
        console.print(t)


def main() -> None:
    try:
        app()
    except IolabError as e:
        err.print(f"[red]iolab: {esc(str(e))}[/]")
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
