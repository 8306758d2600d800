"""A steady-state determination table (sections.measurement_window_pages) and its words: each
measured excursion against its bound, and the variable's verdict beside its phase's."""

from __future__ import annotations

from iolab.core.steady import (
    STEADY_NOT_APPLICABLE,
    STEADY_NOT_EVALUATED,
    STEADY_NOT_REACHED,
    STEADY_REACHED,
    SteadyState,
    VariableVerdict,
)
from iolab.core.units import denoise, num
from iolab.figures.summary import PhaseSummary
from iolab.pages.report.model import Table

# the 'SS rounds' entry's words for each phase state (PhaseSummary.steady_state): in full for a
# run of one phase, short for several phases and the comparison's compact column ("n/a" is for
# a phase that tracks nothing: one never judged is "not evaluated", as its banner says)
STEADY_WORDS: dict[SteadyState, str] = {
    STEADY_REACHED: "steady state reached",
    STEADY_NOT_REACHED: "STEADY STATE NOT ACHIEVED",
    STEADY_NOT_EVALUATED: "steady state not evaluated",
    STEADY_NOT_APPLICABLE: "steady state not applicable",
}
SHORT_STEADY_WORDS: dict[SteadyState, str] = {
    STEADY_REACHED: "SS",
    STEADY_NOT_REACHED: "SS NOT ACHIEVED",
    STEADY_NOT_EVALUATED: "SS not evaluated",
    STEADY_NOT_APPLICABLE: "SS n/a",
}


def phase_steady_words(ph: PhaseSummary, short: bool) -> str:
    """A judged phase's verdict: one whose window passes the rule's numbers but was not accepted
    says so, never "NOT ACHIEVED" (its own report's header, a comparison's drives)."""
    if ph.not_accepted() is not None:
        return "window passes, NOT accepted" if short else "window passes the rule, STEADY STATE NOT ACCEPTED"
    return (SHORT_STEADY_WORDS if short else STEADY_WORDS)[ph.steady_state]


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


def steady_table(
    v: VariableVerdict,
    rule_strict: bool,
    decides: bool = True,
    phase_steady: bool | None = True,
    refused: str | None = None,
) -> Table:
    pr = f"{v.range_allowed / v.average:.0%}" if v.average else "—"
    ps = f"{v.fit_allowed / v.average:.0%}" if v.average else "—"
    rows: tuple[tuple[str, str], ...] = (
        ("Measurement window", f"rounds {v.rounds[0]}–{v.rounds[-1]}"),
        ("Values (y)", ", ".join(num(x) for x in v.values)),
        ("Average", num(v.average)),
        (f"Allowed maximum data excursion ({pr} of average)", num(v.range_allowed)),
        (
            "Measured data excursion (max − min)",
            judged(v.range_measured, v.range_allowed, v.range_ok, rule_strict),
        ),
        (f"Allowed maximum slope excursion ({ps} of average)", num(v.fit_allowed)),
        (
            "Measured slope excursion (|m| × window span)",
            judged(denoise(v.fit_excursion, v.average), v.fit_allowed, v.slope_ok, rule_strict),
        ),
        ("Least-squares linear fit", v.formula() + " (R = round)"),
        ("Verdict", variable_verdict(v, phase_steady, refused)),
    )
    if not decides:
        rows += (("Role", "shown only: the phase's steady state is decided by its other tracking variables"),)
    return Table(
        f"Steady-state determination: {v.name}",
        ("item", "value"),
        rows,
        "Source: results.db table steady (values recorded by the runner at the end of the last evaluated round).",
    )
