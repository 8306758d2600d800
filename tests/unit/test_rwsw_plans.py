"""RWSW test definitions (catalogue §1): what each plan runs from a composite and a replay
file, which files `--workload` finds, and the errors for missing or wrong inputs."""

from __future__ import annotations

import pytest

from iolab import suites
from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.core.units import GiB, KiB, MiB
from iolab.core.workload import Stream, Workload
from iolab.suites.rwsw_common import STEADY_AFTER_WORKLOAD, copy_inputs, digest, load_input, locate
from iolab.suites.rwsw_dirth import split_oio
from iolab.targets import DeviceFacts, Target
from iolab.traces.analysis.workloads import ReplayPlan, ReplayStep, save_composite

TARGET = Target("block", "/dev/x", "/dev/x", 100 * GiB, DeviceFacts(logical_sector=512))

# The RWSW paper's composite (retail web portal, SQL Server): six dominant streams.
PAPER_MIX = (
    Stream("rnd", "read", 64 * KiB, 0.305),
    Stream("seq", "write", 512, 0.289),
    Stream("rnd", "read", 8 * KiB, 0.164),
    Stream("seq", "read", 8 * KiB, 0.142),
    Stream("seq", "read", 64 * KiB, 0.056),
    Stream("rnd", "write", 8 * KiB, 0.044),
)


def write_inputs(d, composite=True, replay=True, qd=6):
    d.mkdir(parents=True, exist_ok=True)
    if composite:
        save_composite(
            Workload(PAPER_MIX, threads=2, queue_depth=qd, duration_s=60.0, name="paper"), d / "composite.toml"
        )
    if replay:
        steps = (
            ReplayStep(0, 0.0, 300.0, 4, (Stream("rnd", "read", 64 * KiB, 0.7), Stream("seq", "write", 512, 0.3))),
            ReplayStep(2, 600.0, 300.0, 16, (Stream("rnd", "read", 8 * KiB, 1.0),)),
        )
        ReplayPlan("capture.parquet", 300.0, 1.0, 1, steps, skipped=(1,)).save(d / "replay.toml")
    return d


def plan(test, tmp_path, **profile):
    return registry.build_plan(test, suites.make_profile(**profile), TARGET, write_inputs(tmp_path / "wl"))


def test_multi_wsat_runs_the_composite_from_purge_to_steady_state(tmp_path):
    p = plan("multi-wsat", tmp_path)
    [ph] = p.phases
    [cell] = ph.cells
    w = cell.workload
    assert [(s.label(), round(s.share, 3)) for s in w.streams] == [(s.label(), s.share) for s in PAPER_MIX]
    assert (w.threads, w.queue_depth, w.duration_s, w.active_range, w.entropy) == (2, 6, 60.0, 1.0, 1.0)
    assert ph.purge and ph.stop_on_steady
    # the composite reads: WIPC after the purge so every read hits written data
    [pc] = ph.precondition
    assert pc.read_pct == 0 and pc.bytes_budget == 2 * 100 * GiB and pc.active_range == 1.0
    assert [(t.cell_key, t.metric) for t in ph.tracking] == [("composite", "iops")]
    assert ph.budget_write_bytes == 4 * 100 * GiB and ph.budget_seconds == 24 * 3600
    # no steady state before the drive took its capacity in workload writes; the report says so
    assert ph.min_write_bytes == 100 * GiB
    assert "1× capacity of workload writes" in dict(p.parameters)[STEADY_AFTER_WORKLOAD]
    assert ph.max_rounds == 24 * 60
    assert p.test == "multi-wsat" and p.spec.startswith("RWSW")
    assert dict(p.parameters)["Workload digest"] == digest(load_input(tmp_path / "wl").composite)


def test_quick_saturation_phases_stop_after_thirty_intervals(tmp_path):
    [ph] = plan("multi-wsat", tmp_path, quick=True).phases
    assert ph.max_rounds == 30 and ph.cells[0].workload.duration_s == 1.0
    assert ph.budget_write_bytes == 4 * 512 * MiB


