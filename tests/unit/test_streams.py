"""Stream analysis: hand-computed small traces (SEQ rule, outstanding IO, steps) and the
exact stream mix of a generated trace."""

from __future__ import annotations

import json

import pytest

from iolab.core.errors import IolabError
from iolab.core.workload import Stream
from iolab.traces.analysis.streams import analyse
from iolab.traces.analysis.streamstats import SeqRule, StreamAnalysis
from iolab.traces.synth import SynthSpec, generate
from iolab.traces.table import table_from_rows

US = 1000  # ns
S = 10**9


def by_label(a: StreamAnalysis) -> dict[str, int]:
    return {s.label(): s.ios for s in a.streams}


def test_seq_rule_follows_recent_ends_of_the_same_direction(tmp_path):
    rows = [
        (0, "d", "read", 0, 4096, "p", None),  # RND (nothing before)
        (1, "d", "read", 4096, 4096, "p", None),  # SEQ: starts where IO 0 ended
        (2, "d", "write", 8192, 4096, "p", None),  # RND: the read that ended at 8192 is another direction
        (3, "d", "read", 10**9, 4096, "p", None),  # RND
        (4, "d", "read", 8192, 4096, "p", None),  # SEQ: IO 1 ended here, 2 reads back
        (5, "d", "read", 12288 + 512, 4096, "p", None),  # RND, or SEQ with a 512 B gap allowed
        (6, "e", "read", 4096 + 8192, 8192, "p", None),  # RND: other device
    ]
    t = table_from_rows(rows, tmp_path / "t.parquet")
    a = analyse(t)
    assert by_label(a) == {"RND 4KiB R": 3, "SEQ 4KiB R": 2, "RND 4KiB W": 1, "RND 8KiB R": 1}
    # Looking back one read only: IO 4 no longer follows IO 1.
    assert by_label(analyse(t, seq=SeqRule(lookback=1))) == {
        "RND 4KiB R": 4,
        "SEQ 4KiB R": 1,
        "RND 4KiB W": 1,
        "RND 8KiB R": 1,
    }
    assert by_label(analyse(t, seq=SeqRule(gap_bytes=512)))["SEQ 4KiB R"] == 3
    with pytest.raises(IolabError, match="lookback"):
        SeqRule(lookback=0)


def test_outstanding_io_and_response_times_by_hand(tmp_path):
    # Steps of 20 µs. IO a: [0, 10) µs; b: [5, 25) crosses into step 1; c: [30, 35).
    rows = [
        (0 * US, "d", "read", 0, 4096, None, 10.0),
        (5 * US, "d", "write", 1 << 20, 4096, None, 20.0),
        (30 * US, "d", "read", 1 << 30, 4096, None, 5.0),
    ]
    a = analyse(table_from_rows(rows, tmp_path / "t.parquet"), step_s=20e-6)
    s0, s1 = a.steps
    assert a.duration_s == pytest.approx(35e-6)
    assert (s0.duration_s, s1.duration_s) == pytest.approx((20e-6, 15e-6))
    assert (s0.ios, s1.ios) == (2, 1)
    assert s0.oio_avg == pytest.approx((10 + 15) / 20)  # a fully, b for 15 of its 20 µs
    assert s1.oio_avg == pytest.approx((5 + 5) / 15)  # b's last 5 µs, c
    assert (s0.oio_max, s1.oio_max) == (2, 1)  # step 1 starts with b still in flight
    assert s0.rt_avg_us == pytest.approx(15.0) and s0.rt_max_us == 20.0
    assert s0.read_pct == 50.0 and s1.read_pct == 100.0
    assert s0.iops == pytest.approx(2 / 20e-6) and s0.mbps == pytest.approx(8192 / 20e-6 / 1e6)


def test_idle_steps_and_outstanding_carried_over(tmp_path):
    # One long IO spans three 1 s steps; a second IO in step 3. Steps 1 and 2 have no issue.
    rows = [(0, "d", "read", 0, 4096, None, 2.5e6), (3 * S, "d", "read", 4096, 4096, None, 1e6)]
    a = analyse(table_from_rows(rows, tmp_path / "t.parquet"), step_s=1)
    assert [s.ios for s in a.steps] == [1, 0, 0, 1]
    assert [s.oio_max for s in a.steps] == [1, 1, 1, 1]
    assert [round(s.oio_avg, 6) for s in a.steps] == [1.0, 1.0, 0.5, 1.0]
    assert a.steps[1].iops == 0.0 and a.steps[1].read_pct is None and a.steps[1].rt_avg_us is None


def test_trace_without_response_times_has_no_outstanding_io(tmp_path):
    rows = [(i * 1000, "d", "write", i * 4096, 4096, None, None) for i in range(10)]
    a = analyse(table_from_rows(rows, tmp_path / "t.parquet"))
    assert not a.has_latency
    assert a.steps and all(s.oio_avg is None and s.oio_max is None and s.rt_avg_us is None for s in a.steps)
    assert a.oio_avg() is None
    assert by_label(a) == {"SEQ 4KiB W": 9, "RND 4KiB W": 1}


