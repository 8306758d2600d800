"""The fleet report: one document (JSON) built from the drives' figures, their distributions and
outliers (figures/fleet.py) and spec-sheet verdicts (figures/specsheet.py); the terminal view
(fleet_terminal.py), the exit status and the JUnit XML (fleet_junit.py) are all drawn from that
document, so they cannot disagree with it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from iolab.core.errors import Exit
from iolab.core.steady import STEADY_NOT_EVALUATED, STEADY_NOT_REACHED
from iolab.core.units import counted, given, given_percent, num
from iolab.figures.fleet import (
    DRIVE_FACTS,
    MAD_SIGMA,
    MIN_DRIVES,
    Conditions,
    Distribution,
    DriveFigures,
    outliers_by_drive,
)
from iolab.figures.fleetpool import Pool
from iolab.figures.specsheet import SpecSheet, Verdict
from iolab.pages.fleet_junit import NOT_STARTED_WHY, exit_code, interrupted_why, steady_words

REPORT_SCHEMA = "iolab-fleet-report"


def rule_text(k: float, min_pct: float) -> str:
    return (
        f"outlier: |x - median| > k × {MAD_SIGMA} × MAD with k = {given(k)}, and > {given_percent(min_pct)} of the median (MAD: "
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


def spec_cell(vs: Sequence[dict]) -> str:
    """A drive's spec-sheet column: its failed criteria, else how many passed, and a criterion
    not measured or not judged is counted as such (a sheet whose figures a run did not measure,
    or measured but not as the drive's, never reads as a pass)."""
    if not vs:
        return "—"
    fails = [_failed(v) for v in vs if v["verdict"] == "fail"]
    others = [(k, sum(v["verdict"] == k for v in vs)) for k in ("not-measured", "not-judged")]
    rest = ", ".join(f"{n} {k.replace('-', ' ')}" for k, n in others if n)
    passed = sum(v["verdict"] == "pass" for v in vs)
    if fails:
        return "FAIL: " + ", ".join(fails) + (f"; {rest}" if rest else "")
    return f"{passed} pass, {rest}" if rest else f"pass ({passed}/{len(vs)})"


def _failed(v: dict) -> str:
    """A failed criterion with the drive's value and the bound it missed: 'write latency 212.4 us
    (needs ≤ 150 us)' (the criterion's name alone left the reader to find both)."""
    if v.get("value") is None:
        return v["criterion"]
    unit = f" {v['unit']}" if v.get("unit") else ""
    needs = f" (needs {v['bounds']})" if v.get("bounds") else ""
    return f"{v['criterion']} {num(v['value'])}{unit}{needs}"


def sheet_bounds(doc: dict, figure: str) -> str:
    """The spec sheet's bounds on one key figure ('4K random write ≥ 35 kIOPS'), '—' for none."""
    cs = ((doc.get("spec_sheet") or {}).get("criteria")) or []
    said = [f"{c['name']} {c['bounds']}" if c["name"] != figure else c["bounds"] for c in cs if c["figure"] == figure]
    return "; ".join(b for b in said if b.strip()) or "—"


def _verdict(v: Verdict) -> dict:
    return {
        "criterion": v.criterion.name,
        "figure": v.criterion.figure,
        "verdict": v.verdict,
        "value": v.value,
        "unit": v.unit or None,  # the unit `value` is in (the criterion's, else its figure's)
        "bounds": v.criterion.bounds_text(v.unit),
        "why": v.why,
    }


def drive_rows(
    rows: Sequence[dict], drives: Sequence[DriveFigures], dists: Sequence[Distribution], verdicts: dict
) -> list[dict]:
    """Each drive's row of the report: its fleet.json row, the drive as its run read it, its
    figures, outliers, verdicts and run conditions, and its own verdict."""
    flagged = outliers_by_drive(dists)
    by_name = {d.name: d for d in drives}
    judged = [d for d in dists if d.judged]
    out = []
    for r in rows:
        d = by_name.get(r["name"])
        c = d.conditions if d else Conditions()
        row = {
            **r,
            **{k: (d.facts if d else {}).get(k) for k in DRIVE_FACTS},
            "figures": d.figures if d else {},
            "outliers": [f for f, _ in flagged.get(r["name"], [])],
            # the figures of this drive the rule judged: none (too few drives measured each,
            # or extremes only) is no pass of the rule, which JUnit and the tables say
            "outlier_judged": [x.figure for x in judged if r["name"] in x.values],
            "verdicts": [_verdict(v) for v in verdicts.get(r["name"], [])],
            "compliant": c.compliant,
            "noncompliance": list(c.noncompliance),
            "steady_state": c.steady_state,
            "steady_not_accepted": c.not_accepted,
            "audit_failed": list(c.audit_failed),
        }
        row["verdict"], row["verdict_why"] = drive_verdict(row)
        out.append(row)
    return out


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
    out_rows = drive_rows(rows, drives, dists, verdicts)
    judged = [d for d in dists if d.judged]
    flagged = outliers_by_drive(dists)
    failing = sum(v.verdict == "fail" for vs in verdicts.values() for v in vs)
    units = {d.figure: d.unit for d in dists}  # a bound given with no unit is in its figure's
    doc: dict[str, Any] = {
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
                {
                    "name": c.name,
                    "figure": c.figure,
                    "min": c.min,
                    "max": c.max,
                    "unit": c.unit,
                    "claim": c.claim,
                    "bounds": c.bounds_text(units.get(c.figure)),
                }
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
            "outlier_rule_applied": bool(judged),
            "failing_criteria": failing,  # failed verdicts: drives × criteria
            # each criterion failed and its drives, as the summary line names them
            "failed_criteria": _failed_criteria(out_rows),
            **{f"{v.replace('-', '_')}_drives": [r["name"] for r in out_rows if r["verdict"] == v] for v in VERDICTS},
        },
        "caveats": caveats(out_rows),
    }
    # why the rule judged no figure (None when it judged one): "none" read as a fleet found
    # alike when nothing was compared
    doc["summary"]["outliers_not_judged_why"] = None if judged else not_judged_why(doc)
    doc["exit_code"] = exit_code(doc)
    return doc


