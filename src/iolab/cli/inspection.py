"""The commands that look without running: what a target reports about itself (`iolab info`),
the fio job files a test would run (`iolab fio-job`) and a stored run's self-audit (`iolab audit`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape as esc

from iolab.cli.console import Console
from iolab.cli.options import TEST_HELP, RunArgs, with_run_args
from iolab.core.errors import Exit, IolabError
from iolab.core.units import as_given
from iolab.core.usertext import RUN_REF

SCRATCH_FILE = "file:/var/tmp/iolab-scratch.img?size=1GiB"
console = Console()


def info(
    specs: list[str] = typer.Argument(
        ..., metavar="TARGET", help="Target specs (read-only inspection; never writes): each is shown in turn."
    ),
):
    """Show what each target reports about itself (model, serial, firmware, capacity, sectors, interface);
    of a file, what a run does with it (creates it, grows it to size=) or why a run refuses it. A target
    that cannot be read, or that a run refuses, is named with the reason, the others are still shown,
    and the command exits with the first failure's status."""
    from iolab import targets

    first: IolabError | None = None
    for spec in specs:
        try:
            tgt = targets.parse_target(spec)
        except IolabError as e:
            if len(specs) == 1:
                raise
            Console(stderr=True).print(f"[red]iolab: {esc(str(e))}[/]")
            first = first or e
            continue
        refused = _show_target(tgt)
        first = first or refused
    if first is not None:
        raise typer.Exit(first.exit_code)


def _show_target(tgt) -> IolabError | None:
    """One target's lines, with the refusal a run would meet, from the same check
    (targets.check_safe_to_write), for every kind: a file on /proc passed `info` with a capacity
    while `run` refused it, and so did a mounted loop device. Of a local file, the capacity a run
    would test and what it does to the file first; the file's own size is not that capacity, so
    it is said only beside it. The refusal is returned."""
    from dataclasses import asdict

    from iolab.targets.files import held, sizing
    from iolab.targets.safety import check_safe_to_write

    facts = asdict(tgt.facts)
    refusal = None
    try:
        check_safe_to_write(tgt)
    except IolabError as e:
        refusal = e
    is_file = tgt.kind == "file"
    if is_file:
        facts.pop("capacity_bytes")  # the file's own size, which `file` says beside what a run makes of it
    head = f"[bold]{esc(tgt.spec)}[/] ({tgt.kind})"
    if refusal is None:
        console.print(f"{head}  capacity {tgt.capacity:,} B = {tgt.capacity / 1e9:.3f} GB")
        if is_file:
            console.print(f"  {'file':16} {esc(sizing(tgt))}")
    else:
        console.print(f"{head}  [red]a run refuses it[/]")
        console.print(f"  {'refused':16} [red]{esc(str(refusal))}[/]")
        if is_file:
            console.print(f"  {'file':16} {esc(held(tgt))}")
    for k, v in facts.items():
        if v not in (None, (), ""):
            console.print(f"  {k:16} {esc(', '.join(map(str, v)) if isinstance(v, (list, tuple)) else str(v))}")
    return refusal


@with_run_args(
    "target",
    "paths",
    "hosts",
    "hosts_file",
    "workload",
    "profile",
    "write_cache",
    "active_range",
    "spec",
    "quick",
    "cell_seconds",
    "capacity_limit",
    "sets",
    "ioengine",
)
def fio_job(test: str = typer.Argument(..., metavar="TEST", help=TEST_HELP), *, args: RunArgs):
    """Print the exact fio job files a test runs (preconditioning and one round), to reproduce any cell by
    hand; with --paths/--hosts, each path's or host's own job file (nothing is connected or checked). `iolab plan`
    gives the overview of the same plans (phases, budgets, steady-state rule, compliance, ETA)."""
    from iolab.api import runs as api
    from iolab.api import scaleout
    from iolab.core.plan import Deferred
    from iolab.engines.fio import FioEngine
    from iolab.engines.fio_hosts import legs_job_text
    from iolab.engines.fio_job import WARMUP_SUFFIX, separate_warmup
    from iolab.run.runner import cell_tag

    if args.target and len(args.target) > 1:
        raise IolabError("fio-job prints the job files of one target: give one --target.")
    prof = args.make_profile()
    tgt = scaleout.run_target(args.target[0] if args.target else SCRATCH_FILE, args.hosts, args.hosts_file)
    if tgt.kind == "sim":
        raise IolabError(
            "fio-job needs a real target (block device, file: or nbd://); the simulated drive does not run fio."
        )
    engine = FioEngine(ioengine=args.ioengine or "auto")
    split = scaleout.legs_for_run(tgt, args.paths, args.hosts, args.hosts_file)

    def one(w, tag: str) -> str:
        return legs_job_text(split[0], engine, w, tag) if split else engine.job_text(tgt, w, tag)

    def job(w, tag: str) -> str:
        warmup, measured = separate_warmup(w)  # as the engines run it: a job of its own first
        if warmup is None:
            return one(w, tag)
        first = f"# warm-up, run first as a job of its own (fio's ramp_time cannot carry it)\n{one(warmup, tag + WARMUP_SUFFIX)}"
        return f"{first}\n# the measured job\n{one(measured, tag)}"

    for plan in api.plans(test, prof, tgt, args.workload):
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


