"""What `iolab run` would do, described before it runs (`iolab plan`): each test's tested
capacity, purge, phases, cells, round limits, budgets, steady-state rule, compliance and the
profile options it ignores. The plans are the ones `iolab run` builds (runs.planned, with the
same quick copy of a simulated drive and the same probing for ignored options); nothing here
purges, writes, claims a target or makes a run directory. The description is plain data (typed
dataclasses, `asdict` for --json); cli/planview.py prints it and adds the ETA `iolab run` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iolab import suites
from iolab.api import registry
from iolab.api.runs import built_plan, planned
from iolab.api.unused import ignored
from iolab.core.plan import Deferred, Phase, Profile, TestPlan, ignored_options
from iolab.core.workload import Workload
from iolab.figures.phaseend import rule_text
from iolab.run.runstart import RunOptions, check_purge_method, noncompliance_of
from iolab.targets import Target
from iolab.targets.purge import auto_method

if TYPE_CHECKING:
    from iolab.suites.testdef import TestDef


@dataclass(frozen=True)
class Step:
    """One workload: a preconditioning step or a cell's. `seconds` its timed length (None: it
    runs to `bytes`, at the drive's speed), `ramp_s` the warm-up before it is measured."""

    label: str
    read_pct: float
    block_sizes: tuple[int, ...]
    threads: int
    queue_depth: int
    seconds: float | None
    ramp_s: float
    bytes: int | None
    rate_iops: int | None


@dataclass(frozen=True)
class PlannedCell:
    key: str
    mix: str  # R/W %, the column of the test's table
    block_size: int  # the row
    workload: Step
    idle_before_s: float | None


@dataclass(frozen=True)
class PlannedPhase:
    """A phase as the runner will run it; a deferred one (`built_from`) has only its name and
    what it is built from once the phases before it ran."""

    name: str
    built_from: str | None
    purge: bool
    precondition: tuple[Step, ...]
    cells: tuple[PlannedCell, ...]
    tracking: tuple[str, ...]  # the steady-state variables; "(shown)" marks one that does not decide
    max_rounds: int | None
    stop_on_steady: bool | None
    budget_write_bytes: int | None
    budget_seconds: float | None
    min_write_bytes: int | None  # steady state counts only after the rounds wrote this much
    stop_rule: str | None
    round_seconds: float
    earliest_s: float  # its timed steps, TestPlan.phase_seconds
    latest_s: float


@dataclass(frozen=True)
class PlannedTest:
    test: str
    title: str
    spec: str
    target: str  # what the test runs on: a quick run's copy of a simulated drive, else the target given
    copy_of: str | None  # the simulated drive the copy stands for
    scaled_by: tuple[str, ...]  # the options that scaled the run down, as given (Profile.scaled_by)
    target_capacity_bytes: int
    tested_capacity_bytes: int
    active_range: float
    purge_method: str  # as given (--purge)
    purge_does: str  # what it does on this target
    cell_seconds: float
    max_rounds: int
    # where max_rounds comes from: "profile", "--max-rounds", or "not used" (the test's plan is the
    # same at any round limit: its phases end on their own budgets, so the limit shown bounds nothing)
    max_rounds_from: str
    steady_rule: str
    steady_window: int
    steady_min_write_bytes: int
    phases: tuple[PlannedPhase, ...]
    compliant: bool
    noncompliance: tuple[str, ...]
    ignored_options: Mapping[str, Any]  # flag -> the value the plan is the same at
    parameters: Mapping[str, str]
    notes: tuple[str, ...]
    earliest_s: float  # its timed steps (TestPlan.timed_seconds); fills by bytes not included
    latest_s: float


@dataclass(frozen=True)
class PlanDescription:
    """The tests of `iolab run TEST` in order, the notes it prints for options the tests ignore,
    and the plans themselves (for the ETA, which the CLI's progress owns)."""

    tests: tuple[PlannedTest, ...]
    ignored: tuple[str, ...]
    split: str | None  # --paths/--hosts: how the outstanding IO is split (nothing is connected)
    plans: tuple[TestPlan, ...]


def describe(
    test: str,
    profile: Profile,
    given: Target,
    options: RunOptions,
    flags: Mapping[str, str],
    workload: str | Path | None = None,
    everything: bool = False,
    split: str | None = None,
    purge_instead: str | None = None,
) -> PlanDescription:
    """What `iolab run TEST` runs with these options on `given`. `flags`: each Profile field's
    command-line flag (the ignored-option notes name them). IolabError as `iolab run` would
    refuse before it starts: an unknown test, a bad option or purge method. `purge_instead`: what a
    purge does instead when the engine does not purge the target (a hosts run's other machines)."""
    runs = planned(test, profile, given, workload, everything)
    for _, tgt, _ in runs:
        check_purge_method(tgt, options, purged=lambda: purge_instead is None)
    plans = [plan for plan, _, _ in runs]
    tests = registry.sequence(test, everything)
    return PlanDescription(
        tuple(
            _test(plan, tgt, options, flags, purge_instead, _rounds_from(t, given, workload, profile, plan))
            for (plan, tgt, _), t in zip(runs, tests)
        ),
        tuple(ignored(test, plans, flags)),
        split,
        tuple(plans),
    )


