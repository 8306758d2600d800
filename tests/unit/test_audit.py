"""The self-audit (audit.py): every invariant passes on a good simulated run and fails on a copy
of it into which a plausible bug was planted (a value stored in the wrong unit, a row logged
twice, a mix stored swapped, steady state declared on a fresh drive, ...). The audit reads the
run only: it never changes a file of it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.core.results import Histogram
from iolab.engines.sim import SimEngine
from iolab.figures.audit import Audit, audit, invariant_names, kinds_of, marker, stored_audit
from iolab.store import bulk as storebulk
from iolab.store.runstore import RunStore
from iolab.targets import parse_target
from tests.unit.test_endurance import qos_run  # noqa: F401 (a run with endurance figures)
from tests.unit.test_report import record


@pytest.fixture(scope="module")
def iops_run(tmp_path_factory) -> Path:
    """A quick IOPS run on a whole small simulated drive: steady on the drive's own evidence."""
    return record(tmp_path_factory.mktemp("runs"), "iops", SimEngine(), parse_target("sim:enterprise-sas?user_gb=0.25"))


def results(run: Path, every: bool = False) -> dict[str, str]:
    """The invariants' statuses. Without `every`, raw-figures is left out: it fails any figure
    planted in results.db (what these tests plant their bugs with) and costs most of an audit of
    this run; its own tests ask for every invariant."""
    only = () if every else tuple(n for n in invariant_names() if n != "raw-figures")
    store = RunStore.open(run)
    try:
        return {r.name: r.status for r in audit(store, only=only).results}
    finally:
        store.close()


def planted(run: Path, tmp_path: Path, *sql: str, manifest=None) -> Path:
    """A copy of `run` with these statements run on its results.db (and `manifest(dict)` applied)."""
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    db = sqlite3.connect(copy / "results.db")
    for s in sql:
        db.execute(s)
    db.commit()
    db.close()
    if manifest is not None:
        m = json.loads((copy / "manifest.json").read_text())
        manifest(m)
        m["audit"] = {}  # the stored audit was of the good run
        (copy / "manifest.json").write_text(json.dumps(m))
    return copy


def only_failed(run: Path, every: bool = False) -> list[str]:
    return [n for n, s in results(run, every).items() if s == "fail"]


def test_a_good_run_passes_and_its_end_stored_the_audit(iops_run):
    got = results(iops_run, every=True)
    assert "fail" not in got.values(), got
    assert got["steady-evidence"] == got["waf-floor"] == got["series-totals"] == "pass"
    stored = json.loads((iops_run / "manifest.json").read_text())["audit"]
    assert stored["passed"] is True and stored["counts"]["fail"] == 0
    assert [i["name"] for i in stored["invariants"]] == list(got)


def test_the_audit_reads_the_run_and_writes_nothing(iops_run):
    before = {p: p.stat().st_mtime_ns for p in iops_run.rglob("*") if p.is_file()}
    results(iops_run)
    assert {p: p.stat().st_mtime_ns for p in iops_run.rglob("*") if p.is_file()} == before


def test_steady_state_on_part_of_the_drive_fails(iops_run, tmp_path):
    def cut(m):
        m["target"]["tested_capacity"] = m["target"]["capacity"] // 8

    bad = planted(iops_run, tmp_path, manifest=cut)
    assert only_failed(bad) == ["steady-evidence"]
    store = RunStore.open(bad)
    reason = audit(store).results[0].reason
    store.close()
    assert "steady on 12% of the drive's LBAs (tested 0.031 of 0.250 GB, the range cut by the quick limit)" in reason


def test_an_active_range_the_profile_asks_for_is_not_a_cut(iops_run, tmp_path):
    # PTS client tests address 75 % of the drive: that range is the test's, not cut short
    def client(m):
        m["profile"]["active_range"] = 0.75
        m["target"]["tested_capacity"] = int(m["target"]["capacity"] * 0.75)

    assert results(planted(iops_run, tmp_path, manifest=client))["steady-evidence"] == "pass"


