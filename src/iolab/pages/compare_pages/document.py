"""The comparison report: N drives, same test, on the same pages — summary table with
ordinal rankings, the test's overlays, the per-drive facts. Built from the same page model,
plots and renderers as a single-run report. Which key figures and overlays a test has is the
test's declaration (the caller passes them; each family's overlays are in this package)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from iolab import __version__
from iolab.core.errors import IolabError
from iolab.core.steady import STEADY_REACHED
from iolab.core.testparams import Param
from iolab.core.units import counted
from iolab.figures.audit import kinds_of, marker
from iolab.figures.compare import (
    NOT_MEASURED,
    Comparison,
    KeyMetric,
    RunFacts,
    check_comparable,
    comparison_stem,
    summary_table,
)
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import header, plots, sections, write_document
from iolab.pages.report.model import Document, Figure, HeaderColumn, Page, Table
from iolab.pages.report.parts import legs_text, parts_pages
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import table_pages
from iolab.pages.report.steadywords import phase_steady_words
from iolab.pages.runwords import SHORT_INFO_STEADY_WORDS, rounds_text
from iolab.targets import sim_facts


def facts(run: RunData, label: str, params: Sequence[Param] = ()) -> RunFacts:
    """A phase built from the run's own results (DIRTH's operating points, a searched QD) is
    compared by what it is built from: its cells differ between drives by design. `params`: the
    test's declared parameters, by which its settings are compared."""
    cells = tuple(
        (p["name"], (p["deferred"],) if "deferred" in p else tuple(p.get("cells", ())))
        for p in run.manifest.plan.get("phases", [])
    )
    m = run.manifest
    digest = m.parameters.get("Workload digest", "")
    return RunFacts(label, m.test, m.profile, cells, digest, m.ignored_options, tuple(params))


def drive_id(run: RunData) -> str:
    """Which target a run measured, as a sequence comparison groups its runs: a simulated one by
    its drive key (sim:enterprise-sas and sim:enterprise-sas?user_gb=400, the preset's own capacity,
    are one drive; its seed is part of it, so that one drive's two random streams can stand for two
    drives there), any other by its spec."""
    target = run.manifest.target
    ident = target.get("identity") or {}
    if ident.get("kind") == "sim":
        return repr(sim_facts.drive_key(str(ident.get("preset")), dict(ident.get("options") or ())))
    return str(target.get("spec", run.manifest.run_id))


def seed_of(run: RunData) -> str | None:
    """A simulated drive's seed (0 when none was given); None for any other target."""
    ident = run.manifest.target.get("identity") or {}
    if ident.get("kind") != "sim":
        return None
    return str(dict(ident.get("options") or ()).get("seed", "0"))


def drive_of(run: RunData) -> str:
    """Which drive a run measured, as a comparison counts drives: drive_id without a simulated
    drive's seed. Another seed is another run of the drive (its random stream), as `iolab history`
    and a sequence report take it (sim_facts.drive_of_spec), not another drive."""
    ident = run.manifest.target.get("identity") or {}
    if ident.get("kind") == "sim":
        return sim_facts.seedless_drive(str(ident.get("preset")), dict(ident.get("options") or ()))
    return drive_id(run)


def counted_as(runs: list[RunData]) -> str:
    """What a comparison's runs are, as its title and its file's name count them: "drives" when
    each measured another drive, else "runs". One drive reached over one path and over several is
    two runs, not two drives; so are two seeds of one simulated drive (drive_of)."""
    return "drives" if len({drive_of(r) for r in runs}) == len(runs) else "runs"


Figures = Callable[[Sequence[list[PhaseSummary]]], tuple[KeyMetric, ...]]
Overlays = Callable[[list[RunData], list[str]], list[Page]]