def test_excluded_ops_and_filters(tmp_path):
    rows = [
        (0, "a", "read", 0, 4096, "db", 1.0),
        (1, "a", "trim", 0, 4096, "db", 1.0),
        (2, "a", "flush", 0, 0, "db", 1.0),
        (3, "a", "write", 0, 0, "db", 1.0),
        (4, "b", "write", 0, 8192, "backup", 1.0),
        (5, "a", "read", 4096, 4096, "backup", 1.0),
    ]
    t = table_from_rows(rows, tmp_path / "t.parquet")
    assert t.zero_length_dropped == 1  # the 0-byte write: dropped as the table is written; the flush kept
    a = analyse(t)
    assert (a.total_ios, a.excluded_ios) == (3, 2)
    assert by_label(analyse(t, devices=("a",))) == {"RND 4KiB R": 1, "SEQ 4KiB R": 1}
    assert by_label(analyse(t, process="backup")) == {"RND 8KiB W": 1, "RND 4KiB R": 1}
    with pytest.raises(
        IolabError, match="no reads or writes match --process nobody; nothing to analyse. The trace.s processes: "
    ):
        analyse(t, process="nobody")


MIX = (
    Stream("rnd", "read", 8192, 0.40),
    Stream("seq", "write", 512, 0.30),
    Stream("rnd", "read", 65536, 0.20),
    Stream("seq", "read", 65536, 0.08),
    Stream("rnd", "write", 4096, 0.02),
)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    spec = SynthSpec(MIX, 60_000, iops=5000, latency_us=400, seed=3)
    return generate(spec, tmp_path_factory.mktemp("g") / "t.parquet")


def test_generated_mix_is_found_exactly(generated):
    table, truth = generated
    a = analyse(table, step_s=2, seq=SeqRule(lookback=256))
    assert a.total_ios == truth.total == 60_000
    got = {(s.access, s.op, s.block_size): s.ios for s in a.streams}
    # Exactly the generator's counts, except that the first IO of each SEQ stream has
    # nothing before it and counts as RND (of the same direction and size).
    want = {(s.access, s.op, s.block_size): n for s, n in truth.counts.items()}
    for s in truth.counts:
        if s.access == "seq":
            want[("seq", s.op, s.block_size)] -= 1
            want[("rnd", s.op, s.block_size)] = want.get(("rnd", s.op, s.block_size), 0) + 1
    assert got == want
    assert [s.label() for s in a.dominant] == ["RND 8KiB R", "SEQ 0.5KiB W", "RND 64KiB R", "SEQ 64KiB R"]
    assert a.dominant_pct == pytest.approx(98.0, abs=0.01)
    assert sum(s.ios for s in a.steps) == a.total_ios
    # Little's law on the generator's own figures: 5000 IOPS x 400 µs = 2 outstanding.
    assert a.oio_avg() == pytest.approx(2.0, rel=0.05)
    assert sum(s.rt_avg_us * s.ios for s in a.streams) / a.total_ios == pytest.approx(400, rel=0.03)
    assert a.steps[0].iops == pytest.approx(5000, rel=0.05)


def test_chunking_does_not_change_the_result(generated):
    table, _ = generated
    whole = analyse(table, step_s=1)
    small = analyse(table, step_s=1, chunk_rows=977)
    # Identical counts; sums of response times differ only by float summation order.
    assert rounded(small.to_json()) == rounded(whole.to_json())


def rounded(x):
    if isinstance(x, float):
        return float(f"{x:.10g}")
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [rounded(v) for v in x]
    return x


def test_save_and_load(generated, tmp_path):
    a = analyse(generated[0], step_s=5)
    p = a.save(tmp_path / "a.json")
    assert StreamAnalysis.load(p) == a
    p.write_text('{\n  "source": 1,\n')
    with pytest.raises(IolabError, match=r"a.json:3: not valid JSON"):
        StreamAnalysis.load(p)
    p.write_text(json.dumps({"source": "x"}))
    with pytest.raises(IolabError, match="not a stream analysis"):
        StreamAnalysis.load(p)


def test_bad_parameters(generated):
    with pytest.raises(IolabError, match="step must be > 0"):
        analyse(generated[0], step_s=0)
    with pytest.raises(IolabError, match="threshold"):
        analyse(generated[0], threshold=3)