def _rounds_from(test: TestDef, given: Target, workload: str | Path | None, profile: Profile, plan: TestPlan) -> str:
    """Where the round limit of `plan` comes from, as `iolab plan` names it: "not used" when the
    plan is the same at another limit (WSAT, XSR: their phases run to their own budgets, so a
    limit shown beside them, the profile's or --max-rounds', would bound nothing), else
    "--max-rounds" when the user's replaced the profile's, else "profile"."""
    other = replace(profile, max_rounds=profile.max_rounds + 1)
    build = partial(built_plan, test, given, workload)
    if ignored_options(build, profile, other, keys=["max_rounds"], plan=plan):
        return "not used"
    own = suites.make_profile(profile.name, quick=profile.quick, spec=profile.spec).max_rounds
    return "profile" if profile.max_rounds == own else "--max-rounds"


def _test(
    plan: TestPlan,
    tgt: Target,
    options: RunOptions,
    flags: Mapping[str, str],
    purge_instead: str | None,
    rounds_from: str,
) -> PlannedTest:
    prof, rule = plan.profile, plan.rule
    why = noncompliance_of(plan, tgt, options, purged=purge_instead is None)
    earliest, latest = plan.timed_seconds()
    method = options.purge_method
    return PlannedTest(
        test=plan.test,
        title=plan.title,
        spec=plan.spec,
        target=tgt.spec,
        copy_of=tgt.copy_of or None,
        scaled_by=tuple(prof.scaled_by()),
        target_capacity_bytes=tgt.drive_capacity,  # a device's ?size= is its tested part
        tested_capacity_bytes=plan.capacity,
        active_range=prof.active_range,
        purge_method=method,
        purge_does=(
            f"not done: {purge_instead}"
            if purge_instead and method != "none"
            else auto_method(tgt)
            if method == "auto"
            else method
        ),
        cell_seconds=prof.cell_seconds,
        max_rounds=prof.max_rounds,
        max_rounds_from=rounds_from,
        steady_rule=rule_text(plan, options.purge_method != "none"),
        steady_window=rule.window,
        steady_min_write_bytes=rule.min_write_bytes(plan.capacity),
        phases=tuple(_phase(plan, ph) for ph in plan.phases),
        compliant=not why,
        noncompliance=tuple(why),
        ignored_options={flags.get(k, k): v for k, v in plan.ignored_options.items()},
        parameters=dict(plan.parameters),
        notes=plan.notes,
        earliest_s=earliest,
        latest_s=latest,
    )


def _phase(plan: TestPlan, ph: Phase | Deferred) -> PlannedPhase:
    earliest, latest = plan.phase_seconds(ph)
    if isinstance(ph, Deferred):
        return PlannedPhase(
            ph.name, ph.describe, False, (), (), (), None, ph.tracks, None, None, None, None, 0.0, earliest, latest
        )
    return PlannedPhase(
        name=ph.name,
        built_from=None,
        purge=ph.purge,
        precondition=tuple(_step(w) for w in ph.precondition),
        cells=tuple(PlannedCell(c.key, c.mix, c.block_size, _step(c.workload), c.idle_before_s) for c in ph.cells),
        tracking=tuple(t.name + ("" if t.decides else " (shown)") for t in ph.tracking),
        max_rounds=ph.max_rounds,
        stop_on_steady=ph.stop_on_steady,
        budget_write_bytes=ph.budget_write_bytes,
        budget_seconds=ph.budget_seconds,
        min_write_bytes=ph.min_write_bytes,
        stop_rule=ph.stop_rule.describe() if ph.stop_rule is not None else None,
        round_seconds=ph.round_seconds(),
        earliest_s=earliest,
        latest_s=latest,
    )


def _step(w: Workload) -> Step:
    return Step(
        label=w.label(),
        read_pct=w.read_pct,
        block_sizes=tuple(sorted({s.block_size for s in w.streams})),
        threads=w.threads,
        queue_depth=w.queue_depth,
        seconds=w.duration_s,
        ramp_s=w.ramp_s,
        bytes=w.bytes_budget,
        rate_iops=w.rate_iops,
    )
