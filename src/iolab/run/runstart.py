"""Opening a run: the options it runs with, the manifest of a new run (this machine's platform,
the plan as stored) and `start`, which claims the target, checks it is safe to write and creates
the run directory."""

from __future__ import annotations

import json
import os
import platform
import shlex
import socket
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from iolab import __version__, targets
from iolab.core.decide import rule_record
from iolab.core.errors import IolabError
from iolab.core.plan import Deferred, Phase, TestPlan
from iolab.core.profilewords import cache_text, cell_time_text
from iolab.engines import Engine, purge_methods
from iolab.figures.phaseend import range_label, range_share, rule_text
from iolab.run.identity import measured_spec
from iolab.run.stopsignals import Interrupted
from iolab.store.manifest import Manifest, manifest_of, now_iso, shell_runs_root
from iolab.store.runstore import RunStore
from iolab.targets import DeviceFacts, Target
from iolab.targets.cache import unsettable as unsettable_cache
from iolab.targets.files import check_space
from iolab.targets.lock import TargetClaim
from iolab.targets.purge import impossible_purge, purge_failed
from iolab.targets.purgerange import check_partial_purge


@dataclass(frozen=True)
class RunOptions:
    purge_method: str = "auto"  # 'none' is allowed and flagged non-compliant
    allow_unsafe: bool = False  # --allow-unsafe-target
    allow_system_disk: bool = False  # --allow-system-disk: a mounted filesystem or the running system
    tested_by: str = ""


def platform_facts() -> dict[str, Any]:
    """The report's Test Platform column, from this machine."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kib / 1024**2:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    os_name = platform.system()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return {
        "host": socket.gethostname(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": os_name,
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def noncompliance_of(plan: TestPlan, target: Target, options: RunOptions, purged: bool = True) -> list[str]:
    """Why a run of `plan` on `target` is not compliant (empty: it is), as its manifest says;
    `iolab plan` says it before the run. `purged`: False when the engine purges nothing (a
    hosts run's other machines: their purge is not this target's)."""
    profile = plan.profile
    noncompliance = profile.noncompliance()
    if "cell_seconds" in plan.ignored_options and cell_time_text(profile.cell_seconds) in noncompliance:
        # the plan is the same at the default cell time (a fill to a byte budget has no cells of
        # it): "0.1 s per cell instead of 60 s" would name a setting the run did not use
        noncompliance.remove(cell_time_text(profile.cell_seconds))
    drive = target.drive_capacity
    share = range_share(plan.capacity, drive, profile.active_range)
    source = profile.limit_source()
    if drive > target.capacity and not (source and plan.capacity < int(target.capacity * profile.active_range)):
        # the target's own ?size= cut it (a limit as well, if any, cuts no further)
        source = f"the target's ?size={target.option('size')}"
    if share is not None:
        noncompliance.append(
            f"{range_label(share)} (tested capacity limited to {plan.capacity / 1e9:.3f} GB of "
            f"{drive / 1e9:.3f} GB by {source})"
        )
    elif target.copy_of and source != "--quick":
        # a quick copy of a simulated drive at the user's size: said beside "quick profile", so
        # no line credits the size to --quick
        noncompliance.append(f"a {plan.capacity / 1e9:.3f} GB copy of {target.copy_of}, its size set by {source}")
    if options.purge_method == "none":
        noncompliance.append("no purge (--purge none)")
    # a purge the target cannot have fails as the run reaches it: said before the run starts
    purges = any(isinstance(ph, Phase) and ph.purge for ph in plan.phases)
    failed = impossible_purge(target, options.purge_method) if purged and purges else None
    if purges and not purged and options.purge_method != "none":
        # fio's host engine (threads, sockets): imported for a run on other hosts, not by every run
        from iolab.engines.fio_hosts import NOT_PURGED_OUTCOME

        failed = NOT_PURGED_OUTCOME  # the engine's outcome of every purge it is asked for (fio_hosts.purge)
    if failed is not None:
        noncompliance.append(purge_failed(failed.method))
    # a cache no run can set (a file, an NBD export, a loop device): the PTS's WCD/WCE is a
    # condition of the results, and a cache left as it was is not known to meet it
    if purged and (why := unsettable_cache(target)):
        noncompliance.append(f"write cache {cache_text(profile.write_cache)} not set: {why}")
    return noncompliance


def new_manifest(plan: TestPlan, target: Target, engine: Engine, options: RunOptions) -> Manifest:
    profile = plan.profile
    noncompliance = noncompliance_of(plan, target, options, bool(engine.capabilities.purge_methods))
    return Manifest(
        run_id="",
        test=plan.test,
        title=plan.title,
        spec=plan.spec,
        target={
            "spec": target.spec,
            "kind": target.kind,
            "path": target.path,
            "capacity": target.capacity,
            "tested_capacity": plan.capacity,
            "short_name": target.short_name,
            # targets on other machines: this machine's reading of the path is not that drive
            "facts": asdict(DeviceFacts() if engine.capabilities.remote_targets else target.facts),
        }
        # the drive a quick copy stands for: the runs of a sequence test copies of one drive
        | ({"copy_of": target.copy_of, "copy_of_capacity": target.copy_of_capacity} if target.copy_of else {}),
        profile=asdict(profile),
        compliant=not noncompliance,
        noncompliance=noncompliance,
        parameters=dict(plan.parameters),
        notes=list(plan.notes) + list(getattr(engine, "notes", ())),
        steady_rule=rule_text(plan, options.purge_method != "none"),
        versions=engine_versions(engine, target),
        platform=platform_facts() | {"tested_by": options.tested_by},
        started=now_iso(),
        plan=plan_summary(plan),
        split=list(getattr(engine, "split", ())),
        ignored_options=dict(plan.ignored_options),
        uid=uuid.uuid4().hex,
    )


def engine_versions(engine: Engine, target: Target) -> dict[str, Any]:
    """The manifest's versions: iolab's, the engine's and the fio ioengine its rounds use."""
    out: dict[str, Any] = {"iolab": __version__, "engine": engine.version()}
    ioengine_of = getattr(engine, "ioengine_of", None)  # only fio has one
    if ioengine_of is not None:
        out["ioengine"] = ioengine_of(target)
    return out


