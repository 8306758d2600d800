"""Parsing fio output: recorded fio 3.33 JSON+ and logs, and the converted fio 2.x shape.

Expected numbers were read by hand from the fixture files (see tests/fixtures/fio/README.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from iolab.core.errors import EngineError
from iolab.core.results import PERCENTILES
from iolab.engines.fio_parse import load_round, parse_fio_json, parse_fio_logs

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fio"


def text(name: str) -> str:
    return (FIX / name).read_text()


def final_report(name: str) -> dict:
    """The last JSON object of a fixture (status reports come first)."""
    t, dec, pos, last = text(name), json.JSONDecoder(), 0, None
    while (start := t.find("{", pos)) >= 0:
        last, pos = dec.raw_decode(t, start)
    return last


# -- fio 3.x ------------------------------------------------------------------------------


def test_randrw_numbers_come_from_the_final_report():
    r = parse_fio_json(text("randrw.json"), "randrw.json")
    assert r.engine == "fio" and r.engine_version == "fio-3.33"
    assert r.runtime_s == pytest.approx(2.501)
    rd, wr = r.read, r.write
    assert (rd.ios, rd.io_bytes) == (106637, 436785152)
    assert rd.iops == pytest.approx(42637.744902)
    assert rd.mbps == pytest.approx(174.644203)  # bw_bytes / 1e6
    # Recorded before iolab asked for total-latency bins: fio binned only completion latency,
    # so every latency figure is clat_ns (one definition), none is lat_ns.
    assert rd.latency == wr.latency == "completion"
    assert rd.lat_mean_us == pytest.approx(172.038128192)  # clat_ns
    assert (rd.lat_min_us, rd.lat_max_us) == (pytest.approx(0.115), pytest.approx(8640.870))
    assert (wr.ios, wr.io_bytes) == (57885, 237096960)
    assert wr.iops == pytest.approx(23144.742103)
    assert wr.mbps == pytest.approx(94.800863)
    assert wr.lat_mean_us == pytest.approx(354.75506487)
    assert wr.lat_max_us == pytest.approx(8679.797)
    assert r.ios == 106637 + 57885


def test_the_last_of_several_reports_is_the_final_one():
    # fio --status-interval prints a report every second and the final one last.
    final = final_report("randrw.json")
    early = json.loads(json.dumps(final))
    early["jobs"][0]["read"]["total_ios"] = 7
    early["jobs"][0]["read"]["clat_ns"]["N"] = early["jobs"][0]["read"]["lat_ns"]["N"] = 7
    t = json.dumps(early, indent=1) + "\n" + text("randrw.json")
    assert parse_fio_json(t, "x.json").read.ios == 106637
    assert parse_fio_json(text("randrw.json") + json.dumps(early), "x.json").read.ios == 7


def test_histogram_is_the_clat_bins_in_us_and_matches_fios_percentiles():
    report = final_report("randrw.json")
    r = parse_fio_json(text("randrw.json"), "randrw.json")
    for side, stats in (("read", r.read), ("write", r.write)):
        clat = report["jobs"][0][side]["clat_ns"]
        h = stats.histogram
        assert h.total == stats.ios == clat["N"]
        assert len(h.values_us) == len(clat["bins"])
        assert h.values_us[0] == min(int(k) for k in clat["bins"]) / 1000
        assert h.max_us == pytest.approx(clat["max"] / 1000)
        # Same rule as fio: our percentiles are fio's own, capped at the max.
        for pct, ns in clat["percentile"].items():
            assert h.percentile(float(pct)) == pytest.approx(min(ns, clat["max"]) / 1000)
    assert r.read.histogram.percentile(99.0) == pytest.approx(1236.992)
    for p in PERCENTILES:
        assert r.percentile(p) <= r.histogram.max_us


def test_total_latency_bins_give_every_figure_of_a_cell_one_definition():
    """mixlat.json was recorded with lat_percentiles=1 (iolab's job files ask for it): fio
    binned total latency, so mean, min, max and every percentile are total latency."""
    report = final_report("mixlat.json")
    r = parse_fio_json(text("mixlat.json"), "mixlat.json")
    for side, stats in (("read", r.read), ("write", r.write)):
        lat, _clat = report["jobs"][0][side]["lat_ns"], report["jobs"][0][side]["clat_ns"]
        assert stats.latency == "total"
        assert stats.lat_mean_us == pytest.approx(lat["mean"] / 1000)
        assert (stats.lat_min_us, stats.lat_max_us) == (
            pytest.approx(lat["min"] / 1000),
            pytest.approx(lat["max"] / 1000),
        )
        h = stats.histogram
        assert h.total == stats.ios == lat["N"]
        assert h.max_us == pytest.approx(lat["max"] / 1000)
        # our percentiles are fio's total-latency percentiles (capped at the max) ...
        for pct, ns in lat["percentile"].items():
            assert h.percentile(float(pct)) == pytest.approx(min(ns, lat["max"]) / 1000)
    # ... which are not the completion-latency ones: the median read differs by the submission time
    assert r.read.histogram.percentile(50.0) == pytest.approx(93.696)
    assert report["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"] / 1000 == pytest.approx(84.480)
    assert r.read.lat_mean_us == pytest.approx(239.141364431) and r.write.lat_max_us == pytest.approx(25575.067)


def test_write_only_round_has_an_idle_read_side_and_capped_percentiles():
    r = parse_fio_json(text("seqwrite.json"), "seqwrite.json")
    assert r.read.ios == 0 and r.read.iops == 0
    assert r.read.lat_mean_us is None and r.read.lat_max_us is None and r.read.histogram is None
    w = r.write
    assert (w.ios, w.io_bytes) == (14921, 1955725312)
    assert w.iops == pytest.approx(6779.191277)
    assert w.mbps == pytest.approx(888.562159)
    assert w.lat_mean_us == pytest.approx(531.453119429)  # clat_ns: no total-latency bins in this recording
    assert r.runtime_s == pytest.approx(2.201)
    # The top bin's value (6979.584 µs, the middle of fio's bucket) is above the largest
    # completion latency (6949.374 µs): iolab reports the max, never more.
    assert w.histogram.values_us[-1] == pytest.approx(6979.584)
    assert w.histogram.percentile(99.999) == pytest.approx(6949.374)
    assert r.lat_mean_us == pytest.approx(531.453119429)


def test_series_from_the_logs_hand_checked():
    logs = sorted(FIX.glob("randrw_*.log"))
    s = parse_fio_logs(logs)
    assert [p.t_s for p in s] == [1.0, 2.001]  # the 2.5 s partial interval is in lat logs only
    one = s[0]
    assert one.read_iops == 20738 + 25138
    assert one.write_iops == 11200 + 13547
    assert one.mbps == pytest.approx((82948 + 44800 + 100536 + 54188) * 1024 / 1e6)
    weighted = (141284 * 20738 + 449874 * 11200 + 129995 * 25138 + 343976 * 13547) / (20738 + 11200 + 25138 + 13547)
    assert one.lat_mean_us == pytest.approx(weighted / 1000)
    assert s[1].read_iops == 22363 + 17951 and s[1].write_iops == 12471 + 9649

    w = parse_fio_logs(sorted(FIX.glob("seqwrite_*.log")))
    assert [(p.t_s, p.read_iops, p.write_iops) for p in w] == [(1.0, 0, 5932), (2.0, 0, 7647)]
    assert w[0].mbps == pytest.approx(759296 * 1024 / 1e6)
    assert w[1].lat_mean_us == pytest.approx(478.346)


def test_load_round_lists_raw_files_relative_to_the_run_dir(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    for f in FIX.glob("randrw*"):
        shutil.copy(f, raw / f.name)
    r = load_round(raw, "randrw")
    assert "raw/randrw.fio" in r.raw_files and "raw/randrw.json" in r.raw_files
    assert "raw/randrw_iops.1.log" in r.raw_files and "raw/randrw_slat.2.log" in r.raw_files
    assert all(not Path(p).is_absolute() and (tmp_path / p).exists() for p in r.raw_files)
    assert len(r.series) == 3 and r.read.ios == 106637


def test_the_rest_of_a_round_after_its_last_logged_second_is_a_partial_row(tmp_path):
    """fio 3.33 writes no iops or bw log line for the interval a job ends in: the randrw
    round ran 2.501 s, its logs hold two seconds, and 20,407 reads and 11,018 writes of its
    last 0.5 s (a fifth of the round) were in no row. They are a last row of 0.5 s, at the
    rate of the seconds before it, and the rows add up to the round."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for f in FIX.glob("randrw*"):
        shutil.copy(f, raw / f.name)
    r = load_round(raw, "randrw")
    t = [p.t_s for p in r.series]
    spans = [b - a for a, b in zip([0.0, *t], t)]
    assert t[-1] == pytest.approx(r.runtime_s) and spans[-1] == pytest.approx(0.5)
    held = [sum(getattr(p, k) * d for p, d in zip(r.series, spans)) for k in ("read_iops", "write_iops", "mbps")]
    assert held[0] == pytest.approx(r.read.ios) and held[1] == pytest.approx(r.write.ios)
    assert held[2] * 1e6 == pytest.approx(r.read.io_bytes + r.write.io_bytes)
    tail = r.series[-1]
    assert tail.read_iops == pytest.approx(40813, abs=1) and tail.write_iops == pytest.approx(21992, abs=1)
    assert tail.lat_mean_us is None  # two jobs' final lat lines and no IO counts to weigh them by
    # one job: its lat log's final line is the tail's mean latency
    for f in FIX.glob("seqwrite*"):
        shutil.copy(f, raw / f.name)
    w = load_round(raw, "seqwrite", require_bins=False)
    assert [p.t_s for p in w.series] == [1.0, 2.0, 2.201] and w.series[-1].lat_mean_us == pytest.approx(549.471)


# -- fio 2.x (converted) --------------------------------------------------------------------


def test_fio2_json_plus_shape():
    r = parse_fio_json(text("fio2-randrw.json"), "fio2-randrw.json")
    assert r.engine_version == "fio-2.21"
    assert (r.read.ios, r.read.io_bytes) == (106637, 426548 * 1024)  # io_bytes was KiB
    assert r.read.mbps == pytest.approx(170550 * 1024 / 1e6)  # bw in KiB/s, no bw_bytes
    # fio 2.x bins completion latency only: every latency figure is clat (in µs)
    assert r.read.latency == "completion"
    assert r.read.lat_mean_us == pytest.approx(172.038128192)
    assert (r.read.lat_min_us, r.read.lat_max_us) == (0, 8641)
    assert r.write.ios == 57885 and r.write.lat_mean_us == pytest.approx(354.75506487)
    # Index-keyed bins: every IO is there, percentiles stay within fio 2.x's bucket error
    # (1/64 of a value) of the fio 3.x ones from the same IOs, and never above the max.
    v3 = parse_fio_json(text("randrw.json"), "randrw.json")
    for side2, side3 in ((r.read, v3.read), (r.write, v3.write)):
        assert side2.histogram.total == side2.ios
        assert side2.histogram.max_us == round(side3.histogram.max_us)  # 2.x: integer µs
        for p in PERCENTILES:
            assert side2.histogram.percentile(p) <= side2.histogram.max_us
            assert side2.histogram.percentile(p) == pytest.approx(side3.histogram.percentile(p), rel=0.02, abs=1.0)


def test_fio2_plain_json_has_no_histogram_rather_than_an_invented_one():
    r = parse_fio_json(text("fio2-randrw-plain.json"), "fio2-randrw-plain.json", require_bins=False)
    assert r.read.histogram is None and r.percentile(99) is None
    assert r.read.ios == 106637
    with pytest.raises(EngineError, match=r"jobs\[0\]\.read\.clat\.bins"):
        parse_fio_json(text("fio2-randrw-plain.json"), "fio2-randrw-plain.json")


# -- failures name what is wrong ------------------------------------------------------------


def broken(mutate) -> str:
    report = final_report("randrw.json")
    mutate(report)
    return json.dumps(report)


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda r: r["jobs"][0]["write"]["clat_ns"].pop("mean"), "jobs[0].write.clat_ns.mean"),
        (lambda r: r["jobs"][0]["read"].pop("bw_bytes"), "jobs[0].read.bw_bytes"),
        (lambda r: r["jobs"][0]["read"].pop("total_ios"), "jobs[0].read.total_ios"),
        (lambda r: r["jobs"][0]["read"]["clat_ns"].pop("bins"), "jobs[0].read.clat_ns.bins"),
        (lambda r: r["jobs"][0].pop("write"), "jobs[0].write"),
        (lambda r: r.pop("fio version"), "fio version"),
    ],
)
def test_missing_field_names_the_field_and_the_file(mutate, field):
    with pytest.raises(EngineError) as e:
        parse_fio_json(broken(mutate), "/runs/x/raw/r1.json")
    assert field in str(e.value) and "/runs/x/raw/r1.json" in str(e.value)


