"""One report for a sequence of runs on one target (`iolab run pts`, `iolab run characterise`,
or `iolab report --sequence RUN...` later): a summary document (each test's state, compliance,
steady state and key figures, with links to each run's own report and its raw data), then
every run's own document in the order the runs started. Built from the run directories only;
which pages and figures a test has is handed in by api/reports.py (pages/report/ never asks the registry)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab import __version__
from iolab.core.errors import IolabError
from iolab.core.profilewords import scaled_text
from iolab.core.units import counted, num
from iolab.figures.compare import NOT_MEASURED, KeyMetric
from iolab.figures.crosscheck import MARGIN, Disagreement, Figure, disagreements
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import header, write_document
from iolab.pages.report.model import Document, HeaderColumn, Link, Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_selftest import capture_key, is_selftest
from iolab.pages.report.sections import table_pages
from iolab.pages.runwords import rounds_text
from iolab.store.manifest import manifest_run_key
from iolab.targets.sim_facts import drive_of_spec

SUMMARY = "Sequence Summary"


@dataclass(frozen=True)
class SequenceMember:
    """One run of the sequence as the summary shows it."""

    run: RunData
    label: str  # the test's short name
    figures: tuple[KeyMetric[list[PhaseSummary]], ...]  # its key figures (none: the test declares none)
    document: Document  # the run's own report, as `iolab report RUN` builds it


def order_runs(runs: Sequence[RunData]) -> list[RunData]:
    """The runs in the order they ran; all on one target (a sequence tests one drive; a quick
    one on a simulated drive, each test on its own copy of it). A simulated drive's runs with
    another seed are runs of the same drive, as `iolab history` takes them (sim_facts.drive_of_spec)."""
    targets = {drive_of_spec(str(r.manifest.target.get("copy_of") or r.manifest.target.get("spec"))) for r in runs}
    if len(targets) > 1:
        listed = "; ".join(f"{r.manifest.run_id} on {r.manifest.target.get('spec')}" for r in runs)
        raise IolabError(
            f"a sequence report covers runs on one target, these are on {len(targets)}: {listed}. "
            "Compare drives with `iolab compare` instead."
        )
    # A run is its uid, not its id: runs started in one second in two runs directories share an
    # id and are two runs; a copy of a run's directory has its uid and is the same run.
    seen: dict[str, RunData] = {}
    twice = []
    for r in runs:
        first = seen.setdefault(manifest_run_key(r.manifest), r)
        if first is not r:
            twice.append(f"{r.manifest.run_id} ({first.dir} and {r.dir})")
    if twice:
        raise IolabError(
            f"a sequence report takes each run once; given twice: {'; '.join(twice)}. "
            "A copy of a run's directory is the same run."
        )
    return sorted(runs, key=lambda r: r.manifest.started)


def devices(runs: Sequence[RunData]) -> list[list[RunData]]:
    """The runs grouped by the device they ran on (the target as the run stored it), in the order
    first used: a quick sequence on a simulated drive runs each test on its own copy, and a test
    whose footprint needs more (Consistency) on a larger one than the rest."""
    out: dict[str, list[RunData]] = {}
    for r in runs:
        out.setdefault(str(r.manifest.target.get("spec")), []).append(r)
    return list(out.values())


def _device_name(groups: list[list[RunData]]) -> str:
    """The page header's device: the one device, or the drive the copies are of and how many."""
    first = groups[0][0]
    if len(groups) == 1:
        return header.device_line(first)
    of = first.manifest.target.get("copy_of")
    # the count first: the PDF's page header cuts a long device name at its end
    return f"{len(groups)} copies of {of}" if of else f"{len(groups)} devices (the Devices table)"


