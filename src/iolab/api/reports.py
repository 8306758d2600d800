"""What a stored run is shown as, where that depends on its test: the terminal's view, the
--json record, the report (with a spec sheet's front page) and a sequence's report. Asks the
registry for the test's declared views and pages and hands them to the layers that draw them; a
run whose test is not registered in this process gets the generic views.

Dependency direction: api → registry ⇢ suites.* → report/*, textreport; api/runs.py calls this
module as a run ends, and nothing here calls back.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.store.durable import room_for
from iolab.store.manifest import manifest_of, resolve_run
from iolab.store.runstore import RunStore
from iolab.store.writer import claim_if_inside

if TYPE_CHECKING:
    from iolab.figures.specsheet import SpecSheet
    from iolab.pages.report.model import Document
    from iolab.pages.report.rundata import RunData

# The report pages and their figures (numpy) are imported by the functions that write them: a
# run without a report (`--no-report`, every drive of a fleet) never loads them
# (tests/integration/test_report_speed.py).


def read_run(store: RunStore) -> tuple:
    """The run's phase summaries and audit, for a command that both prints the run (show) and
    gives its record (run_record): `show --require-steady`, `run --json`, `resume --json` read
    them once, not once for each (every phase's summary, its histogram queries, computed twice)."""
    from iolab.figures.audit import stored_audit
    from iolab.figures.summary import summarise

    return summarise(store), stored_audit(store)


def show(store: RunStore, console, read: tuple | None = None) -> None:
    """The run in the terminal (`read`: read_run's, where the caller has it)."""
    from iolab.pages.textreport import render

    test = registry.find(manifest_of(store).test)
    render(store, console, test.view if test else None, test.key_figures if test else None, read)


def check_readable(store: RunStore) -> None:
    """Raise IolabError when a file `show` reads besides results.db and the manifest cannot be
    read (power.json): `show --json` gives no power figures, but it refuses the run as `show`,
    `export` and `report` do, so the two forms of one command never disagree on its exit code."""
    from iolab.figures.power import stored_power

    stored_power(store.dir)


def run_record(store: RunStore, reports: Sequence[Path] = (), read: tuple | None = None) -> dict:
    """The run as `--json` documents list it (outcome.run_record), with its test's key figures
    (`read`: read_run's, where the caller has it)."""
    from iolab.pages.outcome import run_record as record

    test = registry.find(manifest_of(store).test)
    return record(store, test.key_figures if test else None, reports, read)


def build_document(run: RunData, sheet: SpecSheet | None = None) -> Document:
    """The run's report; with a spec sheet, its front page (the sheet's verdicts) comes first."""
    from iolab.pages.report import build_document as _build_document
    from iolab.pages.report.frontpage import front_pages
    from iolab.pages.report.parts import parts_pages
    from iolab.pages.report.power import power_pages
    from iolab.pages.report.pts import generic_pages
    from iolab.pages.report.sections import details_pages

    test = registry.find(run.manifest.test)
    pages = test.pages(run) if test and test.pages else generic_pages(run)
    if sheet is not None:
        store = RunStore.open(run.dir)
        try:
            record = run_record(store)
        finally:
            store.close()
        pages = front_pages(record, sheet) + pages
    return _build_document(
        run, pages + parts_pages(run) + power_pages(run) + details_pages(run), test.report_heading if test else None
    )


def read_spec_sheet(spec_sheet: Path, test: str, everything: bool = False, again: str = "start again") -> None:
    """Read a spec sheet before `test` (a test or a sequence) runs against it: a bad sheet, or a
    bound in a unit that the figure it names (as the tests declare it) is never in, is refused,
    saying how to go on once it is fixed (`again`)."""
    from iolab.figures.specsheet import check_units, load_spec_sheet  # (and tomllib): only where a sheet is given

    tests = registry.sequence(test, everything)
    units = {m.name: m.unit for t in tests if t.key_figures for m in t.key_figures(())}
    check_units(load_spec_sheet(spec_sheet), units, again)


def check_spec_sheet(spec_sheet: Path | None, sequence: bool = False) -> None:
    """Read a report's spec sheet (IolabError when it is bad); a sequence report has no front page."""
    if spec_sheet is not None and sequence:
        raise IolabError("--spec-sheet gives one run's report its front page; it does not go with --sequence.")
    if spec_sheet is not None:
        from iolab.figures.specsheet import load_spec_sheet

        load_spec_sheet(Path(spec_sheet))


def write_report(run_dirs: Sequence[str | Path], out_dir: Path | None, spec_sheet: Path | None = None) -> list[Path]:
    """One HTML and one PDF per run, in out_dir (None: each run's own report/); returns the
    paths written. `spec_sheet`: a TOML/CSV spec sheet (figures/specsheet.py) each report opens
    with a front page against. Every run is read and its report built before any is written:
    a run that cannot be (unreadable, damaged, a round check failing, a run id no plain name,
    another process writing it) fails with nothing new on disk, not after the reports before
    it in the list were written."""
    from iolab.figures.specsheet import load_spec_sheet
    from iolab.pages.report import write_document
    from iolab.pages.report.rundata import RunData

    sheet = load_spec_sheet(Path(spec_sheet)) if spec_sheet is not None else None
    dirs = [resolve_run(ref).resolve() for ref in run_dirs]  # resolved as `outs`: a run's report/ is in it
    outs = [(Path(out_dir) if out_dir is not None else d / "report").resolve() for d in dirs]
    again = [f"`iolab report {d}" + ("`" if o == d / "report" else f" --out {o}`") for d, o in zip(dirs, outs)]
    written: list[Path] = []
    with ExitStack() as claims:
        for d, out, cmd in zip(dirs, outs, again):
            with room_for("its report", out, cmd, d):  # not while another process writes the run
                claims.enter_context(
                    claim_if_inside(
                        d,
                        out,
                        f"`iolab report {d} --out DIR` writes the report elsewhere.",
                        "report directory",
                        "report",
                    )
                )
        runs = [RunData.load(d, out) for d, out in zip(dirs, outs)]
        docs = [build_document(run, sheet) for run in runs]
        for run, doc, cmd in zip(runs, docs, again):
            with room_for("its report", run.out_dir, cmd, run.dir):
                written += write_document(doc, run.out_dir, run.manifest.run_id)
    return written


def reports_in_place(run_refs: Sequence[str | Path], out_dir: Path | None, since: float) -> list[Path]:
    """The HTML and PDF of each run's report that are both in place and written since `since`
    (a POSIX time): what a `write_report` that was stopped left whole. write_document puts each
    file in place whole, so a pair written since is a whole report, though the stop came before
    the command could list it."""
    from iolab.core.safefile import read_json
    from iolab.store.manifest import Manifest

    kept: list[Path] = []
    for ref in run_refs:
        try:
            d = resolve_run(ref).resolve()
            stem = Manifest.from_document(read_json(d / "manifest.json", "run manifest", "manifest")).run_id
            pair = [
                (Path(out_dir) if out_dir is not None else d / "report") / f"{stem}{ext}" for ext in (".html", ".pdf")
            ]
            if all(p.is_file() and p.stat().st_mtime >= since for p in pair):
                kept += pair
        except (IolabError, OSError, TypeError, ValueError):
            continue  # not a run it could have written a report of
    return kept


def write_sequence_report(run_refs: Sequence[str | Path], out_dir: Path | None = None) -> list[Path]:
    """One HTML and one PDF for runs of a sequence on one target (a summary page, then each
    run's own pages in the order they ran), in out_dir (default: `sequences/` beside the first
    run's directory); returns the paths written."""
    from iolab.pages.report.rundata import RunData
    from iolab.pages.report.sequence import SequenceMember, order_runs, repeat_marks
    from iolab.pages.report.sequence import write_sequence_report as _write_sequence_report

    dirs = [resolve_run(r) for r in run_refs]
    if not dirs:
        raise IolabError("a sequence report needs at least one run.")
    out = Path(out_dir or dirs[0].parent / "sequences").resolve()
    runs = order_runs([RunData.load(d, out) for d in dirs])
    tests = [registry.find(r.manifest.test) for r in runs]
    seqs = {t.sequence if t else None for t in tests}
    name = (seqs.pop() if len(seqs) == 1 else None) or ""
    # a test given more than once: each run named "Latency (run 2)" on the summary and its pages
    marks = repeat_marks([r.manifest.test for r in runs])
    members = [
        SequenceMember(
            r,
            (t.label if t else r.manifest.test) + mark,
            tuple(t.key_figures([r.phases])) if t and t.key_figures else (),
            _marked(build_document(r), mark),
        )
        for r, t, mark in zip(runs, tests, marks)
    ]
    again = f"iolab report --sequence {' '.join(str(d) for d in dirs)}" + ("" if out_dir is None else f" --out {out}")
    with room_for("their sequence report", out, f"`{again}`", dirs[0]):
        return _write_sequence_report(name, tests[0].report_heading if tests[0] else None, members, out)


def _marked(doc: Document, mark: str) -> Document:
    """A run's document in a sequence report, its test's name followed by what tells it from
    another run of the test there (' (run 2)'; '' for a test run once)."""
    return replace(doc, test_name=doc.test_name + mark) if mark else doc
