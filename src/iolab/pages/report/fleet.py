"""The fleet report as pages (HTML and PDF, `iolab report FLEET_DIR`): the fleet's key figures
as distributions over its drives (a strip per figure: each drive a dot at its % of the
median, the outlier fences dashed, outliers red), the drives with their flags and verdicts,
the spec sheet's verdicts, the firmware groups and the pool at a latency bound. Built from the
fleet report document (pages/fleet.py), the same one `iolab fleet --json` prints."""

from __future__ import annotations

from typing import Any

from iolab.core.units import counted, given, num
from iolab.pages import fleet as fleet_doc
from iolab.pages.fleet import conditions_text, figure_label
from iolab.pages.report import vfigure
from iolab.pages.report.header import fit_banners, fit_column
from iolab.pages.report.model import CONTENT_MM, CONTENT_WIDTH_MM, Document, Figure, Page, Table, Text, block_height
from iolab.pages.report.sections import table_pages
from iolab.pages.report.vaxes import Axes, Path, PointLabel, Rule, on_white
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vticks import Tick, autoscale

SUMMARY = "Fleet — Summary"  # the page that prints in full what the heads and banners shorten
ACCEPTANCE = "Fleet — Spec-Sheet Acceptance"
POOL = "Fleet — Pool at a Latency Bound"
GROUPS = "Fleet — Groups Compared"
STRIPS_PER_FIGURE = 8  # strips in one plot; more figures take more plots
STRIP_MM = 13.0
DRIVE, OUTLIER, FENCE = "#2c3e50", "#c0392b", "#7f8c8d"


def _num(v: float | None) -> str:
    """As `iolab show` and the fleet table print the figure (units.num)."""
    return num(v)


def strips(figs: list[dict[str, Any]]) -> Drawing:
    """One strip per figure: every drive's value as % of the fleet median, fences dashed."""
    ax = Axes(xlabel="% of the fleet median", ylim=(-0.6, len(figs) - 0.4), legend=False)
    ax.yticks = [Tick(len(figs) - 1 - i, figure_label(f)) for i, f in enumerate(figs)]
    xs: list[float] = [100.0]  # the median's rule is inside the axes (matplotlib's axvline)
    for i, f in enumerate(figs):
        y = len(figs) - 1 - i
        med = f["median"] or 1.0
        flagged = {o["drive"] for o in f["outliers"]}
        pct = {drive: 100 * v / med for drive, v in f["values"].items()}
        for red in (False, True):
            at = [p for d, p in pct.items() if (d in flagged) == red]
            # dots at 75 % opacity, drawn in the colour that shows on white
            ax.add(Path(tuple(at), (y,) * len(at), on_white(OUTLIER if red else DRIVE, 0.75), 0.0, marker_pt=4))
        ax.point_labels += [PointLabel(pct[d], y, d, 0.0, 5.0, 6.0) for d in pct if d in flagged]
        if f["judged"] and f["fence_low"] is not None and f["fence_high"] is not None:
            for fence in (100 * f["fence_low"] / med, 100 * f["fence_high"] / med):
                ax.add(Path((fence, fence), (y - 0.3, y + 0.3), FENCE, 0.8, "--"))
                xs.append(fence)
        xs += pct.values()
    ax.add(Rule(100.0, True, FENCE, 0.6))
    ax.xlim = autoscale(xs, False)
    return vfigure.draw(
        [ax], CONTENT_WIDTH_MM, STRIP_MM * len(figs) + 14, "each drive's key figures as % of the median"
    )


def _strip_key(figs: list[dict[str, Any]], doc: dict[str, Any]) -> str:
    """What the strips' marks are: the fences and outliers only where the rule judged a figure
    (a fleet of four drives' page said "dashed: the fences" over strips with none)."""
    if any(f["judged"] for f in figs):
        return "red: an outlier; dashed: the fences"
    why = sorted({fleet_doc.figure_not_flagged(f, doc).removeprefix("not judged ") for f in figs})
    return f"no fences and no outliers: the rule judged none of these figures {', '.join(why)}"


def _strip_pages(doc: dict[str, Any]) -> list[Page]:
    figs = [f for f in doc["figures"] if f["values"]]
    pages = []
    for start in range(0, len(figs), STRIPS_PER_FIGURE):
        part = figs[start : start + STRIPS_PER_FIGURE]
        fig = Figure(
            f"Each drive's key figures as % of the fleet median (figures {start + 1}-{start + len(part)} of {len(figs)})",
            strips(part),
            f"{doc['outlier_rule']['text']}; {_strip_key(part, doc)}",
        )
        pages.append(Page("Fleet — Distributions", (fig,)))
    return pages


