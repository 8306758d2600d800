"""`iolab plan`: what `iolab run` would do, printed before a run (api/planinfo.py describes it;
this module prints it and adds the ETA `iolab run` prints at its start, from cli/progress and
cli/budgeteta). Nothing is purged, written or claimed, and no run directory is made."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, replace
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape as esc

from iolab.cli.auto import emit, want_json
from iolab.cli.console import Console
from iolab.cli.options import TEST_HELP, RunArgs
from iolab.core.errors import IolabError
from iolab.core.profilewords import percent_text
from iolab.core.units import and_list, counted, duration, eng, kib_label, num

if TYPE_CHECKING:  # the plans are built only when `iolab plan` runs: --help and the rest start without them
    from iolab.api.planinfo import PlanDescription, PlannedCell, PlannedPhase, PlannedTest, Step

console = Console()
# `iolab run`'s own --repeat and --fleet make several runs of one plan: taken here only to say so
# (hidden: `iolab plan -h` lists what it describes).
REPEAT = typer.Option(1, "--repeat", metavar="N", hidden=True, help="Refused: a plan is one run's.")
FLEET = typer.Option(None, "--fleet", metavar="FILE", hidden=True, help="Refused: a plan is one target's.")


def plan(
    test: str = typer.Argument(..., metavar="TEST", help=TEST_HELP),
    repeat: int = REPEAT,
    fleet_file: Optional[Path] = FLEET,
    *,
    args: RunArgs,
):
    """Describe what `iolab run TEST` would do with these options, without touching the target: per test the
    tested capacity, purge, phases, cells, round limits, budgets, steady-state rule, compliance, ignored
    options and the ETA (--json: the same as one document). `iolab fio-job` prints the exact fio jobs."""
    from iolab.api import planinfo
    from iolab.api.reports import read_spec_sheet
    from iolab.api.scaleout import legs_for_run, run_target
    from iolab.core.plan import PROFILE_FLAGS  # the plan's types: only when a plan is described
    from iolab.engines.sim import DEFAULT_PRESET

    want_json("plan", console, args.json_out)
    if repeat != 1:
        raise IolabError(
            "--repeat runs the same plan N times: `iolab plan` describes one run of it (leave --repeat out; "
            "the time is N × the ETA shown)."
        )
    if fleet_file is not None:
        raise IolabError("--fleet runs on every drive of a fleet file: `iolab plan` describes one target (give -t).")
    if args.target and len(args.target) > 1:
        raise IolabError(
            "`iolab plan` describes the plan on one target: give one --target (each drive of a several-target "
            "run is planned on its own capacity)."
        )
    if args.spec_sheet is not None:
        # nothing is run by a plan: the sheet fixed, the plan is asked for again
        again = f"plan again (`iolab plan {test} ... --spec-sheet {args.spec_sheet}`)"
        read_spec_sheet(args.spec_sheet, test, args.everything, again=again)
    given = run_target(args.target[0] if args.target else f"sim:{DEFAULT_PRESET}", args.hosts, args.hosts_file)
    legs = legs_for_run(given, args.paths, args.hosts, args.hosts_file)
    split = f"the outstanding IO split over {counted(len(legs[0]), 'leg')} ({legs[1]})" if legs else None
    unchecked = _room_unchecked(legs[0]) if legs else None
    if split and unchecked:
        split += f"; {unchecked}"
    d = planinfo.describe(
        test,
        args.make_profile(),
        given,
        args.run_options(),
        PROFILE_FLAGS,
        args.workload,
        args.everything,
        split,
        _not_purged(legs[0] if legs else []),
    )
    if legs and (few := _few_legs(d.plans, legs[0])):
        d = replace(d, split=f"{d.split}; {few}")
    args.refuse_as_run_would(given, legs)  # what `iolab run` refuses is refused here, with its code and words
    if args.json_out:
        emit("plan", 0, plan=document(test, given.spec, d))
        return
    show(test, given.spec, d, size_unread=legs is not None and _size_unread(legs[0]))


def _few_legs(plans: Sequence[Any], legs: list) -> str | None:
    """The steps whose outstanding IO is below the number of legs, in the words the run's cells say
    it (merge.idle_legs): such a step runs on fewer legs, not split over all of them as the plan's
    split line says; and the phases built during the run, whose steps cannot be judged yet (said
    by name, with what each is built from). None: every step runs on every leg."""
    from iolab.core.plan import Deferred
    from iolab.engines.merge import legs_run, unsplit

    shares = [getattr(leg, "share", 1.0) for leg in legs]
    found: defaultdict[tuple[int, int], Counter[tuple[str, str]]] = defaultdict(Counter)  # (legs run, oio)
    later: dict[tuple[str, str], list[str]] = {}  # (test, what a Deferred phase is built from) -> the phases
    for plan in plans:
        for ph in plan.phases:
            if isinstance(ph, Deferred):  # built during the run: its steps are not known yet
                later.setdefault((plan.title, ph.describe), []).append(ph.name)
                continue
            steps = [*((w, "preconditioning step") for w in ph.precondition), *((c.workload, "cell") for c in ph.cells)]
            for w, kind in steps:
                if (k := legs_run(w, shares)) < len(shares):
                    found[(k, w.outstanding)][(kind, f"{plan.title} {ph.name}")] += 1
    said = []
    for (k, oio), where in sorted(found.items(), key=lambda kv: kv[0][1]):
        counts = ", ".join(f"{counted(m, kind)} of {w}" for (kind, w), m in where.items())
        said.append(
            f"a workload at {oio} outstanding IO runs on {k} of its {len(shares)} legs: {unsplit(oio)} ({counts})"
        )
    if later:
        said.append(
            "phases built during the run are not judged here: their steps come from what the phases before them "
            f"measure (a step below {len(shares)} outstanding IO will run on fewer legs, as the run's cells will "
            "say): "
            + "; ".join(
                f"{title} {and_list(names)}, {'each ' if len(names) > 1 else ''}from {src}"
                for (title, src), names in later.items()
            )
        )
    return "; ".join(said) or None


def _room_unchecked(legs: list) -> str | None:
    """The file targets whose filesystem's free space nothing can ask before the run (a host
    reached through fio's server alone: a host over SSH is asked with df, a host of this machine's
    address here), in words; None: every one is asked."""
    from iolab.engines.hosttargets import target_place

    blind = [
        f"{leg.target.path} on {leg.host.name}"
        for leg in legs
        if getattr(leg, "host", None) and not leg.host.ssh and target_place(leg.host) is not None
        if leg.target.kind == "file"
    ]
    if not blind:
        return None
    return (
        f"the free space for {', '.join(blind)} is not checked before the run (a host reached through fio's "
        "server only cannot be asked; a full filesystem there fails the run when fio meets it)"
    )


def _size_unread(legs: list) -> bool:
    """Whether no leg's target size can be read (every host reached through fio's server only,
    as _room_unchecked judges one): the run's size is then its ?size= alone."""
    if not all(getattr(leg, "host", None) and not leg.host.ssh for leg in legs):
        return False
    # where a host's target is: the hosts' module (threads, fio's servers) only for hosts' legs
    from iolab.engines.hosttargets import target_place

    return all(target_place(leg.host) is not None for leg in legs)


