"""`iolab check` holds what it is given to what it can judge: each run once (a duplicate looks
like a repeat that agrees and shrinks the noise), a saved baseline's figures to the test's own
definition and to values a run can measure; and a `--json` document that does not reach
standard output is an error, never an exit code 0 for nothing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from iolab.core.units import num

from .conftest import IOLAB, iolab

pytestmark = pytest.mark.integration

QUICK = ("--quick", "--no-report")
SMALL = "sim:enterprise-sas?user_gb=0.25"


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> tuple[Path, dict, dict, dict]:
    """Quick latency runs A and B (seeds 1, 2) and the candidate C (slower programs, seed 1)."""
    runs = tmp_path_factory.mktemp("check-inputs") / "runs"
    docs = []
    for extra in ("&seed=1", "&seed=2", "&t_prog_us=1500&seed=1"):
        p = iolab("run", "latency", "-t", SMALL + extra, *QUICK, "--runs-dir", str(runs), "--json")
        assert p.returncode == 0, p.stderr
        docs.append(json.loads(p.stdout))
    return (runs.parent, *docs)  # type: ignore[return-value]


def _said(p: subprocess.CompletedProcess) -> str:
    return " ".join(p.stderr.split())


def test_a_run_given_twice_on_one_side_is_refused(three):
    root, a, b, c = three
    pa, pb, pc = (d["runs"][0]["path"] for d in (a, b, c))
    p = iolab("check", pc, "--baseline", pa, "--baseline", pb)
    assert p.returncode in (0, 7) and "baseline's 2 repeated runs" in " ".join(p.stdout.split()), p.stdout
    copy = root / "copyA"
    shutil.copytree(pa, copy)
    saved = root / "twice.json"
    saved.write_text(json.dumps({**a, "runs": a["runs"] * 2}))
    for line, side in (
        (["check", pc, "--baseline", pa, "--baseline", pb, "--baseline", pa, "--baseline", pb], "baseline"),
        (["check", pc, pc, pc, "--baseline", pa], "candidate"),
        (["check", pc, "--baseline", pa, "--baseline", str(copy)], "baseline"),  # a copy keeps the uid
        (["check", pc, "--baseline", str(saved)], "baseline"),
    ):
        p = iolab(*line, "--json")
        said = _said(p)
        assert p.returncode == 2 and f"the {side} holds run" in said and "Give each run once" in said, (line, said)
        assert json.loads(p.stdout)["exit_code"] == 2


def test_every_confidence_out_of_its_range_is_told_that_range(three):
    """-1% and 1000% were told the percentage parser's range (0% to 999%), 40% the level's own."""
    _, a, b, _ = three
    pa, pb = (d["runs"][0]["path"] for d in (a, b))
    for level in ("-1%", "1000%", "40%", "100%", "0", "abc"):
        p = iolab("check", pb, "--baseline", pa, f"--confidence={level}")
        said = _said(p)
        assert p.returncode == 2 and "give a level from 50% to below 100%" in said, (level, said)
        assert "999" not in said and "Traceback" not in said
    assert iolab("check", pb, "--baseline", pa, "--confidence=80%").returncode in (0, 7)
    # a level is printed as given: 99.99% was titled "confidence 100%", a level the check refuses
    for level, shown in (("99.99%", "99.99%"), ("97.5%", "97.5%")):
        p = iolab("check", pb, "--baseline", pa, f"--confidence={level}")
        assert p.returncode in (0, 7) and f"(confidence {shown})" in p.stdout and "100%" not in p.stdout, p.stdout


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("unit", "ms", "(runs[0].figures[0].unit) is 'ms', but test 'latency' defines it as 'µs'"),
        ("direction", "higher-is-better", "(runs[0].figures[0].direction) is 'higher-is-better', but"),
        ("value", 1e-300, "(runs[0].figures[0].value): 1e-300 µs is less than any drive's"),
        # renamed by hand: it was judged "missing" from the candidate (exit 7), whose own figure of
        # the real name dropped out of the check
        ("name", "ART RND 4KiB R/W 50/50", "(runs[0].figures[0].name) is no figure of test 'latency'; it defines"),
        # each window round's value is held to what a run measures, as the figure's value is
        ("round_values", [1e308, -5], "(runs[0].figures[0].round_values[0]): 1.000e+308 µs is more than any"),
        ("round_values", [100, -5], "(runs[0].figures[0].round_values[1]): -5.000 µs is negative"),
    ],
)
def test_a_hand_edited_baseline_figure_is_refused_naming_the_field(three, field, value, said):
    root, a, b, _ = three
    edited = json.loads(json.dumps(a))
    edited["runs"][0]["figures"][0][field] = value
    (root / "t.json").write_text(json.dumps(edited))
    p = iolab("check", b["runs"][0]["path"], "--baseline", str(root / "t.json"))
    assert p.returncode == 2 and said in _said(p), p.stderr


def test_a_baseline_that_leaves_out_or_repeats_a_figure_is_refused(three):
    root, a, b, _ = three
    for edit, said in (
        (
            lambda figs: figs.pop(0),
            "(runs[0].figures) leave out 'ART RND 4KiB R/W 100/0', which test 'latency' defines",
        ),
        (lambda figs: figs.append(dict(figs[1])), "(runs[0].figures[6].name) is given twice"),
    ):
        edited = json.loads(json.dumps(a))
        edit(edited["runs"][0]["figures"])
        (root / "e.json").write_text(json.dumps(edited))
        p = iolab("check", b["runs"][0]["path"], "--baseline", str(root / "e.json"))
        assert p.returncode == 2 and said in _said(p), p.stderr


def test_a_maximum_saved_as_an_average_is_refused(three):
    root, a, b, _ = three
    edited = json.loads(json.dumps(a))
    mrt = next(f for f in edited["runs"][0]["figures"] if f["kind"] == "extreme")
    mrt["kind"] = "value"
    (root / "k.json").write_text(json.dumps(edited))
    p = iolab("check", b["runs"][0]["path"], "--baseline", str(root / "k.json"))
    assert p.returncode == 2 and ".kind) is 'value', but test 'latency' defines it as 'extreme'" in _said(p)


def test_the_check_table_prints_no_unbounded_number(three):
    root, a, b, _ = three
    edited = json.loads(json.dumps(a))
    edited["runs"][0]["figures"][0]["value"] = 1e-5  # the least taken in µs: a change of +10^9 %
    (root / "tiny.json").write_text(json.dumps(edited))
    p = iolab("check", b["runs"][0]["path"], "--baseline", str(root / "tiny.json"))
    assert p.returncode == 7, p.stderr
    assert not re.search(r"[\d,.]{16}", p.stdout), p.stdout  # no number of 16 characters or more
    assert "e+09 %" in p.stdout


def _closed(*args: str, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([*IOLAB, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300)


@pytest.mark.parametrize("how", ["closed", "full"])
def test_a_document_that_does_not_reach_standard_output_fails(three, how):
    root, a, _, _ = three
    run = a["runs"][0]["path"]
    lines = (
        ["show", run, "--json"],
        ["history", "ART RND 4KiB R/W 65/35", "--runs-dir", str(root / "runs"), "--json"],
        ["export", run, "--format", "json", "--out", "-"],
    )
    for line in lines:
        if how == "closed":  # `>&-`: the shell closes descriptor 1 before iolab starts
            p = subprocess.run(
                ["sh", "-c", '"$@" >&-', "sh", *IOLAB, *line], stderr=subprocess.PIPE, text=True, timeout=300
            )
        else:
            with open("/dev/full", "w") as full:
                p = _closed(*line, stdout=full)
        assert p.returncode == 2 and "standard output" in _said(p) and "not delivered" in _said(p), (line, p.stderr)
        assert "Traceback" not in p.stderr
        # said once: `show --json >&-` added 'standard output was closed when iolab started' for
        # the error's own document, which could not be delivered either
        assert _said(p).count("not delivered") == 1, (line, p.stderr)


def test_a_candidate_figure_the_baseline_lacks_is_listed_as_not_compared(tmp_path):
    """HIR names a figure after each wait state its run measured: a baseline without the 10 s
    one (here a saved document that leaves it out, as a run of other wait states would) had the
    candidate's figure left out of the check unsaid, on screen, in --json and in JUnit."""
    runs, docs = tmp_path / "runs", []
    for seed in (1, 2):
        p = iolab("run", "hir", "-t", f"{SMALL}&seed={seed}", *QUICK, "--runs-dir", str(runs), "--json")
        assert p.returncode == 0, p.stderr
        docs.append(json.loads(p.stdout))
    base, cand = docs
    lacks = "Mean burst IOPS after 10 s idle"
    base["runs"][0]["figures"] = [f for f in base["runs"][0]["figures"] if f["name"] != lacks]
    (tmp_path / "base.json").write_text(json.dumps(base))
    xml = tmp_path / "check.xml"
    line = ("check", cand["runs"][0]["path"], "--baseline", str(tmp_path / "base.json"), "--junit", str(xml))
    p = iolab(*line)
    assert p.returncode == 0, p.stdout + p.stderr
    why = "the baseline has no such figure (its runs measured other ones); give a baseline run that has it"
    assert f"{lacks}: not compared: {why}" in " ".join(p.stdout.split()), p.stdout
    assert "how (every figure compared):" in " ".join(p.stdout.split()), p.stdout
    [row] = [f for f in json.loads(iolab(*line, "--json").stdout)["check"]["figures"] if f["name"] == lacks]
    assert row["verdict"] == "not-compared" and row["method"] == why and row["candidate"]["value"] > 0, row
    [case] = [c for c in ET.parse(xml).iter("testcase") if c.get("name") == lacks]
    assert case.find("skipped").get("message") == f"not compared: {why}"
    # a figure held to no tolerance names none (its line said "(tolerance 5 %)")
    line = f"{lacks}: not-compared, — -> {num(row['candidate']['value'])} IOPS"
    assert case.findtext("system-out") == line, case.findtext("system-out")


