"""`iolab sim calibrate RUN...`: fit a simulated SSD preset to a drive's stored PTS runs.

Each evaluation replays what a stored run did (its preconditioning, then its cells in the
order it ran them) on a scaled-down simulated copy of the drive, and compares the figures
the run measured with those the simulator produced. Levenberg-Marquardt steps, then a
bounded pattern search (Hooke-Jeeves), in log space over a handful of model parameters
(KNOBS) minimise the mean squared log error of the fitted figures. The runs are only read
(the store is opened read-only); nothing here is a measurement of the real drive except the
run's own figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iolab import _sim
from iolab.api.calibrate_runs import GIB, Scenario, cliff_interval, load_scenario, steady_level, tested_capacity
from iolab.core.errors import IolabError
from iolab.engines.sim import parse_result

MAX_SIM_CAPACITY = GIB  # larger runs are replayed on a copy this size (the OP is kept)


@dataclass(frozen=True)
class Knob:
    """A model parameter the fit moves, within bounds, in log space; or, with `choices`, one
    of a few words, moved one choice at a time (its coordinate is the choice's index)."""

    name: str
    lo: float
    hi: float
    shapes: str
    integer: bool = False
    choices: tuple[str, ...] = ()
    # A count's partner: the time per unit of work the count shares, moved with it so that
    # the rate they set together (cores / overhead, dies / program time) stays.
    per: str = ""

    def bounds(self) -> tuple[float, float]:
        return (0.0, len(self.choices) - 1.0) if self.choices else (math.log(self.lo), math.log(self.hi))


KNOBS: tuple[Knob, ...] = (
    Knob("overhead_us", 1, 2000, "controller time per command: peak small-block IOPS"),
    Knob("t_read_us", 5, 2000, "page read time: read IOPS and latency"),
    Knob("t_prog_us", 50, 20000, "page program time: write IOPS"),
    Knob("op", 0.02, 2.0, "over-provisioning: steady-state write IOPS (write amplification)"),
    Knob("dies_per_channel", 1, 16, "internal parallelism", integer=True, per="t_prog_us"),
    Knob(
        "controller_cores",
        1,
        16,
        "controller parallelism: peak small-block IOPS with overhead_us",
        integer=True,
        per="overhead_us",
    ),
    # 1 µs stands for none (log space). Without it a base whose writes cost the cores no more
    # than its reads cannot reach a drive whose write IOPS its mapping work limits.
    Knob("write_core_us", 1, 2000, "controller time per write after it is buffered: write IOPS apart from reads"),
    # 1 % stands for off (the fit moves in log space): at most one read in a hundred bound to its core.
    Knob("core_by_lba_pct", 1, 100, "reads bound to the core owning their LBA stripe: read IOPS by queue depth"),
    Knob("link_mbps", 50, 16000, "host link bandwidth: large-block throughput"),
    # The link's rate is link_mbps's; the word sets only whether reads and writes share the link
    # (sata3, half duplex) or cross it both ways at once (sas6, full duplex): R/W mixes.
    Knob("link", 0, 0, "link duplex: mixed read/write IOPS", choices=("sata3", "sas6")),
    Knob("gc_slice", 1, 64, "GC copies between host commands: how GC shares the drive with host writes", integer=True),
    # Only on a compressing base, where `op` is then the spare incompressible data leaves (the
    # drive's own over-provisioning is derived from both): the runs measure that spare, so it is
    # fitted alone, and the ceiling moves only the flash each unit takes, down to none (1).
    Knob("compress_ceiling", 1, 2, "flash a compressing controller takes for incompressible data: write IOPS"),
)


@dataclass(frozen=True)
class Residual:
    run_id: str
    figure: str
    unit: str
    measured: float
    simulated: float | None
    error_pct: float | None
    fitted: bool
    why: str = ""


@dataclass
class Calibration:
    base: str
    spec: str  # the fitted drive as a target spec for -t
    params: dict[str, str]
    start: dict[str, str]
    sim_capacity_bytes: int
    evaluations: int
    error_before: float  # RMS of the fitted figures' log errors (as a factor - 1)
    error_after: float
    residuals: list[Residual]
    notes: list[str] = field(default_factory=list)


# -- one evaluation -----------------------------------------------------------------------


def simulate(base: str, params: dict[str, str], sc: Scenario) -> dict[str, float]:
    """The scenario's figures on a new simulated drive with these parameters."""
    drive = _sim.Drive(base, list(params.items()))
    drive.write_cache = sc.write_cache
    for kw in sc.precondition:
        drive.run(**kw)
    if sc.test == "wsat":
        curve = [parse_result(drive.run(**kw), key).iops for key, kw in sc.cells]
        wsat: dict[str, float] = {
            "WSAT first interval IOPS": curve[0],
            "WSAT steady IOPS (last ≤5 intervals)": steady_level(curve),
        }
        cliff = cliff_interval(curve)
        if cliff is not None:
            wsat["WSAT cliff interval"] = cliff
        return wsat
    out: dict[str, float] = {}
    for _ in range(sc.rounds):
        for key, kw in sc.cells:
            r = parse_result(drive.run(**kw), key)
            out[f"{key} IOPS"] = r.iops
            out[f"{key} ART"] = r.lat_mean_us or 0.0
            out[f"{key} MRT"] = r.lat_max_us or 0.0
    return out


def _log_error(measured: float, simulated: float | None) -> float:
    if simulated is None or simulated <= 0:
        return math.log(1e3)  # a figure the model did not produce at all: a large, finite penalty
    return math.log(simulated / measured)


def _residuals(base: str, params: dict[str, str], scenarios: list[Scenario]) -> tuple[list[float] | None, dict]:
    """Each fitted figure's log error on a drive with these parameters (None: the drive cannot
    run the workloads), and the simulated figures."""
    try:
        sims = {sc.run_id: simulate(base, params, sc) for sc in scenarios}
    except ValueError:
        return None, {}
    return [
        _log_error(f.measured, sims[sc.run_id].get(f.name)) for sc in scenarios for f in sc.figures if f.fitted
    ], sims


def _mean_square(res: list[float] | None) -> float:
    return math.inf if res is None else sum(e * e for e in res) / len(res)


# -- the search ---------------------------------------------------------------------------


def _clip(p: dict[str, float], bounds: dict[str, tuple[float, float]]) -> dict[str, float]:
    return {n: min(max(v, bounds[n][0]), bounds[n][1]) for n, v in p.items()}


def _pattern_search(
    cost: Callable[[dict], float],
    x: dict[str, float],
    f: float,
    bounds: dict[str, tuple[float, float]],
    budget: int,
    spent: Callable[[], int],
    discrete: frozenset[str] = frozenset(),
    integer: frozenset[str] = frozenset(),
    per: dict[str, str] | None = None,
    first: float = math.log(2.0),
) -> tuple[dict[str, float], float]:
    """Hooke-Jeeves pattern search in log space: probe each parameter up and down, then keep
    moving along the direction the probes found, so parameters that trade off against each
    other (dies against program time) move together. Each parameter has its own step, from
    `first` (a factor 2; 8 for one at its floor: off) down to 2 %, halved when neither probe helps: the
    evaluations go to the parameters still moving, not to a round of probes of every
    parameter per step size, which spent the budget before the search converged.
    A `discrete` coordinate (a choice's index) is probed one whole choice up and down at every
    step size: a duplex cannot be half changed, and its best choice shifts as the rates move.
    An `integer` coordinate (the log of a count) is probed at least one whole count away: once
    the steps shrink below a count's rounding (4 × 1.1 is still 4) it would never move again.
    A count with a partner in `per` (cores with the time per command) takes it along: alone, a
    whole count away changes the rate they set by 25-100 %, a cost the search never accepts,
    so the count would stay where it started, the rate made up by its partner, and the
    figures that tell them apart (latency, queue-depth curves) would be bent instead."""
    per = per or {}

    def probe(n: str, x: float, sign: int, step: float) -> float:
        if n in discrete:
            return x + sign
        if n in integer:
            v = round(math.exp(x))
            if round(math.exp(x + sign * step)) == v:
                return math.log(max(v + sign, 1))
        return x + sign * step

    def explore(p: dict[str, float], fp: float, shrink: bool = True) -> tuple[dict[str, float], float]:
        for n in p:
            if step[n] <= least and n not in discrete and n not in integer:
                continue
            for sign in (1, -1):
                if spent() >= budget:
                    return p, fp
                q = _clip(p | {n: probe(n, p[n], sign, step[n])}, bounds)
                if n in per:
                    # The count as rendered (at least 1): its change is what the partner follows.
                    q = _clip(
                        q
                        | {per[n]: q[per[n]] + math.log(max(round(math.exp(q[n])), 1) / max(round(math.exp(p[n])), 1))},
                        bounds,
                    )
                fq = cost(q)
                if fq < fp:
                    p, fp = q, fq
                    break
            else:
                if shrink:
                    step[n] /= 2
        return p, fp

    least = math.log(1.02)
    # A parameter at its floor stands for a mechanism that is off (1 % of reads bound to a
    # core, 1 µs of write mapping): twice that still does nothing measurable, the probe fails
    # and its step shrinks at once, so the mechanism would never be tried. It is probed
    # eight times up instead, where it starts to matter.
    step = {n: math.log(8.0) if x[n] <= bounds[n][0] and n not in discrete else first for n in x}
    while spent() < budget and any(v > least for n, v in step.items() if n not in discrete and n not in integer):
        y, fy = explore(x, f)
        while spent() < budget and fy < f:
            ahead = _clip({n: 2 * y[n] - x[n] for n in y}, bounds)
            x, f = y, fy
            # Probes that fail around a point the pattern only guessed say nothing of the steps.
            y, fy = explore(ahead, cost(ahead), shrink=False)
    return x, f


def _least_squares(
    resid: Callable[[dict[str, float]], list[float] | None],
    x: dict[str, float],
    bounds: dict[str, tuple[float, float]],
    budget: int,
    spent: Callable[[], int],
    discrete: frozenset[str] = frozenset(),
    integer: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """Levenberg-Marquardt in log space on every knob but the choices. The fitted figures'
    log errors are a least-squares problem, and a step solved from every figure's response to
    every knob (forward differences: a factor 1.2, or one whole count) moves the knobs that
    trade off against each other together. From a start far from the drive, probing one knob
    at a time takes the first knob that helps (halving the command overhead to make up for
    slow flash, reads then 35 % too fast) and stays in that valley. After every accepted step
    each other choice (the link's duplex) is tried in its place. Returns where the steps stop
    paying; the pattern search polishes from there."""
    names = [n for n in x if n not in discrete]

    def sq(r: list[float]) -> float:
        return float(np.dot(r, r))

    r = resid(x)
    if r is None:
        return x
    lam = 0.1
    while spent() + len(names) < budget:
        jac = np.zeros((len(r), len(names)))
        for j, n in enumerate(names):
            h = math.log(max(round(math.exp(x[n])) + 1, 2)) - x[n] if n in integer else math.log(1.2)
            q = _clip(x | {n: x[n] + h}, bounds)
            if q[n] == x[n]:
                q = _clip(x | {n: x[n] - h}, bounds)
            rq = resid(q) if q[n] != x[n] else None
            if rq is not None:
                jac[:, j] = (np.array(rq) - r) / (q[n] - x[n])
        a, g = jac.T @ jac, jac.T @ np.array(r)
        moved = False
        while not moved and spent() < budget and lam < 1e4:
            step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-9), -g)
            q = _clip(x | {n: x[n] + float(d) for n, d in zip(names, np.clip(step, -math.log(4), math.log(4)))}, bounds)
            rq = resid(q)
            if rq is not None and sq(rq) < sq(r):
                x, r, lam, moved = q, rq, max(lam / 3, 1e-4), True
            else:
                lam *= 4
        if not moved:
            break
        for n in discrete:
            for v in range(int(bounds[n][1]) + 1):
                if v != x[n] and spent() < budget:
                    rq = resid(x | {n: float(v)})
                    if rq is not None and sq(rq) < sq(r):
                        x, r = x | {n: float(v)}, rq
    return x