def write_comparison(
    refs: list,
    out_dir: Path,
    force: bool,
    figures: Figures,
    overlays: Overlays | None = None,
    heading: str | None = None,
    names: Sequence[str] = (),
    params: Sequence[Param] = (),
) -> Comparison:
    """`figures`, `overlays`, `heading`, `params`: the test's declared ones; `names`: the user's
    label of each run (--label), in the order of `refs`."""
    out_dir = Path(out_dir).resolve()
    runs = [RunData.load(r, out_dir) for r in refs]
    labels = run_labels(runs, names)
    diffs = check_comparable([facts(r, lab, params) for r, lab in zip(runs, labels)], force)
    metrics = figures([r.phases for r in runs])
    doc = build_comparison(runs, labels, diffs, metrics, overlays, heading)
    stem = comparison_stem([r.manifest.test for r in runs], [r.manifest.run_id for r in runs], counted_as(runs))
    paths = write_document(doc, out_dir, stem)
    return ranked(runs, labels, diffs, metrics, paths)


def rank_runs(refs: list, out_dir: Path, figures: Figures, names: Sequence[str] = ()) -> Comparison:
    """The ranking of runs of one test with the caveats a comparison carries, writing no report:
    one run ranked beside published figures (a report needs two), whose figures carry every
    caveat two runs' would (it lost them all: no [a], no incomplete or non-compliant line)."""
    runs = [RunData.load(r, Path(out_dir).resolve()) for r in refs]
    metrics = figures([r.phases for r in runs])
    return ranked(runs, run_labels(runs, names), [], metrics)


def ranked(
    runs: list[RunData], labels: list[str], diffs: list[str], metrics: tuple[KeyMetric, ...], paths: Sequence[Path] = ()
) -> Comparison:
    """The terminal's ranking carries the caveats every page does (forced, non-compliant,
    incomplete, steady state, audit), and beside each figure those of its run."""
    caveats = tuple(full for full, _, _ in comparison_caveats(runs, labels, diffs))
    st = replace(summary_table(labels, [r.phases for r in runs], metrics), marks=figure_marks(runs, metrics))
    return Comparison(list(paths), st, caveats)


def run_labels(runs: list[RunData], names: Sequence[str] = ()) -> list[str]:
    """D1, D2 … and the user's name for each run (--label), else the drive; when any run was
    split over paths or hosts, how each ran too; two runs that would still read the same (a
    before/after pair on one drive) carry their run ids."""
    if names and len(names) != len(runs):
        raise IolabError(
            f"--label: {counted(len(names), 'label')} for {counted(len(runs), 'run')}; give one --label per run, in the order of the runs."
        )
    split = any(r.manifest.split for r in runs)
    base = list(names) or [r.label + (f" ({legs_text(r)})" if split else "") + _seed_said(r, runs) for r in runs]
    ids = run_names(runs)
    return [f"D{i + 1} {b}" + (f" [{n}]" if base.count(b) > 1 else "") for i, (b, n) in enumerate(zip(base, ids))]


def _seed_said(run: RunData, runs: Sequence[RunData]) -> str:
    """ ", seed 2" where runs of this run's simulated drive differ in seed: the label says which
    random stream of the one drive each is."""
    seeds = {seed_of(r) for r in runs if drive_of(r) == drive_of(run)}
    return f", seed {seed_of(run)}" if len(seeds) > 1 else ""


def run_names(runs: Sequence[RunData]) -> list[str]:
    """Each run's id, as the pages name the run; runs that share one (started in one second in
    different runs directories) told apart by their runs directory's name ("a/<id>"), or where
    those are alike too by the start of their uid."""
    ids = [r.manifest.run_id for r in runs]
    out = []
    for r, run_id in zip(runs, ids):
        twins = [q for q, i in zip(runs, ids) if i == run_id]
        if len(twins) == 1:
            out.append(run_id)
        elif [q.dir.parent.name for q in twins].count(r.dir.parent.name) == 1:
            out.append(f"{r.dir.parent.name}/{run_id}")
        else:  # a run stored before uids: its directory's whole path tells it from its twin
            mark = r.manifest.uid or hashlib.sha1(str(r.dir).encode()).hexdigest()
            out.append(f"{run_id} ({mark[:8]})")
    return out


