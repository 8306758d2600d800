"""`iolab history FIGURE`: one key figure across every run in a runs directory, per target
identity (identity.py: serial and model, a file's inode, a simulated drive's preset and
parameters), in the order the runs started, with the firmware each ran. A simulated drive's
seed is not part of it: `seed=k` is a second run of the same drive (docs/simulator.md), as
`--repeat` makes them, so its runs stay on one line and each point says its seed. Read-only: each run's
own SQLite store is opened read-only (store.RunStore), so the runs directory is left exactly
as it was.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from iolab.api import registry
from iolab.api.results import Run, open_run
from iolab.api.runlist import list_runs
from iolab.core.errors import IolabError
from iolab.core.runfiles import run_name_order
from iolab.core.steady import STEADY_NOT_SHOWN
from iolab.figures.fleet import conditions_of
from iolab.pages.fleet_junit import steady_words
from iolab.targets.sim_facts import drive_options


@dataclass(frozen=True)
class Point:
    run_id: str
    path: str
    started: str
    firmware: str | None
    value: float | None  # None: the run did not measure it
    compliant: bool = True
    noncompliance: tuple[str, ...] = ()  # why not: quick profile, 1 s per cell instead of 60 s, ...
    seed: int | None = None  # a simulated drive's (no seed= is seed 0); None: a real drive
    # what else the figure is true of, as `fleet` carries it per drive (figures/fleet.Conditions):
    # the run's steady state (core/steady: reached, not-reached, not-evaluated, not-applicable;
    # None: not read) and the audit invariants it failed
    steady_state: str | None = None
    audit_failed: tuple[str, ...] = ()
    steady_not_accepted: str | None = None  # why windows passing the rule were not accepted

    def compliance_text(self) -> str:
        """As `iolab runs` says it: yes, or no and why."""
        return "yes" if self.compliant else "no: " + "; ".join(self.noncompliance)

    @property
    def unsteady(self) -> bool:
        """The figure is from a window that is no steady state (not reached, or never judged)."""
        return self.steady_state in STEADY_NOT_SHOWN

    def steady_text(self) -> str:
        """As `fleet` words a drive's steady state."""
        return steady_words(self.steady_state, self.steady_not_accepted, "not read")

    def audit_text(self) -> str:
        return "FAILED: " + ", ".join(self.audit_failed) if self.audit_failed else "passed"


@dataclass
class TargetHistory:
    id: str  # 8 hex digits of the identity, as the table prints it
    label: str  # vendor, model and serial, or the target spec
    spec: str
    serial: str | None
    model: str | None
    identity: dict
    points: list[Point] = field(default_factory=list)


@dataclass
class History:
    figure: str
    unit: str
    direction: str
    tests: list[str]
    targets: list[TargetHistory]
    skipped: list[dict]  # {"path", "reason"}: runs that are not complete or cannot be read

    def record(self) -> dict:
        return {
            "figure": self.figure,
            "unit": self.unit,
            "direction": self.direction,
            "tests": self.tests,
            "targets": [
                {
                    "id": t.id,
                    "label": t.label,
                    "spec": t.spec,
                    "serial": t.serial,
                    "model": t.model,
                    "identity": t.identity,
                    "points": [
                        {
                            "run_id": p.run_id,
                            "path": p.path,
                            "started": p.started,
                            "firmware": p.firmware,
                            "value": p.value,
                            "compliant": p.compliant,
                            "noncompliance": list(p.noncompliance),
                            "seed": p.seed,
                            "steady_state": p.steady_state,
                            "steady_not_accepted": p.steady_not_accepted,
                            "audit_failed": list(p.audit_failed),
                        }
                        for p in t.points
                    ],
                }
                for t in self.targets
            ],
            "skipped": self.skipped,
        }


def when(started: str) -> float:
    """A run's start as a POSIX time (runs started in other time zones sort by the instant)."""
    try:
        d = datetime.fromisoformat(started)
    except ValueError:
        return 0.0
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


def identity_id(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:8]


def drive_of(identity: dict, spec: str) -> tuple[dict, str, int | None]:
    """The drive a run measured (its identity and spec without a simulated drive's seed) and
    the seed. Another preset or parameter is another drive; another seed is another run of it; a
    parameter written out at the preset's default is the preset's own (sim_facts.drive_options)."""
    if identity.get("kind") != "sim":
        return identity, spec, None
    options = [tuple(o) for o in identity.get("options") or []]
    seeds = [v for k, v in options if k == "seed"]
    try:
        seed = int(seeds[-1]) if seeds else 0
    except ValueError:
        return identity, spec, None  # not a seed the simulator takes: keep it apart
    own = drive_options(str(identity.get("preset")), dict(options))
    drive = {**identity, "options": [list(o) for o in options if o[0] != "seed" and o[0] in own]}
    base, _, query = spec.partition("?")
    kept = "&".join(q for q in query.split("&") if q and not q.startswith("seed="))
    return drive, base + (f"?{kept}" if kept else ""), seed