def _render(k: Knob, x: float) -> str:
    if k.choices:
        return k.choices[int(round(x))]
    v = math.exp(x)
    return str(int(round(v))) if k.integer else f"{v:.4g}"


def _start(base: str, sim_capacity: int, given: bool = False) -> dict[str, float]:
    """The fit's starting point: `base`'s parameters on a copy of `sim_capacity` bytes (`given`:
    the user's --capacity, else the runs' tested capacity)."""
    try:
        if json.loads(_sim.describe(base, []))["kind"] != "ssd":
            raise IolabError(
                f"--base {base} is a simulated HDD; calibration fits the SSD model (give an SSD preset; "
                "`iolab sim presets` lists them)."
            )
    except ValueError as e:
        raise IolabError(f"--base {base}: {e}") from None
    try:
        info = json.loads(_sim.describe(base, [("user_gb", f"{sim_capacity / 1e9:.9g}")]))
    except ValueError as e:
        # the preset is one the simulator builds (above): it is the copy's size that it cannot,
        # and that size is --capacity's when given (user_gb is the copy's size in GB)
        size = _binary(sim_capacity)
        if given:
            raise IolabError(
                f"--capacity {size}: the simulator cannot build a copy of {base} that size ({e}); give a "
                f"--capacity it can, or leave it out (the runs' tested capacity, at most {_binary(MAX_SIM_CAPACITY)})."
            ) from None
        raise IolabError(
            f"the runs' tested capacity, {size}: the simulator cannot build a copy of {base} that size ({e}); "
            "give --capacity."
        ) from None
    values = dict(info["params"]) | {"op": str(info["op"]), "link_mbps": str(info["link_mbps"])}
    if info["compression"]:
        values["op"] = str((1 + info["op"]) / float(values["compress_ceiling"]) - 1)
    # A link that is not a choice (PCIe) is full duplex, as sas6 is.
    return {
        k.name: float(k.choices.index(values[k.name]) if values[k.name] in k.choices else len(k.choices) - 1)
        if k.choices
        else math.log(min(max(float(values[k.name]), k.lo), k.hi))
        for k in KNOBS
        if info["compression"] or k.name != "compress_ceiling"
    }


