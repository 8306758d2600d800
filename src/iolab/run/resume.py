"""`iolab resume RUN`: continue an interrupted run where its stored rounds end.

The plan is rebuilt from the manifest (test, profile, target) and must match the stored one.
Within the first unfinished phase, cells whose engine output is on disk but which never
reached the database (killed between the two) are recovered from raw/; then the run goes on
at the first round not complete. A target that is not the one the run wrote (serial and
capacity; a file's path, inode and size; a simulated drive's preset and parameters) is refused:
a run measures one drive. A phase that cannot continue says why and runs again from its purge:
on a simulated drive (its state ended with its process), after a kill in preconditioning, or
when the target was written since. Nothing stored is deleted: cells of a round that is run
again are kept as kind 'interrupted', their files under raw/interrupted-N/. Processes the
stopped run left working in raw/ (an fio its death did not stop) are ended first (leftovers.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from iolab import targets
from iolab.core.cellschema import CellRow
from iolab.core.decide import sample_of_row
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Deferred, Phase, Profile, TestPlan
from iolab.core.runfiles import INPUTS_DIR
from iolab.core.steady import UnmeasuredValue, evaluate, stored_history
from iolab.core.units import counted
from iolab.engines import Capabilities, Engine, HostsEngine, engine_class, purge_methods
from iolab.engines.fio_hosts import legs_from_manifest, split_engine
from iolab.engines.fio_job import async_ioengine
from iolab.engines.hosttargets import stored_target
from iolab.figures.phaseend import Spent, after_round, record_ending, settle, written_since_purge
from iolab.run.budget import is_partial, next_round_s, stored_drains, stored_intervals, within_budget
from iolab.run.identity import check_identity, check_legs, host_differences, measured_spec
from iolab.run.leftovers import end_leftovers
from iolab.run.rebuilt import set_aside_rebuilt
from iolab.run.redecide import stop_rule_ending
from iolab.run.resumewords import REMOTE_NOTE, from_round, kept_text, rounds_text, runs_from
from iolab.run.runner import Runner, StartAt, build_deferred, cell_tag, here_legs, round_prefixes, workload_record
from iolab.run.runstart import RunOptions, engine_versions, same_plan, start_again
from iolab.run.statelost import state_lost
from iolab.store.manifest import Manifest, manifest_of, resolve_run
from iolab.store.runstore import RunStore
from iolab.store.unstarted import NOTHING_STORED, stopped_unstarted
from iolab.targets import Target
from iolab.targets.lock import TargetClaim


@dataclass
class Resumption:
    store: RunStore
    plan: TestPlan
    target: targets.Target
    options: RunOptions
    start: StartAt
    notes: list[str]


def prepare(
    ref: str | Path,
    engine_for,
    build_plan,
    allow_unsafe: bool = False,
    allow_system_disk: bool = False,
    listen_any: bool = False,
    ioengine: str | None = None,
) -> tuple[Resumption, Engine]:
    """Open the run for writing, check it can go on, recover lost cells and decide where it continues. Raises IolabError
    (nothing changed) when it cannot be resumed at all. `engine_for` and `build_plan` come from the api, so that
    resume needs neither the engines' list nor the test registry. `ioengine` (fio's; None: the run's)."""
    store: RunStore | None = None  # the caller claimed the run before this reads it; an open store holds it too
    with _looking(ref) as probe:
        run_dir, m = probe.dir, manifest_of(probe)
        target = stored_target(measured_spec(m), m.split)  # a hosts run's as its hosts reach it
        # A split run goes on over the paths or hosts it stored (never on the target alone); hosts'
        # targets are checked and claimed by split_engine, as in a new run (then _check_hosts compares them).
        sim_split = bool(m.split) and target.kind == "sim"  # ports of one simulated drive, not fio legs
        legs = legs_from_manifest(target, m.split) if m.split and not sim_split else None
        hosts = bool(legs and legs[0].host)
        workload = run_dir / INPUTS_DIR if (run_dir / INPUTS_DIR).is_dir() else None
        plan = build_plan(m.test, _stored_profile(m), target, workload)
        again = start_again(m, run_dir)  # the command each refusal gives: the run's own, --quick and all
        stored = _check_same_run(m, plan, target, hosts, again)
        # What is stored is checked whole before anything is written: a refusal changes nothing
        # (the manifest, results.db, raw/ stay as they were).
        built = _built(probe, plan)
        _check_tracked(probe, built, bool(legs) or engine_class(target).capabilities.keeps_state)  # fio's legs keep it
    ran_with, ioengine = _ioengines(m, target, hosts, ioengine)
    # one run per target, a resumed one too; Runner.run releases it
    claim = TargetClaim(target, None) if hosts else targets.claim(target)
    engine = None
    try:
        # Nothing of the stopped run may still write into raw/ or onto the target when resume
        # reads or moves its files, or when the safety checks ask whether the target is in use.
        ended = end_leftovers(run_dir / "raw", m.run_id)
        if not hosts:
            targets.check_safe_to_write(target, allow_unsafe, allow_system_disk)
        engine = (
            split_engine(target, legs, None, allow_unsafe, allow_system_disk, listen_any, ioengine or "auto")
            if legs
            else _sim_paths(m.split)
            if sim_split
            else engine_for(target, ioengine=ioengine)
        )
        elsewhere = hosts and _check_hosts(m, stored, target, engine, again)
        caps = engine.capabilities if legs else engine_class(target).capabilities
        options = RunOptions(
            purge_method=_purge_of(m, target, caps),
            allow_unsafe=allow_unsafe,
            allow_system_disk=allow_system_disk,
            tested_by=m.platform.get("tested_by", ""),
        )
        store = RunStore.open(run_dir, writable=True)
        notes: list[str] = [ended] if ended else []
        now = engine_versions(engine, target).get("ioengine")
        if ran_with and now != ran_with:  # the manifest names the engine of the rounds to come; the note, the change
            notes.append(f"fio ioengine {now} from here on (the rounds before used {ran_with}).")
            manifest_of(store).versions["ioengine"] = now
        set_aside_rebuilt(store, plan, notes)  # a begun phase this iolab builds otherwise runs again
        start = _where(store, built, target, caps, notes)
        # phases after the one it starts at are built again from what it measures now, and the one it
        # starts at from its start is built (and decided: its decision was superseded) again too
        cut = start.phase + (start.round > 0)
        plan = replace(built, phases=built.phases[:cut] + plan.phases[cut:])
        if elsewhere:
            notes.append(REMOTE_NOTE)
    except BaseException:
        claim.release()
        for opened in (engine, store):  # the store, the run directory's claim with it (store/writer.py)
            if opened is not None:
                opened.close()
        raise
    claim.note_run(m.run_id, run_dir)
    return Resumption(store, plan, target, options, start, notes), engine


