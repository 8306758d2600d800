"""The runner: purge → precondition → rounds → steady state → store, for any TestPlan.

It never knows which test it serves (the plan says what to run) nor which engine it drives
(the engine protocol hides it). Every measured cell is committed before the next starts.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from iolab import targets
from iolab.core.decide import Decision, Sample, sample_of_row
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Deferred, Phase, TestPlan, step_seconds
from iolab.core.profilewords import cache_text
from iolab.core.results import RoundResult, cell_where, check_result
from iolab.core.runfiles import POWER_FILE
from iolab.core.steady import SteadyVerdict, evaluate
from iolab.core.units import counted, duration
from iolab.core.workload import Workload
from iolab.engines import Engine, HostsEngine
from iolab.figures.audit import audit
from iolab.figures.phaseend import Spent, after_round, settle, written_since_purge
from iolab.figures.simpower import CellRaw, kept_raw, model_document
from iolab.run.budget import Interval, drained, is_partial, latest, next_round_s, stored_drains, within_budget
from iolab.run.identity import check_unchanged, target_identity
from iolab.run.live import LiveFile
from iolab.run.redecide import kept_build
from iolab.run.runstart import RunOptions, phase_summary
from iolab.run.stopsignals import Interrupted, acted_on, held_stop, raise_if_stopped
from iolab.store.durable import ResultsDiskFull, is_disk_full, write_atomic
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore
from iolab.targets import Target, wear
from iolab.targets.purge import purge_failed


class Progress(Protocol):
    """What the runner tells whoever watches (the CLI's Rich display, or nothing)."""

    def phase(self, phase: Phase, index: int) -> None: ...
    # the phase just begun goes on from a stopped run's `rounds` stored rounds, which wrote `written` bytes
    def resumed(self, rounds: int, written: int) -> None: ...
    # a cell or preconditioning step starts: its workload's label and planned seconds (core.plan.step_seconds)
    def step(self, what: str, round_: int, index: int, count: int, label: str, seconds: float) -> None: ...
    def live(self, elapsed_s: float, iops: float) -> None: ...
    def done(self, result: RoundResult, wall_s: float) -> None: ...
    def note(self, text: str) -> None: ...
    def round_done(
        self, phase: Phase, rnd: int, history: dict[str, list[tuple[int, float]]], verdict: SteadyVerdict | None
    ) -> None: ...
    def phase_done(self, phase: Phase, steady: bool | None, rounds: int, reason: str) -> None: ...


class NoProgress:
    def phase(self, phase: Phase, index: int) -> None:
        pass

    def resumed(self, rounds: int, written: int) -> None:
        pass

    def step(self, what: str, round_: int, index: int, count: int, label: str, seconds: float) -> None:
        pass

    def live(self, elapsed_s: float, iops: float) -> None:
        pass

    def done(self, result: RoundResult, wall_s: float) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def round_done(
        self, phase: Phase, rnd: int, history: dict[str, list[tuple[int, float]]], verdict: SteadyVerdict | None
    ) -> None:
        pass

    def phase_done(self, phase: Phase, steady: bool | None, rounds: int, reason: str) -> None:
        pass


@dataclass(frozen=True)
class StartAt:
    """Where a resumed run continues: phase `phase` at round `round` (0: from its purge)."""

    phase: int
    round: int
    written: int = 0  # workload bytes written by the stored rounds (the phase's byte budget)
    elapsed: float = 0.0  # engine seconds of the stored rounds (the phase's time budget)
    history: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # tracking values
    samples: tuple[Sample, ...] = ()  # the stored cells, for the phase's stop rule
    recent: dict[str, tuple[Interval, ...]] = field(default_factory=dict)  # each cell's latest intervals (budget.pace)


def build_deferred(store: RunStore, plan: TestPlan, ph: Deferred) -> tuple[Phase | None, Decision]:
    """Build a deferred phase from the stored results before it (None: nothing to measure)."""
    before = plan.phases[: plan.phases.index(ph)]
    samples = {p.name: [sample_of_row(r) for r in store.cells(p.name)] for p in before}
    built, decision = ph.build(samples)
    if built is None:
        return None, decision
    plan.check_phase(built)
    if bool(built.tracking) != ph.tracks:
        raise IolabError(
            f"{plan.title}, phase {ph.name!r}: built {'with' if built.tracking else 'without'} steady-state "
            f"tracking, but its plan said it {'tracks' if ph.tracks else 'does not track'} steady state "
            "(the stored steady-state rule says so)."
        )
    return built, decision


def here_legs(engine: Engine) -> dict[str, Target]:
    """A hosts run's targets by host when every host is this machine's; else empty."""
    return engine.here_legs() if isinstance(engine, HostsEngine) else {}


def cell_tag(phase: str, rnd: int, ordinal: int, key: str) -> str:
    """The name of a cell's raw files: the runner writes them, `fio-job` shows the same names."""

    def slug(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")

    return f"{slug(phase)}-r{rnd:02d}-c{ordinal:02d}-{slug(key)}"


def round_prefixes(ph: Phase, from_round: int) -> list[str]:
    """Raw file name prefixes of the phase's rounds from `from_round` on (see cell_tag)."""
    return [cell_tag(ph.name, r, 0, "x").rsplit("-c00-", 1)[0] + "-" for r in range(from_round, ph.max_rounds + 1)]


def workload_record(w: Workload) -> dict[str, Any]:
    """A cell's workload as stored: the round's, never a leg's (each leg's is in its job file)."""
    record = asdict(w)
    del record["leg"]
    return record


class Runner:
    def __init__(
        self,
        plan: TestPlan,
        target: Target,
        engine: Engine,
        store: RunStore,
        options: RunOptions,
        progress: Progress | None = None,
    ):
        self.plan, self.target, self.engine, self.store = plan, target, engine, store
        self.options = options
        self.progress = progress or NoProgress()
        self.since_purge = 0  # bytes written to the target since the last purge (steady state's minimum)
        # each cell's raw output as the engine parsed it (the simulator's), what the power model reads
        # of it: kept as the cell ends, not read from its file again at the run's end
        self.kept_raw: dict[str, CellRaw] = {}

    # -- the whole run ---------------------------------------------------------------------
    def finish(self, state: str, error: str | None = None) -> None:
        """End the run: audit what it stored (audit.py; kept in the manifest for every view)
        and write its final state. An audit that cannot run must not cost the run its end; an
        interrupted run is audited when it is read (audit.stored_audit). The state is stored however
        this is left: Ctrl-C during the power model or the audit, after every phase ended, leaves a
        complete run (audited when read), not one still 'running' that the run's start then marked
        as stopped before it measured anything."""
        try:
            if manifest_of(self.store).target.get("kind") == "sim":
                self.model_power()
            try:
                # a user who stopped the run waits for nothing more (an audit an earlier end stored is dropped)
                manifest_of(self.store).audit = audit(self.store).to_dict() if state != "interrupted" else {}
            except Exception as e:  # noqa: BLE001 (a bug in a check: say so where the audit would be)
                manifest_of(self.store).audit = {"error": f"the audit could not run: {e!r}"}
        finally:
            self.store.finish(state, error)

    def model_power(self) -> None:
        """A simulated SSD's modelled power per cell (figures/simpower.py) into power.json, the
        values used into the manifest. A failure is said in the notes, never costs the run its end."""
        m = manifest_of(self.store)
        try:
            cells = sorted(self.store.cells(kind="precondition") + self.store.cells(), key=lambda c: c.started)
            doc = model_document(m.run_id, self.store.dir, cells, self.kept_raw)
            if doc is not None:
                write_atomic(self.store.dir / POWER_FILE, json.dumps(doc, indent=1).encode())
                m.power_model = doc["model"]
        except Exception as e:  # noqa: BLE001 (a bug in the model: say so, keep the run)
            m.notes.append(f"the simulator power model could not run: {e!r}")

    def run(self, start_at: StartAt | None = None, stamp: bool = False) -> None:
        """Run the plan (from `start_at`: a resume) and store how the run ended. `stamp`: record
        this process as the run's writer first (a resume; manifest.json says 'running' from then
        on), with a stop held until the handling below that marks it interrupted has begun:
        stamped before, a stop in between left 'running' with no writer and the earlier end's
        reason gone."""
        m = manifest_of(self.store)
        hosts = self.hosts_engine()
        if start_at is not None and start_at.phase < len(self.plan.phases):  # past the last: only the end is left
            self.since_purge = written_since_purge(self.store, start_at.phase)
        with held_stop() as stop:
            if stamp:
                self.store.claim()
        try:
            stop.release()
            m.write_cache = self.engine.set_write_cache(self.target, self.plan.profile.write_cache)
            self.note_unheld_cache(read_back=False)  # a set that failed: known before any IO
            self.store.write_manifest()
            self.engine.prepare(self.target)
            if start_at is None:  # what `iolab resume` checks; a remote engine reads its hosts' targets
                m.target["identity"] = hosts.target_identity() if hosts else target_identity(self.target)
                if legs := here_legs(self.engine):  # all hosts this machine's: each one's path, checked on resume
                    m.target["leg_identities"] = {name: target_identity(t) for name, t in legs.items()}
                self.store.write_manifest()
            for i, phase in enumerate(self.plan.phases):
                if start_at is not None and i < start_at.phase:
                    continue
                if isinstance(phase, Deferred):
                    built = self.build(i, phase)
                    if built is None:  # decided not to measure (its decision, stored and printed, says why)
                        continue
                    phase = built
                self.progress.phase(phase, i)
                if start_at is not None and i == start_at.phase and start_at.round > 0:
                    self.progress.resumed(start_at.round - 1, start_at.written)  # its budget is partly spent
                self.wear(phase.name, "start")
                self.run_phase(phase, i, start_at if start_at is not None and i == start_at.phase else None)
                self.wear(phase.name, "end")
                self.store.write_manifest()
        except KeyboardInterrupt as e:
            acted_on()
            by = f"by {e.signal_name}" if isinstance(e, Interrupted) else "by the user (Ctrl-C)"
            self.finish("interrupted", f"stopped {by}; finished rounds are kept")
            raise
        except IolabError as e:
            if not isinstance(e, ResultsDiskFull) and self.store.disk_full():
                e = ResultsDiskFull(self.store.dir, str(e))  # e.g. fio could not write its logs
            self.finish("failed", str(e))
            raise e from None
        except BaseException as e:
            if is_disk_full(e):  # the run directory's filesystem filled: a user's problem, not a bug
                full = ResultsDiskFull(self.store.dir, e)
                self.store.finish("failed", str(full))  # no room to audit either
                raise full from None
            self.finish("failed", f"internal error: {e!r}")  # a bug: keep the run readable and say so
            raise
        else:
            self.finish("complete")
        finally:
            self.note_unheld_cache(read_back=True)  # read back before the owner's setting is put back
            restored = targets.restore_write_cache(self.target)  # however the run ends, Ctrl-C included
            if restored:
                m.write_cache = f"{m.write_cache}; {restored}"
                self.store.write_manifest()
            targets.release(self.target)  # the claim runstart.start took, however the run ends

    def note_unheld_cache(self, read_back: bool) -> None:
        """The profile's write cache (the PTS's WCD/WCE) is a condition of every result: a
        setting that failed, or that the drive no longer reports at the run's end (ignored, or
        lost in a reset during the run), or reports none (so nothing confirms it), makes the run
        non-compliant, with the reason; a hosts run's drives by the same rule."""
        wanted = self.plan.profile.write_cache
        # a hosts run's drives are judged where they are, by the same rule (targets.cache_unmet)
        if isinstance(self.engine, HostsEngine):
            why = self.engine.unheld_write_cache(wanted, read_back)
        else:
            why = targets.unheld_write_cache(self.target, read_back)
        m = manifest_of(self.store)
        said = f"write cache {cache_text(wanted)} {why}"
        if why and said not in m.noncompliance:
            m.noncompliance.append(said)
            self.store.write_manifest()

    def build(self, i: int, deferred: Deferred) -> Phase | None:
        """Build a deferred phase now, store it in the manifest's plan (reports read what was
        run) and record the decision; None: the decision is not to run it (the plan says so)."""
        phase, decision = build_deferred(self.store, self.plan, deferred)
        built = phase_summary(phase) if phase is not None else {"name": deferred.name, "not_run": decision.outcome}
        built |= {"deferred": deferred.describe}
        m = manifest_of(self.store)
        if kept_build(m, decision, built, i):  # a resumed run stopped after this decision, before the phase
            self.progress.note(f"{deferred.name}: its decision stored before the run was stopped is kept")
            return phase
        m.plan["phases"][i] = built
        self.decide(decision)
        return phase

    def decide(self, decision: Decision) -> None:
        manifest_of(self.store).decisions.append(decision.record())
        self.store.write_manifest()
        self.progress.note(
            f"{decision.phase}: decided by {decision.label or decision.rule['name']}: {decision.outcome}"
        )

    # -- one phase -----------------------------------------------------------------------
    def run_phase(self, phase: Phase, ordinal: int, at: StartAt | None = None) -> None:
        store, rule = self.store, self.plan.rule
        if at is not None and at.round == 0:
            at = None  # resumed from the phase's purge: as a fresh phase
        first = at.round if at is not None else 1
        if at is None:
            self.begin(phase, ordinal)

        # Budgets count the engine's own time (virtual seconds on the simulator), so a 24-hour
        # Write Saturation means 24 hours of measured IO on any engine.
        elapsed = at.elapsed if at else 0.0
        written = at.written if at else 0
        recent = dict(at.recent if at else {})  # each cell's latest intervals, for budget.within_budget
        drains = stored_drains(store.cells(phase.name)) if at else {}  # each cell's drains (time budget)
        history: dict[str, list[tuple[int, float]]] = {
            t.name: list(at.history.get(t.name, []) if at else []) for t in phase.tracking
        }
        samples = list(at.samples if at else ())
        decision: Decision | None = None
        verdict: SteadyVerdict | None = None
        capacity = self.target.drive_capacity  # what the tested range is a share of (phaseend.range_share)
        stop_reason = f"reached the round limit ({phase.max_rounds}) without steady state"
        rnd = first - 1
        for rnd in range(first, phase.max_rounds + 1):
            store.begin_round(phase.name, rnd)
            for i, planned in enumerate(phase.cells):
                cell = within_budget(phase, planned, written, recent.get(planned.key, ()))
                w = planned.workload  # its planned length: the budget's final interval runs by bytes alone
                self.progress.step("round", rnd, i, len(phase.cells), cell.workload.label(), step_seconds(w))
                result = self.measure(phase, rnd, i, "measure", cell, planned)
                written += result.write.io_bytes
                elapsed += result.runtime_s
                recent[planned.key] = latest(recent.get(planned.key, ()), result)
                if phase.stop_rule is not None:
                    samples.append(Sample.of(rnd, cell.key, cell.workload, result))
                    decision = phase.stop_rule.check(phase.name, samples)
                    if decision is not None:
                        break
                if is_partial(planned, cell, result):
                    # Stored and shown with its true length, but an interval the budget ended is
                    # not a sample of the same thing (run/budget.py): it never enters the window.
                    continue
                drains.setdefault(planned.key, []).append(drained(planned, result))
                for t in phase.tracking:
                    if t.cell_key == cell.key:
                        history[t.name].append((rnd, metric_of(result, t.metric)))
            store.finish_round(phase.name, rnd)
            if decision is not None:
                self.decide(decision)
                stop_reason = f"{decision.rule['name']}: {decision.outcome}"
                break

            verdict = evaluate(history, rule, phase.shown_only) if phase.tracking else None
            if verdict is not None:
                store.add_steady(phase.name, rnd, verdict.variables)
            self.progress.round_done(phase, rnd, history, verdict)
            spent = Spent(written, elapsed, self.since_purge, capacity, rnd, next_round_s(phase, drains))
            if (early := after_round(store, self.plan, phase, verdict, spent)) is not None:
                stop_reason = early.reason
                if early.decision is not None:  # the time budget: what it was and what ran
                    self.decide(early.decision)
                break
        else:
            if not phase.stop_on_steady:
                stop_reason = (
                    "ran its single round" if phase.max_rounds == 1 else f"ran all {phase.max_rounds} intervals"
                )
        steady, why_not = settle(store, self.plan, phase, verdict, Spent(written, elapsed, self.since_purge, capacity))
        if why_not and why_not not in stop_reason:
            stop_reason += "; " + why_not
        if steady is False and phase.stop_on_steady:
            self.progress.note(f"{phase.name}: steady state NOT reached after {counted(rnd, 'round')}")
        store.finish_phase(phase.name, steady, rnd, stop_reason)
        self.progress.phase_done(phase, steady, rnd, stop_reason)

    def begin(self, phase: Phase, ordinal: int) -> None:
        """A phase from its start: stored as begun, purged and preconditioned as it asks."""
        self.store.begin_phase(phase.name, ordinal)
        if phase.purge:
            self.purge(phase)
        if phase.precondition:
            self.store.begin_round(phase.name, 0)
            for i, w in enumerate(phase.precondition):
                self.progress.step("precondition", 0, i, len(phase.precondition), w.label(), step_seconds(w))
                self.measure(phase, 0, i, "precondition", Cell(w.label(), w, "", 0))
            self.store.finish_round(phase.name, 0)

    def purge(self, phase: Phase) -> None:
        method = self.options.purge_method
        self.progress.note(f"{phase.name}: purge ({method})")
        check_unchanged(manifest_of(self.store), self.target, here_legs(self.engine), f"the purge of {phase.name}")
        outcome = self.engine.purge(self.target, method)
        self.store.record_purge(phase.name, outcome.method, outcome.ok, outcome.detail)
        m = manifest_of(self.store)
        m.purges.append({"phase": phase.name} | asdict(outcome))
        self.since_purge = 0
        # a purge known to fail is in the manifest from the start (runstart.noncompliance_of)
        if not outcome.ok and method != "none" and purge_failed(outcome.method) not in m.noncompliance:
            m.noncompliance.append(purge_failed(outcome.method))
            m.compliant = False
        self.store.write_manifest()

    def measure(
        self, phase: Phase, rnd: int, ordinal: int, kind: str, cell: Cell, planned: Cell | None = None
    ) -> RoundResult:
        """Run one cell and store it; `planned` is the cell as the plan has it, before any
        budget cap (None: run as planned)."""
        raise_if_stopped()  # a Ctrl-C or stop signal lost in a fork callback: acted on before the next cell
        tag = cell_tag(phase.name, rnd, ordinal, cell.key)
        if cell.idle_before_s:
            self.idle(cell.idle_before_s, f"{phase.name}, before {cell.key}")
        t0, wall0 = time.time(), time.monotonic()
        # what `iolab watch` shows as running: counted from 1, as its "cell N/M" (the tag counts from 0)
        at = (
            f"preconditioning {ordinal + 1} of {len(phase.precondition)}"
            if kind == "precondition"
            else f"round {rnd}, cell {ordinal + 1} of {len(phase.cells)}"
        )
        if strays := self.store.set_aside_strays(tag):
            note = f"{tag}: {counted(strays, 'raw file')} of an attempt never stored, set aside in raw/interrupted-*/"
            self.progress.note(note)
            manifest_of(self.store).notes.append(note)
        check_unchanged(manifest_of(self.store), self.target, here_legs(self.engine), f"cell {tag}")
        result = self.engine.run(
            self.target,
            cell.workload,
            self.store.raw_dir,
            tag,
            progress=LiveFile(
                self.store.dir, f"{cell.key} ({at})", self.progress.live, not self.engine.capabilities.virtual_time
            ),
        )
        check_result(result, f"round {tag} ({', '.join(result.raw_files[:2]) or 'no raw files'})")
        self.note_deviations(cell_where(phase.name, cell.key), result)
        if result.raw is not None and result.raw_files and (kept := kept_raw(result.raw)) is not None:
            self.kept_raw[result.raw_files[0]] = kept
        self.since_purge += result.write.io_bytes
        self.store.add_cell(
            phase.name,
            rnd,
            ordinal,
            kind,
            cell.key,
            cell.mix or None,
            cell.block_size or None,
            workload_record(cell.workload),
            result,
            t0,
            time.time(),
            partial=planned is not None and is_partial(planned, cell, result),
            idle_before_s=cell.idle_before_s,
        )
        self.progress.done(result, time.monotonic() - wall0)
        return result

    def note_deviations(self, where: str, result: RoundResult) -> None:
        """Each way the engine ran a cell otherwise than planned, once per phase and cell, in the
        run's notes (`show`, the report, --json): the plan's labels say what was asked."""
        notes = manifest_of(self.store).notes
        for d in result.deviations:
            note = f"{where}: {d}"
            if note not in notes:
                notes.append(note)
                self.progress.note(note)

    def wear(self, phase: str, when: str) -> None:
        """The drive's write counters: this machine's path, or (a remote engine) each host's drive, read there."""
        m = manifest_of(self.store)
        hosts = self.hosts_engine()
        if hosts:
            m.notes.extend(hosts.wear_snapshot(m.target.setdefault("host_writes", {}), phase, when))
        else:
            wear.snapshot(m.endurance, phase, when, self.target.path)

    def hosts_engine(self) -> HostsEngine | None:
        """The engine when its targets are on other hosts: it reads their identity and wear there."""
        remote = self.engine.capabilities.remote_targets
        return self.engine if remote and isinstance(self.engine, HostsEngine) else None

    def idle(self, seconds: float, where: str) -> None:
        caps = self.engine.capabilities
        if not caps.idle:
            raise IolabError(
                f"{where}: the plan idles the device {duration(seconds)}, but the "
                f"{self.engine.version()} engine cannot idle a target (capabilities.idle)."
            )
        clock = "virtual" if caps.virtual_time else "wall-clock"
        self.progress.note(f"{where}: idle {duration(seconds)} ({clock} time, no host IO)")
        self.engine.idle(self.target, seconds)


def metric_of(result: RoundResult, metric: str) -> float:
    value = {
        "iops": result.iops,
        "mbps": result.mbps,
        "read_mbps": result.read.mbps,
        "write_mbps": result.write.mbps,
        "lat_mean_us": result.lat_mean_us,
        "lat_max_us": result.lat_max_us,
    }[metric]
    if value is None:
        raise IolabError(f"tracking metric {metric} was not measured in this cell (no IOs in that direction?)")
    return value
