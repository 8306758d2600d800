"""What the CLI calls where a command depends on the test: the one place that asks the
registry and hands a test's declared functions to the layers that do the work (plans, the
terminal view, reports, comparisons). A stored run whose test is not registered in this
process is shown and reported with the generic views; comparing it needs key figures, so
it is refused with the reason.

Dependency direction: api → registry ⇢ suites.* → compare_pages/*, report/*, compare/*, textreport; nothing
below imports this module or the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from iolab import suites
from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.core.plan import Profile, TestPlan, ignored_options
from iolab.core.testparams import check_known
from iolab.engines import Engine, engine_for
from iolab.figures.specsheet import check_units, load_spec_sheet
from iolab.run.runner import Progress, Runner
from iolab.run.runstart import RunOptions, start, stopped_before_its_rounds
from iolab.run.stopsignals import held_stop
from iolab.store.durable import ResultsDiskFull, room_for
from iolab.store.manifest import manifest_of, resolve_run, runs_root
from iolab.store.runstore import RunStore
from iolab.store.writer import claim_run
from iolab.targets import Target, parse_target

if TYPE_CHECKING:
    from iolab.figures.compare import Comparison, KeyMetric
    from iolab.figures.specsheet import SpecSheet
    from iolab.figures.summary import PhaseSummary
    from iolab.pages.report.model import Document
    from iolab.pages.report.rundata import RunData
    from iolab.run.resume import Resumption
    from iolab.suites.testdef import InputKeeper, TestDef

# The report pages, their figures (numpy) and the comparison are imported by the functions
# that write them: a run without a report (`--no-report`, every drive of a fleet) never loads
# them, which was a third of its start's CPU (numpy: 0.15 CPU-s of 0.5; tests/integration/test_report_speed.py).


# One test's plan, the target it runs on, what keeps its input in the run directory (`planned`)
RunPlan = tuple[TestPlan, Target, "InputKeeper | None"]


def plans(
    test: str, profile: Profile, target: Target, workload: str | Path | None = None, everything: bool = False
) -> list[TestPlan]:
    """The plans `iolab run TEST` runs: one test's, or each of a sequence's in order (with
    `everything`, its optional tests too). Every `--set` parameter must belong to one of them
    (checked before any plan is built). Without the record of the options each ignores (its
    probing builds the plan again per option given): only a run keeps it (`planned`)."""
    return [plan for plan, _, _ in planned(test, profile, target, workload, everything, probe=False)]


def planned(
    test: str,
    profile: Profile,
    given: Target,
    workload: str | Path | None = None,
    everything: bool = False,
    probe: bool = True,
) -> list[RunPlan]:
    """Each plan with the target it runs on and what keeps its input in the run directory: on
    a simulated drive a --quick run tests a copy of it, each test's own (suites.quick_setup),
    and says so in the plan's notes. `probe`: each plan records the profile options it is the
    same without (TestPlan.ignored_options: one more build per option given), which the run
    keeps and `iolab run` says before it starts (api/unused.py); a run start builds them once."""
    tests = registry.sequence(test, everything)
    check_known(dict(profile.settings), {t.name: t.params for t in tests})
    out = []
    defaults = suites.make_profile(profile.name, quick=profile.quick, spec=profile.spec)
    for t in tests:
        prof, tgt, notes = suites.quick_setup(profile, given, t)
        plan = registry.build_plan(t.name, prof, tgt, workload)
        ignored = (
            ignored_options(partial(built_plan, t, given, workload), profile, defaults, plan=plan) if probe else {}
        )
        out.append((replace(plan, notes=plan.notes + notes, ignored_options=ignored), tgt, t.keep_input))
    return out


def built_plan(test: TestDef, given: Target, workload: str | Path | None, profile: Profile) -> TestPlan:
    """The plan `test` runs with `profile` on `given` (on the copy a quick run tests of it)."""
    prof, tgt, _ = suites.quick_setup(profile, given, test)
    return registry.build_plan(test.name, prof, tgt, workload)


@dataclass(frozen=True)
class TestRun:
    """One run `run_test` made: where it is, how it ended, its report files."""

    __test__ = False  # not a pytest class

    dir: Path
    run_id: str
    test: str
    state: str  # complete | failed | interrupted (manifest.state)
    reports: tuple[Path, ...]
    # why there is no report: the results disk filled while it was written (exit 5 once the run is shown)
    report_full: ResultsDiskFull | None = None


@dataclass(frozen=True)
class Planned:
    """Plan `index` of `plans` (every plan is built and checked) is about to start."""

    plans: list[TestPlan]
    index: int


@dataclass(frozen=True)
class Started:
    """Its run directory exists, the target is claimed and found safe; the runner comes next."""

    store: RunStore


@dataclass(frozen=True)
class Ended:
    """The run ended (complete, or failed: an error follows this step); `run.reports` written."""

    store: RunStore
    run: TestRun


@dataclass(frozen=True)
class SequenceReported:
    """The one report of a sequence's runs (RUNS_DIR/sequences/)."""

    paths: list[Path]