def test_other_failures_are_clear():
    with pytest.raises(EngineError, match="empty"):
        parse_fio_json(broken(lambda r: r.update(jobs=[])), "x.json")
    with pytest.raises(EngineError, match="error 5"):
        parse_fio_json(broken(lambda r: r["jobs"][0].update(error=5)), "x.json")
    with pytest.raises(EngineError, match="no JSON report.*cannot open"):
        parse_fio_json("fio: cannot open /dev/nvme9n1\n", "x.json")
    with pytest.raises(EngineError, match="no IO"):

        def idle(r):
            for d in ("read", "write"):
                r["jobs"][0][d]["total_ios"] = 0

        parse_fio_json(broken(idle), "x.json")
    with pytest.raises(EngineError, match="groups"):

        def two_groups(r):
            r["jobs"].append(dict(r["jobs"][0], groupid=1))

        parse_fio_json(broken(two_groups), "x.json")


def test_warnings_around_the_json_are_skipped():
    t = "fio: note: both iodepth >= 1 and synchronous I/O engine are selected\n" + text("seqwrite.json")
    assert parse_fio_json(t, "x.json").write.ios == 14921


def test_jobs_reported_separately_are_combined():
    def twice(r):
        r["jobs"].append(json.loads(json.dumps(r["jobs"][0])))

    r = parse_fio_json(broken(twice), "x.json")
    one = parse_fio_json(text("randrw.json"), "x.json")
    assert r.read.ios == 2 * one.read.ios
    assert r.read.iops == pytest.approx(2 * one.read.iops)
    assert r.read.lat_mean_us == pytest.approx(one.read.lat_mean_us)
    assert r.read.histogram.total == 2 * one.read.histogram.total
    assert r.read.lat_max_us == one.read.lat_max_us


