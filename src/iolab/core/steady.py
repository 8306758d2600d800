"""SNIA steady state (PTS §2.1.24).

For a tracking variable y over the measurement window of the last `window` rounds R:

    avg   = Σy / n
    range = max(y) − min(y)                       (data excursion)
    y ≈ m·R + b                                   (least squares)
    fit excursion = |m| · (R_last − R_first)      (max − min of the fit line in the window)
    steady  ⇔  range ≤ 0.20·avg  and  fit excursion ≤ 0.10·avg

Inclusive vs strict: PTS 1.1 words it "no more than 20 % / within 10 %" (≤) and one public
implementation uses ≤; another quotes 2.0.2 as "less than" (<). iolab defaults to inclusive
(≤) and `SteadyRule.strict=True` switches to <. The choice is printed in every report. With
real measurements the two differ only when a value lands exactly on the limit.

A test with several tracking variables (2.0.2 IOPS tracks three) is steady only when every
variable passes over the same window. A variable that is only shown (Throughput's read MB/s)
gets its own verdict over that window but does not decide.

A flat window alone does not say the drive has left fresh-out-of-box: a fresh drive writes at a
flat, fast plateau until its free blocks run out, and that plateau passes the rule. So steady
state is accepted only once `min_write_multiple` × the tested capacity has been written since
the last purge (the phase's preconditioning and the phases before it since that purge count).
The PTS does not state such a minimum (UNVERIFIED); the default, 2×, is its WIPC volume, and it
is printed with the rule in every report. The other evidence that the drive left
fresh-out-of-box (a simulated drive's own erase counter, a tested range that is the drive's)
is phaseend.py's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.core.units import counted, denoise, num

# A phase's steady state, and a run's from its phases' (run_steady_state): the words the --json
# document's `steady_state` uses (pages/outcome_schema.py), declared here once so every page,
# terminal line and record reads one value instead of deciding from `steady` and `tracks` itself.
SteadyState = Literal["reached", "not-reached", "not-evaluated", "not-applicable"]
STEADY_REACHED: SteadyState = "reached"
STEADY_NOT_REACHED: SteadyState = "not-reached"
# the phase tracks steady state but its rounds never filled a window (or it never ran)
STEADY_NOT_EVALUATED: SteadyState = "not-evaluated"
# the phase tracks no steady state (QoS rounds, searches, ramps): no verdict was ever due
STEADY_NOT_APPLICABLE: SteadyState = "not-applicable"
STEADY_STATES: tuple[SteadyState, ...] = (
    STEADY_REACHED,
    STEADY_NOT_REACHED,
    STEADY_NOT_EVALUATED,
    STEADY_NOT_APPLICABLE,
)
# The states in which a run did not show steady state, which `--require-steady` fails (run, show,
# resume, check): one that was judged and failed, and one that was never judged (a window never
# filled is no evidence of steady state). not-applicable passes: no verdict was ever due.
STEADY_NOT_SHOWN: frozenset[SteadyState] = frozenset((STEADY_NOT_REACHED, STEADY_NOT_EVALUATED))


def phase_verdict(stored: bool | None, judged: bool) -> bool | None:
    """A phase's verdict from its stored end (`stored`: None until the phase ends) and whether
    any of its windows was judged (steady-state rows stored after a round). A phase still open,
    in a run stopped or still running, whose windows were judged has not reached steady state,
    at least not yet: its windows were judged and none was accepted (an accepted one ends the
    phase). None only when nothing was judged: "not evaluated" says no window was ever full,
    which a run stopped after its seventh round must not claim (it said so on every page)."""
    if stored is None and judged:
        return False
    return stored


def phase_steady_state(steady: bool | None, tracks: bool) -> SteadyState:
    """A phase's state from its stored verdict (None: none stored) and whether its plan gave it
    tracking variables: a phase without a verdict that tracks steady state was not evaluated,
    one that tracks none has nothing to evaluate."""
    if steady is None:
        return STEADY_NOT_EVALUATED if tracks else STEADY_NOT_APPLICABLE
    return STEADY_REACHED if steady else STEADY_NOT_REACHED


def run_steady_state(states: Iterable[SteadyState]) -> SteadyState:
    """A run's state from its phases': not-reached if one failed, else not-evaluated if one
    was never judged, else reached if one was judged, else not-applicable (none tracks it)."""
    seen = set(states)
    for state in (STEADY_NOT_REACHED, STEADY_NOT_EVALUATED, STEADY_REACHED):
        if state in seen:
            return state
    return STEADY_NOT_APPLICABLE


@dataclass(frozen=True)
class SteadyRule:
    window: int = 5
    range_limit: float = 0.20  # of the window average
    slope_limit: float = 0.10  # fit-line excursion, of the window average
    max_rounds: int = 25
    strict: bool = False  # False: ≤ (inclusive, default); True: <
    min_write_multiple: float = 2.0  # × tested capacity written since the purge before steady state counts

    def describe(self, limit: str | None = None, since: str = "since the purge") -> str:
        """The rule in words; `limit` says how the run's phases end (default: the round limit),
        `since` what the minimum is counted from (a run with --purge none: its start)."""
        cmp = "<" if self.strict else "≤"
        limit = limit or f"at most {counted(self.max_rounds, 'round')}"
        return (
            f"{self.window}-round window; range {cmp} {self.range_limit:.0%} of average; "
            f"fit-line excursion {cmp} {self.slope_limit:.0%} of average; "
            f"{limit}; comparison {'strict' if self.strict else 'inclusive'}; "
            f"accepted only after {self.minimum_text()} is written {since}"
        )

    @classmethod
    def of_profile(cls, profile: Mapping[str, Any]) -> SteadyRule:
        """The rule a run was told to use, from its profile (plan.Profile, or the dict a run's
        manifest stores): what `--strict-steady`, `--max-rounds` and the write minimum set. Every
        verdict iolab makes of a stored run, not only the rounds', reads the run's rule here."""
        return cls(
            max_rounds=int(profile.get("max_rounds", cls.max_rounds)),
            strict=bool(profile.get("strict_steady", False)),
            min_write_multiple=float(profile.get("steady_min_write_multiple", cls.min_write_multiple)),
        )

    def minimum_text(self) -> str:
        return f"{self.min_write_multiple:g}× the tested capacity"

    def min_write_bytes(self, capacity: int) -> int:
        if not self.min_write_multiple:
            return 0
        return int(self.min_write_multiple * capacity)


@dataclass(frozen=True)
class VariableVerdict:
    """The steady-state table row of one tracking variable over one window."""

    name: str
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    range_measured: float
    range_allowed: float
    slope: float  # m, units of y per round
    intercept: float  # b
    fit_excursion: float
    fit_allowed: float
    range_ok: bool
    slope_ok: bool

    @property
    def steady(self) -> bool:
        return self.range_ok and self.slope_ok

    def formula(self) -> str:
        slope = denoise(self.slope, self.average)
        sign = "+" if self.intercept >= 0 else "−"
        return f"y = {num(slope, trim=True)}·R {sign} {num(abs(self.intercept), trim=True)}"


@dataclass(frozen=True)
class SteadyVerdict:
    steady: bool
    window: tuple[int, ...]
    variables: tuple[VariableVerdict, ...]


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept, written exactly as in the spec."""
    n = len(xs)
    sx, sy = sum(xs), sum(ys)
    sxx = sum(x * x for x in xs)
    sxy = sum(x * y for x, y in zip(xs, ys))
    den = n * sxx - sx * sx
    if den == 0:
        raise ValueError("a fit needs at least two distinct rounds")
    m = (n * sxy - sx * sy) / den
    b = (sy * sxx - sx * sxy) / den
    return m, b