def _short(text: str, most: int = 90) -> str:
    """A drive's error in a table cell: its first words (the whole in report.json and the terminal)."""
    return text if len(text) <= most else text[: text.rfind(" ", 0, most)] + " …"


def _figures_table(doc: dict[str, Any]) -> Table:
    rows = tuple(
        (
            f["name"],
            f["unit"],
            str(f["n"]),
            _num(f["median"]),
            "—" if f["spread_pct"] is None else f"±{f['spread_pct']:.2f} %",
            f"{_num(f['min'])} – {_num(f['max'])}",
            ", ".join(o["drive"] for o in f["outliers"]) or fleet_doc.figure_not_flagged(f, doc),
        )
        for f in doc["figures"]
    )
    return Table(
        "Key figures over the drives",
        ("figure", "unit", "drives", "median", "robust spread", "min – max", "outliers"),
        rows,
        "each complete drive's own run (its key figures as stored); spread: 1.4826 × MAD as % of the median",
    )


def _drives_table(doc: dict[str, Any]) -> Table:
    rows = []
    for r in doc["drives"]:
        failed = [v["criterion"] for v in r["verdicts"] if v["verdict"] == "fail"]
        rows.append(
            (
                r["name"],
                r["verdict"].replace("-", " "),
                " · ".join(str(r.get(k) or "—") for k in ("model", "serial", "firmware")),
                ", ".join(f"{k}={v}" for k, v in (r.get("labels") or {}).items()),
                r["state"] + (f": {_short(r['error'])}" if r.get("error") else ""),
                conditions_text(r),
                fleet_doc.outlier_cell(r),
                ", ".join(failed) or ("—" if r["verdicts"] else "no spec sheet"),
            )
        )
    return Table(
        "Drives",
        (
            "drive",
            "verdict",
            "model · serial · firmware",
            "labels",
            "state",
            "steady state, conditions",
            "outlier on",
            "spec criteria failed",
        ),
        tuple(rows),
        "conditions: each drive's own run (compliance, steady state, audit); errors in full in report.json",
    )


def _verdict_table(doc: dict[str, Any]) -> Table | None:
    sheet = doc.get("spec_sheet")
    if not sheet:
        return None
    rows = tuple(
        (
            r["name"],
            v["criterion"],
            # the value is in the verdict's own unit (the criterion's, else its figure's), never
            # the figure's: a bound given in ms converts the value to ms
            f"{_num(v['value'])} {v.get('unit') or ''}".strip(),
            v["verdict"],
            v["why"] or "",
        )
        for r in doc["drives"]
        for v in r["verdicts"]
    )
    return Table(
        f"Acceptance against the spec sheet {sheet['path']}",
        ("drive", "criterion", "measured", "verdict", "why"),
        rows,
        "a criterion a drive's run did not measure never passes",
    )


def _pool_table(doc: dict[str, Any]) -> Table | None:
    p = doc.get("pool")
    if not p:
        return None
    rows = tuple(
        (
            f"{s['demand']:,.0f}",
            f"{s['iops']:,.0f}",
            _num(s["percentile_us"]),
            f"{s['ios']:,}",
            "yes" if s["meets"] else "no",
        )
        for s in p["steps"]
    )
    return Table(
        f"The pool at {p['percentile']:g} % ≤ {given(p['bound_us'])} µs ({counted(len(p['drives']), 'drive')} as one system)",
        ("demand IOPS", "delivered IOPS", f"p{p['percentile']:g} µs", "IOs", "meets"),
        rows,
        p["merged"],
    )


def _group_tables(doc: dict[str, Any]) -> list[Table]:
    """Each group against the baseline group, as the terminal prints it: a grouped fleet's pages
    said nothing of a group's regression, which fails the fleet (exit 7)."""
    g = doc.get("groups")
    if not g:
        return []
    return [
        Table(
            f"{g['key']} = {c['group']} ({counted(len(c['drives']), 'drive')}) vs {g['key']} = {c['baseline']} "
            f"({counted(len(c['baseline_drives']), 'drive')}); tolerance {g['tolerance_pct']:g} %",
            fleet_doc.group_columns(c),
            tuple(fleet_doc.group_rows(c)),
            f"noise: {g['noise']}",
        )
        for c in g["comparisons"]
    ]