def outliers_text(doc: dict) -> str:
    """The outlier drives, 'none', or why the rule judged no figure (a fleet of fewer drives than
    it needs, or no drive complete: "none" read as four drives found alike, one of them twice as slow)."""
    s = doc["summary"]
    if s["outlier_drives"]:
        return ", ".join(s["outlier_drives"])
    if s.get("outlier_rule_applied", True):
        return "none"
    return f"not judged ({s.get('outliers_not_judged_why') or not_judged_why(doc)})"  # or a report before the field


def not_judged_why(doc: dict) -> str:
    """Why the outlier rule judged none of the fleet's figures."""
    if not doc["summary"]["complete"]:
        return "no drive's run completed"
    least = doc["outlier_rule"]["min_drives"]
    most = max((f["n"] for f in doc["figures"]), default=0)
    if most < least:
        return f"a figure is judged when {least} or more drives measured it; at most {most} did"
    return "its figures are extremes, shown but not judged"


def figure_not_flagged(fig: dict, doc: dict) -> str:
    """A figure's outliers column when it has none: 'none', or why the rule did not judge it (the
    pages said "not judged (value)" for a figure too few drives measured)."""
    if fig["judged"]:
        return "none"
    if fig["n"] < doc["outlier_rule"]["min_drives"]:
        return f"not judged (< {counted(doc['outlier_rule']['min_drives'], 'drive')})"
    return "not judged (an extreme: one observation a drive)"


def outlier_cell(r: dict) -> str:
    """A drive's outlier column: the figures it strays on, '—' within the fleet on those judged,
    'not judged' when the rule judged none of its figures."""
    if r["outliers"]:
        return ", ".join(r["outliers"])
    return "—" if r.get("outlier_judged") or r["state"] != "complete" else "not judged"


# "error": the drive's run did not complete, so nothing judged it (JUnit's <error>, which CI
# systems count apart from a <failure>); "failed" is a drive judged and found wanting;
# "not-started": the fleet stopped before the drive began: never tested, neither failed nor passed;
# "interrupted": a stop ended its run part-way (it stored what it measured): not yet tested, and
# `iolab resume FLEET` goes on with it
VERDICTS = ("passed", "failed", "error", "interrupted", "not-started", "not-judged")
# said only of a fleet that has them: "0 did not complete" beside every fleet was noise
_SAID_WHEN_SEEN = ("error", "interrupted", "not-started")


# a verdict as the summary line says it of one or more drives
VERDICT_WORDS = {
    "passed": "passed",
    "failed": "FAILED",
    "error": "did not complete: error",
    "interrupted": "interrupted (resumable)",
    "not-started": "not started",
    "not-judged": "not judged",
}