def audit(
    run_refs: list[str] = typer.Argument(..., metavar="RUN", help=f"The runs, each by {RUN_REF}."),
    json_out: bool = typer.Option(
        False, "--json", help="Print one JSON document on standard output (docs/automation.md)."
    ),
    store: bool = typer.Option(
        False,
        "--store",
        help="Also keep this audit in the run's manifest.json, replacing the one stored when the run ended "
        "(without it nothing in the run is written).",
    ),
):
    """Check a stored run's figures against physical invariants (steady state on evidence, WAF, totals,
    latencies, percentiles, rates, shares); exit 8 when one fails (docs/automation.md)."""
    from contextlib import nullcontext

    from iolab.cli.auto import emit, want_json
    from iolab.cli.fleet import refuse_fleets
    from iolab.figures.audit import audit as audit_run
    from iolab.figures.audit import stored_audit
    from iolab.pages.textreport import render_audit
    from iolab.store.durable import room_for
    from iolab.store.manifest import manifest_of, resolve_run
    from iolab.store.runstore import RunStore
    from iolab.store.writer import claim_run

    want_json("audit", console, json_out)
    refuse_fleets(run_refs)  # a fleet by its name, as by its path (resolve_run)
    docs, failed, audited = [], False, []
    for ref in run_refs:
        # --store writes the manifest: claimed first, so no resume or run writes it meanwhile (writer.py)
        run_dir = resolve_run(ref)
        again = f"iolab audit {run_dir} --store"
        with (
            room_for("its audit", run_dir, f"`{again}`", run_dir) if store else nullcontext(),
            claim_run(run_dir, f"`iolab audit {run_dir}` without --store prints the audit.")
            if store
            else nullcontext(),
        ):
            st = RunStore.open(ref)
            try:
                m = manifest_of(st)
                before = stored_audit(st) if m.audit.get("invariants") else None
                a = audit_run(st)
                if store:
                    if st.writer_alive():  # an iolab from before the claims
                        raise IolabError(f"run {m.run_id} is still being written; store its audit once it has ended.")
                    m.audit = a.to_dict()
                    st.write_manifest()
            finally:
                st.close()
        failed = failed or not a.passed
        audited.append((m, a, before))
        docs.append(
            {
                "run_id": m.run_id,
                "path": str(st.dir),
                "audit": a.to_dict(),
                "stored": before.to_dict() if before is not None else None,
            }
        )
    # printed once every run is audited: a run that cannot be read ends the command with its
    # error alone, not after the audits of the runs before it
    for m, a, before in audited:
        console.print(f"[bold]{esc(m.run_id)}[/] ({esc(m.test)}, {esc(str(m.target.get('spec')))})")
        render_audit(a, console, detail=True)
        if before is not None and [r.status for r in before.results] != [r.status for r in a.results]:
            console.print(f"[yellow]the audit stored when the run ended differs: {esc(before.summary())}[/]")
    code = Exit.AUDIT_FAILED if failed else Exit.OK
    for d in docs if store else ():
        # the report's banner says the stored audit: a written report must not keep the old one
        code = refresh_report(str(d["run_id"]), Path(str(d["path"])), "its audit is stored", "the audit banner") or code
    if json_out:
        emit("audit", code, audits=docs)
    if code:
        raise typer.Exit(code)


