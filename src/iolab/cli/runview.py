"""What `iolab run` shows of a run as it goes: it iterates api.runs.run_steps and prints each
step (the sequence's next test, the run's header, its results and report paths) between them,
so the run itself goes straight down (api → run → engines → store) and never calls back up
into the command. Then what an interruption or a failed run leaves: a message and the exit code.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape as esc

from iolab.api.scaleout import run_dirs_file, tell_run_dir
from iolab.cli.console import Console
from iolab.cli.options import RunArgs, ended_early
from iolab.core.errors import IolabError
from iolab.store.durable import ResultsDiskFull

if TYPE_CHECKING:
    from iolab.api.runs import Step
    from iolab.cli.progress import RichProgress
    from iolab.store.runstore import RunStore


def report_paths(console: Console, progress, reports: list[Path], quiet: bool) -> None:
    """A run's report files: progress lines never folded (timestamped in a log), or plain lines with --quiet."""
    for p in reports:
        if quiet:
            console.print(f"report: {esc(str(p))}", soft_wrap=True)
        else:
            progress.result(f"report: {p}")


def kept_report(run_dir: Path, run_id: str, since: float = 0.0) -> str:
    """What a stop after the run was complete left of its report (escaped). What is in place is
    what is kept: write_document puts each file in place whole, and the stop may have come after
    both were (the HTML and PDF are there, though the run's exit is a stop's), or before the
    report was begun (while the run's end was stored: its audit, a simulated drive's power).
    `since`: when this command began (a resumed run's report from an earlier end is not its own)."""
    report = run_dir / "report"
    files = [p for p in (report / f"{run_id}{ext}" for ext in (".html", ".pdf")) if p.is_file()]
    kept = [p for p in files if p.stat().st_mtime >= since]
    if len(kept) == 2:
        return f"its report is kept too: {esc(str(kept[0]))} and {esc(str(kept[1]))}"
    write = f"`iolab report {esc(str(run_dir))}` writes it"
    if not kept and (files or not report.exists()):
        earlier = f"; the one in {esc(str(report))} is of an earlier end" if files else ""
        return f"its report was not written ({write}{earlier})"
    # write_document places the PDF first, then the HTML: the PDF alone is a report stopped between
    # the two (a stop signal there now waits for both, core/stopdefer.py; this is the rest)
    only = f" ({esc(kept[0].name)} alone was put in place; the HTML goes after it)" if kept else ""
    return f"a report stopped half-way is not kept{only} ({write})"


def stopped_reports(kept: list[Path]) -> str:
    """What `iolab report` stopped says of its reports (escaped): those whose HTML and PDF are both
    in place, written by it (api.reports_in_place), listed or not: the stop may have come as the
    last file took its name, and "not kept" of a report whose two files were in place was untrue."""
    if kept:
        return f"these reports are whole and kept: {esc(', '.join(map(str, kept)))}; a report stopped half-way is not"
    return "the report being written was not kept (the reports listed above are whole)"


def stopped_when_complete(by: str, store: RunStore, since: float = 0.0) -> str:
    """What a stop (`by`: 'interrupted', 'stopped by SIGTERM') says once the run was complete: it is
    stored whole, and what of its report is kept or how to write it (escaped; `since`: kept_report's)."""
    from iolab.store.manifest import manifest_of

    run_id = manifest_of(store).run_id
    return (
        f"{by} after run {esc(run_id)} was complete: the run is complete and stored in {esc(str(store.dir))}; "
        f"{kept_report(store.dir, run_id, since)}"
    )


def error_once_begun(e: IolabError, store: RunStore) -> str:
    """An error once a run began (`iolab run`, `iolab resume`), as Rich markup: said as every
    other error is ("iolab: ..."; a simulated drive's save= on a full disk lacked it), then what
    it leaves: a complete run (its report or save= state found no room) is whole."""
    from iolab.store.manifest import manifest_of

    where = esc(str(store.dir))
    complete = manifest_of(store).state == "complete"
    kept = f"the run is complete and stored in {where}" if complete else f"the run so far is kept in {where}"
    return f"[red]iolab: {esc(str(e))}[/]\n({kept})"


