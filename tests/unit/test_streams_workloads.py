"""Composite and replay workloads from a stream analysis, their TOML files, and the plots."""

from __future__ import annotations

import pytest

from iolab.core.errors import IolabError
from iolab.pages.report.stream_plots import write_all
from iolab.traces.analysis.streams import analyse
from iolab.traces.analysis.workloads import composite, load_composite, load_replay, replay, save_composite
from iolab.traces.table import table_from_rows

S = 10**9


def trace(tmp_path, latency=True):
    """Three 1 s steps: step 0 is 6 RND 4K reads + 2 RND 64K writes (2 in flight), step 1 is
    idle, step 2 is one RND 8K read (a 1 % stream overall would need more IOs: the 8K read
    is 1 of 9 = 11 %)."""
    lat = 500_000.0 if latency else None  # 0.5 s
    rows = []
    for i in range(6):
        rows.append((i * S // 8, "d", "read", (i * 7919 + 13) << 20, 4096, None, lat))
    for i in range(2):
        rows.append((S // 2 + i * S // 8, "d", "write", (i * 104729 + 7) << 24, 65536, None, lat))
    rows.append((2 * S, "d", "read", 5 << 30, 8192, None, lat))
    return table_from_rows(rows, tmp_path / "t.parquet")


def test_composite_renormalises_the_dominant_streams(tmp_path):
    a = analyse(trace(tmp_path), step_s=1, threshold=0.2)
    w = composite(a)
    assert [(s.label(), round(s.share, 6)) for s in w.streams] == [("RND 4KiB R", 0.75), ("RND 64KiB W", 0.25)]
    assert sum(s.share for s in w.streams) == pytest.approx(1.0, abs=1e-12)
    # 9 IOs x 0.5 s in flight over 2.5 s: 1.8 outstanding on average -> QD 2.
    assert a.oio_avg() == pytest.approx(1.8)
    assert (w.threads, w.queue_depth, w.duration_s) == (1, 2, 60.0)
    assert composite(a, queue_depth=32, threads=4).outstanding == 128


def test_composite_needs_a_queue_depth_without_response_times(tmp_path):
    a = analyse(trace(tmp_path, latency=False), step_s=1)
    with pytest.raises(IolabError, match="no response times.*--qd"):
        composite(a)
    assert composite(a, queue_depth=8).queue_depth == 8
    with pytest.raises(IolabError, match="no stream reaches"):
        composite(analyse(trace(tmp_path, latency=False), threshold=0.9), queue_depth=1)


def test_replay_has_one_workload_per_step_with_its_mix(tmp_path):
    a = analyse(trace(tmp_path), step_s=1)
    r = replay(a, compress=10)
    assert [s.index for s in r.steps] == [0, 2] and r.skipped == (1,)
    s0, s2 = r.steps
    assert [(x.label(), x.share) for x in s0.streams] == [("RND 4KiB R", 0.75), ("RND 64KiB W", 0.25)]
    assert [(x.label(), x.share) for x in s2.streams] == [("RND 8KiB R", 1.0)]
    assert s0.duration_s == pytest.approx(0.1) and s2.duration_s == pytest.approx(0.05)
    ws = r.workloads()
    assert [w.queue_depth for w in ws] == [round(a.steps[0].oio_avg), max(1, round(a.steps[2].oio_avg))]
    assert all(w.duration_s for w in ws)
    # With a higher threshold only the dominant stream is replayed; step 2 has none of it.
    r2 = replay(analyse(trace(tmp_path), step_s=1, threshold=0.5))
    assert [s.index for s in r2.steps] == [0] and r2.skipped == (1, 2)
    assert replay(analyse(trace(tmp_path), step_s=1, threshold=0.5), streams="all").skipped == (1,)


def test_toml_files_round_trip(tmp_path):
    a = analyse(trace(tmp_path), step_s=1)
    w = composite(a, queue_depth=16)
    p = save_composite(w, tmp_path / "c.toml", a)
    back = load_composite(p)
    assert [(s.access, s.op, s.block_size) for s in back.streams] == [(s.access, s.op, s.block_size) for s in w.streams]
    assert [s.share for s in back.streams] == pytest.approx([s.share for s in w.streams], abs=1e-9)
    assert (back.queue_depth, back.threads, back.duration_s, back.name) == (16, 1, 60.0, w.name)
    r = replay(a, compress=2)
    rp = load_replay(r.save(tmp_path / "r.toml"))
    assert [(s.index, s.queue_depth, s.duration_s) for s in rp.steps] == [
        (s.index, s.queue_depth, s.duration_s) for s in r.steps
    ]
    assert rp.skipped == r.skipped and rp.compress == 2


def test_edited_files_are_checked_with_line_and_field(tmp_path):
    a = analyse(trace(tmp_path), step_s=1, threshold=0.2)
    p = save_composite(composite(a), tmp_path / "c.toml")
    text = p.read_text()
    lines = text.splitlines()
    n = lines.index('access = "rnd"', lines.index("[[stream]]", lines.index("[[stream]]") + 1)) + 1
    p.write_text(text.replace('access = "rnd"\nop = "write"', 'access = "random"\nop = "write"'))
    with pytest.raises(
        IolabError, match=rf"c.toml:{n}: \[\[stream\]\] #2: field 'access': expected 'rnd' or 'seq', got 'random'"
    ):
        load_composite(p)
    p.write_text(text.replace("block_size = 4096", 'block_size = "4KiB"').replace("share_pct = 75", "share_pct = 70"))
    with pytest.raises(IolabError, match=r"share_pct adds up to 95, not 100"):
        load_composite(p)
    p.write_text(text.replace("block_size = 4096", 'block_size = "4KiB"'))
    assert load_composite(p).streams[0].block_size == 4096
    p.write_text(text.replace("queue_depth = 2", "queue_depth = 0"))
    with pytest.raises(
        IolabError, match=r"c.toml:\d+: \[workload\]: field 'queue_depth': expected a whole number ≥ 1, got 0"
    ):
        load_composite(p)
    p.write_text(text.replace("[workload]", "[workload"))
    with pytest.raises(IolabError, match=r"c.toml:\d+: not valid TOML"):
        load_composite(p)
    r = replay(a).save(tmp_path / "r.toml")
    t = r.read_text()
    r.write_text(t.replace('op = "write"', 'op = "erase"', 1))
    line = next(i for i, ln in enumerate(t.splitlines(), 1) if 'op = "write"' in ln)
    with pytest.raises(IolabError, match=rf"r.toml:{line}: \[\[step\]\] #1 streams\[2\]: field 'op'"):
        load_replay(r)


def test_plots_are_written(tmp_path):
    a = analyse(trace(tmp_path), step_s=1)
    plots = write_all(a, tmp_path / "plots")
    assert set(plots) == {"stream_map", "stream_table", "outstanding", "response_times"}
    for p in plots.values():
        assert p.suffix == ".svg" and p.read_text().count("<text ") > 10
    # No response times: no outstanding-IO or response-time chart rather than an empty one.
    b = analyse(trace(tmp_path, latency=False), step_s=1)
    assert set(write_all(b, tmp_path / "plots2")) == {"stream_map", "stream_table"}