# -- document --------------------------------------------------------------------------------


def build_comparison(
    runs: list[RunData],
    labels: list[str],
    diffs: list[str],
    metrics: tuple[KeyMetric, ...],
    overlays: Overlays | None = None,
    heading: str | None = None,
) -> Document:
    first = runs[0]
    # runs of different tests (--force) are a mixed comparison, named for every test, not the first run's
    titles = list(dict.fromkeys(r.manifest.title for r in runs))
    title = titles[0] if len(titles) == 1 else f"Mixed ({', '.join(titles)})"
    what = f"{len(runs)} {counted_as(runs)}"
    pages = summary_pages(runs, labels, metrics) + (overlays(runs, labels) if overlays else [])
    pages += [p for r, lab in zip(runs, labels) for p in parts_pages(r, lab)] + drives_pages(runs, labels, diffs)
    return Document(
        title=f"{title} comparison — {what}",
        spec=header.spec_line(first, heading),
        test_name=f"{title} — comparison of {what}",
        started=min(r.manifest.started for r in runs),
        ended=max((r.manifest.ended or "not finished") for r in runs),
        device=f"{what} (see Devices Under Test)",
        tested_by=", ".join(sorted({r.manifest.platform.get("tested_by") or "not given" for r in runs})),
        columns=comparison_columns(runs, labels),
        banners=comparison_banners(runs, labels, diffs),
        pages=tuple(pages),
        footer="runs " + ", ".join(run_names(runs)) + f" · comparison by iolab {__version__}",
    )


DRIVES_PAGE = "Drives Compared"


def comparison_columns(runs: list[RunData], labels: list[str]) -> tuple[HeaderColumn, ...]:
    """The four header columns for N drives: a fact all runs share is printed once, a fact
    that differs is printed per drive (D1 …; D2 …), each from that drive's own run."""
    short = [lab.split()[0] for lab in labels]
    split = any(r.manifest.split for r in runs)
    dut = [
        (
            d,
            f"{r.label}; FW {r.manifest.target.get('facts', {}).get('firmware') or header.NOT_REPORTED}; "
            f"{header.capacity_text(r)}; {r.manifest.target.get('facts', {}).get('interface') or header.NOT_REPORTED}"
            + (f"; {legs_text(r)}" if split else ""),
        )
        for r, d in zip(runs, short)
    ]
    return (
        header.fit_column("Test Platform", per_drive([header.platform_items(r) for r in runs], short), DRIVES_PAGE),
        header.fit_column("Devices Under Test", dut, DRIVES_PAGE),
        header.fit_column(
            "Set Up Parameters", per_drive([header.setup_items(r, short=True) for r in runs], short), DRIVES_PAGE
        ),
        header.fit_column("Test Parameters", per_drive([header.parameter_items(r) for r in runs], short), DRIVES_PAGE),
    )


def per_drive(items: list[list[tuple[str, str]]], drives: list[str]) -> list[tuple[str, str]]:
    """Merge each run's header items: one value where all drives agree, else 'D1 x; D2 y'."""
    keys = list(dict.fromkeys(k for its in items for k, _ in its))
    out = []
    for k in keys:
        vals = [dict(its).get(k, "—") for its in items]
        out.append((k, vals[0] if len(set(vals)) == 1 else "; ".join(f"{d} {v}" for d, v in zip(drives, vals))))
    return out


def comparison_banners(
    runs: list[RunData],
    labels: list[str],
    diffs: list[str],
    first: tuple[tuple[str, str, str], ...] = (),
    measured: Sequence[tuple[str, RunData]] | None = None,
) -> tuple[str, ...]:
    """The comparison's caveats, after `first` (full, short, page) ones of the caller, fitted to
    the banner strip of every page."""
    return header.fit_banners(comparison_caveats(runs, labels, diffs, first, measured))


