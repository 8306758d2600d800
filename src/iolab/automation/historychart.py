"""`iolab history --html`: the figure's trend as one self-contained HTML page (an inline SVG
chart and the table; no script, font or stylesheet from anywhere else), written through the
write policy like every other file iolab writes."""

from __future__ import annotations

from html import escape
from pathlib import Path

from iolab.automation.history import History, when
from iolab.core.units import num
from iolab.pages.report.vticks import covering, label
from iolab.store.durable import replace_file, room_for

W, H, LEFT, RIGHT, TOP, BOTTOM = 900, 420, 80, 20, 20, 60
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def _scale(lo: float, hi: float, a: float, b: float):
    span = hi - lo or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def svg(h: History) -> str:
    pts = [(when(p.started), p.value) for t in h.targets for p in t.points if p.value is not None]
    if not pts:
        return "<p>No run measured this figure.</p>"
    times = [x for x, _ in pts]
    values = [y for _, y in pts]
    # the axis runs between round-number ticks, as the report's plots do (vticks): a fifth of
    # 1.05 × the largest value labelled 38,531 IOPS runs 0, 10,114, 20,229, 30,343, 40,457
    bottom, top = min(0.0, min(values)), max(values)
    marks = covering(bottom, top if top > bottom else bottom + 1.0, 4, whole=h.unit == "IOPS")
    lo, hi = marks[0], marks[-1]
    sx = (
        _scale(min(times), max(times), LEFT + 10, W - RIGHT - 10) if len(set(times)) > 1 else (lambda v: (W + LEFT) / 2)
    )
    sy = _scale(lo, hi, H - BOTTOM, TOP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'role="img" aria-label="{escape(h.figure)} per run">',
        f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" stroke="#444"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#444"/>',
    ]
    for v in marks:
        y = sy(v)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="12">{escape(label(v))}</text>'
        )
    out.append(
        f'<text x="16" y="{(TOP + H - BOTTOM) / 2}" font-size="12" transform="rotate(-90 16 '
        f'{(TOP + H - BOTTOM) / 2})" text-anchor="middle">{escape(h.unit)}</text>'
    )
    first, last = min(pts)[0], max(pts)[0]
    for x, anchor in ((first, "start"), (last, "end")) if first != last else ((first, "middle"),):
        stamp = next(p.started for t in h.targets for p in t.points if when(p.started) == x)
        out.append(
            f'<text x="{sx(x):.1f}" y="{H - BOTTOM + 18}" font-size="12" text-anchor="{anchor}">{escape(stamp)}</text>'
        )
    for i, t in enumerate(h.targets):
        colour = COLOURS[i % len(COLOURS)]
        xy = [(sx(when(p.started)), sy(p.value), p) for p in t.points if p.value is not None]
        if len(xy) > 1:
            out.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
                + " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in xy)
                + '"/>'
            )
        firmware = None
        for x, y, p in xy:
            tip = f"{t.label}: {num(p.value)} {h.unit}, run {p.run_id}, firmware {p.firmware or '?'}"
            if not p.compliant:
                tip += f"; non-compliant: {'; '.join(p.noncompliance)}"
            if p.unsteady or p.steady_state is None:
                tip += f"; steady state {p.steady_text()}"
            if p.audit_failed:
                tip += f"; audit {p.audit_text()}"
            out.append(marker(x, y, colour, p.compliant, p.unsteady, bool(p.audit_failed), escape(tip)))
            if p.firmware != firmware:  # mark where the firmware changed
                out.append(
                    f'<text x="{x:.1f}" y="{y - 8:.1f}" font-size="10" text-anchor="middle" '
                    f'fill="{colour}">{escape(p.firmware or "?")}</text>'
                )
                firmware = p.firmware
    out.append("</svg>")
    return "\n".join(out)


