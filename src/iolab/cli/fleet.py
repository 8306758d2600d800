"""`iolab run TEST --fleet FILE` and `iolab fleet [FLEET]`: a fleet of drives tested at once and
its report (api/fleet.py runs it, api/fleetreport.py reads its report; pages/fleet.py builds the
report, fleet_terminal.py prints it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from iolab.cli.auto import emit, want_json
from iolab.cli.console import Console, write_out
from iolab.core.errors import IolabError
from iolab.core.units import as_given, counted
from iolab.run.stopsignals import stop_on_signals

# Options the coordinator takes for itself (with their value, when they take one); the rest of
# `iolab run`'s command line goes to every drive's run as given. --spec-sheet is the fleet's sheet,
# which each drive's run takes from the fleet as the fleet file's (api/fleet._command)
_OWN_VALUED = ("--fleet", "--runs-dir", "--target", "-t", "--spec-sheet")
_OWN_FLAGS = ("--json", "--quiet", "-q")
_NOT_WITH_FLEET = ("--target", "-t", "--paths", "--hosts", "--hosts-file", "--repeat")


def child_args(argv: list[str]) -> list[str]:
    """`iolab run`'s arguments less the coordinator's own (`--fleet F`, `--json`, ...)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if a in _OWN_VALUED:
            skip = True
        elif (name in _OWN_VALUED and "=" in a) or a in _OWN_FLAGS:
            continue
        else:
            out.append(a)
    return out


def _refuse_mixed(argv: list[str]) -> None:
    given = sorted({a.split("=", 1)[0] for a in argv if a.split("=", 1)[0] in _NOT_WITH_FLEET})
    if given:
        where = {
            "--target": "each drive is a [[drive]] table of the fleet file",
            "-t": "each drive is a [[drive]] table of the fleet file",
            "--paths": "each path is a drive of its own, a [[drive]] table",
            "--hosts": "a host's drives go in the fleet file's [[host]] tables",
            "--hosts-file": "a host's drives go in the fleet file's [[host]] tables",
            "--repeat": "a fleet runs each drive once; repeat the fleet for repeats",
        }
        said = "; ".join(dict.fromkeys(where[g] for g in given))
        raise IolabError(
            f"--fleet names every drive and host itself; leave out {', '.join(given)} ({said}). Nothing was run."
        )


def run_fleet(test: str, fleet_file: Path, argv: list[str], root: Path, console: Console, args) -> int:
    """Run `test` on every drive of the fleet file; print each drive as it ends, then the report.
    `args` (cli/options.RunArgs): --json, and --spec-sheet, the fleet's spec sheet in place of
    the fleet file's (each drive's run still takes it for its own report's front page)."""
    from iolab.api import fleet as api
    from iolab.api.runs import check_settings

    _refuse_mixed(argv)
    check_settings(test, args.make_profile(), args.everything)  # once, not by every drive's run
    fleet, state, unread = api.start(fleet_file, test, child_args(argv), root, args.spec_sheet)
    console.print(
        f"fleet {fleet.name}: {test} on {counted(len(fleet.drives), 'drive')} "
        f"({fleet.parallel or len(fleet.drives)} at once) → {state.dir}",
        markup=False,
        soft_wrap=True,
    )

    if unread:
        console.print(
            f"identity not read (a host reached through fio only, or not readable from here), so not checked for "
            f"duplicates: {', '.join(unread) if len(unread) <= 8 else f'{len(unread)} drives'}",
            markup=False,
            soft_wrap=True,
        )
    with stop_on_signals():  # SIGTERM and SIGHUP stop the fleet as Ctrl-C does (api.run_fleet)
        api.run_fleet(fleet, state, root, _event(console))
    try:
        return _report(state, None, (None, None), console, args.json_out, envelope="run")
    except IolabError as e:  # e.g. a spec sheet's unit that the measured figure has not: said only now
        raise IolabError(
            f"{e} The fleet ran: its drives' runs are kept ({state.dir}); `iolab fleet {state.dir}` reports "
            "them again (with --spec-sheet FILE: against a corrected sheet)."
        ) from None


