"""A phase's steady state is declared once (PhaseSummary.steady_state, core/steady.py) and every
page and line reads it: the run's state and the report's not-evaluated banner take the phases
that stored no round from one list, the three places that word a phase's state agree on which
of the four it is, a plot's measurement-window legend carries the not-evaluated caveat the
banner has, and the characterisation and DIRTH terminal tables say how their figures were
reduced over the window. Hand-made phases and manifests, and one scripted (no fio) run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from iolab.api import registry
from iolab.figures.points import DV_PHASE
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.chartext import matrix_view
from iolab.pages.outcome import steady_state
from iolab.pages.report import header
from iolab.pages.report.geometry import plot_violations
from iolab.pages.report.model import Figure, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.textreport import render_dirth, render_phase
from iolab.store.manifest import Manifest
from iolab.store.runstore import PhaseRow
from tests.unit.test_char_directions import phase as mixed_phase
from tests.unit.test_char_directions import row
from tests.unit.test_report import DriveEngine, record


def _phase(name: str, steady: bool | None, tracks: bool, rounds: tuple[int, ...] = (1, 2, 3)) -> PhaseSummary:
    row_ = PhaseRow(name, 0, None, None, None, steady, len(rounds), "stopped")
    return PhaseSummary(row_, rounds, rounds, steady, (), (), (), (), (), tracks=tracks)


def _caveat(run: RunData, ph: PhaseSummary) -> str:
    from iolab.pages.report.sections import window_caveat

    return window_caveat(run, ph)


def _planned(name: str, tracking: bool, stop_on_steady: bool) -> dict:
    return {"name": name, "tracking": [{"name": f"IOPS {name}"}] if tracking else [], "stop_on_steady": stop_on_steady}


def _run(tmp_path: Path, phases: list[PhaseSummary], planned: list[dict]) -> RunData:
    m = Manifest(
        "run-1", "test", "Test", "2.0.2", {}, {}, True, [], {}, [], "rule", {}, {}, "2026-11-30T12:00:00Z",
        state="failed", plan={"phases": planned},
    )  # fmt: skip
    return RunData(tmp_path, m, phases, [], tmp_path)


# -- 1. the planned phases that stored no round: one list, read by the run state and the banner --


def test_the_run_state_and_the_banner_read_one_list_of_phases_that_stored_no_round(tmp_path):
    from iolab.figures.summary import unstored_tracking

    planned = [
        _planned("pc", True, True),  # stored, never judged
        _planned("main", True, True),  # not stored: the run failed first
        _planned("wsat", True, False),  # not stored; tracks steady state for information only
        _planned("qos", False, False),  # not stored; tracks nothing
    ]
    phases = [_phase("pc", None, True)]
    assert [p["name"] for p in unstored_tracking(phases, {"phases": planned})] == ["main", "wsat"]
    run = _run(tmp_path, phases, planned)
    assert steady_state(phases, run.manifest.plan) == "not-evaluated"
    # the banner's caveat leaves out the phase that runs to its budget, stored or not
    assert [(name, ph is not None) for name, ph in run.unjudged()] == [("pc", True), ("main", False)]

    # a Write Saturation run that failed before its first round: its phase tracks steady state,
    # so the run was not evaluated (not "not-applicable", as if it tracked nothing) ...
    only = [_planned("main", True, False)]
    assert steady_state([], {"phases": only}) == "not-evaluated"
    # ... and its report raises no not-evaluated banner: its figures never claim a steady state
    assert _run(tmp_path, [], only).unjudged() == []
    assert steady_state([], {"phases": [_planned("rounds", False, False)]}) == "not-applicable"


# -- 2. one four-state value per phase, which every place words ---------------------------------


def test_a_phase_has_one_of_four_states_and_replace_keeps_it_true():
    from iolab.core.steady import STEADY_STATES
    from iolab.figures.endurance import BASIS_STEADY_WORDS
    from iolab.pages.textreport import PHASE_STEADY_WORDS

    cases = {(True, True): "reached", (False, True): "not-reached", (None, True): "not-evaluated"}
    cases[(None, False)] = "not-applicable"
    for (steady, tracks), state in cases.items():
        assert _phase("p", steady, tracks).steady_state == state
    # computed from the fields, never passed: a summary with another verdict has that verdict's state
    assert replace(_phase("p", None, True), steady=True).steady_state == "reached"
    # each place that words a phase's state has words for every state (WSAT's "for information" is
    # only for phases that track it)
    for words in (PHASE_STEADY_WORDS, header.STEADY_WORDS, header.SHORT_STEADY_WORDS, BASIS_STEADY_WORDS):
        assert set(words) == set(STEADY_STATES)
    assert set(header.INFO_STEADY_WORDS) == set(STEADY_STATES) - {"not-applicable"}


def _phase_line(ph: PhaseSummary) -> str:
    console = Console(width=200, record=True, color_system=None)
    render_phase(ph, console, lambda ph, console: None)
    return console.export_text().splitlines()[0]


def test_show_and_the_header_word_not_applicable_and_not_evaluated_apart(tmp_path):
    untracked, unjudged = _phase("rounds", None, False), _phase("main", None, True)
    assert "steady state not applicable (the phase tracks none)" in _phase_line(untracked)
    assert "; steady state not evaluated;" in _phase_line(unjudged)
    # a phase of its own that tracks nothing and runs to its limit (Consistency, SLC cache): its
    # SS entry said "for information: not evaluated", as if it tracked steady state for information
    one = _run(tmp_path, [untracked], [_planned("rounds", False, False)])
    assert header.steady_text(one) == "rounds 1–3 (steady state not applicable)"
    wsat = _run(tmp_path, [unjudged], [_planned("main", True, False)])
    assert header.steady_text(wsat) == "rounds 1–3 (for information: not evaluated)"
    # several phases: one never judged said "SS n/a" as one that tracks nothing does
    two = _run(tmp_path, [unjudged, untracked], [_planned("main", True, True), _planned("rounds", False, False)])
    assert header.steady_text(two) == "main: rounds 1–3 (SS not evaluated); rounds: rounds 1–3 (SS n/a)"
    assert header.steady_text(two, short=True) == "1–3 SS not evaluated; 1–3 SS n/a"


def test_the_comparisons_window_column_says_n_a_of_a_phase_that_tracks_nothing(tmp_path):
    from iolab.figures.compare import KeyMetric
    from iolab.pages.compare_pages.document import summary_pages

    untracked, unjudged = _phase("rounds", None, False), _phase("main", None, True)
    planned = [_planned("main", True, True), _planned("rounds", False, False)]
    runs = [_run(tmp_path / d, [_phase("main", True, True), unjudged, untracked], planned) for d in ("a", "b")]
    rounds = KeyMetric("rounds", "rounds", True, lambda phases: float(len(phases[0].rounds)))
    pages = summary_pages(runs, ["A", "B"], (rounds,))
    [info] = [b for p in pages for b in p.blocks if isinstance(b, Table) and b.caption == "Drives and runs"]
    # it said "SS not evaluated" of QoS rounds, which track nothing
    assert {row[-1] for row in info.rows} == {"rounds 1–3; rounds 1–3 (SS not evaluated); rounds 1–3 (SS n/a)"}


def test_a_phase_that_reports_steady_state_is_worded_for_information_everywhere(tmp_path):
    # Cross Stimulus Recovery's groups run to their budgets: no banner for a group whose window
    # was not steady, yet the header's short and several-phase forms said "SS NOT ACHIEVED", as
    # did `iolab show` ("steady state NOT reached", in red) and the comparisons' window columns
    from iolab.pages.compare_pages.document import steady_suffix

    groups = [replace(_phase(f"group {i}", s, True), reports_only=True) for i, s in ((1, False), (2, True), (3, None))]
    run = _run(tmp_path, groups, [_planned(ph.phase.name, True, False) for ph in groups])
    assert header.steady_text(run, short=True) == (
        "1–3 not steady, for info; 1–3 steady, for info; 1–3 not evaluated, for info"
    )
    assert header.steady_text(run).startswith("group 1: rounds 1–3 (not steady, for info); group 2: ")
    assert not [b for b in header.banners(run) if "STEADY" in b]
    assert "; for information: not steady;" in _phase_line(groups[0])
    assert [steady_suffix(ph) for ph in groups] == [" (not steady, for info)", "", " (not evaluated, for info)"]
    # Write Saturation, one phase: its full form always said so; its short form now does too
    wsat = _run(tmp_path, [groups[0]], [_planned("group 1", True, False)])
    assert header.steady_text(wsat) == "rounds 1–3 (for information: not steady)"
    assert header.steady_text(wsat, short=True) == "1–3 not steady, for info"
    # a phase that stops at steady state keeps its verdict's words in every form
    main = _run(tmp_path, [_phase("main", False, True)], [_planned("main", True, True)])
    assert header.steady_text(main, short=True) == "1–3 SS NOT ACHIEVED"
    assert "steady state NOT reached" in _phase_line(_phase("main", False, True))
    assert [b for b in header.banners(main) if "STEADY STATE NOT ACHIEVED" in b]


# -- 3. a plot's measurement window says it was never judged ------------------------------------


def _window_legends(run: Path, out: Path) -> list[tuple[str, Figure]]:
    pages = registry.get("latency").pages(RunData.load(run, out))
    figures = [b for p in pages for b in p.blocks if isinstance(b, Figure)]
    return [
        (" ".join(entry.split()), f)
        for f in figures
        for ax in f.drawing.record["axes"]
        for entry in ax["legend"]
        if entry.startswith("measurement")
    ]


def test_the_window_legend_says_steady_state_was_not_evaluated_and_stays_in_its_width(tmp_path):
    run = record(tmp_path / "runs", "latency", DriveEngine(), max_rounds=3)
    legends = _window_legends(run, tmp_path / "out")
    assert legends and {t for t, _ in legends} == {"measurement window (rounds 1–3, steady state not evaluated)"}
    # the longer entry wraps within the legend's width: the layout rules hold for every such plot
    for _, f in legends:
        assert plot_violations(f.drawing.record, f.caption) == []
    judged = _run(tmp_path, [_phase("main", True, True)], [_planned("main", True, True)])
    budget = _run(tmp_path, [_phase("main", None, True)], [_planned("main", True, False)])
    assert _caveat(judged, judged.phases[0]) == "" and _caveat(budget, budget.phases[0]) == ""


# -- 4. the characterisation and DIRTH tables say how each figure was reduced ------------------


def _text(view, ph: PhaseSummary) -> str:
    console = Console(width=400, record=True, color_system=None)
    view(ph, console)
    return " ".join(console.export_text().replace("│", " ").split())


def test_the_matrix_tables_say_each_figure_is_the_windows_mean_or_maximum():
    ph = mixed_phase(
        [
            row(1, 1, 30, (700, 700.0, 2.8, 40.0, 800.0), (300, 300.0, 1.2, 70.0, 900.0)),
            row(2, 2, 30, (900, 900.0, 3.6, 60.0, 500.0), (100, 100.0, 0.4, 90.0, 2000.0)),
        ]
    )
    out = _text(matrix_view, ph)
    assert "mixed: IOPS (average latency µs), each the mean over the measurement window (rounds 1–2)" in out
    said = (
        "write IOPS, MB/s (average / maximum latency µs): the maximum latency the maximum, "
        "the others the mean, over the measurement window (rounds 1–2)"
    )
    assert said in out
    assert "30% W 200.0, 0.8000 (80.00 / 2,000)" in out  # the means, and the maximum's maximum
    # a window of one round (each matrix phase runs one): that round's figures, no "mean" of one
    last = mixed_phase([row(2, 2, 30, (900, 900.0, 3.6, 60.0, 500.0), (100, 100.0, 0.4, 90.0, 2000.0))])
    one = _text(matrix_view, replace(last, window=(2,), rounds=(2,)))
    assert "mixed: IOPS (average latency µs), round 2" in one and "mean" not in one
    assert "mixed: read IOPS, MB/s (average / maximum latency µs), round 2" in one


def test_a_matrix_tests_steady_preconditioning_shows_its_iops_not_no_cell_measured():
    # entropy --quick (rw-matrix, mixed-matrix with precondition=steady): its preconditioning
    # phase has no queue-depth series, and show said "no cell measured" over the six rounds
    # and the steady-state table it had measured
    cell = CellAverage("RND 4KiB W", "0/100", 4096, (2, 3, 4, 5, 6), 36737.0, 0.0, 36737.0, 150.5, 0.0, 150.5,
                       3463.0, 4628.0, None, None)  # fmt: skip
    row_ = PhaseRow("precondition", 0, None, None, None, True, 6, "steady")
    ph = PhaseSummary(row_, (1, 2, 3, 4, 5, 6), (2, 3, 4, 5, 6), True, (), (cell,), ("0/100",), (4096,), ())
    out = _text(matrix_view, ph)
    assert "no cell measured" not in out
    assert "IOPS, mean over the measurement window" in out and "4KiB 36,737" in out


def _point(key: str, iops: float, art: float) -> CellAverage:
    return CellAverage(key, "100/0", 4096, (4, 5, 6), iops, iops, 0.0, 0.0, 0.0, 0.0, art, 2 * art, None, None)


def _dv(keys: list[str]) -> PhaseSummary:
    cells = tuple(_point(k, 1000.0 * (i + 1), 50.0 + i) for i, k in enumerate(keys))
    row_ = PhaseRow(DV_PHASE, 2, None, None, None, True, 6, "steady")
    return PhaseSummary(row_, (1, 2, 3, 4, 5, 6), (2, 3, 4, 5, 6), True, (), cells, (), (), (), tracks=True)


def test_dirth_demand_variation_says_its_iops_and_art_are_window_means():
    grid = _text(render_dirth, _dv(["TC2/QD2", "TC2/QD1", "TC1/QD2", "TC1/QD1"]))
    assert "Demand variation: IOPS, mean over the measurement window (rounds 2–6)" in grid
    sweep = _text(render_dirth, _dv(["TC1/QD1", "TC2/QD4", "TC4/QD8"]))
    assert "Demand variation: IOPS (mean) and ART (mean) over the measurement window (rounds 2–6)" in sweep
    assert "OIO 32 TC4/QD8 3,000 52.00" in sweep  # the cell's window IOPS and ART as CellAverage holds them


def test_a_budget_phase_too_short_to_judge_is_not_called_not_steady(tmp_path):
    # Write Saturation's note said "(not steady)" when its intervals never filled the window
    from iolab.pages.report.sections import steady_note

    run = _run(tmp_path, [], [_planned("main", True, False)])
    words = {s: " ".join(steady_note(run, _phase("main", s, True)).paragraphs) for s in (True, False, None)}
    assert "(steady)" in words[True] and "(not steady)" in words[False]
    assert "not steady" not in words[None] and "(not evaluated: fewer than five intervals)" in words[None]
