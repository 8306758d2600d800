"""`iolab run --repeat N`: the repeated runs (automation/repeats.py), then each key figure's mean
and confidence interval as a table."""

from __future__ import annotations

from rich import box
from rich.markup import escape as esc
from rich.table import Table

from iolab.cli.auto import emit
from iolab.cli.console import Console
from iolab.core.errors import Exit
from iolab.core.streams import note_line
from iolab.core.units import num


def interval_text(f: dict) -> str:
    """A repeat figure's interval and which it is: '35.75 – 1,119 (geometric mean 200.0 ×/÷ 5.5950)'."""
    if f["low"] is None:
        return "none: an extreme" if f.get("kind") == "extreme" else "—"
    span = f"{num(f['low'])} – {num(f['high'])}"
    if f.get("interval") == "geometric":
        return f"{span} (geometric mean {num(f['geometric_mean'])} ×/÷ {f['factor']:.4f})"
    clipped = ", clipped at 0" if f.get("interval") == "t, clipped at 0" else ""
    return f"{span} (t: mean ± {num(f['half_width'])}{clipped})"


def run_repeats(
    n: int, argv: list[str], target: list[str] | None, default_target: str, json_out: bool, console: Console
) -> int:
    """`iolab run --repeat N`: the runs (repeats.py), then each key figure's mean and confidence
    interval; returns the exit code."""
    from iolab.automation.repeats import run_repeated, summary

    records, code, error = run_repeated(n, argv, target, default_target, json_out)
    rep = summary(records)
    if rep["repeats"]:  # no repeat complete: no table of nothing, only the error below
        _repeat_table(rep, n, console)
    for r in records:
        console.print(f"run: {esc(r['run_id'])} ({esc(r['state'])})", soft_wrap=True)
    if code and code != Exit.NOT_STEADY:  # an error, so standard error: stdout holds the table only
        note_line(f"iolab: repeat {rep['repeats'] + 1} of {n} ended with exit code {code}; no further repeat was run")
    if json_out:
        emit("run", code, runs=records, repeat=rep, **({"error": error} if error else {}))
    return code


def _repeat_table(rep: dict, n: int, console: Console) -> None:
    """The repeats' key figures: each one's mean and confidence interval, and why one is "—"."""
    t = Table(
        title=f"{rep['repeats']} of {n} repeats complete: mean and {rep['confidence']:.0%} confidence interval",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for col in ("figure", "n", "mean", "interval (95 %)", "per run"):
        t.add_column(col, justify="left" if col in ("figure", "per run") else "right", overflow="fold")
    several = len({f["test"] for f in rep["figures"]}) > 1  # a sequence: each figure says its test
    for f in rep["figures"]:
        t.add_row(
            esc(
                f"{f['test'] + ': ' if several else ''}{f['name']} "
                f"({f['unit']}; {'↑' if f['direction'] == 'higher-is-better' else '↓'})"
            ),
            str(f["n"]),
            num(f["mean"]),
            interval_text(f),
            ", ".join(num(v) for v in f["values"]),
        )
    console.print(t)
    for f in rep["figures"]:  # a "—" or a short n says why, as a run's own key figures do
        if f.get("unmeasured"):
            where = f"{f['test']}: " if several else ""
            said = "; ".join(f["unmeasured"])
            runs = "any run" if not f["n"] else "every run"
            console.print(esc(f"— {where}{f['name']}: not measured in {runs}: {said}"), soft_wrap=True)
    for c in rep.get("caveats", ()):  # not steady, scaled down: said beside the means, as on each run's page
        console.print(f"[bold red]caveat: {esc(c)}[/]", soft_wrap=True)
    console.print(esc(f"interval: {rep['method']}"), soft_wrap=True)
