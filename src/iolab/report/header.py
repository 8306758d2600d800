"""What every page repeats (PTS report layout, digest A.14): the page header fields, the four
header columns, and the banners (non-compliant, incomplete). Built from the manifest and the
stored phases only; a fact the run did not record is printed as such, never guessed."""

from __future__ import annotations

from ..steady import SteadyRule
from ..units import kib_label
from .model import HeaderColumn
from .rundata import RunData, rounds_text

NOT_REPORTED = "not reported"
# Header cells have a fixed height on the page; longer values are cut here (the Run Details
# page prints them in full).
MAX_VALUE_CHARS = 64
# What one header column holds at its font size (html.py: 46 mm high, a quarter of the width):
COLUMN_LINES = 15
KEY_CHARS_PER_LINE = 12
VALUE_CHARS_PER_LINE = 22


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _val(v) -> str:
    return NOT_REPORTED if v in (None, "", ()) else str(v)


def spec_line(run: RunData) -> str:
    if run.manifest.spec.startswith("RWSW"):
        return f"Real World Storage Workload Performance Test Specification — {run.manifest.spec}"
    return f"Solid State Storage Performance Test Specification — {run.manifest.spec}"


def device_line(run: RunData) -> str:
    """Vendor and model for the page header (one line: the target path stands in when the
    device does not report a model; the Device Under Test column has the full target)."""
    facts = run.manifest.target.get("facts", {})
    name = " ".join(x for x in (facts.get("vendor"), facts.get("model")) if x)
    if name:
        return _cut(name, 48)
    return _cut(str(run.manifest.target.get("path") or run.manifest.target.get("spec")), 32) + " (model not reported)"


def test_platform(run: RunData) -> HeaderColumn:
    p, v = run.manifest.platform, run.manifest.versions
    cpu = p.get("cpu") or NOT_REPORTED
    if p.get("cores"):
        cpu = f"{cpu} ({p['cores']} cores)"
    items = [
        ("Host", _val(p.get("host"))),
        ("CPU", cpu),
        ("Memory", _val(p.get("memory"))),
        ("OS", _val(p.get("os"))),
        ("Kernel", _val(p.get("kernel"))),
        ("Test software", f"iolab {_val(v.get('iolab'))}"),
        ("IO engine", _val(v.get("engine"))),
    ]
    return fit_column("Test Platform", items)


def device_under_test(run: RunData) -> HeaderColumn:
    m = run.manifest
    t, facts = m.target, m.target.get("facts", {})
    cap = t.get("capacity")
    tested = t.get("tested_capacity")
    capacity = f"{cap / 1e9:,.3f} GB" if cap else NOT_REPORTED
    if tested and cap and tested != cap:
        capacity += f" ({tested / 1e9:,.3f} GB tested)"
    sectors = NOT_REPORTED
    if facts.get("logical_sector"):
        sectors = f"{facts['logical_sector']} B logical / {facts.get('physical_sector') or '?'} B physical"
    media = {True: "rotational (HDD)", False: "solid state", None: NOT_REPORTED}[facts.get("rotational")]
    items = [
        ("Target", f"{t.get('spec')} ({t.get('kind')})"),
        ("Vendor / model", device_line(run)),
        ("Serial", _val(facts.get("serial"))),
        ("Firmware", _val(facts.get("firmware"))),
        ("Capacity", capacity),
        ("Interface", _val(facts.get("interface"))),
        ("Sectors / media", f"{sectors}; {media}"),
        ("Purge", purge_text(run)),
        ("Write cache", _val(m.write_cache or facts.get("write_cache"))),
    ]
    return fit_column("Device Under Test", items)


def purge_text(run: RunData) -> str:
    purges = run.manifest.purges
    if not purges:
        return "none recorded"
    methods = sorted({p["method"] for p in purges})
    failed = [p for p in purges if not p.get("ok")]
    text = ", ".join(methods)
    return text + (f" — FAILED in {len(failed)} of {len(purges)}" if failed else " — ok")


def steady_text(run: RunData, short: bool = False) -> str:
    """The 'SS rounds' entry: the window of each phase and whether steady state was reached."""
    parts = []
    for ph in run.phases:
        if short:
            parts.append(f"{rounds_text(ph.window).replace('rounds ', '')} "
                         + {True: "SS", False: "SS NOT ACHIEVED", None: "SS n/a"}[ph.steady])
            continue
        state = {True: "steady state reached", False: "STEADY STATE NOT ACHIEVED", None: "steady state not evaluated"}[ph.steady]
        if run.manifest.test == "wsat":
            state = "for information: " + {True: "steady", False: "not steady", None: "not evaluated"}[ph.steady]
        name = f"{ph.phase.name}: " if len(run.phases) > 1 else ""
        if len(run.phases) > 1:
            state = {True: "SS", False: "SS NOT ACHIEVED", None: "SS n/a"}[ph.steady]
        parts.append(f"{name}{rounds_text(ph.window)} ({state})")
    return "; ".join(parts) or "no complete round"