Step = Planned | Started | Ended | SequenceReported


class RunHow(TypedDict, total=False):
    """run_steps' options, which run_test passes on (each as run_steps documents it)."""

    workload: str | Path | None
    options: RunOptions | None
    runs_dir: Path | None
    stall_timeout: float | None
    progress: Progress | None
    report: bool
    engine: Engine | None
    everything: bool
    spec_sheet: Path | None
    plans: Sequence[RunPlan] | None


def run_steps(
    test: str,
    target: Target | str,
    profile: Profile | None = None,
    *,
    workload: str | Path | None = None,
    options: RunOptions | None = None,
    runs_dir: Path | None = None,
    stall_timeout: float | None = None,
    progress: Progress | None = None,
    report: bool = True,
    engine: Engine | None = None,
    everything: bool = False,
    spec_sheet: Path | None = None,
    plans: Sequence[RunPlan] | None = None,
) -> Generator[Step, None, None]:
    """`run_test` as the steps its caller shows between them (the CLI's `iolab run`): the run
    goes down api → run (runstart.start: safety, claim, run directory; Runner) → engine → store
    and never calls back up; whoever iterates shows each step and then asks for the next. An
    error or interruption is raised after its run's `Ended`, the runs so far kept; closing the
    iterator at `Started` (Ctrl-C while it was shown) marks that run interrupted. `spec_sheet`:
    each run's report opens with a front page against it (read, and so checked, before anything
    runs). `plans`: what `planned` built of these arguments, when the caller built them first
    (`iolab run` says the options they ignore before the run): not built again."""
    if spec_sheet is not None:
        read_spec_sheet(Path(spec_sheet), test, everything)
    given = parse_target(target) if isinstance(target, str) else target
    engine = engine or engine_for(given, stall_timeout=stall_timeout)  # by the target's kind, which a copy keeps
    done: list[Path] = []
    try:
        runs = list(plans) if plans is not None else planned(test, profile or Profile(), given, workload, everything)
        for i, (plan, tgt, keeper) in enumerate(runs):
            yield Planned([p for p, _, _ in runs], i)
            # a stop while the run directory is made is raised once the caller knows the run
            with held_stop() as stop:
                store = start(plan, tgt, engine, options or RunOptions(), Path(runs_dir) if runs_dir else runs_root())
            try:
                yield Started(store)
                stop.release()
                if workload is not None and keeper is not None:
                    keeper(Path(workload), store.dir)
                Runner(plan, tgt, engine, store, options or RunOptions(), progress).run()
            except (KeyboardInterrupt, GeneratorExit) as e:
                stopped_before_its_rounds(store, tgt, e)
                raise
            except IolabError as e:
                # no room for a report either when the results disk is full
                yield Ended(store, _ended(store, report and not isinstance(e, ResultsDiskFull), spec_sheet))
                raise
            else:
                yield Ended(store, ended := _ended(store, report, spec_sheet))
                if ended.report_full is not None:  # the run is complete and stored, its report is not
                    raise ended.report_full
            finally:
                store.release_writer()  # however it ended, the next writer (a resume) may have the run
            store.close()  # its caller has shown it; a long sequence keeps no connection per run
            done.append(store.dir)
    finally:
        engine.close()
    if report and len(done) > 1:
        yield SequenceReported(write_sequence_report(done))


