"""The fleet report: one document (JSON) built from the drives' figures, their distributions and
outliers (figures/fleet.py) and spec-sheet verdicts (figures/specsheet.py); the terminal view and
the JUnit XML are both drawn from that document, so they cannot disagree with it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from iolab.core.errors import Exit
from iolab.figures.fleet import (
    MAD_SIGMA,
    MIN_DRIVES,
    RESOLUTION,
    Conditions,
    Distribution,
    DriveFigures,
    outliers_by_drive,
)
from iolab.figures.fleetpool import Pool
from iolab.figures.specsheet import SpecSheet, Verdict

REPORT_SCHEMA = "iolab-fleet-report"
STRIP_WIDTH = 48


def rule_text(k: float, min_pct: float) -> str:
    return (
        f"outlier: |x - median| > k × {MAD_SIGMA} × MAD with k = {k:g}, and > {min_pct:g} % of the median (MAD: "
        f"median absolute deviation over the drives; judged with {MIN_DRIVES} or more drives)"
    )


def _dist(d: Distribution) -> dict:
    return {
        "name": d.figure,
        "unit": d.unit,
        "direction": "higher-is-better" if d.higher_is_better else "lower-is-better",
        "kind": d.kind,
        "n": d.n,
        "median": d.median,
        "mad": d.mad,
        "spread_pct": d.spread_pct,
        "min": d.minimum,
        "q1": d.q1,
        "q3": d.q3,
        "max": d.maximum,
        "fence_low": d.low,
        "fence_high": d.high,
        "judged": d.judged,
        "values": d.values,
        # z is infinite when the MAD is 0: JSON has no infinity, so null
        "outliers": [
            {"drive": o.drive, "value": o.value, "z": o.z if math.isfinite(o.z) else None, "worse": o.worse}
            for o in d.outliers
        ],
    }


def _pool(p: Pool) -> dict:
    best = p.best
    return {
        "percentile": p.percentile,
        "bound_us": p.bound_us,
        "drives": list(p.drives),
        "merged": "latency histograms summed bin by bin over the drives (exact), IOPS summed",
        "steps": [
            {
                "demand_per_drive": s.demand_per_drive,
                "demand": s.demand_per_drive * s.drives,
                "iops": s.iops,
                "percentile_us": s.percentile_us,
                "ios": s.ios,
                "meets": s.meets,
            }
            for s in p.steps
        ],
        "best": None
        if best is None
        else {"demand": best.demand_per_drive * best.drives, "iops": best.iops, "percentile_us": best.percentile_us},
        "sustain": {
            "iops": p.sustain_iops,
            "percentile_us": p.sustain_percentile_us,
            "p99_99_us": p.sustain_p99_99_us,
            "ios": p.sustain_ios,
            "meets": p.sustain_meets,
        },
    }


def _spec_cell(vs: Sequence[dict]) -> str:
    """A drive's spec-sheet column: its failed criteria, else how many passed, and a criterion
    not measured is counted as such (a sheet whose figures a run did not measure never reads as
    a pass)."""
    if not vs:
        return "—"
    fails = [v["criterion"] for v in vs if v["verdict"] == "fail"]
    unmeasured = sum(v["verdict"] == "not-measured" for v in vs)
    passed = sum(v["verdict"] == "pass" for v in vs)
    if fails:
        return "FAIL: " + ", ".join(fails) + (f"; {unmeasured} not measured" if unmeasured else "")
    return f"{passed} pass, {unmeasured} not measured" if unmeasured else f"pass ({passed}/{len(vs)})"


def _verdict(v: Verdict) -> dict:
    return {
        "criterion": v.criterion.name,
        "figure": v.criterion.figure,
        "verdict": v.verdict,
        "value": v.value,
        "why": v.why,
    }


def document(
    fleet: dict,
    rows: Sequence[dict],
    drives: Sequence[DriveFigures],
    dists: Sequence[Distribution],
    rule: tuple[float, float],
    sheet: SpecSheet | None,
    verdicts: dict[str, list[Verdict]],
    pool: Pool | None = None,
) -> dict:
    """The fleet report. `fleet`: the fleet's own fields (dir, name, test, state, times);
    `rows`: each drive's row of fleet.json (name, target, where, labels, state, run_dir, error);
    `rule`: the outlier rule's k and minimum deviation in %; `pool`: the fleet as one system at a
    latency bound (a latency-bound fleet)."""
    k, min_pct = rule
    flagged = outliers_by_drive(dists)
    figs = {d.name: d.figures for d in drives}
    out_rows = []
    conditions = {d.name: d.conditions for d in drives}
    for r in rows:
        c = conditions.get(r["name"]) or Conditions()
        out_rows.append(
            {
                **r,
                "figures": figs.get(r["name"], {}),
                "outliers": [f for f, _ in flagged.get(r["name"], [])],
                "verdicts": [_verdict(v) for v in verdicts.get(r["name"], [])],
                "compliant": c.compliant,
                "noncompliance": list(c.noncompliance),
                "steady_state": c.steady_state,
                "audit_failed": list(c.audit_failed),
            }
        )
    failing = sum(v.verdict == "fail" for vs in verdicts.values() for v in vs)
    doc = {
        "schema": REPORT_SCHEMA,
        "schema_version": 1,
        "fleet": fleet,
        "outlier_rule": {
            "k": k,
            "min_pct": min_pct,
            "mad_sigma": MAD_SIGMA,
            "min_drives": MIN_DRIVES,
            "text": rule_text(k, min_pct),
        },
        "spec_sheet": None
        if sheet is None
        else {
            "path": str(sheet.path),
            "model": sheet.model,
            "criteria": [
                {"name": c.name, "figure": c.figure, "min": c.min, "max": c.max, "unit": c.unit, "claim": c.claim}
                for c in sheet.criteria
            ],
        },
        "figures": [_dist(d) for d in dists],
        "groups": None,  # automation/fleetgroups.compare_groups, when the fleet is grouped
        "warnings": [],
        "pool": None if pool is None else _pool(pool),
        "drives": out_rows,
        "summary": {
            "drives": len(rows),
            "complete": sum(r["state"] == "complete" for r in rows),
            "not_complete": [r["name"] for r in rows if r["state"] != "complete"],
            "outlier_drives": sorted(flagged),
            "failing_criteria": failing,
        },
        "caveats": caveats(out_rows),
    }
    doc["exit_code"] = exit_code(doc)
    return doc


STEADY_WORDS = {"reached": "reached", "not-reached": "NOT reached", "not-evaluated": "not evaluated"}


def conditions_text(r: dict) -> str:
    """A drive's run's conditions in a word or two: its steady state, scaled down, audit failed."""
    if r["state"] != "complete":
        return "—"
    words = [STEADY_WORDS.get(r.get("steady_state") or "", "n/a")]
    if r.get("compliant") is False:
        words.append("non-compliant")
    if r.get("audit_failed"):
        words.append("audit failed")
    return ", ".join(words)


def _names(names: list[str], most: int = 8) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def caveats(rows: Sequence[dict]) -> list[str]:
    """What the drives' figures are not, said once for the terminal, the JSON and every page of
    the fleet's report: each drive's run states its own conditions (compliance, steady state, its
    audit), and a fleet's figures are only as true as the runs they come from."""
    done = [r for r in rows if r["state"] == "complete"]
    out = []
    scaled = [r for r in done if r.get("compliant") is False]
    if scaled:
        reasons = Counter(n for r in scaled for n in r.get("noncompliance") or ())
        why = "; ".join(n if c == len(scaled) else f"{n} ({c} drives)" for n, c in reasons.items())
        which = "every drive's run" if len(scaled) == len(done) else f"{len(scaled)} of {len(done)} drives' runs"
        out.append(f"NON-COMPLIANT: {which} ({_names([r['name'] for r in scaled])}): {why or 'see each run'}")
    for word, state in (("NOT ACHIEVED", "not-reached"), ("NOT EVALUATED", "not-evaluated")):
        names = [r["name"] for r in done if r.get("steady_state") == state]
        if names:
            out.append(
                f"STEADY STATE {word} on {len(names)} of {len(done)} drives ({_names(names)}): "
                "their figures are from their last rounds, not from a steady-state window"
            )
    failed = [f"{r['name']} ({', '.join(r['audit_failed'])})" for r in done if r.get("audit_failed")]
    if failed:
        out.append(f"AUDIT FAILED on {len(failed)} drives: {_names(failed)}")
    return out