def _not_purged(legs: list) -> str | None:
    """What the run does instead of a purge when a host is another machine's (the split engine's
    words), else None: the run purges the target as it says."""
    hosts = [leg.host for leg in legs if getattr(leg, "host", None)]
    if not hosts:  # no host's leg: the hosts' modules (threads, fio's servers) are not imported
        return None
    from iolab.engines.fio_hosts import NOT_PURGED
    from iolab.engines.hosttargets import purged_here

    return None if purged_here(hosts) else NOT_PURGED


def eta(d: PlanDescription) -> dict[str, Any]:
    """The ETA `iolab run` prints as it starts (sequence_eta before any step is measured) and its numbers."""
    from iolab.cli.budgeteta import plans_ahead
    from iolab.cli.progress import sequence_eta

    plans = list(d.plans)
    rest = plans_ahead(plans)
    return {
        "text": sequence_eta(plans),
        "earliest_s": rest.early,
        "expected_latest_s": rest.late,
        "at_most_s": rest.most,
        "not_estimated": list(rest.unknown),
    }


def document(test: str, target: str, d: PlanDescription) -> dict[str, Any]:
    """The `plan` part of `iolab plan --json` (pages/outcome_schema.py declares it)."""
    return {
        "test": test,
        "target": target,
        "split": d.split,
        "ignored": list(d.ignored),
        "eta": eta(d),
        "tests": [asdict(t) for t in d.tests],
    }