def run_test(
    test: str,
    target: Target | str,
    profile: Profile | None = None,
    *,
    on_start: Callable[[RunStore], None] | None = None,
    on_end: Callable[[RunStore, list[Path]], None] | None = None,
    on_plan: Callable[[list[TestPlan], int], None] | None = None,
    on_sequence_report: Callable[[list[Path]], None] | None = None,
    **how: Unpack[RunHow],
) -> list[TestRun]:
    """Run a test, or each test of a sequence in order (`everything`: its optional tests too,
    `iolab run SEQ --all`), as `iolab run` does: claim the target, check it is safe, open the
    run directory, keep the test's input there, run the plan, write the report. Every plan is
    built (and so checked) before the first one writes anything. `how`: run_steps' options
    (`RunHow`); run_steps yields the same run's steps to a caller that shows each as it comes.

    `on_plan(plans, i)` is called before plan i starts (a sequence's ETA), `on_start(store)` once a run directory exists, `on_end(store, report paths)`
    when its run has ended, also when it failed (the report then shows what was measured).
    A sequence of several tests that all ran also gets one report of them all (in
    RUNS_DIR/sequences/), whose paths go to `on_sequence_report`. `spec_sheet`: each run's
    report opens with a front page against it (read, and so checked, before anything runs).
    An error or interruption is raised after that, the runs so far kept. `engine` (e.g. one
    that splits rounds over paths or hosts, see scaleout.engine_for_run) replaces the target's
    own engine; run_test closes it either way."""
    done: list[TestRun] = []
    steps = run_steps(test, target, profile, **how)
    with closing(steps):
        for step in steps:
            if isinstance(step, Planned) and on_plan:
                on_plan(step.plans, step.index)
            elif isinstance(step, Started) and on_start:
                on_start(step.store)
            elif isinstance(step, Ended):
                if on_end:
                    on_end(step.store, list(step.run.reports))
                done.append(step.run)
            elif isinstance(step, SequenceReported) and on_sequence_report:
                on_sequence_report(step.paths)
    return done


def resume_test(
    run: str | Path,
    *,
    allow_unsafe: bool = False,
    allow_system_disk: bool = False,
    listen_any: bool = False,
    ioengine: str | None = None,
    progress: Progress | None = None,
    report: bool = True,
    on_start: Callable[[Resumption], None] | None = None,
    on_end: Callable[[RunStore, list[Path]], None] | None = None,
) -> TestRun:
    """Continue an interrupted run, as `iolab resume` does. `on_start` gets where and why it
    continues (Resumption.notes) before anything runs; an error or interruption is raised,
    the run so far kept (and no report written). `ioengine`: fio's IO engine (None: the run's own)."""
    from iolab.run import resume as resuming  # here: a new run needs none of it (nor the host engines it imports)

    # One writer per run directory (store/writer.py), claimed before anything is read: two resumes
    # that both read the run interrupted both went on. The writable store holds the claim on.
    run_dir = resolve_run(run)
    with room_for("its resumption", run_dir, f"`iolab resume {run_dir}`", run_dir), claim_run(run_dir):
        r, engine = resuming.prepare(
            run, engine_for, registry.build_plan, allow_unsafe, allow_system_disk, listen_any, ioengine
        )
    try:
        try:
            if on_start:
                on_start(r)
            resuming.run(r, engine, progress)
        finally:
            engine.close()
        done = _ended(r.store, report)
        if on_end:
            on_end(r.store, list(done.reports))
        if done.report_full is not None:
            raise done.report_full
    finally:
        r.store.release_writer()  # ended or stopped: the next writer (another resume) may have the run
    return done