def _drive_code(code: object) -> int:
    """A drive that did not complete, as its own process ended: its status, or the shell's code
    for the signal that killed it (kill -9: 137); a drive that says nothing (its run unreadable)
    is bad input, as a run iolab cannot read is."""
    if isinstance(code, int) and code > 0:
        return code
    if isinstance(code, int) and code < 0:
        return 128 - code
    return Exit.BAD_INPUT


def exit_code(doc: dict) -> int:
    """A drive that did not complete: its own run's status (the first such, in fleet order); else
    6 when a drive's own run said it did not reach the steady state asked for (`--require-steady`
    reaches every drive's run: its figures are then not the ones asked for, to judge or to
    pass); else 7 (as `iolab check`'s regression) when a drive fails a criterion or is an
    outlier, or a group regressed against the baseline group; else 0."""
    for r in doc["drives"]:
        if r["state"] in ("running", "pending"):
            continue  # not ended yet (a fleet shown while it runs): no status of its own to give
        if r["state"] != "complete":
            return _drive_code(r.get("exit_code"))
    if any(r.get("exit_code") == Exit.NOT_STEADY for r in doc["drives"]):
        return Exit.NOT_STEADY
    s = doc["summary"]
    regressed = any(c["regressions"] for c in (doc.get("groups") or {}).get("comparisons", []))
    return Exit.REGRESSION if s["failing_criteria"] or s["outlier_drives"] or regressed else Exit.OK


