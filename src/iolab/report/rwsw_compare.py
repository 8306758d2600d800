"""The RWSW comparison (catalogue §1 "Comparison"): runs of the four RWSW tests on several
drives, one summary table — Multi-WSAT IOPS, MB/s, 5-nines RT; Replay-Native IOPS, MB/s,
5-nines RT; DIRTH at OIO = 32 MB/s and 4-nines RT; Individual Streams IOPS per stream —
with the ordinal ranking of the drives in every column, then each test's overlays and the
Self-Test of the capture they all replayed.

Runs are grouped into drives by target. Each test's runs must be comparable (same profile,
same workload) unless forced; a drive without a run of some test has no figure (and no
rank) in that test's columns."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .. import __version__
from ..compare import RWSW_TESTS, RWSW_TITLES, check_comparable, rwsw_summary_metrics, summary_table
from ..errors import IolabError
from . import header, write_document
from .comparison import _metric_bars_page, _rank_text, comparison_banners, comparison_columns, drives_pages, facts
from .model import Document, Page, Table
from .rundata import RunData, rounds_text
from .rwsw import load_analysis, overlay_pages, selftest_from
from .sections import table_pages


def group_by_drive(runs: list[RunData]) -> list[dict[str, RunData]]:
    """Drives in the order first seen, each {test: run}; two runs of one test on one target
    are ambiguous (which one is the drive's figure?) and refused."""
    drives: dict[str, dict[str, RunData]] = {}
    for r in runs:
        test = r.manifest.test
        if test not in RWSW_TESTS:
            raise IolabError(f"run {r.manifest.run_id} is a {test!r} run; an RWSW comparison takes only the RWSW tests "
                             f"({', '.join(RWSW_TESTS)}).")
        d = drives.setdefault(r.manifest.target.get("spec", r.manifest.run_id), {})
        if test in d:
            raise IolabError(f"two {test} runs on {r.manifest.target.get('spec')}: {d[test].manifest.run_id} and "
                             f"{r.manifest.run_id}. Give one run per test and drive.")
        d[test] = r
    if len(drives) < 2:
        raise IolabError("an RWSW comparison needs runs on at least two drives (targets); these runs are all on "
                         f"{next(iter(drives))}.")
    return list(drives.values())


def write_rwsw_comparison(refs: list, out_dir: Path, force: bool) -> list[Path]:
    out_dir = Path(out_dir).resolve()
    runs = [RunData.load(r, out_dir) for r in refs]
    drives = group_by_drive(runs)
    labels = [f"D{i + 1} {next(iter(d.values())).label}" for i, d in enumerate(drives)]
    diffs = []
    for test in RWSW_TESTS:
        have = [(d[test], lab) for d, lab in zip(drives, labels) if test in d]
        if len(have) >= 2:
            diffs += [f"{RWSW_TITLES[test]}: {x}" for x in check_comparable([facts(r, lab) for r, lab in have], force)]
    doc = build_rwsw_comparison(drives, labels, diffs)
    digest = hashlib.sha1("\n".join(r.manifest.run_id for r in runs).encode()).hexdigest()[:8]
    return write_document(doc, out_dir, f"compare-rwsw-{len(drives)}drives-{digest}")


def build_rwsw_comparison(drives: list[dict[str, RunData]], labels: list[str], diffs: list[str]) -> Document:
    firsts = [next(iter(d.values())) for d in drives]
    first = firsts[0]
    pages = summary_pages(drives, labels)
    for test in RWSW_TESTS:
        have = [(d[test], lab) for d, lab in zip(drives, labels) if test in d]
        if have:
            pages += overlay_pages(test, [r for r, _ in have], [lab for _, lab in have])
    analysed = next((r for d in drives for r in d.values() if load_analysis(r) is not None), None)
    if analysed is not None:
        a = load_analysis(analysed)
        pages += selftest_from(a, f"Source: the stream analysis given with run {analysed.manifest.run_id} "
                                  f"(inputs/analysis.json), from {a.source}.")
    pages += drives_pages(firsts, labels, diffs)
    missing = [f"{lab.split()[0]} has no {RWSW_TITLES[t]} run" for d, lab in zip(drives, labels)
               for t in RWSW_TESTS if t not in d]
    # One run stands for each drive in the banners: an incomplete one, else a non-compliant one.
    reps = [next((r for r in d.values() if not r.complete), None) or next(
        (r for r in d.values() if not r.manifest.compliant), None) or next(iter(d.values())) for d in drives]
    gaps = (("MISSING: " + "; ".join(missing) + " (those columns are blank and unranked)",
             f"MISSING: {len(missing)} test run(s) (their columns are blank and unranked)", "Runs Compared"),)
    banners = comparison_banners(reps, labels, diffs, gaps if missing else ())
    return Document(
        title=f"RWSW comparison — {len(drives)} drives",
        spec=header.spec_line(first),
        test_name=f"RWSW — {len(drives)} drives compared",
        started=min(r.manifest.started for d in drives for r in d.values()),
        ended=max((r.manifest.ended or "not finished") for d in drives for r in d.values()),
        device=f"{len(drives)} drives (see Devices Under Test)",
        tested_by=", ".join(sorted({r.manifest.platform.get("tested_by") or "not given" for d in drives
                                    for r in d.values()})),
        columns=comparison_columns(firsts, labels),
        banners=banners,
        pages=tuple(pages),
        footer="runs " + ", ".join(r.manifest.run_id for d in drives for r in d.values())
               + f" · RWSW comparison by iolab {__version__}",
    )


def summary_pages(drives: list[dict[str, RunData]], labels: list[str]) -> list[Page]:
    streams_runs = [d["streams-wsat"].phases for d in drives if "streams-wsat" in d]
    pairs = rwsw_summary_metrics(streams_runs)
    metrics = tuple(m for _, m in pairs)
    by_test = [{t: r.phases for t, r in d.items()} for d in drives]
    st = summary_table(labels, by_test, metrics)
    n = len(drives)
    src = ("Source: each run's results.db — Multi-WSAT and Individual Streams: mean over the steady-state window; "
           "Replay-Native: all IOs over all steps; DIRTH: the OIO 32 cell. Ranks compare the values as printed; tied "
           "drives share a rank (1, 2, 2, 4); a drive without the figure is not ranked.")
    # One row per figure (there are more figures than drives), one column per drive.
    cols = ("key figure (unit, ↑ higher / ↓ lower is better)", *labels)
    links = tuple(link for d in drives for r in d.values() for link in r.store_links())

    def name(m) -> str:
        unit = "" if m.unit in m.name else f" ({m.unit})"
        return f"{m.name}{unit} {'↑' if m.higher_is_better else '↓'}"

    values = Table("RWSW summary: key figures per drive", cols,
                   tuple((name(m), *(m.fmt(st.values[i][j]) for i in range(n))) for j, m in enumerate(metrics)),
                   src, links)
    ranks = Table("Ordinal ranking of the drives per key figure (1 = best)", cols,
                  tuple((name(m), *(_rank_text(st.ranks[i][j], n) for i in range(n))) for j, m in enumerate(metrics)),
                  src)

    def state(r: RunData) -> str:
        steady = "; ".join(f"{ph.phase.name}: {rounds_text(ph.window)}"
                           + {True: "", False: " (SS NOT ACHIEVED)", None: ""}[ph.steady] for ph in r.phases)
        return f"{r.manifest.run_id} ({r.manifest.state}) — {steady or 'nothing measured'}"

    info = Table("Drives and runs", ("drive", "test", "run, state and windows"),
                 tuple((lab, RWSW_TITLES[t], state(d[t])) for d, lab in zip(drives, labels) for t in RWSW_TESTS if t in d),
                 "Source: each run's manifest.json and results.db.")
    pages = table_pages("RWSW Summary and Rankings", [values, ranks]) + table_pages("Runs Compared", [info])
    pages.append(_metric_bars_page(metrics, st.values, labels))
    return pages