# -- log bucketing --------------------------------------------------------------------------


def write_log(path: Path, rows: list[tuple[int, float, int]]) -> Path:
    path.write_text("".join(f"{t}, {v:g}, {d}, 0, 0\n" for t, v, d in rows))
    return path


def test_log_samples_land_in_their_interval_despite_late_or_early_stamps(tmp_path):
    logs = [
        # bw a millisecond early, iops on time, latency stamped at the first completion
        # after each boundary (late on a slow device), plus a final partial interval.
        write_log(tmp_path / "t_iops.1.log", [(1000, 100, 1), (2000, 110, 1), (3001, 120, 1)]),
        write_log(tmp_path / "t_bw.1.log", [(999, 400, 1), (1999, 440, 1), (3000, 480, 1)]),
        write_log(tmp_path / "t_lat.1.log", [(1060, 5e6, 1), (2040, 6e6, 1), (3100, 7e6, 1), (3400, 9e6, 1)]),
    ]
    s = parse_fio_logs(logs)
    assert [(p.t_s, p.write_iops, p.lat_mean_us) for p in s] == [(1.0, 100, 5000), (2.0, 110, 6000), (3.001, 120, 7000)]
    assert s[0].mbps == pytest.approx(400 * 1024 / 1e6)


def test_a_second_not_covered_by_every_job_is_left_out(tmp_path):
    logs = [
        write_log(tmp_path / "t_iops.1.log", [(1000, 100, 0), (2000, 100, 0)]),
        write_log(tmp_path / "t_bw.1.log", [(1000, 400, 0), (2000, 400, 0)]),
        write_log(tmp_path / "t_iops.2.log", [(1000, 50, 0)]),  # this job's second interval is missing
        write_log(tmp_path / "t_bw.2.log", [(1000, 200, 0)]),
    ]
    s = parse_fio_logs(logs)
    assert [(p.t_s, p.read_iops) for p in s] == [(1.0, 150)]
    assert s[0].lat_mean_us is None  # no lat logs: not measured, not zero


