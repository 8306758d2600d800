"""Whether each round results.db marks complete holds the cells the run's own plan says it
ran: a round is marked complete (rounds.complete = 1) only after every cell of it was stored
(the runner, and resume, which leaves a round it cannot fill incomplete), so a complete round
with a cell missing had its rows deleted after the run wrote them. Its figures would silently
rest on fewer rounds (a window mean of 4 of its 5 rounds, named "rounds 1–5"): it is refused,
as a value no run stores is (rowcheck.py, with the other tables' rows).

The plan is the manifest's (run/runstart.plan_summary: each phase's cell keys, in the order the
runner measures them as ordinals 0, 1, …). One round may legitimately hold fewer: the last
complete round of a phase with a stop rule, which the rule's decision ended after the cell it
judged (run/runner.py), still ordinals 0 … k-1 with none missing between. A phase the manifest
holds only as deferred (never built) names no cells and is not checked; an incomplete round
(an interrupted run's last, before resume) is no complete one and is not checked either."""

from __future__ import annotations

import sqlite3
from typing import Any

_COMPLETE = "SELECT phase, round FROM rounds WHERE complete=1 AND round>0 ORDER BY phase, round"
_STORED = (
    "SELECT c.phase, c.round, c.ordinal FROM cells c JOIN rounds r ON r.phase=c.phase AND r.round=c.round "
    "AND r.complete=1 WHERE c.kind='measure' AND c.round>0"
)


def round_gaps(db: sqlite3.Connection, plan: dict[str, Any]) -> list[str]:
    """Each complete round that lacks a planned cell, in words (empty: none does)."""
    planned = {
        p["name"]: p
        for p in plan.get("phases") or ()
        if isinstance(p, dict) and isinstance(p.get("cells"), list) and p["cells"]
    }
    stored: dict[tuple[str, int], set[int]] = {}
    for phase, rnd, ordinal in db.execute(_STORED):
        stored.setdefault((phase, rnd), set()).add(ordinal)
    complete = [(ph, r) for ph, r in db.execute(_COMPLETE) if ph in planned]
    last = dict(complete)  # each phase's last complete round (ordered by round)
    out = []
    for ph, rnd in complete:
        keys = planned[ph]["cells"]
        have = stored.get((ph, rnd), set())
        # a stop rule's decision may end the phase's last round early, after its first cells
        may_end_early = "stop_rule" in planned[ph] and rnd == last[ph]
        upto = max(have) + 1 if may_end_early and have else len(keys)
        missing = [i for i in range(min(upto, len(keys))) if i not in have]
        if missing or not have:
            names = ", ".join(repr(keys[i]) for i in missing[:4]) + (" …" if len(missing) > 4 else "")
            out.append(
                f"phase {ph!r} round {rnd} is marked complete but holds {len(have & set(range(len(keys))))} of its "
                f"{len(keys)} planned cells (missing: {names or 'all'})"
            )
    return out


__all__ = ["round_gaps"]