def test_steady_state_on_a_real_drive_needs_the_minimum_written_since_the_purge(iops_run, tmp_path):
    # no engine counters (fio): the evidence is the bytes written since the purge
    real = planted(iops_run, tmp_path, "UPDATE cells SET counters='{}'")
    assert results(real)["steady-evidence"] == "pass"
    bad = planted(real, tmp_path / "b", "UPDATE cells SET write_bytes = write_bytes / 100")
    assert only_failed(bad) == ["steady-evidence"]


def test_a_percentile_shown_from_too_few_ios_fails(iops_run, monkeypatch):
    # the bug: a view reads the percentile whatever the IO count (a 1 s cell has far fewer
    # than the 99.999 % needs)
    monkeypatch.setattr(Histogram, "measured", Histogram.percentile)
    assert only_failed(iops_run) == ["percentile-samples"]


# (the plausible bug, the statement that plants it in a copy of the good run, the invariants that fail)
PLANTED = [
    (
        "steady state declared on the fresh drive's flat plateau, before GC ever ran",
        "UPDATE cells SET counters=json_set(counters, '$.erases', 0.0)",
        ["steady-evidence"],
    ),
    (
        "a compression model applied to random data",
        "UPDATE cells SET counters=json_set(counters, '$.flash_write_bytes', json_extract(counters, "
        "'$.host_write_bytes') * 0.6) WHERE id = (SELECT MAX(id) FROM cells WHERE write_ios > 0)",
        ["waf-floor"],
    ),
    (
        "one second logged twice",
        "INSERT INTO series SELECT cell_id, t_s + 1, read_iops, write_iops, mbps, lat_mean_us, lat_max_us "
        "FROM series WHERE cell_id = (SELECT MIN(id) FROM cells WHERE kind='measure')",
        ["series-totals"],
    ),
    (
        "nanoseconds stored as microseconds",
        "UPDATE cells SET lat_max_us = lat_max_us * 1000 WHERE id = (SELECT MAX(id) FROM cells)",
        ["latency-runtime"],
    ),
    (
        "the histogram's overflow bin dropped, so percentiles are read off fewer IOs than measured",
        "DELETE FROM histograms WHERE rowid = (SELECT MAX(rowid) FROM histograms "
        "WHERE cell_id = (SELECT MIN(id) FROM cells WHERE kind='measure'))",
        ["percentile-samples"],
    ),
    (
        "MiB/s stored as MB/s",
        "UPDATE cells SET write_mbps = write_mbps / 1.048576 WHERE write_ios > 0",
        ["iops-bytes"],
    ),
    (
        "the read and write sides of a mixed cell stored swapped",
        "UPDATE cells SET read_ios = write_ios, write_ios = read_ios, read_iops = write_iops, "
        "write_iops = read_iops, read_mbps = write_mbps, write_mbps = read_mbps WHERE mix = '65/35'",
        ["rw-shares"],
    ),
]


@pytest.mark.parametrize("bug, sql, failing", PLANTED, ids=[p[2][0] for p in PLANTED])
def test_each_invariant_fails_on_a_planted_bug(iops_run, tmp_path, bug, sql, failing):
    assert only_failed(planted(iops_run, tmp_path, sql)) == failing, bug


# A correct replay composite round on a file (real fio 3.33, one 200 ms round of `iolab run replay`:
# RND 64 KiB reads and SEQ 4 KiB writes, two jobs): fio timed the reads over 201 ms and the writes
# over 207 ms, so the cell's IOPS (their sum) × its mean IO size is 1.3 % short of its MB/s.
COMPOSITE = (
    """UPDATE cells SET workload = json_set(workload, '$.streams', json('[{{"access": "rnd", "op": "read", """
    """"block_size": 65536, "share": 0.505}}, {{"access": "seq", "op": "write", "block_size": 4096, "share": 0.495}}]')), """
    "read_ios = 702, write_ios = 687, io_bytes = 48820224, write_bytes = 2813952, read_iops = {read_iops}, "
    "write_iops = 3318.84058, iops = {iops}, read_mbps = 228.886925, write_mbps = 13.593971, mbps = {mbps} "
    "WHERE id = (SELECT MIN(id) FROM cells WHERE kind = 'measure' AND mix = '50/50')"
)