class RunView:
    """The steps of `iolab run` as its console shows them; `records` for --json and --require-steady."""

    def __init__(self, console: Console, err: Console, args: RunArgs):
        self.console, self.err, self.args = console, err, args
        self.progress: RichProgress  # set once the display is open
        self.current: list[RunStore] = []
        self.records: list[dict] = []
        self.sequence_reports: list[Path] = []
        self.told = run_dirs_file()  # run_many's channel, when this run is one of several --target

    def follow(self, steps: Generator[Step, None, None]) -> None:
        """Show each step as the run reaches it (closing `steps` on Ctrl-C marks a run that had
        only started as interrupted)."""
        from iolab.api.runs import Ended, Planned, SequenceReported, Started

        with closing(steps):
            for step in steps:
                if isinstance(step, Planned):
                    self.planned(step.plans, step.index)
                elif isinstance(step, Started):
                    self.started(step.store)
                elif isinstance(step, Ended):
                    self.ended(step.store, list(step.run.reports), step.run.report_full)
                elif isinstance(step, SequenceReported):
                    for p in step.paths:
                        self.sequence_reports.append(p)
                        self.console.print(f"sequence report: {esc(str(p))}", soft_wrap=True)

    def planned(self, plans, i: int) -> None:
        from iolab.cli.progress import sequence_eta

        self.progress.test_starts(plans[i])
        if len(plans) > 1:
            self.progress.in_sequence(plans, i)
            if self.args.quiet:
                return
            self.console.print(
                f"[bold]test {i + 1}/{len(plans)}[/]: remaining {esc(sequence_eta(plans[i:], self.progress.pace, self.progress.measured))}",
                soft_wrap=True,
            )

    def started(self, store: RunStore) -> None:
        from iolab.store.manifest import manifest_of

        self.current[:] = [store]
        m, console = manifest_of(store), self.console
        if not self.args.quiet:
            console.print(f"[bold]{esc(m.title)}[/] on {esc(m.target['spec'])} → {esc(str(store.dir))}")
        if "ioengine" in m.versions and not self.args.quiet:
            console.print(f"fio ioengine: {esc(m.versions['ioengine'])}")
        for overridden in m.safety_overrides:
            console.print(f"[bold yellow]safety check overridden: {esc(overridden)}[/]", soft_wrap=True)
        if not m.compliant:
            console.print(f"[yellow]non-compliant: {esc('; '.join(m.noncompliance))}[/]")

    def ended(self, store: RunStore, reports: list[Path], report_full: IolabError | None = None) -> None:
        from iolab.api import reports as api
        from iolab.store.manifest import manifest_of

        complete = manifest_of(store).state == "complete"
        recorded = self.args.json_out or self.args.require_steady
        read = api.read_run(store) if recorded and complete else None  # once, for the record and the tables
        if recorded:
            self.records.append(api.run_record(store, reports, read))
        if complete:
            api.show(store, self.console, read)
        report_paths(self.console, self.progress, reports, self.args.quiet)
        if report_full is not None and manifest_of(store).state != "complete":  # a complete run's is raised
            self.err.print(f"[yellow]{esc(str(report_full))}[/]", soft_wrap=True)
        if manifest_of(store).state == "complete":
            self.console.print(f"run directory: {esc(str(store.dir))}", soft_wrap=True)  # whole, for copying
            if self.told is not None:
                tell_run_dir(self.told, store.dir)

    def interrupted(self, e: KeyboardInterrupt) -> None:
        """Ctrl-C or a stop signal: say what is kept, then end with 130 (or 128 + the signal)."""
        from iolab.run.stopsignals import Interrupted, exit_code
        from iolab.store.manifest import manifest_of

        if not self.current or manifest_of(self.current[0]).state not in ("interrupted", "complete"):
            raise e
        store = self.current[0]
        by = f"stopped by {e.signal_name}" if isinstance(e, Interrupted) else "interrupted"
        run_dir = esc(str(store.dir))
        if manifest_of(store).state == "complete":  # stopped while (or after) its end or report was written
            self.err.print(f"[yellow]{stopped_when_complete(by, store)}[/]", soft_wrap=True)
        else:
            # what a user does next, with the run's path whole (not wrapped) to copy
            self.err.print(
                f"[yellow]{by}: finished rounds are kept in {run_dir}; `iolab resume {run_dir}` continues "
                f"it, `iolab report {run_dir}` reports what was measured[/]",
                soft_wrap=True,
            )
        ended_early("run", self.args.json_out, self.records, store, exit_code(e))

    def failed(self, e: IolabError) -> None:
        """An error once a run began: the run so far is kept; its exit code. Before: main() says why."""
        from iolab.store.manifest import manifest_of

        state = manifest_of(self.current[0]).state if self.current else None
        if state != "failed" and not (state == "complete" and isinstance(e, ResultsDiskFull)):
            raise e
        self.err.print(error_once_begun(e, self.current[0]))
        ended_early("run", self.args.json_out, self.records, self.current[0], e.exit_code, str(e))
