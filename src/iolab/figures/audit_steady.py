"""The stored steady-state verdict against the run's own evidence, for the self-audit's
steady-evidence invariant (audit_checks.steady_evidence).

A phase's verdict (phases.steady) is the runner's reading of its steady-state table, the table
its reading of the tracked cells. Both are checked here with the code the runner uses
(core/steady.evaluate over the history core/steady.stored_history builds from the phase's stored
cells, as run/resume.py does; a tracked cell without its value fails the check, naming it): the
table must be what the cells give, and the verdict what the table says, either way: a phase
stored as steady over a window that fails the rule, and one stored as not steady over a window
that passes with nothing in the run to doubt it (`Doubts`: what phaseend.settle turns a passing
window down for), each fail with the variables and numbers that contradict it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.core.steady import SteadyRule, SteadyVerdict, UnmeasuredValue, VariableVerdict, evaluate, stored_history
from iolab.store.runstore import PhaseRow


@dataclass(frozen=True)
class Recheck:
    """A phase's stored steady-state table and the verdict its stored cells give."""

    table: tuple[VariableVerdict, ...]
    shown_only: frozenset[str]
    verdict: SteadyVerdict | None  # recomputed; None: the cells fill no window (or lack a value)
    unmeasured: str = ""  # the tracked cell stored without its variable's value, which no verdict is made without

    @property
    def table_steady(self) -> bool:
        return bool(self.table) and all(v.steady for v in self.table if v.name not in self.shown_only)

    @property
    def window(self) -> tuple[int, ...]:
        return self.table[0].rounds if self.table else ()


def recheck(
    planned: dict[str, Any], profile: dict[str, Any], table: Sequence[VariableVerdict], cells: Sequence[CellRow]
) -> Recheck:
    """The verdict the phase's stored cells give over the rounds up to its table's window, with
    the rule the run used (the profile's strict or inclusive comparison)."""
    tracking = list(planned.get("tracking") or ())
    shown_only = frozenset(t["name"] for t in tracking if t.get("decides") is False)
    last = table[0].rounds[-1] if table and table[0].rounds else None
    try:
        history = stored_history(((t["name"], t["cell_key"], t["metric"]) for t in tracking), cells, last)
    except UnmeasuredValue as e:
        return Recheck(tuple(table), shown_only, None, str(e))
    rule = SteadyRule.of_profile(profile)
    verdict = evaluate(history, rule, shown_only) if history else None
    return Recheck(tuple(table), shown_only, verdict)


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def disagreements(name: str, r: Recheck) -> list[str]:
    """Where the stored table is not what the stored cells give."""
    if not r.table:
        return []
    w = f"{r.window[0]}-{r.window[-1]}" if r.window else "?"
    if r.unmeasured:
        return [f"{name}: its steady-state verdict cannot be checked: {r.unmeasured}"]
    if r.verdict is None:
        return [f"{name}: its steady-state table has a window (rounds {w}) its stored cells do not fill"]
    got = {v.name: v for v in r.verdict.variables}
    out = []
    for v in r.table:
        mine = got.get(v.name)
        if mine is None or mine.rounds != v.rounds:
            out.append(
                f"{name}: the steady-state table's {v.name} is over rounds {w}, its stored cells give "
                + (f"rounds {mine.rounds[0]}-{mine.rounds[-1]}" if mine else "no such variable")
            )
            continue
        for rnd, a, b in zip(v.rounds, v.values, mine.values):
            if not _same(a, b):
                out.append(f"{name}: the steady-state table's {v.name} is {a:,.4g} in round {rnd}, its cell {b:,.4g}")
                break
        else:
            if (v.range_ok, v.slope_ok) != (mine.range_ok, mine.slope_ok):
                out.append(
                    f"{name}: the steady-state table says {v.name} {'passes' if v.steady else 'fails'} over "
                    f"rounds {w}, its values {'pass' if mine.steady else 'fail'} the rule ({_numbers(mine)})"
                )
    return out


def _numbers(v: VariableVerdict) -> str:
    avg = v.average or float("nan")
    return (
        f"range {v.range_measured / avg:.1%} of the average, at most {v.range_allowed / avg:.0%}; "
        f"fit excursion {v.fit_excursion / avg:.1%}, at most {v.fit_allowed / avg:.0%}"
    )


def failing(r: Recheck) -> str:
    """The deciding variables that fail the rule by their stored cells or by the table, with the
    cells' numbers where those fail (a table that says fail over passing numbers says so)."""
    found: dict[str, str] = {}
    for v in r.verdict.variables if r.verdict else ():
        if v.name not in r.shown_only and not v.steady:
            found[v.name] = f"{v.name}: {_numbers(v)}"
    for v in r.table:
        if v.name not in r.shown_only and not v.steady and v.name not in found:
            found[v.name] = f"{v.name}: marked failing in the table ({_numbers(v)})"
    return "; ".join(found.values())


def verdict_contradictions(p: PhaseRow, r: Recheck, doubts: Sequence[str]) -> list[str]:
    """The stored verdict against the table and the cells. `doubts`: what in the run says the
    drive had not left fresh-out-of-box (a passing window is then stored as not steady)."""
    if p.steady is None or not r.table or r.unmeasured:  # an unmeasured value is disagreements' finding
        return []
    w = f"rounds {r.window[0]}-{r.window[-1]}"
    cells_pass = r.verdict is not None and r.verdict.steady
    # a table that disagrees with its cells is disagreements' finding: here either failing fails
    # a verdict of steady, and only both passing contradicts one of not steady
    if p.steady and not (r.table_steady and cells_pass):
        return [f"{p.name}: stored as steady, but its window ({w}) fails the rule: {failing(r)}"]
    if not p.steady and r.table_steady and cells_pass and not doubts:
        return [
            f"{p.name}: stored as not steady, but its window ({w}) passes the rule and nothing in the run "
            "says the drive had not left fresh-out-of-box (written since the purge, erases, tested range)"
        ]
    return []
