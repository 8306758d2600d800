"""The comparison of a sequence's tests on several drives, as the RWSW catalogue's §1
"Comparison" has it for the four RWSW tests (which declare their summary figures): runs on several
drives, one summary table — Multi-WSAT IOPS, MB/s, 5-nines RT; Replay-Native IOPS, MB/s,
5-nines RT; DIRTH at OIO = 32 MB/s and 4-nines RT; Individual Streams IOPS per stream —
with the ordinal ranking of the drives in every column, then each test's overlays and the
Self-Test of the capture they all replayed.

Runs are grouped into drives by target. Each test's runs must be comparable (same profile,
same workload) unless forced; a drive without a run of some test has no figure (and no
rank) in that test's columns."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from iolab import __version__
from iolab.core.errors import IolabError
from iolab.core.steady import STEADY_REACHED
from iolab.core.testparams import Param
from iolab.core.units import counted
from iolab.figures.compare import NOT_MEASURED, KeyMetric, check_comparable, summary_table
from iolab.figures.summary import PhaseSummary
from iolab.pages.compare_pages.document import (
    _metric_bars_page,
    _rank_text,
    comparison_banners,
    comparison_columns,
    drive_id,
    drives_pages,
    facts,
    steady_suffix,
)
from iolab.pages.report import header, write_document
from iolab.pages.report.model import Document, Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_selftest import load_analysis, selftest_from
from iolab.pages.report.sections import table_pages
from iolab.pages.runwords import rounds_text


class TestDef(Protocol):
    """What the comparison reads of a test's declaration (suites.testdef.TestDef, which the
    api hands down: pages sit below the suites and never import them)."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def report_heading(self) -> str: ...
    @property
    def overlays(self) -> Callable[[list[RunData], list[str]], list[Page]] | None: ...
    @property
    def key_figures(self) -> Callable[..., tuple[KeyMetric, ...]] | None: ...
    @property
    def summary_figures(self) -> tuple[str, ...] | None: ...
    @property
    def summary_order(self) -> int: ...
    @property
    def params(self) -> Sequence[Param]: ...


def group_by_drive(runs: list[RunData], tests: Sequence[TestDef]) -> list[dict[str, RunData]]:
    """Drives in the order first seen, each {test: run}; two runs of one test on one target
    are ambiguous (which one is the drive's figure?) and refused."""
    drives: dict[str, dict[str, RunData]] = {}
    names = [t.name for t in tests]
    for r in runs:
        test = r.manifest.test
        if test not in names:
            raise IolabError(
                f"run {r.manifest.run_id} is a {test!r} run; an {tests[0].family.removeprefix('SNIA ')} "
                f"comparison takes only the tests {', '.join(names)}."
            )
        d = drives.setdefault(drive_id(r), {})
        if test in d:
            raise IolabError(
                f"two {test} runs on {r.manifest.target.get('spec')}: {d[test].manifest.run_id} and "
                f"{r.manifest.run_id}. Give one run per test and drive."
            )
        d[test] = r
    if len(drives) < 2:
        raise IolabError(
            f"an {tests[0].family.removeprefix('SNIA ')} comparison needs runs on at least two drives (targets); these runs are all on "
            f"{next(iter(drives))}."
        )
    return list(drives.values())


def write_sequence_comparison(
    refs: list, out_dir: Path, force: bool, sequence: str, tests: Sequence[TestDef]
) -> list[Path]:
    """`tests`: the sequence's tests in registry order (each test's overlays come in it)."""
    out_dir = Path(out_dir).resolve()
    runs = [RunData.load(r, out_dir) for r in refs]
    drives = group_by_drive(runs, tests)
    # one drive per target: two targets of one model (two sizes of one preset) read by their spec
    base = [next(iter(d.values())).label for d in drives]
    labels = [
        f"D{i + 1} {b}" + (f" [{next(iter(d.values())).manifest.target.get('spec', '')}]" if base.count(b) > 1 else "")
        for i, (b, d) in enumerate(zip(base, drives))
    ]
    diffs = []
    for t in tests:
        have = [(d[t.name], lab) for d, lab in zip(drives, labels) if t.name in d]
        if len(have) >= 2:
            diffs += [f"{t.label}: {x}" for x in check_comparable([facts(r, lab, t.params) for r, lab in have], force)]
    doc = build_sequence_comparison(drives, labels, diffs, tests)
    digest = hashlib.sha1("\n".join(r.manifest.run_id for r in runs).encode()).hexdigest()[:8]
    return write_document(doc, out_dir, f"compare-{sequence}-{len(drives)}drives-{digest}")


