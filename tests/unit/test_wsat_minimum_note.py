"""The WSAT minimum's note names every interval the write budget cut short: the one before the
final interval can end at its byte cap too (run/budget.py), and `pts --quick` on the default
drive left two, of 41,074 and 40,727 IOPS, beside a minimum of 41,925 with only the last
explained."""

from dataclasses import replace

from iolab.figures.summary import PhaseSummary
from iolab.store.runstore import PhaseRow
from iolab.suites import pts_wsat
from tests.unit.test_char_directions import row


def _phase(partials: dict[int, tuple[float, float]]) -> list[PhaseSummary]:
    """Eleven 1 s intervals, then the ones the budget cut: round -> (seconds, IOPS)."""
    base = row(1, 1, 100, (0, 0.0, 0.0, 0.0, 0.0), (42000, 42000.0, 172.0, 3000.0, 4000.0))
    full = [replace(base, id=r, round=r, runtime_s=1.0, iops=42000.0 - 10 * r) for r in range(1, 12)]
    cut = [replace(base, id=r, round=r, runtime_s=s, iops=i, partial=True) for r, (s, i) in partials.items()]
    rounds = tuple(range(1, 12 + len(cut)))
    ph = PhaseSummary(PhaseRow("main", 0, None, None, None, True, 13, "budget"), rounds, rounds[-5:], True, (), (),
                      (), (), tuple(full + cut))  # fmt: skip
    return [ph]


def _note(partials: dict[int, tuple[float, float]]) -> str:
    [minimum] = [m for m in pts_wsat.key_figures() if m.name == "IOPS, minimum interval"]
    return minimum.note(_phase(partials))


def test_the_note_names_both_intervals_the_budget_cut():
    note = _note({12: (0.407, 41074.0), 13: (0.274, 40727.0)})
    assert note.startswith("the slowest of 11 full intervals; the 2 the budget cut short"), note
    assert "interval 12 (0.407 s, 41,074 IOPS)" in note and "interval 13 (0.274 s, 40,727 IOPS)" in note, note


def test_one_cut_interval_is_the_last():
    note = _note({12: (0.385, 37985.0)})
    assert note == (
        "the slowest of 11 full intervals; the last, cut to 0.385 s by the budget (37,985 IOPS), "
        "is no interval of their length and is left out"
    )
