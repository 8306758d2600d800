"""`iolab compare` of stored runs, where it depends on their test: the test's key figures (the
summary columns), overlays and heading from the registry, handed to the comparison pages; runs
of several tests of one sequence whose tests declare summary figures (the RWSW tests) make that
sequence's summary comparison. A run whose test is not registered here is refused with the reason.

Dependency direction: api → registry ⇢ suites.* → compare_pages/*, compare/*; nothing below
imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.store.durable import room_for
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore

if TYPE_CHECKING:
    from iolab.figures.compare import Comparison, KeyMetric
    from iolab.figures.summary import PhaseSummary


def key_metrics(test: str, runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    """The summary columns of a test's comparison. `runs` (each drive's phases) is needed
    only where the columns depend on what was run (Individual Streams: one per stream)."""
    t = registry.find(test)
    if t is None or t.key_figures is None:
        why = "it is not a registered test" if t is None else "its declaration names none"
        raise IolabError(f"test {test!r}: no comparison figures are defined for it ({why}).")
    return t.key_figures(runs)


def compare(
    run_refs: Sequence[str | Path], out_dir: Path, force: bool = False, labels: Sequence[str] = ()
) -> Comparison:
    """Write one comparison report (HTML and PDF) for these runs; returns the paths written
    and the ranking. `labels` names each run (one per run, in order) in place of its drive.
    Runs of several tests of one sequence whose tests declare summary figures (the RWSW tests,
    on several drives) make that sequence's summary comparison."""
    # imported here: the comparison pulls in the trace readers (duckdb, numpy), which other commands never use
    from iolab.figures.compare import open_runs

    paths = open_runs(run_refs)
    with room_for("their comparison", Path(out_dir), "run the same `iolab compare` again"):
        return _compare(paths, Path(out_dir), force, labels)


def _compare(paths: list[Path], out_dir: Path, force: bool, labels: Sequence[str]) -> Comparison:
    from iolab.figures.compare import Comparison
    from iolab.pages.compare_pages.document import write_comparison
    from iolab.pages.compare_pages.sequence import write_sequence_comparison

    tests = {_test_of(p) for p in paths}
    seq = summary_sequence(tests)
    if len(tests) > 1 and seq is not None:
        if labels:
            raise IolabError(
                "--label names the runs of a one-test comparison; a sequence comparison names each drive by its target."
            )
        return Comparison(write_sequence_comparison(paths, Path(out_dir), force, seq, registry.sequence(seq)))
    test = registry.find(next(iter(tests))) if tests else None
    return write_comparison(
        paths,
        Path(out_dir),
        force,
        lambda runs: key_metrics(next(iter(tests)), runs),
        test.overlays if test else None,
        test.report_heading if test else None,
        labels,
        test.params if test else (),
    )


def summary_sequence(tests: set[str]) -> str | None:
    """The one sequence all these tests belong to, if each contributes to its summary."""
    found = [registry.find(t) for t in tests]
    known = [t for t in found if t is not None]
    seqs = {t.sequence for t in known}
    if len(known) != len(found) or len(seqs) != 1 or any(t.summary_figures == () for t in known):
        return None
    return seqs.pop()


def _test_of(path: Path) -> str:
    store = RunStore.open(path)
    try:
        return manifest_of(store).test
    finally:
        store.close()