def test_individual_streams_run_each_stream_alone_from_its_own_purge(tmp_path):
    p = plan("streams-wsat", tmp_path)
    assert [ph.name for ph in p.phases] == [s.label() for s in PAPER_MIX]
    for ph, s in zip(p.phases, PAPER_MIX):
        [cell] = ph.cells
        [only] = cell.workload.streams
        assert (only.access, only.op, only.block_size, only.share) == (s.access, s.op, s.block_size, 1.0)
        assert cell.workload.outstanding == 12 and ph.purge and ph.stop_on_steady
        if s.op == "read":  # reads must hit written LBAs: WIPC first; no write budget to reach
            [pc] = ph.precondition
            assert pc.read_pct == 0 and pc.bytes_budget == 2 * 100 * GiB
            assert ph.budget_write_bytes is None and ph.min_write_bytes is None
        else:
            assert ph.precondition == () and ph.budget_write_bytes == 4 * 100 * GiB
            assert ph.min_write_bytes == 100 * GiB


def test_the_write_threshold_before_steady_state_is_a_parameter(tmp_path):
    p = plan("multi-wsat", tmp_path, rwsw_min_write_multiple=2.5)
    assert p.phases[0].min_write_bytes == int(2.5 * 100 * GiB)
    assert dict(p.parameters)[STEADY_AFTER_WORKLOAD].startswith("2.5× capacity of workload writes (268.435 GB")


def test_replay_brings_the_drive_to_steady_state_then_runs_every_step_in_order(tmp_path):
    p = plan("replay", tmp_path)
    steady, rep = p.phases
    assert steady.purge and steady.stop_on_steady and steady.max_rounds == 25
    assert steady.precondition[0].read_pct == 0  # WIPC
    assert steady.cells[0].workload.streams == load_input(tmp_path / "wl").composite.streams
    assert not rep.purge and rep.max_rounds == 1 and rep.tracking == () and not rep.stop_on_steady
    assert [c.key for c in rep.cells] == ["step 0", "step 2"]
    a, b = (c.workload for c in rep.cells)
    assert (a.queue_depth, a.duration_s, a.rate_iops) == (4, 300.0, None)  # flat out for the step's duration
    assert (b.queue_depth, b.duration_s, [s.label() for s in b.streams]) == (16, 300.0, ["RND 8KiB R"])
    assert any("not replayed" in n for n in p.notes)  # the skipped step is said


def test_quick_replay_caps_each_step_at_the_cell_time(tmp_path):
    _, rep = plan("replay", tmp_path, quick=True).phases
    assert [c.workload.duration_s for c in rep.cells] == [1.0, 1.0]


def test_dirth_sweeps_outstanding_io_one_to_1024_through_the_dirth_flow(tmp_path):
    steady, sweep, points = plan("dirth-rwsw", tmp_path).phases
    assert steady.tracking and steady.purge and steady.precondition  # WIPC, then the composite to steady state
    pre, *levels = sweep.cells
    assert pre.key == "pre-write" and pre.workload.outstanding == 1024
    assert [c.workload.outstanding for c in levels] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert [c.key for c in levels][:2] == ["TC1/QD1", "TC1/QD2"] and levels[-1].key == "TC32/QD32"
    assert all(c.workload.queue_depth <= 32 and c.workload.threads >= 1 for c in levels)
    # the same stimulus everywhere: the composite's streams, at each point's TC × QD
    assert {c.workload.streams for c in (steady.cells[0], pre, *levels)} == {steady.cells[0].workload.streams}
    assert not sweep.purge and sweep.tracking[0].cell_key == "TC32/QD32" and sweep.stop_on_steady
    assert points.name == "operating points" and points.seconds > 0


@pytest.mark.parametrize(
    "oio, split",
    [
        (1, (1, 1)),
        (3, (1, 3)),
        (32, (1, 32)),
        (33, (3, 11)),
        (37, (37, 1)),
        (64, (2, 32)),
        (96, (3, 32)),
        (1024, (32, 32)),
    ],
)
def test_split_oio_is_exact_with_a_qd_of_at_most_32(oio, split):
    assert split_oio(oio) == split


def test_workload_finds_the_other_files_beside_any_one_of_them(tmp_path):
    d = write_inputs(tmp_path / "wl")
    (d / "analysis.json").write_text("{}")
    for given in (d, d / "composite.toml", d / "replay.toml"):
        assert set(locate(given)) == {"composite", "replay", "analysis"}
    (tmp_path / "run").mkdir()
    copied = copy_inputs(d / "replay.toml", tmp_path / "run")
    assert sorted(p.name for p in copied) == ["analysis.json", "composite.toml", "replay.toml"]
    assert (tmp_path / "run" / "inputs" / "composite.toml").read_text() == (d / "composite.toml").read_text()