@pytest.mark.parametrize(
    "figures, status",
    [
        ({"read_iops": 3492.537313, "iops": 6811.377893, "mbps": 242.480896}, "pass"),
        # the reads' IOPS counted over a time 5 % shorter than their bytes were
        ({"read_iops": 3492.537313 * 1.05, "iops": 3492.537313 * 1.05 + 3318.84058, "mbps": 242.480896}, "fail"),
        ({"read_iops": 3492.537313, "iops": 6811.377893, "mbps": 242.480896 / 1.048576}, "fail"),  # MiB/s as MB/s
        ({"read_iops": 3492.537313, "iops": 6811.377893 * 2, "mbps": 242.480896}, "fail"),  # a direction counted twice
    ],
    ids=["correct", "reads-iops-off", "total-mib-s", "total-iops-doubled"],
)
def test_a_composite_whose_reads_and_writes_fio_timed_apart_is_judged_by_its_counts(
    iops_run, tmp_path, figures, status
):
    # iops-bytes failed a correct replay (574.28 IOPS × 35,062 B mean against 18.68 MB/s): it
    # weighed the directions' summed rates by the cell's mean size, as if both ran the same time
    got = results(planted(iops_run, tmp_path, COMPOSITE.format(**figures)))
    assert got["iops-bytes"] == status, got


def test_hdd_per_second_throughput_beyond_media_and_cache_fails(tmp_path_factory, tmp_path):
    run = record(
        tmp_path_factory.mktemp("runs"), "throughput", SimEngine(), parse_target("sim:sas-15k-hdd?capacity_gb=0.25")
    )
    got = results(run)
    assert got["hdd-media"] == "pass" and "fail" not in got.values(), got
    # the bug: the per-second MB/s of a striped pair of logs summed twice
    bad = planted(run, tmp_path, "UPDATE series SET mbps = mbps * 3")
    assert "hdd-media" in only_failed(bad)


def test_an_endurance_basis_of_compressible_data_fails(qos_run, tmp_path, monkeypatch):
    from iolab.figures import endurance

    assert results(qos_run)["endurance-basis"] == "pass"
    # the window's cells wrote compressible data: endurance leaves them out of its basis
    mixed = planted(qos_run, tmp_path, "UPDATE cells SET workload = json_set(workload, '$.entropy', 0.5)")
    assert results(mixed)["endurance-basis"] != "fail"
    # the bug: endurance's filter lets compressible cells into its basis (their WAF flatters TBW and DWPD)
    monkeypatch.setattr(endurance, "_incompressible", lambda r: True)
    assert "endurance-basis" in only_failed(mixed)


def test_a_run_stored_before_the_audit_is_audited_when_read(iops_run, tmp_path):
    def older(m):
        del m["audit"]

    old = planted(iops_run, tmp_path, manifest=older)
    store = RunStore.open(old)
    a = stored_audit(store)
    store.close()
    assert not a.stored and a.passed and len(a.results) == len(invariant_names())
    assert Audit.from_dict(a.to_dict()).results == a.results


