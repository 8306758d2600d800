"""`iolab check`'s verdicts on made-up run records, Student's t, the tolerances file, JUnit XML,
and the JSON Schema file held to its one declaration."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from iolab.automation.check import check
from iolab.automation.check_junit import junit_xml
from iolab.automation.tolerances import Tolerances, load_tolerances
from iolab.automation.tstat import t_quantile
from iolab.core.errors import EngineError, Exit, IolabError, RefusedError
from iolab.pages.outcome import run_exit_code
from iolab.pages.outcome_schema import SCHEMA, text
from iolab.store.durable import ResultsDiskFull

from ..schema_lite import errors

ROOT = Path(__file__).resolve().parents[2]


def record(
    run_id: str,
    value: float | None,
    rounds=(),
    name="IOPS",
    higher=True,
    test="iops",
    kind: str | None = "value",
    steady="reached",
    unit="IOPS",
    **profile,
) -> dict:
    fig = {
        "name": name,
        "unit": unit,
        "direction": "higher-is-better" if higher else "lower-is-better",
        "value": value,
        "round_values": list(rounds),
    }
    if steady in ("not-reached", "not-evaluated"):  # as outcome's record: a figure of no named phase carries it
        fig["caveats"] = ["STEADY STATE NOT " + ("ACHIEVED" if steady == "not-reached" else "EVALUATED")]
    return {
        "run_id": run_id,
        "test": test,
        "state": "complete",
        "steady_state": steady,
        "profile": {"name": "enterprise", **profile},
        "figures": [fig if kind is None else {**fig, "kind": kind}],
    }


def one(base, cand, tol=0.05) -> dict:
    [f] = check(base, cand, Tolerances(tol))["figures"]
    return f


@pytest.mark.parametrize("df,q", [(1, 12.706), (4, 2.776), (8, 2.306), (30, 2.042), (1e6, 1.960)])
def test_t_quantiles_match_the_tables(df, q):
    assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-3)


def test_a_drop_beyond_tolerance_and_noise_is_a_regression_in_the_figures_direction():
    base = [record("a", 100.0, (99, 100, 101, 100, 100))]
    assert one(base, [record("b", 80.0, (79, 80, 81, 80, 80))])["verdict"] == "regression"
    assert one(base, [record("b", 120.0, (119, 120, 121, 120, 120))])["verdict"] == "improvement"
    # lower is better: a rise is the regression
    lat = [record("a", 100.0, (99, 100, 101, 100, 100), name="ART", higher=False)]
    f = one(lat, [record("b", 120.0, (119, 120, 121, 120, 120), name="ART", higher=False)])
    assert f["verdict"] == "regression" and f["worse_pct"] == pytest.approx(20) and f["change_pct"] == pytest.approx(20)


def test_a_runs_window_rounds_are_never_taken_as_noise():
    # rounds spread ±30 %: main called a 10 % drop within-noise (±35 %); one run per side has no
    # run-to-run noise, so the tolerance alone decides, and the check says so
    base = [record("a", 100.0, (70, 130, 90, 110, 100))]
    f = one(base, [record("b", 90.0, (60, 120, 80, 100, 90))])
    assert f["verdict"] == "regression" and f["noise_pct"] is None and f["detectable_pct"] == pytest.approx(5)
    assert "single runs on both sides" in f["method"] and "window rounds are not repeats" in f["method"]
    assert f["baseline"]["noise_source"] == f["candidate"]["noise_source"] == "none"
    assert one(base, [record("b", 97.0, (96, 97, 98, 97, 97))])["verdict"] == "within-tolerance"
    assert one(base, [record("b", 90.0, (60, 120, 80, 100, 90))], tol=0.2)["verdict"] == "within-tolerance"


def test_without_any_spread_the_tolerance_alone_decides():
    f = one([record("a", 100.0)], [record("b", 94.0)])
    assert f["verdict"] == "regression" and f["noise_pct"] is None and "tolerance alone" in f["method"]
    # repeats that agree exactly give no spread either
    f = one([record("a1", 100.0), record("a2", 100.0)], [record("b", 94.0)])
    assert f["verdict"] == "regression" and "agree exactly" in f["method"]


def test_repeats_give_the_noise_when_a_side_has_several_runs():
    # a figure that is not a magnitude (a signed change) keeps the t interval on its own scale
    base = [record(f"a{i}", v, (v,) * 5, unit="% change") for i, v in enumerate((100.0, 110.0, 90.0))]
    f = one(base, [record("b", 93.0, (93,) * 5, unit="% change")])
    assert f["baseline"]["noise_source"] == "repeats" and f["baseline"]["samples"] == [100.0, 110.0, 90.0]
    # the single candidate run varies as a baseline run does: t(0.975, 2) × 10 × √(1/3 + 1) = 49.7
    assert f["verdict"] == "within-noise" and f["noise_pct"] == pytest.approx(49.69, abs=0.01)
    assert "prediction interval" in f["method"] and f["detectable_pct"] == pytest.approx(f["noise_pct"])
    # both sides repeated: Welch's interval of the two means
    f = one(base, [record(f"b{i}", v, unit="% change") for i, v in enumerate((60.0, 62.0, 58.0))])
    assert f["verdict"] == "regression" and "Welch" in f["method"] and f["candidate"]["noise_source"] == "repeats"


def test_a_figure_the_candidate_lacks_fails_and_one_the_baseline_lacks_is_skipped():
    res = check([record("a", 100.0)], [record("b", None)], Tolerances(0.05))
    assert res["figures"][0]["verdict"] == "missing" and not res["passed"] and res["regressions"] == ["IOPS"]
    res = check([record("a", None)], [record("b", 50.0)], Tolerances(0.05))
    assert res["figures"][0]["verdict"] == "not-measured" and res["passed"]


def test_runs_of_other_tests_or_settings_are_refused_unless_forced():
    with pytest.raises(IolabError, match="one test"):
        check([record("a", 1.0)], [record("b", 1.0, test="latency")], Tolerances(0.05))
    with pytest.raises(IolabError, match="--cell-time: .*--force"):
        check([record("a", 1.0, cell_seconds=1)], [record("b", 1.0, cell_seconds=2)], Tolerances(0.05))
    res = check([record("a", 1.0, cell_seconds=1)], [record("b", 1.0, cell_seconds=2)], Tolerances(0.05), force=True)
    assert res["differences"] == ["--cell-time: a 1s vs b 2s"]


def test_a_run_is_told_by_its_uid_and_only_a_run_stored_before_uids_by_its_id():
    def side(run_id, uid=None):
        return [{**record(run_id, 100.0), **({"uid": uid} if uid else {})}]

    # two runs started in one second in other runs directories share the id, not the uid
    assert check(side("r", "u1"), side("r", "u2"), Tolerances(0.05))["passed"]
    for base, cand in ((side("r", "u1"), side("r", "u1")), (side("r"), side("r"))):
        with pytest.raises(IolabError, match="r is both a candidate and the baseline"):
            check(base, cand, Tolerances(0.05))
    assert check(side("r"), side("s"), Tolerances(0.05))["passed"]


def test_the_tolerances_file_overrides_per_figure_and_says_where_it_is_wrong(tmp_path):
    f = tmp_path / "t.toml"
    f.write_text('[tolerances]\n"IOPS" = "25%"\n')
    tol = load_tolerances(0.05, f)
    assert tol.of("IOPS") == 0.25 and tol.of("other") == 0.05
    assert one([record("a", 100.0)], [record("b", 80.0)], tol=0.25)["verdict"] == "within-tolerance"
    f.write_text('[tolerances]\n"IOPS" = "much"\n')
    with pytest.raises(IolabError, match=r"t\.toml: \[tolerances\] 'IOPS': 'much' is not a percentage"):
        load_tolerances(0.05, f)
    f.write_text('[tolerance]\n"IOPS" = "5%"\n')
    with pytest.raises(IolabError, match="expected a \\[tolerances\\] table.*found tolerance"):
        load_tolerances(0.05, f)
    f.write_text("[tolerances\n")
    with pytest.raises(IolabError, match="not valid TOML"):
        load_tolerances(0.05, f)


def test_a_declared_spread_is_the_noise_of_single_runs(tmp_path):
    f = tmp_path / "t.toml"
    f.write_text('[tolerances]\n"IOPS" = "5%"\n[spread]\n"IOPS" = "4%"\n')
    tol = load_tolerances(0.05, f)
    assert tol.spread == {"IOPS": 0.04}
    [v] = check([record("a", 100.0)], [record("b", 90.0)], tol)["figures"]
    # 1.96 × 4 × √2 = 11.1 %: a 10 % drop is inside the noise, the smallest flagged one is 11.1 %
    assert v["verdict"] == "within-noise" and v["noise_pct"] == pytest.approx(11.09, abs=0.01)
    assert v["detectable_pct"] == pytest.approx(11.09, abs=0.01) and "declared run-to-run spread" in v["method"]
    [v] = check([record("a", 100.0)], [record("b", 85.0)], tol)["figures"]
    assert v["verdict"] == "regression"
    f.write_text('[spread]\n"No such" = "4%"\n')
    with pytest.raises(IolabError, match="no figure named 'No such'"):
        check([record("a", 100.0)], [record("b", 85.0)], load_tolerances(0.05, f))


def test_a_maximum_is_reported_not_judged_unless_it_has_its_own_tolerance(tmp_path):
    mrt = {"name": "MRT", "higher": False, "kind": "extreme"}
    base = [record("a1", 1000.0, (400, 1000), **mrt), record("a2", 3000.0, (3000, 900), **mrt)]
    res = check(base, [record("b", 9000.0, **mrt)], Tolerances(0.05))
    [v] = res["figures"]
    # its side's value is the worst run's, never a mean with a t interval
    assert v["verdict"] == "info" and res["passed"] and v["baseline"]["value"] == 3000.0
    assert v["noise_pct"] is None and v["detectable_pct"] is None and "extreme" in v["method"]
    own = Tolerances(0.05, {"MRT": 1.0})
    [v] = check(base, [record("b", 9000.0, **mrt)], own)["figures"]
    assert v["verdict"] == "regression" and v["worse_pct"] == pytest.approx(200) and v["detectable_pct"] == 100
    [v] = check(base, [record("b", 5000.0, **mrt)], own)["figures"]
    assert v["verdict"] == "within-tolerance"
    # a baseline saved before figures had a kind takes the candidate's
    [v] = check(
        [record("a", 1000.0, name="MRT", higher=False, kind=None)], [record("b", 9000.0, **mrt)], Tolerances(0.05)
    )["figures"]
    assert v["kind"] == "extreme" and v["verdict"] == "info"
    with pytest.raises(IolabError, match="an extreme has no run-to-run standard deviation"):
        check(base, [record("b", 9000.0, **mrt)], Tolerances(0.05, spread={"MRT": 0.1}))


def test_a_percentile_is_each_runs_own_and_window_rounds_do_not_widen_it():
    p = {"name": "99.99 %", "higher": False, "kind": "percentile"}
    [v] = check([record("a", 100.0, (50, 150), **p)], [record("b", 120.0, (60, 180), **p)], Tolerances(0.1))["figures"]
    assert v["verdict"] == "regression" and v["kind"] == "percentile" and v["method"].startswith("percentile")


def test_a_run_without_steady_state_warns_and_fails_only_when_steady_state_is_required():
    base, cand = [record("a", 100.0, steady="not-reached")], [record("b", 100.0)]
    res = check(base, cand, Tolerances(0.05))
    assert res["passed"] and res["not_steady"] == ["a"] and "steady state not reached in a" in res["warnings"][0]
    res = check(base, cand, Tolerances(0.05), require_steady=True)
    assert not res["passed"] and res["regressions"] == [] and "--require-steady" in res["warnings"][0]
    root = ET.fromstring(junit_xml(res))
    [case] = [c for c in root.iter("testcase") if c.get("name") == "steady state"]
    assert root.get("failures") == "1" and case.find("failure").get("type") == "not-steady"
    res = check([record("a", 100.0, steady="not-applicable")], cand, Tolerances(0.05), require_steady=True)
    assert res["passed"] and res["warnings"] == []


def test_require_steady_fails_a_run_never_judged_or_not_complete_as_show_does():
    """show --require-steady exits 6 for a run whose window never filled (not-evaluated) and for a
    run that did not complete; check held such runs to be steady (it knew only not-reached)."""
    never = record("a", 100.0, steady="not-evaluated")
    failed = {**record("c", 100.0), "state": "failed"}
    res = check([never], [record("b", 100.0), failed], Tolerances(0.05), require_steady=True)
    assert not res["passed"] and res["not_steady"] == ["a", "c"]
    [w] = res["warnings"]
    assert w.startswith(
        "steady state not evaluated (its rounds never filled a window) in a; not shown (the run is failed) in c"
    )
    for r in (never, failed):
        assert run_exit_code(r, require_steady=True) == Exit.NOT_STEADY  # the one rule show applies


def test_junit_has_one_case_per_figure_and_a_failure_per_regression():
    res = check([record("a", 100.0)], [record("b", 50.0)], Tolerances(0.05))
    root = ET.fromstring(junit_xml(res))
    [case] = root.iter("testcase")
    assert root.get("failures") == "1" and case.get("name") == "IOPS"
    assert case.find("failure").get("type") == "regression" and "100.0 -> 50.00" in case.find("failure").get("message")


def test_the_schema_file_is_the_declared_schema_and_the_exit_codes_are_one_table():
    assert (ROOT / "docs/schema/outcome.schema.json").read_text() == text(), (
        "regenerate: python -m iolab.pages.outcome_schema > docs/schema/outcome.schema.json"
    )
    res = check([record("a", 100.0, (99, 101))], [record("b", 90.0, (89, 91))], Tolerances(0.05))
    assert errors(res, SCHEMA["$defs"]["check"], SCHEMA) == []
    # the codes tests and scripts already rely on stay what they were
    assert (
        (IolabError.exit_code, RefusedError.exit_code, EngineError.exit_code, ResultsDiskFull.exit_code)
        == (Exit.BAD_INPUT, Exit.REFUSED, Exit.ENGINE, Exit.DISK_FULL)
        == (2, 3, 4, 5)
    )
    doc = (ROOT / "docs/automation.md").read_text()
    for name, code in vars(Exit).items():
        if not name.startswith("_"):
            assert f"| {code} |" in doc, f"docs/automation.md lists no exit code {code} ({name})"
    json.loads(text())


def test_a_run_whose_figures_are_all_of_steady_phases_is_no_drifting_warning():
    """A run not steady in one phase warned "its figures may still be drifting" of figures of a
    steady phase too (Throughput's SEQ 1024KiB beside an unsteady SEQ 128KiB): the warning names
    the figures that carry the caveat (the rule of show's [a], specmatch.figures_steady)."""
    base = record("a", 100.0, steady="not-reached")
    base["figures"] += [{**base["figures"][0], "name": "other", "caveats": []}]
    cand = record("b", 100.0)
    cand["figures"] += [{**cand["figures"][0], "name": "other"}]
    [w] = check([base], [cand], Tolerances(0.05))["warnings"]
    assert w.startswith("steady state not reached in a (its IOPS): its figures may still be drifting"), w
    # none of its figures carries it: nothing is drifting, and no JUnit case says otherwise
    steady = {**base, "figures": [{k: v for k, v in f.items() if k != "caveats"} for f in base["figures"]]}
    res = check([steady], [cand], Tolerances(0.05))
    assert res["passed"] and res["not_steady"] == ["a"] and res["warnings"] == [], res["warnings"]
    assert 'name="steady state"' not in junit_xml(res)
    # --require-steady still fails it, as show --require-steady does, and says why
    res = check([steady], [cand], Tolerances(0.05), require_steady=True)
    assert not res["passed"] and res["warnings"] == [
        "steady state not reached in a (none of its key figures: their phases were steady) (--require-steady: failing)"
    ], res["warnings"]
