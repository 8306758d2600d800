"""A run against a spec sheet (figures/specmatch.py): which way each bound is judged, by how
much a figure misses, and that a figure from a run that cannot stand for the drive is never
judged as meeting its spec."""

from pathlib import Path

import pytest

from iolab.figures.specmatch import Measured, match, record_figures, run_reasons, tally, unmeasured_figures
from iolab.figures.specsheet import load_spec_sheet

SHEET = """
[sheet]
model = "Example"
[[criterion]]
name = "random reads"
figure = "RND 4KiB R/W 100/0 IOPS"
min = 100
unit = "kIOPS"
[[criterion]]
name = "random writes"
figure = "RND 4KiB R/W 0/100 IOPS"
min = 40000
claim = 42000
[[criterion]]
name = "read latency"
figure = "ART RND 4KiB R/W 100/0"
max = 100
unit = "us"
[[criterion]]
name = "write latency"
figure = "ART RND 4KiB R/W 0/100"
max = 0.1
unit = "ms"
[[criterion]]
name = "UBER"
figure = "UBER"
max = 1e-17
"""


def _record(**over) -> dict:
    rec = {
        "run_id": "r1",
        "state": "complete",
        "profile": {"quick": False},
        "steady_state": "reached",
        "noncompliance": [],  # a compliant run: any reason it is not keeps it from a verdict
        "audit": {"failed": []},
        "figures": [
            {"name": "RND 4KiB R/W 100/0 IOPS", "unit": "IOPS", "value": 104512.0, "audit": []},
            {"name": "RND 4KiB R/W 0/100 IOPS", "unit": "IOPS", "value": 34000.0, "audit": []},
            {"name": "ART RND 4KiB R/W 100/0", "unit": "µs", "value": 85.0, "audit": []},
            {"name": "ART RND 4KiB R/W 0/100", "unit": "µs", "value": 112.0, "audit": []},
            {"name": "never computed", "unit": "IOPS", "value": None, "audit": []},
        ],
    }
    rec |= over
    if rec["steady_state"] in ("not-reached", "not-evaluated"):  # as outcome's record: each figure's caveat
        head = "STEADY STATE NOT " + ("ACHIEVED" if rec["steady_state"] == "not-reached" else "EVALUATED")
        rec["figures"] = [{**f, "caveats": [head]} if f["value"] is not None else f for f in rec["figures"]]
    return rec


@pytest.fixture
def sheet(tmp_path: Path):
    p = tmp_path / "s.toml"
    p.write_text(SHEET)
    return load_spec_sheet(p)


def _lines(sheet, rec):
    return {ln.criterion.name: ln for ln in match(sheet, record_figures(rec), run_reasons(rec))}


def test_a_steady_run_is_judged_each_bound_its_own_way(sheet):
    lines = _lines(sheet, _record())
    assert lines["random reads"].verdict == "meets"
    assert lines["random reads"].text == "random reads: meets the ≥ 100 kIOPS spec (104.5 kIOPS)"
    # a minimum missed: by how much of the minimum, with the data sheet's claim beside it
    assert lines["random writes"].verdict == "short"
    assert lines["random writes"].text == (
        "random writes: 15 % short (34,000 of 40,000 IOPS); the data sheet claims 42,000"
    )
    # a latency is a maximum: lower is better, 85 µs meets 100 µs, 112 µs is 12 % over 0.1 ms
    assert lines["read latency"].verdict == "meets"
    assert lines["write latency"].verdict == "over" and lines["write latency"].value == pytest.approx(0.112)
    # the measured 0.112 ms as `iolab show` prints a figure (units.num), the bound as the sheet wrote it
    assert lines["write latency"].text.startswith("write latency: 12 % over the maximum (0.1120, at most 0.1 ms)")
    assert lines["UBER"].verdict == "not-measured" and lines["UBER"].text.startswith(
        "UBER: not measured by this run; none"
    )
    assert tally(list(lines.values())) == "2 meet, 1 short, 1 over, 1 not measured"


@pytest.mark.parametrize(
    ("over", "why"),
    [
        ({"profile": {"quick": True}}, "quick run"),
        (
            {"profile": {"quick": True}, "noncompliance": ["quick profile", "1 s per cell instead of 60 s"]},
            "quick run; 1 s per cell instead of 60 s",
        ),
        # not quick, yet as scaled down: 1 s cells were judged "meets" as 60 s ones
        ({"noncompliance": ["1 s per cell instead of 60 s"]}, "1 s per cell instead of 60 s"),
        ({"noncompliance": ["no purge (--purge none)"]}, "no purge (--purge none)"),
        ({"steady_state": "not-reached"}, "steady state not achieved"),
        ({"steady_state": "not-evaluated"}, "steady state not evaluated"),
        (
            {
                "noncompliance": [
                    "active range 12 %: not the drive's steady state (tested capacity limited to 0.016 GB)"
                ]
            },
            "limited range (active range 12 %)",
        ),
        ({"noncompliance": ["active range 50 % (the enterprise profile: 100 %)"]}, "limited range (active range 50 %)"),
        ({"audit": {"failed": ["waf-at-least-1"]}}, "audit failed (waf-at-least-1)"),
        ({"state": "interrupted"}, "interrupted run"),
    ],
)
def test_a_run_that_cannot_stand_for_the_drive_meets_nothing_and_misses_nothing(sheet, over, why):
    lines = _lines(sheet, _record(**over))
    for name in ("random reads", "random writes", "read latency", "write latency"):
        ln = lines[name]
        assert ln.verdict == "not-judged", (name, ln)
        assert ln.text.startswith(f"{name}: not judged: {why}") and "meets" not in ln.text
        assert ln.value is not None and ln.measured is not None  # the figure is still shown
    assert lines["UBER"].verdict == "not-measured"