def _ended(store: RunStore, report: bool, spec_sheet: Path | None = None) -> TestRun:
    """The run as it ended, with its report written; a results disk too full for the report
    leaves the run as stored and says so in `report_full` (raised once the run is shown)."""
    full = None
    try:
        paths = write_report([store.dir], store.dir / "report", spec_sheet) if report else []
    except ResultsDiskFull as e:
        paths, full = [], e
    m = manifest_of(store)
    return TestRun(store.dir, m.run_id, m.test, m.state, tuple(paths), full)


def show(store: RunStore, console) -> None:
    from iolab.pages.textreport import render

    test = registry.find(manifest_of(store).test)
    render(store, console, test.view if test else None, test.key_figures if test else None)


def run_record(store: RunStore, reports: Sequence[Path] = ()) -> dict:
    """The run as `--json` documents list it (outcome.run_record), with its test's key figures."""
    from iolab.pages.outcome import run_record as record

    test = registry.find(manifest_of(store).test)
    return record(store, test.key_figures if test else None, reports)


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


def read_spec_sheet(spec_sheet: Path, test: str, everything: bool = False) -> None:
    """Read a spec sheet before `test` (a test or a sequence) runs against it: a bad sheet, or a
    bound in a unit that the figure it names (as the tests declare it) is never in, is refused."""
    tests = registry.sequence(test, everything)
    check_units(
        load_spec_sheet(spec_sheet), {m.name: m.unit for t in tests if t.key_figures for m in t.key_figures(())}
    )


def check_spec_sheet(spec_sheet: Path | None, sequence: bool = False) -> None:
    """Read a report's spec sheet (IolabError when it is bad); a sequence report has no front page."""
    if spec_sheet is not None and sequence:
        raise IolabError("--spec-sheet gives one run's report its front page; it does not go with --sequence.")
    if spec_sheet is not None:
        load_spec_sheet(Path(spec_sheet))


def write_report(run_dirs: Sequence[str | Path], out_dir: Path | None, spec_sheet: Path | None = None) -> list[Path]:
    """One HTML and one PDF per run, in out_dir (None: each run's own report/); returns the
    paths written. `spec_sheet`: a TOML/CSV spec sheet (figures/specsheet.py) each report opens
    with a front page against. Every run is read and its report built before any is written:
    a run that cannot be (unreadable, damaged, a round check failing, a run id no plain name,
    another process writing it) fails with nothing new on disk, not after the reports before
    it in the list were written."""
    from iolab.pages.report import write_document
    from iolab.pages.report.rundata import RunData

    sheet = load_spec_sheet(Path(spec_sheet)) if spec_sheet is not None else None
    dirs = [resolve_run(ref).resolve() for ref in run_dirs]  # resolved as `outs`: a run's report/ is in it
    outs = [(Path(out_dir) if out_dir is not None else d / "report").resolve() for d in dirs]
    again = [f"`iolab report {d}" + ("`" if o == d / "report" else f" --out {o}`") for d, o in zip(dirs, outs)]
    written: list[Path] = []
    with ExitStack() as claims:
        for d, out, cmd in zip(dirs, outs, again):
            if d == out or d in out.parents:  # one more writer in its run: not while another process writes it
                with room_for("its report", out, cmd, d):
                    claims.enter_context(claim_run(d, f"`iolab report {d} --out DIR` writes the report elsewhere."))
        runs = [RunData.load(d, out) for d, out in zip(dirs, outs)]
        docs = [build_document(run, sheet) for run in runs]
        for run, doc, cmd in zip(runs, docs, again):
            with room_for("its report", run.out_dir, cmd, run.dir):
                written += write_document(doc, run.out_dir, run.manifest.run_id)
    return written


