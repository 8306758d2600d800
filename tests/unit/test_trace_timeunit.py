"""The time-unit guess of the formats whose unit varies: physically impossible readings are
ruled out, the guess says how sure it is, and an MQSim trace with busy-SSD gaps is read in ns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from iolab.traces import import_trace
from iolab.traces.timeunit import detect


def busy_mqsim(path: Path) -> int:
    """A DiskSim ASCII trace as MQSim writes it (whole ns, device 13, 8 or 16 KiB) with the
    character of its tpcc-small.trace: a 13 µs median gap between IOs and a ~0.136 s span."""
    rng = np.random.default_rng(11)
    gaps = np.maximum(1, np.round(rng.exponential(18.8, 7250))) * 1000
    t = 938_944_000 + np.concatenate([[0], np.cumsum(gaps[:-1])]).astype(np.int64)
    assert np.median(np.diff(np.unique(t))) == 13_000
    path.write_text(
        "".join(
            f"{int(ti)} 13 {int(rng.integers(0, 23_000_000)) * 16} {int(rng.choice([16, 32]))} "
            f"{int(rng.integers(0, 2))}\n"
            for ti in t
        )
    )
    return int(t[-1] - t[0])


def test_busy_mqsim_trace_is_read_in_ns_and_called_ambiguous(tmp_path):
    p = tmp_path / "tpcc-small.trace"
    span_ns = busy_mqsim(p)
    assert 0.13 < span_ns / 1e9 < 0.14
    r = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "trace", "import", str(p), "-o", str(tmp_path / "t.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "span: 135 ms from the first IO to the last" in out  # was 2.3 min (135 s): read as µs
    assert "time unit: ns (guessed, ambiguous: assumed ns, MQSim's and SSDsim's unit for whole-number times" in out
    assert "us: median gap 13 ms, 53.6 IOPS over 135 s" in out
    assert "Pass --time-unit if ns is wrong" in out


def test_a_unit_faster_than_any_device_is_ruled_out_for_the_device_count():
    # 1,000 IOs 50 units apart: as ns, 20 M IOPS on one device, impossible; ms and s remain
    # possible, so the guess is "likely", not "certain".
    times = np.arange(1000, dtype=float) * 50
    got = detect(times, fractional=False, default="us", fmt="x")
    assert got.unit == "us" and got.sureness == "likely", got.reason
    assert (
        "ns: impossible, a burst of 100 IOs at 19,801,980 IOPS on one device, beyond any device (~10 M)" in got.reason
    )
    # The same IOs over four devices are 5 M IOPS each: possible.
    got = detect(times, fractional=False, default="us", fmt="x", devices=4)
    assert "ns: impossible" not in got.reason and "ns: median gap 50 ns, 5,005,005 IOPS per device" in got.reason


def test_bandwidth_beyond_any_device_rules_a_unit_out():
    # 1 MiB IOs 2,000 units apart: as ns 519 GB/s, impossible though 500 k IOPS is not.
    times = np.arange(500, dtype=float) * 2000
    got = detect(times, fractional=False, default="us", fmt="x", sizes=np.full(500, 2**20))
    assert "ns: impossible, bursts of 519 GB/s on one device, beyond any device (~100 GB/s)" in got.reason
    assert got.unit == "us"


def test_only_possible_unit_is_certain():
    # Fractional times rule ns out; times near 10^10 rule out s (past 126 years); a gap of
    # 0.02 rules out us (100 IOs in 2 µs); ms is the one unit left.
    times = 1e10 + np.arange(300) * 0.02
    got = detect(times, fractional=True, default="us", fmt="x")
    assert (got.unit, got.sureness) == ("ms", "certain"), got.reason
    assert got.reason.startswith("guessed, certain: ms, the only unit that gives rates a device can do")


def test_forced_unit_overrides_the_guess(tmp_path):
    p = tmp_path / "tpcc-small.trace"
    span_ns = busy_mqsim(p)
    t = import_trace(p, "disksim", tmp_path / "us.parquet", time_unit="us")
    assert abs(t.duration_s - span_ns / 1e6) < 1e-6