def test_a_side_whose_value_is_of_some_of_its_runs_says_which_are_left_out(three, tmp_path):
    """A baseline of two runs, one of which has no value for a figure (a percentile its IOs were
    too few for): the value is the other run's alone, and check said nothing of the one left out."""
    _root, a, b, c = three
    name = next(f["name"] for f in a["runs"][0]["figures"] if f["value"] is not None)
    lacking = json.loads(json.dumps(b))
    [fig] = [f for f in lacking["runs"][0]["figures"] if f["name"] == name]
    fig |= {"value": None, "unmeasured": "its 12 IOs are too few for it"}
    doc = {**a, "runs": a["runs"] + lacking["runs"]}
    (tmp_path / "base.json").write_text(json.dumps(doc))
    p = iolab("check", c["runs"][0]["path"], "--baseline", str(tmp_path / "base.json"), "--json")
    assert p.returncode in (0, 7), p.stderr
    out = json.loads(p.stdout)["check"]
    said = f"{name}: the baseline's value is of 1 of its 2 runs; {b['runs'][0]['run_id']} has none (its 12 IOs are too few for it)"
    assert said in out["warnings"], out["warnings"]
    assert said in " ".join(p.stderr.split()), p.stderr
    # every run has the others: nothing said of them
    assert sum("the baseline's value is of" in w for w in out["warnings"]) == 1
    # in JUnit the warning is its figure's, not a "steady state" case: under --require-steady
    # it failed there a check that passed (exit 0, `passed`), as a CI system read it
    xml = tmp_path / "check.xml"
    p = iolab(
        "check",
        c["runs"][0]["path"],
        "--baseline",
        str(tmp_path / "base.json"),
        "--require-steady",
        "--junit",
        str(xml),
    )
    cases = {case.get("name"): case for case in ET.parse(xml).iter("testcase")}
    assert said in cases[name].findtext("system-out"), cases[name].findtext("system-out")
    steady = cases.get("steady state")
    assert (steady is not None) == (p.returncode == 6), (p.returncode, p.stdout)
    failures = int(ET.parse(xml).getroot().get("failures"))
    assert (failures == 0) == (p.returncode == 0), (failures, p.returncode, p.stdout)


