"""A split round's per-second series (engines/merge.merge_series): the legs' rows summed where
every leg logged a second, and what they leave of each leg's totals as one last row, so that the
rows hold every leg's IOs and bytes however many rows each leg logged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from iolab.core.results import OpStats, RoundResult, SecondSample
from iolab.engines.merge import merge_series

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fio" / "split-legs"
BLOCK = 4000  # bytes an IO: 1,000 IOPS is 4 MB/s


def _ios(rows) -> tuple[float, float]:
    """(reads, MB) the rows hold: each row's rates × its own length."""
    ends = [r.t_s for r in rows]
    spans = [b - a for a, b in zip([0.0, *ends], ends)]
    return sum(r.read_iops * d for r, d in zip(rows, spans)), sum(r.mbps * d for r, d in zip(rows, spans))


def leg(rows, runtime_s: float | None = None, ios: float | None = None, lat_us: float = 100.0) -> RoundResult:
    """A read leg with these rows; its totals the IOs they hold unless `ios` says otherwise."""
    n = round(_ios(rows)[0] if ios is None else ios)
    read = OpStats(n, n * BLOCK, 0.0, 0.0, lat_us, lat_us, lat_us, None)
    end = runtime_s if runtime_s is not None else rows[-1].t_s
    return RoundResult(read=read, write=OpStats.idle(), runtime_s=end, series=tuple(rows))


def row(t_s: float, iops: float, lat: float | None = 100.0) -> SecondSample:
    return SecondSample(t_s, iops, 0.0, iops * BLOCK / 1e6, lat)


def test_the_legs_partial_last_rows_merge_into_one():
    """Two paths' rounds ran past their second second by 0.4 and 0.3 s: their rests are one
    row of 0.4 s, and the merged rows hold what the legs' rows hold. Before, rows were keyed
    by their rounded end: a rest of 0.3 s replaced its leg's second 2."""
    a = leg([row(1.0, 1000.0), row(2.0, 1000.0), row(2.4, 500.0, 300.0)])
    b = leg([row(1.0, 1000.0), row(2.0, 1000.0), row(2.3, 800.0, 300.0)])
    merged = merge_series([a, b])
    assert [r.t_s for r in merged] == [1.0, 2.0, 2.4]
    assert _ios(merged) == pytest.approx((a.read.ios + b.read.ios, (a.read.io_bytes + b.read.io_bytes) / 1e6))
    assert merged[-1].read_iops == pytest.approx((500 * 0.4 + 800 * 0.3) / 0.4)
    assert merged[-1].lat_mean_us == pytest.approx(300.0)


def test_a_leg_that_logged_no_row_is_in_the_merged_row():
    """A real two-path SEQ 128KiB round: one path logged its second 1 (1,594 IOPS) and ran on
    to 1.007 s, the other logged no line (fio's helper found no whole interval gone while it
    ran) for its 1,771 IOs. The merged series was that one path's row: 1,610 of the cell's
    3,381 IOs, and `iolab audit` failed series-totals on a sound run. Now no second is one both
    logged, so the round is one row over its length holding both, at their mean latency."""
    a = leg([row(1.0, 1594.0), row(1.007, 16 / 0.007, 300.0)], lat_us=280.0)
    b = leg([], runtime_s=1.002, ios=1771, lat_us=250.0)
    merged = merge_series([a, b])
    assert [r.t_s for r in merged] == [1.007]
    assert _ios(merged) == pytest.approx((3381, 3381 * BLOCK / 1e6))
    # a's rest is its whole row and tail (its rows' latencies), b's its round's
    assert merged[0].lat_mean_us == pytest.approx((1594 * 100.0 + 16 * 300.0 + 1771 * 250.0) / 3381)


def test_legs_whose_whole_seconds_end_apart_keep_every_legs_rest():
    """A byte budget split over two paths: one leg logged seconds 1 and 2 and ran to 2.3 s,
    the other finished its share at 1.9 s. The second both logged is a row; the rest of each
    (a's second 2 and its tail, b's 0.9 s after second 1) is one row to 2.3 s, its rate the
    mean over that row: no second 2 is made up for b, none is left without b. Before, the
    rests were dropped: the series was second 1 alone."""
    a = leg([row(1.0, 1000.0), row(2.0, 1200.0), row(2.3, 600.0)])
    b = leg([row(1.0, 900.0), row(1.9, 850.0)])
    merged = merge_series([a, b])
    assert [r.t_s for r in merged] == [1.0, 2.3]
    assert merged[0].read_iops == pytest.approx(1900.0)
    assert _ios(merged)[0] == pytest.approx(a.read.ios + b.read.ios)
    assert merged[1].read_iops == pytest.approx((1200 + 600 * 0.3 + 850 * 0.9) / 1.3)
    # a leg that logged one whole second more: the seconds both logged, then the rest
    c = leg([row(1.0, 1000.0), row(2.0, 1000.0), row(3.0, 1000.0)])
    merged = merge_series([a, c])
    assert [r.t_s for r in merged] == [1.0, 2.0, 3.0]
    assert _ios(merged)[0] == pytest.approx(a.read.ios + c.read.ios)


def test_a_row_stamped_late_is_the_second_it_closes_not_the_next():
    """A real two-path 3 s round: one path's second 2 was stamped at 2.554 s (fio's helper late),
    its rest at 3.001 s; the other logged 1.005, 2.042 and 3.023 s. Keyed by its rounded stamp
    the late row was second 3, the other path's second 2 had no partner and was in no row: the
    rows held 2,727 of the round's 2,900 IOs and `iolab audit` failed series-totals. It closes
    second 2 (fio_parse's rule for a log line), so second 2 is a row of both."""
    a = leg([row(1.015, 797.0), row(2.554, 335.0), row(3.001, 808.7)])
    b = leg([row(1.005, 371.0), row(2.042, 402.0), row(3.023, 432.5)])
    merged = merge_series([a, b])
    assert [r.t_s for r in merged] == [1.015, 2.554, 3.023]
    assert merged[1].read_iops == pytest.approx(335.0 + 402.0)
    assert _ios(merged)[0] >= a.read.ios + b.read.ios


