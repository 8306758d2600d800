"""The fleet report's terminal view, from its document (fleet.py): each key figure's
distribution with a strip of the drives from min to max, the pool at a latency bound, the groups
compared, then each drive's row."""

from __future__ import annotations

from iolab.core.units import counted, given, human_bytes, num
from iolab.figures.fleet import RESOLUTION
from iolab.pages.fleet import (
    conditions_text,
    failed_text,
    figure_label,
    figure_not_flagged,
    group_columns,
    group_rows,
    groups_text,
    outlier_cell,
    outliers_text,
    sheet_bounds,
    spec_cell,
    verdicts_text,
)

STRIP_WIDTH = 48


def say(console, text: str) -> None:
    """A line of the view as written (no rich markup: a drive's name may hold brackets), wrapped
    by the terminal, not cut."""
    console.print(text, markup=False, soft_wrap=True)


def _num(v: float | None) -> str:
    """As `iolab show` prints the figure (units.num): one rule, so a drive's 118.0 here is its 118.0 there."""
    return num(v)


def strip(fig: dict, width: int = STRIP_WIDTH) -> str:
    """The drives on one line from the fleet's min to max: '·' a drive, '┃' the median, '×' an
    outlier (several drives in one column: the column shows the strongest mark)."""
    lo, hi = fig["min"], fig["max"]
    cols = [" "] * width
    rank = {" ": 0, "·": 1, "┃": 2, "×": 3}

    # one value, as far as the arithmetic tells or the table prints: 1 MiB reads bound by the
    # host link, 524.5 IOPS on every drive to 5 ppm, were spread over the strip's whole width
    # as if the drives differed as much as any other figure's
    same = hi - lo <= RESOLUTION * abs(fig["median"]) or _num(lo) == _num(hi)

    def put(x: float, mark: str) -> None:
        i = width // 2 if same else round((x - lo) / (hi - lo) * (width - 1))
        if rank[mark] > rank[cols[i]]:
            cols[i] = mark

    bad = {o["drive"] for o in fig["outliers"]}
    for name, x in fig["values"].items():
        put(x, "×" if name in bad else "·")
    put(fig["median"], "┃")
    return "".join(cols)


def render(doc: dict, console) -> None:
    """The terminal view: each figure's distribution with its strip, then each drive's row."""
    from rich.table import Table

    f = doc["fleet"]
    s = doc["summary"]
    say(
        console,
        f"fleet {f['name']}: {f['test']} on {counted(s['drives'], 'drive')}, {s['complete']} complete — {f['dir']}",
    )
    t = Table(title="key figures over the fleet", title_justify="left")
    for h in (
        "figure",
        "n",
        "median",
        "spread",
        "min",
        "max",
        "drives from min to max (× an outlier; the bar: the median)",
        "outliers",
        *(("spec sheet",) if doc.get("spec_sheet") else ()),
    ):
        t.add_column(h, justify="right" if h in ("n", "median", "spread", "min", "max") else "left")
    for fig in doc["figures"]:
        outs = ", ".join(
            f"{o['drive']} {_num(o['value'])} ({'worse' if o['worse'] else 'better'})" for o in fig["outliers"]
        )
        spread = "—" if fig["spread_pct"] is None else f"±{fig['spread_pct']:.2f} %"
        t.add_row(
            figure_label(fig),
            str(fig["n"]),
            _num(fig["median"]),
            spread,
            _num(fig["min"]),
            _num(fig["max"]),
            strip(fig),
            outs or figure_not_flagged(fig, doc),
            *((sheet_bounds(doc, fig["name"]),) if doc.get("spec_sheet") else ()),
        )
    console.print(t)
    say(console, doc["outlier_rule"]["text"])
    for c in doc.get("caveats", []):
        say(console, f"caveat: {c}")
    if doc.get("pool"):
        _render_pool(doc["pool"], console)
    if doc.get("groups"):
        _render_groups(doc["groups"], console)
    for w in doc.get("warnings", []):
        say(console, f"warning: {w}")
    d = Table(title="drives", title_justify="left")
    heads = ("drive", "verdict", "model", "serial", "firmware", "capacity", "where", "labels", "state")
    for h in (*heads, "steady state, conditions", "outlier on", "spec sheet"):
        d.add_column(h, justify="right" if h == "capacity" else "left")
    for r in doc["drives"]:
        vs = r["verdicts"]
        spec = spec_cell(vs)
        state = r["state"] + (f": {r['error']}" if r.get("error") and r["state"] != "complete" else "")
        labels = " ".join(f"{k}={v}" for k, v in r["labels"].items())
        cap = r.get("capacity_bytes")
        facts = [r.get(k) or "—" for k in ("model", "serial", "firmware")]
        size = human_bytes(cap) if isinstance(cap, (int, float)) else "—"
        verdict = {"failed": "FAIL", "passed": "pass", "error": "ERROR", "interrupted": "interrupted (resumable)"}.get(
            r["verdict"], r["verdict"].replace("-", " ")
        )
        d.add_row(
            r["name"], verdict, *facts, size, r["where"], labels, state, conditions_text(r), outlier_cell(r), spec
        )
    console.print(d)
    say(
        console,
        f"drives: {verdicts_text(doc)}; outlier drives: {outliers_text(doc)}; criteria failed: {failed_text(doc)}; "
        f"drives not complete: {', '.join(s['not_complete']) or 'none'}{groups_text(doc)}",
    )


def _render_pool(p: dict, console) -> None:
    from rich.table import Table

    pct, bound = p["percentile"], p["bound_us"]
    t = Table(
        title=f"the pool of {counted(len(p['drives']), 'drive')}: {pct:g} % latency of the merged histograms vs the {given(bound)} µs bound",
        title_justify="left",
    )
    for h in ("demand (all drives)", "delivered IOPS", f"{pct:g} % latency (µs)", "IOs", "bound"):
        t.add_column(h, justify="right")
    for s in p["steps"]:
        t.add_row(
            _num(s["demand"]),
            _num(s["iops"]),
            _num(s["percentile_us"]),
            f"{s['ios']:,}",
            "met" if s["meets"] else "BROKEN",
        )
    console.print(t)
    b, su = p["best"], p["sustain"]
    best = (
        "no step met the bound" if b is None else f"{_num(b['iops'])} IOPS at {_num(b['percentile_us'])} µs ({pct:g} %)"
    )
    say(console, f"pool at the bound (ramp): {best}")
    if su["iops"] is not None:
        held = "held" if su["meets"] else "NOT held"
        say(
            console,
            f"pool sustained: {_num(su['iops'])} IOPS, {pct:g} % latency {_num(su['percentile_us'])} µs, 99.99 % "
            f"{_num(su['p99_99_us'])} µs over {su['ios']:,} IOs: bound {held}",
        )


def _render_groups(g: dict, console) -> None:
    from rich.table import Table

    for c in g["comparisons"]:
        t = Table(
            title=f"{g['key']} = {c['group']} ({counted(len(c['drives']), 'drive')}) vs {g['key']} = {c['baseline']} "
            f"({counted(len(c['baseline_drives']), 'drive')}); noise: {g['noise']}; tolerance {g['tolerance_pct']:g} %",
            title_justify="left",
        )
        for h in group_columns(c):
            t.add_column(h, justify="left" if h in ("figure", "verdict") else "right")
        for row in group_rows(c):
            t.add_row(*row)
        console.print(t)
    if g["unlabelled"]:
        say(console, f"drives without label {g['key']}: {', '.join(g['unlabelled'])}")