def plan_summary(plan: TestPlan) -> dict[str, Any]:
    """The plan as the manifest stores it. A deferred phase is its description until the run
    builds it; then it is the phase as built, still marked `deferred`."""
    out: dict[str, Any] = {
        "phases": [
            {"name": ph.name, "deferred": ph.describe} if isinstance(ph, Deferred) else phase_summary(ph)
            for ph in plan.phases
        ]
    }
    if plan.values:  # only when used, so plans stored before typed values still compare equal (resume)
        out["values"] = dict(plan.values)
    return out


def phase_summary(ph: Phase) -> dict[str, Any]:
    d = {
        "name": ph.name,
        "purge": ph.purge,
        "precondition": [w.label() for w in ph.precondition],
        "cells": [c.key for c in ph.cells],
        "tracking": [asdict(t) for t in ph.tracking],
        "max_rounds": ph.max_rounds,
        "stop_on_steady": ph.stop_on_steady,
        "budget_write_bytes": ph.budget_write_bytes,
        "budget_seconds": ph.budget_seconds,
        "min_write_bytes": ph.min_write_bytes,
    }
    # only when used, so plans stored before these existed still compare equal (resume)
    if ph.stop_rule is not None:
        d["stop_rule"] = rule_record(ph.stop_rule) | {"describe": ph.stop_rule.describe()}
    idle = {c.key: c.idle_before_s for c in ph.cells if c.idle_before_s is not None}
    if idle:
        d["idle_before_s"] = idle
    return d


def as_planned(summary: dict[str, Any]) -> dict[str, Any]:
    """A stored plan with its built phases back as the deferred phases the test declares, and
    its parameters' values (kept: resume compares them too, and dropping them made every plan
    with values differ from itself)."""
    out: dict[str, Any] = {
        "phases": [
            {"name": p["name"], "deferred": p["deferred"]} if "deferred" in p else p for p in summary.get("phases", [])
        ]
    }
    if "values" in summary:
        out["values"] = summary["values"]
    return out


def same_plan(plan: TestPlan, stored: dict[str, Any]) -> bool:
    """Whether `plan` is the plan a manifest stored: compared as the manifest holds it (JSON: a
    value's tuple is stored as a list)."""
    built: dict[str, Any] = json.loads(json.dumps(plan_summary(plan), default=str))
    return built == as_planned(stored)


def check_purge_method(target: Target, options: RunOptions, purged: Callable[[], bool] = lambda: True) -> None:
    """Refuse a --purge that is not one for this target, before anything is written. `purged()`:
    False when the run leaves the target as it is (a hosts run's other machines): then what a
    purge of a part of a device would touch is not asked (this machine's sysfs knows nothing of
    another machine's device, and nothing will be erased). Asked only once the target's kind
    passed: an engine of an unknown kind has no capabilities to ask."""
    allowed = purge_methods(target)
    if options.purge_method not in allowed:
        raise IolabError(
            f"purge method {options.purge_method!r}: not one for {target.spec} ({target.kind}); "
            f"use one of {', '.join(allowed)}. Nothing was run or written."
        )
    # a device tested in its first part (?size=): no purge that would erase beyond it
    if purged():
        check_partial_purge(target, options.purge_method)


