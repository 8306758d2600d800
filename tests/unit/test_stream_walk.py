"""The stream analysis's compiled walk (`iolab._sim.StreamWalk`, crates/sim/src/streams.rs)
against main's numpy passes (stream_reference.py): the analysis JSON must be the same byte for
byte on random traces that reach every corner the passes handle (several devices and none,
trims, zero sizes, missing response times, IOs issued at one instant and completing at once,
IOs spanning steps, lookbacks 1 to 100, gaps, tiny chunks, chunks too spread for the dense
table), and the walk's Python surface refuses what it cannot read."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from iolab import _sim
from iolab.traces.analysis import streams
from iolab.traces.analysis.streams import analyse
from iolab.traces.analysis.streamstats import SeqRule
from iolab.traces.table import CORE_COLUMNS, SQL_TYPES, connect, write_table
from tests.unit.stream_reference import NumpyAccumulator


def random_rows(rnd: random.Random) -> list[tuple]:
    devices = rnd.choice([("d0",), ("d0", "d1", None), tuple(f"d{i}" for i in range(rnd.choice((2, 5, 11))))])
    odd = rnd.random() < 0.2  # sizes with no common power of two, up to 1 MiB: a sparse table
    rows, ends, t = [], [], 0
    for _ in range(rnd.randrange(1, 700)):
        t += rnd.choice((0, 0, 1, 7, 1000, 50_000, rnd.randrange(10**7)))  # repeats: IOs at one instant
        dev, op = rnd.choice(devices), rnd.choice(("read", "write", "write", "read", "trim"))
        near = [e for d, o, e in ends[-150:] if (d, o) == (dev, op)]
        off = (
            rnd.choice(near) + rnd.choice((0, 0, 0, 512, 4096))
            if near and rnd.random() < 0.6
            else rnd.randrange(1 << 20) * 512
        )
        size = rnd.randrange(1, 1 << 20) if odd and rnd.random() < 0.3 else rnd.choice((0, 512, 4096, 8192, 65536))
        lat = rnd.choice((None, 0.0, 0.0004, 1.0, 37.5, 250.0, rnd.uniform(0, 5e4), rnd.uniform(0, 2e6)))
        rows.append((t, dev, op, off, size, rnd.choice(("p", "q")), lat))
        ends.append((dev, op, off + size))
    if rnd.random() < 0.2:  # a trace without response times
        rows = [r[:6] + (None,) for r in rows]
    return rows


def make_table(rows: list[tuple], out):
    """`table_from_rows` without its row-by-row inserts (a quarter of a second per trace)."""
    con = connect()
    try:
        con.register("r", {c: np.array(col, dtype=object) for c, col in zip(CORE_COLUMNS, zip(*rows))})
        cols = ", ".join(f"CAST({c} AS {SQL_TYPES[c]}) AS {c}" for c in CORE_COLUMNS)
        return write_table(con, f"SELECT {cols} FROM r", out, fmt="rows", sources=("rows",), presorted=True)
    finally:
        con.close()


def both(table, **kw) -> tuple[str, str]:
    walked = json.dumps(analyse(table, **kw).to_json())
    orig = streams.Accumulator
    streams.Accumulator = NumpyAccumulator
    try:
        reference = json.dumps(analyse(table, **kw).to_json())
    finally:
        streams.Accumulator = orig
    return walked, reference


def test_the_walk_matches_the_numpy_passes_on_random_traces(tmp_path):
    rnd = random.Random(35)
    compared = 0
    for i in range(30):
        rows = random_rows(rnd)
        if not any(r[2] in ("read", "write") and r[4] > 0 for r in rows):
            continue
        table = make_table(rows, tmp_path / f"t{i}.parquet")
        span_s = (max(r[0] for r in rows) + max(r[6] or 0 for r in rows) * 1000) / 1e9
        steps = [s for s in (1e-6, 1e-4, 0.003, 0.1, 300.0) if span_s / s < 3000]  # the result's steps are Python
        kw = {
            "step_s": rnd.choice(steps),
            "seq": SeqRule(lookback=rnd.randrange(1, 101), gap_bytes=rnd.choice((0, 0, 512, 8192))),
            "chunk_rows": rnd.choice((37, 101, 1_000_000)),
        }
        if rnd.random() < 0.2:
            kw["devices"] = ("d1",) if any(r[1] == "d1" for r in rows) else ()
        walked, reference = both(table, **kw)
        assert walked == reference, (i, kw)
        compared += 1
    assert compared > 22


def test_the_walk_matches_the_numpy_passes_on_a_generated_trace(tmp_path):
    from iolab.core.workload import Stream
    from iolab.traces.synth import SynthSpec, generate

    mix = (Stream("seq", "write", 512, 0.4), Stream("rnd", "read", 8192, 0.4), Stream("seq", "read", 65536, 0.2))
    table, _ = generate(SynthSpec(mix, 30_000, iops=50_000.0, latency_us=250.0), tmp_path / "g.parquet")
    for kw in ({"step_s": 0.05}, {"step_s": 0.0001, "chunk_rows": 4999}):
        walked, reference = both(table, **kw)
        assert walked == reference, kw


COLUMNS = {
    "time_ns": "range::BIGINT",
    "w": "0::UTINYINT",
    "offset_bytes": "0::BIGINT",
    "size_bytes": "512::BIGINT",
    "lat": "1.0::DOUBLE",
}


def walked(con, change: dict | None = None) -> list:
    """Every chunk the walk gives for a 4-IO stream with `change`d column expressions."""
    cols = {**COLUMNS, **(change or {})}
    query = "SELECT " + ", ".join(f"{e} AS {c}" for c, e in cols.items() if e is not None) + " FROM range(4)"
    walk = _sim.StreamWalk(step_ns=1000, lookback=4, gap_bytes=0, has_latency=True, max_steps=1000)
    try:
        walk.open(stream=con.sql(query), chunk_rows=1000)
        return list(iter(walk.next_chunk, None))
    finally:
        walk.close()


def test_the_walk_refuses_what_it_cannot_read():
    con = connect()
    [(rows, spread)] = walked(con)
    assert spread is None and [r[:6] for r in rows] == [(0, False, False, 512, 4, 4)]
    bad = [
        ({"size_bytes": "0::BIGINT"}, "sizes must be > 0"),
        ({"lat": "1.0::FLOAT"}, "Arrow format"),
        ({"w": "true"}, "Arrow format"),
        ({"offset_bytes": None}, "no column offset_bytes"),
        ({"offset_bytes": "CASE WHEN range = 2 THEN NULL ELSE 0 END::BIGINT"}, "NULLs"),
        ({"dev": "(range - 2)::INTEGER"}, "device code"),
    ]
    for change, message in bad:
        with pytest.raises(ValueError, match=message):
            walked(con, change)
    walk = _sim.StreamWalk(step_ns=1000, lookback=4, gap_bytes=0, has_latency=True, max_steps=1000)
    with pytest.raises(ValueError, match="Arrow C stream"):
        walk.open(stream=b"not a stream", chunk_rows=10)
    with pytest.raises(ValueError, match="must be > 0"):
        _sim.StreamWalk(step_ns=0, lookback=4, gap_bytes=0, has_latency=True, max_steps=1000)


def test_the_walk_refuses_steps_past_its_limit_before_allocating():
    """2 IOs 30 days apart in 1 ms steps: the walk asked for 41 GB and aborted the process
    (SIGABRT) instead of raising; an issue or a completion past max_steps is a ValueError."""
    con = connect()
    day_ns = 86_400 * 10**9
    query = f"SELECT range * {30 * day_ns} AS time_ns, 0::UTINYINT AS w, range * 4096 AS offset_bytes, 4096::BIGINT AS size_bytes, 10.0::DOUBLE AS lat FROM range(2)"
    walk = _sim.StreamWalk(step_ns=10**6, lookback=4, gap_bytes=0, has_latency=True, max_steps=100_000)
    try:
        walk.open(stream=con.sql(query), chunk_rows=1000)
        with pytest.raises(ValueError, match="past 100000 steps"):
            walk.next_chunk()
        with pytest.raises(ValueError, match="more than the limit of 100000 steps"):
            walk.finish(n_steps=2_592_000_001)
    finally:
        walk.close()