def test_runs_of_another_model_are_noted_and_of_another_test_refused(three, tmp_path):
    """A check of one drive model against another printed its verdicts as if one drive had
    changed, saying nothing of the models; runs of different tests were refused in a line that
    did not say which run was which."""
    root, a, b, c = three
    runs = tmp_path / "runs"
    other = {}
    # the other model's run has the baseline's settings (else it is refused for them); the other
    # test's is refused before its settings are compared, so it runs the shortest cells
    for test, target, extra in (
        ("latency", "sim:entry-sata-compress?user_gb=0.25", ()),
        ("throughput", SMALL, ("--cell-time", "100ms")),
    ):
        p = iolab("run", test, "-t", target, *QUICK, *extra, "--runs-dir", str(runs), "--json")
        assert p.returncode == 0, p.stderr
        other[test] = json.loads(p.stdout)["runs"][0]["path"]
    p = iolab("check", other["latency"], "--baseline", a["runs"][0]["path"], "--json")
    assert p.returncode in (0, 7), p.stderr
    models = json.loads(p.stdout)["check"]["drive_models"]
    assert models["differ"] is True and models["candidate"][0].startswith("sim SSD entry-sata-compress"), models
    said = _said(p)
    assert "note: the runs are of different drive models (baseline: sim SSD enterprise-sas" in said, said
    # one model on both sides (a slower program time is still the model): no note
    p = iolab("check", c["runs"][0]["path"], "--baseline", a["runs"][0]["path"], "--json")
    assert json.loads(p.stdout)["check"]["drive_models"]["differ"] is False and "note: the runs" not in p.stderr
    p = iolab("check", other["throughput"], "--baseline", a["runs"][0]["path"], "--force")
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert f"the baseline ran latency ({a['runs'][0]['run_id']}), the candidate throughput (" in said, said
    assert "Nothing was checked." in said