def drive_verdict(r: dict) -> tuple[str, list[str]]:
    """A drive's own verdict and why: not-started when the fleet stopped before it began (it was
    shown "ERROR", as a run that crashed); interrupted when a stop ended its run part-way or as it
    started (resumable: it was shown "ERROR" too, though `iolab resume FLEET` goes on with it); error when its run did not complete (crashed, refused, its
    host died: not judged, as its JUnit `run` case is an <error>; "FAILED" beside a drive judged
    and found wanting read as the same); failed (it is an outlier, it fails a criterion, or its
    run was required to reach steady state and did not), else not-judged
    while its figures are not the drive's (a non-compliant run such as a quick one, a steady state
    not reached or not evaluated, a failed audit) or a check was not made on them (a criterion not
    measured or not judged; the outlier rule judged none and no spec sheet criterion did either),
    else passed (on the spec sheet alone when the outlier rule judged none, which it says). Each check had its own
    line, and no line said which drives qualified."""
    if r["state"] in ("running", "pending"):
        return "pending", [f"its run is {r['state']}"]
    if r["state"] == "not-started":
        return "not-started", [NOT_STARTED_WHY]
    if r["state"] == "interrupted":
        return "interrupted", [interrupted_why(r)]
    if r["state"] != "complete":
        return "error", [f"its run did not complete ({r['state']})"]
    failed = [f"outlier on {f}" for f in r["outliers"]]
    failed += [f"fails {_failed(v)}" for v in r["verdicts"] if v["verdict"] == "fail"]
    if r.get("exit_code") == Exit.NOT_STEADY:
        failed.append("steady state not reached (--require-steady)")
    if failed:
        return "failed", failed
    # figures not the drive's (a scaled-down run, no steady state, a failed audit) pass nothing,
    # as the spec sheet does not judge them: "5 passed" of a quick fleet read as qualified
    open_ = (
        [f"non-compliant run ({'; '.join(r['noncompliance']) or 'see its run'})"] if r.get("compliant") is False else []
    )
    if r.get("steady_state") in (STEADY_NOT_REACHED, STEADY_NOT_EVALUATED):
        open_.append(f"steady state {steady_words(r['steady_state'], r.get('steady_not_accepted'))}")
    open_ += [f"audit failed ({', '.join(r['audit_failed'])})"] if r.get("audit_failed") else []
    open_ += [f"{v['criterion']}: {v['verdict'].replace('-', ' ')}" for v in r["verdicts"] if v["verdict"] != "pass"]
    if r["outlier_judged"]:
        return ("not-judged", open_) if open_ else ("passed", [])
    # a fleet too small for the outlier rule (or of extremes only) is still qualified against
    # its spec sheet: a drive that met every criterion passes, saying what did not judge it;
    # with no criterion either, nothing judged the drive, and a pass would be of nothing
    unjudged = "outlier rule: no figure judged"
    if open_ or not r["verdicts"]:
        return "not-judged", [*open_, unjudged]
    return "passed", [f"{unjudged} (passed on the spec sheet alone)"]


def verdicts_text(doc: dict) -> str:
    """'5 passed, 1 FAILED (entry), 1 did not complete: error (slow), 0 not judged': the drives
    by their own verdict (a report from before the error verdict has no error_drives)."""
    s = doc["summary"]
    parts = []
    for v in VERDICTS:
        names = s.get(f"{v.replace('-', '_')}_drives", [])
        if v in _SAID_WHEN_SEEN and not names:
            continue
        word = VERDICT_WORDS[v] if names else v.replace("-", " ")
        parts.append(f"{len(names)} {word}" + (f" ({_names(names)})" if names and v != "passed" else ""))
    return ", ".join(parts)