@contextmanager
def _looking(ref: str | Path) -> Iterator[RunStore]:
    """The run, read-only: refusing must not touch the run. Its stored cells are read through the
    store's checks (rowcheck.py, each value's type), as every reader reads them, before resume
    decides anything: a round deleted in part would otherwise be set aside and measured again (a
    simulated drive's phase always runs again) where a report refuses the run."""
    try:
        probe = RunStore.open(ref)
    except IolabError:
        _refuse_unstarted(ref)
        raise
    try:
        _refuse_finished(manifest_of(probe))
        for kind in ("measure", "precondition"):
            probe.cells(kind=kind)
        yield probe
    finally:
        probe.close()


def _refuse_unstarted(ref: str | Path) -> None:
    """A run stopped before its results database had its tables is not a damaged one: say what
    happened and how to start it again (else the caller's error, "not an iolab results database")."""
    try:
        run_dir = resolve_run(ref)
    except IolabError:
        return  # no run: the caller's error says so
    m = stopped_unstarted(run_dir)
    if m is not None:
        raise IolabError(
            f"run {m.run_id}: {NOTHING_STORED}, so there is nothing to resume. Start the run again: "
            f"{start_again(m, run_dir)}. Its directory {run_dir} holds no measurement and can be removed."
        )


def _refuse_finished(m: Manifest) -> None:
    if m.state == "complete":
        raise IolabError(f"run {m.run_id} is complete: nothing to resume.")
    if m.state == "running":
        raise IolabError(f"run {m.run_id} is still running (process {m.pid}); resume it only after it has stopped.")


def _stored_profile(m: Manifest) -> Profile:
    try:
        # a run stored before the steady-state minimum existed goes on as it began: without one
        return Profile(**({"steady_min_write_multiple": 0.0} | m.profile))
    except TypeError as e:
        raise IolabError(
            f"run {m.run_id}: its stored profile is not one this iolab knows ({e}); start a new run."
        ) from None


