"""fio job generation: every Workload field lands in the job file fio runs."""

from __future__ import annotations

import pytest

from iolab.core.errors import EngineError, IolabError
from iolab.core.workload import Stream, Workload
from iolab.engines.fio_job import build_job
from iolab.targets import Target

KiB = 1024
MiB = 1024 * KiB
DEV = Target("block", "/dev/nvme0n1", "/dev/nvme0n1", 1_000_204_886_016)


def sections(job: str) -> dict[str, dict[str, str]]:
    """Job file -> {section: {option: value}} (comments dropped, bare flags map to '')."""
    out: dict[str, dict[str, str]] = {}
    cur = None
    for line in job.splitlines():
        line = line.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("["):
            cur = out.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        assert cur is not None, f"option outside a section: {line}"
        assert key not in cur, f"option {key} given twice in one section"
        cur[key] = value
    return out


def job(w: Workload, target: Target = DEV, tag: str = "iops-r01-c00") -> dict[str, dict[str, str]]:
    return sections(build_job(target, w, tag, "io_uring"))


def test_pts_mix_lands_in_one_section():
    w = Workload.mix("rnd", 65, 4 * KiB, threads=2, queue_depth=16, active_range=0.75, duration_s=60)
    s = job(w)
    assert set(s) == {"global", "rnd"}
    g, r = s["global"], s["rnd"]
    assert g["filename"] == "/dev/nvme0n1"
    assert g["ioengine"] == "io_uring"
    assert g["direct"] == "1"
    assert g["group_reporting"] == "1"
    assert g["size"] == str(int(0.75 * DEV.capacity) // 4096 * 4096)
    assert "offset" not in g  # active range starts at LBA 0
    assert g["time_based"] == "1" and g["runtime"] == "60000ms"
    assert g["norandommap"] == "1"
    assert g["lat_percentiles"] == "1"  # json+ bins of total latency, the latency of the mean and max
    assert g["write_iops_log"] == g["write_bw_log"] == g["write_lat_log"] == "iops-r01-c00"
    assert g["log_avg_msec"] == "1000"
    assert r == {"rw": "randrw", "rwmixread": "65", "bs": "4096", "numjobs": "2", "iodepth": "16"}


@pytest.mark.parametrize(
    "access,read_pct,rw",
    [
        ("rnd", 100, "randread"),
        ("rnd", 0, "randwrite"),
        ("rnd", 50, "randrw"),
        ("seq", 100, "read"),
        ("seq", 0, "write"),
        ("seq", 50, "rw"),
    ],
)
def test_access_and_direction_map_to_fio_rw(access, read_pct, rw):
    s = job(Workload.mix(access, read_pct, 128 * KiB, duration_s=1))
    sec = s[access]
    assert sec["rw"] == rw
    assert ("rwmixread" in sec) == (0 < read_pct < 100)


def test_block_size_splits_per_direction():
    w = Workload(
        streams=(
            Stream("rnd", "read", 4 * KiB, 0.3),
            Stream("rnd", "read", 8 * KiB, 0.2),
            Stream("rnd", "write", 4 * KiB, 0.5),
        ),
        duration_s=1,
    )
    r = job(w)["rnd"]
    assert r["rwmixread"] == "50"
    assert r["bssplit"] == "4096/60:8192/40,4096/100"
    assert "bs" not in r
    # One size per direction, different sizes: a per-direction bs, no split.
    w2 = Workload(streams=(Stream("rnd", "read", 4 * KiB, 0.5), Stream("rnd", "write", 128 * KiB, 0.5)), duration_s=1)
    assert job(w2)["rnd"]["bs"] == "4096,131072"
    # Thirds: percentages to 0.01 that still add up to exactly 100.
    w3 = Workload(streams=tuple(Stream("rnd", "write", b * KiB, 1 / 3) for b in (4, 8, 16)), duration_s=1)
    parts = job(w3)["rnd"]["bssplit"].split(":")
    assert sum(float(p.split("/")[1]) for p in parts) == pytest.approx(100, abs=1e-9)


def test_size_is_the_active_range_aligned_down_to_the_largest_block():
    t = Target("file", "file:/x", "/x", 100 * MiB + 12345)
    w = Workload(
        streams=(Stream("rnd", "read", 4 * KiB, 0.5), Stream("rnd", "write", 1024 * KiB, 0.5)),
        active_range=0.5,
        duration_s=1,
    )
    size = int(job(w, t)["global"]["size"])
    assert size % (1024 * KiB) == 0
    assert 0.5 * t.capacity - 1024 * KiB < size <= 0.5 * t.capacity
    with pytest.raises(IolabError, match="smaller than one"):
        build_job(
            Target("file", "file:/x", "/x", 512 * KiB),
            Workload.mix("seq", 0, 1024 * KiB, duration_s=1),
            "t",
            "io_uring",
        )


def test_byte_budget_is_split_over_jobs_and_replaces_time_based():
    w = Workload.mix("seq", 0, 128 * KiB, threads=2, bytes_budget=64 * MiB)
    s = job(w)
    assert "time_based" not in s["global"] and "runtime" not in s["global"]
    assert s["seq"]["io_size"] == str(32 * MiB)
    # A budget and a duration: whichever comes first (runtime without time_based).
    s2 = job(w.with_(duration_s=2.0))
    assert s2["global"]["runtime"] == "2000ms" and "time_based" not in s2["global"]
    assert "note" not in build_job(DEV, w, "t", "io_uring")
    # A budget that does not split into whole blocks per job says what will be written.
    text = build_job(DEV, w.with_(bytes_budget=4096), "t", "io_uring")
    assert "byte budget 4096 B rounded to whole blocks per job: 262144 B" in text


def test_sub_second_durations_are_exact_in_ms():
    assert job(Workload.mix("rnd", 100, 4096, duration_s=0.25))["global"]["runtime"] == "250ms"


def test_entropy_sets_the_data_pattern_of_writes():
    g = job(Workload.mix("rnd", 0, 4096, duration_s=1))["global"]
    assert g["refill_buffers"] == "1" and "buffer_compress_percentage" not in g
    g = job(Workload.mix("rnd", 50, 4096, duration_s=1, entropy=0.3))["global"]
    assert g["refill_buffers"] == "1" and g["buffer_compress_percentage"] == "70"
    g = job(Workload.mix("rnd", 0, 4096, duration_s=1, entropy=0.0))["global"]
    assert g["buffer_compress_percentage"] == "100"
    # Reads never use the write buffers: no data-pattern options at all.
    g = job(Workload.mix("rnd", 100, 4096, duration_s=1, entropy=0.3))["global"]
    assert "refill_buffers" not in g and "buffer_compress_percentage" not in g


def test_rate_limit_is_split_over_jobs_and_directions():
    w = Workload.mix("rnd", 70, 4096, threads=2, rate_iops=1000, duration_s=1)
    assert job(w)["rnd"]["rate_iops"] == "350,150"
    assert job(Workload.mix("rnd", 0, 4096, rate_iops=500, duration_s=1))["rnd"]["rate_iops"] == ",500"
    assert job(Workload.mix("rnd", 100, 4096, rate_iops=500, duration_s=1))["rnd"]["rate_iops"] == "500"
    with pytest.raises(IolabError, match="whole IOPS"):
        job(Workload.mix("rnd", 50, 4096, threads=32, rate_iops=10, duration_s=1))


def test_seed_is_reproducible_per_round_and_differs_between_rounds():
    w = Workload.mix("rnd", 0, 4096, duration_s=1)
    a = job(w, tag="wsat-r01")["global"]["randseed"]
    assert a == job(w, tag="wsat-r01")["global"]["randseed"]
    assert a != job(w, tag="wsat-r02")["global"]["randseed"]
    assert a != job(w.with_(seed=7), tag="wsat-r01")["global"]["randseed"]


def test_targets_file_block_nbd():
    f = job(Workload.mix("rnd", 100, 4096, duration_s=1), Target("file", "file:/a:b.img", "/srv/a:b.img", 64 * MiB))
    assert f["global"]["filename"] == "/srv/a\\:b.img"  # fio splits filenames on ':'
    uri = "nbd+unix:///disk?socket=/run/nbd.sock"
    n = job(Workload.mix("rnd", 100, 4096, duration_s=1), Target("nbd", uri, uri, 64 * MiB))["global"]
    assert n["ioengine"] == "nbd" and n["uri"] == uri and "filename" not in n
    with pytest.raises(EngineError, match="sim engine"):
        job(Workload.mix("rnd", 100, 4096, duration_s=1), Target("sim", "sim:tlc", "tlc", 64 * MiB))


def test_bad_tag_is_refused():
    with pytest.raises(IolabError, match="round tag"):
        job(Workload.mix("rnd", 100, 4096, duration_s=1), tag="../x y")


def test_mixed_access_streams_become_sections_in_one_group_with_flow():
    w = Workload(
        streams=(Stream("rnd", "read", 4 * KiB, 0.6), Stream("seq", "write", 128 * KiB, 0.4)),
        threads=1,
        queue_depth=8,
        duration_s=1,
    )
    text = build_job(DEV, w, "t", "io_uring")
    s = sections(text)
    assert set(s) == {"global", "rnd", "seq"}
    assert "stonewall" not in text and "new_group" not in text  # side by side, one report
    assert (s["rnd"]["rw"], s["rnd"]["bs"]) == ("randread", "4096")
    assert (s["seq"]["rw"], s["seq"]["bs"]) == ("write", "131072")
    assert (s["rnd"]["flow"], s["seq"]["flow"]) == ("600", "400")
    assert int(s["rnd"]["iodepth"]) + int(s["seq"]["iodepth"]) == 8  # outstanding IO split
    assert (s["rnd"]["iodepth"], s["seq"]["iodepth"]) == ("5", "3")
    assert s["rnd"]["numjobs"] == s["seq"]["numjobs"] == "1"
    # QD below the number of sections: threads are split instead.
    s = job(w.with_(threads=4, queue_depth=1))
    assert (s["rnd"]["numjobs"], s["seq"]["numjobs"]) == ("2", "2")
    assert s["rnd"]["iodepth"] == s["seq"]["iodepth"] == "1"
    # Nothing to split: the job file says what was run instead.
    text = build_job(DEV, w.with_(queue_depth=1), "t", "io_uring")
    assert "outstanding IO raised from 1 to 2" in text


def test_byte_budget_over_sections_follows_their_byte_shares():
    w = Workload(
        streams=(Stream("rnd", "write", 4 * KiB, 0.5), Stream("seq", "write", 64 * KiB, 0.5)),
        queue_depth=2,
        bytes_budget=68 * MiB,
    )
    s = job(w)
    # Half the IOs each; bytes 4:64, so 4/68 and 64/68 of the budget.
    assert s["rnd"]["io_size"] == str(4 * MiB)
    assert s["seq"]["io_size"] == str(64 * MiB)


def test_sequential_threads_stream_their_own_slices():
    s = job(Workload.mix("seq", 100, 128 * KiB, threads=4, duration_s=1), Target("file", "f", "/f", 64 * MiB))
    assert s["seq"]["size"] == s["seq"]["offset_increment"] == str(16 * MiB)
    assert "offset_increment" not in job(Workload.mix("rnd", 100, 4096, threads=4, duration_s=1))["rnd"]


def test_a_legs_sequential_threads_stream_slices_of_its_own_part_and_random_ones_the_whole_range():
    f = Target("file", "f", "/f", 64 * MiB)
    s = job(Workload.mix("seq", 100, 128 * KiB, threads=4, duration_s=1, leg=(1, 2)), f)
    assert (s["seq"]["offset"], s["seq"]["size"], s["seq"]["offset_increment"]) == (
        str(32 * MiB),
        str(8 * MiB),
        str(8 * MiB),
    )
    s = job(Workload.mix("seq", 100, 128 * KiB, duration_s=1, leg=(2, 3)), f)
    third = 64 * MiB // 3 // (128 * KiB) * 128 * KiB  # whole blocks
    assert (s["seq"]["offset"], s["seq"]["size"]) == (str(2 * third), str(third))
    assert not {"offset", "size"} & set(
        job(Workload.mix("rnd", 100, 4096, threads=4, duration_s=1, leg=(1, 2)), f)["rnd"]
    )


def test_jobs_are_threads_of_one_fio_process():
    # a forked process per job cost fio more CPU than a short cell's IO (docs/tests.md)
    for w in (
        Workload.mix("rnd", 65, 4 * KiB, threads=4, duration_s=1),
        Workload.mix("seq", 0, 128 * KiB, bytes_budget=MiB),
    ):
        assert job(w)["global"]["thread"] == "1"


def test_histogram_log_only_where_the_per_second_maximum_is_asked_for():
    w = Workload.mix("rnd", 0, 4 * KiB, queue_depth=32, duration_s=10)
    assert "write_hist_log" not in job(w)["global"]  # ~6 KB per job per second: not for every cell
    g = job(w.with_(max_per_second=True))["global"]
    assert g["write_hist_log"] == "iops-r01-c00" and g["log_hist_msec"] == "1000"


def test_ioengine_choice(monkeypatch):
    from iolab.core.ioengines import AUTO_IOENGINE, IOENGINES
    from iolab.engines import fio_job

    uri = "nbd+unix:///disk?socket=/run/nbd.sock"
    nbd = Target("nbd", uri, uri, 64 * MiB)
    file = Target("file", "file:/srv/a.img", "/srv/a.img", 64 * MiB)
    monkeypatch.setattr(fio_job, "async_ioengine", lambda fio: "io_uring")
    assert [fio_job.pick_ioengine(c, DEV, "fio") for c in ("io_uring", "libaio")] == ["io_uring", "libaio"]
    assert fio_job.pick_ioengine("auto", DEV, "fio") == AUTO_IOENGINE["block"]
    assert fio_job.pick_ioengine("auto", file, "fio") == AUTO_IOENGINE["file"]
    assert {fio_job.pick_ioengine(c, nbd, "fio") for c in IOENGINES} == {"nbd"}  # NBD keeps fio's nbd
    with pytest.raises(IolabError, match="use io_uring, libaio or auto"):
        fio_job.pick_ioengine("sync", DEV, "fio")
    # a host whose kernel refuses io_uring: auto falls back, a named io_uring is refused
    monkeypatch.setattr(fio_job, "async_ioengine", lambda fio: "libaio")
    assert fio_job.pick_ioengine("auto", DEV, "fio") == "libaio"
    with pytest.raises(EngineError, match="--ioengine io_uring: a one-IO fio run"):
        fio_job.pick_ioengine("io_uring", DEV, "fio")


CPUINFO = "processor\t: 0\nflags\t\t: fpu tsc {extra}\n\nprocessor\t: 1\nflags\t\t: fpu tsc {extra}\n"


@pytest.mark.parametrize(
    ("kernel_clock", "flags", "expected"),
    [
        ("tsc", "constant_tsc nonstop_tsc", "cpu"),  # fio would pick its CPU clock: named
        ("hpet", "constant_tsc nonstop_tsc", None),  # the kernel gave up on the TSC
        ("tsc", "constant_tsc", None),  # the TSC stops in deep idle: fio distrusts it
        ("tsc", "nonstop_tsc", None),
    ],
)
def test_fio_clock_is_named_only_where_fio_would_choose_the_cpu_clock(tmp_path, kernel_clock, flags, expected):
    from iolab.engines.fio_job import local_clocksource

    clock, cpuinfo = tmp_path / "clock", tmp_path / "cpuinfo"
    clock.write_text(kernel_clock + "\n")
    cpuinfo.write_text(CPUINFO.format(extra=flags))
    assert local_clocksource(str(clock), str(cpuinfo)) == expected
    assert local_clocksource(str(tmp_path / "absent"), str(cpuinfo)) is None
    w = Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=4, active_range=1.0, duration_s=1)
    text = build_job(DEV, w, "iops-r01-c00", "io_uring", expected)
    assert sections(text)["global"].get("clocksource") == expected
    assert ("; clocksource=" in text) == (expected is not None)
