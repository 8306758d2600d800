"""The terminal view of a stored run (`iolab show`): tables per phase and the steady-state
table with its fit formula. Reads summaries only. A test declares its view of a phase
(`grid_view`, `render_wsat`, or its own); `generic_view` serves any other test."""

from __future__ import annotations

from collections.abc import Callable

from rich import box
from rich.console import Console
from rich.markup import escape as esc
from rich.table import Table

from iolab.core.decide import decision_text
from iolab.core.profilewords import profile_settings
from iolab.core.steady import (
    STEADY_NOT_APPLICABLE,
    STEADY_NOT_EVALUATED,
    STEADY_NOT_REACHED,
    STEADY_REACHED,
    SteadyState,
)
from iolab.core.units import counted, denoise, duration, eng, kib_label, num, pct_text
from iolab.figures.audit import Audit, marker, stored_audit
from iolab.figures.endurance import Endurance, endurance, measures_endurance
from iolab.figures.points import today_decision
from iolab.figures.power import stored_power
from iolab.figures.summary import PhaseSummary, interval_label, rounds_count, summarise
from iolab.pages.figuretable import render_figures
from iolab.pages.report.header import steady_caveats
from iolab.pages.report.rundata import RunData
from iolab.pages.runwords import INFO_STEADY_WORDS, once_each, rounds_text
from iolab.store.manifest import manifest_of, unknown_parts, unknown_text
from iolab.store.resultsdb import unknown_schema
from iolab.store.runstore import RunStore
from iolab.targets.model import copy_text, hosts_capacity_text, recorded_drive_bytes

PhaseView = Callable[[PhaseSummary, Console], None]


def render(
    store: RunStore,
    console: Console,
    view: PhaseView | None = None,
    figures=None,
    read: tuple[list[PhaseSummary], Audit] | None = None,
) -> None:
    """`view`: the test's own view of a phase (None: `generic_view`); `figures`: the test's key
    figures (TestDef.key_figures), printed last as the run's headline; `read`: the run's phase
    summaries and audit where the caller read them already (its --json record takes them too)."""
    m = manifest_of(store)
    # Everything from the manifest is text a user or a device supplied: escaped, so a '[' in
    # it is printed, not read as Rich markup.
    console.print(f"[bold]{esc(m.title)}[/] — {esc(m.spec)} — run {esc(m.run_id)}")
    facts = m.target.get("facts", {})
    # a run on other hosts: its recorded capacity is the ?size= tested, not the drives' (theirs is
    # what the hosts said, often nothing); shown as the drives' size it read as measured
    hosts = hosts_capacity_text(m.target, eng)
    size = f"capacity {hosts}" if hosts else eng(recorded_drive_bytes(m.target), "B")
    console.print(
        esc(
            f"target {m.target['spec']} ({m.target['kind']}; {facts.get('model') or 'model unknown'}; "
            f"{size}, tested {eng(m.target.get('tested_capacity', 0), 'B')}"
            + (f"; {copy_text(m.target)})" if copy_text(m.target) else ")")
        )
    )
    prof = m.profile
    # the write cache and active range as the run set them, and the profile's where an option replaced it
    if "write_cache" in prof and "active_range" in prof:
        settings = profile_settings(str(prof.get("name")), bool(prof["write_cache"]), float(prof["active_range"]))
        console.print(
            esc(
                f"profile {prof.get('name')}: "
                + ", ".join(f"{t} ({o}; the profile's: {own})" if own else t for o, t, own in settings)
            )
        )
    state_style = {"complete": "green", "running": "yellow"}.get(m.state, "red")
    console.print(f"state [{state_style}]{esc(m.state)}[/]  started {esc(m.started)}  ended {esc(m.ended or '—')}")
    if m.error:
        console.print(f"[red]{esc(m.error)}[/]")
    if not m.compliant:
        console.print(f"[yellow]NON-COMPLIANT: {esc('; '.join(m.noncompliance))}[/]")
    for line in purge_lines(m.purges):
        console.print(esc(line), soft_wrap=True)
    console.print(esc(f"steady-state rule: {m.steady_rule}"))
    for note in m.notes:
        console.print(esc(f"note: {note}"))
    if unknown := unknown_text(unknown_parts(m, unknown_schema(store.query))):
        console.print(f"[yellow]{esc(unknown)}[/]")
    audit = read[1] if read is not None else stored_audit(store)
    render_audit(audit, console)
    phases = read[0] if read is not None else summarise(store)
    after = not_run_after(m.plan.get("phases", ()), {ph.phase.name for ph in phases})
    for ph in phases:
        console.print()
        render_phase(ph, console, view or generic_view)
        if ph.steady and audit.marks(()):
            console.print(
                f"[red]{esc(marker(audit.marks(())))}: this steady state is not the drive's on the run's own evidence[/]"
            )
        for d in m.decisions:
            if d["phase"] == ph.phase.name or d["phase"] in after.get(ph.phase.name, ()):
                console.print(esc(f"decision: {decision_text(today_decision(d))}"), soft_wrap=True)
    if figures is not None and phases:
        run = RunData(store.dir, m, phases, store.cells(kind="precondition"), store.dir, audit)
        render_figures(figures([phases]), phases, console, audit, steady_caveats(run))
    if measures_endurance(m) and phases:  # the tests whose report has an Endurance page
        render_endurance(endurance(m, phases, store.cells(kind="precondition")), console, audit)
    render_power(stored_power(store.dir), console)


