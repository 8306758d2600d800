"""A power meter's log aligned to cells (figures/power.py): each reading weighs by how long it
held, a window the log covers too little of gets no figure, gaps do not hold, clocks shift."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from iolab.core.errors import IolabError
from iolab.figures.power import align, cell_power, parse_meter_log, summarise


def log(rows: list[tuple[float, float]], header: str = "time,watts", offset: float = 0.0):
    text = (header + "\n" if header else "") + "".join(f"{t},{w}\n" for t, w in rows)
    return parse_meter_log(text, "meter.csv", offset)


def test_a_reading_weighs_by_the_time_it_held_not_once():
    # 1 W for 9 s (read every 3 s), then 10 W for 1 s (read twice): 1.9 W on average; the mean of
    # the five readings would be 4.6 W
    m = log([(0, 1.0), (3, 1.0), (6, 1.0), (9, 10.0), (9.5, 10.0), (10, 1.0), (13, 1.0)])
    f = cell_power(m, 0.0, 10.0)
    assert f["avg_mw"] == pytest.approx(1900.0)
    assert f["max_mw"] == 10000.0 and f["coverage_pct"] == pytest.approx(100.0)
    assert f["energy_mj"] == pytest.approx(19000.0)


def test_a_window_takes_its_share_of_the_readings_that_straddle_its_edges():
    m = log([(0, 2.0), (1, 4.0), (2, 6.0), (3, 6.0)])
    # [0.5, 1.5): half a second of 2 W, half of 4 W
    f = cell_power(m, 0.5, 1.5)
    assert f["avg_mw"] == pytest.approx(3000.0) and f["readings"] == 2 and f["max_mw"] == 4000.0


def test_a_window_the_log_covers_too_little_of_is_not_measured():
    m = log([(t, 5.0) for t in range(6)])  # covers [0, 6): the last reading holds one interval
    half = cell_power(m, 3.0, 9.0)
    assert half["coverage_pct"] == pytest.approx(50.0) and half["avg_mw"] is None and half["max_mw"] is None
    assert cell_power(m, 3.0, 9.0, min_coverage=0.5)["avg_mw"] == pytest.approx(5000.0)


def test_a_reading_does_not_hold_across_a_gap_in_the_log():
    # one reading a second, then 60 s of silence: the 9 W reading holds 5 s, not 60
    m = log([(0, 1.0), (1, 1.0), (2, 9.0), (62, 1.0), (63, 1.0)])
    f = cell_power(m, 2.0, 62.0, min_coverage=0.05)
    assert f["covered_s"] == pytest.approx(5.0) and f["avg_mw"] == pytest.approx(9000.0)
    assert cell_power(m, 2.0, 62.0)["avg_mw"] is None


def test_units_times_and_the_meter_clock():
    mw = parse_meter_log("timestamp,mW\n2026-11-29T03:00:00+00:00,1500\n2026-11-29T03:00:01Z,2500\n", "m.csv")
    assert list(mw.mw) == [1500.0, 2500.0] and mw.t[1] - mw.t[0] == 1.0
    bare = parse_meter_log("100,1.5\n101,2.5\n", "m.csv", offset_s=50.0)  # no header: time, watts
    assert list(bare.t) == [150.0, 151.0] and list(bare.mw) == [1500.0, 2500.0]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("time,watts\n2026-11-29T03:00:00,1\n2026-11-29T03:00:01,1\n", "no UTC offset"),
        ("time,watts\n1,1\n0,1\n", "line 3: the time goes back"),
        ("time,watts\n1,1\n2,lots\n", "line 3: the power 'lots' is not a number"),
        ("time,watts\n1,-3\n2,1\n", "not a finite non-negative reading"),
        ("when,volts\n1,1\n", "needs a time column"),
        ("time,watts\n1,1\n", "at least two"),
        ("", "empty"),
    ],
)
def test_a_bad_log_is_refused_with_its_line(text, says):
    with pytest.raises(IolabError, match=says):
        parse_meter_log(text, "meter.csv")


def cell(phase, rnd, i, start, end, kind="measure"):
    return SimpleNamespace(phase=phase, round=rnd, ordinal=i, cell_key=f"c{i}", kind=kind, started=start, ended=end)


def test_phases_and_the_run_weigh_cells_by_their_measured_time():
    m = log([(0, 1.0), (10, 3.0), (12, 3.0), (13, 3.0)])
    cells = align(m, [cell("a", 1, 0, 0, 10), cell("a", 1, 1, 10, 12), cell("b", 1, 0, 20, 30)])
    assert [c.avg_mw for c in cells] == [pytest.approx(1000.0), pytest.approx(3000.0), None]
    a = summarise("a", cells[:2])
    # 10 s at 1 W and 2 s at 3 W: 16/12 W, not the mean of the cells' averages (2 W)
    assert a.avg_mw == pytest.approx(16000 / 12) and a.max_mw == 3000.0 and (a.cells, a.measured) == (2, 2)
    assert summarise("run", cells).measured == 2


def test_a_log_that_misses_every_cell_names_both_times():
    m = log([(0, 1.0), (1, 1.0)])
    with pytest.raises(IolabError, match="covers none of the run's cells.*--offset"):
        align(m, [cell("a", 1, 0, 1000, 1010)])


def irregular(busy_w: float = 1.0, seconds: int = 120, seed: int = 3) -> list[tuple[float, float]]:
    """The tester's meter3.csv: every 2 s one 5.0 W reading that holds 1 s (steady), then 1 s of
    readings every 10 ms at 5.0 W + up to `busy_w` (power changing)."""
    import random

    rnd, rows, t = random.Random(seed), [], 0.0
    while t < seconds:
        rows.append((t, 5.0))
        rows += [(t + 1 + k * 0.01, 5.0 + busy_w * rnd.random()) for k in range(100)]
        t += 2
    return rows


def test_an_irregular_meter_holds_each_steady_reading_until_the_next():
    # before: the median interval (10 ms) made every steady 1 s a gap; no cell was covered, and with
    # --min-coverage 40 the average was over the busy half only (~5,500 mW, +4 %)
    rows = irregular()
    m = log(rows)
    assert m.interval_s == pytest.approx(0.01) and m.gap_s == pytest.approx(5.0)
    f = cell_power(m, 10.0, 110.0)
    truth = sum(w * (1.0 if t % 2 == 0 else 0.01) for t, w in rows if 10 <= t < 110) / 100.0 * 1000
    assert f["coverage_pct"] == pytest.approx(100.0)
    assert f["avg_mw"] == pytest.approx(truth, rel=1e-3) and 5200 < f["avg_mw"] < 5300
    [c] = align(m, [cell("a", 1, 0, 10, 110)])
    assert c.avg_mw == pytest.approx(truth, rel=1e-3)


def test_a_1khz_burst_each_second_holds_the_steady_reading_too():
    # meter2.csv: 0.1 s of readings every 1 ms at 20 W each second, one 5 W reading for the rest
    rows = []
    for s in range(120):
        rows += [(s + k * 0.001, 20.0) for k in range(100)] + [(s + 0.1, 5.0)]
    f = cell_power(log(rows), 10.0, 110.0)
    assert f["coverage_pct"] == pytest.approx(100.0) and f["avg_mw"] == pytest.approx(6500.0, rel=1e-3)


def test_a_log_with_real_gaps_over_the_run_names_them_not_the_clock():
    # one reading a second, silent for 60 s over the cell: the log spans it, the gap is the cause
    rows = [(t, 5.0) for t in range(200) if not 15 < t < 75]
    with pytest.raises(IolabError) as e:
        align(log(rows), [cell("a", 1, 0, 30, 70)])
    text = str(e.value)
    assert "because of its gaps: 1 silence longer than 5 s" in text and "the longest 60 s" in text
    assert "clock" not in text
