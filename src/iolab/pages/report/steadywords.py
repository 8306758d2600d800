"""The words of a steady-state determination table's verdicts (sections.steady_table): each
measured excursion against its bound, and the variable's verdict beside its phase's."""

from __future__ import annotations

from iolab.core.steady import VariableVerdict
from iolab.core.units import num


def variable_verdict(v: VariableVerdict, phase_steady: bool | None, refused: str | None = None) -> str:
    """The variable's verdict, never "steady state" for a phase that is not: a window can pass
    the range and slope rule and still be refused (too little written since the purge, no
    garbage collection at work); `refused` (PhaseSummary.not_accepted) says why."""
    if not v.steady:
        return "NOT steady"
    if phase_steady is True:
        return "steady state"
    return passes_but(refused)


def passes_but(refused: str | None) -> str:
    """A window that passes the rule's numbers but was not accepted as steady state, and why:
    it read "STEADY STATE NOT ACHIEVED" as if its range or slope had failed."""
    why = f": {refused}" if refused else " (see the phase's stop reason)"
    return f"the window passes the rule's range and slope, but was NOT accepted as steady state{why}"


def judged(measured: float, allowed: float, ok: bool, strict: bool) -> str:
    """'4,551: FAIL (> 3,723 allowed)': it read '4,551 — FAIL (≤)', a dash (iolab's 'not
    measured') beside a verdict, and a '≤' that named no bound."""
    rel = ("<" if strict else "≤") if ok else ("≥" if strict else ">")
    return f"{num(measured)}: {'pass' if ok else 'FAIL'} ({rel} {num(allowed)} allowed)"