def test_a_side_whose_runs_are_of_other_targets_warns_that_its_spread_is_not_only_noise(three):
    """The runs of one side were taken as repeats whatever they were of: a candidate of a slowed
    export and of the baseline's own export was called "the candidate's 2 repeated runs", and their
    spread, the two exports' difference, the noise a regression had to beat. A simulated drive's
    other seeds are its repeats, and raise nothing."""
    root, a, b, c = three
    pa, pb, pc = (d["runs"][0]["path"] for d in (a, b, c))
    p = iolab("check", pc, "--baseline", pa, "--baseline", pb, "--json")
    assert p.returncode in (0, 7) and "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)["check"]
    assert not [w for w in doc["warnings"] if "targets or firmware" in w]
    # the table's noise of a figure judged on its logarithms is both edges of the ratio's
    # interval (ART, lower is better: +w % on the worse side, -w/(1+w) on the better side), not
    # "±w %" of the worse side alone
    table = " ".join(p.stderr.split())
    logs = [f for f in doc["figures"] if f.get("noise_scale") == "log" and f["noise_pct"] is not None]
    assert logs and "noise ±" not in table
    for f in logs:
        w = f["noise_pct"]
        assert f["direction"] == "lower-is-better" and f"-{100 * w / (100 + w):.1f} % / +{w:.1f} %" in table, table
    p = iolab("check", pa, pc, "--baseline", pb)
    said = " ".join(p.stdout.split())
    assert p.returncode in (0, 7) and "Traceback" not in p.stderr, p.stderr
    assert (
        "warning: the candidate's runs are of 2 targets or firmware builds "
        f"(sim:enterprise-sas?user_gb=0.25 (firmware sim-0.1.0): {a['runs'][0]['run_id']}; "
        f"sim:enterprise-sas?user_gb=0.25&t_prog_us=1500 (firmware sim-0.1.0): {c['runs'][0]['run_id']}): "
        "their spread, taken as run-to-run noise, is also the difference between those targets"
    ) in said, said


def test_runs_of_different_profiles_are_refused_in_one_paragraph_and_forced_with_a_note(three, tmp_path):
    """A baseline run with --profile enterprise and a candidate with client: the refusal was a
    list of five settings (the write cache, the range, TC, QD) that did not say they were one
    choice, nor what --force does. Now one paragraph naming both profiles, exit 2; forced, the
    verdicts come with the note that they are of the profiles' difference."""
    root, a, _, _ = three
    p = iolab(
        "run",
        "latency",
        "-t",
        SMALL + "&seed=1",
        *QUICK,
        "--cell-time",
        "1s",
        "--profile",
        "client",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--json",
    )
    assert p.returncode == 0, p.stderr
    client, enterprise = json.loads(p.stdout)["runs"][0], a["runs"][0]
    p = iolab("check", client["path"], "--baseline", enterprise["path"])
    said = _said(p)
    assert p.returncode == 2 and p.stderr.startswith("iolab: ") and said.count("iolab:") == 1, said
    assert (
        f"these are of different profiles: the baseline ran enterprise ({enterprise['run_id']}), the candidate "
        f"client ({client['run_id']})" in said
    ), said
    assert "--write-cache" in said and "--force checks them anyway" in said and "Nothing was checked" in said, said
    p = iolab("check", client["path"], "--baseline", enterprise["path"], "--force", "--json")
    assert p.returncode in (0, 7), p.stderr
    doc = json.loads(p.stdout)
    assert any("different profiles (baseline: enterprise; candidate: client)" in n for n in doc["check"]["notes"]), doc


def test_scaled_down_runs_are_marked_in_the_check(three, tmp_path):
    """Two --quick runs were checked with no word that either was scaled down, on screen, in
    --json or in JUnit, while `compare` and each run's own page mark it: a CI reader took the
    verdicts for the test's own."""
    _root, a, _b, c = three
    xml = tmp_path / "check.xml"
    line = ("check", c["runs"][0]["path"], "--baseline", a["runs"][0]["path"], "--junit", str(xml))
    p = iolab(*line)
    assert p.returncode in (0, 7), p.stdout + p.stderr
    why = "; ".join(c["runs"][0]["noncompliance"])
    said = f"NON-COMPLIANT (scaled down): baseline {a['runs'][0]['run_id']}; candidate {c['runs'][0]['run_id']}: {why}"
    assert said in " ".join(p.stdout.split()), p.stdout
    assert said in ET.parse(xml).getroot().find("testsuite").findtext("system-out"), xml.read_text()
    notes = json.loads(iolab(*line, "--json").stdout)["check"]["notes"]
    assert any(n.startswith(said) for n in notes), notes