def _event(console: Console):
    def event(m, what: str) -> None:
        if what == "wait":
            console.print(f"[{m.name}] still running (pid {m.pid}): waiting for it", markup=False, soft_wrap=True)
        if what == "end":
            tail = f"run directory: {m.run_dir}" if m.state == "complete" else (m.error or "")
            console.print(f"[{m.name}] {m.state} in {m.seconds:.1f} s: {tail}", markup=False, soft_wrap=True)

    return event


def drive_options(args) -> list[str]:
    """The options of `iolab resume FLEET` (cli/options.RunArgs) that each drive's run takes, those
    given only: one left at its default is the fleet's own arguments' to decide."""
    flags = {
        "--allow-unsafe-target": args.allow_unsafe_target,
        "--allow-system-disk": args.allow_system_disk,
        "--listen-any": args.listen_any,
        "--require-steady": args.require_steady,
        "--no-report": not args.report,
    }
    return [f for f, on in flags.items() if on] + (["--ioengine", args.ioengine] if args.ioengine else [])


AGAIN = typer.Option(
    None,
    "--again",
    metavar="DRIVE",
    help="A fleet's drive to measure again with a new run, even one that completed (an outlier or a spec "
    "failure whose cause was fixed); repeat for several.",
)


def resume_fleet(run_ref: str, args, console: Console, again: list[str] | None) -> int | None:
    """`iolab resume` of a fleet, its exit status; None: `run_ref` is a run (--again, which names a
    fleet's drives, is refused with one)."""
    fleet_dir = fleet_path(run_ref, args.runs_dir)
    if fleet_dir is not None and args.spec_sheet is not None:
        raise IolabError(
            f"--spec-sheet: fleet {fleet_dir.name} keeps the spec sheet it ran with, and its drives' reports open "
            f"with that one; `iolab fleet {fleet_dir.name} --spec-sheet FILE` judges the fleet against another. "
            "Nothing was run."
        )
    if fleet_dir is not None:
        return resume(fleet_dir, args.runs_dir, console, args.json_out, drive_options(args), again)
    if again:
        raise IolabError(
            f"--again {again[0]}: names a drive of a fleet to measure again, and {run_ref} is a run, not a fleet "
            "(give the fleet's directory or name). Nothing was run."
        )
    return None


def resume(
    fleet_dir: Path,
    runs_dir: Optional[Path],
    console: Console,
    json_out: bool,
    extra: list[str] | None = None,
    again: list[str] | None = None,
) -> int:
    """`iolab resume FLEET_DIR`: the drives that did not end go on (and those named by `again` run
    anew), then the fleet report; `extra`: resume's options as given (`--allow-unsafe-target`,
    ...), for every drive it runs again."""
    from iolab.api.fleetresume import resume as go_on
    from iolab.store.manifest import runs_root

    if json_out:
        console = Console(stderr=True)
    with stop_on_signals():
        # absolute, as `run --fleet` makes it: a drive started again named its run by the relative
        # path it printed, which `iolab fleet` from another directory called unreadable
        state = go_on(fleet_dir, (runs_dir or runs_root()).resolve(), _event(console), extra, again)
    return _report(state, None, (None, None), console, json_out, envelope="resume")


def fleet_document(
    state, sheet: Optional[Path] = None, rule: tuple = (None, None), groups: tuple = (None, None)
) -> tuple[dict, dict]:
    """The fleet report document (with its groups compared, automation/fleetgroups) and the drives'
    run records it was read from: the terminal's, report.json's and the pages' (`iolab report
    FLEET`, whose pages left out the groups and their regressions)."""
    from iolab.api import fleetreport as api
    from iolab.automation.fleetgroups import compare_groups, mixed_warnings
    from iolab.pages.fleet import regressed_groups
    from iolab.pages.fleet_junit import exit_code

    recs = api.records(state)
    doc = api.report(state, sheet, rule[0], rule[1], recs=recs)
    labels = {m.name: m.labels for m in state.members}
    key = groups[0] or state.group_by
    doc["warnings"] = mixed_warnings(recs, labels, key)
    if key:
        doc["groups"] = compare_groups(recs, labels, key, groups[1] or (state.baseline if not groups[0] else None))
        doc["summary"]["regressed_groups"] = regressed_groups(doc)  # beside failed_criteria: what exit 7 is for
    doc["exit_code"] = exit_code(doc)
    return doc, recs