def test_a_figure_the_audit_marks_is_not_judged_alone(sheet):
    rec = _record()
    rec["figures"][0]["audit"] = ["iops-times-size"]
    lines = _lines(sheet, rec)
    assert (
        lines["random reads"].verdict == "not-judged"
        and "audit marks it (iops-times-size)" in lines["random reads"].text
    )
    assert lines["random writes"].verdict == "short"


def test_a_figure_in_a_unit_that_does_not_convert_is_not_passed(sheet, tmp_path):
    p = tmp_path / "u.csv"
    p.write_text("figure,min,unit,name\nRND 4KiB R/W 100/0 IOPS,100,MB/s,reads in MB/s\n")
    (ln,) = match(load_spec_sheet(p), [Measured("RND 4KiB R/W 100/0 IOPS", 1e5, "IOPS")], [])
    assert ln.verdict == "no-unit" and "not judged" in ln.text and "does not convert" in ln.text


def test_a_long_sheet_keeps_every_verdict_on_its_front_pages(tmp_path):
    from iolab.pages.report.frontpage import layout
    from iolab.pages.report.model import Table, Text

    p = tmp_path / "long.csv"
    p.write_text("figure,min,name\n" + "".join(f"figure number {i},1,criterion {i}\n" for i in range(60)))
    sheet = load_spec_sheet(p)
    pages = layout(match(sheet, [], ["quick run"]), ["quick run"], "r1", sheet)
    said = [t for pg in pages for b in pg.blocks if isinstance(b, Text) for t in b.paragraphs]
    rows = [r for pg in pages for b in pg.blocks if isinstance(b, Table) for r in b.rows]
    assert len(pages) > 2 and len(rows) == 60
    assert [t for t in said if t.startswith("criterion ")] == [
        f"criterion {i}: not measured by this run" for i in range(60)
    ]


def test_a_bound_prints_as_the_sheet_wrote_it_and_a_measured_figure_as_show_prints_it(tmp_path):
    """Before: the front page printed a measured 112.3 µs as "112" (`,.0f` from 100 on) and
    `show`/the fleet as "112.3" (units.num); the sheet's 1234567 IOPS as "1.23457e+06" (`,.6g`).
    Now one rule each: the sheet's own numbers as written (units.given: 0.1 stays 0.1, never num's
    "0.1000"), a measured figure as units.num prints it everywhere."""
    from iolab.figures.specsheet import judge
    from iolab.pages.report.frontpage import _row

    p = tmp_path / "s.toml"
    p.write_text(
        '[[criterion]]\nname = "big"\nfigure = "RND 4KiB R/W 100/0 IOPS"\nmin = 1234567\nclaim = 1500000.5\n'
        '[[criterion]]\nname = "lat"\nfigure = "ART RND 4KiB R/W 0/100"\nmax = 0.1\nunit = "ms"\n'
    )
    sheet = load_spec_sheet(p)
    big, lat = sheet.criteria
    assert big.bounds_text() == "≥ 1,234,567" and lat.bounds_text() == "≤ 0.1 ms"
    rec = _record(figures=[{"name": "ART RND 4KiB R/W 0/100", "unit": "µs", "value": 112.3, "audit": []}])
    lines = _lines(sheet, rec)
    assert lines["lat"].text == "lat: 12 % over the maximum (0.1123, at most 0.1 ms)"
    assert _row(lines["lat"])[1:4] == ("≤ 0.1 ms", "ART RND 4KiB R/W 0/100", "0.1123 ms")
    assert _row(lines["big"])[1] == "≥ 1,234,567 (data sheet 1,500,000.5)"
    [v] = judge("d", {"ART RND 4KiB R/W 0/100": 112.3}, {"ART RND 4KiB R/W 0/100": "µs"}, load_spec_sheet(p))[1:]
    assert v.why == "ART RND 4KiB R/W 0/100 = 0.1123 ms, needs ≤ 0.1 ms"
    rec = _record(figures=[{"name": "ART RND 4KiB R/W 0/100", "unit": "µs", "value": 112.3, "audit": []}])
    p.write_text('[[criterion]]\nname = "lat"\nfigure = "ART RND 4KiB R/W 0/100"\nmax = 200\n')
    [line] = match(load_spec_sheet(p), record_figures(rec), run_reasons(rec))
    # a bound given with no unit is in its figure's, and says so ("≤ 200" beside "112.3 µs")
    assert _row(line)[1:4] == ("≤ 200 µs", "ART RND 4KiB R/W 0/100", "112.3 µs")
    assert line.text == "lat: meets the ≤ 200 µs spec (112.3 µs)"


def test_a_figure_of_the_runs_own_test_without_a_value_says_why_and_suggests_nothing(sheet, tmp_path):
    p = tmp_path / "t.toml"
    p.write_text('[[criterion]]\nfigure = "never computed"\nmax = 1\nname = "tail"\n')
    why = "its 42,389 IOs are too few for a 99.999 % (it needs 1,000,000, 10 of them beyond it)"
    rec = _record()
    rec["figures"][-1]["unmeasured"] = why
    (ln,) = match(load_spec_sheet(p), record_figures(rec), run_reasons(rec), unmeasured_figures(rec))
    assert ln.verdict == "not-measured"
    assert ln.text == f"tail: not measured by this run: never computed is this test's figure, but {why}"