def not_run_after(planned, ran: set[str]) -> dict[str, list[str]]:
    """The planned phases that did not run (a bisection step decided not to), by the phase that
    ran before them: their decisions, which say why, are printed with it."""
    out: dict[str, list[str]] = {}
    last = None
    for p in planned:
        name = p.get("name") if isinstance(p, dict) else None
        if name in ran:
            last = name
        elif last is not None and isinstance(name, str) and "not_run" in p:
            out.setdefault(last, []).append(name)
    return out


def purge_lines(purges: list[dict]) -> list[str]:
    """One line per purge as the run recorded it; the same purge of a phase again (a resumed run
    that ran the phase again from its purge: a simulated drive's always) is one line that says
    how many times, not the same line twice."""
    lines = []
    for p in purges:
        # a failed purge says why and a fallback says from what, not only in manifest.json
        said = f": {p['detail']}" if not p["ok"] or p["detail"].startswith("auto:") else ""
        lines.append(f"purge ({p['phase']}): {p['method']} — {'ok' if p['ok'] else 'FAILED'}{said}")
    return [line + more for line, more in once_each(lines)]


def render_power(doc: dict | None, console: Console) -> None:
    """Each phase's average (and a meter's maximum) power, as the report's Power pages give them,
    with where the figures came from: a meter's log (`iolab power`) or the simulator's model."""
    if doc is None:
        return
    for ph in doc.get("phases", []):
        if ph.get("avg_mw") is None:
            continue
        peak = f", max {ph['max_mw']:,.0f} mW" if ph.get("max_mw") is not None else ""
        console.print(
            esc(
                f"power ({ph['name']}): average {ph['avg_mw']:,.0f} mW{peak} over {ph['measured']} of "
                f"{ph['cells']} cells; {doc.get('source')}"
            ),
            soft_wrap=True,
        )


def render_audit(a: Audit, console: Console, detail: bool = False) -> None:
    """The self-audit's line (audit.py) and each failed invariant with its reason; `detail`:
    every invariant with its reason (`iolab audit`)."""
    style = "green" if a.passed else "red"
    console.print(f"[{style}]{esc(a.summary())}[/]", soft_wrap=True)
    if a.stored:
        console.print(f"[dim]  ({esc(a.remade_text())})[/]", soft_wrap=True)
    for r in a.results:
        if r.failed or detail:
            mark = {"pass": "ok  ", "fail": "FAIL", "n/a": "n/a "}.get(r.status, r.status)
            touches = f" (touches: {', '.join(r.touches)})" if r.failed else ""
            console.print(esc(f"  {mark} {r.name}: {r.reason}{touches}"), soft_wrap=True)


def render_endurance(e: Endurance, console: Console, audit: Audit | None = None) -> None:
    """TBW and DWPD with the WAF they rest on and its basis, as the report's Endurance page."""
    if e.waf is None:
        return
    text = f"endurance: WAF {e.waf.value:.2f}, basis: {e.waf.basis}"
    if e.tbw:
        of = f", {e.of}" if e.of else ""
        text += f"; TBW {e.tbw / 1e12:,.1f} TB at {e.pe[0]:,.0f} P/E cycles ({e.pe[1]}){of}"
    if e.dwpd:
        text += f"; DWPD {e.dwpd:.2f} over {e.years[0]:g} years ({e.years[1]})"
    if audit is not None and audit.marks(("endurance", "WAF")):
        text += f"  {marker(audit.marks(('endurance', 'WAF')))}"
    console.print()
    console.print(esc(text), soft_wrap=True)