def comparison_caveats(
    runs: list[RunData],
    labels: list[str],
    diffs: list[str],
    first: tuple[tuple[str, str, str], ...] = (),
    measured: Sequence[tuple[str, RunData]] | None = None,
) -> list[tuple[str, str, str]]:
    """Each caveat as (full text, short form, page that prints it in full). `measured`: every
    run whose figures are compared, each after its name ("D1", "D1 IOPS"), for the caveats on
    how they were measured; None: `runs`, one per drive."""
    out = list(first)
    if diffs:
        out.append(
            (
                f"FORCED COMPARISON of runs that differ: {'; '.join(diffs)}",
                f"FORCED COMPARISON of runs that differ in {counted(len(diffs), 'setting')}",
                DRIVES_PAGE,
            )
        )
    nc = [(lab.split()[0], r.manifest.noncompliance) for r, lab in zip(runs, labels) if not r.manifest.compliant]
    if nc:
        # each drive's own reasons follow ("D2: quick profile"); the label is only what all share
        what = header.noncompliant_label([r for r in runs if not r.manifest.compliant])
        common = [x for x in nc[0][1] if all(x in reasons for _, reasons in nc)]
        own = [
            f"{d}: {'; '.join(x for x in reasons if x not in common)}"
            for d, reasons in nc
            if set(reasons) - set(common)
        ]
        drives = ", ".join(d for d, _ in nc)
        out.append((f"{what}: {drives} — {'; '.join(common + own)}", f"{what}: {drives}", DRIVES_PAGE))
    inc = [f"{lab.split()[0]} ({r.manifest.state})" for r, lab in zip(runs, labels) if not r.complete]
    if inc:
        text = f"INCOMPLETE RUN(S): {', '.join(inc)} — only their complete rounds are compared"
        out.append((text, text, DRIVES_PAGE))
    if measured is None:
        measured = [(lab.split()[0], r) for r, lab in zip(runs, labels)]
    return out + measure_caveats(measured)


def measure_caveats(measured: Sequence[tuple[str, RunData]]) -> list[tuple[str, str, str]]:
    """The caveats each run's own report prints on every page (steady state not achieved or not
    evaluated, a failed audit: header.measure_caveats), one banner for each kind, each phase or
    invariant after its drive's name ("STEADY STATE NOT EVALUATED (D1 main: 4 rounds …; D2 …)");
    shortened, it names the Drives Compared page, which prints each drive's in full."""
    kinds: dict[str, list[tuple[str, header.Caveat]]] = {}
    for name, r in measured:
        for c in header.measure_caveats(r):
            kinds.setdefault(c.head, []).append((name, c))
    out = []
    for head, drives in kinds.items():
        parts = tuple(f"{d} {p}" for d, c in drives for p in c.parts)
        why = "; ".join(f"{d} {c.why}" for d, c in drives if c.why)
        full, short, _ = header.Caveat(head, parts, why, drives[0][1].colon).item(DRIVES_PAGE)
        # the short form as the run's own: an audit's names its invariants, a steady state's only the drives
        out.append((full, short if short != head else f"{head}: {', '.join(d for d, _ in drives)}", DRIVES_PAGE))
    return out


def figure_marks(runs: Sequence[RunData], metrics: Sequence[KeyMetric]) -> tuple[tuple[str, ...], ...]:
    """What each drive's figure carries into the terminal's ranking ([drive][figure], "" for
    none): its run's steady-state caveat (every figure of the run is from a window that is no
    steady state) and the failed invariants that touch that figure, as `show` marks them. A figure
    the run has no value for ("—") carries only why it is not measured, where its getter knows
    (too few IOs for a percentile), else nothing: a caveat on a value is none on its absence."""
    out = []
    for r in runs:
        caveats = header.steady_caveats(r)
        row = []
        for m in metrics:
            if m.get(r.phases) is None:
                why = m.unmeasured(r.phases)
                row.append(f"not measured: {why}" if why else "")
                continue
            failed = r.audit.marks(kinds_of(m.name, m.unit)) if r.audit is not None else ()
            # a "steady-part" figure of a part that was not steady says so (its getter's caveat)
            own = [c] if (c := m.caveat(r.phases)) else []
            steady = [c.head for c in header.figure_caveats(m.get, caveats)]
            row.append("; ".join([*steady, *own, *([marker(failed)] if failed else [])]))
        out.append(tuple(row))
    return tuple(out)


