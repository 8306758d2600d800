"""`iolab resume` of a run stopped in a phase built from its results (DIRTH's operating points)
that this iolab builds differently from the phase the run stored: a run stored by an iolab that
measured MidIOPS on Min's point a second time, resumed by one that measures that point once.

Resume matches a round's stored cells to the phase's cells by their order in the round, so a
round begun under the old layout (Max, Mid, Min) could be taken as complete under the new one
(Max, Min), Mid's cells standing where Min's belong. Instead what the phase measured is set
aside (kept as 'interrupted'): the phase then runs again from its start, built and decided
again by the runner, so its stored plan and decision are the phase as it runs."""

from __future__ import annotations

import json

from iolab.core.plan import Deferred, TestPlan
from iolab.run.runner import build_deferred, round_prefixes
from iolab.run.runstart import phase_summary
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore


def set_aside_rebuilt(store: RunStore, plan: TestPlan, notes: list[str]) -> None:
    """When the first phase of `plan` the run began and did not end (where it goes on) is a
    deferred phase this iolab builds from the stored results otherwise than the run stored it:
    set its rounds aside and say so in `notes`. A phase after that one is built as the runner
    reaches it (a resume stopped on its way back to it left it begun; what it is built from
    is being measured again)."""
    m = manifest_of(store)
    i, ph = next(((i, ph) for i, ph in enumerate(plan.phases) if store.phase_ended(ph.name) is False), (0, None))
    if not isinstance(ph, Deferred):
        return
    stored = {k: v for k, v in m.plan["phases"][i].items() if k != "deferred"}
    phase, _ = build_deferred(store, plan, ph)
    if phase is None:  # it decides now to run nothing: no cell of it is measured again to mix with
        return
    now = json.loads(json.dumps(phase_summary(phase), default=str))
    if stored == now:
        return
    moved = store.set_aside(ph.name, 0, round_prefixes(phase, 0))
    notes.append(
        f"{ph.name}: this iolab builds it from the stored results as cells {', '.join(now['cells'])} (the run "
        f"stored {', '.join(stored.get('cells', []))}), so what it measured is set aside"
        + (f" ({moved} raw files in raw/interrupted-*/)" if moved else "")
        + " and it runs again from its start as built now."
    )