def render_ranking(st, console: Console, report: bool = True) -> None:
    """A comparison's key figures (compare.SummaryTable): one row per figure, one column per
    drive, each value with its rank (1 = best; ties share a rank). `report`: a comparison
    report was written (none is for one run or published figures alone)."""
    t = Table(title="key figures and ranking (rank 1 = best)", title_justify="left")
    t.add_column("figure")
    for d in st.drives:
        t.add_column(esc(d), justify="right")
    # a figure whose run is not at steady state, or failed an audit invariant for it, is marked
    # [a], [b] … by what it carries, the marks said below the table
    for j, m in enumerate(st.metrics):
        cells = [
            m.fmt(row[j]) + ("" if rk[j] is None else f" (#{rk[j]})") + (f" [{k}]" if (k := st.mark_of(i, j)) else "")
            for i, (row, rk) in enumerate(zip(st.values, st.ranks))
        ]
        t.add_row(esc(m.heading), *(esc(c) for c in cells))
    console.print(t)
    for mk, key in st.mark_keys().items():
        console.print(f"[red]{esc(f'[{key}]')} {esc(mk)}[/]", soft_wrap=True)
    for note in st.notes:  # what a figure is of, as the report's summary table says (check prints its notes too)
        console.print(esc(note), soft_wrap=True)
    console.print(
        "↑ higher is better, ↓ lower is better; "
        + (
            "the report has the tables, overlays and rankings."
            if report
            else "no comparison report: overlays need two or more measured runs of the test."
        )
    )


# show's phase line: a phase that tracks nothing is not "not evaluated" (too few rounds to judge)
PHASE_STEADY_WORDS: dict[SteadyState, str] = {
    STEADY_REACHED: "[green]steady state reached[/]",
    STEADY_NOT_REACHED: "[red]steady state NOT reached[/]",
    STEADY_NOT_EVALUATED: "steady state not evaluated",
    STEADY_NOT_APPLICABLE: "steady state not applicable (the phase tracks none)",
}


def render_phase(ph: PhaseSummary, console: Console, view: PhaseView) -> None:
    # a phase that runs to its budget whatever its verdict (PhaseSummary.reports_only): the
    # verdict is information, worded as the report's header words it, not a red failure
    words = INFO_STEADY_WORDS if ph.reports_only else PHASE_STEADY_WORDS
    steady, reason = words[ph.steady_state], esc(ph.phase.stop_reason or "unfinished")
    refused = None if ph.reports_only else ph.not_accepted()
    if refused is not None:  # its numbers passed: "NOT reached" read as if they had failed
        but = f", but {esc(refused)}" if refused else ", but the run did not accept it"
        steady = "[red]steady state NOT accepted[/]: the window passes the rule's range and slope" + but
        reason = "; ".join(c for c in reason.split("; ") if c.startswith("reached the round limit")) or reason
    rounds = rounds_count(ph)
    console.print(f"[bold]{esc(ph.phase.name)}[/]: {rounds}; {steady}; {reason}")
    if ph.window:
        # a view whose figures do not come from the window says what the window is for instead
        use = getattr(view, "window_use", None)
        said = use(ph) if callable(use) else ""
        console.print(esc(f"measurement window: {rounds_text(ph.window)}" + (f" ({said})" if said else "")))
    view(ph, console)
    if ph.verdicts:
        render_steady(ph, console)


def is_grid(ph: PhaseSummary) -> bool:
    """The cells fill a mix × block size table, each place at most once (a demand ramp's
    cells share one mix and block size: a grid would show one of them)."""
    places = [(c.mix, c.block_size) for c in ph.cells]
    # a column is an R/W mix ("65/35"): DIRTH's preconditioning keys its one cell "TC4", which
    # printed as a column "R/W TC4"
    mixes = all(_is_mix(m) for m in ph.mixes)
    return bool(ph.mixes and ph.block_sizes) and mixes and len(set(places)) == len(places)


def _is_mix(mix: str) -> bool:
    r, _, w = mix.partition("/")
    return r.isdigit() and w.isdigit()


def grid_view(title: str, fmt: Callable) -> PhaseView:
    """One figure per cell in a block size × mix table (rows × columns); `fmt(cell)` prints it.
    `title` says how each figure was reduced over the window (a mean, a maximum, a percentile of
    the merged histogram): the view cannot know it. Phases that are not such a grid get one row
    per cell."""

    def view(ph: PhaseSummary, console: Console) -> None:
        if not is_grid(ph):
            if ph.cells:
                render_cells(ph, console)
            return
        t = Table(title=title, title_justify="left")
        t.add_column("block size", justify="right")
        for mix in ph.mixes:
            t.add_column(esc(f"R/W {mix}"), justify="right")
        for bs in ph.block_sizes:
            cells = [ph.cell(mix, bs) for mix in ph.mixes]
            t.add_row(kib_label(bs), *(fmt(c) if c else "—" for c in cells))
        console.print(t)

    return view