def _steady_case(r: dict) -> tuple[str, str]:
    """A complete drive's steady-state case: a failure when its run was asked to reach steady
    state (`--require-steady`: the run's own exit status says it did not), skipped when it was not
    reached or not evaluated but not required (the caveat says it), passed when reached."""
    state = r.get("steady_state") or "unknown"
    msg = f"steady state {STEADY_WORDS.get(state, state)}"
    if r.get("exit_code") == Exit.NOT_STEADY:
        return f'<failure message={quoteattr(msg + " (--require-steady)")} type="steady-state"/>', msg
    if state != "reached":
        return f"<skipped message={quoteattr(msg + '; not required')}/>", msg
    return "", msg


def junit_xml(doc: dict) -> str:
    """One test case per drive and check: its run, the outlier rule, its steady state, each
    spec-sheet criterion. A run that did not complete, an outlier, a steady state required and not
    reached and a failed criterion are failures; a criterion the run does not measure, and a steady
    state not reached but not required, are skipped."""
    cases, failures, skipped = [], 0, 0
    for r in doc["drives"]:
        cls = quoteattr(f"fleet.{r['name']}")

        def case(name: str, body: str, out: str, cls: str = cls) -> None:
            cases.append(
                f"    <testcase classname={cls} name={quoteattr(name)}>{body}"
                f"<system-out>{escape(out)}</system-out></testcase>"
            )

        ran = r["state"] == "complete"
        why = f"{r['name']} ({r['target']} on {r['where']}): {r['state']}" + (
            f": {r['error']}" if r.get("error") else ""
        )
        case("run", "" if ran else f'<failure message={quoteattr(why)} type="run"/>', why)
        failures += not ran
        if not ran:  # every check still has its case: skipped, as the drive was not measured
            sheet = (doc.get("spec_sheet") or {}).get("criteria", [])
            for name in ("outlier rule", "steady state", *(f"criterion: {c['name']}" for c in sheet)):
                case(name, f"<skipped message={quoteattr('not measured: ' + why)}/>", why)
                skipped += 1
        if ran:
            msg = f"outlier on {', '.join(r['outliers'])}" if r["outliers"] else "within the fleet on every figure"
            case("outlier rule", f'<failure message={quoteattr(msg)} type="outlier"/>' if r["outliers"] else "", msg)
            failures += bool(r["outliers"])
            body, msg = _steady_case(r)
            case("steady state", body, msg)
            failures += "<failure" in body
            skipped += "<skipped" in body
        for v in r["verdicts"]:
            body = ""
            if v["verdict"] == "fail":
                body, failures = f'<failure message={quoteattr(v["why"])} type="criterion"/>', failures + 1
            elif v["verdict"] == "not-measured":
                body, skipped = f"<skipped message={quoteattr(v['why'])}/>", skipped + 1
            case(f"criterion: {v['criterion']}", body, v["why"])
    for c in (doc.get("groups") or {}).get("comparisons", []):
        cls = quoteattr(f"fleet.group.{c['group']}")
        for f in c["figures"]:
            msg = f"{f['name']}: {f['verdict']} vs group {c['baseline']} ({f['method']})"
            body = f'<failure message={quoteattr(msg)} type="group"/>' if f["name"] in c["regressions"] else ""
            failures += bool(body)
            cases.append(
                f"    <testcase classname={cls} name={quoteattr(f['name'])}>{body}"
                f"<system-out>{escape(msg)}</system-out></testcase>"
            )
    name = quoteattr(f"iolab fleet: {doc['fleet']['name']} ({doc['fleet']['test']})")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="iolab fleet" tests="{len(cases)}" failures="{failures}">\n'
        f'  <testsuite name={name} tests="{len(cases)}" failures="{failures}" skipped="{skipped}" errors="0">\n'
        + "\n".join(cases)
        + "\n  </testsuite>\n</testsuites>\n"
    )