def build_sequence_comparison(
    drives: list[dict[str, RunData]], labels: list[str], diffs: list[str], tests: Sequence[TestDef]
) -> Document:
    firsts = [next(iter(d.values())) for d in drives]
    first = firsts[0]
    family = tests[0].family.removeprefix("SNIA ")
    pages = summary_pages(drives, labels, tests)
    for t in tests:
        have = [(d[t.name], lab) for d, lab in zip(drives, labels) if t.name in d]
        if have and t.overlays is not None:
            pages += t.overlays([r for r, _ in have], [lab for _, lab in have])
    analyses = ((r, load_analysis(r)) for d in drives for r in d.values())
    analysed, a = next(((r, an) for r, an in analyses if an is not None), (None, None))
    if analysed is not None and a is not None:
        pages += selftest_from(
            a,
            f"Source: the stream analysis given with run {analysed.manifest.run_id} "
            f"(inputs/analysis.json), from {a.source}.",
        )
    # each drive's every run, after its test, in the Run, State, Run directory and Caveats rows
    # (the banners' short forms point to them); the first stands for the drive's header columns
    pages += drives_pages(firsts, labels, diffs, [[(r.manifest.title, r) for r in d.values()] for d in drives])
    missing = [
        f"{lab.split()[0]} has no {t.label} run" for d, lab in zip(drives, labels) for t in tests if t.name not in d
    ]
    # One run stands for each drive in the banners: an incomplete one, else a non-compliant one.
    reps = [
        next((r for r in d.values() if not r.complete), None)
        or next((r for r in d.values() if not r.manifest.compliant), None)
        or next(iter(d.values()))
        for d in drives
    ]
    gaps = (
        (
            "MISSING: " + "; ".join(missing) + " (those columns are blank and unranked)",
            f"MISSING: {counted(len(missing), 'test run')} (blank and unranked)",
            "Runs Compared",
        ),
    )
    # ... but every run's own steady state and audit, after its drive and test ("D1 IOPS main: …")
    measured = [(f"{lab.split()[0]} {r.manifest.title}", r) for d, lab in zip(drives, labels) for r in d.values()]
    banners = comparison_banners(reps, labels, diffs, gaps if missing else (), measured)
    return Document(
        title=f"{family} comparison — {len(drives)} drives",
        spec=header.spec_line(first, tests[0].report_heading),
        test_name=f"{family} — {len(drives)} drives compared",
        started=min(r.manifest.started for d in drives for r in d.values()),
        ended=max((r.manifest.ended or "not finished") for d in drives for r in d.values()),
        device=f"{len(drives)} drives (see Devices Under Test)",
        tested_by=", ".join(
            sorted({r.manifest.platform.get("tested_by") or "not given" for d in drives for r in d.values()})
        ),
        columns=comparison_columns(firsts, labels),
        banners=banners,
        pages=tuple(pages),
        footer="runs "
        + ", ".join(r.manifest.run_id for d in drives for r in d.values())
        + f" · {family} comparison by iolab {__version__}",
    )


def summary_pages(drives: list[dict[str, RunData]], labels: list[str], tests: Sequence[TestDef]) -> list[Page]:
    family = tests[0].family.removeprefix("SNIA ")
    pairs = sequence_summary_metrics(tests, {t.name: [d[t.name].phases for d in drives if t.name in d] for t in tests})
    metrics = tuple(m for _, m in pairs)
    by_test = [{t: r.phases for t, r in d.items()} for d in drives]
    st = summary_table(labels, by_test, metrics)
    n = len(drives)
    src = (
        f"Source: each run's results.db — Multi-WSAT and Individual Streams: {window_mean(drives, labels, tests)}; "
        "Replay-Native: all IOs over all steps; DIRTH: the OIO 32 cell. Ranks compare the values as printed; tied "
        "drives share a rank (1, 2, 2, 4); a drive without the figure is not ranked, and a figure only one "
        "drive has is ranked for none."
    )
    # One row per figure (there are more figures than drives), one column per drive.
    cols = ("key figure (unit, ↑ higher / ↓ lower is better)", *labels)
    links = tuple(link for d in drives for r in d.values() for link in r.store_links())

    values = Table(
        f"{family} summary: key figures per drive",
        cols,
        tuple((m.short, *(m.text(st.values[i][j], by_test[i]) for i in range(n))) for j, m in enumerate(metrics)),
        src + " '—': the drive has no run of that test, or its run has no such figure." + NOT_MEASURED,
        links,
    )
    ranks = Table(
        "Ordinal ranking of the drives per key figure (1 = best)",
        cols,
        tuple((m.short, *(_rank_text(st.ranks[i][j], n) for i in range(n))) for j, m in enumerate(metrics)),
        src,
    )

    def state(r: RunData) -> str:
        steady = "; ".join(f"{ph.phase.name}: {rounds_text(ph.window)}" + steady_suffix(ph) for ph in r.phases)
        return f"{r.manifest.run_id} ({r.manifest.state}) — {steady or 'nothing measured'}"

    info = Table(
        "Drives and runs",
        ("drive", "test", "run, state and windows"),
        tuple((lab, t.label, state(d[t.name])) for d, lab in zip(drives, labels) for t in tests if t.name in d),
        "Source: each run's manifest.json and results.db.",
    )
    pages = table_pages(f"{family} Summary and Rankings", [values, ranks]) + table_pages("Runs Compared", [info])
    pages.append(_metric_bars_page(metrics, st.values, labels))
    return pages