def test_damaged_log_names_file_and_line(tmp_path):
    bad = tmp_path / "t_iops.1.log"
    bad.write_text("1000, 5, 0, 0, 0\n2000, oops, 0, 0, 0\n")
    with pytest.raises(EngineError, match=r"t_iops\.1\.log, line 2"):
        parse_fio_logs([bad, write_log(tmp_path / "t_bw.1.log", [(1000, 1, 0)])])


def test_live_reports_give_each_intervals_own_mean_latency():
    """fio's status reports carry each direction's mean over every IO so far; a live point is
    the mean of the IOs since the report before (a cumulative mean would hide a slow second)."""
    from iolab.engines.fio_supervise import ReportStream

    def report(ms, reads, read_mean_ns, writes, write_mean_ns):
        side = lambda n, mean: {"total_ios": n, "runtime": ms, "clat_ns": {"mean": mean}}  # noqa: E731
        return json.dumps({"jobs": [{"read": side(reads, read_mean_ns), "write": side(writes, write_mean_ns)}]})

    stream = ReportStream()
    first = stream.feed(report(1000, 1000, 100_000, 0, 0).encode())
    # the second second: 2,000 more reads averaging 175 µs and 1,000 writes averaging 40 µs
    second = stream.feed(("noise\n" + report(2000, 3000, 150_000, 1000, 40_000)).encode())
    assert first == [(1.0, 1000.0, 100.0)]
    [(t, iops, lat)] = second
    assert (t, iops) == (2.0, 3000.0)
    assert lat == pytest.approx((2000 * 175 + 1000 * 40) / 3000)


