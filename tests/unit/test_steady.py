"""Steady-state maths on hand-computed vectors (the PTS's steady-state rule)."""

import pytest

from iolab.core.steady import SteadyRule, check_variable, evaluate, fit_line

R = [1, 2, 3, 4, 5]
RULE = SteadyRule()
STRICT = SteadyRule(strict=True)


def test_fit_line_hand_computed():
    # ȳ=100, x̄=3, Sxx=10, Sxy=-3 → m=-0.3, b=100.9
    m, b = fit_line(R, [100, 102, 98, 101, 99])
    assert m == pytest.approx(-0.3)
    assert b == pytest.approx(100.9)


def test_flat_window_is_steady_with_table_values():
    v = check_variable("iops", R, [100, 102, 98, 101, 99], RULE)
    assert v.average == pytest.approx(100)
    assert v.range_measured == pytest.approx(4)
    assert v.range_allowed == pytest.approx(20)
    assert v.fit_excursion == pytest.approx(1.2)  # |−0.3| × 4
    assert v.fit_allowed == pytest.approx(10)
    assert v.steady
    assert v.formula() == "y = -0.3·R + 100.9"


def test_passes_range_fails_slope():
    # a steady climb: range 20 = exactly 20 % (inclusive pass), m = 5 → excursion 20 > 10
    v = check_variable("iops", R, [90, 95, 100, 105, 110], RULE)
    assert v.range_ok and not v.slope_ok and not v.steady
    assert v.slope == pytest.approx(5)
    assert v.fit_excursion == pytest.approx(20)


def test_fails_range_passes_slope():
    # symmetric swing: range 60 > 20, but the fit line is flat (m = 0)
    v = check_variable("iops", R, [70, 130, 100, 130, 70], RULE)
    assert not v.range_ok and v.slope_ok and not v.steady
    assert v.slope == pytest.approx(0)


def test_inclusive_versus_strict_on_the_boundary():
    # m = 2.5 exactly → fit excursion 10 = 10 % of 100; range 10
    values = [95, 97.5, 100, 102.5, 105]
    assert check_variable("y", R, values, RULE).steady
    strict = check_variable("y", R, values, STRICT)
    assert strict.range_ok and not strict.slope_ok


def test_zero_average_is_never_steady():
    assert not check_variable("y", R, [0, 0, 0, 0, 0], RULE).steady


def test_evaluate_uses_last_window_and_needs_all_variables():
    hist = {
        "a": [(1, 10), (2, 50), (3, 100), (4, 101), (5, 99), (6, 100), (7, 100)],
        "b": [(r, 200.0) for r in range(1, 8)],
    }
    verdict = evaluate(hist, RULE)
    assert verdict.window == (3, 4, 5, 6, 7)
    assert verdict.steady
    hist["b"][-1] = (7, 400.0)
    verdict = evaluate(hist, RULE)
    assert not verdict.steady
    assert [v.steady for v in verdict.variables] == [True, False]


def test_evaluate_needs_a_full_window():
    assert evaluate({"a": [(r, 1.0) for r in range(1, 5)]}, RULE) is None


def test_window_is_a_parameter():
    rule = SteadyRule(window=3)
    verdict = evaluate({"a": [(1, 1.0), (2, 100.0), (3, 100.0), (4, 100.0)]}, rule)
    assert verdict.window == (2, 3, 4) and verdict.steady


def test_a_shown_only_variable_gets_its_own_verdict_but_does_not_decide():
    hist = {
        "write": [(r, 200.0) for r in range(1, 6)],
        "read": [(1, 100.0), (2, 300.0), (3, 100.0), (4, 300.0), (5, 100.0)],
    }
    verdict = evaluate(hist, RULE, shown_only={"read"})
    assert verdict.steady
    assert [(v.name, v.steady) for v in verdict.variables] == [("write", True), ("read", False)]
    assert not evaluate(hist, RULE).steady  # the same values decide when the read side decides too


def _cell(rnd: int, key: str, iops: float | None, partial: bool = False):
    from iolab.core.cellschema import cell_row

    return cell_row(
        {"id": rnd, "phase": "main", "round": rnd, "ordinal": 0, "kind": "measure", "cell_key": key,
         "workload": "{}", "iops": iops, "partial": int(partial)}
    )  # fmt: skip


def test_stored_history_keeps_the_runner_s_rounds_and_refuses_a_missing_value():
    """One builder for the audit's recheck and resume: partial intervals and rounds after `last`
    are left out, another cell is not read, a tracked cell without its value is named, never 0."""
    from iolab.core.steady import UnmeasuredValue, stored_history

    cells = [_cell(1, "A", 10.0), _cell(2, "A", 11.0), _cell(3, "A", 12.0, partial=True), _cell(2, "B", None)]
    cells.append(_cell(4, "A", 13.0))
    assert stored_history([("v", "A", "iops")], cells) == {"v": [(1, 10.0), (2, 11.0), (4, 13.0)]}
    assert stored_history([("v", "A", "iops")], cells, last=2) == {"v": [(1, 10.0), (2, 11.0)]}
    with pytest.raises(UnmeasuredValue, match="main round 2: tracking metric iops was not measured in cell B"):
        stored_history([("v", "A", "iops"), ("w", "B", "iops")], cells)