def _label(run: Run, spec: str) -> str:
    t = run.target
    named = " ".join(x for x in (t.vendor, t.model) if x)
    if t.serial:
        return f"{named} SN {t.serial}".strip()
    return spec or named or "?"


def _matches(th: TargetHistory, want: str, specs: set[str]) -> bool:
    """`want` names the drive: its id, serial, spec or label, or the spec of one of its runs (with its seed)."""
    return want in (th.id, th.serial, th.spec, th.label) or want in specs


def _skipped(path: Path, reason: str) -> dict[str, str]:
    """A run history leaves out, and why (the document's `skipped`)."""
    return {"path": str(path), "reason": reason}


def history(figure: str, runs_dir: Path, test: str | None = None, target: str | None = None) -> History:
    """The figure in every complete run under runs_dir (of `test`, on `target`: a target's id
    as the table prints it, its serial, spec or label)."""
    if not runs_dir.is_dir():
        raise IolabError(f"{runs_dir}: no such runs directory.")
    figure = registry.current_figure(figure, test)  # a figure's earlier name finds it under today's
    groups: dict[str, TargetHistory] = {}
    skipped: list[dict] = []
    names: dict[str, None] = {}
    meta: tuple[str, str] | None = None
    tests: dict[str, None] = {}
    specs: dict[str, set[str]] = {}  # each drive's runs' own specs (with their seeds), which --target takes too
    counted: dict[str, Path] = {}  # each run (its uid) and the directory it was counted from
    for summary in list_runs(runs_dir):
        if summary.problem or summary.state != "complete":
            if test is None or summary.test == test:
                skipped.append(_skipped(summary.path, summary.problem or f"the run is {summary.state}"))
            continue
        if test is not None and summary.test != test:
            continue
        try:
            run = open_run(summary.path)
        except IolabError as e:
            skipped.append(_skipped(summary.path, str(e)))
            continue
        with run:
            if run.key in counted:  # a copy of a run's directory is the same measurement, not a second one
                skipped.append(_skipped(summary.path, f"a copy of run {run.run_id} ({counted[run.key]}), counted once"))
                continue
            try:  # its figures, and the conditions they are true of (as fleet reads them)
                record = run.record()
            except IolabError as e:  # its cells fail a check as they are read (RunStore.cells): skipped as unreadable
                skipped.append(_skipped(summary.path, str(e)))
                continue
            counted[run.key] = summary.path
            figs = {f["name"]: f for f in record["figures"]}
            names.update(dict.fromkeys(figs))
            if figure not in figs:
                continue
            f = figs[figure]
            meta = meta or (f["unit"], f["direction"])
            tests[run.test] = None
            drive, spec, seed = drive_of(run.target.identity or {"spec": run.target.spec}, run.target.spec)
            key = identity_id(drive)
            th = groups.setdefault(
                key, TargetHistory(key, _label(run, spec), spec, run.target.serial, run.target.model, drive)
            )
            specs.setdefault(key, set()).add(run.target.spec)
            c = conditions_of(record)
            th.points.append(
                Point(
                    run.run_id,
                    str(run.dir),
                    run.started,
                    run.target.firmware,
                    f["value"],
                    run.compliant,
                    run.noncompliance,
                    seed,
                    c.steady_state,
                    c.audit_failed,
                    c.not_accepted,
                )
            )
    if meta is None:
        where = f"runs of test {test!r}" if test else "complete runs"
        known = ", ".join(map(repr, names)) if names else "none (no complete run with key figures)"
        raise IolabError(f"no {where} under {runs_dir} have a figure named {figure!r}; the figures they have: {known}.")
    chosen = [g for g in groups.values() if target is None or _matches(g, target, specs[g.id])]
    if not chosen:
        raise IolabError(
            f"--target {target}: no target with that id, serial, spec or label has {figure!r} under "
            f"{runs_dir}; the targets: " + "; ".join(f"{g.id} ({g.label})" for g in groups.values()) + "."
        )
    for g in chosen:
        g.points.sort(key=lambda p: (when(p.started), run_name_order(p.run_id)))
    chosen.sort(key=lambda g: when(g.points[0].started))
    return History(figure, meta[0], meta[1], list(tests), chosen, skipped)
