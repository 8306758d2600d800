"""The decisions a resumed run finds, or makes again, from what the stopped run stored. The runner
stores a round and then the decision its stop rule made in it, and a deferred phase's decision and
then the phase's start: a run killed between the two writes left one without the other."""

from __future__ import annotations

import json
from collections.abc import Sequence

from iolab.core.cellschema import CellRow
from iolab.core.decide import Decision, sample_of_row
from iolab.core.plan import Phase
from iolab.figures.phaseend import Ending
from iolab.store.manifest import Manifest


def stop_rule_ending(ph: Phase, cells: Sequence[CellRow]) -> Ending | None:
    """How the phase's stop rule ended it in its stored cells, remade as the runner made it: checked
    after each cell in the order measured (the runner's samples are the phase's stored cells, then
    each new one). The same cells give the same decision, word for word, so one lost between its
    round and its own write is made again as it was; None: the rule decided nothing there."""
    if ph.stop_rule is None:
        return None
    samples = [sample_of_row(c) for c in cells]
    for k in range(1, len(samples) + 1):
        if (d := ph.stop_rule.check(ph.name, samples[:k])) is not None:
            return Ending(f"{d.rule['name']}: {d.outcome}", d)  # the runner's stop reason for it
    return None


def kept_build(m: Manifest, decision: Decision, built: dict, ordinal: int) -> bool:
    """Whether the decision that builds a deferred phase was stored before the run was stopped (its
    phase not yet begun) and stands: made again from the same stored results, it is the stored one,
    and the phase the same as the stored plan's, so the stored decision is kept and not stored twice.
    A stored one that differs (another iolab builds the phase otherwise) goes to the notes,
    superseded, as a phase run again supersedes its decision (resume._supersede_decisions)."""
    stored = next((d for d in m.decisions if d.get("phase") == decision.phase and d.get("round") is None), None)
    if stored is None:
        return False
    # as the manifest holds them (JSON: a tuple is read back as a list)
    same = _stored_form(decision.record()) == stored and _stored_form(built) == m.plan["phases"][ordinal]
    if not same:
        m.decisions.remove(stored)
        m.notes.append(
            f"{decision.phase}: superseded decision (this iolab builds the phase otherwise from the same results): "
            f"{stored.get('outcome')}"
        )
    return same


def _stored_form(d: dict) -> dict:
    return json.loads(json.dumps(d))