def test_a_late_log_stamp_never_makes_a_merged_rest_of_negative_rates():
    """One leg's second 1 was stamped at 1.4 s, the other's rest ended at 1.227 s: the merged
    rest ran from 1.4 s to 1.227 s and held -4,560 write IOPS (a VM's split over two NVMe
    controllers failed as 'impossible figures'). No rest row then, and no negative rate."""
    a = leg([row(1.0, 1000.0), row(1.227, 800.0, 120.0)])
    b = leg([row(1.4, 1000.0)], runtime_s=1.2)
    merged = merge_series([a, b])
    assert all(r.read_iops >= 0 and r.write_iops >= 0 and r.mbps >= 0 for r in merged)
    assert [r.t_s for r in merged] == [1.4]


def test_a_round_under_one_second_is_one_row_of_every_leg_or_none():
    """A byte-budget round of 0.9 s over two paths, one of which logged a partial row, the other
    none: one row of both legs' IOs (before, the logging leg's alone). No leg logged a row (fio
    logs none for a round under a second, fio_parse.whole_round): no row, as for one path."""
    a = leg([row(0.9, 1000.0)])
    merged = merge_series([a, leg([], runtime_s=0.88, ios=900)])
    assert [r.t_s for r in merged] == [0.9]
    assert _ios(merged)[0] == pytest.approx(1800)
    assert merge_series([leg([], runtime_s=0.9, ios=900), leg([], runtime_s=0.85, ios=800)]) == ()


def test_a_recorded_two_path_round_whose_legs_logged_apart_stores_every_io_and_the_audit_derives_it(tmp_path):
    """A real two-path WIPC round (tests/fixtures/fio/README.md, split-legs): one path logged
    second 1 and ended at 1.632 s, the other logged seconds 1 and 2 and ended at 2.282 s. Its
    merged rows held 2,976 of its 8,192 IOs; now they hold them all, within the bound the
    audit's series-totals check allows, and the audit's raw-figures re-derivation
    (reread.reseries) gives the same rows from the same files."""
    from iolab.engines.fio_parse import load_round
    from iolab.engines.merge import Part, merge
    from iolab.engines.reread import reread, reseries
    from iolab.figures.audit_series import Shape, findings

    raw = tmp_path / "raw"
    shutil.copytree(FIX, raw)
    legs = [load_round(raw, f"wipc.p{i}") for i in (0, 1)]
    assert [len(leg.series) for leg in legs] == [2, 3]  # the legs' own rows, as fio logged them
    merged = merge([Part(f"p{i}", r, 1, 16) for i, r in enumerate(legs)], "fio", legs[0].engine_version)
    assert [r.t_s for r in merged.series] == [1.003, 2.282]
    rows = [(r.t_s, r.read_iops, r.write_iops, r.mbps, r.lat_max_us) for r in merged.series]
    shape = Shape(merged.ios, merged.write.io_bytes, merged.runtime_s, 2, 16, 128 << 10)
    assert merged.ios == 8192
    for f in findings(rows, shape):
        assert not f.short and not f.over, f.text()
        assert f.rows_sum == pytest.approx(f.total, rel=0.01)
    got = reread(tmp_path, ["raw/wipc.p0.json", "raw/wipc.p1.json"])
    names = [f"raw/{p.name}" for p in sorted(raw.iterdir())]
    assert reseries(tmp_path, names, got) == merged.series


def test_the_audit_holds_a_split_stored_before_to_the_rule_it_was_merged_by(tmp_path):
    """A run stored before merge_series held every leg's rest has the old rule's rows (second 1
    alone for the recorded round): raw-figures derives those again from its raw logs, as it
    derives a cell counted by fio's issued IOs by that rule, rather than failing every split run
    stored before; rows edited since differ by either rule, and the rows the engine stores now agree."""
    from types import SimpleNamespace

    from iolab.engines.fio_parse import load_round
    from iolab.engines.merge_before import merge_series_before
    from iolab.engines.reread import reread
    from iolab.figures.audit_rederive import series_finding

    raw = tmp_path / "raw"
    shutil.copytree(FIX, raw)
    legs = [load_round(raw, f"wipc.p{i}") for i in (0, 1)]
    names = [f"raw/{p.name}" for p in sorted(raw.iterdir())]
    cell = SimpleNamespace(id=7, raw_files=names, read_ios=0, write_ios=8192)
    got = reread(tmp_path, ["raw/wipc.p0.json", "raw/wipc.p1.json"])

    def stored(series):
        return [(7, r.t_s, r.read_iops, r.write_iops, r.mbps, r.lat_mean_us, r.lat_max_us) for r in series]

    before = merge_series_before([leg.series for leg in legs])
    assert len(before) == 1  # the rows it stored: second 1, 2,976 of the 8,192 IOs
    assert series_finding(tmp_path, cell, got, stored(before)) == (True, None)  # type: ignore[arg-type]
    assert series_finding(tmp_path, cell, got, stored(merge_series(legs))) == (True, None)  # type: ignore[arg-type]
    edited = stored(before)
    edited[0] = (*edited[0][:3], edited[0][3] * 2, *edited[0][4:])
    found = series_finding(tmp_path, cell, got, edited)  # type: ignore[arg-type]
    assert found[0] and found[1]  # said against the rule now: "it holds 1 per-second row, its raw logs give 2"
