"""What a test asks the runner to do: phases of purge, preconditioning and rounds of cells.

A test module (src/iolab/suites/*) turns a `Profile` and a `Target` into a `TestPlan`; the
runner executes any plan the same way and never knows which test it serves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from iolab.core.decide import Decision, Sample, StopRule
from iolab.core.errors import IolabError
from iolab.core.profilewords import cell_time_text, limit_source, profile_settings, scaled_by
from iolab.core.steady import SteadyRule
from iolab.core.units import Given, MiB, as_given, duration_option, given, size_option
from iolab.core.workload import Workload

Metric = Literal["iops", "mbps", "read_mbps", "write_mbps", "lat_mean_us", "lat_max_us"]

# fio counts runtime in whole milliseconds; a cell of a day is already 1,440 PTS cells, so a
# longer one is a typo (and would overflow the simulator's clock long before it ended).
MIN_CELL_SECONDS = 0.001
MAX_CELL_SECONDS = 24 * 3600.0
# Forty times the PTS's 25: a larger limit is a slip of the keyboard, not a plan.
MAX_ROUNDS = 1000
# Write Saturation's time limit: a thousand times the PTS's 24 h, as the round and write limits are
# a thousand-odd times theirs; past it the run's ETA is no date a clock can print (it crashed).
MAX_WSAT_SECONDS = 1000 * 24 * 3600.0
# × capacity written: beyond it byte counts overflow, and no test writes a drive that often.
MAX_MULTIPLE = 1000


# What each profile sets (the PTS's common parameters); --write-cache and --active-range replace the first two.
def _bad(field_: str, option: str, value: object, need: str, unit: str = "") -> IolabError:
    # with the digits given: 1001d is '86,486,400 s', not :g's '8.64864e+07 s'; an option's number as
    # it was written (1e999, not the inf float() made of it)
    if isinstance(value, Given):
        shown = f"{as_given(value)}{unit}"
    else:
        shown = f"{given(value)}{unit}" if _finite(value) and isinstance(value, float) else f"{value!r}{unit}"
    return IolabError(f"{field_} ({option}): {shown} is not allowed; {need}. Nothing was run or written.")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Cell:
    """One element of a round: a workload and the table coordinates it fills."""

    key: str  # unique within a phase, e.g. "65/35 4KiB"
    workload: Workload
    mix: str  # column label, e.g. "65/35" (R/W %)
    block_size: int  # row label, bytes
    # The device gets no host IO this long before the workload (Host Idle Recovery); only on
    # an engine whose capabilities say it can idle.
    idle_before_s: float | None = None


@dataclass(frozen=True)
class Tracking:
    """A steady-state tracking variable: one metric of one cell."""

    name: str
    cell_key: str
    metric: Metric
    # False: the variable gets its own steady-state determination over the phase's window and is
    # reported, but the phase ends on the others alone (Throughput's read MB/s: the PTS tracks
    # write MB/s and still shows the read side's convergence).
    decides: bool = True


@dataclass(frozen=True)
class Phase:
    """Purge → preconditioning → rounds until steady state or a budget."""

    name: str
    cells: tuple[Cell, ...]
    tracking: tuple[Tracking, ...]
    purge: bool = True
    precondition: tuple[Workload, ...] = ()
    max_rounds: int = 25
    stop_on_steady: bool = True
    # Budgets end a phase early (Write Saturation: 4× capacity or 24 h); bytes count host writes
    # of the measurement rounds.
    budget_write_bytes: int | None = None
    budget_seconds: float | None = None
    # Steady state is not accepted before the measurement rounds wrote this much (RWSW
    # write-saturation tests: the drive must have taken its capacity in workload writes).
    min_write_bytes: int | None = None
    # Evaluated on the phase's results after every cell; when it fires the phase ends and its
    # decision is stored (decide.py).
    stop_rule: StopRule | None = None

    @property
    def shown_only(self) -> frozenset[str]:
        """The tracking variables that are reported but do not decide steady state."""
        return frozenset(t.name for t in self.tracking if not t.decides)

    def round_seconds(self) -> float:
        """The planned time of one round: its cells' timed steps and the idles before them
        (idles are wall time the run takes too: Host Idle Recovery, 10.5 h of its ~13 h)."""
        return sum(step_seconds(c.workload) + (c.idle_before_s or 0.0) for c in self.cells)

    def time_bound(self) -> bool:
        """Whether its time budget, not its round limit, is what ends it at the latest."""
        return self.budget_seconds is not None and self.budget_seconds <= self.round_seconds() * self.max_rounds


@dataclass(frozen=True)
class Deferred:
    """A phase built when the run reaches it, from the finished phases' results (a queue-depth
    search's best QD; DIRTH's operating points). `build` gets each finished phase's samples
    by phase name and returns the phase and the decision that shaped it, or no phase where that
    decision is to measure nothing (a bisection step it cannot tell apart; the runner goes on).
    A resumed run builds it again from the stored results."""

    name: str
    describe: str  # what it will be built from, for the stored plan before it is built
    build: Callable[[Mapping[str, Sequence[Sample]]], tuple[Phase | None, Decision]]
    seconds: float = 0.0  # how long the built phase will measure, for the ETA (0: not known before)
    # The least it may measure, when what it is built from can make it smaller (DIRTH measures a
    # point Max/Mid/Min share once: 1 to 3 points); None: `seconds` exactly. The ETA before it is
    # built spans the two; the built phase's own cells give it once the run reaches it.
    least_seconds: float | None = None
    # Whether the phase it builds tracks steady state: the plan's rule text is written before the
    # phase is built, and must not promise a round limit to phases that run their own rounds
    # (a search, a bisection). The runner holds the built phase to it (run.runner.build_deferred).
    tracks: bool = False


@dataclass(frozen=True)
class Profile:
    """Enterprise/client settings and the optional quick (non-compliant) scaling."""

    name: Literal["enterprise", "client"] = "enterprise"
    spec: Literal["1.1", "2.0.2"] = "2.0.2"
    active_range: float = 1.0
    threads: int = 4
    queue_depth: int = 32
    write_cache: bool = False
    cell_seconds: float = 60.0
    precondition_factor: float = 2.0  # × user capacity (of the active range) for WIPC
    capacity_limit: int | None = None  # quick: test only this many bytes of the target
    # --capacity-limit as the user gave it ("512MiB"), "" when none was: the run names what scaled
    # it down in the user's words, and tells a limit the user gave from --quick's own 512 MiB
    capacity_limit_given: str = ""
    quick: bool = False
    max_rounds: int = 25
    strict_steady: bool = False
    wsat_capacity_multiple: float = 4.0  # Write Saturation stops at this × capacity written …
    wsat_max_seconds: float = 24 * 3600.0  # … or after this long, whichever comes first
    # RWSW Multi-WSAT / Individual Streams: steady state counts only after this × capacity of
    # workload writes (UNVERIFIED in the RWSW spec; 1× fills the drive once, so GC has begun)
    rwsw_min_write_multiple: float = 1.0
    # Any phase that stops at steady state: it counts only after this × capacity written since
    # the purge (steady.SteadyRule.min_write_multiple: a fresh drive's plateau is flat too)
    steady_min_write_multiple: float = 2.0
    # A test's own parameters as given with `--set NAME=VALUE` (text; each test declares and
    # parses its own, see iolab.core.testparams), sorted by name.
    settings: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # Stored as JSON lists in the manifest; a resumed run reads them back as tuples.
        object.__setattr__(self, "settings", tuple(sorted((str(k), str(v)) for k, v in (self.settings or ()))))
        if self.capacity_limit is not None and not self.quick and not self.capacity_limit_given:
            # a limit without --quick is always the user's (a Python caller's): named by its size
            object.__setattr__(self, "capacity_limit_given", size_option(int(self.capacity_limit)))
        # Every option is checked here, so a bad value fails before a run directory exists,
        # whether it came from the command line or a Python caller.
        if not _finite(self.cell_seconds) or not MIN_CELL_SECONDS <= self.cell_seconds <= MAX_CELL_SECONDS:
            raise _bad(
                "cell time",
                "--cell-time",
                self.cell_seconds,
                f"give a duration from {MIN_CELL_SECONDS * 1000:g} ms to {MAX_CELL_SECONDS / 3600:g} h (the PTS uses 60 s)",
                " s",
            )
        if not _whole(self.max_rounds) or not 1 <= self.max_rounds <= MAX_ROUNDS:
            raise _bad(
                "round limit",
                "--max-rounds",
                self.max_rounds,
                f"give a whole number of rounds from 1 to {MAX_ROUNDS:,} (the PTS uses 25)",
            )
        if not _finite(self.precondition_factor) or not 0 < self.precondition_factor <= MAX_MULTIPLE:
            raise _bad(
                "preconditioning factor",
                "--precondition-factor",
                self.precondition_factor,
                f"give a number greater than 0 and at most {MAX_MULTIPLE:,} (× the tested capacity; the PTS uses 2)",
            )
        if not _finite(self.wsat_capacity_multiple) or not 0 < self.wsat_capacity_multiple <= MAX_MULTIPLE:
            raise _bad(
                "Write Saturation capacity multiple",
                "--wsat-capacity-multiple",
                self.wsat_capacity_multiple,
                f"give a number greater than 0 and at most {MAX_MULTIPLE:,} (the PTS uses 4)",
            )
        if not _finite(self.rwsw_min_write_multiple) or not 0 <= self.rwsw_min_write_multiple <= MAX_MULTIPLE:
            raise _bad(
                "RWSW minimum writes",
                "--rwsw-min-writes",
                self.rwsw_min_write_multiple,
                f"give a number from 0 to {MAX_MULTIPLE:,} (× the tested capacity; default 1)",
            )
        if not _finite(self.wsat_max_seconds) or not self.cell_seconds <= self.wsat_max_seconds <= MAX_WSAT_SECONDS:
            raise _bad(
                "Write Saturation time limit",
                "--wsat-max-time",
                self.wsat_max_seconds,
                f"give a duration of at least one cell ({self.cell_seconds:g} s) and at most "
                f"{MAX_WSAT_SECONDS / 86400:,g} days (the PTS uses 24 h)",
                " s",
            )
        if not _finite(self.steady_min_write_multiple) or not 0 <= self.steady_min_write_multiple <= MAX_MULTIPLE:
            raise _bad(
                "steady-state minimum writes",
                "--steady-min-writes",
                self.steady_min_write_multiple,
                f"give a number from 0 to {MAX_MULTIPLE:,} (× the tested capacity; default 2)",
            )
        if self.capacity_limit is not None and (not _whole(self.capacity_limit) or self.capacity_limit < 1):
            raise _bad("capacity limit", "--capacity-limit", self.capacity_limit, "give a size greater than 0")
        if not _finite(self.active_range) or not 0 < self.active_range <= 1:
            # said as the user writes it (in percent, as given), and what is allowed
            shown = f"{given(self.active_range * 100)}%" if _finite(self.active_range) else repr(self.active_range)
            raise IolabError(
                f"active range (--active-range): {shown} is out of range; give a percentage of the target above 0% "
                "and at most 100% (enterprise uses 100%, client 75%). Nothing was run or written."
            )
        for name in ("threads", "queue_depth"):
            v = getattr(self, name)
            if not _whole(v) or v < 1:
                raise _bad(name.replace("_", " "), f"profile {name}", v, "give a whole number, at least 1")

    @property
    def compliant(self) -> bool:
        return not self.noncompliance() and self.capacity_limit is None

    def noncompliance(self) -> list[str]:
        why = []
        if self.quick:
            why.append("quick profile")
        if self.cell_seconds < 60:
            why.append(cell_time_text(self.cell_seconds))
        if self.precondition_factor < 2:
            why.append(f"preconditioning {self.precondition_factor:g}× capacity instead of 2×")
        return why + [f"{text} (the {self.name} profile: {own})" for _, text, own in self.own_settings() if own]

    def own_settings(self) -> list[tuple[str, str, str]]:
        return profile_settings(self.name, self.write_cache, self.active_range)

    def scaled_by(self) -> list[str]:
        return scaled_by(asdict(self))

    def limit_source(self) -> str:
        return limit_source(asdict(self))

    def rule(self) -> SteadyRule:
        return SteadyRule.of_profile(asdict(self))


# --quick's own capacity limit (suites.make_profile); a test's --quick copy may be larger
QUICK_CAPACITY = 512 * MiB


def step_seconds(w: Workload) -> float:
    return (w.duration_s or 0.0) + w.ramp_s  # a fill by bytes has no planned time


@dataclass(frozen=True)
class TestPlan:
    test: str  # 'iops', 'throughput', 'latency', 'wsat'
    title: str  # e.g. "IOPS"
    spec: str  # e.g. "PTS 2.0.2 (Enterprise)"
    profile: Profile
    phases: tuple[Phase | Deferred, ...]
    rule: SteadyRule
    capacity: int  # bytes addressed by the test (after any quick limit)
    parameters: tuple[tuple[str, str], ...] = field(default=())  # for the report's Test Parameters column
    notes: tuple[str, ...] = ()  # choices made where the spec is UNVERIFIED, printed in reports
    # The test's own parameters as the run used them (testparams.values, JSON types), stored
    # in the manifest so a report reads typed values, not the text of `parameters`.
    values: Mapping[str, Any] = field(default_factory=dict)
    # The profile options the plan is the same without (ignored_options below, set by
    # api/runs.planned), each with the value it is the same at (the profile's default): the run's
    # own evidence, kept in the manifest, so a comparison counts the run at that value.
    ignored_options: Mapping[str, Any] = field(default_factory=dict)

    def timed_seconds(self) -> tuple[float, float]:
        """(earliest, latest) time the plan's timed steps take, with their ramps and idles: a phase that
        stops at steady state runs between a window of rounds and its round limit; one that runs to a
        time budget runs to it; a write budget can end a phase after its first round. Steps with a
        byte budget (fills) are not in it: their time is the drive's speed. The one estimate behind
        every ETA iolab prints."""
        spans = [self.phase_seconds(ph) for ph in self.phases]
        return sum(a for a, _ in spans), sum(b for _, b in spans)

    def phase_seconds(self, ph: Phase | Deferred) -> tuple[float, float]:
        """(earliest, latest) time one phase's timed steps take (`timed_seconds`)."""
        if isinstance(ph, Deferred):  # its cells exist only once the phases before it ran
            return (ph.seconds if ph.least_seconds is None else ph.least_seconds), ph.seconds
        timed = sum(step_seconds(w) for w in ph.precondition)
        per_round = ph.round_seconds()
        most = ph.budget_seconds if ph.budget_seconds is not None and ph.time_bound() else per_round * ph.max_rounds
        if ph.stop_on_steady:
            least = min(most, per_round * self.rule.window)
        elif ph.budget_write_bytes is not None:
            least = min(most, per_round)
        else:
            least = most
        return timed + least, timed + most

    def essence(self) -> tuple[Any, ...]:
        """What the runner runs: the phases, the tested capacity, the typed parameters, the
        steady-state rule where a phase stops on steady state, and the two profile settings read
        from the plan itself (the runner sets the drive's write cache, the phase end judges the
        active range: runner.py, phaseend.py). `parameters` and `notes` are text for the report.
        A `Deferred` phase is its builder, never equal to another plan's."""
        steady = any(not isinstance(p, Phase) or p.stop_on_steady for p in self.phases)
        rule = self.rule if steady else None
        if rule is not None and all(isinstance(p, Phase) for p in self.phases):
            # a built phase stops at its own max_rounds (in `phases`); the rule's limit is read only
            # for a phase built during the run, so a plan whose phases keep their own limits (the
            # RWSW saturation phases run to their WSAT budgets) is the same at any --max-rounds
            rule = replace(rule, max_rounds=0)
        return (
            self.phases,
            self.capacity,
            dict(self.values),
            rule,
            self.profile.write_cache,
            self.profile.active_range,
        )

    def __post_init__(self) -> None:
        # What the options allow alone is checked by Profile; what they allow on this target
        # (e.g. a capacity limit smaller than one block) only shows once the plan exists.
        for phase in self.phases:
            if isinstance(phase, Phase):
                self.check_phase(phase)

    def check_phase(self, phase: Phase) -> None:
        """Raise IolabError unless `phase` can run within this plan (also for a built phase)."""
        where = f"{self.title}, phase {phase.name!r}"
        if not phase.cells:
            raise IolabError(f"{where}: has no cells to measure.")
        if not _whole(phase.max_rounds) or phase.max_rounds < 1:
            raise IolabError(f"{where}: round limit {phase.max_rounds!r}; at least 1 round is needed.")
        for budget, what in ((phase.budget_write_bytes, "write budget"), (phase.budget_seconds, "time budget")):
            if budget is not None and (not _finite(budget) or budget <= 0):
                raise IolabError(f"{where}: {what} {budget!r}; it must be greater than 0.")
        for w in (*phase.precondition, *(c.workload for c in phase.cells)):
            _check_workload(w, self.capacity, where)
        for c in phase.cells:
            if c.idle_before_s is not None and (
                not _finite(c.idle_before_s) or not 0 <= c.idle_before_s <= MAX_CELL_SECONDS
            ):
                raise IolabError(
                    f"{where}: cell {c.key!r} idles {c.idle_before_s!r} s before it; give 0 to "
                    f"{MAX_CELL_SECONDS / 3600:g} h."
                )


