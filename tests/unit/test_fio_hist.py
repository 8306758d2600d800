"""Each second's maximum latency from fio's clat histogram logs (lines written by hand in fio
3.x's format: time_ms, direction, block size, then 1856 per-interval bin counts)."""

from __future__ import annotations

import os

import pytest

from iolab.core.errors import EngineError
from iolab.engines import fio_hist
from iolab.engines.fio_parse import parse_fio_logs


def line(t_ms: int, ddir: int, counts: dict[int, int]) -> str:
    bins = [0] * fio_hist.PLAT_NR
    for i, n in counts.items():
        bins[i] = n
    return ", ".join(map(str, (t_ms, ddir, 4096, *bins)))


def test_bin_values_follow_fio():
    assert fio_hist.bin_value(100) == 100  # the first 128 bins are exact (ns)
    assert fio_hist.bin_value(128) == 129  # then 64 bins per power of two, at their middle
    assert fio_hist.bin_value(64 * 12 + 5) == pytest.approx(2**17 + 5.5 * 2**11)


def test_the_highest_bin_of_each_second_over_jobs_and_directions(tmp_path):
    a, b = tmp_path / "c_clat_hist.1.log", tmp_path / "c_clat_hist.2.log"
    a.write_text("\n".join([line(1001, 1, {100: 5, 700: 1}), line(2001, 1, {120: 9}), line(2001, 0, {900: 1})]) + "\n")
    b.write_text(line(1002, 1, {800: 2}) + "\n")
    got = fio_hist.maxima([a, b], 1000)
    assert got == {1: fio_hist.bin_value(800) / 1000, 2: fio_hist.bin_value(900) / 1000}


def test_the_maximum_joins_the_per_second_series(tmp_path):
    for kind, v in (("iops", 1000), ("bw", 4000), ("lat", 50_000)):
        (tmp_path / f"c_{kind}.1.log").write_text(f"1000, {v}, 1, 4096, 0\n2000, {v}, 1, 4096, 0\n")
    (tmp_path / "c_clat_hist.1.log").write_text(line(1001, 1, {700: 1}) + "\n")
    logs = sorted(tmp_path.glob("c_*.1.log"))
    series = parse_fio_logs(logs, maxima=fio_hist.maxima(fio_hist.files(tmp_path, "c"), 1000))
    assert [s.lat_max_us for s in series] == [fio_hist.bin_value(700) / 1000, None]
    assert series[0].lat_mean_us == 50.0


def test_a_damaged_line_fails_loudly(tmp_path):
    p = tmp_path / "c_clat_hist.1.log"
    p.write_text("1001, 1, 4096, 0, 3\n")
    with pytest.raises(EngineError, match="line 1"):
        fio_hist.maxima([p], 1000)


def test_a_fifo_as_a_log_is_called_so_not_waited_on(tmp_path):
    """A FIFO planted as a round's log hung resume (load_round) and the audit (reread.reseries)
    in open(): it is refused before it is opened; a missing log stays FileNotFoundError (the
    audit's "a log not kept")."""
    logs = [tmp_path / f"c_{k}.1.log" for k in ("iops", "bw", "lat")]
    for log in logs[:2]:
        log.write_text("1000, 1000, 1, 4096, 0\n")
    os.mkfifo(logs[2])
    os.mkfifo(tmp_path / "c_clat_hist.1.log")
    fifo = r"cannot be read \(a FIFO \(named pipe\), not a regular file\)"
    with pytest.raises(EngineError, match=rf"^fio log {tmp_path}/c_lat\.1\.log {fifo}"):
        parse_fio_logs(logs)
    with pytest.raises(EngineError, match=rf"^fio histogram log {tmp_path}/c_clat_hist\.1\.log {fifo}"):
        fio_hist.maxima(fio_hist.files(tmp_path, "c"), 1000)
    with pytest.raises(FileNotFoundError):
        fio_hist.maxima([tmp_path / "d_clat_hist.1.log"], 1000)


def test_a_log_line_too_long_for_any_log_is_refused(tmp_path):
    """A log is read a line at a time (one can run to GBs): a file without line ends is not read whole."""
    log = tmp_path / "c_clat_hist.1.log"
    log.write_bytes(b"1" * (2 << 20))
    with pytest.raises(EngineError, match="a line longer than 1 MiB"):
        fio_hist.maxima([log], 1000)
