"""The stored runs a calibration replays (`iolab sim calibrate`): each complete PTS IOPS,
latency or Write Saturation run read as a `Scenario` (its preconditioning and cells as
simulator calls on a scaled-down copy of the drive) with the `Figure`s it measured. The runs
are only read."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.units import counted
from iolab.figures.summary import PhaseSummary, summarise
from iolab.pages.report.steadywords import phase_steady_words
from iolab.store.manifest import Manifest, manifest_of
from iolab.store.runstore import RunStore

GIB = 2**30


@dataclass(frozen=True)
class Figure:
    """One measured number of a stored run that the fit compares."""

    name: str
    measured: float
    unit: str
    fitted: bool = True
    why: str = ""  # why it is not fitted


@dataclass(frozen=True)
class Scenario:
    """What one stored run did, as simulator calls on the scaled-down copy."""

    run_id: str
    test: str
    precondition: tuple[dict, ...]  # Drive.run keyword arguments
    cells: tuple[tuple[str, dict], ...]  # (figure prefix, Drive.run kwargs), in run order
    rounds: int  # cell loops run; the last one is compared
    write_cache: bool
    figures: tuple[Figure, ...]
    notes: tuple[str, ...]


def _run_kwargs(w: dict, seed: int, duration: float | None, budget: int | None) -> dict:
    """Drive.run arguments of a stored workload (the cells table keeps each one as JSON)."""
    try:
        return {
            "streams": [(s["access"], s["op"], int(s["block_size"]), float(s["share"])) for s in w["streams"]],
            "threads": int(w["threads"]),
            "queue_depth": int(w["queue_depth"]),
            "active_range": float(w["active_range"]),
            "entropy": float(w["entropy"]),
            "rate_iops": None if w.get("rate_iops") is None else float(w["rate_iops"]),
            "duration_s": duration,
            "bytes_budget": budget,
            "seed": seed,
            "zones": [tuple(z) for z in w.get("zones", ())],
        }
    except (KeyError, TypeError, ValueError) as e:
        raise IolabError(
            f"a stored workload lacks a field calibration needs ({e}); the run was written by an "
            "incompatible iolab version."
        ) from None


def _scaled(n: float | None, ratio: float) -> int | None:
    return None if n is None else max(int(n * ratio), 4096)


def tested_capacity(ref: str) -> int:
    store = RunStore.open(ref)
    try:
        t = manifest_of(store).target
    finally:
        store.close()
    return int(t.get("tested_capacity") or t.get("capacity") or 0)


def load_scenario(ref: str, sim_cap: int, cell_s: float, rounds: int) -> tuple[Scenario, int]:
    """The scenario of one stored run, and the capacity of its drive (bytes). Refuses a run
    that is not a complete PTS IOPS, latency or WSAT run, or one without steady state."""
    store = RunStore.open(ref)
    try:
        m = manifest_of(store)
        phases = summarise(store)
        pre = [r for r in store.cells(kind="precondition") if r.phase == "main"]
    finally:
        store.close()
    where = f"run {m.run_id} ({store.dir})"
    main = _main_phase(m, phases, where, store.dir)
    drive_cap = int(m.target.get("capacity") or 0)
    tested = int(m.target.get("tested_capacity") or drive_cap)
    if tested <= 0:
        raise IolabError(f"{where}: manifest.json target.tested_capacity is missing or zero.")
    ratio = sim_cap / tested
    notes = [f"{m.run_id}: a quick (non-compliant) run"] if m.profile.get("quick") else []
    if ratio != 1:
        notes.append(
            f"{m.run_id}: replayed on a {sim_cap / GIB:.3g} GiB copy of its {tested / 1e9:.4g} GB tested "
            f"capacity (byte budgets × {ratio:.3g}); figures of a {'smaller' if ratio < 1 else 'larger'} drive "
            "than the run's"
        )
    precondition = tuple(
        _run_kwargs(
            r.workload,
            int(r.workload["seed"]) + r.ordinal,
            None if r.workload.get("duration_s") is None else min(r.workload["duration_s"], cell_s),
            _scaled(r.workload.get("bytes_budget"), ratio),
        )
        for r in pre
    )
    wc = bool(m.profile.get("write_cache", False))
    if m.test == "wsat":
        return _wsat_scenario(m, main, precondition, ratio, wc, notes), drive_cap
    last = main.window[-1]
    rows = sorted((r for r in main.rows if r.round == last), key=lambda r: r.ordinal)
    cells = tuple(
        (
            r.cell_key,
            _run_kwargs(
                r.workload, int(r.workload["seed"]) + r.ordinal, min(float(r.workload["duration_s"]), cell_s), None
            ),
        )
        for r in rows
    )
    notes.append(
        f"{m.run_id}: {counted(len(cells), 'cell')} of {min(float(rows[0].workload['duration_s']), cell_s):g} s "
        f"(measured: {float(rows[0].workload['duration_s']):g} s), {counted(rounds, 'round')} after the run's preconditioning; "
        "the last round is compared with the measurement window"
    )
    figures = _figures(m.test, main)
    return Scenario(m.run_id, m.test, precondition, cells, rounds, wc, tuple(figures), tuple(notes)), drive_cap


def _main_phase(m: Manifest, phases: list[PhaseSummary], where: str, run_dir: Path) -> PhaseSummary:
    """The run's measured phase; refuses a run that is not a complete PTS IOPS, latency or
    WSAT run, or one without steady state."""
    if m.test not in ("iops", "latency", "wsat"):
        raise IolabError(
            f"{where} is a {m.test!r} run; calibration reads the PTS IOPS, latency and Write Saturation "
            "runs (iolab run iops|latency|wsat) of the drive to copy."
        )
    if m.state != "complete":
        raise IolabError(
            f"{where} is {m.state}, not complete: its figures are not the drive's final ones. Finish it "
            # by its path: an id names a run only under the runs directory resume is given
            f"with `iolab resume {shlex.quote(str(run_dir.resolve()))}` or give a complete run."
        )
    main = next((p for p in phases if p.phase.name == "main"), None)
    if main is None or not main.cells:
        raise IolabError(f"{where} holds no complete measurement round; nothing to calibrate against.")
    if m.test != "wsat" and not main.steady:
        # in the words `show` and the report give the phase: "did not reach" read as a failed
        # verdict of a run whose rounds were too few to judge
        raise IolabError(
            f"{where}: {phase_steady_words(main, short=False)} in its main phase "
            f"({main.phase.stop_reason or 'no verdict'}): its figures are not the drive's steady-state "
            "figures. Calibrate against a run that reached it."
        )
    return main


def _figures(test: str, main: PhaseSummary) -> list[Figure]:
    """What the fit compares: each cell's IOPS (an IOPS run) or ART, with its MRT shown but
    not fitted (a latency run)."""
    figures: list[Figure] = []
    for c in main.cells:
        if test == "iops":
            figures.append(Figure(f"{c.key} IOPS", c.iops, "IOPS", c.iops > 0, "" if c.iops > 0 else "measured 0"))
        else:
            ok = c.lat_mean_us is not None and c.lat_mean_us > 0
            figures.append(Figure(f"{c.key} ART", c.lat_mean_us or 0.0, "µs", ok, "" if ok else "not measured"))
            if c.lat_max_us:
                figures.append(
                    Figure(
                        f"{c.key} MRT",
                        c.lat_max_us,
                        "µs",
                        False,
                        "a maximum is one rare event; the shortened evaluation runs far fewer IOs",
                    )
                )
    return figures


def _wsat_scenario(m, main, precondition, ratio: float, wc: bool, notes: list[str]) -> Scenario:
    rows = [r for r in main.rows if not r.partial]
    if len(rows) < 3:
        raise IolabError(
            f"run {m.run_id}: {len(rows)} full Write Saturation interval(s); calibration needs at least 3."
        )
    # Intervals shrink with the drive, so the cliff falls at the same interval on the copy.
    cells = tuple(
        (
            f"interval {r.round}",
            _run_kwargs(r.workload, int(r.workload["seed"]) + r.round, float(r.workload["duration_s"]) * ratio, None),
        )
        for r in rows
    )
    curve = [r.iops for r in rows]
    figures = [
        Figure("WSAT first interval IOPS", curve[0], "IOPS"),
        Figure("WSAT steady IOPS (last ≤5 intervals)", steady_level(curve), "IOPS"),
    ]
    cliff = cliff_interval(curve)
    figures.append(
        Figure("WSAT cliff interval", cliff, "interval")
        if cliff is not None
        else Figure(
            "WSAT cliff interval",
            0.0,
            "interval",
            False,
            "the measured curve has no cliff (no fall below halfway from the first interval to the steady level)",
        )
    )
    notes.append(
        f"{m.run_id}: {len(cells)} Write Saturation intervals of {float(rows[0].workload['duration_s']) * ratio:.3g} s "
        f"(measured: {float(rows[0].workload['duration_s']):g} s, scaled with the capacity)"
    )
    return Scenario(m.run_id, "wsat", precondition, cells, 1, wc, tuple(figures), tuple(notes))


def steady_level(curve: list[float]) -> float:
    tail = curve[-5:]
    return sum(tail) / len(tail)


def cliff_interval(curve: list[float]) -> float | None:
    """The first interval (1-based) below halfway from the first to the steady level; None
    when the curve does not fall by a fifth (no cliff to place)."""
    first, steady = curve[0], steady_level(curve)
    if steady > 0.8 * first:
        return None
    half = (first + steady) / 2
    return float(next(i + 1 for i, v in enumerate(curve) if v < half))