def _intro(doc: dict[str, Any]) -> Text:
    s, f = doc["summary"], doc["fleet"]
    return Text(
        (
            f"Fleet {f['name']}: {f['test']} on {counted(s['drives'], 'drive')}, {s['complete']} complete"
            + (f" (not complete: {', '.join(s['not_complete'])})" if s["not_complete"] else "")
            + f". Drives: {fleet_doc.verdicts_text(doc)}. Outliers: {fleet_doc.outliers_text(doc)}; spec criteria failed: {fleet_doc.failed_text(doc)}{fleet_doc.groups_text(doc)}.",
            f"Each drive ran: iolab {_args(doc)}.",
            *doc.get("caveats", []),
            *(f"Warning: {w}" for w in doc.get("warnings", [])[:3]),
        ),
        height_mm=22 + 7 * len(doc.get("caveats", [])) + 6 * min(3, len(doc.get("warnings", []))),
    )


def _drive_counts(doc: dict[str, Any]) -> str:
    rows = [r for r in doc["drives"] if r["state"] == "complete"]
    steady = sum(r.get("steady_state") == "reached" for r in rows)
    compliant = sum(r.get("compliant") is True for r in rows)
    return f"{len(doc['drives'])}; {len(rows)} complete, {steady} steady, {compliant} compliant"


def _args(doc: dict[str, Any]) -> str:
    return " ".join(doc["fleet"].get("args") or ()) or "—"


def tested_by(args: list[str]) -> str:
    """The name every drive's run was given (`--tested-by`, passed on to each drive with the
    rest of the fleet's arguments), as a run's own report prints it."""
    for i, a in enumerate(args):
        if a == "--tested-by" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--tested-by="):
            return a.split("=", 1)[1]
    return "not given (--tested-by)"


def _banners(doc: dict[str, Any]) -> tuple[str, ...]:
    """Every page carries the drives' caveats (scaled down, not steady, audit failed) and the
    drives not complete: no page of figures can be read without them (in short form when they
    are many; the summary page prints them in full)."""
    missing = doc["summary"]["not_complete"]
    more = f", and {len(missing) - 8} more" if len(missing) > 8 else ""  # the summary page names them all
    tail = [f"NOT COMPLETE on {counted(len(missing), 'drive')}: {', '.join(missing[:8])}{more}"] if missing else []
    return fit_banners([(c, c.split(" (")[0], SUMMARY) for c in [*doc.get("caveats", []), *tail]])


def fleet_document(doc: dict[str, Any]) -> Document:
    f = doc["fleet"]
    first = table_pages(SUMMARY, [_figures_table(doc), _drives_table(doc)])
    # each part under its own heading, on pages of its own: laid out with the summary's tables,
    # the spec sheet's verdicts were headed "Fleet — Summary" (page 2 of a fleet PDF)
    rest = [table_pages(title, [t]) for title, t in ((ACCEPTANCE, _verdict_table(doc)), (POOL, _pool_table(doc))) if t]
    rest += [table_pages(GROUPS, _group_tables(doc))] if doc.get("groups") else []
    intro = _intro(doc)
    if intro.height_mm + sum(block_height(b) for b in first[0].blocks) <= CONTENT_MM:
        pages = [Page(first[0].title, (intro, *first[0].blocks)), *first[1:]]
    else:
        pages = [Page(SUMMARY, (intro,)), *first]
    pages += [p for part in rest for p in part]
    columns = (
        fit_column("Fleet", [("name", f["name"]), ("directory", f["dir"]), ("drives", _drive_counts(doc))], SUMMARY),
        fit_column("Test", [("test", f["test"]), ("state", f["state"]), ("arguments", _args(doc))], SUMMARY),
    )
    return Document(
        title=f"iolab fleet {f['name']}",
        spec=f"Fleet qualification: {f['test']}",
        test_name=f["test"],
        started=f.get("started") or "",
        ended=f.get("ended") or "—",
        device=counted(doc["summary"]["drives"], "drive"),
        tested_by=tested_by(list(f.get("args") or ())),
        columns=columns,
        banners=_banners(doc),
        pages=tuple(pages + _strip_pages(doc)),
        footer=f"fleet {f['name']} · {f['dir']}",
    )