def _report(
    state,
    sheet: Optional[Path],
    rule: tuple,
    console: Console,
    json_out: bool,
    groups: tuple = (None, None),
    store: bool = True,
    envelope: str | None = None,
) -> int:
    """The fleet report printed; `store`: kept as the fleet's report.json and junit.xml (the fleet's
    own report: not `show`, which only reads, nor a report under another spec sheet, rule or
    grouping, which would replace the fleet's verdicts with a what-if). `envelope`: the command
    (run, resume, show) whose --json prints the iolab-outcome document every run, resume and show
    prints (docs/automation.md), the complete drives' run records as its `runs` and the report as
    its `fleet_report`; None (`iolab fleet --json`): the report alone, as report.json holds it."""
    from iolab.api import fleetreport as api
    from iolab.pages.fleet_junit import stop_code
    from iolab.pages.fleet_terminal import render

    doc, recs = fleet_document(state, sheet, rule, groups)
    written = api.write_report_files(state, doc) if store else []
    code = int(doc["exit_code"])
    if state.state == "interrupted":  # the shell's code for the signal that stopped it: 130 for Ctrl-C
        code = stop_code(state.stopped_by)
    if json_out and envelope:
        emit(envelope, code, runs=[r for r in recs.values() if r is not None], fleet_report=doc)
    elif json_out:
        write_out(json.dumps(doc, indent=2) + "\n")
    else:
        render(doc, console)
    for p in written:
        console.print(f"fleet {p.stem}: {p}", markup=False, soft_wrap=True)
    console.print(f"fleet directory: {state.dir}", markup=False, soft_wrap=True)
    return code


def _option(name: str, metavar: str, text: str):
    return typer.Option(None, name, metavar=metavar, help=text)


def fleet(
    fleet_ref: Optional[str] = typer.Argument(
        None, metavar="FLEET", help="A fleet directory or its name under RUNS/fleets (none: list the fleets)."
    ),
    spec_sheet: Optional[Path] = _option(
        "--spec-sheet", "FILE", "Judge the drives against this spec sheet (TOML or CSV) instead of the fleet file's."
    ),
    outlier_k: Optional[float] = _option(
        "--outlier-k",
        "K",
        "The outlier rule's k: |x - median| > K × 1.4826 × MAD (default: the fleet file's outlier_k, else 3.5).",
    ),
    outlier_min_pct: Optional[float] = _option(
        "--outlier-min-pct",
        "PCT",
        "... and only beyond PCT % of the median (default: the fleet file's outlier_min_pct, else 5, as check's "
        "default tolerance).",
    ),
    group_by: Optional[str] = _option(
        "--group-by",
        "LABEL",
        "Compare the groups of this label (e.g. firmware), as `iolab check` does (default: the fleet file's group_by).",
    ),
    baseline: Optional[str] = _option(
        "--baseline",
        "VALUE",
        "The group the others are compared with (default: the fleet file's baseline, unless --group-by is given; "
        "else the first group).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the fleet report as JSON on standard output."),
):
    """A fleet's report: each key figure over the drives, the outliers, spec-sheet verdicts (also written as report.json and junit.xml)."""
    from iolab.api import fleet as api
    from iolab.api.fleetname import find_fleet
    from iolab.store.manifest import runs_root

    console = Console(stderr=json_out)
    # --json: an error ends with its document on stdout (cli/auto.emit_error), as every --json command's does
    want_json("fleet", console, json_out)
    root = runs_root()
    if outlier_k is not None and not 0 < outlier_k <= 100:
        raise IolabError(f"--outlier-k {as_given(outlier_k)}: give a number above 0 and at most 100 (e.g. 3.5).")
    if outlier_min_pct is not None and not 0 <= outlier_min_pct < 100:
        raise IolabError(f"--outlier-min-pct {as_given(outlier_min_pct)}: give a percentage from 0 to below 100.")
    if fleet_ref is None:
        broken: list[str] = []
        found = api.list_fleets(root, broken)
        for why in broken:  # on stderr: --json's stdout is the list alone
            Console(stderr=True).print(f"not listed: {why}", markup=False, soft_wrap=True)
        if json_out:
            write_out(json.dumps([_listed(s) for s in found], indent=2) + "\n")
        for s in found:
            done = sum(m.state == "complete" for m in s.members)
            console.print(
                f"{s.dir.name}  {s.test}  {done}/{len(s.members)} drives complete  {s.state}",
                markup=False,
                soft_wrap=True,
            )
        if not found:
            console.print(f"no fleets under {root / 'fleets'}", markup=False, soft_wrap=True)
        return
    state = api.load_state(find_fleet(fleet_ref, root))
    if baseline is not None and group_by is None and state.group_by is None:
        raise IolabError("--baseline names a group: give --group-by LABEL too (or group_by in the fleet file).")
    what_if = any(v is not None for v in (spec_sheet, outlier_k, outlier_min_pct, group_by, baseline))
    raise typer.Exit(
        _report(
            state, spec_sheet, (outlier_k, outlier_min_pct), console, json_out, (group_by, baseline), store=not what_if
        )
    )