def _device_items(groups: list[list[RunData]]) -> list[tuple[str, str]]:
    """The Device Under Test column: each item the devices share once, each that differs per
    device (D1, D2, ... as the Devices table names them)."""
    per = [[(k, v) for k, v in header.device_items(g[0]) if k != "Write amplification"] for g in groups]
    out = []
    for i, (k, v) in enumerate(per[0]):
        values = [items[i][1] for items in per]
        same = len(set(values)) == 1
        out.append((k, v if same else "; ".join(f"D{j}: {x}" for j, x in enumerate(values, 1))))
    return out


def write_sequence_report(
    name: str, heading: str | None, members: Sequence[SequenceMember], out_dir: Path
) -> list[Path]:
    """`name`: the sequence ("" for runs of no one sequence); `heading`: its page-header line.
    Writes one HTML and one PDF; returns both paths."""
    cover = summary_document(name, heading, members)
    stem = sequence_stem(name, [m.run.manifest.run_id for m in members], [m.run.manifest.test for m in members])
    return write_document(
        [cover, *selftest_once(members)], Path(out_dir), stem, title=f"{cover.test_name} — {cover.device}"
    )


def sequence_stem(name: str, run_ids: Sequence[str], tests: Sequence[str] = ()) -> str:
    """The report's file name: 'sequence-characterise-7tests-<hash of the run ids>' ("1test" for
    one: the count and its noun without a space, as these names have always been); runs of a
    test given more than once (`tests`, each run's) 'sequence-pts-2runs-1test-<hash>'."""
    digest = hashlib.sha1("\n".join(run_ids).encode()).hexdigest()[:8]
    count = runs_of_tests(tests or run_ids).replace(" of ", "-").replace(" ", "")
    return f"sequence-{name or 'runs'}-{count}-{digest}"


def runs_of_tests(tests: Sequence[str]) -> str:
    """How many runs of how many tests (each run's test): '2 tests' for two runs of two, '2 runs
    of 1 test' for the same test twice (a title of '2 tests' listing 'Latency, Latency')."""
    n, distinct = len(tests), len(set(tests))
    return counted(n, "test") if n == distinct else f"{counted(n, 'run')} of {counted(distinct, 'test')}"


def repeat_marks(tests: Sequence[str]) -> list[str]:
    """What tells the runs of a test given more than once apart, by the order they ran: ' (run 1)',
    ' (run 2)' after its name; '' for a test run once."""
    seen: dict[str, int] = {}
    out = []
    for t in tests:
        seen[t] = seen.get(t, 0) + 1
        out.append(f" (run {seen[t]})" if tests.count(t) > 1 else "")
    return out


def selftest_once(members: Sequence[SequenceMember]) -> list[Document]:
    """The runs' documents, the Self-Test pages of a capture only after the first run that
    replayed it: every RWSW test of a sequence replays the same capture, and its pages would
    otherwise repeat once per test."""
    shown: set[bytes | None] = set()
    docs = []
    for m in members:
        pages = m.document.pages
        if any(is_selftest(p) for p in pages):
            key = capture_key(m.run)
            if key in shown:
                pages = tuple(p for p in pages if not is_selftest(p))
            shown.add(key)
        docs.append(dataclasses.replace(m.document, pages=pages))
    return docs