def _num(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.4g}"


def strip(fig: dict, width: int = STRIP_WIDTH) -> str:
    """The drives on one line from the fleet's min to max: '·' a drive, '┃' the median, '×' an
    outlier (several drives in one column: the column shows the strongest mark)."""
    lo, hi = fig["min"], fig["max"]
    cols = [" "] * width
    rank = {" ": 0, "·": 1, "┃": 2, "×": 3}

    same = hi - lo <= RESOLUTION * abs(fig["median"])  # one value, as far as the arithmetic tells

    def put(x: float, mark: str) -> None:
        i = width // 2 if same else round((x - lo) / (hi - lo) * (width - 1))
        if rank[mark] > rank[cols[i]]:
            cols[i] = mark

    bad = {o["drive"] for o in fig["outliers"]}
    for name, x in fig["values"].items():
        put(x, "×" if name in bad else "·")
    put(fig["median"], "┃")
    return "".join(cols)


def _why_not_judged(fig: dict, doc: dict) -> str:
    if fig["n"] < doc["outlier_rule"]["min_drives"]:
        return f"not judged (< {doc['outlier_rule']['min_drives']} drives)"
    return "not judged (an extreme: one observation a drive)"


def render(doc: dict, console) -> None:
    """The terminal view: each figure's distribution with its strip, then each drive's row."""
    from rich.table import Table

    f = doc["fleet"]
    s = doc["summary"]
    console.print(
        f"fleet {f['name']}: {f['test']} on {s['drives']} drives, {s['complete']} complete — {f['dir']}",
        markup=False,
        soft_wrap=True,
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
    ):
        t.add_column(h, justify="right" if h in ("n", "median", "spread", "min", "max") else "left")
    for fig in doc["figures"]:
        outs = ", ".join(
            f"{o['drive']} {_num(o['value'])} ({'worse' if o['worse'] else 'better'})" for o in fig["outliers"]
        )
        spread = "—" if fig["spread_pct"] is None else f"±{fig['spread_pct']:.2f} %"
        t.add_row(
            f"{fig['name']} ({fig['unit']})",
            str(fig["n"]),
            _num(fig["median"]),
            spread,
            _num(fig["min"]),
            _num(fig["max"]),
            strip(fig),
            outs or ("none" if fig["judged"] else _why_not_judged(fig, doc)),
        )
    console.print(t)
    console.print(doc["outlier_rule"]["text"], markup=False, soft_wrap=True)
    for c in doc.get("caveats", []):
        console.print(f"caveat: {c}", markup=False, soft_wrap=True)
    if doc.get("pool"):
        _render_pool(doc["pool"], console)
    if doc.get("groups"):
        _render_groups(doc["groups"], console)
    for w in doc.get("warnings", []):
        console.print(f"warning: {w}", markup=False, soft_wrap=True)
    d = Table(title="drives", title_justify="left")
    for h in ("drive", "where", "labels", "state", "steady state, conditions", "outlier on", "spec sheet"):
        d.add_column(h)
    for r in doc["drives"]:
        vs = r["verdicts"]
        spec = _spec_cell(vs)
        state = r["state"] + (f": {r['error']}" if r.get("error") and r["state"] != "complete" else "")
        labels = " ".join(f"{k}={v}" for k, v in r["labels"].items())
        d.add_row(r["name"], r["where"], labels, state, conditions_text(r), ", ".join(r["outliers"]) or "—", spec)
    console.print(d)
    console.print(
        f"outlier drives: {', '.join(s['outlier_drives']) or 'none'}; failing criteria: {s['failing_criteria']}; "
        f"drives not complete: {', '.join(s['not_complete']) or 'none'}",
        markup=False,
        soft_wrap=True,
    )