def admit(
    target: Target,
    options: RunOptions,
    engine_checks: Callable[[], bool],
    claim: bool = True,
    purged: Callable[[], bool] = lambda: True,
) -> tuple[TargetClaim, list[str]]:
    """The purge method, then the target's claim (a second run on it is refused, naming the first)
    and its safety checks, unless the engine checked and claimed it where it is written
    (`engine_checks`, asked once the purge method passed: an engine of an unknown kind has no
    capabilities to ask); returns
    the claim (a placeholder when nothing was claimed) and the checks overridden; a file target
    its filesystem has no room for is refused here too. `claim`: False
    for `iolab plan` (api/preflight.py), which checks as a run does and claims nothing. `purged()`:
    False when the run will not purge the target (check_purge_method)."""
    check_purge_method(target, options, purged)
    checked_by_engine = engine_checks()
    got = TargetClaim(target, None) if checked_by_engine or not claim else targets.claim(target)
    try:
        overrides = (
            []
            if checked_by_engine
            else targets.check_safe_to_write(target, options.allow_unsafe, options.allow_system_disk)
        )
        if not checked_by_engine and target.kind == "file":  # room for it, before the run directory exists
            check_space(target)
    except BaseException:
        got.release()
        raise
    return got, overrides


def start(plan: TestPlan, target: Target, engine: Engine, options: RunOptions, root: Path) -> RunStore:
    """Build a simulated drive, check the purge method fits the target, claim the target for
    this run (a second run on it is refused, naming this one), check it is safe to write, then
    open the run directory. A refused target leaves no run behind; the claim lasts until
    Runner.run ends (or stopped_before_its_rounds)."""
    if target.kind == "sim":
        # The simulated drive is built (a load= state read and checked) before its run
        # directory exists: a drive that cannot be built leaves no failed run behind.
        engine.prepare(target)
    # An engine that claims its targets checked and claimed each one where it is written (a hosts
    # run's paths, hostcheck.py) and says what it overrode: a claim or check of the target's path
    # here would guard the wrong thing (another machine's drive) or claim a path a second time.
    # An engine that purges nothing (a hosts run's other machines) has no purge to check.
    claim, overrides = admit(
        target,
        options,
        lambda: engine.capabilities.claims_targets,
        purged=lambda: bool(engine.capabilities.purge_methods),
    )
    try:
        if engine.capabilities.claims_targets:
            overrides = list(getattr(engine, "safety_overrides", ()))
        manifest = new_manifest(plan, target, engine, options)
        manifest.safety_overrides = overrides
        try:
            store = RunStore.create(root, manifest)
        except OSError as e:
            raise IolabError(
                f"runs directory {root}: cannot create a run directory there ({e.strerror or e}: "
                f"{e.filename or root}). Choose a writable directory with --runs-dir or $IOLAB_RUNS."
            ) from None
    except BaseException:
        claim.release()
        raise
    claim.note_run(manifest.run_id, store.dir)
    return store


def stopped_before_its_rounds(store: RunStore, target: Target, e: BaseException) -> None:
    """A stop (`e`: Ctrl-C, a stop signal, the caller closing the steps) after `start` opened
    the run but before the runner took over (which marks its own interruptions): the run must
    not stay 'running', nor its target claimed."""
    if manifest_of(store).state == "running":
        by = f"by {e.signal_name}" if isinstance(e, Interrupted) else "by the user (Ctrl-C)"
        store.finish("interrupted", f"stopped {by} as it started; nothing was measured")
    targets.release(target)


def start_again(m: Manifest, run_dir: Path) -> str:
    """The `iolab run` command of a stored run as far as its manifest says it: the test, the
    target as given (the drive a --quick run simulated a copy of), --quick, a profile other than
    the default, and the runs directory; a split run's paths or hosts stand as '...'. A file's
    path and the runs directory are absolute, as the run resolved them: the command is given to
    someone who may be in another directory than the run was started from (file:d.img there
    named another file)."""
    quick = bool(m.profile.get("quick"))
    words = ["iolab", "run", m.test, *(["--quick"] if quick else [])]
    if m.profile.get("name") not in (None, "enterprise"):
        words += ["--profile", str(m.profile["name"])]
    words += ["-t", str((m.target.get("copy_of") if quick else None) or measured_spec(m))]
    # not runs_root(): `iolab resume --runs-dir X` made X that for its own length, and the
    # command, typed in the shell without it, wrote to the shell's default instead
    if run_dir.parent.resolve() != shell_runs_root():
        words += ["--runs-dir", str(run_dir.parent.resolve())]
    return shlex.join(words) + (" ..." if m.split else "")