def has_fleets(root: Path) -> bool:
    """Whether RUNS/fleets (api.fleet.list_fleets) is there: without it `iolab runs` lists no
    fleet and does not import the fleet library (its threads, fleet files and fio hosts)."""
    return (root / "fleets").is_dir()


def listed(root: Path) -> list[dict]:
    """`iolab runs --json`: the fleets the runs directory holds, as `iolab fleet --json` lists them."""
    if not has_fleets(root):
        return []
    from iolab.api import fleet as api

    return [_listed(s) for s in api.list_fleets(root)]


def _listed(s) -> dict:
    return {
        "name": s.dir.name,
        "path": str(s.dir),
        "test": s.test,
        "state": s.state,
        "drives": len(s.members),
        "complete": sum(m.state == "complete" for m in s.members),
    }


def fleet_path(ref: str, runs_dir: Optional[Path] = None) -> Optional[Path]:
    """`iolab show`, `report`, `resume`: the fleet `ref` names (None: a run, or nothing), by its
    path, its directory's name, its name or a part of one, as `iolab fleet NAME` finds a fleet
    and these commands a run (api/fleetname.fleet_or_run)."""
    from iolab.api.fleetname import fleet_or_run
    from iolab.store.manifest import runs_root

    return fleet_or_run(ref, runs_dir or runs_root())


def refuse_fleets(refs: list[str], runs_dir: Optional[Path] = None) -> None:
    """`iolab compare`, `export`, `audit`, which take runs: a fleet named by its name (or a part of
    it) is refused as one named by its path is (store/manifest.resolve_run), not taken for a run
    that is not there."""
    from iolab.store.manifest import not_a_run

    for ref in refs:
        if (fleet := fleet_path(ref, runs_dir)) is not None:
            raise not_a_run(ref, fleet)


def show(ref: str, json_out: bool, console: Console) -> int:
    """`iolab show FLEET_DIR`: the fleet's report, as `iolab fleet` prints it."""
    from iolab.api import fleet as api

    if json_out:
        console = Console(stderr=True)
    return _report(api.load_state(Path(ref)), None, (None, None), console, json_out, store=False, envelope="show")


def listed_note(root: Path, console: Console) -> None:
    """`iolab runs`: the fleets the runs directory holds (their drives' runs are in the list above)."""
    if not has_fleets(root):
        return
    from iolab.api import fleet as api

    broken: list[str] = []
    found = api.list_fleets(root, broken)
    if found:
        console.print(
            f"{len(found)} fleet{'s' if len(found) > 1 else ''} in {root / 'fleets'}: "
            + ", ".join(s.dir.name for s in found)
            + " (`iolab fleet FLEET` reports one)",
            markup=False,
            soft_wrap=True,
        )
    for why in broken:  # as `iolab fleet` says it, and as a broken run is listed with its reason
        console.print(f"fleet not listed: {why}", markup=False, soft_wrap=True)