def preconditioning_text(run: RunData) -> str:
    if not run.preconditioning:
        plan_pc = [pc for ph in run.manifest.plan.get("phases", []) for pc in ph.get("precondition", [])]
        return "none (starts at FOB after purge)" if not plan_pc else "planned, not stored (run incomplete)"
    parts = []
    for c in run.preconditioning:
        w = c.workload
        bs = w["streams"][0]["block_size"]
        access = w["streams"][0]["access"].upper()
        parts.append(f"{access} {kib_label(bs)} W, TC{w['threads']}×QD{w['queue_depth']}, {c.write_bytes / 1e9:,.3f} GB written")
    unique = list(dict.fromkeys(parts))
    return "; ".join(unique) if len(unique) == 1 or len(unique) == len(parts) else "; ".join(parts)


def steady_rule_text(run: RunData) -> str:
    """The rule in a header cell's room; the Run Details page prints the manifest's full wording."""
    rule = SteadyRule(strict=bool(run.manifest.profile.get("strict_steady")))
    cmp = "<" if rule.strict else "≤"
    return (f"range {cmp} {rule.range_limit:.0%}, fit excursion {cmp} {rule.slope_limit:.0%} of average "
            f"over {rule.window} rounds")


def set_up_parameters(run: RunData) -> HeaderColumn:
    m = run.manifest
    prm = m.parameters
    items = [
        ("Data pattern", _val(prm.get("Data pattern"))),
        ("Active range", _val(prm.get("Active range"))),
        ("PC1 (WIPC)", preconditioning_text(run)),
        ("PC2 (WDPC)", prm.get("PC2 (WDPC)") or f"the test loop, {_val(prm.get('Outstanding IO'))}"),
        ("SS rounds", steady_text(run)),
        ("SS rule", steady_rule_text(run)),
    ]
    return fit_column("Set Up Parameters", items)


def test_parameters(run: RunData) -> HeaderColumn:
    m = run.manifest
    prm = m.parameters
    shown = ("Data pattern", "Active range", "Preconditioning", "PC2 (WDPC)")  # already in Set Up Parameters
    items = [(k, str(v)) for k, v in prm.items() if k not in shown]
    rounds = [str(len(ph.rounds)) for ph in run.phases]
    items.append(("Rounds measured", " / ".join(rounds) if rounds else "0"))
    return fit_column("Test Parameters", items)


def header_columns(run: RunData) -> tuple[HeaderColumn, ...]:
    return (test_platform(run), device_under_test(run), set_up_parameters(run), test_parameters(run))


def banners(run: RunData) -> tuple[str, ...]:
    """Printed on every page, so no page can be read without its caveats."""
    m = run.manifest
    out = []
    if not m.compliant:
        label = "non-compliant (quick profile)" if run.quick else "non-compliant"
        out.append(f"{label}: {'; '.join(m.noncompliance)}")
    if m.state != "complete":
        what = {"running": "RUN IN PROGRESS", "interrupted": "INCOMPLETE RUN (interrupted)",
                "failed": "INCOMPLETE RUN (failed)"}.get(m.state, f"INCOMPLETE RUN ({m.state})")
        rounds = sum(len(ph.rounds) for ph in run.phases)
        out.append(f"{what}: only the {rounds} complete round(s) measured are shown"
                   + (f" — {m.error}" if m.error else ""))
    return tuple(_cut(b) for b in out)


def fit_column(title: str, items: list[tuple[str, str]]) -> HeaderColumn:
    """A header column whose text fits its fixed box: the longest values are shortened (with
    "…") until the estimated line count fits, so nothing is clipped mid-line on the page."""
    def lines(k: str, v: str) -> int:
        return max(-(-len(k) // KEY_CHARS_PER_LINE), -(-len(v) // VALUE_CHARS_PER_LINE), 1)

    items = [(k, _short(v)) for k, v in items]
    while sum(lines(k, v) for k, v in items) > COLUMN_LINES:
        i = max(range(len(items)), key=lambda j: len(items[j][1]))
        k, v = items[i]
        if len(v) <= VALUE_CHARS_PER_LINE:
            break  # only one-line values left: the column has too many items, not too much text
        items[i] = (k, v[: len(v) - VALUE_CHARS_PER_LINE - 1].rstrip() + "…")
    return HeaderColumn(title, tuple(items))


def _cut(text: str, n: int = 170) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