def _binary(n: int) -> str:
    """A size as --capacity takes it: 100 TiB, 1.5 GiB, 512 B."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.6g} {unit}"
    return f"{n} B"


def fit(
    refs: list[str],
    base: str,
    budget: int = 240,
    sim_capacity: int | None = None,
    cell_s: float = 0.25,
    rounds: int = 2,
    on_step: Callable[[int, float], None] | None = None,
) -> Calibration:
    """Fit KNOBS of preset `base` to the stored runs; at most `budget` evaluations."""
    if budget < 1:
        raise IolabError(f"--budget {budget}: give at least 1 evaluation.")
    if not cell_s > 0:  # a 0 s cell measures nothing, which read as the preset failing every workload
        raise IolabError(f"--cell-time {cell_s:g} s: give a duration greater than 0 (e.g. 250ms).")
    cap = sim_capacity or min(MAX_SIM_CAPACITY, *(tested_capacity(r) for r in refs))
    loaded = [load_scenario(r, cap, cell_s, rounds) for r in refs]
    scenarios = [s for s, _ in loaded]
    drive_cap = loaded[0][1]
    fixed = {"user_gb": f"{cap / 1e9:.9g}"}
    x = _start(base, cap, sim_capacity is not None)
    cache: dict[tuple, tuple[list[float] | None, dict]] = {}

    knobs = [k for k in KNOBS if k.name in x]

    def params_of(p: dict[str, float]) -> dict[str, str]:
        vals = {k.name: _render(k, p[k.name]) for k in knobs}
        if "compress_ceiling" in vals:
            vals["op"] = f"{(1 + math.exp(p['op'])) * float(vals['compress_ceiling']) - 1:.4g}"
        return fixed | vals

    def resid(p: dict[str, float]) -> list[float] | None:
        key = tuple(sorted(params_of(p).items()))
        if key not in cache:
            cache[key] = _residuals(base, params_of(p), scenarios)
            if on_step:
                on_step(len(cache), math.sqrt(min(_mean_square(r) for r, _ in cache.values())))
        return cache[key][0]

    start = dict(x)
    f0 = _mean_square(resid(x))
    if math.isinf(f0):
        raise IolabError(
            f"--base {base}: the preset cannot run the stored workloads on a "
            f"{cap / GIB:.3g} GiB copy; give another preset or --capacity."
        )
    _search(resid, x, knobs, budget, lambda: len(cache))
    # The best drive evaluated: a search that ran out of budget may not have moved to its last improvement.
    best_key, (best_res, sims) = min(cache.items(), key=lambda kv: _mean_square(kv[1][0]))
    best, f = dict(best_key), _mean_square(best_res)
    final = {k.name: best[k.name] for k in knobs}
    # The spec is the drive the residuals were computed on, at the copy's size: at another size its
    # figures differ (a spec sized to a 0.1 GB run, fitted on a 256 MiB copy, wrote 31 % slower than
    # the table said), and a full-size drive is too large to evaluate.
    query = "&".join(f"{k}={v}" for k, v in {**fixed, **final}.items())
    notes = [n for sc in scenarios for n in sc.notes] + [
        f"fitted in log space, least-squares steps then a pattern search, {len(cache)} of at most {budget} "
        f"evaluations; every other parameter is {base}'s",
        _size_note(cap, drive_cap),
    ]
    if "compress_ceiling" in final:
        notes.append(
            "a compressing base: its op was fitted as the spare incompressible data leaves, the spec's op is "
            "derived from that spare and the fitted compress_ceiling"
        )
    return Calibration(
        base,
        f"sim:{base}?{query}",
        final,
        {k.name: params_of(start)[k.name] for k in knobs},
        cap,
        len(cache),
        math.exp(math.sqrt(f0)) - 1,
        math.exp(math.sqrt(f)) - 1,
        _residual_rows(scenarios, sims),
        notes,
    )


def _size_note(cap: int, drive_cap: int) -> str:
    """What the fitted target's capacity is, and what a target of the measured drive's size is not."""
    if cap == drive_cap:
        return f"the fitted target has the measured drive's capacity ({drive_cap / 1e9:.4g} GB) and the fitted over-provisioning"
    return (
        f"the fitted target is the {cap / 1e9:.4g} GB copy the residuals are of (user_gb={cap / 1e9:.9g}); the measured "
        f"drive holds {drive_cap / 1e9:.4g} GB, and a target of its size (user_gb={drive_cap / 1e9:.6g}) was not "
        "evaluated: its figures may differ from the residuals (the simulated figures move with the capacity)"
    )


def _search(
    resid: Callable[[dict[str, float]], list[float] | None],
    x: dict[str, float],
    knobs: list[Knob],
    budget: int,
    evaluations: Callable[[], int],
) -> None:
    """Least-squares steps from `x`, then a pattern search; `resid` keeps every drive it evaluates
    (the caller takes the best of them, so what the searches return is not needed)."""
    bounds = {k.name: k.bounds() for k in knobs}
    choices = frozenset(k.name for k in knobs if k.choices)
    counts = frozenset(k.name for k in knobs if k.integer)
    x = _least_squares(resid, x, bounds, budget, evaluations, choices, counts)
    # What least squares leaves (a kink where one limit takes over from another) the
    # pattern search polishes, from steps of a quarter.
    _pattern_search(
        lambda p: _mean_square(resid(p)),
        x,
        _mean_square(resid(x)),
        bounds,
        budget,
        evaluations,
        choices,
        counts,
        {k.name: k.per for k in knobs if k.per},
        math.log(1.25),
    )


def _residual_rows(scenarios: list[Scenario], sims: dict[str, dict[str, float]]) -> list[Residual]:
    """Each stored figure beside the fitted drive's, and the difference in per cent."""
    return [
        Residual(
            sc.run_id,
            fig.name,
            fig.unit,
            fig.measured,
            sims[sc.run_id].get(fig.name),
            None
            if sims[sc.run_id].get(fig.name) is None or not fig.measured
            else 100 * (sims[sc.run_id][fig.name] / fig.measured - 1),
            fig.fitted,
            fig.why,
        )
        for sc in scenarios
        for fig in sc.figures
    ]