def _failed_criteria(rows: Sequence[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in rows:
        for v in r["verdicts"]:
            if v["verdict"] == "fail":
                out.setdefault(v["criterion"], []).append(r["name"])
    return out


def failed_text(doc: dict) -> str:
    """The criteria failed and on how many drives ('write latency (2 drives)'), or 'none': the
    count of failed verdicts alone read as a count of criteria."""
    seen = doc["summary"]["failed_criteria"]
    return ", ".join(f"{c} ({counted(len(ds), 'drive')})" for c, ds in seen.items()) or "none"


def regressed_groups(doc: dict) -> dict[str, list[str]]:
    """Each group that regressed against the baseline group, with its figures (automation/fleetgroups)."""
    return {c["group"]: c["regressions"] for c in (doc.get("groups") or {}).get("comparisons", []) if c["regressions"]}


def groups_text(doc: dict) -> str:
    """'; groups regressed: B vs A (RND 4KiB R/W 0/100 IOPS)', '; groups regressed: none', or '' for
    a fleet without groups: the summary line said "0 failed ... criteria failed: none" of a fleet
    whose group regressed, and its exit status 7 went unexplained."""
    if not doc.get("groups"):
        return ""
    base = doc["groups"]["baseline"]
    said = "; ".join(f"{g} vs {base} ({', '.join(fs)})" for g, fs in regressed_groups(doc).items())
    return f"; groups regressed: {said or 'none'}"


def group_columns(c: dict) -> tuple[str, ...]:
    """The heads of a group comparison's table (terminal and pages): the baseline group, then this one."""
    return ("figure", c["baseline"], c["group"], "change", "noise", "verdict")


def group_rows(c: dict) -> list[tuple[str, ...]]:
    """A group comparison's rows, one per figure, as the terminal and the pages print them."""
    rows: list[tuple[str, ...]] = []
    for f in c["figures"]:
        pct = "—" if f["change_pct"] is None else f"{f['change_pct']:+.2f} %"
        # an interval of the logarithms is asymmetric: its edge on the worse side
        side = " (worse side)" if f.get("noise_scale") == "log" else ""
        noise = "—" if f["noise_pct"] is None else f"{'' if side else '±'}{f['noise_pct']:.2f} %{side}"
        rows.append(
            (figure_label(f), num(f["baseline"]["value"]), num(f["candidate"]["value"]), pct, noise, f["verdict"])
        )
    return rows


def figure_label(f: dict) -> str:
    """A figure's name with its unit, as the fleet's tables and strips head it; a figure without
    a unit (DWPD, a ratio) has its name alone, not "DWPD ()"."""
    return f"{f['name']} ({f['unit']})" if f.get("unit") else f["name"]


def conditions_text(r: dict) -> str:
    """A drive's run's conditions in a word or two: its steady state, scaled down, audit failed."""
    if r["state"] != "complete":
        return "—"
    words = [steady_words(r.get("steady_state"), r.get("steady_not_accepted"))]
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
        # a reason some drives' runs have and not others' names them: "(1 drives)" after the list
        # of every drive read as if each had it (a file's write cache among simulated drives)
        reasons: dict[str, list[str]] = {}
        for r in scaled:
            for n in r.get("noncompliance") or ():
                reasons.setdefault(n, []).append(r["name"])
        why = "; ".join(n if len(on) == len(scaled) else f"{n} (on {_names(on)})" for n, on in reasons.items())
        which = "every drive's run" if len(scaled) == len(done) else f"{len(scaled)} of {len(done)} drives' runs"
        out.append(f"NON-COMPLIANT: {which} ({_names([r['name'] for r in scaled])}): {why or 'see each run'}")
    refused = [
        r for r in done if r.get("steady_state") == STEADY_NOT_REACHED and r.get("steady_not_accepted") is not None
    ]
    for word, state in (("NOT ACHIEVED", STEADY_NOT_REACHED), ("NOT EVALUATED", STEADY_NOT_EVALUATED)):
        names = [r["name"] for r in done if r.get("steady_state") == state and r not in refused]
        if names:
            out.append(
                f"STEADY STATE {word} on {len(names)} of {len(done)} drives ({_names(names)}): "
                "their figures are from their last rounds, not from a steady-state window"
            )
    if refused:  # their windows' numbers passed: "NOT ACHIEVED" read as if they had failed
        why = "; ".join(dict.fromkeys(r["steady_not_accepted"] or "the run did not accept it" for r in refused))
        out.append(
            f"STEADY STATE NOT ACCEPTED on {len(refused)} of {len(done)} drives ({_names([r['name'] for r in refused])}): "
            f"their windows pass the rule's range and slope, but {why}; their figures are not from a steady-state window"
        )
    failed = [f"{r['name']} ({', '.join(r['audit_failed'])})" for r in done if r.get("audit_failed")]
    if failed:
        out.append(f"AUDIT FAILED on {len(failed)} drive{'' if len(failed) == 1 else 's'}: {_names(failed)}")
    return out