HOSTS_CAPACITY = "capacity not known (hosts reached through fio's server only cannot say it; ?size= is the size tested)"


def show(test: str, target: str, d: PlanDescription, size_unread: bool = False) -> None:
    out = console.print
    out(
        f"[bold]iolab plan {esc(test)}[/] on {esc(target)}: what `iolab run` would do (nothing was purged or written)",
        soft_wrap=True,
    )
    # An ignored option is said once: in each test's "ignored" row, with the value its plan is the
    # same at, and above the tests (as `iolab run` says it) only when no row says it: --max-rounds,
    # whose test's round-limit line says what bounds its rounds instead.
    rowed = {k for t in d.tests for k in t.ignored_options if k != "--max-rounds"}
    for line in d.ignored:
        if line.split(" ", 1)[0] not in rowed:  # unused.ignored: each line starts with its flag
            out(f"note: {esc(line)}", soft_wrap=True)
    if d.split:
        out(esc(d.split))
    # a sequence's run prints this line before its first test; a single test's run prints its
    # phases' ETA as they start (the same plan spans, TestPlan.phase_seconds)
    said = " (as `iolab run` prints it before the first test)" if len(d.tests) > 1 else ""
    out(f"[bold]Time[/]{said}: {esc(eta(d)['text'])}", soft_wrap=True)
    for i, t in enumerate(d.tests):
        out("")
        _show_test(t, i, len(d.tests), size_unread)


def _show_test(t: PlannedTest, i: int, n: int, size_unread: bool = False) -> None:
    from iolab.core.plan import option_text

    out = console.print
    of = f"test {i + 1}/{n}: " if n > 1 else ""
    out(f"[bold]{esc(of + t.title)}[/] ({esc(t.test)}; {esc(t.spec)})")
    copy = f" (a copy of {t.copy_of}, scaled down by {' and '.join(t.scaled_by)})" if t.copy_of else ""
    tracked = any(ph.tracking for ph in t.phases)
    # the round limit bounds only phases that track steady state; the others (searches, ramps,
    # bisections) and a test whose plan is the same at any limit (WSAT, XSR: planinfo probes it)
    # run the rounds their own line gives
    given = t.max_rounds_from == "--max-rounds" or "--max-rounds" in t.ignored_options
    if t.max_rounds_from != "not used" and (tracked or any(ph.stop_on_steady for ph in t.phases)):
        limit = f"round limit {t.max_rounds} ({'--max-rounds' if given else 'profile'})"
    elif "--max-rounds" in t.ignored_options:  # the note above the tests says --max-rounds is ignored: once
        limit = "round limit: each phase's own, below"
    else:
        whose = f"--max-rounds {t.max_rounds} is" if given else "the profile's round limit is"
        limit = f"{whose} not used (each phase's own, below)"
    rows = [
        # hosts that cannot be asked: the size known is ?size=, the size tested (the next row), not the drives'
        ("target", f"{t.target}{copy}, " + (HOSTS_CAPACITY if size_unread else eng(t.target_capacity_bytes, "B"))),
        ("tested", f"{eng(t.tested_capacity_bytes, 'B')}, active range {percent_text(t.active_range)}"),
        ("purge", f"{t.purge_method}: {t.purge_does}" if t.purge_method == "auto" else t.purge_does),
        ("cell time", f"{duration(t.cell_seconds)}; {limit}"),
        ("steady state", t.steady_rule + (f" ({eng(t.steady_min_write_bytes, 'B')})" if tracked else "")),
        ("timed steps", _span(t.earliest_s, t.latest_s) + " (fills by bytes at the drive's speed come on top)"),
        ("compliant", "yes" if t.compliant else "no: " + "; ".join(t.noncompliance)),
    ]
    # the round limit's line has said whether --max-rounds is used: not said again as "ignored"
    others = {k: v for k, v in t.ignored_options.items() if k != "--max-rounds"}
    if others:
        same = ", ".join(f"{k} (the plan is the same at {option_text(k, v)})" for k, v in others.items())
        rows.append(("ignored", same))
    rows += [("parameter", f"{k}: {v}") for k, v in t.parameters.items()]
    rows += [("note", note) for note in t.notes]
    for name, text in rows:
        out(f"  {name:<13} {esc(text)}", soft_wrap=True)
    for j, ph in enumerate(t.phases):
        _show_phase(ph, j, len(t.phases), t.steady_window)