# -- summary and rankings -------------------------------------------------------------------


def _rank_text(rank: int | None, n: int) -> str:
    return "—" if rank is None else f"{rank} of {n}"


def summary_pages(runs: list[RunData], labels: list[str], metrics: tuple[KeyMetric, ...]) -> list[Page]:
    st = summary_table(labels, [r.phases for r in runs], metrics)
    n = len(runs)
    # not "the mean over its measurement window" for all: a QoS figure is the median or worst of
    # every round, a demand ramp's its search's answer, HIR's a recovery time
    src = (
        "Source: each run's results.db (cells), each figure as that run's own `iolab show` gives it (a PTS "
        "steady-state figure: the mean over its measurement window; others: what the figure's name says, "
        "e.g. the median or worst round, a search's answer); ranks compare the values as printed; tied "
        "drives share a rank (competition ranking 1, 2, 2, 4); a figure only one drive has is ranked for none."
    )
    cols = ("drive", *(m.heading for m in metrics))
    values = Table(
        "Summary: key figures per drive (↑ higher is better, ↓ lower is better)",
        cols,
        tuple(
            (lab, *(m.text(v, r.phases) for m, v in zip(metrics, row))) for r, lab, row in zip(runs, labels, st.values)
        ),
        src + NOT_MEASURED + "".join(f" {n}." for n in st.notes),
        tuple(link for r in runs for link in r.store_links()),
    )
    ranks = Table(
        "Ordinal ranking per column (1 = best)",
        cols,
        tuple((lab, *(_rank_text(k, n) for k in row)) for lab, row in zip(labels, st.ranks)),
        src,
    )
    info = Table(
        "Drives and runs",
        ("drive", "run", "state", "compliant", "measurement window(s)"),
        tuple(
            (
                lab,
                run_name,
                r.manifest.state,
                "yes" if r.manifest.compliant else "no",
                "; ".join(rounds_text(ph.window) + steady_suffix(ph) for ph in r.phases) or "none",
            )
            for r, lab, run_name in zip(runs, labels, run_names(runs))
        ),
        "Source: each run's manifest.json and results.db.",
    )
    pages = table_pages("Summary and Rankings", [values, ranks, info])
    pages.append(_metric_bars_page(metrics, st.values, labels))
    return pages


def _metric_bars_page(metrics: tuple[KeyMetric, ...], values, labels: list[str]) -> Page:
    """The key figures as bars, one panel per unit and direction (IOPS, MB/s and µs do not share
    an axis; a coefficient of variation and a minimum ÷ maximum, both in %, not a direction)."""
    panels = list(dict.fromkeys((m.unit, m.higher_is_better) for m in metrics))
    blocks = []
    height = min(80.0, 165.0 / len(panels) - 9)
    for unit, higher in panels:
        idx = [j for j, m in enumerate(metrics) if (m.unit, m.higher_is_better) == (unit, higher)]
        cats = [metrics[j].name for j in idx]
        groups = [(lab, [values[i][j] for j in idx]) for i, lab in enumerate(labels)]
        direction = "higher is better" if higher else "lower is better"
        png = plots.grouped_bars(cats, groups, unit, f"Key figures in {unit} ({direction})", height_mm=height)
        blocks.append(
            Figure(
                f"Key figures ({unit}), one bar per drive",
                png,
                "Source: the summary table on the previous page.",
            )
        )
    return Page("Key Figures per Drive", tuple(blocks))


# -- per-drive facts -------------------------------------------------------------------------


DRIVES_PER_TABLE = 4


Measured = Sequence[tuple[str, RunData]]  # the runs that stand for one drive, each after its test's name


