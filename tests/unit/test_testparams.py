"""A test's own parameters (`--set NAME=VALUE`): parsing, refusal of unknown or bad values
before anything is written, defaults, report rows, and their travel in the profile."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from iolab.api import registry
from iolab.api import runs as api
from iolab.cli.app import app
from iolab.core import percentages, testparams
from iolab.core import plan as plans
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Phase, Profile
from iolab.core.testparams import Param
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.suites import make_profile
from iolab.suites.testdef import TestDef
from iolab.targets import parse_target

STEPS = Param(
    "steps", (1000, 2000), "demand steps in IOPS", testparams.int_list, testparams.show_list, source="published reviews"
)
TOL = Param("tolerance", 0.02, "shortfall that ends the ramp", percentages.fraction, testparams.show_percent)


def build(profile: Profile, target, workload=None) -> plans.TestPlan:
    v = testparams.values((STEPS, TOL), profile, "ramp-p")
    cells = tuple(
        Cell(
            f"{d} IOPS",
            Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=1, duration_s=1.0, rate_iops=d),
            "100/0",
            4 * KiB,
        )
        for d in v["steps"]
    )
    return plans.TestPlan(
        "ramp-p",
        "Ramp",
        "test",
        profile,
        (Phase("ramp", cells, (), purge=False, max_rounds=1, stop_on_steady=False),),
        profile.rule(),
        1 << 30,
        tuple(testparams.parameter_rows((STEPS, TOL), profile, "ramp-p")),
    )


RAMP = TestDef("ramp-p", "Ramp", "test", "a ramp with parameters", build=build, params=(STEPS, TOL))


@pytest.fixture
def ramp():
    registry.register(RAMP)
    yield RAMP
    registry.unregister(RAMP.name)


def test_parsers_accept_what_they_say_and_refuse_the_rest():
    assert testparams.int_list("5000:5000:20000") == (5000, 10000, 15000, 20000)
    assert testparams.int_list("1,2,4") == (1, 2, 4)
    assert percentages.fraction("2%") == pytest.approx(0.02)
    assert percentages.fraction("50") == 0.5  # a bare number is a percentage, as every iolab option takes one
    assert percentages.fraction("0.5") == pytest.approx(0.005)
    assert testparams.percent_list("0,50,100") == (0, 50, 100)
    assert testparams.seconds("2h") == 7200
    assert testparams.size_list("512,4k,1m") == (512, 4096, 1 << 20)
    for parse, bad in (
        (testparams.int_list, "4,2"),
        (testparams.int_list, "1:0:5"),
        (percentages.fraction, "150%"),
        (testparams.positive_int, "0"),
        (testparams.seconds, "0s"),
        (testparams.size_list, "4k,512"),
        (testparams.percent_list, "0,50,101"),
    ):
        with pytest.raises((ValueError, IolabError)):
            parse(bad)


def test_defaults_and_given_values_reach_the_plan_and_its_report_rows(ramp):
    target = parse_target("sim:enterprise-sas")
    plan = api.plans("ramp-p", make_profile(), target)[0]
    assert [c.key for c in plan.phases[0].cells] == ["1000 IOPS", "2000 IOPS"]
    assert dict(plan.parameters)["steps"] == "1,000, 2,000 (default, published reviews)"
    prof = make_profile(settings=testparams.parse_settings(["steps=100:100:300", "tolerance=5%"]))
    plan = api.plans("ramp-p", prof, target)[0]
    assert [c.workload.rate_iops for c in plan.phases[0].cells] == [100, 200, 300]
    assert dict(plan.parameters)["tolerance"] == "5 % (set with --set)"


def test_unknown_or_bad_settings_are_refused_naming_the_parameter(ramp):
    target = parse_target("sim:enterprise-sas")
    with pytest.raises(IolabError, match="steps, tolerance"):
        api.plans("ramp-p", make_profile(settings=(("stepz", "1"),)), target)
    with pytest.raises(IolabError, match=r"--set steps='4,2' \(test ramp-p\)"):
        api.plans("ramp-p", make_profile(settings=(("steps", "4,2"),)), target)
    with pytest.raises(IolabError, match="takes no parameters"):
        api.plans("iops", make_profile(settings=(("steps", "1"),)), target)
    with pytest.raises(IolabError, match="given twice"):
        testparams.parse_settings(["a=1", "a=2"])


def test_settings_survive_the_manifest_round_trip():
    prof = make_profile(settings=(("b", "2"), ("a", "1")))
    assert prof.settings == (("a", "1"), ("b", "2"))
    from dataclasses import asdict

    back = Profile(**json.loads(json.dumps(asdict(prof))))
    assert back == prof


def test_cli_refuses_an_unknown_setting_and_lists_a_tests_parameters(ramp, tmp_path):
    r = CliRunner().invoke(app, ["run", "ramp-p", "--set", "nope=1", "--runs-dir", str(tmp_path)])
    assert isinstance(r.exception, IolabError) and r.exception.exit_code == 2  # main() prints it, exits 2
    assert "no test in this run has a parameter" in str(r.exception)
    assert not any(tmp_path.iterdir())
    r = CliRunner().invoke(app, ["tests", "ramp-p"])
    assert r.exit_code == 0 and "--set steps=" in r.output and "published reviews" in r.output


def test_a_bad_setting_is_one_sentence_each(tmp_path):
    # iolab run xsr --set group1_time=-1s said "... as a duration (e.g. 250ms, 60s, 5m, 24h)..
    # Length of group 1": the parser's own full stop, then another
    result = CliRunner().invoke(
        app, ["run", "xsr", "--quick", "--set", "group1_time=-1s", "--runs-dir", str(tmp_path / "runs")]
    )
    assert isinstance(result.exception, IolabError)  # main() prints it as its one paragraph, exit 2
    said = str(result.exception)
    assert (
        "cannot read '-1s' as a duration" in said
        and ".." not in said
        and "(e.g. 250ms, 60s, 5m, 24h). Parameter group1_time: Length of group 1" in said
    ), said


@pytest.mark.parametrize("text", ["1,,4", "1,2,", ",1"])
def test_an_empty_value_in_a_list_is_refused_not_dropped(text):
    # 1,,4 was read as 1,4: a value left out, the grid run not the one meant
    for parse in (testparams.int_list, testparams.size_list):
        with pytest.raises(ValueError, match="empty value between commas"):
            parse(text.replace("4", "4k") if parse is testparams.size_list else text)


def test_resume_names_one_kept_round_as_round_1():
    from iolab.run.resume import rounds_text

    assert (rounds_text(1), rounds_text(3)) == ("round 1", "rounds 1-3")  # it said "rounds 1-1 are kept"


def test_an_old_runs_bare_share_is_read_with_every_digit_it_stored():
    """legacy_shares printed the percentage with :g, six digits: a stored 0.123456789 read as 12.3457 %."""
    share = Param("tolerance", 0.02, "", percentages.fraction)
    assert testparams.legacy_shares([share], [("tolerance", "0.123456789")]) == (("tolerance", "12.3456789%"),)
    assert testparams.legacy_shares([share], [("tolerance", "0.07")]) == (
        ("tolerance", "7%"),
    )  # 7.000000000000001 is 7
    assert testparams.settings_meaning([share], [("tolerance", "0.2")]) == testparams.settings_meaning(
        [share], [("tolerance", "20.0%")]
    )