def test_marks_reach_the_figures_an_invariant_touches():
    a = Audit.from_dict(
        {
            "invariants": [
                {"name": "latency-runtime", "touches": ["latency", "percentile"], "status": "fail", "reason": "x"},
                {"name": "iops-bytes", "touches": ["IOPS", "MB/s"], "status": "pass", "reason": "y"},
            ]
        }
    )
    assert a.marks(kinds_of("99.999 % RND 4KiB R/W 0/100", "µs")) == ("latency-runtime",)
    assert a.marks(kinds_of("ART, window", "ms")) == ("latency-runtime",)
    assert a.marks(kinds_of("RND 4KiB R/W 0/100 IOPS", "IOPS")) == ()
    assert marker(a.marks(kinds_of("MRT", "µs"))) == "⚠ audit: latency-runtime failed"


def steady_reason(run: Path) -> str:
    store = RunStore.open(run)
    try:
        return next(r.reason for r in audit(store).results if r.name == "steady-evidence")
    finally:
        store.close()


def test_a_verdict_its_own_window_contradicts_fails(iops_run, tmp_path):
    # the bug: the verdict stored is not the one its steady-state table (and cells) give,
    # either way (what `show` printed as "steady state reached" over its table's FAILs)
    flipped = planted(iops_run, tmp_path / "a", "UPDATE phases SET steady = 0, stop_reason = 'x'")
    assert only_failed(flipped) == ["steady-evidence"]
    assert "main: stored as not steady, but its window (rounds 1-5) passes the rule" in steady_reason(flipped)
    # the table's verdict flipped, the phase's kept: the table is not what its values give either
    table = planted(iops_run, tmp_path / "b", "UPDATE steady SET range_ok = 0 WHERE variable = 'IOPS 0/100 4KiB'")
    assert only_failed(table) == ["steady-evidence"]
    reason = steady_reason(table)
    assert "the steady-state table says IOPS 0/100 4KiB fails over rounds 1-5, its values pass the rule" in reason
    assert (
        "main: stored as steady, but its window (rounds 1-5) fails the rule: IOPS 0/100 4KiB: marked failing" in reason
    )


def test_a_steady_table_that_is_not_its_cells_fails(iops_run, tmp_path):
    # the bug: one window round's tracked cell is not the value the table judged
    bad = planted(iops_run, tmp_path, "UPDATE cells SET iops = iops * 3 WHERE cell_key = '0/100 4KiB' AND round = 3")
    assert "steady-evidence" in only_failed(bad)
    reason = steady_reason(bad)
    assert "main: the steady-state table's IOPS 0/100 4KiB is " in reason and "in round 3, its cell" in reason
    assert "main: stored as steady, but its window (rounds 1-5) fails the rule: IOPS 0/100 4KiB: range" in reason


def test_not_steady_on_a_fresh_drive_over_a_passing_window_is_no_contradiction(iops_run, tmp_path):
    # as the runner stores it (phaseend.settle): the window passed, too little was written since the purge
    fresh = planted(
        iops_run,
        tmp_path,
        "UPDATE cells SET counters = '{}', write_bytes = write_bytes / 100",
        "UPDATE phases SET steady = 0",
    )
    assert results(fresh)["steady-evidence"] == "pass"


def test_the_verdict_is_the_runners_when_erases_are_counted_and_too_little_was_written(iops_run, tmp_path):
    # the simulator counts erases in every window round, yet too little was written since the
    # purge: the runner (phaseend.settle) stores not steady, and the audit decides as it does
    few = "UPDATE cells SET write_bytes = write_bytes / 100"
    fresh = planted(iops_run, tmp_path / "a", few, "UPDATE phases SET steady = 0")
    assert results(fresh)["steady-evidence"] == "pass"
    # ... and a verdict of steady stored over that evidence is one the runner would not store
    bad = planted(iops_run, tmp_path / "b", few)
    assert only_failed(bad) == ["steady-evidence"]
    assert "main: stored as steady, but the runner turns its window down: steady state not reached" in (
        steady_reason(bad)
    )