def drive_caveats(measured: Measured) -> str:
    """The caveats on how a drive's figures were measured, in full, of every run that stands for
    it (a sequence's: one per test, each after its name, "Replay-Native: STEADY STATE …")."""
    return "; ".join(
        (f"{name}: " if name else "") + c.item()[0] for name, r in measured for c in header.measure_caveats(r)
    )


def _named(measured: Measured, item: Callable[[RunData], str]) -> str:
    """One fact of each run that stands for a drive: a sequence's after its test ("Multi-WSAT: …;
    Replay-Native: …"), a one-test comparison's alone."""
    return "; ".join((f"{name}: " if name else "") + item(r) for name, r in measured)


def _drive_facts(r: RunData, label: str, measured: Measured, names: dict[int, str]) -> dict[str, str]:
    """A drive's facts as the side-by-side table shows them: its runs (every one that stands for
    it, `measured`, each named by `names`, keyed by id()), then the header columns of `r`."""
    m = r.manifest
    facts = {
        "Run": _named(measured, lambda q: names[id(q)]),
        "State": _named(measured, lambda q: q.manifest.state),
        "Run directory": _named(measured, lambda q: q.href(".")),
        "Compliance": "spec-compliant settings" if m.compliant else "NON-COMPLIANT: " + "; ".join(m.noncompliance),
        # the caveats the banners name this drive in, in full (their short forms point here)
        "Caveats": drive_caveats(measured) or "none",
    }
    facts.update((str(k), str(v)) for k, v, *_ in sections.header_table(r, label).rows)
    return facts


def drives_pages(
    runs: list[RunData], labels: list[str], diffs: Sequence[str] = (), measured: Sequence[Measured] | None = None
) -> list[Page]:
    """Every per-drive fact in full, each from its own run, side by side (the header and the
    banners point here), after the settings that differ if the comparison was forced.
    `measured`: each drive's runs, each after its test, where more runs than its one in `runs`
    stand for it (a sequence's): its Run, State, Run directory and Caveats rows name every one."""
    tables = []
    if diffs:
        tables.append(
            Table(
                "FORCED COMPARISON: settings that differ between the runs",
                ("item", "difference"),
                tuple((str(i), d) for i, d in enumerate(diffs, 1)),
                "Source: each run's manifest.json (profile, test, planned cells, workload digest).",
            )
        )
    each = list(measured) if measured is not None else [[("", r)] for r in runs]
    every = [q for ms in each for _, q in ms]
    names = {id(q): n for q, n in zip(every, run_names(every))}
    for i in range(0, len(runs), DRIVES_PER_TABLE):
        group = list(zip(runs, labels, each))[i : i + DRIVES_PER_TABLE]
        per_run = [_drive_facts(r, lab, ms, names) for r, lab, ms in group]
        keys = list(dict.fromkeys(k for d in per_run for k in d))
        rows = tuple((k, *(d.get(k, "—") for d in per_run)) for k in keys)
        tables.append(
            Table(
                "Drives side by side" + (f" (D{i + 1}–D{i + len(group)})" if len(runs) > DRIVES_PER_TABLE else ""),
                ("item", *(lab for _, lab, _ in group)),
                rows,
                "Source: each run's manifest.json and results.db.",
                tuple(link for _, _, ms in group for _, q in ms for link in q.store_links()),
            )
        )
    return table_pages(DRIVES_PAGE, tables)


def steady_suffix(ph: PhaseSummary) -> str:
    """A window's state beside it, as the run's own header says it (nothing when reached): a phase
    that tracks nothing (QoS rounds) is "n/a", never "not evaluated"; one that runs to its budget
    (Write Saturation, XSR's groups) is "for info", never "SS NOT ACHIEVED"."""
    if ph.steady_state == STEADY_REACHED:
        return ""
    if ph.reports_only:
        return f" ({SHORT_INFO_STEADY_WORDS[ph.steady_state]})"
    return f" ({phase_steady_words(ph, short=True)})"