# the tests whose summary figures are each phase's mean over its window (the caption's words)
WINDOW_MEAN_TESTS = ("multi-wsat", "streams-wsat")


def window_mean(drives: list[dict[str, RunData]], labels: list[str], tests: Sequence[TestDef]) -> str:
    """What the Multi-WSAT and Individual Streams figures are the mean over: the steady-state
    window only where each phase behind them reached steady state; a phase that did not (a stream
    at its round limit) is named, its figures being of its measurement window."""
    label = {t.name: t.label for t in tests}
    phases = [
        (f"{lab.split()[0]} {label[name]} {ph.phase.name}{steady_suffix(ph)}", ph.steady_state == STEADY_REACHED)
        for d, lab in zip(drives, labels)
        for name, r in d.items()
        if name in WINDOW_MEAN_TESTS
        for ph in r.phases
        if ph.window
    ]
    unsteady = ", ".join(said for said, steady in phases if not steady)
    if not unsteady:
        return "mean over the steady-state window"
    if not any(steady for _, steady in phases):
        return f"mean over the measurement window, no steady state ({unsteady})"
    return f"mean over the measurement window, a steady-state window except for {unsteady}"


@dataclass(frozen=True)
class _OfTest:
    """A test's key figure read from one drive's phases per test. It passes on why a percentile
    has no value (too few IOs) where the test's own getter knows: a bare lambda lost it, and the
    summary printed "—" for a 99.999 % its 15,082 IOs could not measure."""

    metric: KeyMetric[list[PhaseSummary]]
    test: str

    def __call__(self, by_test: dict[str, list[PhaseSummary]]) -> float | None:
        return self.metric.get(by_test.get(self.test, []))

    def unmeasured(self, by_test: dict[str, list[PhaseSummary]]) -> str:
        return self.metric.unmeasured(by_test.get(self.test, []))

    def unmeasured_ios(self, by_test: dict[str, list[PhaseSummary]]) -> int | None:
        ios = getattr(self.metric.get, "unmeasured_ios", None)
        return ios(by_test.get(self.test, [])) if callable(ios) else None


def sequence_summary_metrics(
    tests: Sequence[TestDef], runs: dict[str, Sequence[list[PhaseSummary]]]
) -> tuple[tuple[str, KeyMetric[dict[str, list[PhaseSummary]]]], ...]:
    """The columns of a cross-test summary (the RWSW catalogue's "Comparison") as (test, metric):
    each test's `summary_figures`, in `summary_order`. `runs` holds each test's runs (its
    figures may depend on them); a metric's `get` takes {test: phases} of one drive (a drive
    without that test's run has no figure there and is not ranked)."""
    out: list[tuple[str, KeyMetric[dict[str, list[PhaseSummary]]]]] = []
    for t in sorted(tests, key=lambda t: t.summary_order):
        if t.key_figures is None or t.summary_figures == ():
            continue
        for m in t.key_figures(runs.get(t.name, ())):
            if t.summary_figures is not None and m.name not in t.summary_figures:
                continue
            out.append(
                (t.name, KeyMetric(f"{t.label}: {m.name}", m.unit, m.higher_is_better, _OfTest(m, t.name), m.kind))
            )
    return tuple(out)