def _render_pool(p: dict, console) -> None:
    from rich.table import Table

    pct, bound = p["percentile"], p["bound_us"]
    t = Table(
        title=f"the pool of {len(p['drives'])} drives: {pct:g} % latency of the merged histograms vs the {_num(bound)} µs bound",
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
    console.print(f"pool at the bound (ramp): {best}", markup=False, soft_wrap=True)
    if su["iops"] is not None:
        held = "held" if su["meets"] else "NOT held"
        console.print(
            f"pool sustained: {_num(su['iops'])} IOPS, {pct:g} % latency {_num(su['percentile_us'])} µs, 99.99 % "
            f"{_num(su['p99_99_us'])} µs over {su['ios']:,} IOs: bound {held}",
            markup=False,
            soft_wrap=True,
        )


def _render_groups(g: dict, console) -> None:
    from rich.table import Table

    for c in g["comparisons"]:
        t = Table(
            title=f"{g['key']} = {c['group']} ({len(c['drives'])} drives) vs {g['key']} = {c['baseline']} "
            f"({len(c['baseline_drives'])} drives); noise: {g['noise']}; tolerance {g['tolerance_pct']:g} %",
            title_justify="left",
        )
        for h in ("figure", c["baseline"], c["group"], "change", "noise", "verdict"):
            t.add_column(h, justify="left" if h in ("figure", "verdict") else "right")
        for f in c["figures"]:
            pct = "—" if f["change_pct"] is None else f"{f['change_pct']:+.2f} %"
            # an interval of the logarithms is asymmetric: its edge on the worse side
            side = " (worse side)" if f.get("noise_scale") == "log" else ""
            noise = "—" if f["noise_pct"] is None else f"{'' if side else '±'}{f['noise_pct']:.2f} %{side}"
            t.add_row(
                f"{f['name']} ({f['unit']})",
                _num(f["baseline"]["value"]),
                _num(f["candidate"]["value"]),
                pct,
                noise,
                f["verdict"],
            )
        console.print(t)
    if g["unlabelled"]:
        console.print(f"drives without label {g['key']}: {', '.join(g['unlabelled'])}", markup=False, soft_wrap=True)