def test_a_verdict_changed_after_the_runs_audit_is_marked_where_it_is_shown(iops_run, tmp_path):
    # results.db changed after the run stored its (passing) audit: show, --json and the report
    # read the stored audit, with steady-evidence made again
    flipped = planted(iops_run, tmp_path, "UPDATE phases SET steady = 0")
    store = RunStore.open(flipped)
    try:
        a = stored_audit(store)
    finally:
        store.close()
    assert a.stored and [r.name for r in a.failed] == ["steady-evidence"]
    assert json.loads((flipped / "manifest.json").read_text())["audit"]["passed"] is True


def test_raw_figures_are_made_again_when_read_once_results_db_or_a_raw_output_changed(iops_run, tmp_path, monkeypatch):
    # reading a stored audit (show, the report, history) derives every cell's figures from its raw
    # output again only when results.db or a raw file is no longer as the run's end left it
    from iolab.figures import audit_rederive
    from iolab.figures.audit_rederive import rederive

    made = []

    def counting(*args):
        made.append(1)
        return rederive(*args)

    monkeypatch.setattr(audit_rederive, "rederive", counting)

    def stored(run: Path) -> list[str]:
        made.clear()
        store = RunStore.open(run)
        try:
            return [r.name for r in stored_audit(store).failed]
        finally:
            store.close()

    copy = planted(iops_run, tmp_path / "copy")  # a copy keeps each file's size and mtime
    assert stored(copy) == [] and made == []
    raw = next((copy / "raw").glob("*.json"))
    st = raw.stat()
    os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # touched: read again, still the cell's figures
    assert stored(copy) == [] and made == [1]
    scaled = planted(iops_run, tmp_path / "scaled", "UPDATE cells SET p99 = p99 * 0.7 WHERE id = 5")
    assert stored(scaled) == ["raw-figures"] and made == [1]
    assert json.loads((scaled / "manifest.json").read_text())["audit"]["passed"] is True  # as stored


def test_a_whole_raw_output_no_engine_wrote_fails_raw_figures(iops_run, tmp_path):
    # a cell's JSON replaced by one of another shape: whole (raw-output passes it), but no figure
    # of the cell rests on it any more
    from iolab.figures.audit_raw import json_outputs

    copy = planted(iops_run, tmp_path)
    store = RunStore.open(copy)
    try:
        first = store.cells()[0]  # the first cell the audit names
        [name] = json_outputs(first)
        (copy / name).write_text(json.dumps({"iops": 1000.0}))
        got = audit(store)
    finally:
        store.close()
    assert [r.name for r in got.failed] == ["raw-figures"]
    said = next(r.reason for r in got.failed)
    where = f"{first.phase} round {first.round} {first.cell_key}"
    assert said.startswith(f"{where}: its figures cannot be derived again from its raw output: "), said
    assert f"raw output {name}: not a report of an engine iolab runs" in said, said


