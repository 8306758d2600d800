"""A phase's summary reads results.db once while it is unchanged, and again once it changed: the
run's table, its --json record and the record's per-round figures share one reading, and a
summary kept on an open store cannot outlive a write (by this store or, as resume does, by
another connection to the run)."""

from __future__ import annotations

from pathlib import Path

from iolab.core.results import Histogram, OpStats, RoundResult
from iolab.figures.summary import summarise, summarise_phase
from iolab.store import bulk as storebulk
from iolab.store.runstore import PhaseRow, RunStore


def _result(counts: tuple[int, ...]) -> RoundResult:
    hist = Histogram((10.0, 20.0, 500.0), counts, 600.0)
    read = OpStats(
        ios=sum(counts), io_bytes=4096 * sum(counts), iops=1000.0, mbps=4.1, lat_mean_us=12.0, lat_max_us=600.0,
        lat_min_us=9.0, histogram=hist,
    )  # fmt: skip
    write = OpStats(
        ios=0, io_bytes=0, iops=0.0, mbps=0.0, lat_mean_us=None, lat_max_us=None, lat_min_us=None, histogram=None
    )
    return RoundResult(read, write, runtime_s=1.0)


def _round(s: RunStore, rnd: int, counts: tuple[int, ...]) -> None:
    s.begin_round("main", rnd)
    for ordinal, key in enumerate(("a", "b")):
        s.add_cell("main", rnd, ordinal, "measure", key, "100/0", 4096, {}, _result(counts), 0.0, 1.0)
    s.finish_round("main", rnd)


def _histogram_reads(s: RunStore) -> list[str]:
    reads: list[str] = []
    s._db.set_trace_callback(lambda sql: reads.append(sql) if "FROM histograms" in sql else None)
    return reads


def _phase(s: RunStore) -> PhaseRow:
    [ph] = s.phases()
    return ph


def test_a_phase_is_read_once_for_its_window_and_its_rounds(tmp_path: Path):
    s = RunStore(tmp_path)
    try:
        s.begin_phase("main", 0)
        for rnd in (1, 2, 3):
            _round(s, rnd, (100 * rnd, 10, 1))
        reads = _histogram_reads(s)
        first = summarise(s)[0]
        assert first.window == (1, 2, 3)
        again = summarise(s)[0]
        per_round = [summarise_phase(s, first.phase, window=(r,)) for r in first.window]
        assert len(reads) == 1, reads  # six summaries, one query
        assert again.cells == first.cells
        # the figures are the stored ones: window merge exact, each round its own
        a = first.cell("100/0", 4096)
        assert a is not None and a.histogram is not None
        assert a.histogram.counts == (600, 30, 3) and a.histogram.max_us == 600.0
        assert [p.cell("100/0", 4096).histogram.counts for p in per_round] == [(100, 10, 1), (200, 10, 1), (300, 10, 1)]
        assert storebulk.histograms(s, [c.id for c in first.rows]) == {c.id: s.histogram(c.id) for c in first.rows}
    finally:
        s.close()


def test_a_kept_summary_does_not_outlive_a_write_by_this_store_or_another(tmp_path: Path):
    s = RunStore(tmp_path)
    try:
        s.begin_phase("main", 0)
        _round(s, 1, (100, 10, 1))
        assert summarise(s)[0].window == (1,)
        _round(s, 2, (200, 10, 1))  # this store writes
        ph = summarise(s)[0]
        assert ph.window == (1, 2) and ph.cell("100/0", 4096).histogram.counts == (300, 20, 2)
        other = RunStore(tmp_path)  # another connection to the run writes (a resume)
        try:
            _round(other, 3, (400, 10, 1))
        finally:
            other.close()
        ph = summarise(s)[0]
        assert ph.window == (1, 2, 3) and ph.cell("100/0", 4096).histogram.counts == (700, 30, 3)
        assert summarise_phase(s, _phase(s), window=(3,)).cell("100/0", 4096).histogram.counts == (400, 10, 1)
    finally:
        s.close()


def _cell_reads(s: RunStore) -> list[str]:
    reads: list[str] = []
    s._db.set_trace_callback(lambda sql: reads.append(sql) if "FROM cells" in sql else None)
    return reads


def test_the_cells_are_read_once_while_unchanged_and_again_after_any_write(tmp_path: Path):
    """The summary, the audit and the steady-state evidence each ask for the same cells (7 to 17
    reads in a run's end, `show` and `check`): one query for each kind until results.db changes,
    by this store, inside its own transaction or by another connection (a resume)."""
    s = RunStore(tmp_path)
    try:
        s.begin_phase("main", 0)
        _round(s, 1, (100, 10, 1))
        reads = _cell_reads(s)
        every = s.cells()
        assert [c.cell_key for c in every] == ["a", "b"]
        assert s.cells("main") == every and s.cells() == every and s.cells("other") == []
        assert len(reads) == 1, reads
        s.cells().clear()  # a caller's list is its own
        assert s.cells() == every
        _round(s, 2, (200, 10, 1))  # this store writes
        assert [(c.round, c.cell_key) for c in s.cells()] == [(1, "a"), (1, "b"), (2, "a"), (2, "b")]
        with s._tx():  # a write not yet committed is read (no run reads so, but a kept list must not hide it)
            s._db.execute("UPDATE cells SET cell_key='c' WHERE round=2 AND ordinal=1")
            assert s.cells()[-1].cell_key == "c"
        other = RunStore(tmp_path)  # another connection writes
        try:
            _round(other, 3, (300, 10, 1))
        finally:
            other.close()
        assert [c.round for c in s.cells()] == [1, 1, 2, 2, 3, 3]
        assert len(reads) == 4, reads  # the first, after each of the three writes
    finally:
        s.close()
