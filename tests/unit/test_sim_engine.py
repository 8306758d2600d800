"""The sim engine: targets, presets, rounds, state across rounds, purge, save/load, errors."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from iolab import _sim, targets
from iolab.core.errors import EngineError, IolabError
from iolab.core.units import KiB
from iolab.core.workload import Stream, Workload
from iolab.engines import engine_for
from iolab.engines.sim import DEFAULT_PRESET, SimEngine, list_presets, parse_result

# A 512 MiB copy of the default drive: same dies, timings and link, fewer/smaller blocks.
SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def small(extra: str = "") -> targets.Target:
    return targets.parse_target(SMALL + extra)


def rnd_write(seconds: float = 2.0, **kw) -> Workload:
    return Workload.mix("rnd", 0, 4 * KiB, threads=4, queue_depth=8, duration_s=seconds, **kw)


def test_presets_listed_with_parameters():
    presets = list_presets()
    names = [p.name for p in presets]
    assert names[0] == DEFAULT_PRESET == "enterprise-sas"
    assert {"entry-sata-compress", "client-nvme-slc", "sas-15k-hdd", "sata-7200-hdd"} <= set(names)
    ent = presets[0]
    assert ent.kind == "ssd" and "400 GB" in ent.description
    params = dict(ent.parameters)
    assert params["user_gb"] == "400 GB" and params["gc"] == "greedy"
    assert ent.params and all(p.help for p in ent.params)
    assert {p.kind for p in presets} == {"ssd", "hdd"}


def test_default_target_describes_the_enterprise_drive():
    t = targets.parse_target(f"sim:{DEFAULT_PRESET}")
    assert t.kind == "sim" and t.capacity == 400 * 10**9 // 4096 * 4096
    assert t.facts.rotational is False and t.facts.interface == "sim"
    assert t.facts.capacity_bytes == t.capacity
    hdd = targets.parse_target("sim:sas-15k-hdd")
    assert hdd.facts.rotational is True


@pytest.mark.parametrize(
    "spec, word",
    [
        ("sim:no-such-drive", "no-such-drive"),
        ("sim:enterprise-sas?dies_per_channel=0", "dies_per_channel"),
        ("sim:enterprise-sas?user_gb=-5", "user_gb"),
        ("sim:enterprise-sas?op=0.00001", "gc_reserve"),
        ("sim:enterprise-sas?wibble=3", "wibble"),
        ("sim:enterprise-sas?gc=lru", "greedy"),
        ("sim:sas-15k-hdd?rpm=0", "rpm"),
    ],
)
def test_bad_presets_and_parameters_are_named(spec, word):
    with pytest.raises(IolabError) as e:
        targets.parse_target(spec)
    assert word in str(e.value)


def test_engine_for_sim_target():
    assert isinstance(engine_for(small()), SimEngine)


def test_round_result_raw_file_and_counters(tmp_path):
    t, e = small(), SimEngine()
    r = e.run(t, rnd_write(3.0), tmp_path / "raw", "c01")
    assert r.engine == "sim" and r.raw_files == ("raw/c01.json",)
    raw = json.loads((tmp_path / "raw" / "c01.json").read_text())
    assert raw["write"]["ios"] == r.write.ios > 0
    assert r.read.ios == 0 and r.read.histogram is None
    assert r.write.histogram.total == r.write.ios
    assert r.write.lat_min_us <= r.percentile(50) <= r.percentile(99.999) <= r.write.lat_max_us
    assert r.runtime_s == pytest.approx(3.0, rel=0.01)
    assert r.iops == pytest.approx(r.write.ios / r.runtime_s)
    # the IOs in flight at 3 s complete after it: their own, partial, row ending with the run
    ends = [s.t_s for s in r.series]
    assert ends[:3] == [1.0, 2.0, 3.0] and len(ends) == 4 and ends[3] == pytest.approx(r.runtime_s) and ends[3] < 3.01
    spans = [b - a for a, b in zip([0.0, *ends], ends)]
    assert sum(s.write_iops * d for s, d in zip(r.series, spans)) == pytest.approx(r.write.ios)
    # each second's maximum latency: at least its mean, and the largest is the period's maximum
    assert all(s.lat_max_us >= s.lat_mean_us for s in r.series)
    assert max(s.lat_max_us for s in r.series) == pytest.approx(r.write.lat_max_us, rel=0.02)
    c = r.counters
    assert c["host_write_bytes"] == r.write.io_bytes
    assert c["waf"] == pytest.approx(c["flash_write_bytes"] / c["host_write_bytes"])
    assert c["virtual_seconds"] == pytest.approx(r.runtime_s)
    for k in ("gc_runs", "gc_copied_pages", "erase_min", "erase_mean", "erase_max", "free_blocks"):
        assert k in c
    with pytest.raises(EngineError, match="already exists"):
        e.run(t, rnd_write(), tmp_path / "raw", "c01")


def test_state_persists_between_rounds_and_purge_returns_to_fob(tmp_path):
    # write_core_us=0: the flash sets the fresh rate, so the cliff is deep enough to tell apart.
    t, e = small("&write_core_us=0"), SimEngine()
    read = Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=1, duration_s=0.2)
    fresh = e.run(t, read, tmp_path, "read-fresh")
    e.run(t, Workload.mix("seq", 0, 128 * KiB, queue_depth=32, bytes_budget=t.capacity), tmp_path, "fill")
    written = e.run(t, read, tmp_path, "read-written")
    # Never-written data comes from the controller; written data needs a flash read.
    assert written.read.lat_mean_us > fresh.read.lat_mean_us + 40
    # Steady state is slower than FOB; purge brings FOB back.
    e.purge(t, "auto")
    fob = e.run(t, rnd_write(1.0), tmp_path, "fob")
    for i in range(4):
        late = e.run(t, rnd_write(1.0), tmp_path, f"w{i}")
    assert late.iops < 0.8 * fob.iops
    out = e.purge(t, "auto")
    assert out.ok and out.method == "sim-purge"
    again = e.run(t, read, tmp_path, "read-purged")
    assert again.read.lat_mean_us == pytest.approx(fresh.read.lat_mean_us, rel=0.01)
    assert e.counters(t)["free_blocks"] == 64
    assert e.run(t, rnd_write(1.0), tmp_path / "again", "fob").write.ios == fob.write.ios


def test_same_seed_same_result_different_seed_differs(tmp_path):
    mix = Workload(
        streams=(Stream("rnd", "read", 4 * KiB, 0.7), Stream("rnd", "write", 8 * KiB, 0.3)),
        threads=2,
        queue_depth=4,
        duration_s=1.0,
    )
    runs = [SimEngine().run(small(), mix, tmp_path / str(i), "x") for i in range(2)]
    assert runs[0] == runs[1].__class__(**{**runs[1].__dict__, "raw_files": runs[0].raw_files})
    other = SimEngine().run(small(), mix.with_(seed=1), tmp_path / "o", "x")
    assert other.read.ios != runs[0].read.ios
    # A different round (tag) draws different offsets from the same workload.
    assert SimEngine().run(small(), mix, tmp_path / "t", "y").read.ios != runs[0].read.ios


def test_save_and_load_reuse_a_preconditioned_drive(tmp_path):
    state = tmp_path / "drive.state"
    t = small(f"&save={state}")
    e = SimEngine()
    e.run(t, rnd_write(2.0), tmp_path / "a", "pre")
    e.close()
    assert state.exists()
    loaded = small(f"&load={state}")
    e2, e3 = SimEngine(), SimEngine()
    e3.run(small(), rnd_write(2.0), tmp_path / "c", "pre")
    r2 = e2.run(loaded, rnd_write(1.0), tmp_path / "b", "after")
    r3 = e3.run(small(), rnd_write(1.0), tmp_path / "c", "after")
    assert r2.write.ios == r3.write.ios and r2.counters["gc_runs"] == r3.counters["gc_runs"]
    with pytest.raises(IolabError, match="not the"):
        SimEngine().prepare(
            targets.parse_target(f"sim:enterprise-sas?blocks_per_plane=80&pages_per_block=16&op=0.28&load={state}")
        )
    with pytest.raises(IolabError, match="cannot read it"):
        SimEngine().prepare(small(f"&load={tmp_path / 'missing'}"))


def test_idle_lets_background_gc_recover(tmp_path):
    # Without the GC pass, whose walk (its first window covers these 6 s) frees blocks ahead
    # of foreground GC: busy 5 free blocks with it, 1 without; idle takes both to 8.
    t, e = small("&bg_reserve_pct=40&gc_pass_period_ms=0"), SimEngine()
    for i in range(6):
        e.run(t, rnd_write(1.0), tmp_path, f"w{i}")
    busy = e.counters(t)["free_blocks"]
    e.idle(t, 10.0)
    assert e.counters(t)["free_blocks"] > busy + 3
    assert e.counters(t)["device_clock_s"] == pytest.approx(16.0, abs=0.1)


def test_rate_limited_round_and_byte_budget(tmp_path):
    e = SimEngine()
    r = e.run(small(), rnd_write(2.0, rate_iops=5000), tmp_path, "rate")
    assert r.iops == pytest.approx(5000, rel=0.01)
    b = e.run(small(), Workload.mix("seq", 0, 128 * KiB, queue_depth=4, bytes_budget=64 * 2**20), tmp_path, "budget")
    assert b.write.io_bytes == 64 * 2**20


def test_progress_is_called_with_virtual_seconds(tmp_path):
    seen = []
    r = SimEngine().run(small(), rnd_write(30.0), tmp_path, "p", progress=lambda v, iops: seen.append((v, iops)))
    assert seen and all(0 < v <= r.runtime_s and iops > 0 for v, iops in seen)
    assert seen[-1] == pytest.approx((r.runtime_s, r.iops))


def test_bad_workload_is_an_engine_error(tmp_path):
    w = Workload.mix("rnd", 0, 1024 * 2**20, duration_s=1.0)  # a 1 GiB block on a 400 MiB drive
    with pytest.raises(EngineError, match="block size"):
        SimEngine().run(small(), w, tmp_path, "bad")


def test_purge_methods(tmp_path):
    e, t = SimEngine(), small()
    assert e.purge(t, "none").ok is False
    with pytest.raises(IolabError, match="sim-purge"):
        e.purge(t, "nvme-format")
    assert e.purge(targets.parse_target("sim:sas-15k-hdd"), "auto").ok


def test_parse_result_fails_loudly_on_missing_fields(tmp_path):
    t, e = small(), SimEngine()
    e.run(t, rnd_write(0.5), tmp_path, "ok")
    raw = json.loads((tmp_path / "ok.json").read_text())
    del raw["write"]["lat_mean_us"]
    with pytest.raises(EngineError, match="write.lat_mean_us"):
        parse_result(json.dumps(raw), "edited.json")


def test_job_text_runs_by_hand(tmp_path):
    t, e = small(), SimEngine()
    w = rnd_write(0.5)
    text = e.job_text(t, w, "x")
    ns: dict = {}
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(text, ns)
    by_hand = json.loads(out.getvalue())
    via_engine = e.run(t, w, tmp_path, "x")
    assert by_hand["write"]["ios"] == via_engine.write.ios


def test_hdd_round(tmp_path):
    r = SimEngine().run(
        targets.parse_target("sim:sas-15k-hdd"),
        Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=1, duration_s=5.0),
        tmp_path,
        "h",
    )
    assert 150 < r.iops < 300 and r.counters["seeks"] > 0


def test_waf_oracle_exposed():
    assert _sim.waf_oracle("greedy", 1.28, 64) == pytest.approx(2.402, abs=2e-3)
    with pytest.raises(ValueError):
        _sim.waf_oracle("lru", 1.28, 64)


def test_trim_unmaps_and_replay_follows_timestamps(tmp_path):
    t, e = small(), SimEngine()
    read = Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=1, duration_s=0.2)
    fresh = e.run(t, read, tmp_path, "fresh")
    e.run(t, Workload.mix("seq", 0, 128 * KiB, queue_depth=32, bytes_budget=t.capacity), tmp_path, "fill")
    e.trim(t, 0, t.capacity)
    after = e.run(t, read, tmp_path, "after-trim")
    assert after.read.lat_mean_us == pytest.approx(fresh.read.lat_mean_us, rel=0.01)
    with pytest.raises(IolabError, match="outside"):
        e.trim(t, t.capacity, 4096)
    n = 200
    r = e.replay(
        t,
        [i * 0.01 for i in range(n)],
        [i % 2 == 0 for i in range(n)],
        [i * 4096 for i in range(n)],
        [4096] * n,
        tmp_path,
        "replay",
    )
    assert r.ios == n and r.write.ios == n // 2
    assert r.runtime_s == pytest.approx((n - 1) * 0.01, rel=0.01)
    assert r.raw_files == (f"{tmp_path.name}/replay.json",)


def test_a_drive_too_large_for_memory_is_refused(monkeypatch):
    # Patch the module SimEngine really lives in (another test may have re-imported
    # iolab.engines.sim, leaving a second module object in sys.modules).
    monkeypatch.setitem(SimEngine.prepare.__globals__, "_mem_available", lambda: 512 * 2**20)
    with pytest.raises(IolabError, match="blocks_per_plane"):
        SimEngine().prepare(targets.parse_target(f"sim:{DEFAULT_PRESET}"))
    SimEngine().prepare(small())  # 400 MiB drive: a few MiB of maps


def test_budget_ending_mid_interval_reports_its_true_duration(tmp_path):
    """The last WSAT interval ends when the byte budget is spent: its runtime is the true
    (virtual) time and its IOPS those of the workload. Before, the compressing preset's last
    interval was divided by the full interval (3,530 IOPS instead of ~14,500)."""
    t, e = targets.parse_target("sim:entry-sata-compress?user_gb=0.5"), SimEngine()
    w = Workload.mix("rnd", 0, 4 * KiB, threads=4, queue_depth=32, duration_s=1.0)
    e.run(t, w.with_(duration_s=None, bytes_budget=2 * t.capacity), tmp_path, "pre")
    full = e.run(t, w, tmp_path, "full")
    part = e.run(t, w.with_(bytes_budget=full.write.io_bytes // 4), tmp_path, "part")
    assert part.write.io_bytes == pytest.approx(full.write.io_bytes / 4, abs=128 * 4 * KiB)
    assert part.runtime_s == pytest.approx(0.25, rel=0.1)
    assert part.iops == pytest.approx(full.iops, rel=0.1)
    assert part.iops == pytest.approx(part.write.ios / part.runtime_s)
    assert part.series[-1].t_s == pytest.approx(part.runtime_s)
    assert e.counters(t)["device_clock_s"] == pytest.approx(
        sum(json.loads((tmp_path / f"{n}.json").read_text())["runtime_s"] for n in ("pre", "full", "part")), rel=1e-6
    )


def test_write_cache_is_switched_on_the_model_and_reported(tmp_path):
    client = "sim:client-nvme-slc?user_gb=0.5&slc_gb=0"
    w = Workload.mix("rnd", 0, 4 * KiB, threads=1, queue_depth=1, duration_s=0.2)
    lat = {}
    for on in (True, False):
        t, e = targets.parse_target(client), SimEngine()
        said = e.set_write_cache(t, on)
        assert said.startswith(f"simulated: {'enabled' if on else 'disabled'}")
        assert ("buffer" if on else "once programmed") in said
        lat[on] = e.run(t, w, tmp_path / str(on), "w").write.lat_mean_us
        # A user reproducing the round by hand gets the same setting.
        assert f"drive.write_cache = {on}" in e.job_text(t, w, "w")
    assert lat[True] < 50 and lat[False] > 1000, lat  # buffer vs a TLC page program (1.6 ms)
    # The enterprise preset's buffer is power-loss protected: disabling the cache changes nothing.
    t, e = small(), SimEngine()
    assert "no effect (power-loss-protected buffer)" in e.set_write_cache(t, False)
    assert e.run(t, w, tmp_path / "plp", "w").write.lat_mean_us < 50
    hdd = targets.parse_target("sim:sas-15k-hdd")
    assert "once on media" in SimEngine().set_write_cache(hdd, False)


def test_hdd_charges_sequential_io(tmp_path):
    """SEQ 0.5K W on a 15K HDD with the write cache disabled: ~a write per revolution, not
    385,422 IOPS at 2.6 µs."""
    t, e = targets.parse_target("sim:sas-15k-hdd"), SimEngine()
    e.set_write_cache(t, False)
    r = e.run(t, Workload.mix("seq", 0, 512, threads=1, queue_depth=32, duration_s=2.0), tmp_path, "w")
    assert 250 < r.iops < 3000 and r.write.lat_min_us > 30
    e.set_write_cache(t, True)
    cached = e.run(t, Workload.mix("seq", 0, 512, threads=1, queue_depth=32, duration_s=2.0), tmp_path, "wce")
    assert cached.iops > 10 * r.iops


def test_user_gb_keeps_the_presets_over_provisioning():
    # The README's example: 50 GB of the 100 GB compressing drive had 156 % OP.
    t = targets.parse_target("sim:entry-sata-compress?user_gb=50")
    info = json.loads(_sim.describe("entry-sata-compress", [("user_gb", "50")]))
    assert info["op"] == pytest.approx(0.28, abs=0.005)
    assert t.capacity == pytest.approx(50e9, rel=1e-4) and "OP 28.0%" in t.facts.model


def test_quick_target_is_a_small_copy_tested_whole():
    from iolab import suites

    prof = suites.make_profile("enterprise", quick=True)
    for spec in (f"sim:{DEFAULT_PRESET}", "sim:client-nvme-slc", "sim:entry-sata-compress?op=0.07&compress_ceiling=1"):
        full = targets.parse_target(spec)
        q = suites.quick_target(prof, full)
        assert 0.99 * suites.QUICK_CAPACITY < q.capacity <= suites.QUICK_CAPACITY
        assert suites.tested_capacity(prof, q) == q.capacity
        op = lambda tg: json.loads(_sim.describe(tg.path, list(tg.options)))["op"]  # noqa: E731
        assert op(q) == pytest.approx(op(full), rel=0.02), spec
    hdd = suites.quick_target(prof, targets.parse_target("sim:sas-15k-hdd"))
    assert hdd.capacity == suites.QUICK_CAPACITY
    assert suites.quick_target(suites.make_profile("enterprise"), full) is full
    # a saved state cannot be copied smaller: tested as it is (a cut range, never the drive's steady state)
    loaded = replace(full, options=(*full.options, ("load", "/saved.state")))
    assert suites.quick_target(prof, loaded) is loaded
    [note] = suites.quick_notes(prof, loaded, loaded)
    assert "cannot be copied smaller" in note and "not the drive's steady state" in note


def test_quick_copies_a_simulated_drive_whose_target_gives_its_size_too():
    # --quick kept sim:entry-sata-compress?user_gb=4 and tested 0.537 GB of it: every write in 13 %
    # of the LBAs, GC never started, and the fresh drive's 42,420 write IOPS were called steady
    from iolab import suites

    prof = suites.make_profile("enterprise", quick=True)
    for spec in (
        f"sim:{DEFAULT_PRESET}?user_gb=4",
        "sim:entry-sata-compress?user_gb=4",
        "sim:sas-15k-hdd?capacity_gb=2",
    ):
        given = targets.parse_target(spec)
        q = suites.quick_target(prof, given)
        assert q.capacity <= suites.QUICK_CAPACITY < given.capacity and q.copy_of == given.spec
        assert suites.tested_capacity(prof, q) == q.capacity
        [note] = suites.quick_notes(prof, given, q)
        assert note.startswith(f"--quick simulated a 0.537 GB copy of {spec} (its size as the target gives it"), note
    # a drive within the limit is tested whole, as it is
    small = targets.parse_target(SMALL)
    assert suites.quick_target(prof, small) is small
    [note] = suites.quick_notes(prof, small, small)
    assert note.startswith("--quick tested the simulated drive whole"), note
    assert suites.quick_notes(suites.make_profile("enterprise"), small, small) == ()


def test_a_test_that_needs_a_larger_quick_copy_gets_it_tested_whole():
    # --quick ran consistency on a 0.5 GB copy of the client drive, 0.5 GB of it tested
    from iolab import suites
    from iolab.api import registry

    prof = suites.make_profile("enterprise", quick=True)
    given = targets.parse_target("sim:client-nvme-slc")
    p, q, [note] = suites.quick_setup(prof, given, registry.get("consistency"))
    assert q.capacity == pytest.approx(4e9, rel=1e-3) and suites.tested_capacity(p, q) == q.capacity
    assert note.startswith("--quick simulated a 4.000 GB copy of sim:client-nvme-slc"), note
    # other tests keep the quick limit; the user's own limit or drive size wins
    assert suites.quick_setup(prof, given, registry.get("qos"))[1].capacity <= suites.QUICK_CAPACITY
    mine = suites.make_profile("enterprise", quick=True, capacity_limit=2 * 10**9)
    assert suites.quick_setup(mine, given, registry.get("consistency"))[1].capacity == pytest.approx(2e9, rel=1e-3)
    sized = targets.parse_target("sim:client-nvme-slc?user_gb=8")
    copy = suites.quick_setup(prof, sized, registry.get("consistency"))[1]
    assert copy.capacity == pytest.approx(4e9, rel=1e-3) and copy.copy_of == sized.spec


def test_the_slc_cache_tests_quick_copy_keeps_the_drives_cache():
    # a copy scaled whole kept 8 GB × 0.5/480 of the client preset's cache: 8 MB, crossed in 2 ms
    from iolab import suites
    from iolab.api import registry

    def info(t):
        return json.loads(_sim.describe(t.path, list(t.options)))

    def cache_raw(i):
        return i["slc_blocks"] * i["ftl_block_bytes"]

    prof = suites.make_profile("enterprise", quick=True)
    given = targets.parse_target("sim:client-nvme-slc")
    p, q, [note] = suites.quick_setup(prof, given, registry.get("slc-cache"))
    full, copy = info(given), info(q)
    assert q.capacity == pytest.approx(32e9, rel=1e-3) and suites.tested_capacity(p, q) == q.capacity
    assert cache_raw(copy) == pytest.approx(cache_raw(full), rel=0.02)
    spare = [(i["physical_bytes"] - cache_raw(i) - i["capacity_bytes"]) / i["capacity_bytes"] for i in (full, copy)]
    assert spare[1] == pytest.approx(spare[0], abs=0.02)  # the rest of the flash: the drive's share of spare
    assert "its SLC cache kept at the drive's 8 GB" in note
    # a drive without a cache gets the copy any test gets, at this size
    _, plain, _ = suites.quick_setup(prof, targets.parse_target("sim:enterprise-sas"), registry.get("slc-cache"))
    assert info(plain)["op"] == pytest.approx(info(targets.parse_target("sim:enterprise-sas"))["op"], rel=0.02)


def test_a_raw_file_from_before_the_per_second_maximum_still_parses(tmp_path):
    r = SimEngine().run(small(), rnd_write(2.0), tmp_path / "raw", "c01")
    raw = json.loads((tmp_path / "raw" / "c01.json").read_text())
    raw["series"] = [row[:5] for row in raw["series"]]
    old = parse_result(json.dumps(raw), "c01.json")
    assert [s.lat_mean_us for s in old.series] == [s.lat_mean_us for s in r.series]
    assert all(s.lat_max_us is None for s in old.series)


def test_a_results_db_from_before_the_per_second_maximum_still_opens(tmp_path):
    import sqlite3

    from iolab import suites
    from iolab.api import registry
    from iolab.run.runner import Runner
    from iolab.run.runstart import RunOptions, start
    from iolab.store.runstore import RunStore

    t, e = small(), SimEngine()
    plan = registry.build_plan("consistency", suites.make_profile(quick=True, settings=(("duration", "2s"),)), t)
    store = start(plan, t, e, RunOptions(), tmp_path)
    Runner(plan, t, e, store, RunOptions()).run()
    store.close()
    db = sqlite3.connect(store.dir / "results.db")
    db.execute("ALTER TABLE series DROP COLUMN lat_max_us")  # as runs before the column wrote it
    db.commit()
    db.close()
    old = RunStore.open(store.dir)  # read-only: the column cannot be added
    [row] = old.cells("consistency")
    points = old.series(row.id)
    # two seconds and the partial rest (the drain after 2 s)
    assert len(points) == 3 and points[-1][0] - 2.0 < 0.01 and all(p[4] > 0 and p[5] is None for p in points)