def test_a_test_without_its_file_says_which_file_is_missing(tmp_path):
    d = write_inputs(tmp_path / "only-replay", composite=False)
    with pytest.raises(IolabError, match="composite.toml.*iolab trace analyze"):
        registry.build_plan("replay", suites.make_profile(), TARGET, d)
    d = write_inputs(tmp_path / "only-composite", replay=False)
    registry.build_plan("multi-wsat", suites.make_profile(), TARGET, d)  # needs no replay
    with pytest.raises(IolabError, match="replay.toml"):
        registry.build_plan("replay", suites.make_profile(), TARGET, d)


def test_rwsw_tests_need_a_workload_and_pts_tests_refuse_one(tmp_path):
    with pytest.raises(IolabError, match="needs --workload"):
        registry.build_plan("multi-wsat", suites.make_profile(), TARGET)
    with pytest.raises(IolabError, match="takes no --workload"):
        registry.build_plan("iops", suites.make_profile(), TARGET, write_inputs(tmp_path / "wl"))
    assert registry.build_plan("iops", suites.make_profile(), TARGET).test == "iops"  # PTS calls unchanged


def test_a_file_that_is_no_workload_is_refused_with_its_name(tmp_path):
    bad = tmp_path / "notes.toml"
    bad.write_text("[other]\nx = 1\n")
    with pytest.raises(IolabError, match="notes.toml: not an iolab workload file"):
        registry.build_plan("multi-wsat", suites.make_profile(), TARGET, bad)
    with pytest.raises(IolabError, match="no such file"):
        registry.build_plan("multi-wsat", suites.make_profile(), TARGET, tmp_path / "nowhere")
    edited = write_inputs(tmp_path / "wl")
    text = (edited / "composite.toml").read_text().replace("share_pct = 30.5", "share_pct = 40.5")
    (edited / "composite.toml").write_text(text)
    with pytest.raises(IolabError, match=r"composite.toml:\d+: .*share_pct adds up to"):
        registry.build_plan("multi-wsat", suites.make_profile(), TARGET, edited)


def test_the_digest_changes_with_the_mix_or_the_outstanding_io_only():
    w = Workload(PAPER_MIX, threads=2, queue_depth=6, duration_s=60.0)
    assert digest(w) == digest(w.with_(name="renamed"))
    assert digest(w) != digest(w.with_(queue_depth=7))
    other = (Stream("rnd", "read", 4 * KiB, 0.5), Stream("rnd", "write", 4 * KiB, 0.5))
    assert digest(w) != digest(w.with_(streams=other))


def test_the_last_interval_of_a_mixed_workload_gets_enough_io_for_the_remaining_writes():
    """The phase budget counts writes, a workload's byte budget all IO: a composite that is half
    writes by bytes needs twice the remaining writes (plus a margin) in its last interval, or
    the phase would approach its budget in ever shorter intervals and never reach it."""
    from iolab.core.plan import Cell, Phase
    from iolab.run.budget import within_budget

    half = Workload((Stream("rnd", "read", 8 * KiB, 0.5), Stream("rnd", "write", 8 * KiB, 0.5)), duration_s=1.0)
    writes = Workload((Stream("rnd", "write", 4 * KiB, 1.0),), duration_s=1.0)
    reads = Workload((Stream("seq", "read", 64 * KiB, 1.0),), duration_s=1.0)
    for w, remaining, expected in (
        (half, 100 * MiB, 210 * MiB),
        (writes, 100 * MiB, 100 * MiB),
        (reads, 100 * MiB, None),
        (half, 300 * MiB, 630 * MiB),
    ):
        cell = Cell("c", w, "", 0)
        phase = Phase("p", (cell,), (), budget_write_bytes=1000 * MiB)
        # the last interval wrote 600 MiB of writes in its 1 s: the rest is at most half such, the final interval
        got = within_budget(phase, cell, 1000 * MiB - remaining, [(600 * MiB, 1.0)]).workload.bytes_budget
        assert got == pytest.approx(expected, abs=1) if expected else got is None  # a read-only interval is not capped


def test_the_steady_state_rule_names_the_saturation_phases_own_limit(tmp_path):
    from iolab.figures.phaseend import rule_text

    p = plan("multi-wsat", tmp_path, quick=True)
    [ph] = p.phases
    # main printed the profile's "at most 10 rounds" beside "Stop: … 30 intervals (quick)"
    assert ph.max_rounds == 30 and "at most 30 rounds" in rule_text(p) and "at most 10" not in rule_text(p)
    assert "30 intervals (quick)" in dict(p.parameters)["Stop"]
