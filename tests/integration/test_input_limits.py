"""Numbers past any meaning, through the installed `iolab` command: refused with one paragraph
naming the option and its range (exit 2) before a run directory exists, never a traceback; and a
run stored before a limit existed, with such a number in it, still gets its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab


def refused(p, runs: Path) -> str:
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert p.stderr.startswith("iolab: ") and "\n\n" not in p.stderr.strip(), p.stderr
    assert not runs.exists() or not any(runs.iterdir()), "a run directory was stored for refused input"
    return said


@pytest.mark.parametrize("value", ["1e300", "1e9", "1001", "inf", "nan", "-1"])
@pytest.mark.parametrize("command", [["plan"], ["plan", "--json"], ["run", "-q", "--no-report"]])
def test_steady_min_writes_out_of_range_is_refused_as_precondition_factor_is(value, command, tmp_path):
    """1e300 raised OverflowError in steady.min_write_bytes (exit 1; `run` first stored a failed
    run); 1e9 was taken ("1e+09× the tested capacity … 536,871 TB")."""
    runs = tmp_path / "runs"
    given = ["--quick", *command[1:], "-t", SMALL_SIM, "--runs-dir", str(runs), "--steady-min-writes", value]
    p = iolab(command[0], "latency", *given)
    said = refused(p, runs)
    assert "steady-state minimum writes (--steady-min-writes)" in said, said
    assert "give a number from 0 to 1,000 (× the tested capacity; default 2)" in said, said


def test_steady_min_writes_at_its_limit_is_taken(tmp_path):
    p = iolab("plan", "latency", "--quick", "-t", SMALL_SIM, "--steady-min-writes", "1000")
    said = " ".join(p.stdout.split())
    assert p.returncode == 0 and "after 1000× the tested capacity is written" in said, p.stdout + p.stderr


@pytest.mark.parametrize("bound", ["1e300us", "10.5s", "10000001", "infms", "0us", "1e-9us", "0.0009us"])
def test_a_latency_bound_past_what_fio_measures_is_refused_at_set(bound, tmp_path):
    """bound=1e300us stored a complete run whose report then raised OverflowError; 1e-9us, below
    the nanosecond fio times IOs in, was taken and run."""
    runs = tmp_path / "runs"
    p = iolab("run", "latency-bound", "--quick", "-q", "--set", f"bound={bound}", "--runs-dir", str(runs))
    said = refused(p, runs)
    assert f"--set bound='{bound}' (test latency-bound): give a latency from 1 ns (0.001 µs: " in said, said
    assert "no percentile is told from 0 below it) to 10 s." in said, said


def test_a_stored_run_with_an_extreme_bound_still_gets_its_report(tmp_path):
    """A run stored before the limit (its bound 1e300 µs) drew its ramp's latency axis out to
    10 ** 315 (OverflowError in vticks.autoscale), every time its report was asked for."""
    runs = tmp_path / "runs"
    p = iolab("run", "latency-bound", "--quick", "-q", "--no-report", "--set", "bound=10s", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    manifest = run / "manifest.json"
    # the run as iolab stored it before the limit: the bound in its settings, plan and decisions
    text = manifest.read_text().replace('"10s"', '"1e300us"').replace("10000000.0", "1e+300")
    assert text.count("1e+300") >= 3
    manifest.write_text(text)
    assert json.loads(text)["plan"]["values"]["bound"] == 1e300
    p = iolab("report", str(run))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert (run / "report" / f"{run.name}.pdf").stat().st_size > 0


HUGE = "99999999999999999999999999h"  # finite as a float (3.6e29 s), past every clock


@pytest.mark.parametrize(
    ("test", "setting", "says"),
    [
        # OverflowError in char_slc.build (int of 1e300 × capacity)
        ("slc-cache", "writes=1e300", "give a number greater than 0 and at most 1,000 (× the tested capacity)."),
        # the sustain phase is built during the run: a run was stored, then refused as a workload
        ("latency-bound", f"sustain={HUGE}", "give a duration greater than 0 and at most 24 h"),
        # the run's ETA raised OverflowError (timestamp out of range) after the run was stored
        ("max-iops", f"round_time={HUGE}", "give a duration greater than 0 and at most 24 h"),
        # taken, and called "workload '': warm-up must be 0 to 24 h" by the plan's check
        ("qos", f"warmup={HUGE}", "give a duration greater than 0 and at most 24 h"),
    ],
)
def test_a_tests_own_number_past_its_limit_is_refused_at_set(test, setting, says, tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", test, "--quick", "-q", "--no-report", "-t", SMALL_SIM, "--set", setting, "--runs-dir", str(runs))
    said = refused(p, runs)
    name, _, value = setting.partition("=")
    assert f"--set {name}='{value}' (test {test}): {says}" in said, said


def test_a_write_saturation_time_limit_past_its_limit_is_refused(tmp_path):
    """The run started and its ETA raised OverflowError (timestamp out of range), exit 1."""
    runs = tmp_path / "runs"
    p = iolab(
        "run", "wsat", "--quick", "--no-report", "-t", SMALL_SIM, "--wsat-max-time", HUGE, "--runs-dir", str(runs)
    )
    said = refused(p, runs)
    assert "Write Saturation time limit (--wsat-max-time): 3.6e+29 s is not allowed" in said, said
    assert "at most 1,000 days (the PTS uses 24 h)" in said, said
    # just past the limit, said in the seconds given, not as '8.64864e+07 s'
    p = iolab("plan", "wsat", "--wsat-max-time", "1001d")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "(--wsat-max-time): 86,486,400 s is not allowed" in said, said


@pytest.mark.parametrize("value", ["1e300", "101", "inf", "nan", "-1"])
@pytest.mark.parametrize("command", [["plan"], ["run", "-q", "--no-report"]])
def test_a_warranty_past_any_drives_is_refused_as_typed(value, command, tmp_path):
    """--warranty-years 1e300 was taken (DWPD then printed as 0.00 beside a real figure); -1 was
    refused as '-1.0', a value the user never typed."""
    runs = tmp_path / "runs"
    p = iolab(
        command[0], "qos", "--quick", *command[1:], "-t", SMALL_SIM, "--runs-dir", str(runs), "--warranty-years", value
    )
    said = refused(p, runs)
    # named as the user typed it, the --set spelling beside
    assert (
        f"--warranty-years '{value}' (--set warranty_years='{value}') (test qos): give 0 (not given) or a number "
        "of years greater than 0 and at most 100." in said
    ), said


def test_a_rating_option_for_a_test_without_the_rating_is_named_as_typed(tmp_path):
    """--warranty-years on a test without warranty_years was refused as '--set warranty_years',
    an option the user never typed."""
    runs = tmp_path / "runs"
    for option, name in (("--warranty-years", "warranty_years"), ("--pe-cycles", "pe_cycles")):
        p = iolab("run", "wsat", "--quick", "-t", SMALL_SIM, "--runs-dir", str(runs), option, "5")
        said = refused(p, runs)
        assert f"{option} (--set {name}): no test in this run has a parameter of that name" in said, said


@pytest.mark.parametrize(
    ("option", "value"), [("--warranty-years", "0.0"), ("--warranty-years", "100"), ("--pe-cycles", "1000000")]
)
def test_a_rating_at_its_limit_or_zero_is_taken(option, value):
    """'0.0', the "not given" the message offers, was refused as not 0."""
    p = iolab("plan", "qos", "--quick", "-t", SMALL_SIM, option, value)
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("value", [HUGE, "1000000d", "73h"])
@pytest.mark.parametrize("command", [["plan"], ["run", "-q", "--no-report"]])
def test_a_stall_timeout_past_three_days_is_refused_as_typed(value, command, tmp_path):
    """A stall timeout of 3.6e29 s was taken: a fio that stopped completing IO held the target for good."""
    runs = tmp_path / "runs"
    p = iolab(
        command[0],
        "latency",
        "--quick",
        *command[1:],
        "-t",
        SMALL_SIM,
        "--runs-dir",
        str(runs),
        "--stall-timeout",
        value,
    )
    said = refused(p, runs)
    assert (
        f"stall timeout (--stall-timeout): '{value}' is not allowed; give a duration greater than 0 and at most 72 h"
        in said
    ), said
    assert iolab("plan", "latency", "--quick", "-t", SMALL_SIM, "--stall-timeout", "72h").returncode == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["fleet", "--outlier-min-pct", "1e999"], "--outlier-min-pct 1e999: give a percentage from 0 to below 100."),
        (["fleet", "--outlier-k", "-1e999"], "--outlier-k -1e999: give a number above 0 and at most 100 (e.g. 3.5)."),
        (["plan", "iops", "--precondition-factor", "1e999"], "(--precondition-factor): 1e999 is not allowed; give"),
        (["plan", "rwsw", "--rwsw-min-writes", "1e999"], "(--rwsw-min-writes): 1e999 is not allowed; give"),
        (["power", "RUN", "LOG", "--offset", "1e999"], "finite number of seconds, not 1e999."),
        (["power", "RUN", "LOG", "--min-coverage", "1e999"], "at most 100 %, not 1e999 %."),
        (["trace", "analyze", "TRACE", "-o", "OUT", "--compress", "1e999"], "--compress 1e999: give a finite number"),
    ],
)
def test_a_number_past_what_a_float_holds_is_refused_as_typed(args, says, tmp_path):
    """float() reads 1e999 as inf: each number option refused it in its usual words, but echoed
    "inf", a value the user never typed."""
    p = iolab(*args, "--runs-dir", str(tmp_path / "runs")) if args[0] != "trace" else iolab(*args)
    said = refused(p, tmp_path / "runs")
    assert says in said and " inf" not in said, said


def test_an_outlier_k_past_its_limit_is_told_the_limit(tmp_path):
    p = iolab("fleet", "--outlier-k", "1000", "--runs-dir", str(tmp_path / "runs"))
    said = refused(p, tmp_path / "runs")
    assert "--outlier-k 1,000: give a number above 0 and at most 100 (e.g. 3.5)." in said, said


@pytest.mark.parametrize(
    ("test", "sets", "says"),
    [
        # the preconditioning ran to steady state and the hour given was taken and never used
        (
            "qos",
            ["precondition=steady", "precondition_time=1h"],
            "--set precondition_time='1h' (test qos) acts only with precondition=time, and precondition is steady "
            "here (as set)",
        ),
        # entropy's --quick preconditions to steady state unless told otherwise
        (
            "entropy",
            ["precondition_time=1h"],
            "(test entropy) acts only with precondition=time, and precondition is steady here (by default)",
        ),
        # the knee runs every step: no search stops, so no number of steps ends one
        ("max-iops", ["rule=knee", "no_gain_steps=3"], "no_gain_steps='3' (test max-iops) acts only with rule=gain"),
    ],
)
def test_a_test_parameter_set_where_it_cannot_act_is_refused_naming_what_makes_it_act(test, sets, says, tmp_path):
    runs = tmp_path / "runs"
    options = [x for s in sets for x in ("--set", s)]
    p = iolab("run", test, "--quick", "-q", "--no-report", "-t", SMALL_SIM, "--runs-dir", str(runs), *options)
    said = refused(p, runs)
    assert says in said and "Nothing was run or written." in said, said
    # with what makes it act, the same setting is taken
    wanted = says.split(" acts only with ")[1].split(",")[0]
    kept = [x for s in sets if s.split("=")[0] != wanted.split("=")[0] for x in ("--set", s)]
    p = iolab("plan", test, "--quick", "-t", SMALL_SIM, *kept, "--set", wanted)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_sequence_takes_a_parameter_that_acts_in_one_of_its_tests():
    """characterise --quick: entropy preconditions to steady state, its other tests for the
    precondition_time given, which therefore acts and is taken."""
    p = iolab("plan", "characterise", "--quick", "-t", SMALL_SIM, "--set", "precondition_time=1s")
    assert p.returncode == 0, p.stdout + p.stderr
