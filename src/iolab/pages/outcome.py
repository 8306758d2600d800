"""A run's outcome as data: the one JSON document `--json` prints (run, resume, show, compare,
runs, check), and the exit codes every command shares. The document's shape is declared once,
in outcome_schema.py, which docs/schema/outcome.schema.json is generated from; the exit
codes are errors.Exit.

A run record says what a script needs without parsing the terminal: which run, which test on
which drive, how it ended, whether each phase reached steady state (its window and the
tracking variables' values), the decisions the plan made, the test's key figures with unit
and direction, each figure's value in every window round alone (the spread `iolab check`
takes as the run's own noise), and the report files written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from iolab.core.decide import decision_text
from iolab.core.errors import Exit
from iolab.core.fieldtypes import json_finite
from iolab.core.steady import STEADY_NOT_EVALUATED, STEADY_NOT_SHOWN, SteadyState, run_steady_state
from iolab.figures.audit import Audit, kinds_of, stored_audit
from iolab.figures.compare import KeyMetric
from iolab.figures.endurance import endurance_record
from iolab.figures.points import today_decision
from iolab.figures.summary import PhaseSummary, summarise, summarise_phase, unstored_tracking
from iolab.store.manifest import manifest_of, unknown_parts
from iolab.store.resultsdb import unknown_schema
from iolab.store.runstore import RunStore
from iolab.targets.model import known_drive_bytes

SCHEMA_NAME = "iolab-outcome"
SCHEMA_VERSION = 1


Figures = Callable[[Sequence[list[PhaseSummary]]], Sequence[KeyMetric]]


def steady_state(phases: Sequence[PhaseSummary], plan: Mapping[str, Any] | None = None) -> SteadyState:
    """reached (every phase with tracking variables reached it), not-reached (one was evaluated
    and failed), not-evaluated (one tracks steady state but its rounds never filled a window,
    e.g. --max-rounds below the window, or it never ran: a run that failed or was stopped first),
    or not-applicable (no phase tracks steady state): each phase's own state
    (PhaseSummary.steady_state) folded by core/steady.run_steady_state.

    `plan`: the manifest's plan summary, which says which phases track steady state whether or not
    they stored a round (a failed run may have stored none: summary.unstored_tracking). A deferred
    phase never built says nothing of its tracking; none of today's tests gives one tracking
    variables."""
    unstored = [STEADY_NOT_EVALUATED for _ in unstored_tracking(phases, plan)]
    return run_steady_state([*(ph.steady_state for ph in phases), *unstored])


def steady_shortfall(record: Mapping[str, Any]) -> str | None:
    """How a stored run record fails to show steady state, or None when it shows it (or its test
    tracks none): the run's `state` when it did not complete (failed, interrupted or still
    running: its figures are no finished run's, whatever its phases say), else its
    `steady_state` when that is one of core/steady.STEADY_NOT_SHOWN. The one rule of
    `--require-steady` for run, resume, show and check."""
    if record["state"] != "complete":
        return str(record["state"])
    return record["steady_state"] if record["steady_state"] in STEADY_NOT_SHOWN else None


def run_exit_code(record: dict, require_steady: bool) -> int:
    """A run's exit code as a stored record gives it: NOT_STEADY only when asked to require steady
    state and the run did not show it (steady_shortfall). A test that tracks no steady state
    (not-applicable) passes once complete."""
    if require_steady and steady_shortfall(record) is not None:
        return Exit.NOT_STEADY
    return Exit.OK


def _phase(ph: PhaseSummary, audit: Audit) -> dict:
    return {
        "name": ph.phase.name,
        "steady": ph.steady,
        # the phase runs to its budget whatever `steady` says (Write Saturation, XSR's groups): the
        # verdict is evidence for information, as the report's header and `iolab show` word it
        "for_information": ph.reports_only,
        # the failed audit invariants that touch this phase's steady-state verdict
        "audit": list(audit.marks(())) if ph.steady else [],
        # a window that passes the rule's range and slope but was not accepted as steady state:
        # why ("" when the run did not store why); null otherwise (steady, failed, for information)
        "not_accepted": None if ph.reports_only else ph.not_accepted(),
        "rounds": len(ph.rounds),
        "window": list(ph.window),
        "stop_reason": ph.phase.stop_reason,
        "tracking": [
            {
                "variable": v.name,
                "rounds": list(v.rounds),
                "values": list(v.values),
                "average": v.average,
                "range": v.range_measured,
                "range_allowed": v.range_allowed,
                "slope": v.slope,
                "intercept": v.intercept,
                "fit_excursion": v.fit_excursion,
                "fit_allowed": v.fit_allowed,
                "steady": v.steady,
                "decides": v.name not in ph.shown_only,
            }
            for v in ph.verdicts
        ],
    }


def round_phases(store: RunStore, phases: Sequence[PhaseSummary]) -> list[list[PhaseSummary]]:
    """The run's phases as if each window held one round: the k-th list has every phase's k-th
    window round, counted from the last (a phase with a shorter window repeats its first)."""
    n = max((len(ph.window) for ph in phases), default=0)
    out = []
    for k in range(n):
        one = []
        for ph in phases:
            if not ph.window:
                one.append(ph)
                continue
            rnd = ph.window[max(0, len(ph.window) - n + k)]
            one.append(replace(summarise_phase(store, ph.phase, window=(rnd,)), steady=ph.steady))
        out.append(one)
    return out


def round_values(value: float | None, rounds: Sequence[float | None], rounds_alike: bool = False) -> list[float]:
    """The figure computed from each window round alone; none where the rounds do not change it.
    A figure of a first interval, of every round (QoS's median round, WSAT's minimum interval), of
    a recovery time, or of a phase measured once (HIR's bursts, DIRTH's operating points beside a
    5-round window, which round_phases repeats) came out as its own value once per window round:
    five equal "round values" that no five measurements gave, a spread of zero a script would
    take for a quiet drive. `rounds_alike`: the window rounds measured exactly the same (a
    simulated drive reading sequentially can): their equal values are measured, and kept."""
    got = [v for v in rounds if v is not None]
    return [] if len(got) > 1 and not rounds_alike and all(v == value for v in got) else got


def _figures(store: RunStore, phases: list[PhaseSummary], figures: Figures | None, audit: Audit) -> list[dict]:
    if figures is None or not phases:
        return []
    from iolab.pages.report.header import figure_caveats, steady_caveats  # the report's pages: only with figures
    from iolab.pages.report.rundata import RunData

    run = RunData(store.dir, manifest_of(store), phases, store.cells(kind="precondition"), store.dir, audit)
    # what every value carries as show's and compare's [a] (the run's steady state not shown)
    caveats = steady_caveats(run)
    metrics = figures([phases])
    per_round = round_phases(store, phases)
    # whether the rounds' own measurements differ: a figure equal in rounds that measured
    # differently does not read them (round_values)
    alike = len({repr([ph.cells for ph in view]) for view in per_round}) <= 1
    out = []
    for m in metrics:
        rounds = [m.get(p) for p in per_round]
        value = m.get(phases)
        entry = {
            "name": m.name,
            "unit": m.unit,
            "direction": "higher-is-better" if m.higher_is_better else "lower-is-better",
            "kind": m.kind,
            "value": value,
            "round_values": round_values(value, rounds, alike),
            "audit": list(audit.marks(kinds_of(m.name, m.unit))),  # failed invariants touching it
        }
        # why a figure has no value, where its getter knows (a percentile of too few IOs): a spec
        # sheet naming it is then told so, not asked whether it meant another figure
        if value is not None and (own := figure_caveats(m.get, caveats)):
            entry["caveats"] = [c.head for c in own]
        why = getattr(m.get, "unmeasured", None)
        if value is None and why is not None and why(phases):
            entry["unmeasured"] = why(phases)
        # what the value is of, where the name may claim more (a "steady-part" figure of a part
        # that was or was not steady by the rule); `caveat` set only when it is not what it claims
        if value is not None and m.note(phases):
            entry["note"] = m.note(phases)
            entry["caveat"] = bool(m.caveat(phases))
        # the numbers behind that note, typed: the steady part's verdict (range, excursion, limits)
        part = getattr(m.get, "steady_part", None)
        if value is not None and callable(part) and (record := part(phases)) is not None:
            entry["steady_part"] = record
        out.append(entry)
    return out


def run_record(
    store: RunStore,
    figures: Figures | None,
    reports: Sequence = (),
    read: tuple[list[PhaseSummary], Audit] | None = None,
) -> dict:
    """One run as the document's `runs` list holds it; `figures`: the test's key figures
    (None: the test declares none, or is not registered here); `read`: the run's phase summaries
    and audit where the caller read them already (its terminal view takes them too)."""
    m = manifest_of(store)
    phases, audit = read if read is not None else (summarise(store), stored_audit(store))
    facts = m.target.get("facts", {})
    return {
        "run_id": m.run_id,
        "uid": m.uid,  # tells two runs of one id apart (check refuses a run held against itself)
        "path": str(store.dir),
        "test": m.test,
        "title": m.title,
        # a run whose writer died without a word was interrupted, as `iolab runs` says
        "state": "interrupted" if m.state == "running" and not store.writer_alive() else m.state,
        "error": m.error,
        "started": m.started,
        "ended": m.ended,
        "compliant": m.compliant,
        "noncompliance": list(m.noncompliance),
        "target": {
            "spec": m.target.get("spec"),
            # a --quick run's copy of a simulated drive: the drive the user named (fleet rows name it)
            "copy_of": m.target.get("copy_of"),
            # ... and that drive's size, as show and the report give it (null: no copy, or stored before it was kept)
            "copy_of_capacity_bytes": m.target.get("copy_of_capacity") or None,
            "kind": m.target.get("kind"),
            "vendor": facts.get("vendor"),
            "model": facts.get("model"),
            "serial": facts.get("serial"),
            "firmware": facts.get("firmware"),
            # the drive's, as show and the report say it: a device's ?size= is its tested part; on
            # other hosts, the one size they all said (null: not known)
            "capacity_bytes": known_drive_bytes(m.target),
            "tested_capacity_bytes": m.target.get("tested_capacity"),
            "identity": json.loads(json.dumps(m.target.get("identity") or {})),
        },
        "profile": m.profile,
        # the options the test ignored, each at the value its plan is the same at (check counts them so)
        "ignored_options": m.ignored_options,
        "steady_rule": m.steady_rule,
        # what show and the report print as notes: how the run was prepared and run where its
        # labels do not say it all (e.g. a cell run at more outstanding IO than planned)
        "notes": list(m.notes),
        "steady_state": steady_state(phases, m.plan),
        "phases": [_phase(ph, audit) for ph in phases],
        # in today's words (an old DIRTH decision's MinIOPS rule), as show and the report print them
        "decisions": [{**d, "text": decision_text(d)} for d in map(today_decision, m.decisions)],
        "figures": _figures(store, phases, figures, audit),
        # TBW and DWPD, only from a run whose test measures endurance (None: it does not)
        "endurance": endurance_record(m, phases, store.cells(kind="precondition")),
        "audit": audit.to_dict(),
        "reports": [str(p) for p in reports],
        # what a newer iolab stored that this one does not know (kept, not read)
        "unknown": unknown_parts(m, unknown_schema(store.query)),
    }


def document(command: str, exit_code: int, **parts) -> dict:
    """The envelope every --json document shares; `parts` are the command's own keys."""
    return {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "exit_code": exit_code,
        **parts,
    }


def dumps(doc: dict) -> str:
    return json.dumps(json_finite(doc), indent=2, ensure_ascii=False, allow_nan=False, default=str)