def marker(x: float, y: float, colour: str, compliant: bool, unsteady: bool, audit_failed: bool, tip: str) -> str:
    """One run's point: a circle, a square when its figure is from no steady state (not reached,
    or never judged), hollow when the run is non-compliant, crossed in red when its audit failed
    (MARKERS says so under the chart): a figure a run did not stand behind never looks like one it did."""
    # a non-compliant run's point is hollow: its figure is not a compliant run's
    paint = f'fill="{colour}"' if compliant else f'fill="white" stroke="{colour}" stroke-width="2"'
    title = f"<title>{tip}</title>"
    if unsteady:
        shape = f'<rect x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" {paint}>{title}</rect>'
    else:
        shape = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" {paint}>{title}</circle>'
    if audit_failed:
        shape += (
            f'<path d="M{x - 7:.1f},{y - 7:.1f}L{x + 7:.1f},{y + 7:.1f}M{x - 7:.1f},{y + 7:.1f}L{x + 7:.1f},{y - 7:.1f}" '
            f'stroke="{AUDIT_RED}" stroke-width="2">{title}</path>'
        )
    return shape


AUDIT_RED = "#b02a37"
MARKERS = (  # the legend of the points' shapes, drawn as the chart draws them
    (True, False, False, "a compliant run at steady state (or whose test tracks none)"),
    (False, False, False, "hollow: a non-compliant run (scaled down, as --quick is, or other settings)"),
    (True, True, False, "square: steady state NOT reached, or not evaluated (too few rounds)"),
    (True, False, True, "crossed in red: the run's self-audit failed (the table says which invariants)"),
)


def markers() -> str:
    items = []
    for compliant, unsteady, audit_failed, words in MARKERS:
        icon = marker(10, 10, "#444444", compliant, unsteady, audit_failed, "")
        items.append(f'<li><svg width="20" height="20" viewBox="0 0 20 20">{icon}</svg> {escape(words)}</li>')
    return f'<ul class="markers" style="list-style:none;padding:0">{"".join(items)}</ul>'


def page(h: History) -> str:
    arrow = "higher is better" if h.direction == "higher-is-better" else "lower is better"
    rows = "\n".join(
        f"<tr><td>{escape(t.id)}</td><td>{escape(t.label)}</td><td>{escape(p.started)}</td>"
        f"<td>{escape(p.run_id)}{f' (seed {p.seed})' if p.seed is not None else ''}</td><td>{escape(p.firmware or '?')}</td><td>{escape(p.compliance_text())}</td>"
        f"<td>{escape(p.steady_text())}</td><td>{escape(p.audit_text())}</td>"
        f"<td class=n>{escape(num(p.value)) if p.value is not None else 'not measured'}</td></tr>"
        for t in h.targets
        for p in t.points
    )
    title = f"{h.figure} ({h.unit}, {arrow})"
    legend = "".join(
        f'<li><span style="color:{COLOURS[i % len(COLOURS)]}">■</span> {escape(t.id)}: {escape(t.label)}</li>'
        for i, t in enumerate(h.targets)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>iolab history: {escape(h.figure)}</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border-bottom:1px solid #ccc;padding:2px 8px;text-align:left}} td.n{{text-align:right}}</style>
</head><body>
<h1>{escape(title)}</h1>
<p>Test: {escape(", ".join(h.tests))}. One line per target; each point is one complete run, at the time it
started; a label marks the firmware where it changed. A hollow point is a non-compliant run (scaled down, as
--quick is, or with other settings; the table says why): its figure is not one a compliant run would give. A
square point's run never reached steady state, or never filled a window to judge it: its figure is from its last
rounds, not from a steady-state window. A point crossed in red is from a run whose self-audit failed.</p>
{svg(h)}
<ul style="list-style:none;padding:0">{legend}</ul>
{markers()}
<table><tr><th>target</th><th>drive</th><th>started</th><th>run</th><th>firmware</th><th>compliant</th><th>steady state</th><th>audit</th><th>{escape(h.unit)}</th></tr>
{rows}
</table>
</body></html>
"""


def write_html(h: History, path: Path) -> Path:
    # whole or not at all (a full disk left a truncated page): exit 5 saying so
    with room_for("the history chart", Path(path), "run the same `iolab history` again"):
        return replace_file(Path(path), page(h).encode(), "history chart")