def check_variable(name: str, rounds: list[int], values: list[float], rule: SteadyRule) -> VariableVerdict:
    """Apply the rule to one variable over exactly the rounds given (the window)."""
    if len(rounds) != len(values) or len(rounds) < 2:
        raise ValueError("need matching rounds and values, at least two")
    n = len(values)
    avg = sum(values) / n
    rng = max(values) - min(values)
    m, b = fit_line([float(r) for r in rounds], values)
    fit_exc = abs(m) * (max(rounds) - min(rounds))
    range_allowed = rule.range_limit * avg
    fit_allowed = rule.slope_limit * avg

    def ok(measured: float, allowed: float) -> bool:
        if avg <= 0:  # nothing measured (e.g. zero IOPS) is never steady
            return False
        return measured < allowed if rule.strict else measured <= allowed

    return VariableVerdict(
        name=name,
        rounds=tuple(rounds),
        values=tuple(values),
        average=avg,
        range_measured=rng,
        range_allowed=range_allowed,
        slope=m,
        intercept=b,
        fit_excursion=fit_exc,
        fit_allowed=fit_allowed,
        range_ok=ok(rng, range_allowed),
        slope_ok=ok(fit_exc, fit_allowed),
    )


def evaluate(
    history: dict[str, list[tuple[int, float]]], rule: SteadyRule, shown_only: Collection[str] = ()
) -> SteadyVerdict | None:
    """Verdict over the last `rule.window` rounds common to every variable; None if too few.

    `history` maps a tracking variable's name to its (round, value) pairs in round order; the
    variables named in `shown_only` get their verdict but do not decide the phase's.
    """
    if not history:
        return None
    common = set.intersection(*({r for r, _ in pts} for pts in history.values()))
    window = sorted(common)[-rule.window :]
    if len(window) < rule.window:
        return None
    verdicts = []
    for name, pts in history.items():
        by_round = dict(pts)
        verdicts.append(check_variable(name, window, [by_round[r] for r in window], rule))
    steady = all(v.steady for v in verdicts if v.name not in shown_only)
    return SteadyVerdict(steady, tuple(window), tuple(verdicts))


class UnmeasuredValue(IolabError):
    """A tracked cell is stored without the value its variable tracks: no verdict can be made
    from the stored cells (the runner refuses such a round as it measures it, runner.metric_of)."""


def stored_history(
    tracking: Iterable[tuple[str, str, str]], cells: Iterable[CellRow], last: int | None = None
) -> dict[str, list[tuple[int, float]]]:
    """Each tracking variable's (round, value) pairs from a phase's stored cells, as the runner
    kept them: `tracking` is (name, cell_key, metric) per variable; an interval the budget ended
    (partial) is no window round; rounds after `last` are left out. A cell without the value is
    never counted as 0 (a made-up value can make a window look steady or not): UnmeasuredValue
    names it."""
    pairs = list(cells)
    history: dict[str, list[tuple[int, float]]] = {}
    for name, key, metric in tracking:
        history[name] = []
        for c in pairs:
            if c.cell_key != key or c.partial or (last is not None and c.round > last):
                continue
            v = c.metric(metric)
            if v is None:
                raise UnmeasuredValue(
                    f"{c.phase} round {c.round}: tracking metric {metric} was not measured in cell {c.cell_key} "
                    "(no IOs in that direction?)"
                )
            history[name].append((c.round, float(v)))
    return history
