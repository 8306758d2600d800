"""What the terminal's tables (textreport.py) and the report's pages (report/) say of a run in
the same words: a window's rounds, a purge recorded again by a resume, the verdict of a phase
that runs to its budget, the title of the specification it follows. Here, beside both, so that
`iolab show` and the end of every run (and the test declarations, which name their
specification's title) print them without importing the report's pages (their package, its
document model and its fonts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iolab.core.steady import STEADY_NOT_EVALUATED, STEADY_NOT_REACHED, STEADY_REACHED, SteadyState

# the specifications' titles: each test declares its own; a stored run whose test this process
# does not know is titled by its plan's spec
SPEC_HEADINGS = {
    "PTS": "Solid State Storage Performance Test Specification",
    "RWSW": "Real World Storage Workload Performance Test Specification",
}
# a phase that tracks steady state but runs to its budget (Write Saturation): its verdict is
# reported, not a stop
INFO_STEADY_WORDS: dict[SteadyState, str] = {
    STEADY_REACHED: "for information: steady",
    STEADY_NOT_REACHED: "for information: not steady",
    STEADY_NOT_EVALUATED: "for information: not evaluated",
}
# ... in the short and several-phase forms: never "SS NOT ACHIEVED", which the banner (rightly
# absent for such a phase) would otherwise contradict (XSR's groups said so on every page)
SHORT_INFO_STEADY_WORDS: dict[SteadyState, str] = {
    STEADY_REACHED: "steady, for info",
    STEADY_NOT_REACHED: "not steady, for info",
    STEADY_NOT_EVALUATED: "not evaluated, for info",
}


def rounds_text(rounds: tuple[int, ...]) -> str:
    """Rounds as spans: a window that skips a partial interval reads "rounds 1–3, 5", never "1–5"."""
    if not rounds:
        return "no complete round"
    if len(rounds) == 1:
        return f"round {rounds[0]}"
    spans: list[list[int]] = []
    for r in rounds:
        if spans and r == spans[-1][-1] + 1:
            spans[-1].append(r)
        else:
            spans.append([r])
    return "rounds " + ", ".join(f"{s[0]}–{s[-1]}" if len(s) > 1 else f"{s[0]}" for s in spans)


def once_each(rows: Sequence[Any]) -> list[tuple[Any, str]]:
    """Each row once, in the order first seen, with what to add after it: a resumed run that ran
    a phase again from its purge (a simulated drive's always does) records the same purge twice,
    said once with how many times, on screen and in the report alike."""
    seen: dict[Any, int] = {}
    for row in rows:
        seen[row] = seen.get(row, 0) + 1
    again = "the phase ran again from its purge when the run was resumed"
    return [(row, f" ({n} times: {again})" if n > 1 else "") for row, n in seen.items()]