def _show_phase(ph: PlannedPhase, j: int, n: int, window: int) -> None:
    out = console.print
    head = f"  [bold]phase {j + 1}/{n}: {esc(ph.name)}[/]"
    if ph.built_from is not None:
        built = f"built during the run from {ph.built_from}; {_span(ph.earliest_s, ph.latest_s)}"
        out(f"{head}: {esc(built)}", soft_wrap=True)
        return
    out(f"{head}{' (purge first)' if ph.purge else ''}: {esc(_ends(ph, window))}", soft_wrap=True)
    for k, w in enumerate(ph.precondition):
        out(f"    preconditioning {k + 1}: {esc(_step(w))}", soft_wrap=True)
    if ph.stop_rule:
        out(f"    stop rule: {esc(ph.stop_rule)}", soft_wrap=True)
    if ph.tracking:
        out(f"    steady-state variables: {esc(', '.join(ph.tracking))}", soft_wrap=True)
    for line in _cells(ph.cells):
        out(f"    {esc(line)}", soft_wrap=True)


def _ends(ph: PlannedPhase, window: int) -> str:
    """What ends the phase, and what a round and the phase take. `window`: the steady-state rule's
    rounds, which a phase with fewer rounds never fills (it then never stops at steady state)."""
    rounds = counted(ph.max_rounds or 0, "round")
    parts = [f"{counted(len(ph.cells), 'cell')} a round ({duration(ph.round_seconds)})"]
    if ph.stop_on_steady and (ph.max_rounds or 0) >= window:
        parts.append(f"stops at steady state or after {rounds}, whichever comes first")
    elif ph.stop_on_steady:
        parts.append(f"{rounds}: fewer than the {window}-round window, so steady state is not evaluated")
    else:
        parts.append(f"up to {rounds}")
    if ph.budget_write_bytes is not None:
        parts.append(f"write budget {eng(ph.budget_write_bytes, 'B')}")
    if ph.budget_seconds is not None:
        parts.append(f"time budget {duration(ph.budget_seconds)}")
    if ph.min_write_bytes is not None:
        parts.append(f"steady only after {eng(ph.min_write_bytes, 'B')} written")
    return ", ".join(parts) + f"; timed steps {_span(ph.earliest_s, ph.latest_s)}"


def _cells(cells: Sequence[PlannedCell]) -> list[str]:
    """One line for a block size × mix grid run alike (the PTS tables), else one line per cell."""
    alike = [list(g) for _, g in groupby(cells, key=lambda c: (_how(c.workload), c.idle_before_s))]
    sizes = sorted({c.block_size for c in cells}, reverse=True)
    mixes = list(dict.fromkeys(c.mix for c in cells))
    if len(alike) == 1 and len(cells) > 1 and len(cells) == len(sizes) * len(mixes) and len(sizes) > 1:
        return [
            f"cells: {len(sizes)} block sizes × {len(mixes)} R/W mixes, each {_how(cells[0].workload)}",
            f"  block sizes {', '.join(kib_label(s) for s in sizes)}; mixes (R/W %) {', '.join(mixes)}",
        ]
    lines = []
    for c in cells:
        idle = f", after {duration(c.idle_before_s)} idle" if c.idle_before_s else ""
        lines.append(f"cell {c.key}: {c.workload.label}, {_how(c.workload)}{idle}")
    return lines


def _how(w: Step) -> str:
    """Outstanding IO and length of a workload."""
    out = f"TC{w.threads}/QD{w.queue_depth}"
    if w.rate_iops:
        out += f" at {num(w.rate_iops)} IOPS"
    if w.seconds is not None:
        out += f", {duration(w.seconds)}"
    if w.ramp_s:
        out += f" after {duration(w.ramp_s)} warm-up"
    if w.bytes is not None:
        out += f", {eng(w.bytes, 'B')}"
    return out


def _step(w: Step) -> str:
    return f"{w.label} ({num(w.read_pct)} % read), {_how(w)}"


def _span(a: float, b: float) -> str:
    """One duration when both ends print alike (as cli/progress._span: "100 s to 100 s" is no range)."""
    first, last = duration(a), duration(b)
    return first if first == last else f"{first} to {last}"
