"""A timed cell's per-second series when the cell runs past its nominal time (a simulated
HDD draining its command queue), and the command aging that bounds one command's wait."""

from __future__ import annotations

import pytest

from iolab import targets
from iolab.core.results import RoundResult
from iolab.core.steady import SteadyRule
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.engines.sim import SimEngine
from iolab.pages.report.char_series import steady_figures

# sata-7200-hdd at the size --quick tests it; its outer zone reads and writes 190 MB/s
HDD = "sim:sata-7200-hdd?capacity_gb=0.536870912"
MEDIA_MBPS = 190.0
SEQ_1M_W = Workload.mix("seq", 0, 1024 * KiB, threads=1, queue_depth=32, duration_s=1.0)


def _cell(tmp_path, extra: str = "") -> RoundResult:
    """SEQ 1 MiB writes at QD32 for 1 s, write cache disabled (the enterprise profile)."""
    t, e = targets.parse_target(HDD + extra), SimEngine()
    e.set_write_cache(t, False)
    return e.run(t, SEQ_1M_W, tmp_path, "w")


def test_a_cell_that_drains_past_its_second_is_split_by_virtual_time(tmp_path):
    """The cell stops issuing at 1 s and completes what it had queued by 1.28 s. Before, it was
    one row ending at 1.0 s: 155.2 MB/s and 148 writes 'in' that second, a second in which
    the drive wrote 121.6 MB."""
    r = _cell(tmp_path)
    assert r.runtime_s > 1.1
    t = [s.t_s for s in r.series]
    spans = [b - a for a, b in zip([0.0, *t], t)]
    assert t[-1] == pytest.approx(r.runtime_s, abs=1e-9)
    assert spans[:-1] == pytest.approx([1.0] * (len(spans) - 1)) and 0 < spans[-1] < 0.98
    assert sum(s.write_iops * d for s, d in zip(r.series, spans)) == pytest.approx(r.write.ios)
    assert sum(s.mbps * 1e6 * d for s, d in zip(r.series, spans)) == pytest.approx(r.write.io_bytes)
    for s, d in zip(r.series, spans):
        # the medium's rate over the row, plus one write that began before the row did
        assert s.mbps * 1e6 * d <= MEDIA_MBPS * 1e6 * d + 1024 * KiB, (s, d)


def test_a_queued_write_does_not_wait_the_whole_cell(tmp_path):
    """Shortest positioning time first passes over the cell's first write until nothing else
    is queued: with aging off (age_weight_pct=0, the model before) its latency is the cell's
    whole runtime, to the nanosecond; with the preset's aging it is served within 0.75 s."""
    r = _cell(tmp_path / "aged")
    assert r.write.lat_max_us < 0.75e6, (r.write.lat_max_us, r.runtime_s)
    plain = _cell(tmp_path / "plain", "&age_weight_pct=0")
    assert plain.write.lat_max_us == pytest.approx(plain.runtime_s * 1e6, abs=0.01)


def test_a_bad_aging_weight_is_named():
    with pytest.raises(Exception, match="age_weight_pct"):
        SimEngine().prepare(targets.parse_target(HDD + "&age_weight_pct=500"))


def test_a_partial_last_row_is_no_second_of_the_spread():
    """A cell's drain (0.2 s at a tenth of the rate) is its own row, not a dip of the steady
    seconds: their spread stays flat."""
    t = [float(i) for i in range(1, 11)] + [10.2]
    iops = [100.0] * 10 + [10.0]
    spread, dips = steady_figures(t, iops, 0.0, SteadyRule())
    assert spread is not None and spread.seconds == 10 and spread.min == 100.0
    assert dips is not None and dips.count == 0