def _check_same_run(m: Manifest, plan: TestPlan, target: Target, hosts: bool, again: str) -> dict | None:
    """Refuse to go on with another plan or on another drive than the run's (a hosts run's drives:
    _check_hosts, once its engine is made); returns the target's identity as the run stored it."""
    if not same_plan(plan, m.plan):
        raise IolabError(
            f"run {m.run_id}: this iolab builds a different plan for its test than the stored one "
            "(another iolab version, or the target's size changed), so it cannot continue it. "
            f"Start a new run: {again}"
        )
    stored = m.target.get("identity")
    if not hosts:
        check_identity(m, stored, target, again)
    return stored


def _ioengines(m: Manifest, target: Target, hosts: bool, asked: str | None) -> tuple[str | None, str | None]:
    """The fio ioengine the stored rounds ran with, and the one the rounds to come use: that
    one, unless told otherwise (a host's is its host entry's)."""
    ran_with = m.versions.get("ioengine")
    if ran_with is None and not hosts and str(m.versions.get("engine")).startswith("fio") and target.kind != "nbd":
        ran_with = async_ioengine("fio")  # stored before the choice was recorded: fio's rounds used this
    return ran_with, asked or (ran_with if ran_with in ("io_uring", "libaio") else None)


def _check_hosts(m: Manifest, stored: dict | None, target: Target, engine: Engine, again: str) -> bool:
    """Refuse another target than the run's; True: it is on other machines, whose targets are as read
    there (ssh mode; through fio only, nothing). All this machine's: a local run's identity."""
    if not engine.capabilities.remote_targets:
        check_identity(m, stored, target, again)
        check_legs(m, here_legs(engine), again)
        return False
    diff = host_differences(stored, engine.target_identity()) if stored and isinstance(engine, HostsEngine) else []
    if diff:
        raise IolabError(
            f"run {m.run_id}: a host's target is not the one the run wrote ({'; '.join(diff)}), so it "
            f"cannot continue there. Start a new run: {again}"
        )
    return True


def _purge_of(m: Manifest, target: Target, caps: Capabilities) -> str:
    """The purge the run used, as resolved on this device; an engine that owns its device's
    state (the simulator) has one purge, 'auto'."""
    used = m.purges[0]["method"] if m.purges and caps.keeps_state else "auto"
    if "no purge (--purge none)" in m.noncompliance:
        return "none"
    return used if used in purge_methods(target, caps) else "auto"


def _sim_paths(split: list[dict]) -> Engine:
    from iolab.engines.sim_paths import paths_from_manifest  # lazy: the simulator is an optional native module

    return paths_from_manifest(split)


def _built(store: RunStore, plan: TestPlan) -> TestPlan:
    """The plan with every deferred phase the run has begun built again from the stored
    results (the same results give the same phase), up to the first phase not ended, where the
    run goes on; later ones the runner builds on reaching them. A phase after it was begun by an
    attempt whose phases before it now run again (a resume stopped on its way back to it): its
    decision was superseded, and what it is built from is being measured again (it was built
    from what was left, and the resume refused: "no operating point could be chosen")."""
    phases = list(plan.phases)
    for i, ph in enumerate(phases):
        ended = store.phase_ended(ph.name)
        if isinstance(ph, Deferred) and ended is not None:
            phases[i] = build_deferred(store, replace(plan, phases=tuple(phases)), ph)[0] or ph
        if ended is False:
            break
    return replace(plan, phases=tuple(phases))


def run(r: Resumption, engine: Engine, progress=None) -> None:
    manifest_of(r.store).notes.append("resumed: " + " ".join(r.notes))
    Runner(r.plan, r.target, engine, r.store, r.options, progress).run(r.start, stamp=True)


# -- where to continue -----------------------------------------------------------------------


def _where(store: RunStore, plan: TestPlan, target: targets.Target, caps: Capabilities, notes: list[str]) -> StartAt:
    for i, ph in enumerate(plan.phases):
        ended = store.phase_ended(ph.name)
        if ended:
            continue
        if ended is None and isinstance(ph, Deferred) and build_deferred(store, plan, ph)[0] is None:
            continue  # the run decided not to measure it (a bisection step it could not tell apart)
        if ended is None:
            notes.append(f"{ph.name}: not begun; it runs {runs_from(ph)}.")
            return StartAt(i, 0)
        return _within(store, plan, i, _begun(ph), target, caps, notes)
    # Killed after its last phase ended (or its last cell, recovered above, ended it), before the
    # run's own end: nothing is left to measure, and the run still needs its audit and record.
    notes.append("every phase has ended; the run is finished now (its audit and record).")
    return StartAt(len(plan.phases), 0)