def test_raw_output_reads_fio_status_reports_and_finds_a_cut(tmp_path):
    """fio's output may hold status reports and warnings before its final report: whole, it
    passes; cut inside its final report, it is truncated; empty, it holds no result."""
    from iolab.figures.audit_raw import damage

    final = (Path(__file__).parents[1] / "fixtures" / "fio" / "drain4s.json").read_text()
    out = tmp_path / "cell.json"
    out.write_text("fio: warning, a line of text\n" + final + "\n" + final)
    assert damage(out) is None
    out.write_text("fio: warning\n" + final + "\n" + final[: len(final) // 2])
    assert (damage(out) or "").startswith("truncated")
    out.write_text("")
    assert damage(out) == "holds no JSON result (0 bytes)"
    assert damage(tmp_path / "gone.json") == "missing"


def test_raw_output_parses_again_only_what_changed_since_its_cell_was_stored(iops_run, tmp_path, monkeypatch):
    """The store records each whole raw output's size and mtime with its cell; the audit parses
    only a file no longer as recorded (parsing all 281 whenever a stored audit was read cost 20 ms
    of CPU per `show`, and `history` paid it per run), so a cut, grown or rewritten file still
    fails raw-output, and a run stored before the record is parsed whole, as before."""
    from iolab.figures import audit_raw

    parsed = []
    monkeypatch.setattr(
        audit_raw, "damage", lambda p, *a, whole=audit_raw.damage: parsed.append(p.name) or whole(p, *a)
    )
    copy = planted(iops_run, tmp_path)  # copied with its files' times, as `cp -a` or rsync -a
    assert results(copy)["raw-output"] == "pass" and parsed == []
    db = sqlite3.connect(copy / "results.db")
    rows = db.execute("SELECT raw_files FROM cells WHERE kind = 'measure' ORDER BY id DESC LIMIT 3").fetchall()
    db.close()
    cut, grown, zeroed = (copy / next(f for f in json.loads(r) if f.endswith(".json")) for (r,) in rows)
    cut.write_bytes(cut.read_bytes()[:-10])
    grown.write_bytes(grown.read_bytes() + b'\n{"jobs": [')
    zeroed.write_bytes(b"\0" * zeroed.stat().st_size)  # as a crash can leave a file: its size, no data
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    iolab = str(Path(sys.executable).parent / "iolab")
    shown = subprocess.run([iolab, "show", str(copy)], capture_output=True, text=True, timeout=120)
    assert "FAILED: raw-output" in shown.stdout, shown.stdout + shown.stderr
    assert {p: p.stat().st_mtime_ns for p in copy.rglob("*")} == before  # a reader records nothing
    store = RunStore.open(copy)
    try:
        said = {r.name: r for r in audit(store).results}["raw-output"]
        bad = audit_raw.damaged_outputs(copy, store.cells(), storebulk.raw_stats(store))[1]
    finally:
        store.close()
    assert said.status == "fail" and said.numbers["failures"] == 3, said
    assert sorted(parsed) == sorted(p.name for p in (cut, grown, zeroed) for _ in (said, bad))  # the audit, then here
    for path, why in [(cut, "is truncated"), (grown, "is truncated"), (zeroed, "holds no JSON result (")]:
        assert any(f"raw output raw/{path.name} {why}" in line for line in bad), bad

    parsed.clear()
    older = planted(iops_run, tmp_path / "older", "DROP TABLE raw_stats")  # stored before the record
    assert results(older)["raw-output"] == "pass" and len(parsed) == len(list((older / "raw").glob("*.json")))


def test_a_raw_output_not_whole_as_its_cell_is_stored_is_not_recorded(tmp_path):
    # fio's parser reads past a status report cut short, so the runner stores such a cell: its
    # file is recorded only when whole by the audit's own test, which then fails it on every read
    from iolab.store.resultsdb import raw_stat_rows

    final = (Path(__file__).parents[1] / "fixtures" / "fio" / "drain4s.json").read_text()
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "whole.json").write_text(final)
    (tmp_path / "raw" / "cut.json").write_text(final + "\n" + final[:100])
    (tmp_path / "raw" / "log.txt").write_text("fio: a log")
    names = ["raw/whole.json", "raw/cut.json", "raw/gone.json", "raw/log.txt"]
    st = (tmp_path / "raw" / "whole.json").stat()
    assert raw_stat_rows(tmp_path, names) == [("raw/whole.json", st.st_size, st.st_mtime_ns)]


def test_raw_output_whole_but_not_the_cells_result_fails(tmp_path):
    """Valid JSON is not enough: a file cut exactly where an earlier status report ends, or a
    report whose jobs list lost a job, is whole yet holds other IO counts than the cell stored
    (its figures were computed from the final report): not the cell's result."""
    from iolab.core.results import held_ios
    from iolab.figures.audit_raw import damage

    final_text = (Path(__file__).parents[1] / "fixtures" / "fio" / "drain4s.json").read_text()
    final = json.loads(final_text)
    stored = held_ios(final)
    assert stored is not None and sum(stored) > 0
    out = tmp_path / "cell.json"
    out.write_text(final_text)
    assert damage(out, stored) is None
    earlier = json.loads(final_text)  # a status report a second before the end: fewer IOs so far
    for j in earlier["jobs"]:
        for side in ("read", "write"):
            j[side]["total_ios"] = j[side]["total_ios"] * 3 // 4
            for lat in ("lat_ns", "clat_ns"):  # its latencies' sample counts, which a cell's IOs are
                j[side][lat]["N"] = j[side][lat].get("N", 0) * 3 // 4
    out.write_text(json.dumps(earlier) + "\n")  # cut where that report ends
    assert (damage(out, stored) or "").startswith("not the cell's result: its report holds"), damage(out, stored)
    assert damage(out) is None  # whole: only the counts tell
    out.write_text(json.dumps({**final, "jobs": final["jobs"][1:]}))
    assert (damage(out, stored) or "").startswith("not the cell's result"), damage(out, stored)


def test_a_stored_audit_read_after_results_db_changed_makes_every_invariant_again(iops_run, tmp_path):
    # the mix of a cell stored swapped after the run: `show` read the stored audit with only
    # raw-figures made again, so rw-shares (and iops-bytes) kept their stored pass beside it
    from iolab.figures.audit import RECHECKED

    swapped = planted(iops_run, tmp_path / "swapped", PLANTED[-1][1])
    iolab = str(Path(sys.executable).parent / "iolab")
    shown = subprocess.run([iolab, "show", str(swapped), "--json"], capture_output=True, text=True, timeout=120)
    got = json.loads(shown.stdout)["runs"][0]["audit"]
    assert got["stored"] is True and got["failed"] == ["rw-shares", "raw-figures"], got
    assert got["remade"] == list(invariant_names()), got
    said = subprocess.run([iolab, "show", str(swapped)], capture_output=True, text=True, timeout=120).stdout
    assert "made again now from the run as it is: every invariant" in " ".join(said.split()), said
    # unchanged since its end: the cheap ones only, and they are named
    store = RunStore.open(planted(iops_run, tmp_path / "copy"))
    try:
        a = stored_audit(store)
    finally:
        store.close()
    assert a.stored and a.remade == RECHECKED and a.passed
    assert a.remade_text().endswith("made again now from the run as it is: " + ", ".join(RECHECKED))


def test_a_raw_figures_failure_marks_the_figures_of_the_kinds_that_differ(iops_run, tmp_path):
    # a percentile edited after the run marked every IOPS figure of an IOPS run (raw-figures
    # touched every kind); now the figures of the kinds found to differ, and the banner still
    # names the failure
    iolab = str(Path(sys.executable).parent / "iolab")

    def shown(run: Path) -> dict:
        p = subprocess.run([iolab, "show", str(run), "--json"], capture_output=True, text=True, timeout=120)
        return json.loads(p.stdout)["runs"][0]

    pct = planted(iops_run, tmp_path / "pct", "UPDATE cells SET p99_99 = p99_99 * 0.7 WHERE id = 5")
    got = shown(pct)
    [failed] = [r for r in got["audit"]["invariants"] if r["status"] == "fail"]
    assert failed["name"] == "raw-figures" and failed["touches"] == ["percentile"], failed
    assert got["audit"]["failed"] == ["raw-figures"]  # the run's banner (show, the report's head)
    iops = [f for f in got["figures"] if f["unit"] == "IOPS"]
    assert iops and all(f["audit"] == [] for f in iops), iops
    rate = planted(iops_run, tmp_path / "rate", "UPDATE cells SET read_iops = read_iops * 1.5, iops = iops * 1.5")
    got = shown(rate)
    touched = {r["name"]: r["touches"] for r in got["audit"]["invariants"] if r["status"] == "fail"}
    assert "IOPS" in touched["raw-figures"] and "percentile" not in touched["raw-figures"], touched
    assert all("raw-figures" in f["audit"] for f in got["figures"] if f["unit"] == "IOPS"), got["figures"]
