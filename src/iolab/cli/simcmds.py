"""The `iolab sim …` commands (the built-in simulated drives: their presets, and a preset fitted
to a measured drive's stored runs). Thin like the rest of the CLI: parse, call the library,
print. cli/app.py mounts them on the `iolab` command."""

from __future__ import annotations

import math
from typing import Optional

import typer
from rich.markup import escape as esc

from iolab.cli.console import Console, write_out
from iolab.cli.options import with_runs_dir
from iolab.core.errors import IolabError
from iolab.core.units import parse_duration, parse_size
from iolab.core.usertext import RUN_REF

sim_app = typer.Typer(help="The built-in simulated drives.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _headline(p, value: dict[str, str]) -> str:
    """An SSD preset's published figures (the preset's own `calibrated_to`); an HDD's are its model's own
    (spindle, media rate, seeks)."""
    if p.kind == "hdd":
        return (
            f"{value.get('rpm', '?')}, {value.get('outer_mbps', '?')} outer, seek {value.get('track_seek_ms', '?')}"
            f" to {value.get('full_seek_ms', '?')}"
        )
    return p.calibrated_to or p.description


@sim_app.command("presets")
def sim_presets(
    name: Optional[str] = typer.Argument(None, metavar="PRESET", help="Show this preset's every parameter."),
    detail: bool = typer.Option(False, "--detail", help="Every preset with its every parameter."),
):
    """The simulated drive presets, one line each (the default marked); with PRESET or --detail,
    their parameters (any of them can be set in the target: sim:PRESET?param=value)."""
    from rich.table import Table

    from iolab.engines.sim import list_presets

    presets = list_presets()
    if name is not None:
        presets = [p for p in presets if p.name == name]
        if not presets:
            raise IolabError(f"no simulated drive preset {name!r}: `iolab sim presets` lists them.")
    if name is None and not detail:
        t = Table(box=None, pad_edge=False)
        for col in ("preset", "kind", "capacity", "interface", "headline figures"):
            t.add_column(col, no_wrap=col != "headline figures")
        for p in presets:
            value = {q.name: f"{q.value} {q.unit}".strip() for q in p.params if q.value}
            t.add_row(
                esc(p.name) + (" (default)" if p.default else ""),
                p.kind.upper(),
                esc(value.get("user_gb") or value.get("capacity_gb", "—")),
                esc(value.get("link", "—")),
                esc(_headline(p, value)),
            )
        console.print(t)
        console.print(
            "An SSD's figures are the published ones of the drive it models, which it is calibrated to; an "
            "HDD's are its parameters. `iolab sim presets PRESET` (or --detail): what it models, every "
            "parameter.",
            soft_wrap=True,
        )
        return
    for p in presets:
        # its own line, not the table's title: a title is wrapped to the narrow table's width
        console.print(esc(f"{p.name} — {p.description}"), soft_wrap=True)
        t = Table()
        t.add_column("parameter")
        t.add_column("value")
        for k, v in p.parameters:
            t.add_row(esc(k), esc(str(v)))
        console.print(t)


@sim_app.command("calibrate")
@with_runs_dir
def sim_calibrate(
    runs: list[str] = typer.Argument(
        ...,
        metavar="RUN",
        help=f"Stored PTS runs of the drive to copy, each by {RUN_REF}: its IOPS run, and optionally its WSAT and latency runs.",
    ),
    base: str = typer.Option(
        "enterprise-sas",
        "--base",
        metavar="PRESET",
        help="The SSD preset to start from; its parameters other than the fitted ones are kept.",
    ),
    budget: int = typer.Option(
        240, "--budget", help="At most this many simulator evaluations (each replays every RUN on the copy)."
    ),
    capacity: Optional[str] = typer.Option(
        None,
        "--capacity",
        metavar="SIZE",
        help="Size of the simulated copy the fit runs on, and of the fitted target it prints (default: the tested capacity, at most 1GiB).",
    ),
    cell_time: str = typer.Option(
        "250ms", "--cell-time", metavar="DURATION", help="Cell length in an evaluation (the run's own when shorter)."
    ),
    rounds: int = typer.Option(
        2, "--rounds", help="Cell loops per evaluation after preconditioning; the last is compared."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
):
    """Fit a simulated SSD's parameters to a real drive's stored runs: prints the fitted target spec and the residuals."""
    import json
    from dataclasses import asdict

    from iolab.api.calibrate import fit
    from iolab.core.plan import MAX_ROUNDS

    if not 1 <= rounds <= MAX_ROUNDS:
        raise IolabError(f"--rounds {rounds}: give a whole number from 1 to {MAX_ROUNDS:,}.")
    cap = parse_size(capacity, "--capacity") if capacity else None
    cell_s = parse_duration(cell_time, "--cell-time")
    with err.status("calibrating") as status:
        res = fit(
            runs,
            base,
            budget=budget,
            sim_capacity=cap,
            cell_s=cell_s,
            rounds=rounds,
            on_step=lambda n, e: status.update(
                f"calibrating: evaluation {n} of ≤{budget}, RMS error {math.exp(e) - 1:.1%}"
            ),
        )
    if as_json:
        write_out(json.dumps(asdict(res), indent=2) + "\n")
        return
    _print_fit(res)


def _print_fit(res) -> None:
    """A calibration's residuals table, what was not fitted and why, and the fitted target."""
    from rich.table import Table

    runs_seen = list(dict.fromkeys(r.run_id for r in res.residuals))
    t = Table(title="residuals (simulated vs measured)", title_justify="left")
    for col in ("run", "figure", "measured", "simulated", "error", "fitted"):
        t.add_column(col, justify="right" if col in ("measured", "simulated", "error") else "left")
    num = lambda v: f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"  # noqa: E731
    whys: dict[str, list[str]] = {}
    for r in res.residuals:
        if not r.fitted:
            whys.setdefault(r.why, []).append(r.figure)
        t.add_row(
            str(runs_seen.index(r.run_id) + 1),
            esc(r.figure),
            f"{num(r.measured)} {esc(r.unit)}",
            "—" if r.simulated is None else num(r.simulated),
            "—" if r.error_pct is None else f"{r.error_pct:+.1f} %",
            "yes" if r.fitted else "no",
        )
    console.print(t)
    for i, run_id in enumerate(runs_seen, 1):
        console.print(f"run {i}: {esc(run_id)}", soft_wrap=True)
    for why, figs in whys.items():
        console.print(
            f"not fitted ({len(figs)}: {esc(', '.join(figs[:4]))}{', …' if len(figs) > 4 else ''}): {esc(why)}",
            soft_wrap=True,
        )
    console.print(
        f"RMS error of the fitted figures: {res.error_before:.1%} at the start ({esc(res.base)}), "
        f"{res.error_after:.1%} fitted; {res.evaluations} evaluations on a {res.sim_capacity_bytes / 2**30:.3g} GiB copy"
    )
    for k, v in res.params.items():
        console.print(f"  {esc(k)}: {esc(res.start[k])} → {esc(v)}")
    for n in res.notes:
        console.print(f"note: {esc(n)}", soft_wrap=True)
    console.print("fitted target (the drive the residuals are of: a model of the measured drive, not a measurement):")
    console.print(esc(res.spec), soft_wrap=True, highlight=False)