def _within(
    store: RunStore, plan: TestPlan, i: int, ph: Phase, target: targets.Target, caps: Capabilities, notes: list[str]
) -> StartAt:
    done = _recover(store, plan, ph, target, caps, notes)
    lost = state_lost(store, ph, target, caps)
    why = lost or _rounds_missing(ph, done)
    if why:
        # A phase that does not purge goes on from the drive state the phases before it left;
        # when that state is lost, they run again too, from the last purge.
        first = i
        while lost and first > 0 and not _purges(plan.phases[first]):
            first -= 1
        # a phase the run decided not to measure (a bisection step with no gap to split) has nothing
        # to run again: it was refused as "began ... could not be built again"; it is decided again
        again = [_begun(p) for p in plan.phases[first : i + 1] if not _not_run(store, p)]
        stored = sum(
            len(store.cells(p.name, k, complete_only=False)) for p in again for k in ("measure", "precondition")
        )
        moved = sum(store.set_aside(p.name, 0, round_prefixes(p, 0)) for p in again)
        _supersede_decisions(store, {p.name for p in plan.phases[first:]}, notes)
        redo = (
            f"it runs again {runs_from(ph)}"
            if first == i
            else f"it goes on from the state the phases before it left, so {', '.join(p.name for p in again)} run "
            f"again from the purge of {plan.phases[first].name}"
        )
        notes.append(
            f"{ph.name}: cannot continue{from_round(done)}: {why}. Instead {redo}; {kept_text(stored, moved)}."
        )
        return StartAt(first, 0)
    cells = store.cells(ph.name)
    history = _history(ph, cells)
    written = sum(c.write_bytes for c in cells)
    elapsed = sum(c.runtime_s for c in cells)
    moved = store.set_aside(ph.name, done + 1, round_prefixes(ph, done + 1))
    if done >= 1:
        # a stop rule's decision is written after its round: one lost between the two is made again
        ruled = stop_rule_ending(ph, cells)
        verdict = evaluate(history, plan.rule, ph.shown_only) if ph.tracking and ruled is None else None
        if verdict is not None:
            store.add_steady(ph.name, done, verdict.variables)
        upto = next_round_s(ph, stored_drains(cells))
        ended = Spent(written, elapsed, written_since_purge(store, i), target.drive_capacity, done, upto)
        stop = ruled or after_round(store, plan, ph, verdict, ended)
        if stop is not None or done >= ph.max_rounds:
            # It was killed after its last round, before closing the phase (or recording why, as the runner does).
            record_ending(manifest_of(store), stop)
            steady, why_not = settle(store, plan, ph, verdict, ended)
            reason = stop.reason if stop else f"reached the round limit ({ph.max_rounds})"
            store.finish_phase(ph.name, steady, done, reason + (f"; {why_not}" if why_not not in reason else ""))
            notes.append(
                f"{ph.name}: its stored {rounds_text(done)} already end{'s' if done == 1 else ''} it ({reason})."
            )
            return _where(store, plan, target, caps, notes)
    # stopped inside its first round: nothing of the phase's rounds to keep (never "rounds 1-0")
    kept = f"{rounds_text(done)} {'is' if done == 1 else 'are'} kept" if done else "no round of it had ended"
    notes.append(
        f"{ph.name}: continues at round {done + 1} ({kept}"
        + (f"; the unfinished round's {moved} files are kept in raw/interrupted-*/" if moved else "")
        + ")."
    )
    samples = tuple(sample_of_row(c) for c in cells) if ph.stop_rule is not None else ()
    return StartAt(i, done + 1, written, elapsed, history, samples, stored_intervals(cells))


def _not_run(store: RunStore, ph: Phase | Deferred) -> bool:
    """A phase before the one the run goes on in that it never began: one it decided not to
    measure (_where passes over it; `_built` left it deferred)."""
    return isinstance(ph, Deferred) and store.phase_ended(ph.name) is None


def _purges(ph: Phase | Deferred) -> bool:
    """Whether a phase begins with a purge: one decided not to run (still deferred) purged nothing."""
    return not isinstance(ph, Deferred) and ph.purge


def _begun(ph: Phase | Deferred) -> Phase:
    """A phase the run has begun: `_built` built it again if it was deferred."""
    if isinstance(ph, Deferred):
        raise IolabError(
            f"{ph.name}: the run began this phase but it could not be built again from the stored results."
        )
    return ph