def test_a_cells_ios_are_the_ios_its_latencies_count_not_those_issued_after_the_ramp():
    """rate_ramp_inflight.json: fio's total_ios 1,000 (issued after the ramp), 1,001 latencies and
    1,001 × 4 KiB (one IO issued in the ramp, completed after it). The cell holds the 1,001 its
    histogram and bytes count, so the audit's histogram = IO count holds; a run stored before
    (1,000, fio's issued count) still reads its raw output as its own."""
    from iolab.core.results import held_ios, output_damage

    r = parse_fio_json(text("rate_ramp_inflight.json"), "x.json")
    report = final_report("rate_ramp_inflight.json")
    assert report["jobs"][0]["read"]["total_ios"] == 1000
    assert r.read.ios == r.read.histogram.total == 1001 == r.read.io_bytes // 4096
    assert held_ios(report) == (1001, 0) and held_ios(report, issued=True) == (1000, 0)
    path = FIX / "rate_ramp_inflight.json"
    assert output_damage(path, (1001, 0)) is None and output_damage(path, (1000, 0)) is None
    assert (output_damage(path, (999, 0)) or "").startswith("not the cell's result")


def test_the_audit_derives_a_series_with_the_empty_logs_the_run_did_not_list(tmp_path):
    # a run lists only non-empty raw files; a job that logged no line leaves no second every job
    # covers, so the run stored no per-second row of that round (or the round as one row). The
    # audit's derivation from the listed logs alone made a row of job 1's IOs, and a fresh run on
    # a loop device failed its own raw-figures check ("its per-second row at 1.001 s …").
    from iolab.engines.reread import empty_logs

    listed = [
        write_log(tmp_path / "t_iops.1.log", [(1000, 100, 0)]),
        write_log(tmp_path / "t_bw.1.log", [(1000, 400, 0)]),
    ]
    for kind in ("iops", "bw"):
        (tmp_path / f"t_{kind}.2.log").write_text("")
    found = empty_logs(tmp_path, "t", listed)
    assert sorted(p.name for p in found) == ["t_bw.2.log", "t_iops.2.log"]
    assert parse_fio_logs(listed) and parse_fio_logs([*listed, *found]) == ()
    assert empty_logs(tmp_path, "u", []) == []