def power(
    run_ref: str = typer.Argument(..., metavar="RUN", help=f"The run, on a real drive and ended: {RUN_REF}."),
    log: Path = typer.Argument(
        ...,
        metavar="LOG",
        help="The power meter's CSV: time (Unix seconds or ISO 8601 with an offset) and watts (or mW).",
    ),
    offset: float = typer.Option(
        0.0, "--offset", metavar="SECONDS", help="Added to every meter time: this machine's clock minus the meter's."
    ),
    min_coverage: float = typer.Option(
        90.0, "--min-coverage", metavar="PCT", help="A cell the log covers less of gets no figure ('not measured')."
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Print one JSON document on standard output (docs/automation.md)."
    ),
):
    """Keep a power meter's log with a run: average and maximum mW per cell, phase and run, in the run's
    power.json (the report's Power Consumption pages read it) and the log itself beside it."""
    from iolab.api.power import attach, coverage_refused
    from iolab.cli.auto import emit, want_json
    from iolab.figures.power import timing_text
    from iolab.store.manifest import resolve_run

    want_json("power", console, json_out)
    if not 0 < min_coverage <= 100:  # as written: its fraction of 1e999 % is inf
        raise coverage_refused(as_given(min_coverage))
    doc = attach(run_ref, log, offset, min_coverage / 100.0)
    console.print(f"[bold]{esc(doc['run_id'])}[/]: power meter log {esc(str(log))}, {doc['readings']:,} readings")
    # the gap rule said aloud: a reading holds until the next one unless the silence is longer than this
    console.print(f"  {esc(timing_text(doc['interval_s'], doc['gap_s']))}", soft_wrap=True)
    for s in [doc["run"], *doc["phases"]]:
        avg = "not measured" if s["avg_mw"] is None else f"{s['avg_mw']:,.0f} mW average, {s['max_mw']:,.0f} mW maximum"
        console.print(f"  {esc(s['name'])}: {avg} ({s['measured']} of {s['cells']} cells measured)")
    code = refresh_report(
        doc["run_id"], resolve_run(run_ref), "its power figures are stored", "the Power Consumption pages"
    )
    if json_out:
        emit("power", code, power=doc)
    if code:
        raise typer.Exit(code)


def refresh_report(run_id: str, run_dir: Path, kept: str, pages: str) -> int:
    """After a command stored something in a run (`kept` says what), which changes what
    its report shows (`pages`), rewrite the report in the run's own report/ (the files `iolab run`
    printed and `iolab watch` links), as `iolab report RUN` does: else it goes on saying what is
    no longer true of the run. A run with no report there is told how to write one. The exit
    status: 0, or a report that could not be written's (what was stored stays stored)."""
    from iolab.api.reports import write_report
    from iolab.run.stopsignals import Interrupted, exit_code, stop_on_signals

    report, again = run_dir / "report", f"`iolab report {run_dir}`"
    if not any((report / f"{run_id}{ext}").is_file() for ext in (".html", ".pdf")):
        console.print(f"report: none in {esc(str(report))}; {esc(again)} writes one with {pages}", soft_wrap=True)
        return Exit.OK
    try:
        with stop_on_signals():  # a stop keeps the report as it was (write_document puts each file whole)
            written = write_report([run_dir], None)
    except KeyboardInterrupt as e:
        why = f"{f'stopped by {e.signal_name}' if isinstance(e, Interrupted) else 'interrupted'}; {again} writes it"
        code = exit_code(e)
    except IolabError as e:
        why, code = str(e), e.exit_code
    except OSError as e:  # a report/ the system refuses (not full: room_for says that)
        why, code = f"{e.strerror or e}{f': {e.filename}' if e.filename else ''}; {again} writes it", Exit.BAD_INPUT
    else:
        code = Exit.OK
    if code:
        Console(stderr=True).print(
            f"[red]iolab: run {esc(run_id)}: {kept}, but its report in {esc(str(report))} was not rewritten "
            f"and shows the run as it was before: {esc(why)}[/]",
            soft_wrap=True,
        )
        return code
    for p in written:
        console.print(f"report: {esc(str(p))}", soft_wrap=True)
    return Exit.OK