def _check_tracked(probe: RunStore, plan: TestPlan, keeps_state: bool) -> None:
    """The tracked values of the phase the run goes on in, read before anything is written: a
    stored cell without one (changed after the run wrote it) refuses the run here, not once
    resume has recovered cells, moved raw files and marked the run interrupted. A simulated
    drive's phase runs again from its purge and reads none (as _within)."""
    if not keeps_state:
        return
    for ph in plan.phases:
        ended = probe.phase_ended(ph.name)
        if ended is None:
            return  # not begun: it runs from its purge
        if not ended:
            _history(_begun(ph), probe.cells(ph.name))
            return


def _history(ph: Phase, cells: list[CellRow]) -> dict[str, list[tuple[int, float]]]:
    """The phase's tracking history as the runner kept it (core/steady.stored_history)."""
    try:
        return stored_history(((t.name, t.cell_key, t.metric) for t in ph.tracking), cells)
    except UnmeasuredValue as e:
        raise IolabError(f"{e}, so steady state cannot be evaluated on resume.") from None


def _recover(
    store: RunStore, plan: TestPlan, ph: Phase, target: targets.Target, caps: Capabilities, notes: list[str]
) -> int:
    """Store cells whose engine output is complete on disk but which never reached the
    database; returns the last complete round (0: preconditioning done, -1: not even that).
    Without `keeps_state` nothing is recovered: a round's output alone cannot say the device
    state it left when that state ended with the process."""

    def recovered(rnd: int) -> bool:
        return caps.keeps_state and _recover_round(store, plan, ph, rnd, target, notes)

    if ph.precondition and not store.round_complete(ph.name, 0) and not recovered(0):
        return -1
    rnd = 1
    while rnd <= ph.max_rounds and (store.round_complete(ph.name, rnd) or recovered(rnd)):
        rnd += 1
    return rnd - 1


def _recover_round(
    store: RunStore, plan: TestPlan, ph: Phase, rnd: int, target: targets.Target, notes: list[str]
) -> bool:
    """Complete round `rnd` from raw/ if only its stored rows are missing; True if now complete."""
    from iolab.engines.fio_parse import load_round

    if rnd == 0:
        cells = [("precondition", Cell(w.label(), w, "", 0)) for w in ph.precondition]
    else:
        cells = [("measure", c) for c in ph.cells]
    stored = store.stored_ordinals(ph.name, rnd)
    finished = store.cells(ph.name)  # its complete rounds: what the budget counts, and each cell's pace
    written = sum(c.write_bytes for c in finished) + sum(
        c.write_bytes for c in store.cells(ph.name, complete_only=False) if c.round == rnd
    )
    recent = stored_intervals(finished)
    recovered = 0
    complete = True
    for ordinal, (kind, planned) in enumerate(cells):
        if ordinal in stored:
            continue
        cell = planned
        if kind == "measure":
            cell = within_budget(ph, planned, written, recent.get(planned.key, ()))
        tag = cell_tag(ph.name, rnd, ordinal, cell.key)
        json_path = store.raw_dir / f"{tag}.json"
        try:
            result = load_round(store.raw_dir, tag)
        except IolabError:
            complete = False  # no output, or an incomplete one: that cell was in flight
            break
        job = store.raw_dir / f"{tag}.fio"
        started = job.stat().st_mtime if job.exists() else json_path.stat().st_mtime - result.runtime_s
        store.add_cell(
            ph.name,
            rnd,
            ordinal,
            kind,
            cell.key,
            cell.mix or None,
            cell.block_size or None,
            workload_record(cell.workload),
            result,
            started,
            json_path.stat().st_mtime,
            partial=kind == "measure" and is_partial(planned, cell, result),  # as the runner marks it
            idle_before_s=cell.idle_before_s,  # the runner idled before measuring it (HIR's waits)
        )
        written += result.write.io_bytes
        recovered += 1
    if recovered:
        notes.append(
            f"{ph.name}: recovered {counted(recovered, 'cell')} of round {rnd} from raw/ (measured, not yet stored "
            "when the run stopped)."
        )
    if complete:
        store.finish_round(ph.name, rnd)
    return complete


def _supersede_decisions(store: RunStore, phases: set[str], notes: list[str]) -> None:
    """Decisions of phases that run again are made again: the old ones move to the notes."""
    m = manifest_of(store)
    old = [d for d in m.decisions if d.get("phase") in phases]
    m.decisions = [d for d in m.decisions if d.get("phase") not in phases]
    notes.extend(f"{d['phase']}: superseded decision (its phase runs again): {d.get('outcome')}" for d in old)


def _rounds_missing(ph: Phase, done: int) -> str | None:
    if done < 0:
        return "it stopped during preconditioning, which must run whole"
    if done == 0 and not ph.precondition:
        return "no round had finished"
    return None