def _check_workload(w: Workload, capacity: int, where: str) -> None:
    largest = max(s.block_size for s in w.streams)
    if capacity < largest:
        raise IolabError(
            f"{where}: the tested capacity of {capacity:,} B is smaller than one {largest:,} B block of "
            # the range is cut by the target's ?size=, --active-range or --capacity-limit: "Raise
            # --capacity-limit" was no help for `/dev/loop1?size=1000B`
            f"{w.label()!r}. Test more of the target (its ?size=, --active-range, --capacity-limit) or a "
            "larger target. Nothing was run or written."
        )
    if w.duration_s is not None and (
        not _finite(w.duration_s) or not MIN_CELL_SECONDS <= w.duration_s <= MAX_CELL_SECONDS
    ):
        raise IolabError(
            f"{where}: workload {w.label()!r} lasts {w.duration_s!r} s; "
            f"it must last {MIN_CELL_SECONDS * 1000:g} ms to {MAX_CELL_SECONDS / 3600:g} h."
        )
    if w.bytes_budget is not None and (not _whole(w.bytes_budget) or w.bytes_budget < largest):
        raise IolabError(
            f"{where}: workload {w.label()!r} has a byte budget of {w.bytes_budget!r} B; "
            f"it must cover at least one {largest:,} B block."
        )


