"""What `iolab run` prints when its output is a CI log or a pipe, not a terminal: timestamped
round and phase lines, and an ETA in wall-clock time from the run's own measured pace."""

from __future__ import annotations

import re

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

STAMP = re.compile(r"^(\d\d):(\d\d):(\d\d) ")
CLOCK = r"\d+:\d\d(?::\d\d)?"
ETA = re.compile(
    rf"ETA ({CLOCK})(?:–({CLOCK}))? \(done by (\d\d):(\d\d):(\d\d) at the latest; wall clock: "
    r"simulated time × ([0-9.e+-]+), the wall/virtual ratio measured so far\)"
)


def seconds(h: str, m: str, s: str) -> int:
    return int(h) * 3600 + int(m) * 60 + int(s)


def span(text: str) -> int:
    parts = [int(x) for x in text.split(":")]
    return sum(v * 60**i for i, v in enumerate(reversed(parts)))


def test_a_piped_run_on_the_simulator_prints_timestamped_rounds_phases_and_a_wall_clock_eta(tmp_path):
    p = iolab(
        "run",
        "latency",
        "-t",
        "sim:enterprise-sas?user_gb=0.125",
        "--quick",
        "--cell-time",
        "1s",
        "--max-rounds",
        "5",
        "--no-report",
        "--runs-dir",
        str(tmp_path),
    )
    assert p.returncode in (0, 1), p.stdout + p.stderr
    stamped = [ln for ln in p.stdout.splitlines() if STAMP.match(ln)]
    assert any(re.search(r"round 1 done: .*\(steady state needs a window of 5 rounds\)", ln) for ln in stamped), (
        p.stdout
    )
    assert any(" phase done after " in ln for ln in stamped), p.stdout
    etas = [(ln, ETA.search(ln)) for ln in stamped if "simulated time ×" in ln]
    assert etas, p.stdout
    for line, m in etas:
        assert m, line
        # "done by" is the line's own time plus the latest estimate: wall clock, not virtual time
        stamp = seconds(*STAMP.match(line).groups())
        latest = span(m.group(2) or m.group(1))
        assert abs((seconds(*m.group(3, 4, 5)) - stamp) % 86400 - latest) <= 2, line
        assert float(m.group(6)) > 0


def test_a_sequence_with_write_saturation_expects_its_end_without_the_24_h_budget(tmp_path):
    # PTS quick: IOPS, Throughput, Latency, then WSAT, which runs until its write budget is written
    # (its 24 h time budget is only what it takes at most): the sequence's ETA said 24 h as its end
    p = iolab(
        "run", "pts", "-t", "sim:enterprise-sas", "--quick", "--cell-time", "100ms", "--no-report",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    lines = p.stdout.splitlines()
    [first] = [line for line in lines if line.startswith("test 1/4: remaining 4 tests, ETA ")]
    expected = re.match(rf"test 1/4: remaining 4 tests, ETA ({CLOCK}) to ({CLOCK}) \(", first)
    assert expected and span(expected[2]) < 3600, first  # IOPS, Throughput, Latency, WSAT's first interval
    budget = "plus the time Write Saturation takes to write its 2.147 GB budget, not yet estimated"
    assert f", {budget}; at most 24:0" in first and first.endswith("(Write Saturation to its time budget)"), first
    # the live ETA of the tests before WSAT, in wall time: the same expected end, the bound said as one
    # the IOPS test's rounds (test 1/4): WSAT's own rounds track IOPS 0/100 4KiB too, and under load
    # they are not folded away (a line a round), so they must not be taken for the IOPS test's
    iops = [line for line in lines if re.search(r"^\S+ main: round \d+ done: IOPS 0/100 4KiB.*ETA test 1/4;", line)]
    said = re.compile(rf"\(done by \d\d:\d\d:\d\d\), {re.escape(budget)}; at most ")
    unsaid = [line for line in iops if not said.search(line)]
    assert iops and not unsaid, unsaid[0] if unsaid else p.stdout  # the line whole: a list's repr is cut
    assert not any("at the latest" in line and "Write Saturation" in line for line in lines), p.stdout
    # WSAT's own: its write rate measured, its time budget only as what it takes at most
    wsat = [line for line in lines if "write budget left at" in line]
    assert wsat and all("test 4/4; to the end of the sequence: " in line for line in wsat)
    assert "at most" in wsat[-1] and "its time budget" in wsat[-1]


def test_a_logged_run_prints_every_report_path_however_many_lines_are_folded(tmp_path):
    # a quick WSAT logs ~100 rounds in seconds: the notes' fold kept only the newest "report: ..."
    # line ("(1 earlier line folded ...) report: ....pdf") and the HTML report's path was lost
    # (whether lines are folded at that moment depends on the pace: test_progress.py folds for sure)
    runs = tmp_path / "runs"
    p = iolab("run", "wsat", "--quick", "--cell-time", "100ms", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    said = [ln.split("report: ", 1)[1] for ln in p.stdout.splitlines() if "report: " in ln]
    assert sorted(said) == sorted(str(f) for f in (run / "report").iterdir()), p.stdout
    assert len(said) == 2


def test_write_saturation_in_a_sequence_is_expected_at_the_rate_its_iops_test_measured(tmp_path):
    """`iolab run pts`: IOPS measures RND 4 KiB W at TC4/QD32, the stimulus Write Saturation
    runs, so WSAT's end is estimated at those rates before it starts (it was "not yet estimated"
    until its own first interval), and the rates printed are the IOPS run's stored ones."""
    import sqlite3

    from iolab.core.units import num

    runs = tmp_path / "runs"
    p = iolab("run", "pts", "--quick", "-t", "sim:enterprise-sas?user_gb=0.25", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    [iops_dir] = [d for d in runs.iterdir() if "-iops-" in d.name]
    with sqlite3.connect(iops_dir / "results.db") as db:
        stored = db.execute(
            "SELECT write_bytes * 1.0 / runtime_s FROM cells WHERE kind = 'measure' AND cell_key = '0/100 4KiB' "
            "ORDER BY round DESC LIMIT 5"
        ).fetchall()
    rates = [r for (r,) in stored]
    said = (
        f"at {num(min(rates) / 1e6)}–{num(max(rates) / 1e6)} MB/s, the write rate of the IOPS test's latest 5 "
        "intervals of the same stimulus"
    )
    out = " ".join(p.stdout.split())
    [last_test] = [line for line in p.stdout.splitlines() if line.startswith("test 4/4: remaining")]
    assert said in last_test and "not yet estimated" not in last_test, last_test
    starts = re.search(r"Write Saturation · phase 1/1: main starts; ETA ([^\n]*)", p.stdout)
    assert starts and "write budget left " + said in starts.group(1), starts
    assert "latest 5 intervals of the same stimulus" in out


def test_write_saturation_alone_has_no_rate_to_go_by_before_its_first_interval(tmp_path):
    p = iolab(
        "run", "wsat", "--quick", "-t", "sim:enterprise-sas?user_gb=0.25", "--no-report",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    # nothing measured its stimulus before it: its own intervals' rates are all it is estimated at
    assert "same stimulus" not in p.stdout and "the write rate of this phase's" in p.stdout