def iops_grid(ph: PhaseSummary, console: Console) -> None:
    grid_view("IOPS, mean over the measurement window", lambda c: num(c.iops))(ph, console)


generic_view = iops_grid  # any test: the IOPS grid when its cells form one, else a row per cell


def render_steady(ph: PhaseSummary, console: Console) -> None:
    """Numbers never wrap or shorten (80 columns hold the table); the fit formula, the widest
    entry, goes under the table, one line per variable."""
    t = Table(
        title="steady state (range and fit excursion: measured, and the most allowed)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )  # 80 columns with the SS column whole
    for col in ("variable", "rounds", "average", "range", "allowed", "fit exc.", "allowed", "SS"):
        t.add_column(
            col,
            justify="left" if col == "variable" else "right",
            no_wrap=col != "variable",
            overflow="fold",
            min_width=8 if col == "variable" else None,
        )
    for v in ph.verdicts:
        t.add_row(
            esc(v.name),
            f"{v.rounds[0]}–{v.rounds[-1]}",
            num(v.average),
            num(v.range_measured),
            num(v.range_allowed),
            num(denoise(v.fit_excursion, v.average)),
            num(v.fit_allowed),
            ("pass" if v.steady else "fail") + "*"
            if v.name in ph.shown_only
            else "[green]pass[/]"
            if v.steady
            else "[red]FAIL[/]",
        )
    console.print(t)
    for v in ph.verdicts:
        console.print(f"  fit, {esc(' '.join(v.name.split()))}: {esc(v.formula())} (R = round)", soft_wrap=True)
    if any(v.name in ph.shown_only for v in ph.verdicts):
        console.print(
            "  * shown only: its own steady-state determination over the window; the phase's steady state "
            "is decided by the other variables",
            soft_wrap=True,
        )


def render_cells(ph: PhaseSummary, console: Console) -> None:
    """Phases whose cells are not a block size × mix grid (RWSW, ramps): one row per cell."""
    t = Table(title="per cell over the measurement window", title_justify="left")
    idles = any(c.idle_before_s is not None for c in ph.cells)
    # each column says its own reduction: a 99.999 % is no mean of the rounds' percentiles
    figures = ("IOPS (mean)", "MB/s (mean)", "ART µs (mean)", "99.999 % µs (merged histogram)")
    cols = ("cell", *(("idle before",) if idles else ()), *figures)
    for col in cols:
        t.add_column(col, justify="right")
    cells = ph.cells if len(ph.cells) <= 30 else ph.cells[:10] + ph.cells[-10:]
    for c in cells:
        if len(ph.cells) > 30 and c is ph.cells[-10]:
            t.add_row("…", *[""] * (len(cols) - 1))
        idle = (duration(c.idle_before_s) if c.idle_before_s is not None else "—",) if idles else ()
        t.add_row(esc(c.key), *idle, num(c.iops), num(c.mbps), num(c.lat_mean_us), pct_text(c.p99_999_us, c.ios))
    console.print(t)


def render_wsat(ph: PhaseSummary, console: Console) -> None:
    rows = ph.rows
    if not rows:
        return
    written = 0
    t = Table(title="Write Saturation: IOPS per interval", title_justify="left")
    for col in ("interval", "IOPS", "ART µs", "TGBW GB"):
        t.add_column(col, justify="right")
    show = rows if len(rows) <= 30 else rows[:10] + rows[-10:]
    marks = {r.id for r in show}
    for r in rows:
        written += r.write_bytes
        if r.id in marks:
            t.add_row(interval_label(r), num(r.iops), num(r.lat_mean_us), num(written / 1e9))
    console.print(t)
    # a partial interval (the budget's end) is shown above but is no full interval to summarise
    full = [r for r in rows if not r.partial]
    total = f"total written {eng(written, 'B')} over {len(rows)} intervals"
    if not full:
        # the budget ran out before one interval was whole: the key figures are '—' too
        console.print(f"{total}, none of them a full interval (the budget ran out first): no interval figures")
        return
    console.print(
        f"{total}; first interval {num(full[0].iops)} IOPS, "
        f"last {len(full[-5:])} full intervals mean {num(sum(r.iops for r in full[-5:]) / len(full[-5:]))} IOPS"
    )


def render_intervals(ph: PhaseSummary, console: Console) -> None:
    """A phase logged in intervals (Cross Stimulus Recovery's groups): the first and last ten."""
    rows = ph.rows
    if not rows:
        return
    t = Table(title=f"{ph.phase.name}: throughput per interval", title_justify="left")
    for col in ("interval", "MB/s", "IOPS", "ART µs", "MRT µs"):
        t.add_column(col, justify="right")
    for r in rows if len(rows) <= 20 else rows[:10] + rows[-10:]:
        t.add_row(interval_label(r), num(r.mbps), num(r.iops), num(r.lat_mean_us), num(r.lat_max_us))
    console.print(t)
    console.print(
        f"{esc(ph.phase.name)}: {len(rows)} intervals, mean {num(sum(r.mbps for r in rows) / len(rows))} MB/s, "
        f"last {min(5, len(rows))} mean {num(sum(r.mbps for r in rows[-5:]) / len(rows[-5:]))} MB/s"
    )


def render_hir(ph: PhaseSummary, console: Console) -> None:
    """Host Idle Recovery: a wait state's bursts (or any interval-logged phase) and their mean IOPS."""
    rows = ph.rows
    if not rows:
        return
    t = Table(title=f"{ph.phase.name}: IOPS per cell", title_justify="left")
    for col in ("cell", "idle before", "IOPS", "ART µs", "MRT µs"):
        t.add_column(col, justify="right")
    for r in rows if len(rows) <= 20 else rows[:10] + rows[-10:]:
        t.add_row(
            esc(f"{r.cell_key} (round {r.round})"),
            duration(r.idle_before_s) if r.idle_before_s else "—",
            num(r.iops),
            num(r.lat_mean_us),
            num(r.lat_max_us),
        )
    console.print(t)
    console.print(
        f"{esc(ph.phase.name)}: {counted(len(rows), 'cell')}, mean {num(sum(r.iops for r in rows) / len(rows))} IOPS"
    )


def render_dirth(ph: PhaseSummary, console: Console) -> None:
    """DIRTH: its IOPS over TC × QD (demand variation); the Max/Mid/Min points are printed
    with the operating-points phase (the run's decision); other phases per cell."""
    from iolab.figures.compare.pts2 import demand_points, point_cell  # compare imports no textreport code
    from iolab.figures.points import DV_PHASE, decided_points

    points = demand_points([ph])
    if ph.phase.name != DV_PHASE or not points:
        generic_view(ph, console)
        ops = decided_points(ph.decisions)
        for (name, p), rule in zip(ops.named(), ops.rules()) if ops else ():
            what = f"{p.label()}, {num(p.iops)} IOPS, ART {num(p.art_us)} µs" if p else "not determined"
            console.print(esc(f"{name} ({rule}): {what}"), soft_wrap=True)
        if ops and (ops.max or ops.mid):
            console.print("(each point's IOPS and ART: the mean over the demand-variation window)")
        if ops and ops.mid_same_as():
            console.print(esc(ops.mid_same_as()), soft_wrap=True)
        for name, owner in ops.shared if ops else ():  # measured once, as `owner`: its cells are both
            c = point_cell([ph], name)
            got = (
                f"{num(c.iops)} IOPS, ART {num(c.lat_mean_us)} µs, MRT {num(c.lat_max_us)} µs" if c else "not measured"
            )
            said = ops.shared_text(name) if ops else name
            console.print(esc(f"{said}: {got} (the {owner} cells)"), soft_wrap=True)
        return
    depths = sorted({p.queue_depth for p in points}, reverse=True)
    tcs = {p.threads for p in points}
    # each point's IOPS and ART are the means of its rounds' over the window (demand_points: the
    # window's CellAverage, whose ART is the mean of the rounds' mean latencies)
    window = f"over the measurement window ({rounds_text(ph.window)})"
    if len(points) != len(tcs) * len(depths) or len(depths) == 1:  # a sweep of outstanding IO, not a grid
        t = Table(title=f"Demand variation: IOPS (mean) and ART (mean) {window}", title_justify="left")
        for col in ("OIO", "TC/QD", "IOPS", "ART (µs)"):
            t.add_column(col, justify="right")
        for p in sorted(points, key=lambda p: p.oio):
            t.add_row(f"OIO {p.oio}", p.label(), num(p.iops), num(p.art_us))
        console.print(t)
        return
    t = Table(title=f"Demand variation: IOPS, mean {window}", title_justify="left")
    t.add_column("TC \\ QD")
    for q in depths:
        t.add_column(f"QD{q}", justify="right")
    for tc in sorted({p.threads for p in points}, reverse=True):
        by_q = {p.queue_depth: p.iops for p in points if p.threads == tc}
        t.add_row(f"TC{tc}", *(num(by_q.get(q)) for q in depths))
    console.print(t)