def summary_document(name: str, heading: str | None, members: Sequence[SequenceMember]) -> Document:
    runs = [m.run for m in members]
    first = runs[0]
    banners = []
    noncompliant = [r for r in runs if not r.manifest.compliant]
    if noncompliant:
        label = header.noncompliant_label(noncompliant)
        banners.append(
            (
                f"{label}: {len(noncompliant)} of {len(runs)} runs "
                f"({', '.join(m.label for m in members if not m.run.manifest.compliant)}); every page of "
                "each run says why",
                label,
                SUMMARY,
            )
        )
    # each run's own caveats on its figures (steady state not achieved, not accepted or not
    # evaluated, a failed self-audit): its pages carry them, and the key figures below, which a
    # reviewer takes from this page, stood without them
    caveats: dict[str, list[tuple[str, str]]] = {}
    for m in members:
        for c in header.measure_caveats(m.run):
            caveats.setdefault(c.head, []).append((m.label, "; ".join(c.parts)))
    for head, where in caveats.items():
        full = f"{head}: " + "; ".join(f"{label} ({parts})" for label, parts in where)
        # shortened, it names the runs and sends the reader to their own Run Details pages
        banners.append((full, f"{head}: {', '.join(label for label, _ in where)}", header.RUN_DETAILS))
    disagree = sequence_disagreements(members)  # both figures stand on the page: the reader is told they disagree
    for d in disagree:
        banners.append((f"TESTS DISAGREE: {d.text}", f"TESTS DISAGREE: {d.short}", SUMMARY))
    unfinished = [m for m in members if not m.run.complete]
    if unfinished:
        text = "INCOMPLETE SEQUENCE: " + "; ".join(f"{m.label} {m.run.manifest.state}" for m in unfinished)
        banners.append((text, "INCOMPLETE SEQUENCE", SUMMARY))
    return Document(
        title=f"{name or 'runs'} sequence — {first.label}",
        spec=header.spec_line(first, heading),
        test_name=f"{name} sequence ({runs_of_tests([r.manifest.test for r in runs])})"
        if name
        else f"Sequence of {counted(len(runs), 'run')}",
        started=min(r.manifest.started for r in runs),
        ended=max((r.manifest.ended or f"not finished ({r.manifest.state})") for r in runs),
        device=_device_name(devices(runs)),
        tested_by=", ".join(sorted({r.manifest.platform.get("tested_by") or "not given (--tested-by)" for r in runs})),
        columns=_columns(members),
        banners=header.fit_banners(banners),
        pages=tuple(summary_pages(members, disagree)),
        footer="runs " + ", ".join(r.manifest.run_id for r in runs) + f" · sequence report by iolab {__version__}",
    )


def sequence_disagreements(members: Sequence[SequenceMember]) -> list[Disagreement]:
    """A test's figure claiming a maximum below another's measured rate of it on one device."""
    groups = devices([m.run for m in members])
    device_of = {id(r): f"D{i}" if len(groups) > 1 else "" for i, g in enumerate(groups, 1) for r in g}
    return disagreements(
        [
            Figure(device_of[id(m.run)], m.label, k.name, k.unit, k.get(m.run.phases), k.rate_of, k.maximum)
            for m in members
            for k in m.figures
            if k.rate_of
        ]
    )


def _disagreements_table(found: Sequence[Disagreement]) -> tuple[Table, ...]:
    """The banner's full text: each maximum below another test's measured rate, and why it may be."""
    rows = tuple(
        (
            f"{d.most.test}: {d.most.name}",
            num(d.most.value),
            f"{d.more.test}: {d.more.name}",
            num(d.more.value),
            f"{d.ratio:.2f}x: {d.why}",
        )
        for d in found
    )
    return (
        (
            Table(
                "Tests that disagree: a maximum below another test's measured rate of the same workload",
                ("figure claiming the most", "value", "measured more", "value", "what it means"),
                rows,
                "Source: the key figures above; both are measured and printed as they are. A figure "
                f"counts as above the maximum when it is more than {MARGIN * 100:g} % above it.",
            ),
        )
        if rows
        else ()
    )


def _columns(members: Sequence[SequenceMember]) -> tuple[HeaderColumn, ...]:
    first = members[0].run
    device = _device_items(devices([m.run for m in members]))  # write amplification: per run, on its pages
    tests = [
        (m.label, f"{m.run.manifest.state}" + ("" if m.run.manifest.compliant else ", non-compliant")) for m in members
    ]
    prof = first.manifest.profile
    profile = [
        ("Profile", str(prof.get("name", header.NOT_REPORTED))),
        # each run's own (an RWSW sequence's is RWSW's, not the profile's PTS revision it printed)
        ("Spec", "; ".join(dict.fromkeys(m.run.manifest.spec for m in members)) or "—"),
        # each option that scaled the runs down, as given (a --capacity-limit is not --quick's)
        ("Scaled down", f"yes, by {scaled_text(prof)}: non-compliant" if scaled_text(prof) else "no"),
        ("Runs", str(len(members))),
        # each runs directory the runs are in, not the first run's alone
        ("Run directory", "; ".join(dict.fromkeys(str(m.run.dir.parent) for m in members))),
    ]
    return tuple(
        header.fit_column(title, items, SUMMARY)
        for title, items in (
            ("Test Platform", header.platform_items(first)),
            ("Device Under Test", device),
            ("Tests in this report", tests),
            ("Set Up", profile),
        )
    )


