"""What every page repeats (the PTS report format): the page header fields, the four
header columns, and the banners (non-compliant, incomplete). Built from the manifest and the
stored phases only; a fact the run did not record is printed as such, never guessed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.steady import (
    STEADY_NOT_APPLICABLE,
    SteadyRule,
)
from iolab.core.units import counted, eng, kib_label
from iolab.figures.audit import Audit, marker
from iolab.figures.phaseend import NOT_APPLICABLE
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import textwidth
from iolab.pages.report.model import HeaderColumn
from iolab.pages.report.rundata import RunData
from iolab.pages.report.steadywords import SHORT_STEADY_WORDS, STEADY_WORDS, phase_steady_words  # noqa: F401 (read here by pages)
from iolab.pages.runwords import INFO_STEADY_WORDS, SHORT_INFO_STEADY_WORDS, SPEC_HEADINGS, rounds_text
from iolab.targets.model import copy_text, hosts_capacity_text, recorded_drive_bytes

NOT_REPORTED = "not reported"
# What one header column holds (html.py: .columns 46 mm high, a quarter of the width). Its table
# has 39.7 mm below the column's title; a row takes its lines of 5.9 pt × 1.22 line height at the
# column's font scale plus 0.3 mm of cell padding at any scale (the PDF's layout, pdflayout.columns,
# places them so: 13 one-line rows fit at full size, 17 at MIN_SCALE with a line to spare), and its
# text wraps in cells as wide as KEY_MM and VALUE_MM (four columns across the page). A column with more
# text is printed smaller, down to MIN_SCALE; what still does not fit is named, not cut, and
# printed in full on the page the column points to.
TABLE_MM = 39.7
FONT_PT = 5.9
LINE_MM = FONT_PT * 1.22 * 25.4 / 72
ROW_PAD_MM = 0.3
KEY_MM, VALUE_MM = 14.88, 27.07  # the text width of a key cell (bold) and of a value cell
MIN_SCALE = 0.75
RUN_DETAILS = "Run Details and Notes"
# Rows a column keeps whole when others give way to a pointer: the page header may cut the device,
# so the front page is where a long model is read whole (a quick copy's was sent to Run Details).
FRONT_PAGE_ROWS = ("Vendor / model",)
BANNER_LINE_CHARS = 120  # one line of a banner (html.py .banner: 6.8 pt bold across the page)
BANNER_LINES = 3  # what the banner strip holds at its usual 11 mm (more banners make it taller: pdflayout.banners)


def _val(v: object) -> str:
    return NOT_REPORTED if v in (None, "", ()) else str(v)


def spec_line(run: RunData, heading: str | None = None) -> str:
    """`heading`: the test's declared one (None: the run's test is not registered here)."""
    if heading is None:
        heading = SPEC_HEADINGS.get(run.manifest.spec.split(" ", 1)[0])
    return f"{heading} — {run.manifest.spec}" if heading else run.manifest.spec


def device_line(run: RunData) -> str:
    """Vendor and model, whole (the target path stands in when the device does not report a
    model): the Device Under Test column's row, which wraps, and the page header's device, which
    pdflayout.head_meta fits to its line (cut at 48 characters here, a simulated SLC drive's model
    lost its over-provisioning figures, room on the line or not)."""
    facts = run.manifest.target.get("facts", {})
    name = " ".join(x for x in (facts.get("vendor"), facts.get("model")) if x)
    if name:
        return name
    return f"{run.manifest.target.get('path') or run.manifest.target.get('spec')} (model not reported)"


def platform_items(run: RunData) -> list[tuple[str, str]]:
    p, v = run.manifest.platform, run.manifest.versions
    cpu = p.get("cpu") or NOT_REPORTED
    if p.get("cores"):
        cpu = f"{cpu} ({p['cores']} cores)"
    return [
        ("Host", _val(p.get("host"))),
        ("CPU", cpu),
        ("Memory", _val(p.get("memory"))),
        ("OS", _val(p.get("os"))),
        ("Kernel", _val(p.get("kernel"))),
        ("Test software", f"iolab {_val(v.get('iolab'))}"),
        ("IO engine", _val(v.get("engine")) + (f", ioengine={v['ioengine']}" if v.get("ioengine") else "")),
    ]


def device_items(run: RunData) -> list[tuple[str, str]]:
    m = run.manifest
    t, facts = m.target, m.target.get("facts", {})
    sectors = NOT_REPORTED
    if facts.get("logical_sector"):
        sectors = f"{facts['logical_sector']} B logical / {facts.get('physical_sector') or '?'} B physical"
    media = {True: "rotational (HDD)", False: "solid state", None: NOT_REPORTED}[facts.get("rotational")]
    if facts.get("backing_device"):
        # a file's sectors and media are its filesystem's block device's (targets/facts.py): a file
        # on a VM's virtio disk read "rotational (HDD)" as if the file were a disk
        media += f"; of {facts['backing_device']}, the block device under the file"
    return [
        ("Target", f"{t.get('spec')} ({t.get('kind')})"),
        ("Vendor / model", device_line(run)),
        ("Serial", _val(facts.get("serial"))),
        ("Firmware", _val(facts.get("firmware"))),
        ("Capacity", capacity_text(run)),
        ("Interface", _val(facts.get("interface"))),
        ("Sectors / media", f"{sectors}; {media}"),
        ("Purge", purge_text(run)),
        ("Write cache", _val(m.write_cache or facts.get("write_cache"))),
        ("Write amplification", waf_text(run)),
    ]


def waf_text(run: RunData) -> str:
    """Measured flash writes ÷ host writes over the whole run (the simulator counts both; a real
    drive's figure needs its SMART counters, which are not read yet)."""
    w = run.write_amplification()
    if w is None:
        return NOT_REPORTED
    waf, host = w
    # "preconditioning included" only where there was one: WSAT starts at FOB and has none
    scope = "the whole run, preconditioning included" if run.preconditioning else "the whole run"
    return f"{waf:.2f} measured over {eng(host, 'B')} host writes ({scope})"


def capacity_text(run: RunData) -> str:
    t = run.manifest.target
    cap, tested = t.get("capacity"), t.get("tested_capacity")
    if not cap:
        return NOT_REPORTED
    hosts = hosts_capacity_text(t, eng, why=False)  # the why is Run Details' note (show's target line)
    if hosts is not None:  # on other hosts: `capacity` is the ?size= tested; the drives' is theirs to say
        return f"{hosts}; {eng(tested or cap, 'B')} tested"
    # a device tested in its first part (?size=) is still the size it is
    drive = recorded_drive_bytes(t)
    # the drive's spec is the Target row's preset and Run Details' note: the column names its size
    # (with the spec too, the default quick run's Device Under Test column overflowed)
    of = f" ({copy_text(t, named=False)})" if copy_text(t) else ""
    return eng(drive, "B") + (f" ({eng(tested, 'B')} tested)" if tested and tested != drive else "") + of


def purge_text(run: RunData) -> str:
    purges = run.manifest.purges
    if not purges:
        return "none recorded"
    methods = sorted({p["method"] for p in purges})
    failed = [p for p in purges if not p.get("ok")]
    text = ", ".join(methods)
    return text + (f" — FAILED in {len(failed)} of {len(purges)}" if failed else " — ok")


def steady_words(run: RunData, ph: PhaseSummary, short: bool) -> str:
    """A phase's state in the header: for information when the phase runs to its budget (the
    rule `banners` applies: no steady-state banner for such a phase), else its verdict."""
    state = ph.steady_state
    if state != STEADY_NOT_APPLICABLE and run.runs_to_budget(ph):
        return (SHORT_INFO_STEADY_WORDS if short else INFO_STEADY_WORDS)[state]
    return phase_steady_words(ph, short)


def steady_text(run: RunData, short: bool = False) -> str:
    """The 'SS rounds' entry: the window of each phase and whether steady state was reached."""
    parts = []
    for ph in run.phases:
        if short:
            parts.append(f"{rounds_text(ph.window).replace('rounds ', '')} {steady_words(run, ph, True)}")
        elif len(run.phases) > 1:
            parts.append(f"{ph.phase.name}: {rounds_text(ph.window)} ({steady_words(run, ph, True)})")
        else:
            parts.append(f"{rounds_text(ph.window)} ({steady_words(run, ph, False)})")
    return "; ".join(parts) or "no complete round"


def workload_independent(workload: dict[str, Any]) -> bool:
    """Whether a preconditioning workload is WIPC, by what it runs: sequential writes only (the
    PTS fill, SEQ 128 KiB W of 2× the capacity, whatever the test then measures). Any other, a
    test's own random writes (QoS's RND 4 KiB W), is workload-dependent (WDPC)."""
    streams = (workload or {}).get("streams") or ()
    return bool(streams) and all(s.get("access") == "seq" and s.get("op") == "write" for s in streams)


def preconditioning_text(run: RunData, wipc: bool | None = None) -> str:
    """The stored preconditioning cells (`wipc`: only the workload-independent ones, or only the
    others; None: all) in a header cell; "" when the run has none of that kind."""
    if not run.preconditioning:
        plan_pc = [pc for ph in run.manifest.plan.get("phases", []) for pc in ph.get("precondition", [])]
        # the plan records each by its workload's name (suites.wipc names the PTS fill "WIPC …")
        kind = [pc for pc in plan_pc if wipc is None or str(pc).startswith("WIPC") == wipc]
        if kind:
            return "planned, not stored (run incomplete)"
        if plan_pc or wipc is False:
            return ""
        # FOB only where a purge put the drive there (--purge none starts from whatever it held)
        why = run.phases[0].not_from_fob if run.phases else ""
        return f"none ({why})" if why else "none (starts at FOB after purge)"
    parts = []
    for c in run.preconditioning:
        if wipc is not None and workload_independent(c.workload) != wipc:
            continue
        w = c.workload
        bs = w["streams"][0]["block_size"]
        access = w["streams"][0]["access"].upper()
        parts.append(
            f"{access} {kib_label(bs)} W, TC{w['threads']}×QD{w['queue_depth']}, {eng(c.write_bytes, 'B')} written"
        )
    unique = list(dict.fromkeys(parts))
    return "; ".join(unique) if len(unique) == 1 or len(unique) == len(parts) else "; ".join(parts)


def steady_rule_text(run: RunData) -> str:
    """The rule in a header cell's room; the Run Details page prints the manifest's full wording
    (a run none of whose phases tracks steady state: that the rule does not apply)."""
    if run.manifest.steady_rule == NOT_APPLICABLE:
        return "not applicable (no phase tracks steady state)"
    rule = SteadyRule.of_profile(run.manifest.profile)
    cmp = "<" if rule.strict else "≤"
    return (
        f"range {cmp} {rule.range_limit:.0%}, fit excursion {cmp} {rule.slope_limit:.0%} of average "
        f"over {counted(rule.window, 'round')}"
    )


def audit_text(run: RunData) -> str:
    """The self-audit in a header cell: how many invariants held, and which failed."""
    a = run.audit
    if a is None:
        return NOT_REPORTED
    c = a.counts()
    if a.passed:
        return f"passed ({c['pass']} invariants held, {c['n/a']} not applicable)"
    return f"FAILED: {', '.join(r.name for r in a.failed)} (the figures it touches are marked)"


def audit_detail(a: Audit) -> str:
    """The self-audit on the Run Details page: each failed invariant with its reason, the others
    by name (`iolab audit RUN` prints every reason)."""
    failed = "; ".join(f"{r.name} FAILED: {r.reason} (marks {', '.join(r.touches)})" for r in a.failed)
    held = ", ".join(r.name for r in a.results if r.status == "pass") or "none"
    na = ", ".join(r.name for r in a.results if r.status == "n/a")
    return (f"{failed}. " if failed else "") + f"Held: {held}" + (f"; not applicable: {na}" if na else "") + "."


def setup_items(run: RunData, short: bool = False) -> list[tuple[str, str]]:
    m = run.manifest
    prm = m.parameters
    steady_marks = marker(run.audit.marks(())) if run.audit else ""
    return [
        ("Data pattern", _val(prm.get("Data pattern"))),
        ("Active range", _val(prm.get("Active range"))),
        # each preconditioning under the name of what it ran (a QoS run's RND 4 KiB W is no WIPC)
        ("PC1 (WIPC)", preconditioning_text(run, wipc=True) or "none"),
        ("PC2 (WDPC)", prm.get("PC2 (WDPC)") or preconditioning_text(run, wipc=False) or _test_loop(prm)),
        ("SS rounds", steady_text(run, short) + (f" {steady_marks}" if steady_marks else "")),
        ("SS rule", steady_rule_text(run)),
        ("Audit", audit_text(run)),
    ]


def _test_loop(prm: dict[str, Any]) -> str:
    """The workload-dependent preconditioning that is the test's own loop: DIRTH's is its PC
    phase (its "PC" parameter), which read "the test loop, not reported" for want of one
    outstanding IO."""
    if prm.get("PC"):
        return f"the PC phase: {prm['PC']}"
    return f"the test loop, {prm['Outstanding IO']}" if prm.get("Outstanding IO") else "the test loop"


def parameter_items(run: RunData) -> list[tuple[str, str]]:
    m = run.manifest
    prm = m.parameters
    shown = ("Data pattern", "Active range", "Preconditioning", "PC2 (WDPC)")  # already in Set Up Parameters
    # the outstanding IO as run where the engine raised it (the plan's alone labelled the run with it)
    items = [
        (k, run.outstanding_as_run(str(v)) if k == "Outstanding IO" else str(v))
        for k, v in prm.items()
        if k not in shown
    ]
    # each phase's count named by its phase: Throughput's "5 / 10" read as 5 of a 10-round limit
    rounds = [str(len(ph.rounds)) for ph in run.phases]
    if len(rounds) > 1:
        rounds = [f"{n} ({ph.phase.name})" for n, ph in zip(rounds, run.phases)]
    items.append(("Rounds measured", ", ".join(rounds) if rounds else "0"))
    return items


COLUMNS = (
    ("Test Platform", platform_items),
    ("Device Under Test", device_items),
    ("Set Up Parameters", setup_items),
    ("Test Parameters", parameter_items),
)


def header_columns(run: RunData) -> tuple[HeaderColumn, ...]:
    return tuple(fit_column(title, items(run)) for title, items in COLUMNS)


def noncompliant_label(runs: Sequence[RunData]) -> str:
    """The banner's word for these non-compliant runs: "(quick profile)" only when it is true of
    every one of them, as a banner naming several drives would otherwise lend it to all."""
    return "non-compliant (quick profile)" if runs and all(r.quick for r in runs) else "non-compliant"


def banners(run: RunData) -> tuple[str, ...]:
    """Printed on every page, so no page can be read without its caveats."""
    m = run.manifest
    out = []
    if not m.compliant:
        label = noncompliant_label([run])
        out.append((f"{label}: {'; '.join(m.noncompliance)}", label, RUN_DETAILS))
    if m.state != "complete":
        what = {
            "running": "RUN IN PROGRESS",
            "interrupted": "INCOMPLETE RUN (interrupted)",
            "failed": "INCOMPLETE RUN (failed)",
        }.get(m.state, f"INCOMPLETE RUN ({m.state})")
        rounds = sum(len(ph.rounds) for ph in run.phases)
        shown = f"{what}: only the {counted(rounds, 'complete round')} measured {'is' if rounds == 1 else 'are'} shown"
        out.append((shown + (f" — {m.error}" if m.error else ""), shown, RUN_DETAILS))
    out += [c.item() for c in measure_caveats(run)]
    return fit_banners(out)


@dataclass(frozen=True)
class Caveat:
    """One of the caveats on a run's figures that every page carries (steady state not achieved
    or not evaluated, a failed self-audit): `head` says what ("AUDIT FAILED"), `parts` where in
    the run (each phase with its rounds; each failed invariant with the figures it marks), `why`
    what the page printing it in full adds. A comparison prints each with its drive's name
    before each part (compare_pages.document)."""

    head: str
    parts: tuple[str, ...]
    why: str = ""
    colon: bool = False  # "HEAD: part; part" (else "HEAD (part; part)")
    # the phase each part is of, for a steady-state caveat (() for one of the whole run): a figure
    # that names its phase carries only that phase's (figure_caveats)
    phases: tuple[str, ...] = ()

    def text(self, parts: tuple[str, ...] | None = None) -> str:
        where = "; ".join(self.parts if parts is None else parts)
        return f"{self.head}: {where}" if self.colon else f"{self.head} ({where})"

    def item(self, page: str = RUN_DETAILS) -> tuple[str, str, str]:
        """(full text, short form, page that prints the full text), as fit_banners takes them."""
        short = self.text() if self.colon else self.head
        return (self.text() + (f" — {self.why}" if self.why else ""), short, page)


def _unsteady_text(ph: PhaseSummary) -> str:
    """A phase in the banner: its window, and whether that window passed the rule's numbers and
    was refused (it read like one whose range or slope had failed)."""
    refused = ph.not_accepted()
    # why in full on the pages that have room (the window's table, the note under its figure)
    said = ", which pass the rule's numbers but were not accepted" if refused is not None else ""
    return f"{ph.phase.name}: {rounds_text(ph.window)}{said}"


def measure_caveats(run: RunData) -> list[Caveat]:
    """The caveats on how the run's figures were measured: steady state not achieved, or not
    evaluated, and a failed self-audit."""
    out = []
    # the set-up column says so on the first page only (the compact head after it): a banner on each
    unsteady = [ph for ph in run.phases if ph.steady is False and not run.runs_to_budget(ph)]
    # a window whose numbers passed and was refused is said as `show` says it (its own caveat, so
    # a comparison's figure mark and the fleet's say it too): "NOT ACHIEVED" read as a failed window
    refused = [ph for ph in unsteady if ph.not_accepted() is not None]
    if failed := [ph for ph in unsteady if ph not in refused]:
        out.append(_phases_caveat("STEADY STATE NOT ACHIEVED", failed))
    if refused:
        out.append(_phases_caveat(NOT_ACCEPTED, refused))
    if unjudged := run.unjudged():
        # as prominent as a failed one: a window of 3 rounds is no steady state either
        window = SteadyRule.of_profile(run.manifest.profile).window
        parts = tuple(_unjudged_text(name, ph, window) for name, ph in unjudged)
        out.append(Caveat(NOT_EVALUATED, parts, phases=tuple(name for name, _ in unjudged)))
    if run.audit is not None and not run.audit.passed:
        names = ", ".join(r.name for r in run.audit.failed)
        touched = ", ".join(run.audit.touched())
        why = "; ".join(f"{r.name}: {r.reason}" for r in run.audit.failed)
        out.append(Caveat(AUDIT_FAILED, (f"{names} (marks: {touched})",), why, colon=True))
    return out


def _phases_caveat(head: str, phases: list[PhaseSummary]) -> Caveat:
    return Caveat(head, tuple(_unsteady_text(ph) for ph in phases), phases=tuple(ph.phase.name for ph in phases))


def figure_caveats(get: object, caveats: Sequence[Caveat]) -> list[Caveat]:
    """The steady-state caveats a figure carries: every one of the run's, but for a figure whose
    getter names the phase it is measured in (`phase`: Throughput's SEQ 1024KiB figures), only
    that phase's. A steady SEQ 1024KiB phase's MB/s were marked "STEADY STATE NOT ACHIEVED"
    because the SEQ 128KiB phase after it was not steady."""
    own = getattr(get, "phase", None)
    if not own:
        return list(caveats)
    out = []
    for c in caveats:
        if not c.phases:
            out.append(c)
        elif own in c.phases:
            parts = tuple(p for p, ph in zip(c.parts, c.phases) if ph == own)
            out.append(Caveat(c.head, parts, c.why, c.colon, (own,)))
    return out


def steady_caveats(run: RunData) -> list[Caveat]:
    """measure_caveats' caveats every figure of the run carries (not the audit's: only the figures
    it touches): the [a] of compare, show and run, a --json figure's caveats."""
    return [c for c in measure_caveats(run) if c.head != AUDIT_FAILED]


NOT_EVALUATED = "STEADY STATE NOT EVALUATED"
NOT_ACCEPTED = "STEADY STATE NOT ACCEPTED"
AUDIT_FAILED = "AUDIT FAILED"


def not_evaluated_text(run: RunData) -> str | None:
    """The banner of a run whose phases track steady state but were never judged (RunData.unjudged),
    each phase with its rounds; None when every such phase was judged."""
    return next((c.text() for c in measure_caveats(run) if c.head == NOT_EVALUATED), None)


def _unjudged_text(name: str, ph: PhaseSummary | None, window: int) -> str:
    """'main: 3 rounds, fewer than the 5-round window'; 'main: no round stored'."""
    if ph is None or not ph.rounds:
        return f"{name}: no round stored"
    short = f", fewer than the {window}-round window" if len(ph.rounds) < window else ""
    return f"{name}: {counted(len(ph.rounds), 'round')}{short}"


def fit_banners(items: list[tuple[str, str, str]]) -> tuple[str, ...]:
    """items: (full text, short form, page that prints the full text). Every banner is on every
    page: in full while the banner strip's usual height holds them all, else the longest ones in
    their short form naming that page; never a sentence cut off (the strip grows to what is left)."""
    texts = [full for full, _, _ in items]

    def lines() -> float:  # a banner's own padding costs about half a line
        return sum(-(-len(t) // BANNER_LINE_CHARS) + 0.5 for t in texts)

    while lines() > BANNER_LINES:
        full = [i for i, (f, short, _) in enumerate(items) if texts[i] == f and short != f]
        if not full:
            break
        i = max(full, key=lambda j: len(texts[j]))
        texts[i] = f"{items[i][1]} — in full on the {items[i][2]} page"
    return tuple(texts)


def fit_column(title: str, items: list[tuple[str, str]], full_on: str = RUN_DETAILS) -> HeaderColumn:
    """A header column whose text fits its fixed box: printed smaller when needed (down to
    MIN_SCALE); if it still does not fit, the values that take the most lines are replaced by a
    pointer to the page `full_on`, which prints them in full, and if the rows are still too
    many, the last ones give way to one row saying how many more that page prints. No value is
    ever cut mid-text, and no row falls below the box."""
    items = [(k, " ".join(str(v).split())) for k, v in items]
    for scale in [1.0 - 0.05 * i for i in range(int(round((1.0 - MIN_SCALE) / 0.05)) + 1)]:
        if _fits(items, scale):
            return HeaderColumn(title, tuple(items), scale)
    pointer = f"(in full on the {full_on} page)"

    def saved(i: int) -> int:  # lines the pointer saves in row i
        k, v = items[i]
        if k in FRONT_PAGE_ROWS:
            return 0
        return _lines(k, v, MIN_SCALE) - _lines(k, pointer, MIN_SCALE)

    while not _fits(items, MIN_SCALE):
        i = max(range(len(items)), key=lambda j: (saved(j), len(items[j][1])))
        if saved(i) <= 0:
            break  # no value is longer than its pointer: too many rows
        items[i] = (items[i][0], pointer)
    kept = len(items)
    while kept > 0 and not _fits(items[:kept] + [_more(len(items) - kept, full_on)], MIN_SCALE):
        kept -= 1
    if kept < len(items):
        items = items[:kept] + [_more(len(items) - kept, full_on)]
    return HeaderColumn(title, tuple(items), MIN_SCALE)


def _lines(key: str, value: str, scale: float) -> int:
    """The printed lines of one row: its key or its value, whichever wraps to more."""
    size = FONT_PT * scale
    return max(textwidth.lines(key, KEY_MM, size, bold=True), textwidth.lines(value, VALUE_MM, size))


def _fits(items: list[tuple[str, str]], scale: float) -> bool:
    """The rows fit the column's table at this font scale, with one line to spare: the browser
    breaks a few words where textwidth does not expect it (after "." in "A.11", for one)."""
    used = sum(_lines(k, v, scale) * LINE_MM * scale + ROW_PAD_MM for k, v in items)
    return used + LINE_MM * scale <= TABLE_MM


def _more(n: int, full_on: str) -> tuple[str, str]:
    return ("…", f"{n} more, on the {full_on} page")