def write_sequence_report(run_refs: Sequence[str | Path], out_dir: Path | None = None) -> list[Path]:
    """One HTML and one PDF for runs of a sequence on one target (a summary page, then each
    run's own pages in the order they ran), in out_dir (default: `sequences/` beside the first
    run's directory); returns the paths written."""
    from iolab.pages.report.rundata import RunData
    from iolab.pages.report.sequence import SequenceMember, order_runs
    from iolab.pages.report.sequence import write_sequence_report as _write_sequence_report

    dirs = [resolve_run(r) for r in run_refs]
    if not dirs:
        raise IolabError("a sequence report needs at least one run.")
    out = Path(out_dir or dirs[0].parent / "sequences").resolve()
    runs = order_runs([RunData.load(d, out) for d in dirs])
    tests = [registry.find(r.manifest.test) for r in runs]
    seqs = {t.sequence if t else None for t in tests}
    name = (seqs.pop() if len(seqs) == 1 else None) or ""
    members = [
        SequenceMember(
            r,
            t.label if t else r.manifest.test,
            tuple(t.key_figures([r.phases])) if t and t.key_figures else (),
            build_document(r),
        )
        for r, t in zip(runs, tests)
    ]
    again = f"iolab report --sequence {' '.join(str(d) for d in dirs)}" + ("" if out_dir is None else f" --out {out}")
    with room_for("their sequence report", out, f"`{again}`", dirs[0]):
        return _write_sequence_report(name, tests[0].report_heading if tests[0] else None, members, out)


def key_metrics(test: str, runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    """The summary columns of a test's comparison. `runs` (each drive's phases) is needed
    only where the columns depend on what was run (Individual Streams: one per stream)."""
    t = registry.find(test)
    if t is None or t.key_figures is None:
        why = "it is not a registered test" if t is None else "its declaration names none"
        raise IolabError(f"test {test!r}: no comparison figures are defined for it ({why}).")
    return t.key_figures(runs)


def compare(
    run_refs: Sequence[str | Path], out_dir: Path, force: bool = False, labels: Sequence[str] = ()
) -> Comparison:
    """Write one comparison report (HTML and PDF) for these runs; returns the paths written
    and the ranking. `labels` names each run (one per run, in order) in place of its drive.
    Runs of several tests of one sequence whose tests declare summary figures (the RWSW tests,
    on several drives) make that sequence's summary comparison."""
    # imported here: the comparison pulls in the trace readers (duckdb, numpy), which other commands never use
    from iolab.figures.compare import open_runs

    paths = open_runs(run_refs)
    with room_for("their comparison", Path(out_dir), "run the same `iolab compare` again"):
        return _compare(paths, Path(out_dir), force, labels)


def _compare(paths: list[Path], out_dir: Path, force: bool, labels: Sequence[str]) -> Comparison:
    from iolab.figures.compare import Comparison
    from iolab.pages.compare_pages.document import write_comparison
    from iolab.pages.compare_pages.sequence import write_sequence_comparison

    tests = {_test_of(p) for p in paths}
    seq = summary_sequence(tests)
    if len(tests) > 1 and seq is not None:
        if labels:
            raise IolabError(
                "--label names the runs of a one-test comparison; a sequence comparison names each drive by its target."
            )
        return Comparison(write_sequence_comparison(paths, Path(out_dir), force, seq, registry.sequence(seq)))
    test = registry.find(next(iter(tests))) if tests else None
    return write_comparison(
        paths,
        Path(out_dir),
        force,
        lambda runs: key_metrics(next(iter(tests)), runs),
        test.overlays if test else None,
        test.report_heading if test else None,
        labels,
    )


def summary_sequence(tests: set[str]) -> str | None:
    """The one sequence all these tests belong to, if each contributes to its summary."""
    found = [registry.find(t) for t in tests]
    known = [t for t in found if t is not None]
    seqs = {t.sequence for t in known}
    if len(known) != len(found) or len(seqs) != 1 or any(t.summary_figures == () for t in known):
        return None
    return seqs.pop()


def _test_of(path: Path) -> str:
    store = RunStore.open(path)
    try:
        return manifest_of(store).test
    finally:
        store.close()
