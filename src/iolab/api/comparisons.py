"""`iolab compare` of stored runs, where it depends on their test: the test's key figures (the
summary columns), overlays and heading from the registry, handed to the comparison pages; runs
of several tests of one sequence whose tests declare summary figures (the RWSW tests) make that
sequence's summary comparison. A run whose test is not registered here is refused with the reason.

Dependency direction: api → registry ⇢ suites.* → compare_pages/*, compare/*; nothing below
imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    run_tests = [_test_of(p) for p in paths]
    test = registry.find(run_tests[0]) if run_tests else None
    if len(tests) == 1:
        return write_comparison(
            paths,
            Path(out_dir),
            force,
            lambda runs: key_metrics(run_tests[0], runs),
            test.overlays if test else None,
            test.report_heading if test else None,
            labels,
            test.params if test else (),
        )
    return write_comparison(
        paths,
        Path(out_dir),
        force,
        lambda runs: mixed_key_metrics(run_tests, runs),
        mixed_overlays(run_tests),
        test.report_heading if test else None,
        labels,
        test.params if test else (),
    )


def rank(run_ref: str | Path, out_dir: Path, labels: Sequence[str] = ()) -> Comparison:
    """One run's ranking with the caveats its figures carry in any comparison (incomplete,
    non-compliant, steady state, audit), writing no report: for published figures ranked
    beside it, as `compare` gives two or more runs'."""
    from iolab.figures.compare import open_runs
    from iolab.pages.compare_pages.document import rank_runs

    paths = open_runs([run_ref])
    test = _test_of(paths[0])
    return rank_runs(paths, Path(out_dir), lambda runs: key_metrics(test, runs), labels)


def mixed_key_metrics(tests: Sequence[str], runs: Sequence[list[PhaseSummary]]) -> tuple[KeyMetric, ...]:
    """A forced comparison of runs of different tests: each test's key figures, in the order the
    tests first come, each read only from the runs of that test and not measured ("—") for the
    others. A figure found by its cell's mix and block size alone would read another test's
    different stimulus under its name: a Throughput run's SEQ 1024 KiB reads ranked first as
    'RND 1024KiB R/W 100/0 IOPS'."""
    from dataclasses import replace

    out: list[KeyMetric] = []
    for test in dict.fromkeys(tests):
        own = [ph for t, ph in zip(tests, runs) if t == test]
        ids = {id(ph) for ph in own}  # each run's phases are one list, passed to every figure
        out += [replace(m, get=_only_from(m.get, ids)) for m in key_metrics(test, own)]
    return tuple(out)


@dataclass(frozen=True)
class _OnlyFrom:
    """`get` for the runs whose phases are `ids`, not measured (None) for any other. What the
    getter says of its value (why a percentile is not measured, a steady part's note) it says for
    those runs alone: a bare closure lost it, and a forced comparison printed a bare "—"."""

    get: Callable[[list[PhaseSummary]], float | None]
    ids: frozenset[int]

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        return self.get(phases) if id(phases) in self.ids else None

    def _said(self, name: str, phases: list[PhaseSummary], nothing: object) -> object:
        said = getattr(self.get, name, None)
        return said(phases) if callable(said) and id(phases) in self.ids else nothing

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        return str(self._said("unmeasured", phases, ""))

    def unmeasured_ios(self, phases: list[PhaseSummary]) -> int | None:
        n = self._said("unmeasured_ios", phases, None)
        return int(n) if isinstance(n, int) else None

    def note(self, phases: list[PhaseSummary]) -> str:
        return str(self._said("note", phases, ""))

    def caveat(self, phases: list[PhaseSummary]) -> str:
        return str(self._said("caveat", phases, ""))


def _only_from(get: Callable[[list[PhaseSummary]], float | None], ids: set[int]) -> _OnlyFrom:
    return _OnlyFrom(get, frozenset(ids))


def mixed_overlays(tests: Sequence[str]):
    """The overlay pages of a forced comparison of runs of different tests: each test's own,
    drawn from the runs of that test only (another test's cells are another stimulus)."""

    def draw(runs: list, labels: list[str]) -> list:
        pages: list = []
        for test in dict.fromkeys(tests):
            t = registry.find(test)
            own = [i for i, x in enumerate(tests) if x == test]
            if t is not None and t.overlays is not None:
                pages += t.overlays([runs[i] for i in own], [labels[i] for i in own])
        return pages

    return draw


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
