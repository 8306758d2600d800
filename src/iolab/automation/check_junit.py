"""`iolab check --junit`: the check's verdicts as JUnit XML, one test case per figure, for a CI
server's test view (automation/check.py gives the verdicts)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from iolab.automation.check import STEADY_WARNING
from iolab.automation.verdict import FAILING, UNJUDGED, noise_text
from iolab.core.units import given, num, percent


def junit_xml(result: dict, suite: str = "iolab check") -> str:
    """One test case per figure; a regression or a missing figure is a failure. Runs without
    steady state add a "steady state" case: a failure under --require-steady, else its warning."""
    cases, failures = [], 0
    # check.check puts its steady-state warning first, and only when a run was not steady; the
    # others (a side's value of some of its runs) are of one figure each and go to its case: as
    # "steady state" cases they failed a check that passed under --require-steady (exit 0)
    # (none when every figure of the unsteady runs is of a steady phase, check.steady_warning)
    first = result["warnings"][:1] if result["not_steady"] else []
    n = 1 if first and first[0].startswith(STEADY_WARNING) else 0
    steady, others = result["warnings"][:n], result["warnings"][n:]
    for f in result["figures"]:
        body = ""
        if f["verdict"] in FAILING:
            msg = summary_line(f)
            body = f"<failure message={quoteattr(msg)} type={quoteattr(f['verdict'])}>{escape(f['method'])}</failure>"
            failures += 1
        elif f["verdict"] in UNJUDGED:
            body = f"<skipped message={quoteattr(f['verdict'].replace('-', ' ') + ': ' + f['method'])}/>"
        said = [w for w in others if w.startswith(f"{f['name']}: ")]
        cases.append(
            f"    <testcase classname={quoteattr(result['test'])} name={quoteattr(f['name'])}>"
            f"{body}<system-out>{escape(chr(10).join([summary_line(f), *said]))}</system-out></testcase>"
        )
    skipped = sum(f["verdict"] in UNJUDGED for f in result["figures"])
    for w in steady:
        # without --require-steady the case is skipped, as a fleet's is: a case with no failure is
        # one a CI system counts as passed, and steady state was not shown
        if result["require_steady"]:
            body, failures = f'<failure message={quoteattr(w)} type="not-steady"/>', failures + 1
        else:
            body, skipped = f"<skipped message={quoteattr(w)}/>", skipped + 1
        cases.append(
            f'    <testcase classname={quoteattr(result["test"])} name="steady state">'
            f"{body}<system-out>{escape(w)}</system-out></testcase>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name={quoteattr(suite)} tests="{len(cases)}" failures="{failures}">\n'
        f'  <testsuite name={quoteattr(suite + ": " + result["test"])} tests="{len(cases)}" '
        f'failures="{failures}" skipped="{skipped}" errors="0">\n'
        + "\n".join(cases)
        # what the verdicts are of (scaled-down runs, a figure's note), as the terminal says it under the table
        + (f"\n    <system-out>{escape(chr(10).join(result['notes']))}</system-out>" if result["notes"] else "")
        + "\n  </testsuite>\n</testsuites>\n"
    )


def _num(v: float | None) -> str:
    """As `iolab show` and the check table print the figure (units.num)."""
    return num(v)


def summary_line(f: dict) -> str:
    """'ART RND 4KiB R/W 65/35: regression, 103.7 -> 117.9 µs (+13.7 %, noise ±0.8 %, tolerance 5 %,
    detects ≥5 %)'."""
    b, c = f["baseline"]["value"], f["candidate"]["value"]
    parts = [
        None if f["change_pct"] is None else percent(f["change_pct"], "+"),
        None if f["noise_pct"] is None else f"noise {noise_text(f)}",
        # a figure not judged (no such figure in the baseline, or not measured) was held to no
        # tolerance: naming one would say it was
        None if f["verdict"] in UNJUDGED else f"tolerance {given(f['tolerance_pct'])} %",
        None if f["detectable_pct"] is None else f"detects ≥{percent(f['detectable_pct'])}",
    ]
    how = ", ".join(p for p in parts if p)
    return f"{f['name']}: {f['verdict']}, {_num(b)} -> {_num(c)} {f['unit']}" + (f" ({how})" if how else "")