# The profile's own name, PTS revision and quick scaling decide its defaults (suites.make_profile):
# they are what an option is compared with, never an option a plan is probed without.
# The text of --capacity-limit names the option; the limit itself is what a plan is probed without.
_DEFINING = ("name", "spec", "quick", "capacity_limit_given")


def ignored_options(
    build: Callable[[Profile], TestPlan],
    profile: Profile,
    defaults: Profile,
    keys: Sequence[str] | None = None,
    plan: TestPlan | None = None,
) -> dict[str, Any]:
    """The fields of `profile` (`keys`, else all but its name, revision and quick scaling) that
    differ from `defaults` and change nothing in the plan `build` makes of it (its essence), each
    with its value in `defaults`: the plan is the same at it. `plan`: build(profile), when built."""
    names = keys if keys is not None else [f for f in Profile.__dataclass_fields__ if f not in _DEFINING]
    given = [k for k in names if getattr(profile, k) != getattr(defaults, k)]
    if not given:
        return {}
    used = (plan if plan is not None else build(profile)).essence()
    out = {}
    for k in given:
        try:
            same = build(replace(profile, **{k: getattr(defaults, k)})).essence() == used
        except IolabError:  # no plan without it (the default does not fit with the rest): it is used
            same = False
        if same:
            out[k] = getattr(defaults, k)
    return out


# The profile fields the options above set, with their flags (api/unused.py names the ones a test ignores;
# a comparison names the settings two runs differ in by them)
PROFILE_FLAGS = {
    "write_cache": "--write-cache",
    "active_range": "--active-range",
    "cell_seconds": "--cell-time",
    "max_rounds": "--max-rounds",
    "capacity_limit": "--capacity-limit",
    "precondition_factor": "--precondition-factor",
    "strict_steady": "--strict-steady",
    "wsat_capacity_multiple": "--wsat-capacity-multiple",
    "wsat_max_seconds": "--wsat-max-time",
    "rwsw_min_write_multiple": "--rwsw-min-writes",
    "steady_min_write_multiple": "--steady-min-writes",
}


def option_text(flag: str, value: Any) -> str:
    """A profile option's value as its flag takes it (the plan holds seconds, fractions, bytes):
    --wsat-max-time 86400.0 is '24h', --active-range 1.0 '100%', --write-cache False 'off'."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if flag in ("--cell-time", "--wsat-max-time"):
        return duration_option(value)
    if flag == "--active-range":
        return f"{given(100 * value)}%"
    if flag == "--capacity-limit":
        return size_option(int(value))
    return given(value) if isinstance(value, (int, float)) else str(value)
