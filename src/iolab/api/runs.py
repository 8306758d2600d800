"""What `iolab run` and `iolab resume` call: a test or a sequence planned (the registry asked for
each test's declaration and its plan built), run, and reported as each run ends; each stage a step
for the caller to show. A run's views and reports are api/reports.py's, comparisons
api/comparisons.py's; this module calls the former as a run ends and neither calls it back.

Dependency direction: api → registry ⇢ suites.* → compare_pages/*, report/*, compare/*, textreport; nothing
below imports this module or the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from iolab import suites
from iolab.api import registry
from iolab.api.reports import read_spec_sheet, write_report, write_sequence_report
from iolab.core.diskfull import is_disk_full
from iolab.core.errors import IolabError
from iolab.core.plan import Profile, TestPlan, ignored_options
from iolab.core.safefile import read_json
from iolab.core.testparams import as_percent, check_acting, check_known, legacy_shares
from iolab.engines import Engine, engine_for
from iolab.run.runner import Progress, Runner
from iolab.run.runstart import RunOptions, start, stopped_before_its_rounds
from iolab.run.stopsignals import held_stop
from iolab.store.durable import ResultsDiskFull, room_for
from iolab.store.manifest import manifest_of, resolve_run, runs_root
from iolab.store.runstore import RunStore
from iolab.store.writer import claim_run
from iolab.targets import Target, parse_target

if TYPE_CHECKING:
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


def check_settings(test: str, profile: Profile, everything: bool = False) -> list[TestDef]:
    """The tests `test` runs, each --set value checked against them (a name no test takes, a
    value a test cannot read, one that acts in none): before any target is named, so a fleet
    refuses a bad value once, before it starts a drive (each drive's run refused it alike)."""
    tests = registry.sequence(test, everything)
    check_known(dict(profile.settings), {t.name: t.params for t in tests})
    check_acting({t.name: t.params for t in tests}, profile)
    return tests


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
    tests = check_settings(test, profile, everything)
    # stored with each share's '%': a bare share stored is one of a run from before the rule
    profile = replace(profile, settings=as_percent([p for t in tests for p in t.params], profile.settings))
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
        close_engine(engine)
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
    spec_sheet: Path | None = None,
) -> TestRun:
    """Continue an interrupted run, as `iolab resume` does. `on_start` gets where and why it
    continues (Resumption.notes) before anything runs; an error or interruption is raised,
    the run so far kept (and no report written). `ioengine`: fio's IO engine (None: the run's own).
    `spec_sheet`: the sheet the report opens with, as run_test's (a fleet's drive resumed: the fleet's)."""
    from iolab.run import resume as resuming  # here: a new run needs none of it (nor the host engines it imports)

    # One writer per run directory (store/writer.py), claimed before anything is read: two resumes
    # that both read the run interrupted both went on. The writable store holds the claim on.
    run_dir = resolve_run(run)
    if spec_sheet is not None:  # a bad sheet refused before anything of the run is touched, not at its end
        stored = read_json(run_dir / "manifest.json", "run manifest", "manifest")
        test = str(stored.get("test") if isinstance(stored, dict) else None)
        again = f"resume the run with it (`iolab resume {run} --spec-sheet {spec_sheet}`); the run is as it was"
        read_spec_sheet(Path(spec_sheet), test, again=again)
    with room_for("its resumption", run_dir, f"`iolab resume {run_dir}`", run_dir), claim_run(run_dir):
        r, engine = resuming.prepare(
            run, engine_for, _stored_plan, allow_unsafe, allow_system_disk, listen_any, ioengine
        )
    try:
        try:
            if on_start:
                on_start(r)
            resuming.run(r, engine, progress)
        finally:
            close_engine(engine)
        done = _ended(r.store, report, spec_sheet)
        if on_end:
            on_end(r.store, list(done.reports))
        if done.report_full is not None:
            raise done.report_full
    finally:
        r.store.release_writer()  # ended or stopped: the next writer (another resume) may have the run
    return done


def _stored_plan(name: str, profile: Profile, target: Target, workload: str | Path | None = None) -> TestPlan:
    """The plan of a stored run as it began: its shares read as it read them (a bare number was a
    fraction in runs stored before it was a percentage: testparams.legacy_shares)."""
    params = registry.get(name).params
    return registry.build_plan(
        name, replace(profile, settings=legacy_shares(params, profile.settings)), target, workload
    )


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


def close_engine(engine: Engine) -> None:
    """Close the engine; a file it writes as it closes (a simulated drive's save= state) that
    finds its disk full is exit 5 naming that file, not exit 2 as if the target were bad input.
    The run itself is stored by then."""
    try:
        engine.close()
    except OSError as e:
        if not is_disk_full(e) or not e.filename:
            raise
        with room_for("the simulator state (save=)", Path(e.filename), "run again to save it (the run is stored)"):
            raise