def test_synthesis_caps_duckdb_memory(tmp_path, monkeypatch):
    """Synthesis of a long trace must not let DuckDB take 80 % of RAM (its default)."""
    import iolab.traces.synth as synth
    from iolab.traces.readers import IMPORT_MEMORY

    real = synth.connect
    seen: list[str] = []

    def spy(*args, **kwargs):
        con = real(*args, **kwargs)
        seen.append(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
        return con

    monkeypatch.setattr(synth, "connect", spy)
    generate(SynthSpec((Stream("rnd", "read", 4096, 1.0),), 1000), tmp_path / "t.parquet")
    capped = real(memory_limit=IMPORT_MEMORY).execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    default = real().execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    assert capped != default
    assert seen and set(seen) == {capped}


def test_the_row_filter_is_left_out_only_where_the_table_passes_it(tmp_path, monkeypatch):
    """The scan filters rows only for what the table may hold (trims, zero sizes, NULLs); a
    table of reads and writes analyses the same with and without the filter. (Zero sizes: a
    table written before the writer dropped them, as the writer without that step makes it.)"""
    from iolab.traces import table as tables
    from iolab.traces.analysis.streams import _io_filter
    from iolab.traces.table import TraceTable, connect

    keep_all = tables._without_zero_length

    rows = [(i * US, "d", "read" if i % 3 else "write", (i % 7) * 4096, 4096, "p", 50.0) for i in range(200)]
    con = connect()
    cases = {
        "clean": (rows, ("TRUE", False, True)),
        "trim": (rows + [(300 * US, "d", "trim", 0, 4096, "p", 5.0)], ("op IN ('read', 'write')", False, True)),
        "zero": (rows + [(300 * US, "d", "write", 0, 0, "p", 5.0)], ("size_bytes > 0", False, True)),
        "no rt": (rows + [(300 * US, "d", "write", 0, 4096, "p", None)], ("TRUE", True, True)),
        "two devices": (rows + [(300 * US, "e", "write", 0, 4096, "p", 5.0)], ("TRUE", False, False)),
    }
    results = {}
    for name, (r, want) in cases.items():
        monkeypatch.setattr(
            tables, "_without_zero_length", (lambda c, sql, s: (sql, 0)) if name == "zero" else keep_all
        )
        t = table_from_rows(r, tmp_path / f"{name}.parquet")
        *got, bound = _io_filter(con, TraceTable.open(t.path))
        assert tuple(got) == want, name
        # the footer's bound on the last end: at or past every IO's end (issue + response time),
        # and no further than the latest issue plus the longest response time (+1 µs)
        ends = [row[0] + (row[6] or 0) * 1000 for row in r]
        assert max(ends) <= bound <= max(row[0] for row in r) + max(row[6] or 0 for row in r) * 1000 + 1000, name
        results[name] = analyse(t, step_s=1e-4)
    base = results["clean"]
    for name in ("trim", "zero"):
        assert results[name].streams == base.streams and results[name].excluded_ios == 1
    assert by_label(results["no rt"])["RND 4KiB W"] == by_label(base)["RND 4KiB W"] + 1
    assert results["no rt"].streams[0].rt_avg_us == base.streams[0].rt_avg_us


def test_seq_flags_match_the_rule_applied_io_by_io(tmp_path):
    """The vectorised SEQ rule (one group or several, chunked or not) against the rule
    written out per IO, on traces where offsets often repeat recent ends."""
    import random

    for seed, ndev, ops in ((1, 1, ("read",)), (2, 1, ("read", "write")), (3, 4, ("read", "write"))):
        rnd = random.Random(seed)
        rows, ends = [], []
        for i in range(1500):
            dev, op = f"d{rnd.randrange(ndev)}", rnd.choice(ops)
            near = [e for d, o, e in ends[-200:] if (d, o) == (dev, op)]
            off = rnd.choice(near) if near and rnd.random() < 0.6 else rnd.randrange(1 << 16) * 512
            size = rnd.choice((512, 4096, 8192))
            rows.append((i * US, dev, op, off, size, "p", 10.0))
            ends.append((dev, op, off + size))
        lookback = 8
        seq, recent = 0, {}
        for _, dev, op, off, size, _, _ in rows:
            last = recent.setdefault((dev, op), [])
            seq += off in last[-lookback:]
            last.append(off + size)
        t = table_from_rows(rows, tmp_path / f"s{seed}.parquet")
        for chunk in (1_000_000, 333):
            a = analyse(t, seq=SeqRule(lookback=lookback), chunk_rows=chunk)
            assert sum(s.ios for s in a.streams if s.access == "seq") == seq, (seed, chunk)


def test_the_commands_limit_of_steps_is_the_analysiss(tmp_path):
    """`--max-steps` defaults to MAX_STEPS (the command states it, to start without the analysis's
    imports), and analyse() refuses past it before walking the trace."""
    import inspect

    from iolab.cli.traces import analyze
    from iolab.traces.analysis.streams import MAX_STEPS

    assert inspect.signature(analyze).parameters["max_steps"].default.default == MAX_STEPS
    rows = [(0, "d", "read", 0, 4096, None, 10.0), (3 * S, "d", "read", 4096, 4096, None, 10.0)]
    t = table_from_rows(rows, tmp_path / "t.parquet")
    with pytest.raises(IolabError, match=r"3,001 steps, more than the limit of 3,000 .* --step 1.001ms or longer"):
        analyse(t, step_s=1e-3, max_steps=3000)
    assert len(analyse(t, step_s=1e-3, max_steps=3001).steps) == 3001