def _report_link(run: RunData) -> tuple[Link, ...]:
    """The run's own report, where it was written (`iolab run`, `iolab report RUN`)."""
    own = run.dir / "report" / f"{run.manifest.run_id}.html"
    return (Link("own report", run.href(f"report/{own.name}")),) if own.is_file() else ()


def _devices_table(members: Sequence[SequenceMember], groups: list[list[RunData]]) -> Table:
    """Which tests ran on which device (D1, D2, ...), each with its target, model and capacity."""
    label = {id(m.run): m.label for m in members}
    rows = tuple(
        (
            f"D{i}",
            f"{g[0].manifest.target.get('spec')} ({g[0].manifest.target.get('kind')})",
            header.device_line(g[0]),
            header.capacity_text(g[0]),
            ", ".join(label[id(r)] for r in g),
        )
        for i, g in enumerate(groups, 1)
    )
    return Table(
        "Devices the tests ran on: each key figure is its test's device's",
        ("device", "target", "vendor / model", "capacity", "tests"),
        rows,
        "Source: each run's manifest.json (target); a quick run on a simulated drive tests a copy of it, "
        "sized for the test.",
    )


def summary_pages(members: Sequence[SequenceMember], disagree: Sequence[Disagreement]) -> list[Page]:
    groups = devices([m.run for m in members])
    device_of = {id(r): f"D{i}" for i, g in enumerate(groups, 1) for r in g}
    several = len(groups) > 1  # one device: every figure is its, as the page header says
    runs, figs, links = [], [], []
    for m in members:
        r = m.run
        steady = (
            # in the run's own header's words: a phase run to its budget (WSAT, XSR) reports its
            # steady state for information, never as a plain "steady"
            "; ".join(
                f"{ph.phase.name}: {rounds_text(ph.window)} ({header.steady_words(r, ph, short=False)})"
                for ph in r.phases
            )
            or "nothing measured"
        )
        compliance = "yes" if r.manifest.compliant else "no: " + "; ".join(r.manifest.noncompliance)
        runs.append(
            (
                m.label,
                r.manifest.run_id,
                r.manifest.state + (f": {r.manifest.error}" if r.manifest.error else ""),
                compliance,
                steady,
            )
        )
        links += [Link(x.label, x.href, m.label) for x in (*_report_link(r), *r.store_links(), r.link("raw", "raw/"))]
        on = (device_of[id(r)],) if several else ()
        for k in m.figures:
            figs.append((m.label, k.short, k.text(k.get(r.phases), r.phases), *on))
        if not m.figures:
            figs.append((m.label, "no key figures declared for this test", "—", *on))
    src = (
        "Source: each run's manifest.json and results.db; the pages after this summary are each run's own report "
        "(the Self-Test pages of a capture follow the first run that replayed it)."
    )
    tables = [
        Table(
            "Runs of the sequence, in the order they ran",
            ("test", "run", "state", "compliant", "windows"),
            tuple(runs),
            src,
            tuple(links),
        ),
        Table(
            "Key figures per test (↑ higher / ↓ lower is better)",
            ("test", "key figure", "value", *(("device",) if several else ())),
            tuple(figs),
            "Source: each run's results.db, the figures `iolab compare` ranks drives by; "
            "'—' where the run measured none." + NOT_MEASURED,
        ),
        *_disagreements_table(disagree),
        *((_devices_table(members, groups),) if several else ()),
    ]
    return table_pages(SUMMARY, tables)
